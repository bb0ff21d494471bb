/// @file Brings in the forward and backward pass of tpudsl::GlobalAveragePooling1D on a batch: an average
/// pooling's over one window, the whole input (detail::global_pooling names them).
#ifndef TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING1D_OPS_HPP
#define TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING1D_OPS_HPP

#include <tpudsl/layers/detail/pool_core.hpp>
#include <tpudsl/layers/detail/global_pool.hpp>
#include <tpudsl/layers/global_average_pooling1d.hpp>

#endif // !TPUDSL_LAYERS_GLOBAL_AVERAGE_POOLING1D_OPS_HPP
