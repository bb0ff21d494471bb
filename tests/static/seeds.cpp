// Static tests of the four seed models: counts, shapes, weight layout and workspace.
#include "cifar10_cnn/model.hpp"
#include "fashion_mnist_cnn/model.hpp"
#include "mnist_mlp/model.hpp"
#include "reuters_conv1d/model.hpp"

#include <tpudsl/ops/graph.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

using namespace tpudsl;
using seeds::Cifar10Cnn;
using seeds::FashionCnn;
using seeds::MnistMlp;
using seeds::Reuters;

// Reuters, layer by layer (keras-semantics §1.1)
// [layer_constants]
static_assert(std::is_same_v<Reuters::input_shape, Shape<300>> && std::is_same_v<Reuters::input_type, std::int32_t>);
static_assert(Reuters::layer_count == 7);
static_assert(std::is_same_v<Reuters::layer<0>::output_shape, Shape<300, 7>> && Reuters::layer<0>::param_count == 216'874);
static_assert(std::is_same_v<Reuters::layer<1>::output_shape, Shape<296, 64>> && Reuters::layer<1>::param_count == 2'304);
static_assert(std::is_same_v<Reuters::layer<2>::output_shape, Shape<148, 64>> && Reuters::layer<2>::param_count == 0);
static_assert(std::is_same_v<Reuters::layer<3>::output_shape, Shape<146, 32>> && Reuters::layer<3>::param_count == 6'176);
static_assert(std::is_same_v<Reuters::layer<4>::output_shape, Shape<73, 32>>);
static_assert(std::is_same_v<Reuters::layer<5>::output_shape, Shape<2336>>);
static_assert(std::is_same_v<Reuters::layer<6>::output_shape, Shape<46>> && Reuters::layer<6>::param_count == 107'502);
// [layer_constants]

// Keras weight shapes
static_assert(std::is_same_v<Reuters::layer<0>::weight<0>::shape, Shape<30982, 7>>);
static_assert(Reuters::layer<0>::weight<0>::role == weight_role::embeddings);
static_assert(std::is_same_v<Reuters::layer<1>::weight<0>::shape, Shape<5, 7, 64>>);
static_assert(std::is_same_v<Reuters::layer<1>::weight<1>::shape, Shape<64>>);
static_assert(std::is_same_v<Reuters::layer<6>::weight<0>::shape, Shape<2336, 46>>);
static_assert(std::is_same_v<FashionCnn::layer<0>::weight<0>::shape, Shape<3, 3, 1, 64>>);
static_assert(std::is_same_v<Cifar10Cnn::layer<4>::weight<0>::shape, Shape<3, 3, 32, 64>>);
static_assert(Reuters::layer<2>::weight_count == 0);

// The flat parameter buffer: weights in order, each on a 64-byte boundary, no overlap.
// [param_layout]
static_assert(Reuters::layer<0>::weight<0>::offset == 0);
static_assert(Reuters::layer<1>::weight<0>::offset == aligned_floats(216'874));           // 216880
static_assert(Reuters::layer<1>::weight<1>::offset == 216'880 + aligned_floats(5 * 7 * 64));
static_assert(Reuters::layer<2>::param_offset == Reuters::layer<1>::param_end);
static_assert(Reuters::layer<3>::weight<0>::offset == Reuters::layer<1>::param_end);
static_assert(Reuters::layer<6>::weight<1>::offset + aligned_floats(46) == Reuters::param_buffer_size);
static_assert(Reuters::param_buffer_size == 332'864);   // 332,856 parameters + 8 floats of padding
static_assert(Reuters::layer<6>::weight<1>::offset % buffer_alignment_floats == 0);
// [param_layout]

// Output shapes of the whole models
static_assert(std::is_same_v<Reuters::output_shape, Shape<46>>);
static_assert(std::is_same_v<MnistMlp::output_shape, Shape<10>>);
static_assert(std::is_same_v<FashionCnn::output_shape, Shape<10>>);
static_assert(std::is_same_v<Cifar10Cnn::output_shape, Shape<10>>);
static_assert(std::is_same_v<Cifar10Cnn::layer<6>::output_shape, Shape<6, 6, 64>>);

// A replica's workspace, as the training graph plans it.
// [workspace]
using Fashion = ops::graph<FashionCnn>;
// Per sample of capacity: the pooled block (the absorbed Relu and the Flatten share it), the Dense and
// Softmax outputs, the pooling argmax, the softmax logits, two deltas as wide as the pooled block.
static_assert(Fashion::plan.per_sample == 4 * aligned_floats(13 * 13 * 64) + 3 * aligned_floats(10));
// Once: one sample's convolution output, which the fused pair pools as it goes.
static_assert(Fashion::plan.one_sample == aligned_floats(26 * 26 * 64));
static_assert(Fashion::workspace_floats(16) == 16 * Fashion::plan.per_sample + Fashion::plan.one_sample);
// A dense network: each Dense's output, the dropout masks and the logits, two deltas of 512.
static_assert(ops::graph<MnistMlp>::plan.per_sample ==
              4 * aligned_floats(512) + aligned_floats(10) + 2 * aligned_floats(512) + aligned_floats(10) +
                  2 * aligned_floats(512));
// [workspace]
