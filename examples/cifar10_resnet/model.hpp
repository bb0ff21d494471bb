/// @file ResNet-20 v1 for CIFAR-10 (He et al. 2016; Keras' classic cifar10_resnet example): a stem, three
/// stages of three residual blocks (16, 32 and 64 filters; the first block of the second and third
/// stages halves the image and widens the filters through a 1x1 projection shortcut),
/// BatchNormalization after every convolution, GlobalAveragePooling2D and a softmax head. 274,442
/// parameters, as Keras counts them.
#ifndef TPUDSL_EXAMPLES_CIFAR10_RESNET_MODEL_HPP
#define TPUDSL_EXAMPLES_CIFAR10_RESNET_MODEL_HPP

#include <tpudsl/functional.hpp>

#include <cstddef>

namespace seeds {

// [resnet_blocks]
using namespace tpudsl;

// y = conv-BN-relu(x); y = conv-BN(y); x = relu(x + y): Keras' resnet_v1 block. The block's last node
// carries its name, so the next block reads it by that name.
template <name_literal Name, name_literal From, std::size_t Filters>
using IdentityBlock = Block<
    Node<Name + "_conv1", Conv2D<Filters, 3, Linear, Same>, From>,
    Node<Name + "_bn1", BatchNormalization<>>,
    Node<Name + "_relu1", Activation<Relu>>,
    Node<Name + "_conv2", Conv2D<Filters, 3, Linear, Same>>,
    Node<Name + "_bn2", BatchNormalization<>>,
    Node<Name + "_add", Add, From, Name + "_bn2">,
    Node<Name, Activation<Relu>>>;

// The first block of a stage: stride 2, and a 1x1 convolution of stride 2 on the shortcut.
template <name_literal Name, name_literal From, std::size_t Filters>
using ProjectionBlock = Block<
    Node<Name + "_conv1", Conv2D<Filters, 3, Linear, Same, 2>, From>,
    Node<Name + "_bn1", BatchNormalization<>>,
    Node<Name + "_relu1", Activation<Relu>>,
    Node<Name + "_conv2", Conv2D<Filters, 3, Linear, Same>>,
    Node<Name + "_bn2", BatchNormalization<>>,
    Node<Name + "_shortcut", Conv2D<Filters, 1, Linear, Same, 2>, From>,
    Node<Name + "_add", Add, Name + "_shortcut", Name + "_bn2">,
    Node<Name, Activation<Relu>>>;
// [resnet_blocks]

// [resnet_model]
// A struct of its own rather than an alias: the compiler's symbols then name `ResNet20`, not its 70
// nodes, and the program compiles in less time (docs/model.md).
struct ResNet20 : Functional<
    Node<"image", Input<Shape<32, 32, 3>>>,
    Node<"stem_conv", Conv2D<16, 3, Linear, Same>>,                 // (32, 32, 16)
    Node<"stem_bn", BatchNormalization<>>,
    Node<"stem", Activation<Relu>>,
    IdentityBlock<"stage1_block1", "stem", 16>,
    IdentityBlock<"stage1_block2", "stage1_block1", 16>,
    IdentityBlock<"stage1_block3", "stage1_block2", 16>,
    ProjectionBlock<"stage2_block1", "stage1_block3", 32>,          // (16, 16, 32)
    IdentityBlock<"stage2_block2", "stage2_block1", 32>,
    IdentityBlock<"stage2_block3", "stage2_block2", 32>,
    ProjectionBlock<"stage3_block1", "stage2_block3", 64>,          // (8, 8, 64)
    IdentityBlock<"stage3_block2", "stage3_block1", 64>,
    IdentityBlock<"stage3_block3", "stage3_block2", 64>,
    Node<"pool", GlobalAveragePooling2D>,                           // (64)
    Node<"classes", Dense<10, Softmax>>> {};

static_assert(ResNet20::param_count == 274'442);
static_assert(ResNet20::non_trainable_param_count == 1'376);   // the moving statistics
// [resnet_model]

} // namespace seeds

#endif
