// compile_fail.sequential_needs_input: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [sequential_needs_input]
using Model = Sequential<Shape<10>, Dense<4>>;
// [sequential_needs_input]
#else
// [sequential_needs_input_fixed]
using Model = Sequential<Input<Shape<10>>, Dense<4>>;
// [sequential_needs_input_fixed]
static_assert(Model::valid && Model::layer_count == 1);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
