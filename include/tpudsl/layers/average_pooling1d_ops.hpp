/// @file Defines the forward and backward pass of tpudsl::AveragePooling1D on a batch.
#ifndef TPUDSL_LAYERS_AVERAGE_POOLING1D_OPS_HPP
#define TPUDSL_LAYERS_AVERAGE_POOLING1D_OPS_HPP

#include <tpudsl/layers/average_pooling1d.hpp>
#include <tpudsl/layers/detail/pool_core.hpp>
#include <tpudsl/layers/detail/conv_core.hpp>

namespace tpudsl::detail {

/// Which pooling_core a bound AveragePooling1D runs: its window over (1, steps, channels).
template <class Spec>
struct average_pool1d_binding {
    template <class B>
    using core = pooling_core<geometry_1d<typename Spec::padding, typename B::input_shape,
                                          typename B::output_shape, Spec::pool_size, Spec::stride>, false>;
};

template <class Spec>
struct average_pooling1d_ops : pooling_ops<average_pool1d_binding<Spec>> {};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_AVERAGE_POOLING1D_OPS_HPP
