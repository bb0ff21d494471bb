// compile_fail.sequential_empty: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [sequential_empty]
using Model = Sequential<Input<Shape<10>>>;
// [sequential_empty]
#else
// [sequential_empty_fixed]
using Model = Sequential<Input<Shape<10>>, Flatten>;
// [sequential_empty_fixed]
static_assert(Model::valid && Model::layer_count == 1);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
