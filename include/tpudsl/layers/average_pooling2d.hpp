/// @file Defines tpudsl::AveragePooling2D, Keras' AveragePooling2D.
#ifndef TPUDSL_LAYERS_AVERAGE_POOLING2D_HPP
#define TPUDSL_LAYERS_AVERAGE_POOLING2D_HPP

#include <tpudsl/core/padding.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/layers/detail/window_spec.hpp>

#include <cstddef>
#include <string_view>

namespace tpudsl {

namespace detail {
template <class Spec>
struct average_pooling2d_ops;   // layers/average_pooling2d_ops.hpp
} // namespace detail

/// `AveragePooling2D(pool_size, strides, padding)` on (rows, cols, channels): the mean of each window,
/// per channel. `AveragePooling2D<2>` is a 2x2 window with stride 2; `AveragePooling2D<Size2{2, 3}>` a
/// rectangular one. Under `Same` padding a window's mean is over its real elements only, as in Keras.
/// @tparam Pool   window: an integer (square) or a `Size2{rows, cols}`, 2 by default
/// @tparam Stride step: an integer or a `Size2`, Pool by default
/// @tparam Pad    `Valid` (default) or `Same`
template <auto Pool = 2, auto Stride = Pool, PaddingType Pad = Valid>
    requires detail::WindowArg<Pool> && detail::WindowArg<Stride>
struct AveragePooling2D
    : detail::window_spec<Pad, 2, detail::extents_2d<Pool>, detail::extents_2d<Stride>, detail::pool_rules> {
    static constexpr std::string_view class_name = "AveragePooling2D";
    static constexpr std::string_view base_name = "average_pooling2d";
    static constexpr std::size_t pool_rows = detail::rows_of<Pool>;
    static constexpr std::size_t pool_cols = detail::cols_of<Pool>;
    static constexpr std::size_t stride_rows = detail::rows_of<Stride>;
    static constexpr std::size_t stride_cols = detail::cols_of<Stride>;
    using ops = detail::average_pooling2d_ops<AveragePooling2D>;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_AVERAGE_POOLING2D_HPP
