// compile_fail.graph_unused_input: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/functional.hpp>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [graph_unused_input]
using Residual = Functional<Node<"tokens", Input<Shape<8>>>, Node<"meta", Input<Shape<3>>>,
                            Node<"dense", Dense<8>, "tokens">, Outputs<"dense">>;
// [graph_unused_input]
#else
// [graph_unused_input_fixed]
using Residual = Functional<Node<"tokens", Input<Shape<8>>>, Node<"meta", Input<Shape<3>>>,
                            Node<"dense", Dense<8>, "tokens">, Node<"m", Dense<8>, "meta">,
                            Node<"both", Add, "dense", "m">, Outputs<"both">>;
// [graph_unused_input_fixed]
static_assert(Residual::valid && Residual::input_count == 2);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Residual::layer_count;
