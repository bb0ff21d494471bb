// compile_fail.conv2d_on_rank1: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [conv2d_on_rank1]
using Model = Sequential<Input<Shape<784>>, Conv2D<32, 3>>;
// [conv2d_on_rank1]
#else
// [conv2d_on_rank1_fixed]
using Model = Sequential<Input<Shape<28, 28, 1>>, Conv2D<32, 3>>;
// [conv2d_on_rank1_fixed]
static_assert(Model::valid && Model::param_count == 320);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
