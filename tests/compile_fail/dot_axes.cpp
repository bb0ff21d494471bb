// compile_fail.dot_axes: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/functional.hpp>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [dot_axes]
// Scores of queries (6, 8) against keys (6, 4): their last axes differ.
using Scores = Functional<Node<"tokens", Input<Shape<6, 8>>>,
                          Node<"keys", Conv1D<4, 1>, "tokens">,
                          Node<"scores", Dot<2, 2>, "tokens", "keys">>;
// [dot_axes]
#else
// [dot_axes_fixed]
using Scores = Functional<Node<"tokens", Input<Shape<6, 8>>>,
                          Node<"keys", Conv1D<8, 1>, "tokens">,
                          Node<"scores", Dot<2, 2>, "tokens", "keys">>;
// [dot_axes_fixed]
static_assert(std::is_same_v<Scores::output_shape, Shape<6, 6>>);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Scores::layer_count;
