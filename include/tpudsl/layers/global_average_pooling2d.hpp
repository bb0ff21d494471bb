/// @file Defines tpudsl::GlobalAveragePooling2D, Keras' GlobalAveragePooling2D.
#ifndef TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING2D_HPP
#define TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING2D_HPP

#include <tpudsl/layers/detail/global_pool.hpp>

#include <cstddef>
#include <string_view>

namespace tpudsl {

namespace detail {
struct global_average_pooling2d_ops;   // layers/global_average_pooling2d_ops.hpp
} // namespace detail

/// `GlobalAveragePooling2D()` on (rows, cols, channels): the mean of each channel over every position,
/// giving (channels) (Keras' keepdims=False).
struct GlobalAveragePooling2D : detail::global_pooling<2> {
    static constexpr std::string_view class_name = "GlobalAveragePooling2D";
    static constexpr std::string_view base_name = "global_average_pooling2d";
    using ops = detail::global_average_pooling2d_ops;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING2D_HPP
