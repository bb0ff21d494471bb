/// @file The forward and backward passes of every built-in layer: what a model's graph runs. A
/// translation unit that trains a model includes this (tpudsl.hpp and the trainer do); declaring
/// one needs only the layers' spec headers (tpudsl/model.hpp).
#ifndef TPUDSL_LAYERS_ALL_OPS_HPP
#define TPUDSL_LAYERS_ALL_OPS_HPP

#include <tpudsl/layers/activation_ops.hpp>
#include <tpudsl/layers/average_pooling1d_ops.hpp>
#include <tpudsl/layers/average_pooling2d_ops.hpp>
#include <tpudsl/layers/batch_normalization_ops.hpp>
#include <tpudsl/layers/conv1d_ops.hpp>
#include <tpudsl/layers/conv2d_ops.hpp>
#include <tpudsl/layers/dense_ops.hpp>
#include <tpudsl/layers/dropout_ops.hpp>
#include <tpudsl/layers/embedding_ops.hpp>
#include <tpudsl/layers/flatten_ops.hpp>
#include <tpudsl/layers/global_average_pooling1d_ops.hpp>
#include <tpudsl/layers/global_average_pooling2d_ops.hpp>
#include <tpudsl/layers/global_max_pooling1d_ops.hpp>
#include <tpudsl/layers/global_max_pooling2d_ops.hpp>
#include <tpudsl/layers/gru_ops.hpp>
#include <tpudsl/layers/layer_normalization_ops.hpp>
#include <tpudsl/layers/lstm_ops.hpp>
#include <tpudsl/layers/max_pool1d_ops.hpp>
#include <tpudsl/layers/max_pool2d_ops.hpp>
#include <tpudsl/layers/position_embedding_ops.hpp>
#include <tpudsl/layers/reshaping_ops.hpp>
#include <tpudsl/layers/time_distributed_ops.hpp>

#endif // !TPUDSL_LAYERS_ALL_OPS_HPP
