/// @file Brings in the forward and backward pass of tpudsl::GlobalMaxPooling2D on a batch: a max
/// pooling's over one window, the whole input (detail::global_pooling names them).
#ifndef TPUDSL_LAYERS_GLOBAL_MAX_POOLING2D_OPS_HPP
#define TPUDSL_LAYERS_GLOBAL_MAX_POOLING2D_OPS_HPP

#include <tpudsl/layers/detail/global_pool.hpp>
#include <tpudsl/layers/detail/pool_core.hpp>
#include <tpudsl/layers/global_max_pooling2d.hpp>

#endif // !TPUDSL_LAYERS_GLOBAL_MAX_POOLING2D_OPS_HPP
