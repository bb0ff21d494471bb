/// @file Defines the forward and backward pass of tpudsl::Conv1D on a batch.
#ifndef TPUDSL_LAYERS_CONV1D_OPS_HPP
#define TPUDSL_LAYERS_CONV1D_OPS_HPP

#include <tpudsl/layers/conv1d.hpp>
#include <tpudsl/layers/detail/conv_core.hpp>

#include <cstddef>

namespace tpudsl::detail {

/// Which conv_core a bound Conv1D runs: its window over (1, steps, channels); `A` its activation, or
/// the one it applies in place of an Activation layer it absorbs (see ops/graph.hpp).
template <std::size_t Filters, std::size_t Kernel, class Act, class Pad, std::size_t Stride>
struct conv1d_binding {
    template <class B, class A = Act>
    using core = conv_core<geometry_1d<Pad, typename B::input_shape, typename B::output_shape, Kernel, Stride>,
                           Filters, A>;
};

template <std::size_t Filters, std::size_t Kernel, class Act, class Pad, std::size_t Stride>
struct conv1d_ops : conv_layer_ops<conv1d_binding<Filters, Kernel, Act, Pad, Stride>> {};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_CONV1D_OPS_HPP
