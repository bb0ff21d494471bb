/// @file Defines tpudsl::GlobalMaxPooling2D, Keras' GlobalMaxPooling2D.
#ifndef TPUDSL_LAYERS_GLOBAL_MAX_POOLING2D_HPP
#define TPUDSL_LAYERS_GLOBAL_MAX_POOLING2D_HPP

#include <tpudsl/layers/detail/global_pool.hpp>

namespace tpudsl {

/// `GlobalMaxPooling2D()` on (rows, cols, channels): the maximum of each channel over every position,
/// giving (channels) (Keras' keepdims=False).
struct GlobalMaxPooling2D : detail::global_pooling<2, true> {};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_GLOBAL_MAX_POOLING2D_HPP
