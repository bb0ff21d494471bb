/// @file Defines tpudsl::Dense, Keras' fully connected layer.
#ifndef TPUDSL_LAYERS_DENSE_HPP
#define TPUDSL_LAYERS_DENSE_HPP

#include <tpudsl/core/activations.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weights.hpp>
#include <tpudsl/detail/diagnostics.hpp>
#include <tpudsl/layers/layer_base.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

namespace detail {
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

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval detail::rule
    check() noexcept
    {
        using enum detail::rule;
        if (Units == 0)
            return dense_zero_units;
        if (const auto r = layer_base::check<In, Index>(); r != ok)
            return r;
        if (In::shape::rank != 1)
            return dense_needs_rank1;
        return ok;
    }

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
