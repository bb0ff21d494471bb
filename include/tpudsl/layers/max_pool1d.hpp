/// @file Defines tpudsl::MaxPool1D, Keras' MaxPooling1D.
#ifndef TPUDSL_LAYERS_MAX_POOL1D_HPP
#define TPUDSL_LAYERS_MAX_POOL1D_HPP

#include <tpudsl/core/padding.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weights.hpp>
#include <tpudsl/detail/diagnostics.hpp>

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

/// `MaxPooling1D(pool_size, strides, padding)` on (steps, channels): the maximum of each window,
/// per channel. Strides default to the pool size, as in Keras.
/// @tparam Pool   window length, > 0 (2 by default)
/// @tparam Stride step, > 0 (Pool by default)
/// @tparam Pad    `Valid` (default) or `Same`
template <std::size_t Pool = 2, std::size_t Stride = Pool, PaddingType Pad = Valid>
struct MaxPool1D {
    static constexpr std::string_view class_name = "MaxPooling1D";
    static constexpr std::string_view base_name = "max_pooling1d";
    static constexpr std::size_t pool_size = Pool;
    static constexpr std::size_t stride = Stride;
    using padding = Pad;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval detail::rule
    check() noexcept
    {
        using enum detail::rule;
        using S = typename In::shape;
        if (Pool == 0)
            return pool_zero_size;
        if (Stride == 0)
            return pool_zero_stride;
        if (!std::is_floating_point_v<typename In::value_type>)
            return needs_float_input;
        if constexpr (S::rank != 2)
            return pool1d_needs_rank2;
        else if (detail::window_output<Pad>(S::dims[0], Pool, Stride) == 0)
            return pool_window_too_large;
        return ok;
    }

    template <class In>
    static consteval auto
    expects_impl() noexcept
    {
        using S = typename In::shape;
        if constexpr (S::rank == 2)
            return std::type_identity<Shape<std::max(S::dims[0], Pool), S::dims[1]>>{};
        else
            return std::type_identity<detail::any_shape_of_rank<2>>{};
    }
    template <class In>
    using expects = typename decltype(expects_impl<In>())::type;

    template <class In>
    using output = detail::tensor<Shape<detail::window_output<Pad>(In::shape::dims[0], Pool, Stride), In::shape::dims[1]>>;

    template <class In>
    using weights = weight_list<>;

    /// Index of each output's maximum, for the backward pass.
    template <class In>
    static constexpr std::size_t scratch_size = output<In>::shape::size;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_MAX_POOL1D_HPP
