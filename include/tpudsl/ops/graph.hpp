/// @file Defines graph<Model>: a whole model's forward and backward pass over one replica's workspace,
/// a short runner over the model's plan (ops/plan.hpp).
///
/// The plan says how each layer runs (its own pass, a convolution fused with its pooling, an alias)
/// and where its blocks lie. The loss writes dL/d(output) (or dL/d(logits)) into delta 0; backward
/// ping-pongs between the two deltas down to the first layer, a layer whose kernel gradient is
/// deferred leaving its dZ in its own output block for the fused pass (deferred_kernels). A Dense
/// right above a fused convolution and pooling (through aliases) leaves its input gradient to the
/// pair, which computes it a few samples at a time as it needs them. Nothing here allocates in a
/// steady step.
#ifndef TPUDSL_OPS_GRAPH_HPP
#define TPUDSL_OPS_GRAPH_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/core/gradient_layout.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/kernels/scratch.hpp>
#include <tpudsl/layers/all_ops.hpp>
#include <tpudsl/layers/detail/conv_core.hpp>
#include <tpudsl/layers/detail/conv_pool_pair.hpp>
#include <tpudsl/layers/fused_steps.hpp>
#include <tpudsl/layers/layer_concepts.hpp>
#include <tpudsl/layers/step_context.hpp>
#include <tpudsl/ops/plan.hpp>
#include <tpudsl/ops/weight_ranges.hpp>

#include <algorithm>
#include <ranges>
#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace tpudsl::detail {
/// The per-sample scratch a layer bound as B keeps in the workspace from its forward to its backward:
/// its declared scratch_size, but none for a Winograd convolution (its blocks are in the thread's
/// scratch).
template <class Ops, class B>
[[nodiscard]] consteval std::size_t
kept_scratch_size() noexcept
{
    if constexpr (requires { Ops::template core<B>::winograd; })
        if constexpr (Ops::template core<B>::winograd)
            return 0;
    return B::scratch_size;
}

/// True when a layer's activation is Softmax: the loss may then take the fused logits path.
template <class Spec>
consteval bool
has_softmax() noexcept
{
    if constexpr (requires { typename Spec::activation; })
        return std::is_same_v<typename Spec::activation, Softmax>;
    else
        return false;
}
} // namespace tpudsl::detail

namespace tpudsl::ops {

/// A model's forward and backward passes: a Sequential's here, a Functional's in ops/node_graph.hpp.
template <class Model, bool = requires { requires Model::functional; }>
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
    /// What the plan reads of layer I: its traits and sizes (the fused pairs' facts come after the
    /// fusion decisions, which they depend on).
    template <std::size_t I>
    static consteval layer_facts
    facts_of() noexcept
    {
        using S = spec<I>;
        if constexpr (S::defers_kernel_gradient && !std::is_same_v<ops<I>, tpudsl::detail::unusable_ops>)
            [[maybe_unused]] constexpr bool checked = tpudsl::detail::deferring_ops_checked<ops<I>, layer<I>>();
        layer_facts f;
        f.aliases_input = S::aliases_input;
        f.gradient_in_place = S::gradient_in_place;
        f.row_wise = S::row_wise;
        f.accumulates = layer<I>::weight_count > 0 && S::accumulates_gradient;
        f.defers_kernel = S::defers_kernel_gradient && DeferringOps<ops<I>, layer<I>>;   // (else reported above)
        f.convolution_rank = S::convolution_rank;
        f.max_pooling_rank = S::max_pooling_rank;
        if constexpr (requires { typename S::activation; })
            f.linear_activation = std::is_same_v<typename S::activation, Linear>;
        f.absorbable = !std::is_void_v<typename S::absorbable_activation>;
        f.output_size = layer<I>::output_shape::size;
        f.scratch_size = tpudsl::detail::kept_scratch_size<ops<I>, layer<I>>();
        return f;
    }

private:
    static constexpr std::array<layer_facts, layers> facts = []<std::size_t... I>(std::index_sequence<I...>) {
        return std::array<layer_facts, layers>{facts_of<I>()...};
    }(std::make_index_sequence<layers>{});
    static constexpr graph_plan<layers> fusion = plan_fusion(facts, std::is_same_v<input_type, float>);

public:
    /// The convolution core of a fused pair at layer I: with the activation it absorbs, if any.
    template <std::size_t I>
    static consteval auto
    fused_conv_core() noexcept
    {
        using C = typename ops<I>::template core<layer<I>>;
        if constexpr (I + 2 < layers && fusion.nodes[I + 2].absorbed)
            return std::type_identity<
                tpudsl::detail::conv_core<C::geometry, C::filters, typename spec<I + 2>::absorbable_activation>>{};
        else
            return std::type_identity<C>{};
    }
    /// The fused convolution and pooling at layers I and I + 1 (detail::conv_pool_pair).
    template <std::size_t I>
    using conv_pool = tpudsl::detail::conv_pool_pair<typename decltype(fused_conv_core<I>())::type,
                                                     typename ops<I + 1>::template core<layer<I + 1>>>;

    /// The plan: every fusion and memory decision, as data.
    static constexpr graph_plan<layers> plan = [] {
        std::array<layer_facts, layers> f = facts;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ([&] {
                if constexpr (fusion.nodes[I].kind == node_kind::fused_conv) {
                    f[I].pair_in_place = conv_pool<I>::one_sample_scratch;
                    f[I].pair_dx_scratch = conv_pool<I>::dx_scratch;
                }
            }(),
             ...);
        }(std::make_index_sequence<layers>{});
        return plan_memory(fusion, f);
    }();

    /// True when layer I is a convolution run with the max pooling after it.
    template <std::size_t I>
    static consteval bool
    fused_conv() noexcept
    {
        return plan.nodes[I].kind == node_kind::fused_conv;
    }
private:
    template <std::size_t I>
    static constexpr kernels::scratch_sizes
    layer_scratch(const kernels::scratch_rows& rows) noexcept
    {
        constexpr plan_node node = plan.nodes[I];
        kernels::scratch_sizes s;
        if constexpr (node.kind == node_kind::fused_conv) {
            s = conv_pool<I>::kernel_scratch();
            if constexpr (constexpr std::size_t D = node.dense_above; D < layers)
                s |= ops<D>::template input_gradient_scratch<layer<D>>(conv_pool<I>::group);
        } else if constexpr (node.kind == node_kind::pass) {
            if constexpr (requires { ops<I>::template scratch<layer<I>>(rows); })
                s = ops<I>::template scratch<layer<I>>(rows);
        }
        if constexpr (node.deferred_kernel)
            s |= ops<I>::template deferred_scratch<layer<I>>(rows);
        return s;
    }

    template <std::size_t I>
    static consteval std::size_t
    layer_kept_floats() noexcept
    {
        constexpr plan_node node = plan.nodes[I];
        if constexpr (node.kind == node_kind::fused_conv && node.dense_above < layers)
            return conv_pool<I>::group_floats;
        else if constexpr (requires { ops<I>::template kept_floats<layer<I>>; })
            return ops<I>::template kept_floats<layer<I>>;
        else
            return 0;
    }

public:
    /// True when layer I leaves its kernel gradient to the fused pass (deferred_kernels).
    template <std::size_t I>
    static consteval bool
    deferred_kernel() noexcept
    {
        return plan.nodes[I].deferred_kernel;
    }

    /// Floats a replica of capacity `cap` needs; `input_gradient`: also for backward's input_grad (the
    /// model's input gradient, which training never asks for).
    [[nodiscard]] static constexpr std::size_t
    workspace_floats(std::size_t cap, bool input_gradient = false) noexcept
    {
        return cap * plan.per_sample + plan.one_sample + (input_gradient ? plan.input_gradient_scratch : 0);
    }

    /// What a step's kernels ask of a thread's scratch (kernels::scratch_sizes) when a micro-batch
    /// holds up to rows.micro_batch samples: the largest request of every layer's kernels (a fused
    /// pair's, a pass's own, a deferred kernel gradient's over the step's rows). A Trainable makes
    /// each of its threads an arena of this size (kernels::scratch_arena) before the first step.
    [[nodiscard]] static constexpr kernels::scratch_sizes
    scratch_sizes(const kernels::scratch_rows& rows) noexcept
    {
        kernels::scratch_sizes s;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((s |= layer_scratch<I>(rows)), ...);
        }(std::make_index_sequence<layers>{});
        return s;
    }

    /// Floats each layer keeps in a thread's arena from one call to the next (a Dense's transposed
    /// kernel, a fused pair's group buffer), by layer.
    static constexpr std::array<std::size_t, layers> kept_floats = []<std::size_t... I>(std::index_sequence<I...>) {
        return std::array<std::size_t, layers>{layer_kept_floats<I>()...};
    }(std::make_index_sequence<layers>{});

    /// True when the last layer ends in Softmax: the loss may then take the fused logits path.
    static constexpr bool softmax_output = tpudsl::detail::has_softmax<spec<layers - 1>>();
    /// True when the model is made of row layers only, on float inputs (a dense network): a replica then
    /// runs its micro-batches layer by layer (forward_micro_batches, backward_micro_batches), and each Dense reads its
    /// kernel once for all of them instead of once per micro-batch.
    static constexpr bool rows_only = plan.rows_only;
    /// Floats of a Dense kernel from which a model whose lower layers are not row layers runs its top
    /// ones layer by layer too (rows_from): 1 MB, more than stays in cache from one micro-batch to the
    /// next, so that each micro-batch read it from memory again (CIFAR-10's 2304 x 512).
    static constexpr std::size_t rows_kernel_floats = std::size_t{1} << 18;
    /// The first of the layers that a replica runs layer by layer over its micro-batches
    /// (forward_micro_batches, backward_micro_batches): 0 for a dense network (rows_only); otherwise the
    /// first of the row layers at the top of the model when a Dense among them has a kernel of at least
    /// rows_kernel_floats (the layers below run micro-batch by micro-batch, as `forward` and `backward`
    /// run them); `layers` when the replica runs every micro-batch through the whole model in turn.
    static constexpr std::size_t rows_from = [] {
        if (rows_only)
            return std::size_t{0};
        std::size_t from = layers;
        while (from > 1 && facts[from - 1].row_wise && !plan.nodes[from - 1].dx_left_to_pair)
            --from;
        const bool wide = [&]<std::size_t... I>(std::index_sequence<I...>) {
            return ((I >= from && spec<I>::defers_kernel_gradient &&
                     layer<I>::input_shape::size * layer<I>::output_shape::size >= rows_kernel_floats) ||
                    ...);
        }(std::make_index_sequence<layers>{});
        return wide ? from : layers;
    }();

    /// The parameter ranges whose gradients layers add into, and the non-trainable weights
    /// (ops/weight_ranges.hpp).
    static constexpr auto accumulating_ranges = weight_ranges<Model>::accumulating;
    static constexpr auto moving_ranges = weight_ranges<Model>::moving;

    /// The deferred kernels (see plan_node::deferred_kernel), in layer order: where each lies and its
    /// layer's function that computes its gradient in the fused pass.
    static constexpr auto deferred_kernels = [] {
        constexpr std::size_t count =
            std::ranges::count_if(plan.nodes, [](const plan_node& n) { return n.deferred_kernel; });
        std::array<tpudsl::deferred_kernel, count> kernels{};
        std::size_t k = 0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ([&] {
                if constexpr (deferred_kernel<I>())
                    kernels[k++] = tpudsl::detail::deferred_kernel_of<ops<I>, layer<I>>();
            }(),
             ...);
        }(std::make_index_sequence<layers>{});
        return kernels;
    }();
    static constexpr auto deferred_ranges = tpudsl::detail::deferred_ranges_of(deferred_kernels);

    /// Where a micro-batch's operands of each deferred kernel lie after its backward (X, and dZ in the
    /// layer's output block): out[k * stride] for deferred_kernels[k]. Its trainer keeps them for the
    /// fused pass.
    static void
    deferred_operands_of(const input_type* x, float* ws, std::size_t cap, std::size_t n, deferred_operands* out,
                         std::size_t stride) noexcept
    {
        std::size_t k = 0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ([&] {
                if constexpr (deferred_kernel<I>())
                    out[stride * k++] = {input<I>(x, ws, cap), activation(ws, cap, I), n};
            }(),
             ...);
        }(std::make_index_sequence<layers>{});
    }

    /// True when the model's threads share one copy of layer I's transposed kernel (its ops'
    /// shares_copy), which the fused pass remakes as it updates the kernel (shared_copies) instead of
    /// every thread making its own in its forward: a deferred kernel outside a fused pair.
    template <std::size_t I>
    static consteval bool
    shares_transpose() noexcept
    {
        if constexpr (deferred_kernel<I>() && plan.nodes[I].kind != node_kind::fused_conv &&
                      requires { ops<I>::template shares_copy<layer<I>>; })
            return ops<I>::template shares_copy<layer<I>>;
        else
            return false;
    }

    /// The floats of the transposed kernels the threads share (shares_transpose), layer by layer.
    static constexpr std::array<std::size_t, layers> shared_transpose_floats = []<std::size_t... I>(std::index_sequence<I...>) {
        return std::array<std::size_t, layers>{(shares_transpose<I>() ? layer_kept_floats<I>() : 0)...};
    }(std::make_index_sequence<layers>{});

    /// Where layer l's shared transposed kernel starts in the one buffer that holds them all (aligned
    /// regions, layer by layer); the last entry is the buffer's floats.
    static constexpr std::array<std::size_t, layers + 1> shared_transpose_at = [] {
        constexpr std::size_t a = buffer_alignment_floats;
        std::array<std::size_t, layers + 1> at{};
        for (std::size_t l = 0; l < layers; ++l)
            at[l + 1] = at[l] + (shared_transpose_floats[l] + a - 1) / a * a;
        return at;
    }();

    /// The shared copies (shares_transpose), each with its layer's function that remakes it in the
    /// fused pass.
    static constexpr auto shared_copies = [] {
        constexpr std::size_t count = std::ranges::count_if(shared_transpose_floats, [](std::size_t f) { return f > 0; });
        std::array<shared_copy, count> copies{};
        std::size_t k = 0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ([&] {
                if constexpr (shares_transpose<I>())
                    copies[k++] = {I, layer<I>::template weight<0>::offset, shared_transpose_at[I],
                                   &ops<I>::template remake_shared_copy<layer<I>>};
            }(),
             ...);
        }(std::make_index_sequence<layers>{});
        return copies;
    }();

    /// True when the only gradient that backward adds into (rather than writes) is a table of the first
    /// layer indexed by its integer inputs (an Embedding's): a micro-batch's arena is then +0 outside
    /// the rows of its own ids, so the fused pass sums and clears only the rows that some micro-batch
    /// marked (a few thousand of a 30,982-row table, instead of every arena's whole table each step).
    static constexpr bool marked_table = [] {
        if constexpr (accumulating_ranges.size() == 1 && layer<0>::weight_count > 0)
            return accumulating_ranges[0].first == layer<0>::param_offset && std::is_integral_v<input_type>;
        else
            return false;
    }();
    static constexpr table_span table = [] {
        if constexpr (marked_table) {
            using T = typename layer<0>::template weight<0>;
            return table_span{T::offset, T::shape::dims[0], T::shape::dims[1]};
        } else {
            return table_span{0, 0, 1};
        }
    }();
    /// The gradient buffer as the fused reduce (distribute::reduce_and_update) sees it.
    static constexpr tpudsl::gradient_layout gradient_layout{
        Model::param_buffer_size, deferred_ranges, accumulating_ranges, marked_table, table, moving_ranges};

    /// One micro-batch of a step, for forward_micro_batches and backward_micro_batches.
    struct micro_batch {
        const input_type* x = nullptr;
        float* ws = nullptr;
        std::size_t n = 0;
        std::size_t first = 0;     ///< its first sample's index in the step (first_sample)
        float* grads = nullptr;    ///< its gradient arena
    };

    [[nodiscard]] static float*
    activation(float* ws, std::size_t cap, std::size_t l) noexcept
    {
        const plan_node& node = plan.nodes[l];
        return ws + (node.activation_one_sample ? cap * plan.per_sample + node.activation : cap * node.activation);
    }
    [[nodiscard]] static float*
    scratch(float* ws, std::size_t cap, std::size_t l) noexcept
    {
        const plan_node& node = plan.nodes[l];
        return ws + (node.scratch_one_sample ? cap * plan.per_sample + node.scratch : cap * node.scratch);
    }
    [[nodiscard]] static float*
    delta(float* ws, std::size_t cap, std::size_t which) noexcept
    {
        return ws + cap * (plan.delta_offset + which * plan.delta_stride);
    }
    /// Layer I's input: the model's input x for the first layer, the output of the layer below otherwise.
    template <std::size_t I>
    [[nodiscard]] static auto
    input(const input_type* x, float* ws, std::size_t cap) noexcept
    {
        if constexpr (I == 0)
            return x;
        else
            return static_cast<const float*>(activation(ws, cap, I - 1));
    }
    /// Where layer I writes its input's gradient: `input_grad` (null or the caller's) for the first
    /// layer, the delta that holds the layer below's output gradient otherwise.
    template <std::size_t I>
    [[nodiscard]] static float*
    input_gradient(float* ws, std::size_t cap, float* input_grad) noexcept
    {
        if constexpr (I == 0)
            return input_grad;
        else
            return delta(ws, cap, plan.nodes[I - 1].gradient_buffer);
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
    /// The last layer's logits (only when softmax_output), (n, output_size): where its ops' `logits`
    /// says (a convolution's follow its im2col rows), else at the start of its scratch (Dense,
    /// Activation, TimeDistributed).
    [[nodiscard]] static float*
    logits(float* ws, std::size_t cap, std::size_t n) noexcept
    {
        using last = ops<layers - 1>;
        float* s = scratch(ws, cap, layers - 1);
        if constexpr (requires { last::template logits<layer<layers - 1>>(s, n); })
            return last::template logits<layer<layers - 1>>(s, n);
        else
            return s;
    }

    /// Forward pass of n <= cap samples x (n, input_size) into the workspace.
    static void
    forward(const float* params, const input_type* x, float* ws, std::size_t cap, std::size_t n,
            const step_context& ctx) noexcept
    {
        forward_below<layers>(params, x, ws, cap, n, ctx);
    }

    /// Backward pass after `forward` and after the loss filled loss_gradient(): adds every weight's
    /// gradient to `grads` (a buffer in the parameter layout). `input_grad`, when not null, receives
    /// dL/dx (float inputs only; the workspace then needs workspace_floats(cap, true)). `logit_grad`: the loss gradient is with respect to the logits.
    /// `defer_kernels`: the deferred kernels' gradients are left to the fused pass (their ranges of
    /// `grads` are not written). A deferred Dense's output block holds its dZ afterwards.
    static void
    backward(const float* params, const input_type* x, float* ws, std::size_t cap, std::size_t n, float* grads,
             bool logit_grad, float* input_grad = nullptr, bool defer_kernels = false) noexcept
    {
        backward_below<layers>(params, x, ws, cap, n, grads, logit_grad, input_grad, defer_kernels);
    }

    /// `forward` on several micro-batches of one replica (models with rows_from < layers): the layers
    /// below rows_from micro-batch by micro-batch, then the others layer by layer. Micro-batch p's
    /// workspace gets the bits `forward` gives it alone with ctx.first_sample = batches[p].first. Parts
    /// without samples are skipped.
    static void
    forward_micro_batches(const float* params, const micro_batch* batches, std::size_t count, std::size_t cap,
                  const step_context& ctx) noexcept
    {
        static_assert(rows_from < layers, "graph::forward_micro_batches: no row layers to run together (rows_from)");
        if constexpr (rows_from > 0) {
            step_context c = ctx;
            for (std::size_t p = 0; p < count; ++p)
                if (batches[p].n > 0) {
                    c.first_sample = batches[p].first;
                    forward_below<rows_from>(params, batches[p].x, batches[p].ws, cap, batches[p].n, c);
                }
        }
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (forward_layer_micro_batches<rows_from + I>(params, batches, count, cap, ctx), ...);
        }(std::make_index_sequence<layers - rows_from>{});
    }

    /// `backward` (kernels deferred or not, no input gradient) on the batches after forward_micro_batches and their
    /// losses: from the top down to rows_from layer by layer, then micro-batch by micro-batch; each
    /// micro-batch's gradients into batches[p].grads, the bits of `backward` on each micro-batch alone.
    static void
    backward_micro_batches(const float* params, const micro_batch* batches, std::size_t count, std::size_t cap, bool logit_grad,
                   bool defer_kernels) noexcept
    {
        static_assert(rows_from < layers, "graph::backward_micro_batches: no row layers to run together (rows_from)");
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (backward_layer_micro_batches<layers - 1 - I>(params, batches, count, cap, logit_grad, defer_kernels), ...);
        }(std::make_index_sequence<layers - rows_from>{});
        if constexpr (rows_from > 0)
            for (std::size_t p = 0; p < count; ++p)
                if (batches[p].n > 0)
                    backward_below<rows_from>(params, batches[p].x, batches[p].ws, cap, batches[p].n, batches[p].grads,
                                              logit_grad, nullptr, defer_kernels);
    }

private:
    /// `forward` through layers [0, Top): the whole model, or the layers under rows_from.
    template <std::size_t Top>
    static void
    forward_below(const float* params, const input_type* x, float* ws, std::size_t cap, std::size_t n,
                  const step_context& ctx) noexcept
    {
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (forward_layer<I>(params, x, ws, cap, n, ctx), ...);
        }(std::make_index_sequence<Top>{});
    }

    /// `backward` through layers Top - 1 down to 0, after the layers above have left dL/d(output of
    /// Top - 1) in its delta.
    template <std::size_t Top>
    static void
    backward_below(const float* params, const input_type* x, float* ws, std::size_t cap, std::size_t n, float* grads,
                   bool logit_grad, float* input_grad, bool defer_kernels) noexcept
    {
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (backward_layer<Top - 1 - I>(params, x, ws, cap, n, grads, logit_grad, input_grad, defer_kernels), ...);
        }(std::make_index_sequence<Top>{});
    }

    /// Micro-batches a Dense passes to one call of its rows kernel: a replica's micro-batches (8 at most with
    /// the default strategies); more are taken in groups.
    static constexpr std::size_t rows_group = 16;

    template <std::size_t I>
    static void
    forward_layer_micro_batches(const float* params, const micro_batch* batches, std::size_t count, std::size_t cap,
                        const step_context& ctx) noexcept
    {
        if constexpr (spec<I>::defers_kernel_gradient) {
            row_block blocks[rows_group];
            float* logits[rows_group];
            for (std::size_t p0 = 0; p0 < count; p0 += rows_group) {
                std::size_t g = 0;
                for (std::size_t p = p0; p < std::min(count, p0 + rows_group); ++p) {
                    if (batches[p].n == 0)
                        continue;
                    blocks[g] = {input<I>(batches[p].x, batches[p].ws, cap), activation(batches[p].ws, cap, I), batches[p].n};
                    logits[g++] = scratch(batches[p].ws, cap, I);
                }
                ops<I>::template forward_rows<layer<I>>(params, blocks, logits, g, ctx);
            }
        } else {
            step_context c = ctx;
            for (std::size_t p = 0; p < count; ++p)
                if (batches[p].n > 0) {
                    c.first_sample = batches[p].first;
                    forward_layer<I>(params, batches[p].x, batches[p].ws, cap, batches[p].n, c);
                }
        }
    }

    template <std::size_t I>
    static void
    backward_layer_micro_batches(const float* params, const micro_batch* batches, std::size_t count, std::size_t cap, bool logit_grad,
                         bool defer_kernels) noexcept
    {
        if constexpr (spec<I>::defers_kernel_gradient) {
            // Each micro-batch as `backward` runs it without dX (act', the bias' sums, the kernel's gradient
            // unless deferred), then dX of all the batches through one pass over W^T.
            const bool fused = logit_grad && I == layers - 1;
            for (std::size_t p = 0; p < count; ++p) {
                if (batches[p].n == 0)
                    continue;
                float* ws = batches[p].ws;
                float* dy = delta(ws, cap, plan.nodes[I].gradient_buffer);
                float* dz = deferred_kernel<I>() ? activation(ws, cap, I) : dy;
                ops<I>::template backward_keeping<layer<I>>(params, input<I>(batches[p].x, ws, cap), activation(ws, cap, I),
                                                            dy, dz, nullptr,
                                                            batches[p].grads, batches[p].n, fused,
                                                            !(deferred_kernel<I>() && defer_kernels));
            }
            if constexpr (I > 0) {
                row_block blocks[rows_group];
                for (std::size_t p0 = 0; p0 < count; p0 += rows_group) {
                    std::size_t g = 0;
                    for (std::size_t p = p0; p < std::min(count, p0 + rows_group); ++p) {
                        if (batches[p].n == 0)
                            continue;
                        float* ws = batches[p].ws;
                        float* dz =
                            deferred_kernel<I>() ? activation(ws, cap, I) : delta(ws, cap, plan.nodes[I].gradient_buffer);
                        blocks[g++] = {dz, input_gradient<I>(ws, cap, nullptr), batches[p].n};
                    }
                    ops<I>::template input_gradient_rows<layer<I>>(params, blocks, g);
                }
            }
        } else {
            for (std::size_t p = 0; p < count; ++p)
                if (batches[p].n > 0)
                    backward_layer<I>(params, batches[p].x, batches[p].ws, cap, batches[p].n, batches[p].grads, logit_grad,
                                      nullptr, defer_kernels);
        }
    }

private:
    template <std::size_t I>
    static void
    forward_layer(const float* params, const input_type* x, float* ws, std::size_t cap, std::size_t n,
                  const step_context& ctx) noexcept
    {
        constexpr node_kind kind = plan.nodes[I].kind;
        float* y = activation(ws, cap, I);
        if constexpr (kind == node_kind::fused_pool || kind == node_kind::alias) {
            return;   // the convolution below ran this pooling; an alias's output is its input
        } else if constexpr (kind == node_kind::fused_conv) {
            // y holds one sample's convolution output at a time; the pooling's block gets the rest.
            conv_pool<I>::forward(params + layer<I>::template weight<0>::offset,
                                  params + layer<I>::template weight<1>::offset, input<I>(x, ws, cap), y,
                                  scratch(ws, cap, I), activation(ws, cap, I + 1), scratch(ws, cap, I + 1), n);
        } else {
            ops<I>::template forward<layer<I>>(params, input<I>(x, ws, cap), y, scratch(ws, cap, I), n, ctx);
        }
    }

    template <std::size_t I>
    static void
    backward_layer(const float* params, const input_type* x, float* ws, std::size_t cap, std::size_t n,
                   float* grads, bool logit_grad, float* input_grad, bool defer_kernels) noexcept
    {
        constexpr plan_node node = plan.nodes[I];
        float* dy = delta(ws, cap, node.gradient_buffer);
        float* dx = input_gradient<I>(ws, cap, input_grad);
        const bool fused = logit_grad && I == layers - 1;
        if constexpr (node.kind == node_kind::fused_pool || node.kind == node_kind::alias) {
            return;   // the convolution below takes this pooling's gradient; an alias's is its input's
        } else if constexpr (node.kind == node_kind::fused_conv) {
            // dy: the pooling's gradient; dx shares its buffer (conv_pool_pair orders the samples for it).
            float* pooled_dy = delta(ws, cap, plan.nodes[I + 1].gradient_buffer);
            auto run = [&](const auto& pooled) {
                conv_pool<I>::backward(params + layer<I>::template weight<0>::offset, input<I>(x, ws, cap),
                                       activation(ws, cap, I + 1), pooled, dx,
                                       grads + layer<I>::template weight<0>::offset,
                                       grads + layer<I>::template weight<1>::offset, scratch(ws, cap, I),
                                       activation(ws, cap, I), scratch(ws, cap, I + 1), n);
            };
            if constexpr (constexpr std::size_t D = node.dense_above; D < layers) {
                // The pooled gradient of a few samples at a time: the input gradient of the layer above
                // (its dZ in its output block), each row as its own backward computes it, into a group
                // buffer that stays in cache.
                constexpr std::size_t U = layer<D>::output_shape::size;
                const float* dz = activation(ws, cap, D);
                float* group = conv_pool<I>::group_buffer(I);
                run([=](std::size_t s0, std::size_t count) {
                    ops<D>::template input_gradient_of<layer<D>>(params, dz + s0 * U, count, group);
                    return group;
                });
            } else {
                run(tpudsl::detail::dy_in_place{pooled_dy, layer<I + 1>::output_shape::size});
            }
        } else if constexpr (node.deferred_kernel) {
            if constexpr (node.dx_left_to_pair)
                dx = nullptr;   // the fused pair below computes it from dZ as it needs it
            float* y = activation(ws, cap, I);   // dZ replaces the output: the fused pass reads it there
            ops<I>::template backward_keeping<layer<I>>(params, input<I>(x, ws, cap), y, dy, y, dx, grads, n, fused,
                                                        !defer_kernels);
        } else {
            ops<I>::template backward<layer<I>>(params, input<I>(x, ws, cap), activation(ws, cap, I), dy, dx, grads,
                                                scratch(ws, cap, I), n, fused);
        }
    }
};

} // namespace tpudsl::ops

#endif // !TPUDSL_OPS_GRAPH_HPP
