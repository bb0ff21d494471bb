/// @file Defines tpudsl::Flatten, Keras' Flatten (row-major, channels last).
#ifndef TPUDSL_LAYERS_FLATTEN_HPP
#define TPUDSL_LAYERS_FLATTEN_HPP

#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/layers/layer_base.hpp>

#include <cstddef>
#include <string_view>

namespace tpudsl {

namespace detail {
struct flatten_ops;   // layers/flatten_ops.hpp
} // namespace detail

/// `Flatten()`: (d0, d1, ..., dn) becomes (d0 * d1 * ... * dn), index `((h * W) + w) * C + c`.
/// On the flat per-sample buffer it is free: the data does not move.
struct Flatten : layer_base {
    static constexpr bool position_independent = true;
    static constexpr std::string_view class_name = "Flatten";
    static constexpr std::string_view base_name = "flatten";
    using ops = detail::flatten_ops;
    static constexpr bool aliases_input = true;
    static constexpr bool row_wise = true;

    template <class In>
    using output = detail::tensor<Shape<In::shape::size>>;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_FLATTEN_HPP
