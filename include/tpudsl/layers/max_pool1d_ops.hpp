/// @file Defines the forward and backward pass of tpudsl::MaxPool1D on a batch.
#ifndef TPUDSL_LAYERS_MAX_POOL1D_OPS_HPP
#define TPUDSL_LAYERS_MAX_POOL1D_OPS_HPP

#include <tpudsl/layers/detail/conv_core.hpp>
#include <tpudsl/layers/detail/pool_core.hpp>
#include <tpudsl/layers/max_pool1d.hpp>

#include <cstddef>

namespace tpudsl::detail {

/// Which pooling_core a bound MaxPool1D runs: its window over (1, steps, channels).
template <std::size_t Pool, std::size_t Stride, class Pad>
struct pool1d_binding {
    template <class B>
    using core =
        pooling_core<geometry_1d<Pad, typename B::input_shape, typename B::output_shape, Pool, Stride>, true>;
};

template <std::size_t Pool, std::size_t Stride, class Pad>
struct max_pool1d_ops : pooling_ops<pool1d_binding<Pool, Stride, Pad>> {};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_MAX_POOL1D_OPS_HPP
