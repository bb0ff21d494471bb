// compile_fail.embedding_not_first: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [embedding_not_first]
using Model = Sequential<Input<Shape<10>, std::int32_t>, Embedding<100, 8>, Flatten, Embedding<100, 8>>;
// [embedding_not_first]
#else
// [embedding_not_first_fixed]
using Model = Sequential<Input<Shape<10>, std::int32_t>, Embedding<100, 8>, Flatten>;
// [embedding_not_first_fixed]
static_assert(Model::valid && Model::param_count == 800);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
