/// @file The CIFAR-10 seed's model: Keras' classic four-convolution network.
#ifndef TPUDSL_EXAMPLES_CIFAR10_CNN_MODEL_HPP
#define TPUDSL_EXAMPLES_CIFAR10_CNN_MODEL_HPP

#include <tpudsl/model.hpp>

#include <array>
#include <cstddef>
#include <type_traits>

namespace seeds {

// [cifar_model]
using namespace tpudsl;

using Cifar10Cnn = Sequential<
    Input<Shape<32, 32, 3>>,           // RGB 32x32 images
    Conv2D<32, 3, Relu, Same>,         // (32, 32, 32)
    Conv2D<32, 3, Relu>,               // (30, 30, 32)
    MaxPool2D<2>,                      // (15, 15, 32)
    Dropout<0.25f>,
    Conv2D<64, 3, Relu, Same>,         // (15, 15, 64)
    Conv2D<64, 3, Relu>,               // (13, 13, 64)
    MaxPool2D<2>,                      // (6, 6, 64)
    Dropout<0.25f>,
    Flatten,                           // (2304)
    Dense<512, Relu>,
    Dropout<0.5f>,
    Dense<10, Softmax>>;

static_assert(Cifar10Cnn::param_count == 1'250'858);
// [cifar_model]

} // namespace seeds

#endif
