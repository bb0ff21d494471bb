// compile_fail.reshape_size: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/model.hpp>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [reshape_size]
using Model = Sequential<Input<Shape<28, 28>>, Reshape<28, 27>, Conv1D<8, 3>>;
// [reshape_size]
#else
// [reshape_size_fixed]
using Model = Sequential<Input<Shape<28, 28>>, Reshape<28, 28>, Conv1D<8, 3>>;
// [reshape_size_fixed]
static_assert(Model::valid);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
