// compile_fail.conv_zero_stride: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [conv_zero_stride]
using Model = Sequential<Input<Shape<16, 2>>, Conv1D<4, 3, Relu, Valid, 0>>;
// [conv_zero_stride]
#else
// [conv_zero_stride_fixed]
using Model = Sequential<Input<Shape<16, 2>>, Conv1D<4, 3, Relu, Valid, 2>>;
// [conv_zero_stride_fixed]
static_assert(Model::valid && std::is_same_v<Model::output_shape, Shape<7, 4>>);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
