/// @file Defines tpudsl::GlobalMaxPooling2D, Keras' GlobalMaxPooling2D.
#ifndef TPUDSL_LAYERS_GLOBAL_MAX_POOLING2D_HPP
#define TPUDSL_LAYERS_GLOBAL_MAX_POOLING2D_HPP

#include <tpudsl/layers/detail/global_pool.hpp>

#include <cstddef>
#include <string_view>

namespace tpudsl {

namespace detail {
struct global_max_pooling2d_ops;   // layers/global_max_pooling2d_ops.hpp
} // namespace detail

/// `GlobalMaxPooling2D()` on (rows, cols, channels): the maximum of each channel over every position,
/// giving (channels) (Keras' keepdims=False).
struct GlobalMaxPooling2D : detail::global_pooling<2> {
    static constexpr std::string_view class_name = "GlobalMaxPooling2D";
    static constexpr std::string_view base_name = "global_max_pooling2d";
    using ops = detail::global_max_pooling2d_ops;

    /// Index of each channel's maximum, for the backward pass.
    template <class In>
    static constexpr std::size_t scratch_size = In::shape::dims[2];
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_GLOBAL_MAX_POOLING2D_HPP
