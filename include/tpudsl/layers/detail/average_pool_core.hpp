/// @file Brings in the forward and backward pass of an average pooling of a given window geometry
/// (pooling_core<G, false>) and pooling_ops: both are defined with the max pooling's in pool_core.hpp.
#ifndef TPUDSL_LAYERS_DETAIL_AVERAGE_POOL_CORE_HPP
#define TPUDSL_LAYERS_DETAIL_AVERAGE_POOL_CORE_HPP

#include <tpudsl/layers/detail/pool_core.hpp>

#endif // !TPUDSL_LAYERS_DETAIL_AVERAGE_POOL_CORE_HPP
