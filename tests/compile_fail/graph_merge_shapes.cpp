// compile_fail.graph_merge_shapes: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/functional.hpp>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [graph_merge_shapes]
using Residual = Functional<Node<"image", Input<Shape<32, 32, 32>>>,
                            Node<"conv_a", Conv2D<16, 3, Relu, Same>>,
                            Node<"conv_b", Conv2D<16, 3, Linear, Same>>,
                            Node<"add", Add, "conv_b", "image">>;
// [graph_merge_shapes]
#else
// [graph_merge_shapes_fixed]
using Residual = Functional<Node<"image", Input<Shape<32, 32, 32>>>,
                            Node<"conv_a", Conv2D<16, 3, Relu, Same>>,
                            Node<"conv_b", Conv2D<32, 3, Linear, Same>>,
                            Node<"add", Add, "conv_b", "image">>;
// [graph_merge_shapes_fixed]
static_assert(Residual::valid && Residual::param_count == 4624 + 4640);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Residual::layer_count;
