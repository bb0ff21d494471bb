// compile_fail.global_pool2d_on_rank1: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <type_traits>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [global_pool2d_on_rank1]
using Model = Sequential<Input<Shape<784>>, GlobalAveragePooling2D, Dense<10>>;
// [global_pool2d_on_rank1]
#else
// [global_pool2d_on_rank1_fixed]
using Model = Sequential<Input<Shape<28, 28, 1>>, GlobalAveragePooling2D, Dense<10>>;
// [global_pool2d_on_rank1_fixed]
static_assert(Model::valid && std::is_same_v<Model::layer<0>::output_shape, Shape<1>>);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
