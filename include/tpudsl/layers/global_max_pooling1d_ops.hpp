/// @file Defines the forward and backward pass of tpudsl::GlobalMaxPooling1D on a batch.
#ifndef TPUDSL_LAYERS_GLOBAL_MAX_POOLING1D_OPS_HPP
#define TPUDSL_LAYERS_GLOBAL_MAX_POOLING1D_OPS_HPP

#include <tpudsl/layers/detail/global_pool.hpp>
#include <tpudsl/layers/detail/pool_core.hpp>
#include <tpudsl/layers/global_max_pooling1d.hpp>

namespace tpudsl::detail {

/// One window over the whole input.
struct global_max_pooling1d_ops : pool_layer_ops<global_binding<pool_core>> {};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_GLOBAL_MAX_POOLING1D_OPS_HPP
