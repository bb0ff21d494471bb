// compile_fail.global_pool1d_on_rank3: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <type_traits>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [global_pool1d_on_rank3]
using Model = Sequential<Input<Shape<32, 32, 3>>, Conv2D<16, 3>, GlobalMaxPooling1D>;
// [global_pool1d_on_rank3]
#else
// [global_pool1d_on_rank3_fixed]
using Model = Sequential<Input<Shape<32, 32, 3>>, Conv2D<16, 3>, GlobalMaxPooling2D>;
// [global_pool1d_on_rank3_fixed]
static_assert(Model::valid && std::is_same_v<Model::output_shape, Shape<16>>);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
