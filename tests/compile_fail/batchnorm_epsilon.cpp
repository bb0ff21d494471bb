// compile_fail.batchnorm_epsilon: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [batchnorm_epsilon]
using Model = Sequential<Input<Shape<16>>, Dense<8>, BatchNormalization<0.99f, 0.0f>>;
// [batchnorm_epsilon]
#else
// [batchnorm_epsilon_fixed]
using Model = Sequential<Input<Shape<16>>, Dense<8>, BatchNormalization<0.99f, 1e-5f>>;
// [batchnorm_epsilon_fixed]
static_assert(Model::valid && Model::param_count == 16 * 8 + 8 + 4 * 8);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
