/// @file Defines tpudsl::GlobalAveragePooling1D, Keras' GlobalAveragePooling1D.
#ifndef TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING1D_HPP
#define TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING1D_HPP

#include <tpudsl/layers/detail/global_pool.hpp>

namespace tpudsl {

/// `GlobalAveragePooling1D()` on (steps, channels): the mean of each channel over every position,
/// giving (channels) (Keras' keepdims=False).
struct GlobalAveragePooling1D : detail::global_pooling<1, false> {};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING1D_HPP
