/// @file Defines the forward and backward pass of tpudsl::AveragePooling2D on a batch.
#ifndef TPUDSL_LAYERS_AVERAGE_POOLING2D_OPS_HPP
#define TPUDSL_LAYERS_AVERAGE_POOLING2D_OPS_HPP

#include <tpudsl/layers/average_pooling2d.hpp>
#include <tpudsl/layers/detail/pool_core.hpp>
#include <tpudsl/layers/detail/conv_core.hpp>

namespace tpudsl::detail {

/// Which pooling_core a bound AveragePooling2D runs: its window over (rows, cols, channels).
template <class Spec>
struct average_pool2d_binding {
    template <class B>
    using core = pooling_core<geometry_2d<typename Spec::padding, typename B::input_shape,
                                          typename B::output_shape, Spec::pool_rows, Spec::pool_cols,
                                          Spec::stride_rows, Spec::stride_cols>, false>;
};

template <class Spec>
struct average_pooling2d_ops : pooling_ops<average_pool2d_binding<Spec>> {};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_AVERAGE_POOLING2D_OPS_HPP
