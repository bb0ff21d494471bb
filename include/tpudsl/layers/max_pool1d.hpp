/// @file Defines tpudsl::MaxPool1D, Keras' MaxPooling1D.
#ifndef TPUDSL_LAYERS_MAX_POOL1D_HPP
#define TPUDSL_LAYERS_MAX_POOL1D_HPP

#include <tpudsl/core/padding.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/layers/detail/window_spec.hpp>

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
struct MaxPool1D
    : detail::window_spec<Pad, 1, detail::extents_1d<Pool>, detail::extents_1d<Stride>, detail::pool_rules> {
    static constexpr std::string_view class_name = "MaxPooling1D";
    static constexpr std::string_view base_name = "max_pooling1d";
    static constexpr std::size_t pool_size = Pool;
    static constexpr std::size_t stride = Stride;
    using ops = detail::max_pool1d_ops<Pool, Stride, Pad>;
    static constexpr std::size_t max_pooling_rank = 1;

    /// Index of each output's maximum, for the backward pass.
    template <class In>
    static constexpr std::size_t scratch_size = MaxPool1D::template output<In>::shape::size;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_MAX_POOL1D_HPP
