// compile_fail.conv1d_kernel_too_large: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [conv1d_kernel_too_large]
using Model = Sequential<Input<Shape<4, 8>>, Conv1D<16, 5>>;
// [conv1d_kernel_too_large]
#else
// [conv1d_kernel_too_large_fixed]
using Model = Sequential<Input<Shape<4, 8>>, Conv1D<16, 4>>;
// [conv1d_kernel_too_large_fixed]
static_assert(Model::valid && std::is_same_v<Model::output_shape, Shape<1, 16>>);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
