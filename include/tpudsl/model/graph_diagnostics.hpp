/// @file The names of a Functional model's nodes (core/name_literal.hpp: `Node<"conv", ...>`, joined with
/// `Name + "_conv1"` in a Block) and the compile-time messages that name them: the structural rules
/// (graph_error), a merge's inputs that do not fit (merge_error), a shared layer's call that cannot keep
/// its weights (shared_error). model/graph_model.hpp checks the rules.
#ifndef TPUDSL_MODEL_GRAPH_DIAGNOSTICS_HPP
#define TPUDSL_MODEL_GRAPH_DIAGNOSTICS_HPP

#include <tpudsl/core/name_literal.hpp>
#include <tpudsl/layers/merge.hpp>

#include <cstddef>
#include <string_view>

namespace tpudsl {

/// A name joined from two, for the nodes of a Block: `Name + "_conv1"` is "stage1_block1_conv1" when
/// Name is "stage1_block1".
template <std::size_t N, std::size_t M>
[[nodiscard]] consteval name_literal<N + M - 1>
operator+(const name_literal<N>& a, const char (&b)[M]) noexcept
{
    name_literal<N + M - 1> joined;
    for (std::size_t i = 0; i + 1 < N; ++i)
        joined.chars[i] = a.chars[i];
    for (std::size_t i = 0; i < M; ++i)
        joined.chars[N - 1 + i] = b[i];
    return joined;
}
template <std::size_t N, std::size_t M>
[[nodiscard]] consteval name_literal<N + M - 1>
operator+(const name_literal<N>& a, const name_literal<M>& b) noexcept
{
    return a + b.chars;
}

namespace detail {
template <name_literal V>
struct literal_of {
    static constexpr auto value = V;
};

/// The rules of a graph's structure, checked before any layer sees a shape.
enum class graph_rule {
    ok,
    not_a_node,
    needs_input_first,
    duplicate_name,
    unknown_source,
    source_after,
    input_reads,
    one_input_layer,
    unknown_output,
    output_is_input,
    dead_node,
    unused_input,
    unknown_shared,
    shared_after,
    shared_not_layer,
};

/// A structural verdict: the rule broken, the node that breaks it and the index of its source (or of
/// the output) at fault.
struct graph_verdict {
    graph_rule rule = graph_rule::ok;
    std::size_t node = 0;
    std::size_t at = 0;
};

template <graph_rule R>
struct graph_diagnostic {
    // One assertion per rule; "what; fix [TAG]". The nodes' names are the error's template arguments.
    static_assert(R != graph_rule::not_a_node,
                  "tpudsl::Functional<Node<...>..., Outputs<...>>: every argument is a tpudsl::Node<\"name\", Layer, "
                  "\"source\"...>, and Outputs<\"name\"...> comes last [TPUDSL_GRAPH_NOT_A_NODE]");
    static_assert(R != graph_rule::needs_input_first,
                  "tpudsl::Functional: the first node must be an Input: Node<\"name\", Input<Shape<...>, T>> "
                  "[TPUDSL_GRAPH_NEEDS_INPUT]");
    static_assert(R != graph_rule::duplicate_name,
                  "tpudsl::Functional: two nodes share this name; a node's name is unique, as a Keras layer's "
                  "[TPUDSL_GRAPH_DUPLICATE_NAME]");
    static_assert(R != graph_rule::unknown_source,
                  "tpudsl::Functional: this node reads a name that no node has [TPUDSL_GRAPH_UNKNOWN_SOURCE]");
    static_assert(R != graph_rule::source_after,
                  "tpudsl::Functional: this node reads itself or a node declared after it; nodes are written in "
                  "data-flow order, so a graph has no cycle [TPUDSL_GRAPH_CYCLE]");
    static_assert(R != graph_rule::input_reads,
                  "tpudsl::Functional: an Input node reads no other node; write Node<\"name\", Input<Shape<...>>> "
                  "[TPUDSL_GRAPH_INPUT_READS]");
    static_assert(R != graph_rule::one_input_layer,
                  "tpudsl::Functional: this layer reads one input; only merges (Add, Concatenate, ...) read several "
                  "[TPUDSL_GRAPH_ONE_INPUT]");
    static_assert(R != graph_rule::unknown_output,
                  "tpudsl::Functional: Outputs<...> names a node that does not exist [TPUDSL_GRAPH_UNKNOWN_OUTPUT]");
    static_assert(R != graph_rule::output_is_input,
                  "tpudsl::Functional: an output is a layer's node, not an Input [TPUDSL_GRAPH_OUTPUT_IS_INPUT]");
    static_assert(R != graph_rule::dead_node,
                  "tpudsl::Functional: no output depends on this node; remove it or name it in Outputs<...> "
                  "[TPUDSL_GRAPH_DEAD_NODE]");
    static_assert(R != graph_rule::unknown_shared,
                  "tpudsl::Functional: Shared<\"name\"> names a node that does not exist [TPUDSL_GRAPH_UNKNOWN_SHARED]");
    static_assert(R != graph_rule::shared_after,
                  "tpudsl::Functional: Shared<\"name\"> names this node or one declared after it; a layer is "
                  "declared at its first use [TPUDSL_GRAPH_SHARED_AFTER]");
    static_assert(R != graph_rule::shared_not_layer,
                  "tpudsl::Functional: Shared<\"name\"> names an Input, a merge or another Shared node; name the "
                  "node that declares the layer [TPUDSL_GRAPH_SHARED_NOT_LAYER]");
    static_assert(R != graph_rule::unused_input,
                  "tpudsl::Functional: no output depends on this Input; remove it or use it "
                  "[TPUDSL_GRAPH_UNUSED_INPUT]");
};

} // namespace detail

/// Instantiated by `Functional` for the first structural rule it breaks; its arguments name the node and,
/// where one is at fault, the source or output name.
template <detail::graph_rule R, name_literal Node, name_literal Other>
struct graph_error : detail::graph_diagnostic<R> {};

/// Instantiated by `Functional` for a merge whose inputs do not fit together: the merge's node, the merge,
/// and the two inputs compared (the first one and the one at fault), each by its producer and shape.
template <detail::merge_rule R, name_literal Node, class Merge, name_literal ProducerA, class ShapeA,
          name_literal ProducerB, class ShapeB>
struct merge_error {
    static_assert(R != detail::merge_rule::too_few_inputs,
                  "tpudsl merge (Add, Concatenate, ...): reads two inputs or more; name them after the layer: "
                  "Node<\"sum\", Add, \"a\", \"b\"> [TPUDSL_MERGE_TOO_FEW_INPUTS]");
    static_assert(R != detail::merge_rule::needs_two_inputs,
                  "tpudsl::Subtract, tpudsl::Dot: read exactly two inputs [TPUDSL_MERGE_NEEDS_TWO]");
    static_assert(R != detail::merge_rule::needs_float_input,
                  "tpudsl merge: its inputs are floats; integer inputs (token ids) go through tpudsl::Embedding "
                  "first [TPUDSL_NEEDS_FLOAT_INPUT]");
    static_assert(R != detail::merge_rule::shapes_differ,
                  "tpudsl merge (Add, Subtract, Multiply, Average, Maximum, Minimum): its inputs must have one "
                  "shape; the merge's node, the producers and their shapes follow [TPUDSL_MERGE_SHAPES_DIFFER]");
    static_assert(R != detail::merge_rule::axis_out_of_range,
                  "tpudsl::Concatenate<Axis>: Axis is one of the per-sample axes, -rank..-1 or 1..rank (Keras' "
                  "axis, counting the batch axis) [TPUDSL_CONCATENATE_AXIS]");
    static_assert(R != detail::merge_rule::concat_shapes_differ,
                  "tpudsl::Concatenate<Axis>: its inputs must have one rank and equal extents except on Axis; "
                  "the merge's node, the producers and their shapes follow [TPUDSL_CONCATENATE_SHAPES_DIFFER]");
    static_assert(R != detail::merge_rule::dot_axes,
                  "tpudsl::Dot<Axis1, Axis2>: each input has rank 1 or 2, each axis is one of its input's (Keras' "
                  "axes, counting the batch axis), and the two axes have one extent; the merge's node, the "
                  "producers and their shapes follow [TPUDSL_DOT_AXES]");
    static_assert(R != detail::merge_rule::attention_inputs,
                  "tpudsl::MultiHeadAttention, Attention, AdditiveAttention: read the query, then the value and "
                  "the key (MultiHeadAttention: 1 to 3 inputs, one is self-attention; the others 2 or 3; two take "
                  "the key from the value): Node<\"att\", MultiHeadAttention<2, 16>, \"query\", \"value\"> "
                  "[TPUDSL_ATTENTION_INPUTS]");
    static_assert(R != detail::merge_rule::attention_rank,
                  "tpudsl::MultiHeadAttention: query, value and key are sequences (timesteps, features), rank 2 "
                  "each; the node, the query's producer and shape, and the input at fault follow "
                  "[TPUDSL_ATTENTION_RANK]");
    static_assert(R != detail::merge_rule::attention_lengths,
                  "tpudsl::MultiHeadAttention: the value and the key have one length (timesteps); the node, the "
                  "query's producer and shape, and the input at fault follow [TPUDSL_ATTENTION_LENGTHS]");
    static_assert(R != detail::merge_rule::attention_features,
                  "tpudsl::Attention, tpudsl::AdditiveAttention: the key (the value unless named third) has the "
                  "query's features; the node, the query's producer and shape, and the key's follow "
                  "[TPUDSL_ATTENTION_FEATURES]");
    static_assert(R != detail::merge_rule::attention_config,
                  "tpudsl::MultiHeadAttention<Heads, KeyDim, ValueDim, Options>: Heads, KeyDim and ValueDim are at "
                  "least 1 and Options.dropout is in [0, 1) [TPUDSL_ATTENTION_CONFIG]");
};

namespace detail {
/// The rules of a shared layer's later uses, checked once a use's input is known.
enum class shared_rule { ok, weight_shapes_differ, moving_statistics };
} // namespace detail

/// Instantiated by `Functional` for a Shared node whose use cannot keep the layer's weights: the node,
/// the node that declares the layer, and the two inputs' shapes (this use's, the first use's).
template <detail::shared_rule R, name_literal Node, name_literal Layer, class ShapeHere, class ShapeFirst>
struct shared_error {
    static_assert(R != detail::shared_rule::weight_shapes_differ,
                  "tpudsl::Shared: a shared layer keeps one set of weights, and this node's input would give them "
                  "other shapes than the first use's; the node, the layer's node and both input shapes follow "
                  "[TPUDSL_GRAPH_SHARED_SHAPES]");
    static_assert(R != detail::shared_rule::moving_statistics,
                  "tpudsl::Shared: a layer with moving statistics (BatchNormalization) is not shared; declare one "
                  "per use [TPUDSL_GRAPH_SHARED_MOVING]");
};

} // namespace tpudsl

#endif // !TPUDSL_MODEL_GRAPH_DIAGNOSTICS_HPP
