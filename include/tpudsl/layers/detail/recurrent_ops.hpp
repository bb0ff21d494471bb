/// @file Defines recurrent_ops, the forward and backward pass (backpropagation through time) that LSTM
/// and GRU share, each filling it with its gates (lstm_gates, gru_gates).
#ifndef TPUDSL_LAYERS_DETAIL_RECURRENT_OPS_HPP
#define TPUDSL_LAYERS_DETAIL_RECURRENT_OPS_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/kernels/scratch.hpp>
#include <tpudsl/layers/detail/linear.hpp>
#include <tpudsl/layers/detail/recurrent.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <cstddef>
#include <cstring>

namespace tpudsl::detail {

/// A recurrent layer's scratch for n samples, time-major (T steps, F features, U units, G = the
/// gates' width, S = the width of what the gates keep per step beside them):
///   xt (T, n, F)  the input; backward's dX before it goes back to sample-major
///   a  (T, n, G)  the gates after their activations; backward's dZ over them
///   s  (T, n, S)  what the gates keep per step (LSTM: the cell states; GRU: the recurrent products)
///   h  (T, n, U)  the hidden states h_1 .. h_T
///   dh (n, U)     backward's running gradient of the state
///   dc (n, U)     backward's running gradient of a carried cell state (LSTM's), when there is one
struct recurrent_blocks {
    float *xt, *a, *s, *h, *dh, *dc;
};

/// The forward and backward pass of a recurrent layer whose step is `Gates` (lstm_gates<U>,
/// gru_gates<U>). Everything runs time-major, a step's rows of every sample together: the input
/// projection of all steps is one GEMM over (T n, F) rows with the bias fused, each step's recurrent
/// product one GEMM over the batch (n, U) . (U, G), and backward's weight gradients one GEMM each over
/// every step at once.
///
/// Gates gives: U and G; S (above); `carried` (a cell state whose gradient runs back beside dh);
/// `recurrent_side` (the recurrent product has a dZ and a bias row of its own, GRU's reset_after:
/// they are in s); `step_forward(k, t, n, R, bias)`, step t's recurrent product and gates;
/// `step_backward(k, t, n, R^T)`, step t back, dZ over a (and s), dh (and dc) on to step t - 1.
template <class Gates, bool ReturnSequences>
struct recurrent_ops {
    static constexpr std::size_t U = Gates::U, G = Gates::G;

    template <class B>
    struct dims {
        static constexpr std::size_t T = B::input_shape::dims[0], F = B::input_shape::dims[1];
    };

    template <class B>
    static recurrent_blocks
    blocks(float* scratch, std::size_t n) noexcept
    {
        constexpr std::size_t T = dims<B>::T, F = dims<B>::F;
        recurrent_blocks k;
        k.xt = scratch;
        k.a = k.xt + n * T * F;
        k.s = k.a + n * T * G;
        k.h = k.s + n * T * Gates::S;
        k.dh = k.h + n * T * U;
        k.dc = k.dh + n * U;
        return k;
    }

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

    template <class B>
    static void
    forward(const float* params, const float* x, float* y, float* scratch, std::size_t n, const step_context&) noexcept
    {
        constexpr std::size_t T = dims<B>::T, F = dims<B>::F;
        const float* w = params + B::template weight<0>::offset;
        const float* r = params + B::template weight<1>::offset;
        const float* b = params + B::template weight<2>::offset;
        const recurrent_blocks k = blocks<B>(scratch, n);
        recurrent::relayout<T, F, true>(x, k.xt, n);
        kernels::gemm_nn_bias<F, G, Linear>(T * n, k.xt, w, b, k.a);   // every step's x W + b at once
        for (std::size_t t = 0; t < T; ++t)
            Gates::step_forward(k, t, n, r, b);
        if constexpr (ReturnSequences)
            recurrent::relayout<T, U, false>(k.h, y, n);
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
        const recurrent_blocks k = blocks<B>(scratch, n);
        // R^T (G, U), for dh_{t-1} = dZ_t . R^T; valid until the gemm_nt below.
        const float* rt = T > 1 ? kernels::transposed_scratch<G, U>(r) : nullptr;
        if constexpr (Gates::carried)
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
            Gates::step_backward(k, t, n, rt);
        }
        // The weights' gradients over every step at once: dW = X^T dZ, dR = H_{t-1}^T dZ_t (the
        // recurrent side's dZ where it has its own), the bias (rows) the sums of dZ (and of that dZ).
        const float* dzr = Gates::recurrent_side ? k.s : k.a;
        float* db = grads + B::template weight<2>::offset;
        kernels::gemm_tn<F, G>(T * n, k.xt, k.a, grads + B::template weight<0>::offset, false);
        kernels::gemm_tn<U, G>((T - 1) * n, k.h, dzr + n * G, grads + B::template weight<1>::offset, false);
        column_sums<G>(k.a, db, T * n);
        if constexpr (Gates::recurrent_side)
            column_sums<G>(k.s, db + G, T * n);
        if (dx) {
            kernels::gemm_nt<G, F>(T * n, k.a, w, k.xt);   // dX = dZ . W^T, time-major, over xt
            recurrent::relayout<T, F, false>(k.xt, dx, n);
        }
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_DETAIL_RECURRENT_OPS_HPP
