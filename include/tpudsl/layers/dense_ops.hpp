/// @file Defines the forward and backward pass of tpudsl::Dense on a batch.
#ifndef TPUDSL_LAYERS_DENSE_OPS_HPP
#define TPUDSL_LAYERS_DENSE_OPS_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/kernels/activation_math.hpp>
#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/layers/dense.hpp>
#include <tpudsl/layers/detail/linear.hpp>
#include <tpudsl/layers/fused_steps.hpp>
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
    /// these weights (remake_shared_copy, in the fused pass: each thread transposes the rows it
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
            const row_block block{x, y, n};
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
    forward_rows(const float* params, const row_block* blocks, float* const* scratch, std::size_t count,
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
    input_gradient_rows(const float* params, const row_block* blocks, std::size_t count) noexcept
    {
        constexpr std::size_t I = B::input_shape::size;
        const float* wt = transposed_kernel<B>(params + B::template weight<0>::offset, 0, keeps_transpose<B>);
        kernels::gemm_nn_rows<Units, I>(blocks, count, wt);
    }

    /// Backward with dZ = act'(y) dy written to `dz` (which may be dy) and left there; the kernel's
    /// gradient X^T . dZ only when `kernel` (otherwise deferred_kernel_gradient computes it in the
    /// fused pass, over every micro-batch at once). The bias gradient and dX as in `backward`.
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

    /// What the deferred kernel gradient asks of a thread's scratch over a step of rows.step rows.
    template <class B>
    static constexpr kernels::scratch_sizes
    deferred_scratch(const kernels::scratch_rows& rows) noexcept
    {
        return kernels::gemm_tn_micro_batches_scratch<Units>(B::input_shape::size, rows.step) |
               kernels::gemm_tn_micro_batches_columns_scratch<Units>(rows.step);
    }

    /// The kernel gradient that backward_keeping left (kernel == false), in the fused pass:
    /// grads[lo, hi) where it meets the kernel, X^T . dZ over the micro-batches' operands (X_p and dZ_p,
    /// n_p rows each), each element one chain from zero over the samples in order, micro-batch after
    /// micro-batch (from grads' element when `go_on`: a chain cut between processes). The bits of
    /// backward on all the micro-batches' samples as one; outside the kernel grads is not touched.
    template <class B>
    static void
    deferred_kernel_gradient(const deferred_operands* parts, std::size_t count, std::size_t lo, std::size_t hi,
                             float* grads, bool go_on) noexcept
    {
        constexpr std::size_t In = B::input_shape::size, offset = B::template weight<0>::offset;
        const std::size_t a = std::max(lo, offset), b = std::min(hi, offset + In * Units);
        if (a >= b)
            return;
        float* g = grads + offset;
        // A row cut by the range: the kernel computes the whole row aside, its columns are copied.
        auto cut_row = [&](std::size_t row, std::size_t j0, std::size_t j1) {
            kernels::gemm_tn_micro_batches_columns<Units>(row, j0, j1, In, parts, count, g + row * Units, go_on);
        };
        std::size_t e = a - offset;
        const std::size_t end = b - offset;
        if (e % Units != 0) {
            const std::size_t row = e / Units, stop = std::min(end, (row + 1) * Units);
            cut_row(row, e % Units, stop - row * Units);
            e = stop;
        }
        const std::size_t r0 = e / Units, r1 = end / Units;
        if (r0 < r1) {
            deferred_operands from_r0[max_micro_batches]{};   // rows [r0, r1) of C: X_p^T's columns from r0
            for (std::size_t p = 0; p < count; ++p)
                from_r0[p] = {parts[p].a + r0, parts[p].b, parts[p].k};
            kernels::gemm_tn_micro_batches<Units>(r1 - r0, In, from_r0, count, g + r0 * Units, go_on);
            e = r1 * Units;
        }
        if (e < end)
            cut_row(r1, 0, end - r1 * Units);
    }

    /// True when the model's threads share one transposed kernel (see transposed_kernel), which the
    /// fused pass remakes as it updates the kernel instead of every thread making its own.
    template <class B>
    static constexpr bool shares_copy = keeps_transpose<B>;

    /// After the fused pass updated params[b, e): the shared transposed kernel `copy` takes the updated
    /// elements of the kernel. Each thread does its shard's: together, the whole transpose, the bits of
    /// kernels::transpose.
    template <class B>
    static void
    remake_shared_copy(const float* params, std::size_t b, std::size_t e, float* copy) noexcept
    {
        constexpr std::size_t In = B::input_shape::size, offset = B::template weight<0>::offset;
        const std::size_t lo = std::max(b, offset), hi = std::min(e, offset + In * Units);
        if (lo < hi)
            kernels::transpose_range(params + offset, In, Units, lo - offset, hi - offset, copy);
    }

    /// dX = dZ . W^T of `count` samples (dZ at dz) into dx, from the transposed kernel this thread's
    /// forward made: what a fused convolution and pooling below asks of this layer, a few samples at a
    /// time, as it needs them; and its scratch for `rows` samples.
    template <class B>
    static void
    input_gradient_of(const float* params, const float* dz, std::size_t count, float* dx) noexcept
    {
        const float* wt = transposed_kernel<B>(params + B::template weight<0>::offset, 0, keeps_transpose<B>);
        kernels::gemm_nn<Units, B::input_shape::size>(count, dz, wt, dx);
    }
    template <class B>
    static constexpr kernels::scratch_sizes
    input_gradient_scratch(std::size_t rows) noexcept
    {
        return kernels::gemm_nn_scratch<Units, B::input_shape::size>(rows);
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_DENSE_OPS_HPP
