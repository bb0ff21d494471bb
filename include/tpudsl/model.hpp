/// @file Everything a model declaration needs, and nothing heavier: Shape, Input, the layers,
/// Sequential, valid_model and summary. (tpudsl.hpp adds training, data and strategies;
/// tpudsl/functional.hpp, graphs of layers.)
#ifndef TPUDSL_MODEL_HPP
#define TPUDSL_MODEL_HPP

#include <tpudsl/config.hpp>
#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/core/input.hpp>
#include <tpudsl/core/padding.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/layers/activation.hpp>
#include <tpudsl/layers/average_pooling1d.hpp>
#include <tpudsl/layers/average_pooling2d.hpp>
#include <tpudsl/layers/batch_normalization.hpp>
#include <tpudsl/layers/conv1d.hpp>
#include <tpudsl/layers/conv2d.hpp>
#include <tpudsl/layers/dense.hpp>
#include <tpudsl/layers/dropout.hpp>
#include <tpudsl/layers/embedding.hpp>
#include <tpudsl/layers/flatten.hpp>
#include <tpudsl/layers/global_average_pooling1d.hpp>
#include <tpudsl/layers/global_average_pooling2d.hpp>
#include <tpudsl/layers/global_max_pooling1d.hpp>
#include <tpudsl/layers/global_max_pooling2d.hpp>
#include <tpudsl/layers/gru.hpp>
#include <tpudsl/layers/layer_base.hpp>
#include <tpudsl/layers/layer_concepts.hpp>
#include <tpudsl/layers/layer_normalization.hpp>
#include <tpudsl/layers/lstm.hpp>
#include <tpudsl/layers/max_pool1d.hpp>
#include <tpudsl/layers/max_pool2d.hpp>
#include <tpudsl/layers/position_embedding.hpp>
#include <tpudsl/layers/reshaping.hpp>
#include <tpudsl/layers/time_distributed.hpp>
#include <tpudsl/model/sequential.hpp>
#include <tpudsl/model/summary.hpp>
#include <tpudsl/model/valid_model.hpp>

#endif // !TPUDSL_MODEL_HPP
