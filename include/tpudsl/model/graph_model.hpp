/// @file Defines tpudsl::Functional, a functional model as a type: named nodes in data-flow order, each a
/// layer and the nodes it reads, as Keras' functional code writes them.
///
///     x = Conv2D(16, 3, padding="same")(inputs)         Node<"conv", Conv2D<16, 3, Linear, Same>, "image">
///     y = Add()([x, inputs])                            Node<"add", Add, "conv", "image">
///     model = keras.Model(inputs, y)                    Outputs<"add">
///
/// A node that names no source reads the node declared before it, so a chain inside a graph is written
/// as in a Sequential. Every shape, parameter count and weight offset is a constant of the type, as for
/// Sequential; a graph that cannot work (an unknown or later source, a merge of different shapes, a
/// node no output needs) fails to compile with one message naming the nodes.
#ifndef TPUDSL_MODEL_GRAPH_MODEL_HPP
#define TPUDSL_MODEL_GRAPH_MODEL_HPP

#include <tpudsl/core/input.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/detail/diagnostics.hpp>
#include <tpudsl/detail/type_list.hpp>
#include <tpudsl/layers/merge.hpp>
#include <tpudsl/model/graph_diagnostics.hpp>
#include <tpudsl/model/graph_fold.hpp>
#include <tpudsl/model/layout.hpp>
#include <tpudsl/model/sequential.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

namespace tpudsl {

/// One node of a Functional model: its name (Keras' layer name), its layer (or an `Input<Shape, T>`)
/// and the names of the nodes it reads, in order (a merge reads several). No source: the node
/// declared just before.
template <name_literal Name, class Spec, name_literal... Sources>
struct Node {
    static constexpr auto literal = Name;
    static constexpr std::string_view name = Name.view();
    using spec = Spec;
    static constexpr std::size_t source_count = sizeof...(Sources);
    static constexpr std::array<std::string_view, sizeof...(Sources)> sources{Sources.view()...};
    using source_literals = detail::type_list<detail::literal_of<Sources>...>;
};

/// Several nodes written as one, for a sub-graph used more than once: a template alias of a Block, its
/// node names made from its own (`Name + "_conv1"`), stands for the same layers at every use, each use
/// with weights of its own. A Block may hold Blocks; a Functional reads them as their nodes in order.
template <class... Nodes>
struct Block {};

/// Keras' layer reuse: the layer of node `Target` called again, on this node's input, with the same
/// weights (`Node<"enc_b", Shared<"enc">, "b">` is `enc(b)` in Keras). Its gradients add up with every
/// other use's; the summary shows the layer once, connected to each input it reads.
template <name_literal Target>
struct Shared {
    static constexpr auto literal = Target;
    static constexpr std::string_view target = Target.view();
};

/// The model's outputs, by node name, in Keras' order (`Model(inputs, [a, b])`). Without it, the
/// last node is the one output.
template <name_literal... Names>
struct Outputs {
    static constexpr std::array<std::string_view, sizeof...(Names)> names{Names.view()...};
    using literals = detail::type_list<detail::literal_of<Names>...>;
};

namespace detail {

template <class T>
struct is_node : std::false_type {};
template <name_literal N, class S, name_literal... Src>
struct is_node<Node<N, S, Src...>> : std::true_type {};
template <class T>
struct is_shared : std::false_type {};
template <name_literal T>
struct is_shared<Shared<T>> : std::true_type {};
template <class Spec>
[[nodiscard]] consteval std::string_view
shared_target() noexcept
{
    if constexpr (is_shared<Spec>::value)
        return Spec::target;
    else
        return {};
}
template <class T>
struct is_outputs : std::false_type {};
template <name_literal... N>
struct is_outputs<Outputs<N...>> : std::true_type {};

inline constexpr std::size_t no_node = static_cast<std::size_t>(-1);

/// The structure of a graph as data: names, sources resolved to node indices, outputs, reachability.
template <class NodeList, class OutputList>
struct graph_table;
template <class... N, class Out>
struct graph_table<type_list<N...>, Out> {
    static constexpr std::size_t count = sizeof...(N);
    static constexpr std::array<std::string_view, count> names{N::name...};
    static constexpr std::array<bool, count> inputs{is_input<typename N::spec>::value...};
    static constexpr std::array<bool, count> merges{MergeSpec<typename N::spec>...};
    static constexpr std::array<bool, count> shared{is_shared<typename N::spec>::value...};
    static constexpr std::array<std::string_view, count> shared_names{shared_target<typename N::spec>()...};
    static constexpr std::array<std::size_t, count> declared{N::source_count...};
    /// Edges per node: an Input has none, a node that names no source reads the one before.
    static constexpr std::array<std::size_t, count> edge_counts{
        (is_input<typename N::spec>::value ? 0 : std::max<std::size_t>(1, N::source_count))...};
    static constexpr std::array<std::size_t, count + 1> first_edge = [] {
        std::array<std::size_t, count + 1> f{};
        for (std::size_t i = 0; i < count; ++i)
            f[i + 1] = f[i] + edge_counts[i];
        return f;
    }();
    static constexpr std::size_t edge_total = first_edge[count];

    [[nodiscard]] static constexpr std::size_t
    find(std::string_view name) noexcept
    {
        for (std::size_t j = 0; j < count; ++j)
            if (names[j] == name)
                return j;
        return no_node;
    }

    /// Each edge's source node (no_node: a name no node has).
    static constexpr std::array<std::size_t, edge_total> edges = [] {
        std::array<std::size_t, edge_total> e{};
        std::size_t i = 0;
        (
            [&] {
                if (!inputs[i]) {
                    std::size_t at = first_edge[i];
                    if constexpr (N::source_count == 0)
                        e[at] = i == 0 ? no_node : i - 1;
                    else
                        for (std::string_view s : N::sources)
                            e[at++] = find(s);
                }
                ++i;
            }(),
            ...);
        return e;
    }();

    /// Per node, the node whose layer it uses: a Shared node's target (no_node: unknown), else itself.
    static constexpr std::array<std::size_t, count> targets = [] {
        std::array<std::size_t, count> t{};
        for (std::size_t i = 0; i < count; ++i)
            t[i] = shared[i] ? find(shared_names[i]) : i;
        return t;
    }();
    /// Per node, its layer index (the nodes before it that are not Inputs).
    static constexpr std::array<std::size_t, count> layer_of = [] {
        std::array<std::size_t, count> l{};
        std::size_t n = 0;
        for (std::size_t i = 0; i < count; ++i)
            l[i] = inputs[i] ? 0 : n++;
        return l;
    }();

    static constexpr std::size_t output_count = Out::names.size();
    static constexpr std::array<std::size_t, output_count> outputs = [] {
        std::array<std::size_t, output_count> o{};
        for (std::size_t k = 0; k < output_count; ++k)
            o[k] = find(Out::names[k]);
        return o;
    }();

    /// The first structural rule broken, in declaration order.
    static constexpr graph_verdict verdict = [] {
        if (!inputs[0])
            return graph_verdict{graph_rule::needs_input_first, 0, 0};
        for (std::size_t i = 0; i < count; ++i) {
            for (std::size_t j = 0; j < i; ++j)
                if (names[j] == names[i])
                    return graph_verdict{graph_rule::duplicate_name, i, 0};
            if (inputs[i] && declared[i] > 0)
                return graph_verdict{graph_rule::input_reads, i, 0};
            for (std::size_t k = 0; k < edge_counts[i]; ++k) {
                const std::size_t s = edges[first_edge[i] + k];
                if (s == no_node)
                    return graph_verdict{graph_rule::unknown_source, i, k};
                if (s >= i)
                    return graph_verdict{graph_rule::source_after, i, k};
            }
            if (!inputs[i] && !merges[i] && edge_counts[i] != 1)
                return graph_verdict{graph_rule::one_input_layer, i, 1};
            if (shared[i]) {
                const std::size_t t = targets[i];
                if (t == no_node)
                    return graph_verdict{graph_rule::unknown_shared, i, 0};
                if (t >= i)
                    return graph_verdict{graph_rule::shared_after, i, 0};
                if (inputs[t] || merges[t] || shared[t])
                    return graph_verdict{graph_rule::shared_not_layer, i, 0};
            }
        }
        for (std::size_t k = 0; k < output_count; ++k) {
            if (outputs[k] == no_node)
                return graph_verdict{graph_rule::unknown_output, 0, k};
            if (inputs[outputs[k]])
                return graph_verdict{graph_rule::output_is_input, outputs[k], k};
        }
        std::array<bool, count> needed{};
        for (std::size_t k = 0; k < output_count; ++k)
            needed[outputs[k]] = true;
        for (std::size_t i = count; i-- > 0;)
            if (needed[i])
                for (std::size_t k = 0; k < edge_counts[i]; ++k)
                    needed[edges[first_edge[i] + k]] = true;
        for (std::size_t i = 0; i < count; ++i)
            if (!needed[i])
                return graph_verdict{inputs[i] ? graph_rule::unused_input : graph_rule::dead_node, i, 0};
        return graph_verdict{};
    }();
    static constexpr bool valid = verdict.rule == graph_rule::ok;
};

/// Stands for a graph_table while a diagnostic is being reported: no node, so one mistake gives one error.
struct empty_graph_table {
    static constexpr std::size_t count = 0, edge_total = 0, output_count = 0;
    static constexpr std::array<std::string_view, 0> names{};
    static constexpr std::array<bool, 0> inputs{};
    static constexpr std::array<std::size_t, 1> first_edge{};
    static constexpr std::array<std::size_t, 0> edges{};
    static constexpr std::array<std::size_t, 0> outputs{};
    static constexpr std::array<std::size_t, 0> targets{};
    static constexpr std::array<std::size_t, 0> layer_of{};
};

/// The name literal of source `K` of node `I`, or of output `K` (for diagnostics).
template <class NodeList, std::size_t I, std::size_t K>
[[nodiscard]] consteval auto
source_literal() noexcept
{
    using Src = typename type_at_t<I, NodeList>::source_literals;
    if constexpr (K < Src::size)
        return type_at_t<K, Src>::value;
    else
        return name_literal("");
}

/// Emits the structural diagnostic (when the verdict is not ok).
template <class NodeList, class OutLiterals, class Table>
consteval bool
report_structure() noexcept
{
    constexpr graph_verdict v = Table::verdict;
    if constexpr (v.rule == graph_rule::ok) {
        return true;
    } else if constexpr (v.rule == graph_rule::unknown_output) {
        return sizeof(graph_error<v.rule, type_at_t<v.at, OutLiterals>::value, name_literal("")>) > 0;
    } else if constexpr (v.rule == graph_rule::unknown_shared || v.rule == graph_rule::shared_after ||
                         v.rule == graph_rule::shared_not_layer) {
        return sizeof(graph_error<v.rule, type_at_t<v.node, NodeList>::literal,
                                  type_at_t<v.node, NodeList>::spec::literal>) > 0;
    } else if constexpr (v.rule == graph_rule::unknown_source || v.rule == graph_rule::source_after) {
        return sizeof(graph_error<v.rule, type_at_t<v.node, NodeList>::literal, source_literal<NodeList, v.node, v.at>()>) > 0;
    } else {
        return sizeof(graph_error<v.rule, type_at_t<v.node, NodeList>::literal, name_literal("")>) > 0;
    }
}

/// Names the argument of a Functional that is not a Node (nor a last Outputs).
template <class Arg>
struct not_a_node_error : graph_diagnostic<std::is_void_v<Arg> ? graph_rule::ok : graph_rule::not_a_node> {};

template <class... Lists>
struct concat_lists {
    using type = type_list<>;
};
template <class... A>
struct concat_lists<type_list<A...>> {
    using type = type_list<A...>;
};
template <class... A, class... B, class... Rest>
struct concat_lists<type_list<A...>, type_list<B...>, Rest...> : concat_lists<type_list<A..., B...>, Rest...> {};

/// A Functional's argument as the nodes it stands for: a Block's, in order; anything else, itself.
template <class T>
struct flat_parts {
    using type = type_list<T>;
};
template <class... P>
struct flat_parts<Block<P...>> {
    using type = typename concat_lists<typename flat_parts<P>::type...>::type;
};

/// The nodes of a Functional's arguments (all but a last Outputs, Blocks expanded) and its outputs
/// (the last node if none).
template <class Flat>
struct graph_parts;
template <class... Parts>
struct graph_parts<type_list<Parts...>> {
    static constexpr bool has_outputs = is_outputs<type_at_t<sizeof...(Parts) - 1, type_list<Parts...>>>::value;
    static constexpr std::size_t node_count = sizeof...(Parts) - (has_outputs ? 1 : 0);
    using nodes = typename decltype([]<std::size_t... I>(std::index_sequence<I...>) {
        return std::type_identity<type_list<type_at_t<I, type_list<Parts...>>...>>{};
    }(std::make_index_sequence<node_count>{}))::type;
    struct last_node_output {
        static constexpr std::array<std::string_view, 1> names{
            type_at_t<node_count - 1, type_list<Parts...>>::name};
        using literals = type_list<literal_of<type_at_t<node_count - 1, type_list<Parts...>>::literal>>;
    };
    using outputs = std::conditional_t<has_outputs, type_at_t<sizeof...(Parts) - 1, type_list<Parts...>>,
                                       last_node_output>;
    static constexpr std::size_t not_a_node = [] {
        constexpr std::array<bool, sizeof...(Parts)> nodes{is_node<Parts>::value...};
        for (std::size_t i = 0; i < node_count; ++i)
            if (!nodes[i])
                return i;
        return no_node;
    }();
    /// The argument that is not a node, for the diagnostic.
    template <std::size_t I>
    using part = type_at_t<I, type_list<Parts...>>;
};

} // namespace detail

/// A functional model as a type, Keras' `Functional` (what `keras.Model(inputs, outputs)` makes):
/// `Functional<Node<"in", Input<...>>, Node<"a", Layer, "in">, ..., Outputs<"a">>`.
/// Nodes come in data-flow order (a node reads only nodes declared before it); `layer<I>` is the I-th
/// node that is not an Input, bound to what it reads, with the same constants as a Sequential's layer
/// (shapes, parameter counts, weight offsets in one flat aligned buffer). Keras' layer names are the
/// nodes' names.
template <class... Parts>
struct Functional {
private:
    static_assert(sizeof...(Parts) > 0, "tpudsl::Functional<Node<...>..., Outputs<...>>: requires nodes "
                                        "[TPUDSL_GRAPH_NOT_A_NODE]");
    using parts = detail::graph_parts<typename detail::concat_lists<typename detail::flat_parts<Parts>::type...>::type>;
    static constexpr bool nodes_ok = [] {
        if constexpr (parts::not_a_node != detail::no_node)
            return sizeof(detail::not_a_node_error<typename parts::template part<parts::not_a_node>>) == 0;
        else
            return true;
    }();
    using node_list = std::conditional_t<nodes_ok, typename parts::nodes, detail::type_list<>>;

    static consteval auto
    table_of() noexcept
    {
        if constexpr (nodes_ok)
            return std::type_identity<detail::graph_table<node_list, typename parts::outputs>>{};
        else
            return std::type_identity<void>{};
    }
    using table = typename decltype(table_of())::type;
    static constexpr bool structure_ok = [] {
        if constexpr (nodes_ok)
            return detail::report_structure<node_list, typename parts::outputs::literals, table>() && table::valid;
        else
            return false;
    }();
    static consteval auto
    fold_of() noexcept
    {
        if constexpr (structure_ok)
            return std::type_identity<
                detail::graph_fold<node_list, table>>{};
        else
            return std::type_identity<detail::chain<false, 0, 0, detail::invalid_tensor>>{};
    }
    using fold = typename decltype(fold_of())::type;
    using totals = detail::layer_totals<typename fold::layers>;

public:
    /// True when the graph and every layer in it fit (false only while a diagnostic is being reported).
    static constexpr bool valid = structure_ok && fold::valid;
    /// Marks the type as a graph (the runner and the summary read it).
    static constexpr bool functional = true;

    static constexpr std::size_t node_count = parts::node_count;
    static constexpr std::size_t layer_count = fold::layers::size;

    /// The I-th layer (a node that is not an Input), bound: `layer<I>::output_shape`, `::weight<J>`, ...
    template <std::size_t I>
    using layer = detail::type_at_t<I, typename fold::layers>;

    static constexpr std::size_t param_count = totals::param_count;
    static constexpr std::size_t trainable_param_count = totals::trainable_param_count;
    static constexpr std::size_t non_trainable_param_count = param_count - trainable_param_count;
    static constexpr std::size_t param_buffer_size = fold::param_end;

private:
    static consteval auto
    valid_table() noexcept
    {
        if constexpr (valid)
            return std::type_identity<table>{};
        else
            return std::type_identity<detail::empty_graph_table>{};
    }
    /// The graph's structure, or an empty one while a diagnostic is being reported.
    using graph = typename decltype(valid_table())::type;

public:
    /// Node by node, in declaration order: its name, whether it is an Input, and the nodes it reads
    /// ([node_first_source[i], node_first_source[i + 1]) of node_sources).
    static constexpr auto node_names = graph::names;
    static constexpr auto node_is_input = graph::inputs;
    static constexpr auto node_first_source = graph::first_edge;
    static constexpr auto node_sources = graph::edges;
    /// The outputs' nodes, in Outputs' order.
    static constexpr auto output_nodes = graph::outputs;
    static constexpr std::size_t output_count = graph::output_count;

    /// Node by node: its layer index, or its input slot for an Input node.
    static constexpr std::array<std::size_t, graph::count> node_slot = [] {
        std::array<std::size_t, graph::count> s{};
        std::size_t layers = 0, ins = 0;
        for (std::size_t i = 0; i < graph::count; ++i)
            s[i] = node_is_input[i] ? ins++ : layers++;
        return s;
    }();
    static constexpr std::size_t input_count = static_cast<std::size_t>(
        std::count(node_is_input.begin(), node_is_input.end(), true));

    /// Layer by layer: its node's index.
    static constexpr std::array<std::size_t, layer_count> layer_node = [] {
        std::array<std::size_t, layer_count> n{};
        for (std::size_t i = 0; i < graph::count; ++i)
            if (!node_is_input[i])
                n[node_slot[i]] = i;
        return n;
    }();

    /// Layer by layer: the layer whose weights it uses (itself, but for a Shared node: its target's).
    static constexpr std::array<std::size_t, layer_count> layer_weights_of = [] {
        std::array<std::size_t, layer_count> w{};
        for (std::size_t l = 0; l < layer_count; ++l)
            w[l] = graph::layer_of[graph::targets[layer_node[l]]];
        return w;
    }();

    /// What a layer reads, edge by edge: a layer's output (`layer`) or a model input (`input`), the
    /// other one detail::no_node. Layer L's edges are [first_edge[L], first_edge[L + 1]).
    struct edge {
        std::size_t layer = detail::no_node;
        std::size_t input = detail::no_node;
    };
    static constexpr std::size_t edge_count = graph::edge_total;
    static constexpr std::array<edge, edge_count> edges = [] {
        std::array<edge, edge_count> e{};
        for (std::size_t k = 0; k < edge_count; ++k)
            (node_is_input[node_sources[k]] ? e[k].input : e[k].layer) = node_slot[node_sources[k]];
        return e;
    }();
    static constexpr std::array<std::size_t, layer_count + 1> first_edge = [] {
        std::array<std::size_t, layer_count + 1> f{};
        for (std::size_t l = 0; l < layer_count; ++l)
            f[l] = node_first_source[layer_node[l]];
        f[layer_count] = edge_count;
        return f;
    }();
    /// The outputs' layers, in Outputs' order.
    static constexpr std::array<std::size_t, output_count> output_layers = [] {
        std::array<std::size_t, output_count> o{};
        for (std::size_t k = 0; k < output_count; ++k)
            o[k] = node_slot[output_nodes[k]];
        return o;
    }();

private:
    static constexpr std::size_t
    input_node(std::size_t slot) noexcept
    {
        for (std::size_t i = 0; i < graph::count; ++i)
            if (node_is_input[i] && node_slot[i] == slot)
                return i;
        return 0;
    }
    template <std::size_t K>
    static consteval auto
    input_of() noexcept
    {
        if constexpr (valid)
            return std::type_identity<typename detail::type_at_t<input_node(K), node_list>::spec>{};
        else
            return std::type_identity<Input<Shape<1>>>{};
    }
    static consteval auto
    output_of() noexcept
    {
        if constexpr (valid)
            return std::type_identity<typename layer<output_layers[0]>::output_shape>{};
        else
            return std::type_identity<Shape<1>>{};
    }

    template <std::size_t K>
    static consteval auto
    output_shape_of() noexcept
    {
        if constexpr (valid)
            return std::type_identity<typename layer<output_layers[K]>::output_shape>{};
        else
            return std::type_identity<Shape<1>>{};
    }

public:
    /// The K-th Input (as declared) and the K-th output's shape.
    template <std::size_t K>
    using input_at = typename decltype(input_of<K>())::type;
    template <std::size_t K>
    using output_shape_at = typename decltype(output_shape_of<K>())::type;

    /// Per Input: its floats per sample, whether it holds token ids, and the smallest vocabulary of the
    /// layers that read it (0: none bounds it).
    static constexpr std::array<std::size_t, input_count> input_sizes = []<std::size_t... K>(std::index_sequence<K...>) {
        return std::array<std::size_t, input_count>{input_at<K>::shape::size...};
    }(std::make_index_sequence<input_count>{});
    static constexpr std::array<bool, input_count> input_integral = []<std::size_t... K>(std::index_sequence<K...>) {
        return std::array<bool, input_count>{std::is_integral_v<typename input_at<K>::value_type>...};
    }(std::make_index_sequence<input_count>{});
    static constexpr std::array<std::size_t, input_count> input_bounds = [] {
        std::array<std::size_t, input_count> bounds{};
        [&]<std::size_t... L>(std::index_sequence<L...>) {
            ([&] {
                for (std::size_t k = first_edge[L]; k < first_edge[L + 1]; ++k)
                    if (edges[k].input != detail::no_node && layer<L>::spec::input_bound > 0) {
                        std::size_t& b = bounds[edges[k].input];
                        b = b == 0 ? layer<L>::spec::input_bound : std::min(b, layer<L>::spec::input_bound);
                    }
            }(),
             ...);
        }(std::make_index_sequence<layer_count>{});
        return bounds;
    }();
    /// Per output: its floats per sample.
    static constexpr std::array<std::size_t, output_count> output_sizes = []<std::size_t... K>(std::index_sequence<K...>) {
        return std::array<std::size_t, output_count>{output_shape_at<K>::size...};
    }(std::make_index_sequence<output_count>{});

    /// A graph of several inputs (outputs) reads a sample as one packed row: every input's values in
    /// declaration order, as float32 (token ids are exact in float32 below 2^24), and its targets as
    /// one row of every output's in Outputs' order (tpudsl::model_data packs arrays so). `input_offsets`
    /// and `output_offsets` say where each lies in its row.
    static constexpr bool packed_inputs = input_count > 1;
    static constexpr bool packed_outputs = output_count > 1;
    static constexpr auto input_offsets = detail::prefix_sums(input_sizes);
    static constexpr auto output_offsets = detail::prefix_sums(output_sizes);
    static_assert(!packed_inputs || std::ranges::all_of(input_bounds, [](std::size_t b) { return b <= (std::size_t{1} << 24); }),
                  "tpudsl::Functional: a graph of several inputs carries token ids as float32 in its packed row; a "
                  "vocabulary above 16,777,216 ids does not fit [TPUDSL_GRAPH_PACKED_VOCABULARY]");

    /// What fit, evaluate and predict read: the Input's shape and type, or, for several, the packed row.
    using input = input_at<0>;
    using input_shape = std::conditional_t<packed_inputs, Shape<input_offsets[input_count]>, typename input::shape>;
    using input_type = std::conditional_t<packed_inputs, float, typename input::value_type>;
    /// The output's shape, or, for several, the packed row of their values.
    using output_shape = std::conditional_t<packed_outputs, Shape<output_offsets[output_count]>,
                                            typename decltype(output_of())::type>;

    /// Integer inputs must lie in [0, input_bound): the vocabulary of the layers that read the
    /// (one) input; 0: no bound (or several inputs, each checked by input_bounds).
    static constexpr std::size_t input_bound = packed_inputs ? 0 : input_bounds[0];

    /// Keras' name of the I-th layer: its node's name.
    template <std::size_t I>
    [[nodiscard]] static std::string
    layer_name()
    {
        static_assert(I < layer_count, "tpudsl::Functional::layer_name<I>: I is past the last layer");
        return std::string(node_names[layer_node[I]]);
    }
};

} // namespace tpudsl

#endif // !TPUDSL_MODEL_GRAPH_MODEL_HPP
