// compile_fail.pool_window_too_large: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [pool_window_too_large]
using Model = Sequential<Input<Shape<3, 8>>, MaxPool1D<4>>;
// [pool_window_too_large]
#else
// [pool_window_too_large_fixed]
using Model = Sequential<Input<Shape<3, 8>>, MaxPool1D<4, 4, Same>>;
// [pool_window_too_large_fixed]
static_assert(Model::valid && std::is_same_v<Model::output_shape, Shape<1, 8>>);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
