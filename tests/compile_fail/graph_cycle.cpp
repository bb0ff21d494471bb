// compile_fail.graph_cycle: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/functional.hpp>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [graph_cycle]
using Residual = Functional<Node<"image", Input<Shape<8>>>, Node<"dense", Dense<8>, "add">,
                            Node<"add", Add, "dense", "image">>;
// [graph_cycle]
#else
// [graph_cycle_fixed]
using Residual = Functional<Node<"image", Input<Shape<8>>>, Node<"dense", Dense<8>, "image">,
                            Node<"add", Add, "dense", "image">>;
// [graph_cycle_fixed]
static_assert(Residual::valid);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Residual::layer_count;
