/// @file Defines the forward and backward pass of tpudsl::Conv2D on a batch.
#ifndef TPUDSL_LAYERS_CONV2D_OPS_HPP
#define TPUDSL_LAYERS_CONV2D_OPS_HPP

#include <tpudsl/layers/conv2d.hpp>
#include <tpudsl/layers/detail/conv_core.hpp>

#include <cstddef>

namespace tpudsl::detail {

/// Which conv_core a bound Conv2D runs: its window over (rows, cols, channels); `A` its activation, or
/// the one it applies in place of an Activation layer it absorbs (see ops/graph.hpp).
template <class Spec>
struct conv2d_binding {
    template <class B, class A = typename Spec::activation>
    using core = conv_core<geometry_2d<typename Spec::padding, typename B::input_shape, typename B::output_shape,
                                       Spec::kernel_rows, Spec::kernel_cols, Spec::stride_rows, Spec::stride_cols>,
                           Spec::filters, A>;
};

template <class Spec>
struct conv2d_ops : conv_layer_ops<conv2d_binding<Spec>> {};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_CONV2D_OPS_HPP
