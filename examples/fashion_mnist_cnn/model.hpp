/// @file The Fashion-MNIST seed's model: one convolution, pooling, a dense classifier.
#ifndef TPUDSL_EXAMPLES_FASHION_MNIST_CNN_MODEL_HPP
#define TPUDSL_EXAMPLES_FASHION_MNIST_CNN_MODEL_HPP

#include <tpudsl/model.hpp>

#include <array>
#include <cstddef>
#include <type_traits>

namespace seeds {

// [fashion_model]
using namespace tpudsl;

using FashionCnn = Sequential<
    Input<Shape<28, 28, 1>>,           // grey 28x28 images
    Conv2D<64, 3>,                     // (26, 26, 64)
    MaxPool2D<2>,                      // (13, 13, 64)
    Activation<Relu>,
    Flatten,                           // (10816)
    Dense<10>,
    Activation<Softmax>>;

static_assert(FashionCnn::param_count == 108'810);
static_assert(FashionCnn::layer<0>::weight<0>::shape::dims == std::array<std::size_t, 4>{3, 3, 1, 64});
// [fashion_model]

} // namespace seeds

#endif
