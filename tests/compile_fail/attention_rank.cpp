// compile_fail.attention_rank: cross-attention reads sequences; a query that is a vector (a Dense's
// output) is refused, naming the attention's node, the query's producer and the input at fault.
#include <tpudsl/functional.hpp>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [attention_rank]
using Summary = Functional<Node<"text", Input<Shape<20, 16>>>,
                           Node<"mean", GlobalAveragePooling1D>,
                           Node<"query", Dense<16, Tanh>>,
                           Node<"att", MultiHeadAttention<2, 8>, "query", "text">>;
// [attention_rank]
#else
// [attention_rank_fixed]
using Summary = Functional<Node<"text", Input<Shape<20, 16>>>,
                           Node<"mean", GlobalAveragePooling1D>,
                           Node<"dense", Dense<16, Tanh>>,
                           Node<"query", RepeatVector<1>>,   // (1, 16): a query of one position
                           Node<"att", MultiHeadAttention<2, 8>, "query", "text">>;
// [attention_rank_fixed]
static_assert(Summary::valid && std::is_same_v<Summary::output_shape, Shape<1, 16>>);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Summary::layer_count;
