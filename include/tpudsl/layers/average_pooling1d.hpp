/// @file Defines tpudsl::AveragePooling1D, Keras' AveragePooling1D.
#ifndef TPUDSL_LAYERS_AVERAGE_POOLING1D_HPP
#define TPUDSL_LAYERS_AVERAGE_POOLING1D_HPP

#include <tpudsl/core/padding.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/layers/detail/window_spec.hpp>

#include <cstddef>
#include <string_view>

namespace tpudsl {

namespace detail {
template <class Spec>
struct average_pooling1d_ops;   // layers/average_pooling1d_ops.hpp
} // namespace detail

/// `AveragePooling1D(pool_size, strides, padding)` on (steps, channels): the mean of each window, per
/// channel. Strides default to the pool size, as in Keras; under `Same` padding a window's mean is over
/// its real elements only (the padding is not counted), as in Keras.
/// @tparam Pool   window length, > 0 (2 by default)
/// @tparam Stride step, > 0 (Pool by default)
/// @tparam Pad    `Valid` (default) or `Same`
template <std::size_t Pool = 2, std::size_t Stride = Pool, PaddingType Pad = Valid>
struct AveragePooling1D
    : detail::window_spec<Pad, 1, detail::extents_1d<Pool>, detail::extents_1d<Stride>, detail::pool_rules> {
    static constexpr std::string_view class_name = "AveragePooling1D";
    static constexpr std::string_view base_name = "average_pooling1d";
    static constexpr std::size_t pool_size = Pool;
    static constexpr std::size_t stride = Stride;
    using ops = detail::average_pooling1d_ops<AveragePooling1D>;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_AVERAGE_POOLING1D_HPP
