/// @file Defines tpudsl::MaxPool2D, Keras' MaxPooling2D.
#ifndef TPUDSL_LAYERS_MAX_POOL2D_HPP
#define TPUDSL_LAYERS_MAX_POOL2D_HPP

#include <tpudsl/core/padding.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/layers/detail/window_spec.hpp>

#include <cstddef>
#include <string_view>

namespace tpudsl {

namespace detail {
template <class Spec>
struct max_pool2d_ops;   // layers/max_pool2d_ops.hpp
} // namespace detail

/// `MaxPooling2D(pool_size, strides, padding)` on (rows, cols, channels). `MaxPool2D<2>` is a 2x2
/// window with stride 2; `MaxPool2D<Size2{2, 3}>` a rectangular one.
/// @tparam Pool   window: an integer (square) or a `Size2{rows, cols}`, 2 by default
/// @tparam Stride step: an integer or a `Size2`, Pool by default
/// @tparam Pad    `Valid` (default) or `Same`
template <auto Pool = 2, auto Stride = Pool, PaddingType Pad = Valid>
    requires detail::WindowArg<Pool> && detail::WindowArg<Stride>
struct MaxPool2D
    : detail::window_spec<Pad, 2, detail::extents_2d<Pool>, detail::extents_2d<Stride>, detail::pool_rules> {
    static constexpr std::string_view class_name = "MaxPooling2D";
    static constexpr std::string_view base_name = "max_pooling2d";
    static constexpr std::size_t pool_rows = detail::rows_of<Pool>;
    static constexpr std::size_t pool_cols = detail::cols_of<Pool>;
    static constexpr std::size_t stride_rows = detail::rows_of<Stride>;
    static constexpr std::size_t stride_cols = detail::cols_of<Stride>;
    using ops = detail::max_pool2d_ops<MaxPool2D>;
    static constexpr std::size_t max_pooling_rank = 2;

    /// Index of each output's maximum, for the backward pass.
    template <class In>
    static constexpr std::size_t scratch_size = MaxPool2D::template output<In>::shape::size;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_MAX_POOL2D_HPP
