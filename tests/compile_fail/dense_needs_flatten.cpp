// compile_fail.dense_needs_flatten: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [dense_needs_flatten]
using Model = Sequential<Input<Shape<28, 28, 1>>, Dense<10>>;
// [dense_needs_flatten]
#else
// [dense_needs_flatten_fixed]
using Model = Sequential<Input<Shape<28, 28, 1>>, Flatten, Dense<10>>;
// [dense_needs_flatten_fixed]
static_assert(Model::valid && Model::param_count == 7850);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
