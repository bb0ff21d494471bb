// compile_fail.lstm_on_rank3: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [lstm_on_rank3]
using Model = Sequential<Input<Shape<28, 28, 1>>, Conv2D<8, 3>, LSTM<16>, Dense<10>>;
// [lstm_on_rank3]
#else
// [lstm_on_rank3_fixed]
using Model = Sequential<Input<Shape<28, 28>>, LSTM<16>, Dense<10>>;   // rows as steps, columns as features
// [lstm_on_rank3_fixed]
static_assert(Model::valid && Model::layer<0>::param_count == 4 * 16 * (28 + 16 + 1));
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
