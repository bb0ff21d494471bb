// compile_fail.lstm_on_rank1: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [lstm_on_rank1]
using Model = Sequential<Input<Shape<300>>, LSTM<64>, Dense<46, Softmax>>;
// [lstm_on_rank1]
#else
// [lstm_on_rank1_fixed]
using Model = Sequential<Input<Shape<300>, std::int32_t>, Embedding<30982, 7>, LSTM<64>, Dense<46, Softmax>>;
// [lstm_on_rank1_fixed]
static_assert(Model::valid && Model::layer<1>::param_count == 18'432);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
