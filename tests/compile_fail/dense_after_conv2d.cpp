// compile_fail.dense_after_conv2d: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [dense_after_conv2d]
using Model = Sequential<Input<Shape<28, 28, 1>>, Conv2D<64, 3>, Dense<10>, Activation<Softmax>>;
// [dense_after_conv2d]
#else
// [dense_after_conv2d_fixed]
using Model = Sequential<Input<Shape<28, 28, 1>>, Conv2D<64, 3>, Flatten, Dense<10>, Activation<Softmax>>;
// [dense_after_conv2d_fixed]
static_assert(Model::valid && Model::param_count == 640 + 43264 * 10 + 10);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
