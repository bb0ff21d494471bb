// compile_fail.gru_zero_units: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [gru_zero_units]
using Model = Sequential<Input<Shape<20, 4>>, GRU<0>, Dense<2>>;
// [gru_zero_units]
#else
// [gru_zero_units_fixed]
using Model = Sequential<Input<Shape<20, 4>>, GRU<8>, Dense<2>>;
// [gru_zero_units_fixed]
static_assert(Model::valid && Model::layer<0>::param_count == 3 * 8 * (4 + 8 + 2));
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
