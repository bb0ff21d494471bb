/// @file Defines Keras' merge layers, the layers of a Functional model that take several inputs: Add,
/// Subtract, Multiply, Average, Maximum, Minimum (element-wise, same shapes), Concatenate<Axis> and
/// Dot<Axis1, Axis2>.
#ifndef TPUDSL_LAYERS_MERGE_HPP
#define TPUDSL_LAYERS_MERGE_HPP

#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/detail/type_list.hpp>
#include <tpudsl/layers/layer_base.hpp>

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

namespace detail {

/// The rules of the merges, in the order they are checked.
enum class merge_rule {
    ok,
    too_few_inputs,      ///< fewer than two inputs
    needs_two_inputs,    ///< Subtract: exactly two
    needs_float_input,   ///< an integer input (token ids) reaches a merge
    shapes_differ,       ///< element-wise merges: every input has the first one's shape
    axis_out_of_range,   ///< Concatenate: Axis is not one of the per-sample axes
    concat_shapes_differ, ///< Concatenate: the shapes differ on an axis other than Axis (or in rank)
    dot_axes,             ///< Dot: an axis that is not one of its input's (rank 1 or 2), or extents that differ
    attention_inputs,     ///< MultiHeadAttention: not 1 to 3 inputs (query, value, key)
    attention_rank,       ///< MultiHeadAttention: an input that is not a sequence (timesteps, features)
    attention_lengths,    ///< MultiHeadAttention: value and key of different lengths
    attention_features,   ///< Attention, AdditiveAttention: a key of other features than the query
    attention_config      ///< MultiHeadAttention: a zero head count or dimension, or a dropout outside [0, 1)
};

/// A merge's verdict: the first rule broken, and the input that breaks it (compared with input 0).
struct merge_verdict {
    merge_rule rule = merge_rule::ok;
    std::size_t input = 0;
};

/// The element-wise merges, each applied left to right as Keras folds its inputs.
enum class merge_op { add, subtract, multiply, average, maximum, minimum };

template <merge_op Op>
struct elementwise_merge_ops;   // layers/merge_ops.hpp
struct concatenate_ops;         // layers/merge_ops.hpp
struct dot_ops;                 // layers/merge_ops.hpp

/// The checks every merge makes first: two inputs or more (exactly two for Subtract), all floats.
template <class... In>
[[nodiscard]] consteval merge_verdict
merge_arity_rule(bool exactly_two) noexcept
{
    if (sizeof...(In) < 2)
        return {merge_rule::too_few_inputs, 0};
    if (exactly_two && sizeof...(In) != 2)
        return {merge_rule::needs_two_inputs, 2};
    constexpr std::array<bool, sizeof...(In)> floats{std::is_floating_point_v<typename In::value_type>...};
    for (std::size_t k = 0; k < floats.size(); ++k)
        if (!floats[k])
            return {merge_rule::needs_float_input, k};
    return {};
}

/// Defaults and traits of every merge; `merge_check<In...>()` is its rule check and `merge_output<In...>`
/// its output, over the tensors of its inputs in the order its node names them.
struct merge_base : layer_base {
    static constexpr bool position_independent = true;
    /// A graph gives it several inputs (its ops take arrays of input and gradient pointers).
    static constexpr bool merges = true;
    static constexpr bool row_wise = true;
    /// Its weights and its per-sample scratch, on its inputs (none: the merges proper).
    template <class... In>
    using merge_weights = weight_list<>;
    template <class... In>
    static constexpr std::size_t merge_scratch_size = 0;
};

/// The element-wise merges: every input has the first one's shape, which the output keeps.
/// Keras' class names and auto-name prefixes of the element-wise merges, by merge_op.
inline constexpr std::array<std::string_view, 6> merge_class_names{"Add",     "Subtract", "Multiply",
                                                                   "Average", "Maximum",  "Minimum"};
inline constexpr std::array<std::string_view, 6> merge_base_names{"add",     "subtract", "multiply",
                                                                  "average", "maximum",  "minimum"};

template <merge_op Op>
struct elementwise_merge : merge_base {
    static constexpr std::string_view class_name = merge_class_names[static_cast<std::size_t>(Op)];
    static constexpr std::string_view base_name = merge_base_names[static_cast<std::size_t>(Op)];
    using ops = elementwise_merge_ops<Op>;

    template <class... In>
    [[nodiscard]] static consteval merge_verdict
    merge_check() noexcept
    {
        const merge_verdict arity = merge_arity_rule<In...>(Op == merge_op::subtract);
        if (arity.rule != merge_rule::ok)
            return arity;
        using first = typename type_at_t<0, type_list<In...>>::shape;
        constexpr std::array<bool, sizeof...(In)> same{std::is_same_v<typename In::shape, first>...};
        for (std::size_t k = 1; k < same.size(); ++k)
            if (!same[k])
                return {merge_rule::shapes_differ, k};
        return {};
    }

    template <class First, class... In>
    using merge_output = tensor<typename First::shape>;
};

/// The per-sample axis of Keras' `axis` argument, which counts the batch axis: -1 the last, 1 the
/// first per-sample axis; `rank` when it is none of them (0 is the batch axis).
[[nodiscard]] consteval std::size_t
sample_axis(int axis, std::size_t rank) noexcept
{
    const auto r = static_cast<int>(rank);
    if (axis < 0 && -axis <= r)
        return static_cast<std::size_t>(r + axis);
    if (axis > 0 && axis <= r)
        return static_cast<std::size_t>(axis - 1);
    return rank;
}

} // namespace detail

/// `Add()`: the element-wise sum of its inputs, all of one shape.
struct Add : detail::elementwise_merge<detail::merge_op::add> {};
/// `Subtract()`: its first input minus its second, of one shape.
struct Subtract : detail::elementwise_merge<detail::merge_op::subtract> {};
/// `Multiply()`: the element-wise product of its inputs, all of one shape.
struct Multiply : detail::elementwise_merge<detail::merge_op::multiply> {};
/// `Average()`: the element-wise sum of its inputs divided by their number.
struct Average : detail::elementwise_merge<detail::merge_op::average> {};
/// `Maximum()`: the element-wise maximum; the gradient goes to the first input that holds it.
struct Maximum : detail::elementwise_merge<detail::merge_op::maximum> {};
/// `Minimum()`: the element-wise minimum; the gradient goes to the first input that holds it.
struct Minimum : detail::elementwise_merge<detail::merge_op::minimum> {};

/// `Concatenate(axis)`: its inputs joined along `Axis` (Keras' axis, which counts the batch axis:
/// -1, the default, is the last), their other extents equal.
template <int Axis = -1>
struct Concatenate : detail::merge_base {
    static constexpr std::string_view class_name = "Concatenate";
    static constexpr std::string_view base_name = "concatenate";
    static constexpr int axis = Axis;

    template <class First, class... In>
    static constexpr std::size_t axis_of = detail::sample_axis(Axis, First::shape::rank);

    template <class... In>
    [[nodiscard]] static consteval detail::merge_verdict
    merge_check() noexcept
    {
        using detail::merge_rule;
        const detail::merge_verdict arity = detail::merge_arity_rule<In...>(false);
        if (arity.rule != merge_rule::ok)
            return arity;
        constexpr std::array<std::size_t, sizeof...(In)> ranks{In::shape::rank...};
        constexpr std::size_t a = axis_of<In...>;
        if (a >= ranks[0])
            return {merge_rule::axis_out_of_range, 0};
        constexpr std::array<std::array<std::size_t, 8>, sizeof...(In)> dims{pad8<typename In::shape>()...};
        for (std::size_t k = 1; k < ranks.size(); ++k) {
            if (ranks[k] != ranks[0])
                return {merge_rule::concat_shapes_differ, k};
            for (std::size_t d = 0; d < ranks[0]; ++d)
                if (d != a && dims[k][d] != dims[0][d])
                    return {merge_rule::concat_shapes_differ, k};
        }
        return {};
    }

    template <class First, class... In>
    using merge_output = detail::tensor<shape_from_array_t<[] {
        auto d = First::shape::dims;
        d[axis_of<First>] = (First::shape::dims[axis_of<First>] + ... + In::shape::dims[axis_of<First>]);
        return d;
    }()>>;

    using ops = detail::concatenate_ops;

private:
    template <class S>
    [[nodiscard]] static consteval std::array<std::size_t, 8>
    pad8() noexcept
    {
        std::array<std::size_t, 8> d{};
        for (std::size_t i = 0; i < S::rank && i < 8; ++i)
            d[i] = S::dims[i];
        return d;
    }
};

/// `Dot(axes)`: per sample, the sum of the products of its two inputs along one axis of each (Keras'
/// axes, which count the batch axis: 1 is the first per-sample axis, -1 the last), each input of rank
/// 1 or 2 (Keras' batch_dot): the output keeps the first input's other axis, then the second's, or is
/// (1) when neither has one. Keras' `normalize=True` (cosine proximity) is not taken.
template <int Axis1, int Axis2 = Axis1>
struct Dot : detail::merge_base {
    static constexpr std::string_view class_name = "Dot";
    static constexpr std::string_view base_name = "dot";

    /// The product as a matrix product A' (m, k) . B' (k, nb) of sample views of the inputs: A' is
    /// the first input, transposed when it is (k, m); B' the second, transposed when it is (nb, k).
    template <class A, class Bt>
    struct geometry {
        static constexpr std::size_t ra = A::shape::rank, rb = Bt::shape::rank;
        static constexpr std::size_t a = detail::sample_axis(Axis1, ra), b = detail::sample_axis(Axis2, rb);
        static constexpr bool valid = [] {
            if constexpr (ra < 1 || ra > 2 || rb < 1 || rb > 2)
                return false;
            else
                return a < ra && b < rb && A::shape::dims[a < ra ? a : 0] == Bt::shape::dims[b < rb ? b : 0];
        }();
        static constexpr std::size_t k = valid ? A::shape::dims[a] : 1;
        static constexpr std::size_t m = valid && ra == 2 ? A::shape::dims[1 - a] : 1;
        static constexpr std::size_t nb = valid && rb == 2 ? Bt::shape::dims[1 - b] : 1;
        static constexpr bool a_transposed = ra == 2 && a == 0;
        static constexpr bool b_transposed = rb == 2 && b == 1;
    };

    template <class... In>
    [[nodiscard]] static consteval detail::merge_verdict
    merge_check() noexcept
    {
        const detail::merge_verdict arity = detail::merge_arity_rule<In...>(true);
        if (arity.rule != detail::merge_rule::ok)
            return arity;
        using pair = detail::type_list<In...>;
        if (!geometry<detail::type_at_t<0, pair>, detail::type_at_t<1, pair>>::valid)
            return {detail::merge_rule::dot_axes, 1};
        return {};
    }

    template <class First, class... In>
    using merge_output = typename decltype([] {
        using G = geometry<First, detail::type_at_t<0, detail::type_list<In...>>>;
        if constexpr (G::ra == 2 && G::rb == 2)
            return std::type_identity<detail::tensor<Shape<G::m, G::nb>>>{};
        else if constexpr (G::ra == 2)
            return std::type_identity<detail::tensor<Shape<G::m>>>{};
        else if constexpr (G::rb == 2)
            return std::type_identity<detail::tensor<Shape<G::nb>>>{};
        else
            return std::type_identity<detail::tensor<Shape<1>>>{};
    }())::type;

    using ops = detail::dot_ops;
};

namespace detail {
template <class T>
concept MergeSpec = requires { requires T::merges; };
} // namespace detail

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_MERGE_HPP
