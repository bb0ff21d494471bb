// compile_fail.dense_on_rank2: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <type_traits>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [dense_on_rank2]
using Model = Sequential<Input<Shape<20, 8>>, Dense<5, Softmax>>;
// [dense_on_rank2]
#else
// [dense_on_rank2_fixed]
using Model = Sequential<Input<Shape<20, 8>>, TimeDistributed<Dense<5, Softmax>>>;
// [dense_on_rank2_fixed]
static_assert(Model::valid && Model::param_count == 45);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
