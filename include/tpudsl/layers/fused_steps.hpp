/// @file Defines what a layer's ops exchange with the model's runner and the fused pass beyond
/// forward and backward: the blocks of several micro-batches that a row layer runs at once
/// (row_block), a kernel gradient left to the fused reduce-and-update, computed there over every
/// micro-batch at once (deferred_kernel), and a copy of a weight that the threads share, remade as the
/// pass updates the weight (shared_copy). The last two hold a pointer to the layer's own function, so
/// the pass runs them as data the trainer hands it, without calling back into the model's graph.
/// DeferringOps says what the ops of a layer that defers its kernel gradient define.
#ifndef TPUDSL_LAYERS_FUSED_STEPS_HPP
#define TPUDSL_LAYERS_FUSED_STEPS_HPP

#include <tpudsl/core/gradient_layout.hpp>
#include <tpudsl/kernels/gemm/micro_batches.hpp>
#include <tpudsl/kernels/gemm/rows.hpp>
#include <tpudsl/kernels/scratch.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <array>
#include <concepts>
#include <cstddef>

namespace tpudsl {

/// One micro-batch's rows for a row layer that runs several at once (forward_rows,
/// input_gradient_rows): its input (m, in) at `a`, its output (m, out) at `c`, m rows.
using row_block = kernels::gemm_rows;

/// One micro-batch's operands of a deferred kernel gradient X^T . dZ, as its backward left them:
/// X (k, in) at `a`, dZ (k, units) at `b`, k rows (none for a micro-batch without samples).
using deferred_operands = kernels::gemm_micro_batch;

/// A kernel whose gradient a layer leaves to the fused pass (its spec's defers_kernel_gradient).
struct deferred_kernel {
    /// Where the kernel lies in the parameter buffer.
    deferred_range range;
    /// The layer's ops' deferred_kernel_gradient: grads[lo, hi) where it meets the kernel, from every
    /// micro-batch's operands (`parts[0..count)`), each element one chain over the samples in order,
    /// from zero or, when `go_on`, from grads' element.
    void (*gradient)(const deferred_operands* parts, std::size_t count, std::size_t lo, std::size_t hi, float* grads,
                     bool go_on) noexcept;
};

/// A copy of a layer's weight that the model's threads share (a Dense's transposed kernel), which
/// each thread of the fused pass remakes where it has just updated the weight.
struct shared_copy {
    std::size_t layer;   ///< the layer that reads it (its index in the model)
    std::size_t from;    ///< the weight's offset in the parameter buffer
    std::size_t at;      ///< the copy's offset in the one buffer of shared copies
    /// The layer's ops' remake_shared_copy: the copy's elements of params[b, e), updated.
    void (*remake)(const float* params, std::size_t b, std::size_t e, float* copy) noexcept;
};

/// What the ops of a layer whose spec declares defers_kernel_gradient add (Dense's:
/// layers/dense_ops.hpp), beside forward and backward:
///
///   backward_keeping<B>(params, x, y, dy, dz, dx, grads, n, logit_grad, kernel)
///       backward that leaves dZ (n, out) at dz, its kernel's gradient X^T . dZ only when `kernel`
///   deferred_kernel_gradient<B>(parts, count, lo, hi, grads, go_on)
///       that gradient in the fused pass, over every micro-batch's operands (deferred_operands)
///   deferred_scratch<B>(rows)
///       what the last asks of a thread's scratch
///   forward_rows<B>(params, blocks, logits, count, ctx), input_gradient_rows<B>(params, blocks, count)
///       forward and dX = dZ . W^T over several micro-batches' rows at once (the top of a model run
///       layer by layer over its micro-batches)
///   input_gradient_of<B>(params, dz, count, dx), input_gradient_scratch<B>(rows)
///       dX of a few samples, when a fused convolution and pooling below asks for it as it goes
///
/// and may declare shares_copy<B> with remake_shared_copy<B>(params, b, e, copy): a copy of a weight
/// (Dense's transposed kernel) that the threads share and the fused pass remakes as it updates it.
template <class O, class B>
concept DeferringOps = requires(const float* params, const float* x, const float* y, const float* dy, float* dz,
                                float* dx, float* grads, std::size_t n, bool flag, const deferred_operands* parts,
                                const row_block* blocks, float* const* logits, const step_context& ctx,
                                const kernels::scratch_rows& rows) {
    O::template backward_keeping<B>(params, x, y, dy, dz, dx, grads, n, flag, flag);
    O::template deferred_kernel_gradient<B>(parts, n, n, n, grads, flag);
    { O::template deferred_scratch<B>(rows) } -> std::same_as<kernels::scratch_sizes>;
    O::template forward_rows<B>(params, blocks, logits, n, ctx);
    O::template input_gradient_rows<B>(params, blocks, n);
    O::template input_gradient_of<B>(params, dy, n, dx);
    { O::template input_gradient_scratch<B>(n) } -> std::same_as<kernels::scratch_sizes>;
};

namespace detail {
/// True when the ops O of a layer bound as B, whose spec declares defers_kernel_gradient, are
/// DeferringOps; a short message names what is missing otherwise.
template <class O, class B>
consteval bool
deferring_ops_checked() noexcept
{
    constexpr bool deferring = DeferringOps<O, B>;   // a value: the message lists what is needed
    static_assert(deferring,
                  "tpudsl layer: a spec that declares defers_kernel_gradient needs ops with backward_keeping, "
                  "deferred_kernel_gradient, deferred_scratch, forward_rows, input_gradient_rows, input_gradient_of "
                  "and input_gradient_scratch (see docs/layers.md) [TPUDSL_LAYER_DEFERS_WITHOUT_OPS]");
    return deferring;
}

/// The deferred kernel of the layer bound as B whose ops O are DeferringOps: where its kernel (weight
/// 0, (in, units)) lies, and O's function that computes its gradient in the fused pass.
template <class O, class B>
consteval deferred_kernel
deferred_kernel_of() noexcept
{
    constexpr std::size_t begin = B::template weight<0>::offset, units = B::output_shape::size;
    return {{begin, begin + B::input_shape::size * units, units}, &O::template deferred_kernel_gradient<B>};
}

/// The places of `kernels`, as the gradient layout lists them.
template <std::size_t N>
constexpr std::array<deferred_range, N>
deferred_ranges_of(const std::array<deferred_kernel, N>& kernels) noexcept
{
    std::array<deferred_range, N> ranges{};
    for (std::size_t k = 0; k < N; ++k)
        ranges[k] = kernels[k].range;
    return ranges;
}
} // namespace detail

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_FUSED_STEPS_HPP
