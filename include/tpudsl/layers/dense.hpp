/// @file Defines tpudsl::Dense, Keras' fully connected layer.
#ifndef TPUDSL_LAYERS_DENSE_HPP
#define TPUDSL_LAYERS_DENSE_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/layers/layer_base.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

namespace detail {
/// The rules of Dense, in the order they are checked.
enum class dense_rule { ok, zero_units, needs_rank1 };
template <std::size_t Units, class Act>
struct dense_ops;   // layers/dense_ops.hpp
} // namespace detail

/// `Dense(units, activation)`: `y = act(x W + b)` on a rank-1 input (put a Flatten before it).
/// Weights: kernel (in, units), bias (units); glorot_uniform and zeros.
/// @tparam Units output width, > 0
/// @tparam Act   activation fused into the layer, `Linear` by default
template <std::size_t Units, ActivationType Act = Linear>
struct Dense : layer_base {
    static constexpr std::string_view class_name = "Dense";
    static constexpr std::string_view base_name = "dense";
    static constexpr std::size_t units = Units;
    using activation = Act;
    using ops = detail::dense_ops<Units, Act>;
    static constexpr bool row_wise = true;
    static constexpr bool defers_kernel_gradient = true;

    // [dense_rules]
    using rule = detail::dense_rule;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval rule
    check() noexcept
    {
        if (Units == 0)
            return rule::zero_units;
        if (In::shape::rank != 1)
            return rule::needs_rank1;
        return rule::ok;
    }

    template <rule R>
    struct diagnostic {
        static_assert(R != rule::zero_units, "tpudsl::Dense<Units>: requires Units > 0 [TPUDSL_DENSE_ZERO_UNITS]");
        static_assert(R != rule::needs_rank1, "tpudsl::Dense<Units>: requires a rank-1 input; insert tpudsl::Flatten "
                                              "before it [TPUDSL_DENSE_NEEDS_RANK1]");
    };
    // [dense_rules]

    /// What Flatten would make of the input: the shape Dense wants.
    template <class In>
    using expects = Shape<In::shape::size>;

    template <class In>
    using output = detail::tensor<Shape<Units>>;

    template <class In>
    using weights = weight_list<weight<weight_role::kernel, Shape<In::shape::size, Units>>,
                                weight<weight_role::bias, Shape<Units>>>;

    /// The logits, when the activation is Softmax.
    template <class In>
    static constexpr std::size_t scratch_size = detail::logits_size<Act, Units>;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_DENSE_HPP
