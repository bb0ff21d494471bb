// compile_fail.pool_zero_size: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [pool_zero_size]
using Model = Sequential<Input<Shape<8, 8, 1>>, MaxPool2D<0>>;
// [pool_zero_size]
#else
// [pool_zero_size_fixed]
using Model = Sequential<Input<Shape<8, 8, 1>>, MaxPool2D<1>>;
// [pool_zero_size_fixed]
static_assert(Model::valid && std::is_same_v<Model::output_shape, Shape<8, 8, 1>>);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
