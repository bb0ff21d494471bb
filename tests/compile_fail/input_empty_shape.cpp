// compile_fail.input_empty_shape: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [input_empty_shape]
using Model = Sequential<Input<Shape<28, 0>>, Flatten>;
// [input_empty_shape]
#else
// [input_empty_shape_fixed]
using Model = Sequential<Input<Shape<28, 1>>, Flatten>;
// [input_empty_shape_fixed]
static_assert(Model::valid && Model::layer_count == 1);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
