/// @file The Reuters seed's model: a Conv1D text classifier over 300 token ids.
#ifndef TPUDSL_EXAMPLES_REUTERS_CONV1D_MODEL_HPP
#define TPUDSL_EXAMPLES_REUTERS_CONV1D_MODEL_HPP

#include <tpudsl/model.hpp>

#include <array>
#include <cstddef>
#include <type_traits>

#include <cstdint>

namespace seeds {

// [reuters_model]
using namespace tpudsl;

using Reuters = Sequential<
    Input<Shape<300>, std::int32_t>,   // 300 token ids per newswire
    Embedding<30982, 7>,               // (300, 7)
    Conv1D<64, 5, Relu>,               // (296, 64)
    MaxPool1D<2>,                      // (148, 64)
    Conv1D<32, 3, Relu>,               // (146, 32)
    MaxPool1D<2>,                      // (73, 32)
    Flatten,                           // (2336)
    Dense<46, Softmax>>;               // 46 topics

static_assert(Reuters::param_count == 332'856);   // known before the program runs
static_assert(std::is_same_v<Reuters::output_shape, Shape<46>>);
// [reuters_model]

} // namespace seeds

#endif
