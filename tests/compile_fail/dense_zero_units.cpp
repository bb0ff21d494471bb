// compile_fail.dense_zero_units: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [dense_zero_units]
using Model = Sequential<Input<Shape<10>>, Dense<0>>;
// [dense_zero_units]
#else
// [dense_zero_units_fixed]
using Model = Sequential<Input<Shape<10>>, Dense<1>>;
// [dense_zero_units_fixed]
static_assert(Model::valid && Model::param_count == 11);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
