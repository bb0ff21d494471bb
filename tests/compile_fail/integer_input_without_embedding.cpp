// compile_fail.integer_input_without_embedding: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [integer_input_without_embedding]
using Model = Sequential<Input<Shape<10>, std::int32_t>, Dense<4>>;
// [integer_input_without_embedding]
#else
// [integer_input_without_embedding_fixed]
using Model = Sequential<Input<Shape<10>>, Dense<4>>;
// [integer_input_without_embedding_fixed]
static_assert(Model::valid && Model::param_count == 44);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Model::layer_count;
