// The models of the one-step checks against Keras (keras_side.py builds the same layers in the same
// order): each holds one of the poolings after a layer with weights, so the step's gradient passes
// through it.
#ifndef TPUDSL_TESTS_KERAS_POOLING_MODELS_HPP
#define TPUDSL_TESTS_KERAS_POOLING_MODELS_HPP

#include <tpudsl/model.hpp>

namespace pooling_models {

using namespace tpudsl;

// Valid windows that tile, and Same ones whose padding is not counted in their mean.
using AveragePool2D = Sequential<Input<Shape<9, 9, 2>>,
                                 Conv2D<4, 3, Tanh>,                // (7, 7, 4)
                                 AveragePooling2D<3, 2, Same>,      // (4, 4, 4)
                                 AveragePooling2D<2>,               // (2, 2, 4)
                                 Flatten,                           // (16)
                                 Dense<3, Softmax>>;

using AveragePool1D = Sequential<Input<Shape<12, 3>>,
                                 Conv1D<4, 3, Tanh>,                // (10, 4)
                                 AveragePooling1D<3, 2, Same>,      // (5, 4)
                                 AveragePooling1D<2>,               // (2, 4)
                                 Flatten,                           // (8)
                                 Dense<3, Softmax>>;

using GlobalAverage2D = Sequential<Input<Shape<6, 6, 2>>, Conv2D<4, 3, Tanh>, GlobalAveragePooling2D, Dense<3, Softmax>>;
using GlobalMax2D = Sequential<Input<Shape<6, 6, 2>>, Conv2D<4, 3, Tanh>, GlobalMaxPooling2D, Dense<3, Softmax>>;
using GlobalAverage1D = Sequential<Input<Shape<10, 3>>, Conv1D<4, 3, Tanh>, GlobalAveragePooling1D, Dense<3, Softmax>>;
using GlobalMax1D = Sequential<Input<Shape<10, 3>>, Conv1D<4, 3, Tanh>, GlobalMaxPooling1D, Dense<3, Softmax>>;

static_assert(AveragePool2D::param_count == 4 * (3 * 3 * 2 + 1) + 3 * (16 + 1));
static_assert(GlobalMax1D::param_count == 4 * (3 * 3 + 1) + 3 * (4 + 1));

} // namespace pooling_models

#endif // !TPUDSL_TESTS_KERAS_POOLING_MODELS_HPP
