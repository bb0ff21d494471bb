/// @file Defines tpudsl::Flatten, Keras' Flatten (row-major, channels last).
#ifndef TPUDSL_LAYERS_FLATTEN_HPP
#define TPUDSL_LAYERS_FLATTEN_HPP

#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weights.hpp>
#include <tpudsl/detail/diagnostics.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

/// `Flatten()`: (d0, d1, ..., dn) becomes (d0 * d1 * ... * dn), index `((h * W) + w) * C + c`.
/// On the flat per-sample buffer it is free: the data does not move.
struct Flatten {
    static constexpr std::string_view class_name = "Flatten";
    static constexpr std::string_view base_name = "flatten";

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval detail::rule
    check() noexcept
    {
        if (!std::is_floating_point_v<typename In::value_type>)
            return detail::rule::needs_float_input;
        return detail::rule::ok;
    }

    template <class In>
    using expects = typename In::shape;

    template <class In>
    using output = detail::tensor<Shape<In::shape::size>>;

    template <class In>
    using weights = weight_list<>;

    template <class In>
    static constexpr std::size_t scratch_size = 0;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_FLATTEN_HPP
