/// @file Defines graph<Model>: a whole model's forward and backward pass over one replica's workspace.
///
/// A replica of capacity `cap` samples owns `workspace_floats(cap)` floats (at most
/// `cap * Model::workspace_size`), laid out as
///   [ activations: one (cap, out_l) block per layer that has its own ][ scratch: one (cap, scratch_l) block per layer ]
///   [ delta 0: (cap, widest) ][ delta 1: (cap, widest) ][ one-sample blocks of the fused convolutions ]
/// every block 64-byte aligned. A Flatten or an absorbed Activation shares its input's block; a fused
/// convolution's output (and, read in place, its window gradients) is one sample's. The loss writes
/// dL/d(output) (or dL/d(logits)) into delta 0; backward ping-pongs between the two deltas down to the
/// first layer, a Dense leaving its dZ in its own output block for the kernel gradient (which the
/// trainer may take over all micro-batches at once: deferred_gradient). A Dense right above a fused
/// convolution and pooling (through a Flatten or an absorbed Activation) leaves its input gradient to
/// the pair, which computes it a few samples at a time as it needs them. Nothing here allocates in a
/// steady step.
#ifndef TPUDSL_OPS_GRAPH_HPP
#define TPUDSL_OPS_GRAPH_HPP

#include <tpudsl/core/activations.hpp>
#include <tpudsl/core/weights.hpp>
#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/layers/detail/conv_core.hpp>
#include <tpudsl/layers/detail/conv_pool_pair.hpp>
#include <tpudsl/layers/layer_concepts.hpp>
#include <tpudsl/layers/ops.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace tpudsl::ops {

namespace detail {
template <class Spec>
consteval bool
has_softmax() noexcept
{
    if constexpr (requires { typename Spec::activation; })
        return std::is_same_v<typename Spec::activation, Softmax>;
    else
        return false;
}
} // namespace detail

template <class Model>
struct graph {
    using input_type = typename Model::input_type;
    static constexpr std::size_t layers = Model::layer_count;
    static constexpr std::size_t input_size = Model::input_shape::size;
    static constexpr std::size_t output_size = Model::output_shape::size;

    template <std::size_t I>
    using layer = typename Model::template layer<I>;
    template <std::size_t I>
    using spec = typename layer<I>::spec;
    /// Layer I's forward and backward (its spec's `ops`: layers/<name>_ops.hpp for the built-in ones),
    /// checked by the LayerOps concept.
    template <std::size_t I>
    using ops = typename tpudsl::detail::ops_or_unusable<tpudsl::detail::ops_check<I, spec<I>, layer<I>>::value,
                                                         spec<I>>::type;

private:
    /// Checks every layer's ops when the graph is instantiated (a failed check has reported itself).
    static constexpr bool ops_checked = []<std::size_t... I>(std::index_sequence<I...>) {
        return ((static_cast<void>(tpudsl::detail::ops_check<I, spec<I>, layer<I>>::value), true) && ...);
    }(std::make_index_sequence<layers>{});
    static_assert(ops_checked);

public:

    template <std::size_t I>
    static consteval bool
    accumulates() noexcept
    {
        if constexpr (layer<I>::weight_count == 0)
            return false;
        else
            return spec<I>::accumulates_gradient;
    }

    /// True when layer I is a convolution that runs together with the max pooling after it
    /// (detail::conv_pool_pair): layer I + 1 then has no pass of its own.
    template <std::size_t I>
    static consteval bool
    fused_conv() noexcept
    {
        if constexpr (I + 1 < layers)
            return spec<I>::convolution_rank != 0 && spec<I>::convolution_rank == spec<I + 1>::max_pooling_rank;
        else
            return false;
    }
    template <std::size_t I>
    static consteval bool
    fused_pool() noexcept
    {
        if constexpr (I > 0)
            return fused_conv<I - 1>();
        else
            return false;
    }
    /// True when layer I is an Activation that the fused convolution two layers below applies instead
    /// (a Linear convolution, its max pooling, then an element-wise activation: the activation commutes
    /// with the maximum, so act(max z) = max act(z) and its derivative is read from the pooled output).
    template <std::size_t I>
    static consteval bool
    absorbed_activation() noexcept
    {
        if constexpr (I >= 2 && I < layers) {
            if constexpr (fused_conv<I - 2>())
                return std::is_same_v<typename spec<I - 2>::activation, Linear> &&
                       !std::is_void_v<typename spec<I>::absorbable_activation>;
            else
                return false;
        } else {
            return false;
        }
    }

    /// The convolution core of a fused pair at layer I: with the activation it absorbs, if any.
    template <std::size_t I>
    static consteval auto
    fused_conv_core() noexcept
    {
        using C = typename ops<I>::template core<layer<I>>;
        if constexpr (absorbed_activation<I + 2>())
            return std::type_identity<
                tpudsl::detail::conv_core<C::geometry, C::filters, typename spec<I + 2>::absorbable_activation>>{};
        else
            return std::type_identity<C>{};
    }
    template <std::size_t I>
    using conv_pool = tpudsl::detail::conv_pool_pair<typename decltype(fused_conv_core<I>())::type,
                                             typename ops<I + 1>::template core<layer<I + 1>>>;

    /// True when layer I's output is its input's memory (a Flatten after another layer, an absorbed
    /// Activation): no pass forward, and its gradient is the gradient of its input as it stands.
    template <std::size_t I>
    static consteval bool
    aliases_input() noexcept
    {
        return (I > 0 && spec<I>::aliases_input) || absorbed_activation<I>();
    }

    /// True when layer I's backward leaves dL/d(input) in the buffer that held dL/d(output): an
    /// aliasing layer, a layer that declares gradient_in_place (element-wise), and a fused convolution
    /// and its pooling (conv_pool_pair writes the input gradient over the pooled one).
    template <std::size_t I>
    static consteval bool
    gradient_in_place() noexcept
    {
        return aliases_input<I>() || fused_conv<I>() || fused_pool<I>() || spec<I>::gradient_in_place;
    }

    /// Which of the two delta buffers holds dL/d(output of layer I): the loss writes into delta 0,
    /// and each layer below the top flips to the other buffer unless its gradient is in place.
    static constexpr auto gradient_buffer = [] {
        std::array<std::size_t, layers> g{};
        g[layers - 1] = 0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            // from the top down: layer J = layers - 1 - I sets the buffer of layer J - 1
            ((layers - 1 - I > 0 ? (g[layers - 2 - I] = gradient_in_place<layers - 1 - I>() ? g[layers - 1 - I]
                                                                                                 : 1 - g[layers - 1 - I],
                                    0)
                                 : 0),
             ...);
        }(std::make_index_sequence<layers>{});
        return g;
    }();

    /// True when layer I (a layer that defers_kernel_gradient: a Dense) leaves its kernel gradient
    /// X^T . dZ to deferred_gradient, which computes it over every micro-batch of a step at once. Its
    /// dZ then stays in its output block (nothing reads its output after its backward) until the
    /// step's reduce; so a layer that feeds another deferred one directly (its output is that one's X)
    /// is not deferred.
    template <std::size_t I>
    static consteval bool
    deferred_kernel() noexcept
    {
        if constexpr (!spec<I>::defers_kernel_gradient)
            return false;
        else if constexpr (I == 0 && !std::is_same_v<input_type, float>)
            return false;
        else
            return !feeds_deferred_kernel<I>();
    }
    /// True when layer I's output is (through aliasing layers) the input of a deferred Dense.
    template <std::size_t I>
    static consteval bool
    feeds_deferred_kernel() noexcept
    {
        if constexpr (I + 1 >= layers)
            return false;
        else if constexpr (aliases_input<I + 1>())
            return feeds_deferred_kernel<I + 1>();
        else
            return deferred_kernel<I + 1>();
    }

    /// The first layer from I up that does not alias its input (layers when none).
    template <std::size_t I>
    static consteval std::size_t
    first_own_output() noexcept
    {
        if constexpr (I >= layers)
            return layers;
        else if constexpr (aliases_input<I>())
            return first_own_output<I + 1>();
        else
            return I;
    }
    /// The deferred Dense whose input gradient is the pooled gradient of the fused convolution J
    /// (through aliasing layers: an absorbed Activation, a Flatten), or `layers` when none. That Dense
    /// leaves its dX to the pair, which computes it a few samples at a time just before it reads them
    /// (in cache, instead of a whole micro-batch written out and read back).
    template <std::size_t J>
    static consteval std::size_t
    dense_above_pair() noexcept
    {
        if constexpr (!fused_conv<J>()) {
            return layers;
        } else {
            constexpr std::size_t d = first_own_output<J + 2>();
            if constexpr (d < layers)
                return deferred_kernel<d>() ? d : layers;
            else
                return layers;
        }
    }
    /// True when layer I is a Dense that leaves its input gradient to the fused pair below it.
    template <std::size_t I>
    static consteval bool
    dx_left_to_pair() noexcept
    {
        return count_layers([](auto j) { return dense_above_pair<j>() == I; }) > 0;
    }

    /// True when the last layer ends in Softmax: the loss may then take the fused logits path.
    static constexpr bool softmax_output = detail::has_softmax<spec<layers - 1>>();

    /// True when layer I's activation block holds one sample, not `cap`: a fused convolution's output,
    /// which its pair computes and pools one sample at a time.
    template <std::size_t I>
    static consteval bool
    one_sample_activation() noexcept
    {
        return fused_conv<I>();
    }
    /// True when layer I's scratch block holds one sample: a fused convolution that reads its input in
    /// place keeps no windows, only one sample's window gradients or its zero-padded dZ (when its input
    /// needs a gradient).
    template <std::size_t I>
    static consteval bool
    one_sample_scratch() noexcept
    {
        if constexpr (fused_conv<I>())
            return conv_pool<I>::conv_type::in_place;
        else
            return false;
    }

    /// Where each layer's activation and scratch block lies: `cap`-sample blocks at a per-sample offset
    /// (multiplied by the capacity), one-sample blocks at an offset after all of them.
    struct block_plan {
        std::array<std::size_t, layers> act{}, scratch{};
        std::array<bool, layers> act_fixed{}, scratch_fixed{};
        std::size_t per_sample = 0, fixed = 0, delta_offset = 0, delta_stride = 0;
    };
    static constexpr block_plan plan = [] {
        block_plan p;
        std::size_t a = 0, f = 0, widest = 0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (([&] {
                 constexpr std::size_t out = aligned_floats(layer<I>::output_shape::size);
                 if constexpr (aliases_input<I>()) {
                     p.act[I] = p.act[I - 1];
                     p.act_fixed[I] = p.act_fixed[I - 1];
                 } else if constexpr (one_sample_activation<I>()) {
                     p.act[I] = f;
                     p.act_fixed[I] = true;
                     f += out;
                 } else {
                     p.act[I] = a;
                     a += out;
                 }
                 // The deltas hold every output gradient but a fused convolution's (its pair keeps
                 // that one sample at a time in the activation block).
                 if constexpr (!fused_conv<I>())
                     widest = std::max(widest, out);
             }()),
             ...);
            (([&] {
                 constexpr std::size_t size = aligned_floats(layer<I>::scratch_size);
                 if constexpr (one_sample_scratch<I>()) {
                     p.scratch[I] = f;
                     p.scratch_fixed[I] = true;
                     f += I > 0 ? aligned_floats(conv_pool<I>::dx_scratch) : 0;   // dcols or dZ, when dx is asked
                 } else {
                     p.scratch[I] = a;
                     a += size;
                 }
             }()),
             ...);
        }(std::make_index_sequence<layers>{});
        p.delta_offset = a;
        p.delta_stride = widest;
        p.per_sample = a + 2 * widest;
        p.fixed = f;
        return p;
    }();
    static_assert(plan.per_sample + plan.fixed <= Model::workspace_size,
                  "graph: the fused plan needs no more than the layers' own layout (Model::workspace_size)");

    /// Floats a replica of capacity `cap` needs: never more than cap * Model::workspace_size.
    [[nodiscard]] static constexpr std::size_t
    workspace_floats(std::size_t cap) noexcept
    {
        return cap * plan.per_sample + plan.fixed;
    }

    /// How many layers satisfy pred, called with std::integral_constant<std::size_t, I> for layer I.
    template <class Pred>
    static consteval std::size_t
    count_layers(Pred pred) noexcept
    {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return (std::size_t{0} + ... + (pred(std::integral_constant<std::size_t, I>{}) ? 1 : 0));
        }(std::make_index_sequence<layers>{});
    }

    /// The parameter ranges [begin, end) whose gradients layers add into (rather than write): the
    /// arena must be cleared there between steps.
    static constexpr auto accumulating_ranges = [] {
        constexpr std::size_t count = count_layers([](auto i) { return accumulates<i>(); });
        std::array<std::pair<std::size_t, std::size_t>, count> ranges{};
        std::size_t k = 0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((accumulates<I>() ? (ranges[k++] = {layer<I>::param_offset, layer<I>::param_end}, 0) : 0), ...);
        }(std::make_index_sequence<layers>{});
        return ranges;
    }();
    /// True when layer I maps each sample's row to a row (its spec says row_wise).
    template <std::size_t I>
    static consteval bool
    row_layer() noexcept
    {
        return spec<I>::row_wise;
    }
    /// True when the model is made of row layers only, on float inputs (a dense network): a replica then
    /// runs its micro-batches layer by layer (forward_parts, backward_parts), and each Dense reads its
    /// kernel once for all of them instead of once per micro-batch.
    static constexpr bool rows_only =
        std::is_same_v<input_type, float> && count_layers([](auto i) { return !row_layer<i>(); }) == 0;

    /// A deferred kernel's place in the parameter buffer: [begin, end), rows of `columns` floats.
    struct deferred_range {
        std::size_t begin, end, columns;
    };
    /// The deferred kernels (see deferred_kernel), in layer order.
    static constexpr auto deferred_ranges = [] {
        constexpr std::size_t count = count_layers([](auto i) { return deferred_kernel<i>(); });
        std::array<deferred_range, count> ranges{};
        std::size_t k = 0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ([&] {
                if constexpr (deferred_kernel<I>()) {
                    constexpr std::size_t b = layer<I>::template weight<0>::offset, u = layer<I>::output_shape::size;
                    ranges[k++] = {b, b + layer<I>::input_shape::size * u, u};
                }
            }(),
             ...);
        }(std::make_index_sequence<layers>{});
        return ranges;
    }();

    /// One micro-batch of a step, for deferred_gradient: its inputs, its workspace (after a backward
    /// that deferred the kernels) and its samples.
    struct part {
        const input_type* x = nullptr;
        float* ws = nullptr;
        std::size_t n = 0;
        std::size_t first = 0;     ///< forward_parts: its first sample's index in the step (first_sample)
        float* grads = nullptr;    ///< backward_parts: its gradient arena
    };

    /// grads[lo, hi) where that overlaps a deferred kernel: X^T . dZ over every part's samples, each
    /// element one chain from zero over the samples in order, part after part (parts without samples
    /// add nothing). The same bits as `backward` without deferring on all the parts' samples as one
    /// micro-batch; outside the deferred ranges grads is not touched.
    static void
    deferred_gradient(const part* parts, std::size_t count, std::size_t cap, std::size_t lo, std::size_t hi,
                      float* grads) noexcept
    {
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (deferred_layer<I>(parts, count, cap, lo, hi, grads), ...);
        }(std::make_index_sequence<layers>{});
    }

    [[nodiscard]] static float*
    activation(float* ws, std::size_t cap, std::size_t l) noexcept
    {
        return ws + (plan.act_fixed[l] ? cap * plan.per_sample + plan.act[l] : cap * plan.act[l]);
    }
    [[nodiscard]] static float*
    scratch(float* ws, std::size_t cap, std::size_t l) noexcept
    {
        return ws + (plan.scratch_fixed[l] ? cap * plan.per_sample + plan.scratch[l] : cap * plan.scratch[l]);
    }
    [[nodiscard]] static float*
    delta(float* ws, std::size_t cap, std::size_t which) noexcept
    {
        return ws + cap * (plan.delta_offset + which * plan.delta_stride);
    }
    /// The model's output, (n, output_size).
    [[nodiscard]] static float*
    output(float* ws, std::size_t cap) noexcept
    {
        return activation(ws, cap, layers - 1);
    }
    /// Where the loss writes its gradient, (n, output_size).
    [[nodiscard]] static float*
    loss_gradient(float* ws, std::size_t cap) noexcept
    {
        return delta(ws, cap, 0);
    }
    /// The last layer's logits (only when softmax_output), (n, output_size).
    [[nodiscard]] static float*
    logits(float* ws, std::size_t cap, std::size_t n) noexcept
    {
        return ops<layers - 1>::template logits<layer<layers - 1>>(scratch(ws, cap, layers - 1), n);
    }

    /// Forward pass of n <= cap samples x (n, input_size) into the workspace.
    static void
    forward(const float* params, const input_type* x, float* ws, std::size_t cap, std::size_t n,
            const step_context& ctx) noexcept
    {
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (forward_layer<I>(params, x, ws, cap, n, ctx), ...);
        }(std::make_index_sequence<layers>{});
    }

    /// Backward pass after `forward` and after the loss filled loss_gradient(): adds every weight's
    /// gradient to `grads` (a buffer in the parameter layout). `input_grad`, when not null, receives
    /// dL/dx (float inputs only). `logit_grad`: the loss gradient is with respect to the logits.
    /// `defer_kernels`: the deferred kernels' gradients are left to deferred_gradient (their ranges of
    /// `grads` are not written). A deferred Dense's output block holds its dZ afterwards.
    static void
    backward(const float* params, const input_type* x, float* ws, std::size_t cap, std::size_t n, float* grads,
             bool logit_grad, float* input_grad = nullptr, bool defer_kernels = false) noexcept
    {
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (backward_layer<layers - 1 - I>(params, x, ws, cap, n, grads, logit_grad, input_grad, defer_kernels),
             ...);
        }(std::make_index_sequence<layers>{});
    }

    /// `forward` on several micro-batches of one replica (rows_only models), layer by layer: part p's
    /// workspace gets the bits `forward` gives it alone with ctx.first_sample = parts[p].first. Parts
    /// without samples are skipped.
    static void
    forward_parts(const float* params, const part* parts, std::size_t count, std::size_t cap,
                  const step_context& ctx) noexcept
    {
        static_assert(rows_only, "graph::forward_parts: row layers only (graph::rows_only)");
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (forward_layer_parts<I>(params, parts, count, cap, ctx), ...);
        }(std::make_index_sequence<layers>{});
    }

    /// `backward` (kernels deferred or not, no input gradient) on the parts after forward_parts and their
    /// losses, layer by layer from the top, each part's gradients into parts[p].grads: the bits of
    /// `backward` on each part alone.
    static void
    backward_parts(const float* params, const part* parts, std::size_t count, std::size_t cap, bool logit_grad,
                   bool defer_kernels) noexcept
    {
        static_assert(rows_only, "graph::backward_parts: row layers only (graph::rows_only)");
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (backward_layer_parts<layers - 1 - I>(params, parts, count, cap, logit_grad, defer_kernels), ...);
        }(std::make_index_sequence<layers>{});
    }

private:
    /// Parts a Dense passes to one call of its rows kernel: a replica's micro-batches (8 at most with
    /// the default strategies); more are taken in groups.
    static constexpr std::size_t rows_group = 16;

    template <std::size_t I>
    static void
    forward_layer_parts(const float* params, const part* parts, std::size_t count, std::size_t cap,
                        const step_context& ctx) noexcept
    {
        if constexpr (spec<I>::defers_kernel_gradient) {
            kernels::gemm_rows blocks[rows_group];
            float* logits[rows_group];
            for (std::size_t p0 = 0; p0 < count; p0 += rows_group) {
                std::size_t g = 0;
                for (std::size_t p = p0; p < std::min(count, p0 + rows_group); ++p) {
                    if (parts[p].n == 0)
                        continue;
                    const float* in;
                    if constexpr (I == 0)
                        in = parts[p].x;
                    else
                        in = activation(parts[p].ws, cap, I - 1);
                    blocks[g] = {in, activation(parts[p].ws, cap, I), parts[p].n};
                    logits[g++] = scratch(parts[p].ws, cap, I);
                }
                ops<I>::template forward_rows<layer<I>>(params, blocks, logits, g, ctx);
            }
        } else {
            step_context c = ctx;
            for (std::size_t p = 0; p < count; ++p)
                if (parts[p].n > 0) {
                    c.first_sample = parts[p].first;
                    forward_layer<I>(params, parts[p].x, parts[p].ws, cap, parts[p].n, c);
                }
        }
    }

    template <std::size_t I>
    static void
    backward_layer_parts(const float* params, const part* parts, std::size_t count, std::size_t cap, bool logit_grad,
                         bool defer_kernels) noexcept
    {
        if constexpr (spec<I>::defers_kernel_gradient) {
            // Each part as `backward` runs it without dX (act', the bias' sums, the kernel's gradient
            // unless deferred), then dX of all the parts through one pass over W^T.
            const bool fused = logit_grad && I == layers - 1;
            for (std::size_t p = 0; p < count; ++p) {
                if (parts[p].n == 0)
                    continue;
                float* ws = parts[p].ws;
                const float* in;
                if constexpr (I == 0)
                    in = parts[p].x;
                else
                    in = activation(ws, cap, I - 1);
                float* dy = delta(ws, cap, gradient_buffer[I]);
                float* dz = deferred_kernel<I>() ? activation(ws, cap, I) : dy;
                ops<I>::template backward_keeping<layer<I>>(params, in, activation(ws, cap, I), dy, dz, nullptr,
                                                            parts[p].grads, parts[p].n, fused,
                                                            !(deferred_kernel<I>() && defer_kernels));
            }
            if constexpr (I > 0) {
                kernels::gemm_rows blocks[rows_group];
                for (std::size_t p0 = 0; p0 < count; p0 += rows_group) {
                    std::size_t g = 0;
                    for (std::size_t p = p0; p < std::min(count, p0 + rows_group); ++p) {
                        if (parts[p].n == 0)
                            continue;
                        float* ws = parts[p].ws;
                        float* dz = deferred_kernel<I>() ? activation(ws, cap, I) : delta(ws, cap, gradient_buffer[I]);
                        blocks[g++] = {dz, delta(ws, cap, gradient_buffer[I - 1]), parts[p].n};
                    }
                    ops<I>::template input_gradient_rows<layer<I>>(params, blocks, g);
                }
            }
        } else {
            for (std::size_t p = 0; p < count; ++p)
                if (parts[p].n > 0)
                    backward_layer<I>(params, parts[p].x, parts[p].ws, cap, parts[p].n, parts[p].grads, logit_grad,
                                      nullptr, defer_kernels);
        }
    }

private:
    template <std::size_t I>
    static void
    forward_layer(const float* params, const input_type* x, float* ws, std::size_t cap, std::size_t n,
                  const step_context& ctx) noexcept
    {
        float* y = activation(ws, cap, I);
        if constexpr (fused_pool<I>() || aliases_input<I>()) {
            return;   // the convolution below ran this pooling; a Flatten's output is its input
        } else if constexpr (fused_conv<I>()) {
            // y holds one sample's convolution output at a time; the pooling's block gets the rest.
            const float* in;
            if constexpr (I == 0)
                in = x;
            else
                in = activation(ws, cap, I - 1);
            conv_pool<I>::forward(params + layer<I>::template weight<0>::offset,
                                  params + layer<I>::template weight<1>::offset, in, y, scratch(ws, cap, I),
                                  activation(ws, cap, I + 1), scratch(ws, cap, I + 1), n);
        } else if constexpr (I == 0)
            ops<0>::template forward<layer<0>>(params, x, y, scratch(ws, cap, 0), n, ctx);
        else
            ops<I>::template forward<layer<I>>(params, activation(ws, cap, I - 1), y, scratch(ws, cap, I), n, ctx);
    }

    template <std::size_t I>
    static void
    deferred_layer(const part* parts, std::size_t count, std::size_t cap, std::size_t lo, std::size_t hi,
                   float* grads) noexcept
    {
        if constexpr (deferred_kernel<I>()) {
            constexpr std::size_t In = layer<I>::input_shape::size, U = layer<I>::output_shape::size;
            constexpr std::size_t offset = layer<I>::template weight<0>::offset;
            const std::size_t a = std::max(lo, offset), b = std::min(hi, offset + In * U);
            if (a >= b)
                return;
            auto x_of = [&](std::size_t p) -> const float* {
                if constexpr (I == 0)
                    return parts[p].x;
                else
                    return activation(parts[p].ws, cap, I - 1);
            };
            float* g = grads + offset;
            auto part_of = [&](std::size_t p) {
                return kernels::gemm_part{x_of(p), activation(parts[p].ws, cap, I), parts[p].n};
            };
            // A row cut by the range: the kernel computes the whole row aside, its columns are copied.
            auto cut_row = [&](std::size_t row, std::size_t j0, std::size_t j1) {
                kernels::gemm_tn_parts_columns<U>(row, j0, j1, In, part_of, count, g + row * U);
            };
            std::size_t e = a - offset;
            const std::size_t end = b - offset;
            if (e % U != 0) {
                const std::size_t row = e / U, stop = std::min(end, (row + 1) * U);
                cut_row(row, e % U, stop - row * U);
                e = stop;
            }
            const std::size_t r0 = e / U, r1 = end / U;
            if (r0 < r1) {
                kernels::gemm_tn_parts<U>(
                    r1 - r0, In,
                    [&](std::size_t p) {
                        kernels::gemm_part part = part_of(p);
                        part.a += r0;
                        return part;
                    },
                    count, g + r0 * U);
                e = r1 * U;
            }
            if (e < end)
                cut_row(r1, 0, end - r1 * U);
        }
    }

    template <std::size_t I>
    static void
    backward_layer(const float* params, const input_type* x, float* ws, std::size_t cap, std::size_t n,
                   float* grads, bool logit_grad, float* input_grad, bool defer_kernels) noexcept
    {
        float* dy = delta(ws, cap, gradient_buffer[I]);
        const bool fused = logit_grad && I == layers - 1;
        if constexpr (fused_pool<I>() || aliases_input<I>()) {
            return;   // the convolution below takes this pooling's gradient; a Flatten's is its input's
        } else if constexpr (fused_conv<I>()) {
            // dy: the pooling's gradient; dx shares its buffer (conv_pool_pair orders the samples for it).
            float* pooled_dy = delta(ws, cap, gradient_buffer[I + 1]);
            float* dx;
            const float* in;
            if constexpr (I == 0) {
                dx = input_grad;
                in = x;
            } else {
                dx = delta(ws, cap, gradient_buffer[I - 1]);
                in = activation(ws, cap, I - 1);
            }
            auto run = [&](const auto& pooled) {
                conv_pool<I>::backward(params + layer<I>::template weight<0>::offset, in, activation(ws, cap, I + 1),
                                       pooled, dx, grads + layer<I>::template weight<0>::offset,
                                       grads + layer<I>::template weight<1>::offset, scratch(ws, cap, I),
                                       activation(ws, cap, I), scratch(ws, cap, I + 1), n);
            };
            if constexpr (constexpr std::size_t D = dense_above_pair<I>(); D < layers) {
                // The pooled gradient of a few samples at a time = dZ . W^T of the Dense above (its dZ in
                // its output block, W^T the copy this thread's forward made), each row as the Dense's own
                // GEMM computes it, into a group buffer that stays in cache.
                constexpr std::size_t U = layer<D>::output_shape::size, In = layer<D>::input_shape::size;
                const float* dz = activation(ws, cap, D);
                const float* wt = ops<D>::template transposed_kernel<layer<D>>(
                    params + layer<D>::template weight<0>::offset, 0,
                    ops<D>::template keeps_transpose<layer<D>>);
                float* group = conv_pool<I>::group_buffer();
                run([=](std::size_t s0, std::size_t count) {
                    kernels::gemm_nn<U, In>(count, dz + s0 * U, wt, group);
                    return group;
                });
            } else {
                run(tpudsl::detail::dy_in_place{pooled_dy, layer<I + 1>::output_shape::size});
            }
        } else if constexpr (deferred_kernel<I>()) {
            const float* in;
            float* dx;
            if constexpr (I == 0) {
                in = x;
                dx = input_grad;
            } else {
                in = activation(ws, cap, I - 1);
                dx = delta(ws, cap, gradient_buffer[I - 1]);
            }
            if constexpr (dx_left_to_pair<I>())
                dx = nullptr;   // the fused pair below computes it from dZ as it needs it
            float* y = activation(ws, cap, I);   // dZ replaces the output: deferred_gradient reads it there
            ops<I>::template backward_keeping<layer<I>>(params, in, y, dy, y, dx, grads, n, fused, !defer_kernels);
        } else if constexpr (I == 0) {
            ops<0>::template backward<layer<0>>(params, x, activation(ws, cap, 0), dy, input_grad, grads,
                                                scratch(ws, cap, 0), n, fused);
        } else {
            ops<I>::template backward<layer<I>>(params, activation(ws, cap, I - 1), activation(ws, cap, I), dy,
                                                delta(ws, cap, gradient_buffer[I - 1]), grads, scratch(ws, cap, I), n,
                                                fused);
        }
    }
};

} // namespace tpudsl::ops

#endif // !TPUDSL_OPS_GRAPH_HPP
