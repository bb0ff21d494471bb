/// @file Defines the fold of a Functional's nodes (tpudsl::detail::graph_fold): each node checked on
/// the tensors it reads and bound after the nodes before it (a layer, a merge or a Shared use of an
/// earlier layer), its weights laid out after theirs. One class per node, made once and read by the
/// nodes after it; after a node that does not fit the rest are skipped, so one mistake gives one error.
#ifndef TPUDSL_MODEL_GRAPH_FOLD_HPP
#define TPUDSL_MODEL_GRAPH_FOLD_HPP

#include <tpudsl/detail/type_list.hpp>
#include <tpudsl/layers/merge.hpp>
#include <tpudsl/model/graph_diagnostics.hpp>
#include <tpudsl/model/layout.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace tpudsl::detail {

/// What a bound node without weights of its own gives where a bound_layer gives its weights: none, at
/// ParamOffset.
template <std::size_t ParamOffset>
struct no_weights_at {
    using weights = type_list<>;
    static constexpr std::size_t weight_count = 0;
    static constexpr std::size_t param_count = 0;
    static constexpr std::size_t trainable_param_count = 0;
    static constexpr std::size_t param_offset = ParamOffset;
    static constexpr std::size_t param_end = ParamOffset;
    template <std::size_t J>
    using weight = type_at_t<J, weights>;
};

/// A merge bound to the tensors it reads: what a bound_layer gives (its weights, none for the merges
/// proper, bound from ParamOffset), and its inputs.
template <std::size_t Index, class Spec, class Ins, std::size_t ParamOffset>
struct bound_merge;
template <std::size_t Index, class Spec, class First, class... Rest, std::size_t ParamOffset>
struct bound_merge<Index, Spec, type_list<First, Rest...>, ParamOffset> {
private:
    using declared = typename Spec::template merge_weights<First, Rest...>;
    using weight_binding = bind_weights<ParamOffset, declared>;

public:
    using weights = typename weight_binding::type;
    static constexpr std::size_t weight_count = weights::size;
    static constexpr std::size_t param_count = declared::param_count;
    static constexpr std::size_t trainable_param_count = declared::trainable_param_count;
    static constexpr std::size_t param_offset = ParamOffset;
    static constexpr std::size_t param_end = weight_binding::end;
    template <std::size_t J>
    using weight = type_at_t<J, weights>;
    using spec = Spec;
    static constexpr std::size_t index = Index;
    using inputs = type_list<First, Rest...>;
    using first_input = First;
    static constexpr std::size_t input_count = 1 + sizeof...(Rest);
    static constexpr std::array<std::size_t, input_count> input_sizes{First::shape::size, Rest::shape::size...};
    using input_shape = typename First::shape;
    using input_type = float;
    using output_shape = typename Spec::template merge_output<First, Rest...>::shape;
    static constexpr std::size_t scratch_size = Spec::template merge_scratch_size<First, Rest...>;
};

/// A Shared node's layer: its own input and output, no weights of its own (they are its target's, layer
/// `shares`); `use` is the layer on this input with its weights bound from 0, which the runner calls
/// with the target's weights.
template <std::size_t Index, class Spec, class In, std::size_t ParamOffset, class Target>
struct bound_shared : no_weights_at<ParamOffset> {
    using spec = Spec;
    static constexpr std::size_t index = Index;
    using input_shape = typename In::shape;
    using input_type = typename In::value_type;
    using output_shape = typename Spec::template output<In>::shape;
    static constexpr std::size_t scratch_size = Spec::template scratch_size<In>;
    static constexpr std::size_t shares = Target::index;
    using use = bound_layer<Index, Spec, In, 0>;
};

/// A Shared node I, using layer Target on its input In: checked as the layer on In, then its weights'
/// shapes against the first use's.
template <class NodeList, class Table, std::size_t I, std::size_t Layer, class Target, class In, std::size_t Offset>
struct shared_step {
private:
    using spec = typename Target::spec;
    using checked = checked_step<true, Layer, spec, In>;
    static consteval shared_rule
    rule() noexcept
    {
        if constexpr (!checked::ok) {
            return shared_rule::ok;   // the layer's own diagnostic says it
        } else {
            using use = bound_layer<Layer, spec, In, 0>;
            if (Target::trainable_param_count != Target::param_count)
                return shared_rule::moving_statistics;
            const bool same = []<std::size_t... J>(std::index_sequence<J...>) {
                return ((use::template weight<J>::size == Target::template weight<J>::size) && ...);
            }(std::make_index_sequence<Target::weight_count>{});
            return same && use::weight_count == Target::weight_count ? shared_rule::ok
                                                                     : shared_rule::weight_shapes_differ;
        }
    }
    static constexpr shared_rule rule_v = rule();

public:
    static constexpr bool ok = checked::ok && rule_v == shared_rule::ok;
    static constexpr bool reported = checked::reported && [] {
        if constexpr (rule_v != shared_rule::ok)
            return sizeof(shared_error<rule_v, type_at_t<I, NodeList>::literal,
                                       type_at_t<Table::targets[I], NodeList>::literal, typename In::shape,
                                       typename Target::input_shape>) > 0;
        else
            return true;
    }();
    using output = std::conditional_t<ok, typename checked::output, invalid_tensor>;
    using bound = bound_shared<Layer, spec, In, Offset, Target>;
};

/// An Input node: its tensor, or the Input diagnostic for an empty shape.
template <class Spec>
struct input_step {
    using output = input_tensor_t<Spec>;
    static constexpr bool ok = output::valid;
    static constexpr bool reported = [] {
        if constexpr (!ok)
            return sizeof(layer_error<model_rule::input_empty_shape, 0, Spec, typename Spec::shape,
                                      any_shape_of_rank<1>>) > 0;
        else
            return true;
    }();
};

/// A node after a failed one: skipped, so that one mistake gives one error.
struct skipped_step {
    using output = invalid_tensor;
    static constexpr bool ok = false;
    static constexpr bool reported = true;
};

/// A one-input layer's node: checked as a Sequential checks its layers, and bound.
template <std::size_t Layer, class Spec, class In, std::size_t Offset>
struct layer_step : checked_step<true, Layer, Spec, In> {
    using bound = std::conditional_t<checked_step<true, Layer, Spec, In>::ok, bound_layer<Layer, Spec, In, Offset>, void>;
};

template <class NodeList, class Table, std::size_t I>
struct graph_node;

/// The tensors node I reads: the outputs of the nodes before it that its edges name.
template <class NodeList, class Table, std::size_t I, class Seq = std::make_index_sequence<Table::edge_counts[I]>>
struct node_inputs;
template <class NodeList, class Table, std::size_t I, std::size_t... E>
struct node_inputs<NodeList, Table, I, std::index_sequence<E...>> {
    using type = type_list<typename graph_node<NodeList, Table, Table::edges[Table::first_edge[I] + E]>::output...>;
};

/// Node I, a merge, on its inputs: checked (its diagnostic names the producers), bound and its output.
template <class NodeList, class Table, std::size_t I, std::size_t Layer, std::size_t Offset, class Ins>
struct merge_step;
template <class NodeList, class Table, std::size_t I, std::size_t Layer, std::size_t Offset, class... In>
struct merge_step<NodeList, Table, I, Layer, Offset, type_list<In...>> {
    using spec = typename type_at_t<I, NodeList>::spec;
    static constexpr merge_verdict verdict = spec::template merge_check<In...>();
    static constexpr bool ok = verdict.rule == merge_rule::ok;
    static constexpr bool reported = [] {
        if constexpr (!ok) {
            constexpr std::size_t first = Table::edges[Table::first_edge[I]];
            constexpr std::size_t k = std::min(verdict.input, sizeof...(In) - 1);
            constexpr std::size_t other = Table::edges[Table::first_edge[I] + k];
            using Ins = type_list<In...>;
            return sizeof(merge_error<verdict.rule, type_at_t<I, NodeList>::literal, spec,
                                      type_at_t<first, NodeList>::literal, typename type_at_t<0, Ins>::shape,
                                      type_at_t<other, NodeList>::literal, typename type_at_t<k, Ins>::shape>) > 0;
        } else {
            return true;
        }
    }();
    using output = typename decltype([] {
        if constexpr (ok)
            return std::type_identity<typename spec::template merge_output<In...>>{};
        else
            return std::type_identity<invalid_tensor>{};
    }())::type;
    using bound = bound_merge<Layer, spec, type_list<In...>, Offset>;
};

/// What node I is to the fold: an Input, a node after a failed one (skipped, so that one mistake gives
/// one error), a merge, a Shared use of an earlier layer, or a one-input layer.
enum class node_kind { input, skipped, merge, shared, layer };

/// The nodes before node End, folded: whether all of them fit and where their weights end.
template <class NodeList, class Table, std::size_t End>
struct graph_prefix {
    static constexpr bool ok = graph_node<NodeList, Table, End - 1>::ok_so_far;
    static constexpr std::size_t param_end = graph_node<NodeList, Table, End - 1>::param_end;
};
template <class NodeList, class Table>
struct graph_prefix<NodeList, Table, 0> {
    static constexpr bool ok = true;
    static constexpr std::size_t param_end = 0;
};

/// Node I's step of kind K, its weights from Offset (a class per kind, so that only the one taken is
/// instantiated).
template <node_kind K, class NodeList, class Table, std::size_t I, std::size_t Offset>
struct node_step {
    using type = skipped_step;
};
template <class NodeList, class Table, std::size_t I, std::size_t Offset>
struct node_step<node_kind::input, NodeList, Table, I, Offset> {
    using type = input_step<typename type_at_t<I, NodeList>::spec>;
};
template <class NodeList, class Table, std::size_t I, std::size_t Offset>
struct node_step<node_kind::merge, NodeList, Table, I, Offset> {
    using type = merge_step<NodeList, Table, I, Table::layer_of[I], Offset, typename node_inputs<NodeList, Table, I>::type>;
};
template <class NodeList, class Table, std::size_t I, std::size_t Offset>
struct node_step<node_kind::shared, NodeList, Table, I, Offset> {
    using type = shared_step<NodeList, Table, I, Table::layer_of[I],
                             typename graph_node<NodeList, Table, Table::targets[I]>::step::bound,
                             type_at_t<0, typename node_inputs<NodeList, Table, I>::type>, Offset>;
};
template <class NodeList, class Table, std::size_t I, std::size_t Offset>
struct node_step<node_kind::layer, NodeList, Table, I, Offset> {
    using type = layer_step<Table::layer_of[I], typename type_at_t<I, NodeList>::spec,
                            type_at_t<0, typename node_inputs<NodeList, Table, I>::type>, Offset>;
};

/// Where a step's weights end: its bound layer's end, or Offset for a step that binds none.
template <class Step, bool Binds, std::size_t Offset>
struct step_end {
    static constexpr std::size_t value = Offset;
};
template <class Step, std::size_t Offset>
struct step_end<Step, true, Offset> {
    static constexpr std::size_t value = Step::bound::param_end;
};

/// Node I of the graph, checked and bound after the nodes before it (each node's class is made once
/// and read by every node after it: no recursion carries the nodes' outputs or layers along).
template <class NodeList, class Table, std::size_t I>
struct graph_node {
private:
    using before = graph_prefix<NodeList, Table, I>;
    static constexpr node_kind kind = !before::ok        ? node_kind::skipped
                                      : Table::inputs[I] ? node_kind::input
                                      : Table::merges[I] ? node_kind::merge
                                      : Table::shared[I] ? node_kind::shared
                                                         : node_kind::layer;

public:
    using step = typename node_step<kind, NodeList, Table, I, before::param_end>::type;
    static_assert(step::reported);
    using output = typename step::output;
    static constexpr bool ok_so_far = before::ok && step::ok;
    static constexpr bool binds = kind != node_kind::input && kind != node_kind::skipped && step::ok;
    static constexpr std::size_t param_end = step_end<step, binds, before::param_end>::value;
};

/// The graph folded: its bound layers in order (none when a node does not fit) and where their
/// weights end.
template <class NodeList, class Table,
          class Layers = std::make_index_sequence<Table::count - static_cast<std::size_t>(std::count(
                                                                     Table::inputs.begin(), Table::inputs.end(), true))>>
struct graph_fold;
template <class NodeList, class Table, std::size_t... L>
struct graph_fold<NodeList, Table, std::index_sequence<L...>> {
private:
    using last = graph_prefix<NodeList, Table, Table::count>;
    static constexpr std::array<std::size_t, sizeof...(L) + 1> layer_nodes = [] {
        std::array<std::size_t, sizeof...(L) + 1> n{};
        for (std::size_t i = 0; i < Table::count; ++i)
            if (!Table::inputs[i])
                n[Table::layer_of[i]] = i;
        return n;
    }();

    static consteval auto
    layers_of() noexcept
    {
        if constexpr (last::ok)
            return std::type_identity<type_list<typename graph_node<NodeList, Table, layer_nodes[L]>::step::bound...>>{};
        else
            return std::type_identity<type_list<>>{};
    }

public:
    static constexpr bool valid = last::ok;
    static constexpr std::size_t param_end = last::param_end;
    using layers = typename decltype(layers_of())::type;
};

} // namespace tpudsl::detail

#endif // !TPUDSL_MODEL_GRAPH_FOLD_HPP
