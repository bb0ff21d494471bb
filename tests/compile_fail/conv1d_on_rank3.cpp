// compile_fail.conv1d_on_rank3: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [conv1d_on_rank3]
using Model = Sequential<Input<Shape<28, 28, 1>>, Conv1D<32, 3>>;
// [conv1d_on_rank3]
#else
// [conv1d_on_rank3_fixed]
using Model = Sequential<Input<Shape<28, 28>>, Conv1D<32, 3>>;
// [conv1d_on_rank3_fixed]
static_assert(Model::valid && Model::param_count == 3 * 28 * 32 + 32);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
