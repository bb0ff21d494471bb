// compile_fail.conv_kernel_too_large: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [conv_kernel_too_large]
using Model = Sequential<Input<Shape<8, 8, 3>>, Conv2D<32, 3>, MaxPool2D<2>, Conv2D<64, 5>>;
// [conv_kernel_too_large]
#else
// [conv_kernel_too_large_fixed]
using Model = Sequential<Input<Shape<8, 8, 3>>, Conv2D<32, 3>, MaxPool2D<2>, Conv2D<64, 5, Linear, Same>>;
// [conv_kernel_too_large_fixed]
static_assert(Model::valid && std::is_same_v<Model::output_shape, Shape<3, 3, 64>>);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
