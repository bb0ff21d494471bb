// compile_fail.batchnorm_momentum: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [batchnorm_momentum]
using Model = Sequential<Input<Shape<8, 8, 3>>, Conv2D<4, 3>, BatchNormalization<1.5f>>;
// [batchnorm_momentum]
#else
// [batchnorm_momentum_fixed]
using Model = Sequential<Input<Shape<8, 8, 3>>, Conv2D<4, 3>, BatchNormalization<0.9f>>;
// [batchnorm_momentum_fixed]
static_assert(Model::valid && Model::param_count == 3 * 3 * 3 * 4 + 4 + 4 * 4);
static_assert(Model::non_trainable_param_count == 8);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
