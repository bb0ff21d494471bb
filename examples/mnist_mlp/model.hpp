/// @file The MNIST seed's model: a dense network with dropout.
#ifndef TPUDSL_EXAMPLES_MNIST_MLP_MODEL_HPP
#define TPUDSL_EXAMPLES_MNIST_MLP_MODEL_HPP

#include <tpudsl/model.hpp>

#include <array>
#include <cstddef>
#include <type_traits>

namespace seeds {

// [mnist_model]
using namespace tpudsl;

using MnistMlp = Sequential<
    Input<Shape<784>>,                 // 28x28 pixels, flattened and scaled to [0, 1]
    Dense<512, Relu>,
    Dropout<0.2f>,
    Dense<512, Relu>,
    Dropout<0.2f>,
    Dense<10, Softmax>>;

static_assert(MnistMlp::param_count == 669'706);
// [mnist_model]

} // namespace seeds

#endif
