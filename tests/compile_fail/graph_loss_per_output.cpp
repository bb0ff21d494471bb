// compile_fail.graph_loss_per_output: a graph of two outputs compiles with a loss per output, not one
// loss for both (Keras' loss=[...] is tpudsl's PerOutput{...}).
#include <tpudsl/functional.hpp>
#include <tpudsl/tpudsl.hpp>

using namespace tpudsl;

using TwoHeads = Functional<Node<"x", Input<Shape<4>>>, Node<"hidden", Dense<8, Relu>>,
                            Node<"label", Dense<3, Softmax>, "hidden">, Node<"value", Dense<1>, "hidden">,
                            Outputs<"label", "value">>;

void
compile(Trainable<TwoHeads>& model)
{
#ifdef TPUDSL_COMPILE_FAIL
    // [graph_loss_per_output]
    model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{});
    // [graph_loss_per_output]
#else
    // [graph_loss_per_output_fixed]
    model.compile(optimizers::Adam{}, PerOutput{losses::SparseCategoricalCrossentropy{}, losses::MeanSquaredError{}});
    // [graph_loss_per_output_fixed]
#endif
}
