/// @file Defines tpudsl::GlobalMaxPooling1D, Keras' GlobalMaxPooling1D.
#ifndef TPUDSL_LAYERS_GLOBAL_MAX_POOLING1D_HPP
#define TPUDSL_LAYERS_GLOBAL_MAX_POOLING1D_HPP

#include <tpudsl/layers/detail/global_pool.hpp>

#include <cstddef>
#include <string_view>

namespace tpudsl {

namespace detail {
struct global_max_pooling1d_ops;   // layers/global_max_pooling1d_ops.hpp
} // namespace detail

/// `GlobalMaxPooling1D()` on (steps, channels): the maximum of each channel over every position,
/// giving (channels) (Keras' keepdims=False).
struct GlobalMaxPooling1D : detail::global_pooling<1> {
    static constexpr std::string_view class_name = "GlobalMaxPooling1D";
    static constexpr std::string_view base_name = "global_max_pooling1d";
    using ops = detail::global_max_pooling1d_ops;

    /// Index of each channel's maximum, for the backward pass.
    template <class In>
    static constexpr std::size_t scratch_size = In::shape::dims[1];
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_GLOBAL_MAX_POOLING1D_HPP
