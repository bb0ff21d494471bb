// compile_fail.attention_lengths: the value and the key of an attention are one sequence's two views:
// of one length. A key pooled to half the value's length is refused.
#include <tpudsl/functional.hpp>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [attention_lengths]
using Pooled = Functional<Node<"x", Input<Shape<12, 8>>>,
                          Node<"keys", MaxPool1D<2>, "x">,
                          Node<"att", MultiHeadAttention<2, 4>, "x", "x", "keys">>;
// [attention_lengths]
#else
// [attention_lengths_fixed]
using Pooled = Functional<Node<"x", Input<Shape<12, 8>>>,
                          Node<"keys", MaxPool1D<2>, "x">,
                          Node<"values", AveragePooling1D<2>, "x">,
                          Node<"att", MultiHeadAttention<2, 4>, "x", "values", "keys">>;
// [attention_lengths_fixed]
static_assert(Pooled::valid && std::is_same_v<Pooled::output_shape, Shape<12, 8>>);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Pooled::layer_count;
