// compile_fail.layernorm_epsilon: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstddef>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [layernorm_epsilon]
using Model = Sequential<Input<Shape<10, 16>>, Conv1D<8, 3>, LayerNormalization<-1e-3f>>;
// [layernorm_epsilon]
#else
// [layernorm_epsilon_fixed]
using Model = Sequential<Input<Shape<10, 16>>, Conv1D<8, 3>, LayerNormalization<1e-3f>>;
// [layernorm_epsilon_fixed]
static_assert(Model::valid && Model::param_count == 3 * 16 * 8 + 8 + 2 * 8);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
