/// @file Defines graph<Model, true>: a Functional model's (or a struct deriving from one) forward and
/// backward pass over one replica's workspace (ops/graph.hpp runs a Sequential's chain). Forward runs
/// the layers in declaration order, each reading its sources' output blocks (or the model's input).
/// Backward runs them in reverse: each layer's output gradient is complete when its turn comes, since
/// every consumer comes after it in forward order. A tensor read by several layers (a fan-out) gets
/// the sum of their input gradients: the consumer whose backward runs first writes it, each later one
/// writes into a temporary block, then adds it, in a fixed order, so the sum has the same bits on every
/// run and every strategy. A convolution whose one reader is a max pooling runs fused with it (and with
/// the activation after it, for a Linear one), and a Dense leaves its kernel gradient to the fused
/// pass, as in a Sequential (the rules: pooled_by, absorbs, deferred). Nothing here allocates.
#ifndef TPUDSL_OPS_NODE_GRAPH_HPP
#define TPUDSL_OPS_NODE_GRAPH_HPP

#include <tpudsl/core/gradient_layout.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/kernels/scratch.hpp>
#include <tpudsl/layers/detail/conv_pool_pair.hpp>
#include <tpudsl/layers/fused_steps.hpp>
#include <tpudsl/layers/layer_concepts.hpp>
#include <tpudsl/layers/merge.hpp>
#include <tpudsl/layers/merge_ops.hpp>
#include <tpudsl/layers/step_context.hpp>
#include <tpudsl/model/graph_model.hpp>
#include <tpudsl/ops/graph.hpp>
#include <tpudsl/ops/memory_plan.hpp>
#include <tpudsl/ops/weight_ranges.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace tpudsl::ops {

/// Where a graph's blocks lie in a replica's workspace: per layer its output, its scratch and its
/// output's gradient ((cap, size) blocks at per-sample offsets times the capacity), and per edge whether
/// its input gradient is written in place or in a temporary that is then added. The blocks share memory
/// where their lifetimes allow (ops/memory_plan.hpp): per_sample is the planned size, naive_per_sample
/// what one block each would take.
template <std::size_t L, std::size_t E, std::size_t K>
struct node_plan {
    std::array<std::size_t, L> activation{}, scratch{}, gradient{};
    /// A fused convolution's one-sample blocks (its output, and its input gradient's scratch when its
    /// pair keeps one sample's): offsets in the one-sample region after the per-sample blocks.
    std::array<std::size_t, L> one_sample_activation{}, one_sample_scratch{};
    std::array<bool, L> activation_one_sample{}, scratch_one_sample{};
    std::array<std::size_t, K> input{};   // a packed row's inputs, each unpacked to a block of its own
    std::array<bool, E> direct{};
    std::array<std::size_t, E> temporary{};
    std::size_t per_sample = 0;
    std::size_t naive_per_sample = 0;
    std::size_t one_sample = 0;   ///< floats of the one-sample region
};

/// The one layer of a Functional `Model` that reads layer l's output (through one edge), or the layer
/// count when none or several do.
template <class Model>
[[nodiscard]] constexpr std::size_t
only_reader(std::size_t l) noexcept
{
    std::size_t readers = 0, reader = Model::layer_count;
    for (std::size_t c = l + 1; c < Model::layer_count; ++c)
        for (std::size_t e = Model::first_edge[c]; e < Model::first_edge[c + 1]; ++e)
            if (Model::edges[e].layer == l) {
                ++readers;
                reader = c;
            }
    return readers == 1 ? reader : Model::layer_count;
}

template <class Model>
struct graph<Model, true> {
    using model = Model;
    /// What a step reads: the Input's samples, or, for several inputs, packed rows (model::packed_inputs).
    using input_type = typename model::input_type;
    static constexpr std::size_t layers = model::layer_count;
    static constexpr std::size_t input_size = model::input_shape::size;
    static constexpr std::size_t output_size = model::output_shape::size;
    static constexpr std::size_t output_layer = model::output_layers[0];
    static constexpr std::size_t edge_count = model::edge_count;
    static constexpr std::size_t inputs = model::input_count;
    /// The outputs ("heads"), each with a loss of its own when there are several.
    static constexpr std::size_t heads = model::output_count;
    static constexpr bool packed_inputs = model::packed_inputs;

    /// Per layer: the output it is (its head), or heads when it is none.
    static constexpr std::array<std::size_t, layers> head_of = [] {
        std::array<std::size_t, layers> h{};
        h.fill(heads);
        for (std::size_t k = heads; k-- > 0;)
            h[model::output_layers[k]] = k;
        return h;
    }();

    template <std::size_t I>
    using layer = typename model::template layer<I>;
    template <std::size_t I>
    using spec = typename layer<I>::spec;
    template <std::size_t I>
    static constexpr bool merges = tpudsl::detail::MergeSpec<spec<I>>;

    /// Keras' layer reuse: the layer whose weights layer I uses (itself, but for a Shared node), how many
    /// layers use each layer's weights and the last of them (the first whose backward runs).
    template <std::size_t I>
    static constexpr std::size_t root = model::layer_weights_of[I];
    struct sharing {
        std::array<std::size_t, layers> uses{}, last{};
        std::size_t gradient_floats = 0;   // the largest shared layer's weights: a use's gradients before they add up
    };
    static constexpr sharing shares = [] {
        sharing s;
        for (std::size_t l = 0; l < layers; ++l) {
            ++s.uses[model::layer_weights_of[l]];
            s.last[model::layer_weights_of[l]] = l;
        }
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((s.gradient_floats = s.uses[I] > 1 ? std::max(s.gradient_floats, aligned_floats(layer<I>::param_end -
                                                                                          layer<I>::param_offset))
                                                : s.gradient_floats),
             ...);
        }(std::make_index_sequence<layers>{});
        return s;
    }();
    /// True when layer I's weights are used by another layer too.
    template <std::size_t I>
    static constexpr bool shared = shares.uses[root<I>] > 1;
    /// rebased: layer I's ops run bound from index 0 and offset 0 (its spec is position_independent and
    /// defers no kernel gradient), one copy of code per spec and shape. from_place: layer I is handed its
    /// weights' place and runs bound from offset 0 (shared or rebased).
    template <std::size_t I>
    static constexpr bool rebased = spec<I>::position_independent && !spec<I>::defers_kernel_gradient;
    template <std::size_t I>
    static constexpr bool from_place = shared<I> || rebased<I>;

private:
    template <std::size_t I>
    static consteval auto
    bound_of() noexcept
    {
        if constexpr (requires { typename layer<I>::use; })
            return std::type_identity<typename layer<I>::use>{};
        else if constexpr (merges<I> && rebased<I>)
            return std::type_identity<tpudsl::detail::bound_merge<0, spec<I>, typename layer<I>::inputs, 0>>{};
        else if constexpr (!merges<I> && from_place<I>)
            return std::type_identity<bound_layer<rebased<I> ? 0 : I, spec<I>,
                                                  tpudsl::detail::tensor<typename layer<I>::input_shape,
                                                                         typename layer<I>::input_type>,
                                                  0>>{};
        else
            return std::type_identity<layer<I>>{};
    }

public:
    /// Layer I as its ops run it: the bound layer, or bound from 0 when from_place (see above).
    template <std::size_t I>
    using bound = typename decltype(bound_of<I>())::type;
private:
    template <std::size_t I>
    static consteval auto
    ops_of() noexcept
    {
        if constexpr (merges<I>)
            return std::type_identity<typename spec<I>::ops>{};
        else
            return std::type_identity<typename tpudsl::detail::ops_or_unusable<
                tpudsl::detail::ops_check<I, spec<I>, bound<I>>::value, spec<I>>::type>{};
    }

public:
    /// Layer I's forward and backward (a merge's take arrays of pointers: layers/merge_ops.hpp).
    template <std::size_t I>
    using ops = typename decltype(ops_of<I>())::type;

    /// Per layer: true when it leaves its kernel gradient to the fused pass (its spec's
    /// defers_kernel_gradient), its dZ kept in its output block until then, as a Sequential's plan
    /// decides: not when its weights are shared (its uses' gradients would have to join one chain),
    /// nor when a layer that reads its output defers its own (that one's X would be overwritten).
    static constexpr std::array<bool, layers> deferred = [] {
        std::array<bool, layers> defers{}, d{};
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ([&] {
                if constexpr (!merges<I> && !shared<I> && spec<I>::defers_kernel_gradient &&
                              !std::is_same_v<ops<I>, tpudsl::detail::unusable_ops>)
                    defers[I] = tpudsl::detail::deferring_ops_checked<ops<I>, bound<I>>();
            }(),
             ...);
        }(std::make_index_sequence<layers>{});
        for (std::size_t l = layers; l-- > 0;) {
            bool feeds_deferred = false;
            for (std::size_t c = l + 1; c < layers; ++c)
                for (std::size_t e = model::first_edge[c]; e < model::first_edge[c + 1]; ++e)
                    feeds_deferred = feeds_deferred || (model::edges[e].layer == l && d[c]);
            d[l] = defers[l] && !feeds_deferred;
        }
        return d;
    }();

    /// Per layer: the max pooling it runs with, one sample at a time (detail::conv_pool_pair over its
    /// ops' core and the pooling's), or `layers`. Sequential's rule across a graph's edges: a
    /// convolution (convolution_rank) whose one reader is a max pooling of the same rank
    /// (max_pooling_rank), neither of them shared, the convolution not an output.
    static constexpr std::array<std::size_t, layers> pooled_by = [] {
        std::array<std::size_t, layers> conv{}, pool{}, by{};
        by.fill(layers);
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ([&] {
                if constexpr (!merges<I> && !shared<I>) {
                    conv[I] = spec<I>::convolution_rank;
                    pool[I] = spec<I>::max_pooling_rank;
                }
            }(),
             ...);
        }(std::make_index_sequence<layers>{});
        for (std::size_t l = 0; l < layers; ++l) {
            if (conv[l] == 0 || head_of[l] < heads)
                continue;
            const std::size_t reader = only_reader<model>(l);
            if (reader < layers && pool[reader] == conv[l] &&
                model::first_edge[reader + 1] - model::first_edge[reader] == 1)
                by[l] = reader;
        }
        return by;
    }();
    /// True when layer I is a convolution fused with its pooling; when it is that pooling (no pass of its own).
    template <std::size_t I>
    static constexpr bool fused_conv = pooled_by[I] < layers;
    static constexpr std::array<bool, layers> fused_pool = [] {
        std::array<bool, layers> f{};
        for (std::size_t l = 0; l < layers; ++l)
            if (pooled_by[l] < layers)
                f[pooled_by[l]] = true;
        return f;
    }();

    /// Per fused convolution: the activation its pair applies in its pooling's place, or `layers`. A
    /// Linear convolution's pooling, not an output, whose one reader is a layer with an
    /// absorbable_activation (element-wise and non-decreasing: act(max z) = max act(z)), neither shared
    /// nor an output. That layer has no pass of its own: its output and its gradient are the pooling's.
    static constexpr std::array<std::size_t, layers> absorbs = [] {
        std::array<bool, layers> linear{}, absorbable{};
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ([&] {
                if constexpr (!merges<I> && !shared<I>) {
                    if constexpr (requires { typename spec<I>::activation; })
                        linear[I] = std::is_same_v<typename spec<I>::activation, Linear>;
                    absorbable[I] = !std::is_void_v<typename spec<I>::absorbable_activation>;
                }
            }(),
             ...);
        }(std::make_index_sequence<layers>{});
        std::array<std::size_t, layers> by{};
        by.fill(layers);
        for (std::size_t l = 0; l < layers; ++l) {
            const std::size_t j = pooled_by[l];
            if (j == layers || !linear[l] || head_of[j] < heads)
                continue;
            const std::size_t reader = only_reader<model>(j);
            if (reader < layers && absorbable[reader] && head_of[reader] == heads)
                by[l] = reader;
        }
        return by;
    }();
    /// Per layer: the layer whose blocks it uses (an absorbed activation: its pooling's), or itself.
    static constexpr std::array<std::size_t, layers> blocks_of = [] {
        std::array<std::size_t, layers> b{};
        for (std::size_t l = 0; l < layers; ++l)
            b[l] = l;
        for (std::size_t l = 0; l < layers; ++l)
            if (absorbs[l] < layers)
                b[absorbs[l]] = pooled_by[l];
        return b;
    }();
    /// True when layer I is an activation its fused pair below applies (no pass of its own).
    template <std::size_t I>
    static constexpr bool absorbed = blocks_of[I] != I;

private:
    template <std::size_t I>
    static consteval auto
    pair_of() noexcept
    {
        if constexpr (fused_conv<I>) {
            using C = typename ops<I>::template core<bound<I>>;
            using P = typename ops<pooled_by[I]>::template core<bound<pooled_by[I]>>;
            if constexpr (absorbs[I] < layers)
                return std::type_identity<tpudsl::detail::conv_pool_pair<
                    tpudsl::detail::conv_core<C::geometry, C::filters, typename spec<absorbs[I]>::absorbable_activation>,
                    P>>{};
            else
                return std::type_identity<tpudsl::detail::conv_pool_pair<C, P>>{};
        } else {
            return std::type_identity<void>{};
        }
    }

public:
    /// The fused convolution and pooling of layer I (fused_conv<I>).
    template <std::size_t I>
    using conv_pool = typename decltype(pair_of<I>())::type;

private:
    /// The floats per sample of the tensor that edge e reads.
    static constexpr std::array<std::size_t, edge_count> edge_sizes = [] {
        std::array<std::size_t, edge_count> s{};
        std::array<std::size_t, layers> out{};
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((out[I] = layer<I>::output_shape::size), ...);
        }(std::make_index_sequence<layers>{});
        for (std::size_t e = 0; e < edge_count; ++e)
            s[e] = model::edges[e].layer != tpudsl::detail::no_node ? out[model::edges[e].layer]
                                                                    : model::input_sizes[model::edges[e].input];
        return s;
    }();

public:
    /// Every block's place, as data. A step's timeline has 2L steps, layer l's forward at l and its
    /// backward at 2L - 1 - l. A layer's output and scratch live from its forward to its backward (its
    /// consumers' backward passes come before its own); its output's gradient from the backward of
    /// its last consumer (which writes it; the loss, for the output) to its own; an edge's temporary
    /// during its consumer's backward only. Gradients and temporaries of different times share memory.
    /// A deferred layer's output (its dZ after its backward) and its input live to the step's end: the
    /// fused pass reads them. A fused convolution keeps its output (and its input gradient's scratch,
    /// when its pair says so) one sample at a time, in the one-sample region, and has no gradient block;
    /// its pooling's blocks live until the pair's backward, at the convolution's turn.
    static constexpr node_plan<layers, edge_count, inputs> plan = [] {
        node_plan<layers, edge_count, inputs> p;
        // In backward order, the first edge to reach a tensor writes its gradient; the others add.
        std::array<bool, layers> written{};
        for (const std::size_t o : model::output_layers)
            written[o] = true;   // the losses wrote the outputs' gradients
        bool input_written = false;
        std::array<std::size_t, layers> last_consumer{};
        for (std::size_t l = layers; l-- > 0;)
            for (std::size_t e = model::first_edge[l]; e < model::first_edge[l + 1]; ++e) {
                const std::size_t src = model::edges[e].layer;
                bool& w = src != tpudsl::detail::no_node ? written[src] : input_written;
                p.direct[e] = !w;
                w = true;
                if (src != tpudsl::detail::no_node)
                    last_consumer[src] = std::max(last_consumer[src], l);
            }
        constexpr std::size_t steps = 2 * layers;
        std::array<block_request, 3 * layers + edge_count + (packed_inputs ? inputs : 0)> blocks{};
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((blocks[3 * I] = {aligned_floats(layer<I>::output_shape::size), I, steps - 1 - I},
              blocks[3 * I + 1] = {aligned_floats(tpudsl::detail::kept_scratch_size<ops<I>, bound<I>>()), I,
                                   steps - 1 - I},
              blocks[3 * I + 2] = {aligned_floats(layer<I>::output_shape::size),
                                   std::min(head_of[I] < heads ? layers : steps,
                                            last_consumer[I] > I ? steps - 1 - last_consumer[I] : steps),
                                   steps - 1 - I}),
             ...);
        }(std::make_index_sequence<layers>{});
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ([&] {
                if constexpr (fused_conv<I>) {
                    constexpr std::size_t j = pooled_by[I];
                    p.activation_one_sample[I] = true;
                    p.one_sample_activation[I] = p.one_sample;
                    p.one_sample += aligned_floats(layer<I>::output_shape::size);
                    if constexpr (conv_pool<I>::one_sample_scratch) {
                        blocks[3 * I + 1].size = 0;
                        p.scratch_one_sample[I] = true;
                        p.one_sample_scratch[I] = p.one_sample;
                        p.one_sample += aligned_floats(conv_pool<I>::dx_scratch);
                    }
                    blocks[3 * I].size = 0;
                    blocks[3 * I + 2].size = 0;
                    for (std::size_t b = 3 * j; b < 3 * j + 3; ++b)
                        blocks[b].last = std::max(blocks[b].last, steps - 1 - I);
                    if constexpr (constexpr std::size_t a = absorbs[I]; a < layers) {
                        // The activation's output is the pooling's block, its gradient the pooling's
                        // gradient block, from the backward of the activation's last reader on.
                        blocks[3 * j + 2].first = std::min(blocks[3 * j + 2].first, blocks[3 * a + 2].first);
                        for (std::size_t b = 3 * a; b < 3 * a + 3; ++b)
                            blocks[b].size = 0;
                    }
                }
            }(),
             ...);
        }(std::make_index_sequence<layers>{});
        for (std::size_t l = 0; l < layers; ++l)
            if (deferred[l]) {
                blocks[3 * l].last = steps - 1;
                if (const std::size_t src = model::edges[model::first_edge[l]].layer; src != tpudsl::detail::no_node)
                    blocks[3 * blocks_of[src]].last = steps - 1;
            }
        for (std::size_t l = 0; l < layers; ++l)
            for (std::size_t e = model::first_edge[l]; e < model::first_edge[l + 1]; ++e)
                if (!p.direct[e])
                    blocks[3 * layers + e] = {aligned_floats(edge_sizes[e]), steps - 1 - l, steps - 1 - l};
        if constexpr (packed_inputs)   // the unpacked inputs live through the whole step
            for (std::size_t k = 0; k < inputs; ++k)
                blocks[3 * layers + edge_count + k] = {aligned_floats(model::input_sizes[k]), 0, steps - 1};
        const auto placed = place_blocks(blocks);
        if constexpr (packed_inputs)
            for (std::size_t k = 0; k < inputs; ++k)
                p.input[k] = placed.offset[3 * layers + edge_count + k];
        for (std::size_t l = 0; l < layers; ++l) {
            p.activation[l] = placed.offset[3 * blocks_of[l]];
            p.scratch[l] = placed.offset[3 * l + 1];
            p.gradient[l] = placed.offset[3 * blocks_of[l] + 2];
        }
        for (std::size_t e = 0; e < edge_count; ++e)
            p.temporary[e] = placed.offset[3 * layers + e];
        p.per_sample = placed.total;
        for (const block_request& b : blocks)
            p.naive_per_sample += b.size;
        return p;
    }();

    /// Floats a replica of capacity `cap` needs (the input gradient needs nothing more): the planned
    /// blocks, one block for a shared layer's gradients before they add up, then the one-sample region.
    [[nodiscard]] static constexpr std::size_t
    workspace_floats(std::size_t cap, bool = false) noexcept
    {
        return cap * plan.per_sample + shares.gradient_floats + plan.one_sample;
    }

    /// What a step's kernels ask of a thread's scratch: the largest request of every layer's (and of a
    /// deferred kernel gradient's, over the step's rows).
    [[nodiscard]] static constexpr kernels::scratch_sizes
    scratch_sizes(const kernels::scratch_rows& rows) noexcept
    {
        kernels::scratch_sizes s;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ([&] {
                if constexpr (fused_conv<I>)
                    s |= conv_pool<I>::kernel_scratch();
                else if constexpr (fused_pool[I] || absorbed<I>)
                    ;   // its pair asks for it
                else if constexpr (requires { ops<I>::template scratch<bound<I>>(rows); })
                    s |= ops<I>::template scratch<bound<I>>(rows);
                if constexpr (deferred[I])
                    s |= ops<I>::template deferred_scratch<bound<I>>(rows);
            }(),
             ...);
        }(std::make_index_sequence<layers>{});
        return s;
    }

    /// Floats each layer keeps in a thread's arena from one call to the next (a Dense's transposed kernel).
    static constexpr std::array<std::size_t, layers> kept_floats = []<std::size_t... I>(std::index_sequence<I...>) {
        return std::array<std::size_t, layers>{[] {
            if constexpr (fused_conv<I> || fused_pool[I] || absorbed<I>)
                return std::size_t{0};
            else if constexpr (requires { ops<I>::template kept_floats<bound<I>>; })
                return std::size_t{ops<I>::template kept_floats<bound<I>>};
            else
                return std::size_t{0};
        }()...};
    }(std::make_index_sequence<layers>{});

    /// True when the output layer ends in Softmax: the loss may then take the fused logits path; per
    /// head, for several outputs.
    static constexpr bool softmax_output = tpudsl::detail::has_softmax<spec<output_layer>>();
    static constexpr std::array<bool, heads> head_softmax = []<std::size_t... K>(std::index_sequence<K...>) {
        return std::array<bool, heads>{tpudsl::detail::has_softmax<spec<model::output_layers[K]>>()...};
    }(std::make_index_sequence<heads>{});
    /// A graph runs each micro-batch through the whole model (no layer-by-layer pass over micro-batches).
    static constexpr bool rows_only = false;
    static constexpr std::size_t rows_from = layers;

    static constexpr auto accumulating_ranges = weight_ranges<model>::accumulating;
    static constexpr auto moving_ranges = weight_ranges<model>::moving;
    /// The deferred kernels (`deferred`), in layer order: where each lies and its layer's function
    /// that computes its gradient in the fused pass.
    static constexpr auto deferred_kernels = [] {
        std::array<tpudsl::deferred_kernel, std::ranges::count(deferred, true)> kernels{};
        std::size_t k = 0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ([&] {
                if constexpr (deferred[I])
                    kernels[k++] = tpudsl::detail::deferred_kernel_of<ops<I>, bound<I>>();
            }(),
             ...);
        }(std::make_index_sequence<layers>{});
        return kernels;
    }();
    static constexpr auto deferred_ranges = tpudsl::detail::deferred_ranges_of(deferred_kernels);

    /// Where a micro-batch's operands of each deferred kernel lie after its backward (its input, and dZ
    /// in the layer's output block): out[k * stride] for deferred_kernels[k].
    static void
    deferred_operands_of(const input_type* x, float* ws, std::size_t cap, std::size_t n, deferred_operands* out,
                         std::size_t stride) noexcept
    {
        std::size_t k = 0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ([&] {
                if constexpr (deferred[I])
                    out[stride * k++] = {source<model::first_edge[I]>(x, ws, cap), activation(ws, cap, I), n};
            }(),
             ...);
        }(std::make_index_sequence<layers>{});
    }

    /// No rows table is marked in a graph.
    static constexpr bool marked_table = false;
    static constexpr table_span table{0, 0, 1};
    static constexpr tpudsl::gradient_layout gradient_layout{
        model::param_buffer_size, deferred_ranges, accumulating_ranges, marked_table, table, moving_ranges};
    /// No transposed kernel is shared by the threads: each makes its own in its first forward of a step.
    static constexpr std::array<std::size_t, layers> shared_transpose_floats{};
    static constexpr std::array<std::size_t, layers + 1> shared_transpose_at{};
    static constexpr std::array<shared_copy, 0> shared_copies{};

    /// One micro-batch of a step (a graph runs each micro-batch through the whole model).
    struct micro_batch {
        const input_type* x = nullptr;
        float* ws = nullptr;
        std::size_t n = 0;
        std::size_t first = 0;
        float* grads = nullptr;
    };

    [[nodiscard]] static float*
    activation(float* ws, std::size_t cap, std::size_t l) noexcept
    {
        if (plan.activation_one_sample[l])
            return one_sample_region(ws, cap) + plan.one_sample_activation[l];
        return ws + cap * plan.activation[l];
    }
    [[nodiscard]] static float*
    scratch(float* ws, std::size_t cap, std::size_t l) noexcept
    {
        if (plan.scratch_one_sample[l])
            return one_sample_region(ws, cap) + plan.one_sample_scratch[l];
        return ws + cap * plan.scratch[l];
    }
    /// Where the one-sample region starts: after the per-sample blocks and the shared gradients' block.
    [[nodiscard]] static float*
    one_sample_region(float* ws, std::size_t cap) noexcept
    {
        return ws + cap * plan.per_sample + shares.gradient_floats;
    }
    [[nodiscard]] static float*
    gradient(float* ws, std::size_t cap, std::size_t l) noexcept
    {
        return ws + cap * plan.gradient[l];
    }
    /// The model's output, (n, output_size).
    [[nodiscard]] static float*
    output(float* ws, std::size_t cap) noexcept
    {
        return activation(ws, cap, output_layer);
    }
    /// Where the loss writes its gradient, (n, output_size).
    [[nodiscard]] static float*
    loss_gradient(float* ws, std::size_t cap) noexcept
    {
        return gradient(ws, cap, output_layer);
    }
    /// The output layer's logits (only when softmax_output), as ops/graph.hpp finds them.
    [[nodiscard]] static float*
    logits(float* ws, std::size_t cap, std::size_t n) noexcept
    {
        return head_logits<0>(ws, cap, n);
    }

    /// Head H's output (n, model::output_sizes[H]), where its loss writes its gradient, and its logits
    /// (only when head_softmax[H]).
    template <std::size_t H>
    [[nodiscard]] static float*
    head_output(float* ws, std::size_t cap) noexcept
    {
        return activation(ws, cap, model::output_layers[H]);
    }
    template <std::size_t H>
    [[nodiscard]] static float*
    head_gradient(float* ws, std::size_t cap) noexcept
    {
        return gradient(ws, cap, model::output_layers[H]);
    }
    template <std::size_t H>
    [[nodiscard]] static float*
    head_logits(float* ws, std::size_t cap, std::size_t n) noexcept
    {
        constexpr std::size_t l = model::output_layers[H];
        float* s = scratch(ws, cap, l);
        if constexpr (requires { ops<l>::template logits<bound<l>>(s, n); })
            return ops<l>::template logits<bound<l>>(s, n);
        else
            return s;
    }

    /// Forward pass of n <= cap samples x (n, input_size) into the workspace (packed rows are unpacked
    /// first, each input to its block).
    static void
    forward(const float* params, const input_type* x, float* ws, std::size_t cap, std::size_t n,
            const step_context& ctx) noexcept
    {
        if constexpr (packed_inputs)
            unpack_inputs(x, ws, cap, n);
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (forward_layer<I>(params, x, ws, cap, n, ctx), ...);
        }(std::make_index_sequence<layers>{});
    }

    /// Backward pass after `forward` and after the losses filled their heads' gradients: every weight's
    /// gradient into `grads`; `input_grad`, when not null, receives dL/dx (one float input only).
    /// `logit_heads`: bit H set when head H's loss gradient is with respect to its logits (a bool: head
    /// 0's). `defer_kernels`: the deferred kernels' gradients are left to the fused pass (their ranges of
    /// `grads` are not written); a deferred layer's output block holds its dZ afterwards.
    static void
    backward(const float* params, const input_type* x, float* ws, std::size_t cap, std::size_t n, float* grads,
             unsigned logit_heads, float* input_grad = nullptr, bool defer_kernels = false) noexcept
    {
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (backward_layer<layers - 1 - I>(params, x, ws, cap, n, grads, logit_heads, input_grad, defer_kernels), ...);
        }(std::make_index_sequence<layers>{});
    }

private:
    /// Copies each input's part of n packed rows to its block, token ids as int32.
    static void
    unpack_inputs(const float* x, float* ws, std::size_t cap, std::size_t n) noexcept
    {
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            ([&] {
                using T = typename model::template input_at<K>::value_type;
                constexpr std::size_t size = model::input_sizes[K], at = model::input_offsets[K];
                // The block holds this input only, for the whole step: as int32 for token ids.
                T* __restrict to = reinterpret_cast<T*>(ws + cap * plan.input[K]);
                for (std::size_t s = 0; s < n; ++s)
                    for (std::size_t j = 0; j < size; ++j)
                        to[s * size + j] = static_cast<T>(x[s * input_size + at + j]);
            }(),
             ...);
        }(std::make_index_sequence<inputs>{});
    }

    /// What edge E reads: the model's input (its unpacked block), or a layer's output block.
    template <std::size_t E>
    [[nodiscard]] static auto
    source(const input_type* x, float* ws, std::size_t cap) noexcept
    {
        if constexpr (model::edges[E].layer == tpudsl::detail::no_node && packed_inputs) {
            constexpr std::size_t k = model::edges[E].input;
            using T = typename model::template input_at<k>::value_type;
            return static_cast<const T*>(reinterpret_cast<T*>(ws + cap * plan.input[k]));
        } else if constexpr (model::edges[E].layer == tpudsl::detail::no_node)
            return x;
        else
            return static_cast<const float*>(activation(ws, cap, model::edges[E].layer));
    }

    /// Where edge E's input gradient goes: its tensor's gradient block (or the caller's input_grad),
    /// or, when another consumer wrote it first, the edge's temporary.
    template <std::size_t E>
    [[nodiscard]] static float*
    target(float* ws, std::size_t cap, float* input_grad) noexcept
    {
        constexpr std::size_t src = model::edges[E].layer;
        if constexpr (src == tpudsl::detail::no_node && packed_inputs)
            return static_cast<float*>(nullptr);   // no input gradient through a packed row
        if constexpr (src == tpudsl::detail::no_node) {
            if (!input_grad)
                return nullptr;
        }
        if constexpr (!plan.direct[E])
            return ws + cap * plan.temporary[E];
        else if constexpr (src == tpudsl::detail::no_node)
            return input_grad;
        else
            return gradient(ws, cap, src);
    }

    /// Adds edge E's temporary into its tensor's gradient (after the consumer's backward).
    template <std::size_t E>
    static void
    add_temporary(float* ws, std::size_t cap, std::size_t n, float* input_grad) noexcept
    {
        if constexpr (!plan.direct[E] && !(packed_inputs && model::edges[E].layer == tpudsl::detail::no_node)) {
            constexpr std::size_t src = model::edges[E].layer;
            float* to = src == tpudsl::detail::no_node ? input_grad : gradient(ws, cap, src);
            if (!to)
                return;
            const float* __restrict from = ws + cap * plan.temporary[E];
            float* __restrict dst = to;
            for (std::size_t i = 0; i < n * edge_sizes[E]; ++i)
                dst[i] += from[i];
        }
    }

    /// Layer I's weights: the flat buffer, or, for a shared or rebased layer, its root's place in it.
    template <std::size_t I>
    [[nodiscard]] static const float*
    weights(const float* params) noexcept
    {
        if constexpr (from_place<I>)
            return params + layer<root<I>>::param_offset;
        else
            return params;
    }

    /// Adds a shared layer's gradients, written from `block` at the root's weights' place from 0, into
    /// `grads`, weight by weight (not the padding between them).
    template <std::size_t R>
    static void
    add_shared_gradient(const float* block, float* grads) noexcept
    {
        [&]<std::size_t... J>(std::index_sequence<J...>) {
            ([&] {
                using W = typename layer<R>::template weight<J>;
                const float* __restrict from = block + (W::offset - layer<R>::param_offset);
                float* __restrict to = grads + W::offset;
                for (std::size_t k = 0; k < W::size; ++k)
                    to[k] += from[k];
            }(),
             ...);
        }(std::make_index_sequence<layer<R>::weight_count>{});
    }

    template <std::size_t I>
    static void
    forward_layer(const float* params, const input_type* x, float* ws, std::size_t cap, std::size_t n,
                  const step_context& ctx) noexcept
    {
        constexpr std::size_t e0 = model::first_edge[I];
        float* y = activation(ws, cap, I);
        if constexpr (fused_pool[I] || absorbed<I>) {
            return;   // the convolution below ran this pooling (and this activation)
        } else if constexpr (fused_conv<I>) {
            // y holds one sample's convolution output at a time; the pooling's blocks get the rest.
            constexpr std::size_t j = pooled_by[I];
            conv_pool<I>::forward(params + layer<I>::template weight<0>::offset,
                                  params + layer<I>::template weight<1>::offset, source<e0>(x, ws, cap), y,
                                  scratch(ws, cap, I), activation(ws, cap, j), scratch(ws, cap, j), n);
        } else if constexpr (merges<I>) {
            [&]<std::size_t... K>(std::index_sequence<K...>) {
                const float* const xs[] = {source<e0 + K>(x, ws, cap)...};
                ops<I>::template forward<bound<I>>(weights<I>(params), xs, y, scratch(ws, cap, I), n, ctx);
            }(std::make_index_sequence<layer<I>::input_count>{});
        } else {
            ops<I>::template forward<bound<I>>(weights<I>(params), source<e0>(x, ws, cap), y, scratch(ws, cap, I), n,
                                               ctx);
        }
    }

    template <std::size_t I>
    static void
    backward_layer(const float* params, const input_type* x, float* ws, std::size_t cap, std::size_t n, float* grads,
                   unsigned logit_heads, float* input_grad, bool defer_kernels) noexcept
    {
        constexpr std::size_t e0 = model::first_edge[I], e1 = model::first_edge[I + 1];
        float* dy = gradient(ws, cap, I);
        if constexpr (fused_pool[I] || absorbed<I>) {
            return;   // the convolution below takes this pooling's (and this activation's) gradient
        } else if constexpr (fused_conv<I>) {
            // The pooling's gradient, complete now (its readers ran before), into the convolution's input.
            constexpr std::size_t j = pooled_by[I];
            conv_pool<I>::backward(params + layer<I>::template weight<0>::offset, source<e0>(x, ws, cap),
                                   activation(ws, cap, j),
                                   tpudsl::detail::dy_in_place{gradient(ws, cap, j), layer<j>::output_shape::size},
                                   target<e0>(ws, cap, input_grad), grads + layer<I>::template weight<0>::offset,
                                   grads + layer<I>::template weight<1>::offset, scratch(ws, cap, I),
                                   activation(ws, cap, I), scratch(ws, cap, j), n);
        } else if constexpr (merges<I>) {
            [&]<std::size_t... K>(std::index_sequence<K...>) {
                const float* const xs[] = {source<e0 + K>(x, ws, cap)...};
                float* const dxs[] = {target<e0 + K>(ws, cap, input_grad)...};
                ops<I>::template backward<bound<I>>(weights<I>(params), xs, activation(ws, cap, I), dy, dxs,
                                                    grads + (from_place<I> ? layer<I>::param_offset : 0), scratch(ws, cap, I), n);
            }(std::make_index_sequence<layer<I>::input_count>{});
        } else {
            bool fused = false;
            if constexpr (head_of[I] < heads)
                fused = ((logit_heads >> head_of[I]) & 1u) != 0;
            // A shared layer's last use (the first backward) and a layer that adds its gradients write
            // into the shared weights' gradients; the other uses write a block, then add it.
            constexpr bool via_block = shared<I> && !spec<I>::accumulates_gradient && I != shares.last[root<I>];
            float* g = grads;
            if constexpr (via_block)
                g = ws + cap * plan.per_sample;
            else if constexpr (from_place<I>)
                g = grads + layer<root<I>>::param_offset;
            if constexpr (deferred[I]) {
                float* y = activation(ws, cap, I);   // dZ replaces the output: the fused pass reads it there
                ops<I>::template backward_keeping<bound<I>>(params, source<e0>(x, ws, cap), y, dy, y,
                                                            target<e0>(ws, cap, input_grad), g, n, fused,
                                                            !defer_kernels);
            } else {
                ops<I>::template backward<bound<I>>(weights<I>(params), source<e0>(x, ws, cap), activation(ws, cap, I),
                                                    dy, target<e0>(ws, cap, input_grad), g, scratch(ws, cap, I), n,
                                                    fused);
            }
            if constexpr (via_block)
                add_shared_gradient<root<I>>(g, grads);
        }
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            (add_temporary<e0 + K>(ws, cap, n, input_grad), ...);
        }(std::make_index_sequence<e1 - e0>{});
    }
};

} // namespace tpudsl::ops

#endif // !TPUDSL_OPS_NODE_GRAPH_HPP
