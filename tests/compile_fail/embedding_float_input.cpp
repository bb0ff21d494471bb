// compile_fail.embedding_float_input: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [embedding_float_input]
using Model = Sequential<Input<Shape<10>>, Embedding<100, 8>>;
// [embedding_float_input]
#else
// [embedding_float_input_fixed]
using Model = Sequential<Input<Shape<10>, std::int32_t>, Embedding<100, 8>>;
// [embedding_float_input_fixed]
static_assert(Model::valid && Model::param_count == 800);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
