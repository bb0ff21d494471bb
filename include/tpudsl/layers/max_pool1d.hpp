/// @file Defines tpudsl::MaxPool1D, Keras' MaxPooling1D.
#ifndef TPUDSL_LAYERS_MAX_POOL1D_HPP
#define TPUDSL_LAYERS_MAX_POOL1D_HPP

#include <tpudsl/core/padding.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/detail/sliding_window.hpp>
#include <tpudsl/layers/detail/window_rules.hpp>
#include <tpudsl/layers/layer_base.hpp>

#include <array>
#include <cstddef>
#include <string_view>

namespace tpudsl {

namespace detail {
template <std::size_t Pool, std::size_t Stride, class Pad>
struct max_pool1d_ops;   // layers/max_pool1d_ops.hpp
} // namespace detail

/// `MaxPooling1D(pool_size, strides, padding)` on (steps, channels): the maximum of each window,
/// per channel. Strides default to the pool size, as in Keras.
/// @tparam Pool   window length, > 0 (2 by default)
/// @tparam Stride step, > 0 (Pool by default)
/// @tparam Pad    `Valid` (default) or `Same`
template <std::size_t Pool = 2, std::size_t Stride = Pool, PaddingType Pad = Valid>
struct MaxPool1D : layer_base {
    static constexpr std::string_view class_name = "MaxPooling1D";
    static constexpr std::string_view base_name = "max_pooling1d";
    static constexpr std::size_t pool_size = Pool;
    static constexpr std::size_t stride = Stride;
    using padding = Pad;
    using ops = detail::max_pool1d_ops<Pool, Stride, Pad>;
    static constexpr std::size_t max_pooling_rank = 1;
    using window =
        detail::sliding_window<Pad, 1, std::array<std::size_t, 1>{Pool}, std::array<std::size_t, 1>{Stride}>;

    using rule = detail::pool_rule;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval rule
    check() noexcept
    {
        if (window::has_zero_window())
            return rule::zero_size;
        if (window::has_zero_stride())
            return rule::zero_stride;
        return window::template check_input<typename In::shape>(rule::needs_rank2, rule::window_too_large);
    }

    template <rule R>
    using diagnostic = detail::pool_diagnostic<R>;

    template <class In>
    using expects = typename window::template expects<typename In::shape>;

    template <class In>
    using output = detail::tensor<typename window::template output_shape<typename In::shape, In::shape::dims[1]>>;

    /// Index of each output's maximum, for the backward pass.
    template <class In>
    static constexpr std::size_t scratch_size = output<In>::shape::size;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_MAX_POOL1D_HPP
