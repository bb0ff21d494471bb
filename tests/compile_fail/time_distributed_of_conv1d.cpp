// compile_fail.time_distributed_of_conv1d: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <type_traits>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [time_distributed_of_conv1d]
using Model = Sequential<Input<Shape<20, 8>>, TimeDistributed<Conv1D<4, 3>>>;
// [time_distributed_of_conv1d]
#else
// [time_distributed_of_conv1d_fixed]
using Model = Sequential<Input<Shape<20, 8>>, TimeDistributed<Dense<4>>>;
// [time_distributed_of_conv1d_fixed]
static_assert(Model::valid && std::is_same_v<Model::output_shape, Shape<20, 4>>);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
