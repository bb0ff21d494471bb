// compile_fail.graph_unknown_source: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/functional.hpp>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [graph_unknown_source]
using Residual = Functional<Node<"image", Input<Shape<8>>>, Node<"dense", Dense<8>, "imgae">,
                            Node<"add", Add, "dense", "image">>;
// [graph_unknown_source]
#else
// [graph_unknown_source_fixed]
using Residual = Functional<Node<"image", Input<Shape<8>>>, Node<"dense", Dense<8>, "image">,
                            Node<"add", Add, "dense", "image">>;
// [graph_unknown_source_fixed]
static_assert(Residual::valid);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Residual::layer_count;
