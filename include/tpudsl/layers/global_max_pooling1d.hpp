/// @file Defines tpudsl::GlobalMaxPooling1D, Keras' GlobalMaxPooling1D.
#ifndef TPUDSL_LAYERS_GLOBAL_MAX_POOLING1D_HPP
#define TPUDSL_LAYERS_GLOBAL_MAX_POOLING1D_HPP

#include <tpudsl/layers/detail/global_pool.hpp>

namespace tpudsl {

/// `GlobalMaxPooling1D()` on (steps, channels): the maximum of each channel over every position,
/// giving (channels) (Keras' keepdims=False).
struct GlobalMaxPooling1D : detail::global_pooling<1, true> {};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_GLOBAL_MAX_POOLING1D_HPP
