// compile_fail.embedding_zero_vocab: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [embedding_zero_vocab]
using Model = Sequential<Input<Shape<10>, std::int32_t>, Embedding<0, 8>>;
// [embedding_zero_vocab]
#else
// [embedding_zero_vocab_fixed]
using Model = Sequential<Input<Shape<10>, std::int32_t>, Embedding<1, 8>>;
// [embedding_zero_vocab_fixed]
static_assert(Model::valid && Model::param_count == 8);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
