// compile_fail.conv_zero_filters: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [conv_zero_filters]
using Model = Sequential<Input<Shape<8, 8, 1>>, Conv2D<0, 3>>;
// [conv_zero_filters]
#else
// [conv_zero_filters_fixed]
using Model = Sequential<Input<Shape<8, 8, 1>>, Conv2D<1, 3>>;
// [conv_zero_filters_fixed]
static_assert(Model::valid && Model::param_count == 10);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
