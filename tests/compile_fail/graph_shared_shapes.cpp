// compile_fail.graph_shared_shapes: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/functional.hpp>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [graph_shared_shapes]
// One Dense called on 16 features, then on 8: its kernel cannot be (16, 8) and (8, 8) at once.
using Tied = Functional<Node<"x", Input<Shape<16>>>,
                        Node<"encode", Dense<8, Relu>>,
                        Node<"encode_again", Shared<"encode">>,
                        Node<"head", Dense<2>>>;
// [graph_shared_shapes]
#else
// [graph_shared_shapes_fixed]
using Tied = Functional<Node<"x", Input<Shape<16>>>,
                        Node<"encode", Dense<16, Relu>>,
                        Node<"encode_again", Shared<"encode">>,
                        Node<"head", Dense<2>>>;
// [graph_shared_shapes_fixed]
static_assert(Tied::valid && Tied::param_count == 16 * 16 + 16 + 16 * 2 + 2);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Tied::layer_count;
