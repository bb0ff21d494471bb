/// @file Defines tpudsl::GlobalAveragePooling1D, Keras' GlobalAveragePooling1D.
#ifndef TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING1D_HPP
#define TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING1D_HPP

#include <tpudsl/layers/detail/global_pool.hpp>

#include <cstddef>
#include <string_view>

namespace tpudsl {

namespace detail {
struct global_average_pooling1d_ops;   // layers/global_average_pooling1d_ops.hpp
} // namespace detail

/// `GlobalAveragePooling1D()` on (steps, channels): the mean of each channel over every position,
/// giving (channels) (Keras' keepdims=False).
struct GlobalAveragePooling1D : detail::global_pooling<1> {
    static constexpr std::string_view class_name = "GlobalAveragePooling1D";
    static constexpr std::string_view base_name = "global_average_pooling1d";
    using ops = detail::global_average_pooling1d_ops;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING1D_HPP
