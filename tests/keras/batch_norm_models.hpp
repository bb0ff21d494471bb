// The BatchNormalization models of the one-step checks against Keras (keras_side.py builds the same
// layers in the same order). Keras normalises a batch in one piece: tpudsl runs them with
// TpuStrategy<1, 1>, one micro-batch a step, whose statistics are the batch's.
#ifndef TPUDSL_TESTS_KERAS_BATCH_NORM_MODELS_HPP
#define TPUDSL_TESTS_KERAS_BATCH_NORM_MODELS_HPP

#include <tpudsl/model.hpp>

namespace batch_norm_models {

using namespace tpudsl;

// After a convolution (statistics over samples and positions), before its activation.
using BatchNormConv = Sequential<Input<Shape<6, 6, 2>>,
                                 Conv2D<4, 3>,                 // (4, 4, 4)
                                 BatchNormalization<>,         // gamma, beta, moving mean, moving variance
                                 Activation<Relu>,
                                 GlobalAveragePooling2D,       // (4)
                                 Dense<3, Softmax>>;

// After a Dense (statistics over samples), momentum and epsilon of its own.
using BatchNormDense = Sequential<Input<Shape<8>>, Dense<6, Tanh>, BatchNormalization<0.8f, 0.01f>, Dense<3, Softmax>>;

static_assert(BatchNormConv::param_count == 4 * (3 * 3 * 2 + 1) + 4 * 4 + 3 * (4 + 1));
static_assert(BatchNormConv::non_trainable_param_count == 8);
static_assert(BatchNormDense::param_count == 6 * 9 + 4 * 6 + 3 * 7);

} // namespace batch_norm_models

#endif // !TPUDSL_TESTS_KERAS_BATCH_NORM_MODELS_HPP
