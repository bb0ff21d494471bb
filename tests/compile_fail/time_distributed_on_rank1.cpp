// compile_fail.time_distributed_on_rank1: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <type_traits>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [time_distributed_on_rank1]
using Model = Sequential<Input<Shape<160>>, TimeDistributed<Dense<5, Softmax>>>;
// [time_distributed_on_rank1]
#else
// [time_distributed_on_rank1_fixed]
using Model = Sequential<Input<Shape<160>>, Dense<5, Softmax>>;
// [time_distributed_on_rank1_fixed]
static_assert(Model::valid && std::is_same_v<Model::output_shape, Shape<5>>);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
