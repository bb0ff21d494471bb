/// @file Defines the forward and backward pass of tpudsl::LSTM on a batch (backpropagation through
/// time).
#ifndef TPUDSL_LAYERS_LSTM_OPS_HPP
#define TPUDSL_LAYERS_LSTM_OPS_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/kernels/scratch.hpp>
#include <tpudsl/layers/detail/linear.hpp>
#include <tpudsl/layers/detail/recurrent.hpp>
#include <tpudsl/layers/lstm.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <cstddef>
#include <cstring>

namespace tpudsl::detail {

/// LSTM's forward and backward (see layers/lstm.hpp). Everything runs time-major, a step's rows of
/// every sample together: the input projection of all steps is one GEMM over (T n, F) rows, each
/// step's recurrent product one GEMM over the batch (n, U) . (U, 4U), and backward's weight
/// gradients one GEMM each over every step at once.
///
/// The layer's scratch, for n samples (its `scratch_size` each):
///   xt (T, n, F)   the input, time-major; backward's dX before it goes back to sample-major
///   g  (T, n, 4U)  the gates i, f, c, o after their activations; backward's dZ over them
///   c  (T, n, U)   the cell states c_1 .. c_T
///   h  (T, n, U)   the hidden states h_1 .. h_T
///   dh, dc (n, U)  backward's running gradients of the state and the cell
template <std::size_t Units, bool ReturnSequences>
struct lstm_ops {
    static constexpr std::size_t U = Units, G = 4 * Units;

    template <class B>
    struct dims {
        static constexpr std::size_t T = B::input_shape::dims[0], F = B::input_shape::dims[1];
    };

    template <class B>
    struct blocks {
        float *xt, *g, *c, *h, *dh, *dc;
        blocks(float* scratch, std::size_t n) noexcept
        {
            constexpr std::size_t T = dims<B>::T, F = dims<B>::F;
            xt = scratch;
            g = xt + n * T * F;
            c = g + n * T * G;
            h = c + n * T * U;
            dh = h + n * T * U;
            dc = dh + n * U;
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

    /// One step's gates for n samples: the pre-activations in gt become i, f, c~, o; then
    /// c_t = f c_{t-1} + i c~ and h_t = o tanh(c_t) (c_prev null: the zero initial state).
    static void
    step_forward(float* gt, const float* c_prev, float* c, float* h, std::size_t n) noexcept
    {
        using namespace recurrent;
        for (std::size_t s = 0; s < n; ++s) {
            float* row = gt + s * G;
            const float* cps = c_prev ? c_prev + s * U : nullptr;
            float* cs = c + s * U;
            float* hs = h + s * U;
            for_units<U>([&](std::size_t u, std::size_t k) {
                const vfloat i = sigmoid(load(row + u, k)), f = sigmoid(load(row + U + u, k));
                const vfloat cc = tanh(load(row + 2 * U + u, k)), o = sigmoid(load(row + 3 * U + u, k));
                store(i, row + u, k);
                store(f, row + U + u, k);
                store(cc, row + 2 * U + u, k);
                store(o, row + 3 * U + u, k);
                const vfloat cn = cps ? fma(f, load(cps + u, k), i * cc) : i * cc;
                store(cn, cs + u, k);
                store(o * tanh(cn), hs + u, k);
            });
        }
    }

    /// One step back for n samples: from dh (the state's gradient) and dc (the cell's, carried from
    /// the step after), the gates' activations in gt become dZ; dc becomes the gradient of c_{t-1}.
    static void
    step_backward(float* gt, const float* c_prev, const float* c, const float* dh, float* dc, std::size_t n) noexcept
    {
        using namespace recurrent;
        const vfloat one = vfloat::broadcast(1.0f);
        for (std::size_t s = 0; s < n; ++s) {
            float* row = gt + s * G;
            const float* cps = c_prev ? c_prev + s * U : nullptr;
            const float* cs = c + s * U;
            const float* dhs = dh + s * U;
            float* dcs = dc + s * U;
            for_units<U>([&](std::size_t u, std::size_t k) {
                const vfloat i = load(row + u, k), f = load(row + U + u, k);
                const vfloat cc = load(row + 2 * U + u, k), o = load(row + 3 * U + u, k);
                const vfloat tc = tanh(load(cs + u, k)), d = load(dhs + u, k);
                const vfloat dcv = fma(d * o, one - tc * tc, load(dcs + u, k));
                const vfloat cp = cps ? load(cps + u, k) : vfloat::broadcast(0.0f);
                store(dcv * cc * i * (one - i), row + u, k);
                store(dcv * cp * f * (one - f), row + U + u, k);
                store(dcv * i * (one - cc * cc), row + 2 * U + u, k);
                store(d * tc * o * (one - o), row + 3 * U + u, k);
                store(dcv * f, dcs + u, k);
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
        const float* b = params + B::template weight<2>::offset;
        const blocks<B> k(scratch, n);
        recurrent::to_time_major<T, F>(x, k.xt, n);
        kernels::gemm_nn_bias<F, G, Linear>(T * n, k.xt, w, b, k.g);   // every step's x W + b at once
        for (std::size_t t = 0; t < T; ++t) {
            float* gt = k.g + t * n * G;
            if (t > 0)
                kernels::gemm_nn<U, G>(n, k.h + (t - 1) * n * U, r, gt, true);   // + h_{t-1} R
            step_forward(gt, t > 0 ? k.c + (t - 1) * n * U : nullptr, k.c + t * n * U, k.h + t * n * U, n);
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
        // R^T (4U, U), for dh_{t-1} = dZ_t . R^T; valid until the gemm_nt below.
        const float* rt = T > 1 ? kernels::transposed_scratch<G, U>(r) : nullptr;
        std::memset(k.dc, 0, n * U * sizeof(float));
        for (std::size_t t = T; t-- > 0;) {
            // dh: the recurrent part from step t + 1 (none at the last step), plus this step's output's.
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
            float* gt = k.g + t * n * G;
            step_backward(gt, t > 0 ? k.c + (t - 1) * n * U : nullptr, k.c + t * n * U, k.dh, k.dc, n);
            if (t > 0)
                kernels::gemm_nn<G, U>(n, gt, rt, k.dh);   // dh_{t-1} = dZ_t . R^T
        }
        // The weights' gradients over every step at once: dW = X^T dZ, dR = H_{t-1}^T dZ_t, db = sum dZ.
        kernels::gemm_tn<F, G>(T * n, k.xt, k.g, grads + B::template weight<0>::offset, false);
        kernels::gemm_tn<U, G>((T - 1) * n, k.h, k.g + n * G, grads + B::template weight<1>::offset, false);
        column_sums<G>(k.g, grads + B::template weight<2>::offset, T * n);
        if (dx) {
            kernels::gemm_nt<G, F>(T * n, k.g, w, k.xt);   // dX = dZ . W^T, time-major, over xt
            recurrent::to_sample_major<T, F>(k.xt, dx, n);
        }
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_LSTM_OPS_HPP
