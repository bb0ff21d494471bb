/// @file The umbrella header: models, training, strategies and data.
#ifndef TPUDSL_TPUDSL_HPP
#define TPUDSL_TPUDSL_HPP

#include <tpudsl/model.hpp>
#include <tpudsl/data/cifar10.hpp>
#include <tpudsl/data/fashion_mnist.hpp>
#include <tpudsl/data/freedict.hpp>
#include <tpudsl/data/preprocessing.hpp>
#include <tpudsl/data/sequences.hpp>
#include <tpudsl/distribute/strategy.hpp>
#include <tpudsl/io/weights.hpp>
#include <tpudsl/train/backup.hpp>
#include <tpudsl/train/callbacks.hpp>
#include <tpudsl/train/history_files.hpp>
#include <tpudsl/train/losses.hpp>
#include <tpudsl/train/metrics.hpp>
#include <tpudsl/train/trainable.hpp>
#include <tpudsl/train/optimizers.hpp>
#include <tpudsl/train/schedules.hpp>
#include <tpudsl/train/tensorboard.hpp>

#endif // !TPUDSL_TPUDSL_HPP
