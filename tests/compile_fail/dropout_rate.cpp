// compile_fail.dropout_rate: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [dropout_rate]
using Model = Sequential<Input<Shape<10>>, Dense<4>, Dropout<1.0f>>;
// [dropout_rate]
#else
// [dropout_rate_fixed]
using Model = Sequential<Input<Shape<10>>, Dense<4>, Dropout<0.99f>>;
// [dropout_rate_fixed]
static_assert(Model::valid && Model::param_count == 44);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
