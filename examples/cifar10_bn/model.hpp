/// @file The CIFAR-10 seed's network as it is written today: BatchNormalization after each
/// convolution, GlobalAveragePooling2D instead of Flatten and the wide Dense.
#ifndef TPUDSL_EXAMPLES_CIFAR10_BN_MODEL_HPP
#define TPUDSL_EXAMPLES_CIFAR10_BN_MODEL_HPP

#include <tpudsl/model.hpp>

namespace seeds {

// [cifar_bn_model]
using namespace tpudsl;

using Cifar10Bn = Sequential<
    Input<Shape<32, 32, 3>>,           // RGB 32x32 images
    Conv2D<32, 3, Linear, Same>,       // (32, 32, 32)
    BatchNormalization<>,
    Activation<Relu>,
    Conv2D<32, 3>,                     // (30, 30, 32)
    BatchNormalization<>,
    Activation<Relu>,
    MaxPool2D<2>,                      // (15, 15, 32)
    Conv2D<64, 3, Linear, Same>,       // (15, 15, 64)
    BatchNormalization<>,
    Activation<Relu>,
    Conv2D<64, 3>,                     // (13, 13, 64)
    BatchNormalization<>,
    Activation<Relu>,
    GlobalAveragePooling2D,            // (64)
    Dropout<0.25f>,
    Dense<10, Softmax>>;

static_assert(Cifar10Bn::param_count == 66'986);
static_assert(Cifar10Bn::non_trainable_param_count == 384);   // the moving statistics
// [cifar_bn_model]

} // namespace seeds

#endif
