// compile_fail.concatenate_shapes: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/functional.hpp>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [concatenate_shapes]
using Residual = Functional<Node<"image", Input<Shape<8, 8, 3>>>, Node<"pool", MaxPool2D<2>>,
                            Node<"both", Concatenate<>, "image", "pool">>;
// [concatenate_shapes]
#else
// [concatenate_shapes_fixed]
using Residual = Functional<Node<"image", Input<Shape<8, 8, 3>>>, Node<"up", Conv2D<3, 1>>,
                            Node<"both", Concatenate<>, "up", "image">>;
// [concatenate_shapes_fixed]
static_assert(std::is_same_v<Residual::output_shape, Shape<8, 8, 6>>);
#endif
// Instantiates the model (and so its checks) without adding an error of its own.
[[maybe_unused]] constexpr std::size_t layers = Residual::layer_count;
