// compile_fail.bare_activation: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [bare_activation]
using Model = Sequential<Input<Shape<10>>, Dense<4>, Relu>;
// [bare_activation]
#else
// [bare_activation_fixed]
using Model = Sequential<Input<Shape<10>>, Dense<4>, Activation<Relu>>;
// [bare_activation_fixed]
static_assert(Model::valid && Model::layer_count == 2);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
