/// @file Defines the forward and backward pass of tpudsl::GlobalAveragePooling2D on a batch.
#ifndef TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING2D_OPS_HPP
#define TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING2D_OPS_HPP

#include <tpudsl/layers/detail/average_pool_core.hpp>
#include <tpudsl/layers/detail/global_pool.hpp>
#include <tpudsl/layers/global_average_pooling2d.hpp>

namespace tpudsl::detail {

/// One window over the whole input.
struct global_average_pooling2d_ops : average_pool_layer_ops<global_binding<average_pool_core>> {};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING2D_OPS_HPP
