/// @file Defines the forward and backward pass of tpudsl::GRU on a batch (backpropagation through
/// time).
#ifndef TPUDSL_LAYERS_GRU_OPS_HPP
#define TPUDSL_LAYERS_GRU_OPS_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/kernels/scratch.hpp>
#include <tpudsl/layers/detail/linear.hpp>
#include <tpudsl/layers/detail/recurrent.hpp>
#include <tpudsl/layers/gru.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <cstddef>
#include <cstring>

namespace tpudsl::detail {

/// GRU's forward and backward (see layers/gru.hpp), time-major as LSTM's: the input projection of
/// all steps is one GEMM over (T n, F) rows, each step's recurrent product one GEMM over the batch
/// (n, U) . (U, 3U), and backward's weight gradients one GEMM each over every step at once.
///
/// The layer's scratch, for n samples (its `scratch_size` each):
///   xt (T, n, F)   the input, time-major; backward's dX before it goes back to sample-major
///   a  (T, n, 3U)  the gates z, r, hh after their activations; backward's dZ of the input side
///   m  (T, n, 3U)  the recurrent products h_{t-1} R + rb (the h block is read back); backward's dZ
///                  of the recurrent side (its h block times r)
///   h  (T, n, U)   the hidden states h_1 .. h_T
///   dh (n, U)      backward's running gradient of the state
template <std::size_t Units, bool ReturnSequences>
struct gru_ops {
    static constexpr std::size_t U = Units, G = 3 * Units;

    template <class B>
    struct dims {
        static constexpr std::size_t T = B::input_shape::dims[0], F = B::input_shape::dims[1];
    };

    template <class B>
    struct blocks {
        float *xt, *a, *m, *h, *dh;
        blocks(float* scratch, std::size_t n) noexcept
        {
            constexpr std::size_t T = dims<B>::T, F = dims<B>::F;
            xt = scratch;
            a = xt + n * T * F;
            m = a + n * T * G;
            h = m + n * T * G;
            dh = h + n * T * U;
        }
    };

    /// What the layer's kernels ask of a thread's scratch.
    template <class B>
    static constexpr kernels::scratch_sizes
    scratch(const kernels::scratch_rows& rows) noexcept
    {
        constexpr std::size_t T = dims<B>::T, F = dims<B>::F;
        const std::size_t n = rows.micro_batch;
        return kernels::gemm_nn_scratch<F, G>(n * T) | kernels::gemm_nn_scratch<U, G>(n) |
               kernels::transposed_scratch_sizes<G, U>() | kernels::gemm_nn_scratch<G, U>(n) |
               kernels::gemm_tn_scratch<F, G>() | kernels::gemm_tn_scratch<U, G>() |
               kernels::gemm_nt_scratch<G, F>(n * T, false);
    }

    /// One step's gates for n samples: at (x W + b) becomes z, r, hh; mt (h_{t-1} R, or zeros) gets
    /// the recurrent bias rb; h_t = z h_{t-1} + (1 - z) hh (h_prev null: the zero initial state).
    static void
    step_forward(float* at, float* mt, const float* rb, const float* h_prev, float* h, std::size_t n) noexcept
    {
        using namespace recurrent;
        const vfloat one = vfloat::broadcast(1.0f);
        for (std::size_t s = 0; s < n; ++s) {
            float* arow = at + s * G;
            float* mrow = mt + s * G;
            const float* hp = h_prev ? h_prev + s * U : nullptr;
            float* hs = h + s * U;
            for_units<U>([&](std::size_t u, std::size_t k) {
                const vfloat mz = load(mrow + u, k) + load(rb + u, k);
                const vfloat mr = load(mrow + U + u, k) + load(rb + U + u, k);
                const vfloat mh = load(mrow + 2 * U + u, k) + load(rb + 2 * U + u, k);
                const vfloat z = sigmoid(load(arow + u, k) + mz), r = sigmoid(load(arow + U + u, k) + mr);
                const vfloat hh = tanh(fma(r, mh, load(arow + 2 * U + u, k)));
                store(z, arow + u, k);
                store(r, arow + U + u, k);
                store(hh, arow + 2 * U + u, k);
                store(mh, mrow + 2 * U + u, k);
                const vfloat hn = hp ? fma(z, load(hp + u, k), (one - z) * hh) : (one - z) * hh;
                store(hn, hs + u, k);
            });
        }
    }

    /// One step back for n samples: from dh, the gates in at become the input side's dZ, mt the
    /// recurrent side's, and dh the direct part of the gradient of h_{t-1} (z dh).
    static void
    step_backward(float* at, float* mt, const float* h_prev, float* dh, std::size_t n) noexcept
    {
        using namespace recurrent;
        const vfloat one = vfloat::broadcast(1.0f);
        for (std::size_t s = 0; s < n; ++s) {
            float* arow = at + s * G;
            float* mrow = mt + s * G;
            const float* hp = h_prev ? h_prev + s * U : nullptr;
            float* dhs = dh + s * U;
            for_units<U>([&](std::size_t u, std::size_t k) {
                const vfloat z = load(arow + u, k), r = load(arow + U + u, k), hh = load(arow + 2 * U + u, k);
                const vfloat mh = load(mrow + 2 * U + u, k), d = load(dhs + u, k);
                const vfloat hpv = hp ? load(hp + u, k) : vfloat::broadcast(0.0f);
                const vfloat dz = d * (hpv - hh) * z * (one - z);
                const vfloat dhh = d * (one - z) * (one - hh * hh);
                const vfloat dr = dhh * mh * r * (one - r);
                store(dz, arow + u, k);
                store(dr, arow + U + u, k);
                store(dhh, arow + 2 * U + u, k);
                store(dz, mrow + u, k);
                store(dr, mrow + U + u, k);
                store(dhh * r, mrow + 2 * U + u, k);
                store(d * z, dhs + u, k);
            });
        }
    }

    template <class B>
    static void
    forward(const float* params, const float* x, float* y, float* scratch, std::size_t n, const step_context&) noexcept
    {
        constexpr std::size_t T = dims<B>::T, F = dims<B>::F;
        const float* w = params + B::template weight<0>::offset;
        const float* r = params + B::template weight<1>::offset;
        const float* b = params + B::template weight<2>::offset;   // (2, 3U): input row, recurrent row
        const blocks<B> k(scratch, n);
        recurrent::to_time_major<T, F>(x, k.xt, n);
        kernels::gemm_nn_bias<F, G, Linear>(T * n, k.xt, w, b, k.a);   // every step's x W + b at once
        for (std::size_t t = 0; t < T; ++t) {
            float* mt = k.m + t * n * G;
            if (t > 0)
                kernels::gemm_nn<U, G>(n, k.h + (t - 1) * n * U, r, mt);   // h_{t-1} R
            else
                std::memset(mt, 0, n * G * sizeof(float));
            step_forward(k.a + t * n * G, mt, b + G, t > 0 ? k.h + (t - 1) * n * U : nullptr, k.h + t * n * U, n);
        }
        if constexpr (ReturnSequences)
            recurrent::to_sample_major<T, U>(k.h, y, n);
        else
            std::memcpy(y, k.h + (T - 1) * n * U, n * U * sizeof(float));
    }

    template <class B>
    static void
    backward(const float* params, const float*, const float*, float* dy, float* dx, float* grads, float* scratch,
             std::size_t n, bool) noexcept
    {
        constexpr std::size_t T = dims<B>::T, F = dims<B>::F;
        const float* w = params + B::template weight<0>::offset;
        const float* r = params + B::template weight<1>::offset;
        const blocks<B> k(scratch, n);
        // R^T (3U, U), for dh_{t-1} += dZ_t . R^T; valid until the gemm_nt below.
        const float* rt = T > 1 ? kernels::transposed_scratch<G, U>(r) : nullptr;
        for (std::size_t t = T; t-- > 0;) {
            if constexpr (ReturnSequences) {
                for (std::size_t s = 0; s < n; ++s) {
                    const float* d = dy + (s * T + t) * U;
                    float* to = k.dh + s * U;
                    for (std::size_t u = 0; u < U; ++u)
                        to[u] = t + 1 == T ? d[u] : to[u] + d[u];
                }
            } else if (t + 1 == T) {
                std::memcpy(k.dh, dy, n * U * sizeof(float));
            }
            float* mt = k.m + t * n * G;
            step_backward(k.a + t * n * G, mt, t > 0 ? k.h + (t - 1) * n * U : nullptr, k.dh, n);
            if (t > 0)
                kernels::gemm_nn<G, U>(n, mt, rt, k.dh, true);   // dh_{t-1} = z dh + dZr_t . R^T
        }
        // Over every step at once: dW = X^T dZ, dR = H_{t-1}^T dZr_t, the bias rows sum dZ and dZr.
        float* db = grads + B::template weight<2>::offset;
        kernels::gemm_tn<F, G>(T * n, k.xt, k.a, grads + B::template weight<0>::offset, false);
        kernels::gemm_tn<U, G>((T - 1) * n, k.h, k.m + n * G, grads + B::template weight<1>::offset, false);
        column_sums<G>(k.a, db, T * n);
        column_sums<G>(k.m, db + G, T * n);
        if (dx) {
            kernels::gemm_nt<G, F>(T * n, k.a, w, k.xt);   // dX = dZ . W^T, time-major, over xt
            recurrent::to_sample_major<T, F>(k.xt, dx, n);
        }
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_GRU_OPS_HPP
