/// @file Defines the forward and backward pass of tpudsl::Dense on a batch.
#ifndef TPUDSL_LAYERS_DENSE_OPS_HPP
#define TPUDSL_LAYERS_DENSE_OPS_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/kernels/activation_math.hpp>
#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/layers/dense.hpp>
#include <tpudsl/layers/detail/linear.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace tpudsl::detail {

/// Dense's forward and backward (see layers/dense.hpp): z = x W + b, then the activation.
template <std::size_t Units, class Act>
struct dense_ops {
    /// This thread's transposed copy of the kernel (Units, I) of the bound layer B, for the input
    /// gradient dX = dZ . W^T: the copy the model's threads share when the last update made it for
    /// these weights (graph::transpose_updated, in the fused pass: each thread transposes the rows it
    /// updated), else one in the layer's region of the thread's arena (kept_floats), or, with no arena
    /// bound, in a buffer of the thread's own. A training forward makes its own again only when the
    /// weights (or their version) changed: once per step, not per micro-batch. Backward uses the copy
    /// that the same thread's forward chose for the same micro-batch (no update happens between the
    /// two).
    template <class B>
    static const float*
    transposed_kernel(const float* w, std::uint64_t version, bool for_backward) noexcept
    {
        constexpr std::size_t I = B::input_shape::size;
        float* wt = nullptr;
        kernels::kept_copy* copy = nullptr;
        const kernels::kept_copy* shared = nullptr;
        if (kernels::scratch_arena* arena = kernels::detail::bound_arena()) {
            if ((wt = arena->layer(B::index, Units * I)))
                copy = &arena->kept(B::index);
            shared = arena->shared(B::index);
        }
        if (!wt) {
            thread_local std::vector<float> own(Units * I);
            thread_local kernels::kept_copy own_copy;
            wt = own.data();
            copy = &own_copy;
        }
        if (copy->from == w && copy->version != 0 && (for_backward || copy->version == version))
            return copy->data;
        if (shared && !for_backward && version != 0 && shared->from == w && shared->version == version) {
            *copy = *shared;
            return copy->data;
        }
        kernels::transpose(w, I, Units, wt);
        *copy = {.from = w, .version = version, .data = wt};
        return wt;
    }

    /// What the layer's kernels ask of a thread's scratch: forward on a micro-batch or a replica's
    /// micro-batches, backward's kernel gradient (X^T . dZ) and input gradient (dZ . W^T).
    template <class B>
    static constexpr kernels::scratch_sizes
    scratch(const kernels::scratch_rows& rows) noexcept
    {
        constexpr std::size_t I = B::input_shape::size;
        kernels::scratch_sizes s = kernels::gemm_tn_scratch<I, Units>() |
                                   kernels::gemm_nn_scratch<Units, I>(rows.micro_batch) |
                                   kernels::gemm_nn_rows_scratch<Units, I>(rows.replica);
        if constexpr (dot_products<B>)
            s |= kernels::gemm_nt_bias_rows_scratch<I, Units>(rows.replica);
        else
            s |= kernels::gemm_nn_scratch<I, Units>(rows.micro_batch) | kernels::gemm_nn_rows_scratch<I, Units>(rows.replica);
        return s;
    }

    /// A narrow layer (kernels::prefers_dot_products: Dense<10> on AVX2) computes Z = X . W from its
    /// transposed kernel, each unit one dot product along I with every lane busy.
    template <class B>
    static constexpr bool dot_products = kernels::prefers_dot_products<B::input_shape::size, Units>;

    /// True when backward reads the transposed copy that the thread's training forward made. The first
    /// layer's input gradient is rarely asked for: unless its forward needs the copy anyway
    /// (dot_products), it makes none and backward transposes afresh (version 0).
    template <class B>
    static constexpr bool keeps_transpose = B::index > 0 || dot_products<B>;

    /// Floats the layer keeps in a thread's arena: its transposed kernel.
    template <class B>
    static constexpr std::size_t kept_floats = keeps_transpose<B> ? Units * B::input_shape::size : 0;

    template <class B>
    static void
    forward(const float* params, const float* x, float* y, float* scratch, std::size_t n, const step_context& ctx) noexcept
    {
        if constexpr (dot_products<B>) {
            const kernels::gemm_rows block{x, y, n};
            forward_rows<B>(params, &block, &scratch, 1, ctx);
        } else {
            constexpr std::size_t I = B::input_shape::size;
            const float* w = params + B::template weight<0>::offset;
            linear_forward<I, Units, Act>(n, x, w, params + B::template weight<1>::offset, y, scratch);
            if constexpr (keeps_transpose<B>)
                if (ctx.training)
                    transposed_kernel<B>(w, ctx.weights_version, false);
        }
    }

    template <class B>
    static void
    backward(const float* params, const float* x, const float* y, float* dy, float* dx, float* grads, float*,
             std::size_t n, bool dy_is_logit_grad) noexcept
    {
        backward_keeping<B>(params, x, y, dy, dy, dx, grads, n, dy_is_logit_grad, true);
    }

    /// `forward` over several micro-batches at once (block p: x -> y, its rows; scratch[p] its logits
    /// when Softmax): each block the bits of `forward` on it alone, the kernel read once for all.
    template <class B>
    static void
    forward_rows(const float* params, const kernels::gemm_rows* blocks, float* const* scratch, std::size_t count,
                 const step_context& ctx) noexcept
    {
        constexpr std::size_t I = B::input_shape::size;
        const float* w = params + B::template weight<0>::offset;
        const float* bias = params + B::template weight<1>::offset;
        constexpr bool fused = EpilogueActivation<Act>;
        using Epi = std::conditional_t<fused, Act, Linear>;
        if constexpr (dot_products<B>)
            kernels::gemm_nt_bias_rows<I, Units, Epi>(blocks, count, transposed_kernel<B>(w, ctx.weights_version, false),
                                                      bias);
        else
            kernels::gemm_nn_bias_rows<I, Units, Epi>(blocks, count, w, bias);
        if constexpr (!fused) {
            for (std::size_t p = 0; p < count; ++p) {
                if constexpr (std::is_same_v<Act, Softmax>)
                    std::memcpy(scratch[p], blocks[p].c, blocks[p].m * Units * sizeof(float));
                kernels::activation_forward<Act, Units>(blocks[p].c, blocks[p].m);
            }
        }
        if constexpr (keeps_transpose<B>)
            if (ctx.training)
                transposed_kernel<B>(w, ctx.weights_version, false);
    }

    /// dX = dZ . W^T over several micro-batches at once (block p: dZ -> dX), after backward_keeping
    /// without dx on each: the bits of backward_keeping's dX, the transposed kernel read once for all.
    template <class B>
    static void
    input_gradient_rows(const float* params, const kernels::gemm_rows* blocks, std::size_t count) noexcept
    {
        constexpr std::size_t I = B::input_shape::size;
        const float* wt = transposed_kernel<B>(params + B::template weight<0>::offset, 0, keeps_transpose<B>);
        kernels::gemm_nn_rows<Units, I>(blocks, count, wt);
    }

    /// Backward with dZ = act'(y) dy written to `dz` (which may be dy) and left there; the kernel's
    /// gradient X^T . dZ only when `kernel` (otherwise graph::deferred_gradient computes it later,
    /// over every micro-batch at once). The bias gradient and dX as in `backward`.
    template <class B>
    static void
    backward_keeping(const float* params, const float* x, const float* y, const float* dy, float* dz, float* dx,
                     float* grads, std::size_t n, bool dy_is_logit_grad, bool kernel) noexcept
    {
        constexpr std::size_t I = B::input_shape::size;
        const float* w = params + B::template weight<0>::offset;
        if (!dy_is_logit_grad)
            kernels::activation_backward<Act, Units>(y, dy, dz, n);
        else if (dz != dy)
            std::copy(dy, dy + n * Units, dz);
        column_sums<Units>(dz, grads + B::template weight<1>::offset, n);
        if (kernel)
            kernels::gemm_tn<I, Units>(n, x, dz, grads + B::template weight<0>::offset, false);   // dW = X^T . dZ
        if (dx) {
            // dX (n, I) = dZ (n, U) . W^T, with W^T (U, I) as the thread keeps it since this step's forward.
            const float* wt = transposed_kernel<B>(w, 0, keeps_transpose<B>);
            kernels::gemm_nn<Units, I>(n, dz, wt, dx);
        }
    }
};


} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_DENSE_OPS_HPP
