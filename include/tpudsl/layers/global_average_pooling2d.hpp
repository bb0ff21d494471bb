/// @file Defines tpudsl::GlobalAveragePooling2D, Keras' GlobalAveragePooling2D.
#ifndef TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING2D_HPP
#define TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING2D_HPP

#include <tpudsl/layers/detail/global_pool.hpp>

namespace tpudsl {

/// `GlobalAveragePooling2D()` on (rows, cols, channels): the mean of each channel over every position,
/// giving (channels) (Keras' keepdims=False).
struct GlobalAveragePooling2D : detail::global_pooling<2, false> {};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING2D_HPP
