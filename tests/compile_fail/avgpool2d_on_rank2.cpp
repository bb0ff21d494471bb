// compile_fail.avgpool2d_on_rank2: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <type_traits>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [avgpool2d_on_rank2]
using Model = Sequential<Input<Shape<28, 28>>, AveragePooling2D<2>>;
// [avgpool2d_on_rank2]
#else
// [avgpool2d_on_rank2_fixed]
using Model = Sequential<Input<Shape<28, 28, 1>>, AveragePooling2D<2>>;
// [avgpool2d_on_rank2_fixed]
static_assert(Model::valid && std::is_same_v<Model::output_shape, Shape<14, 14, 1>>);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
