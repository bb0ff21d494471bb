// compile_fail.loss_binary_on_softmax: BinaryCrossentropy reads each output as a probability of its own;
// on a softmax over ten classes it is refused, naming the loss, the output layer and its shape.
#include <tpudsl/tpudsl.hpp>

using namespace tpudsl;

using Classifier = Sequential<Input<Shape<784>>, Dense<64, Relu>, Dense<10, Softmax>>;

void
compile(Trainable<Classifier>& model)
{
#ifdef TPUDSL_COMPILE_FAIL
    model.compile(optimizers::Adam{}, losses::BinaryCrossentropy{});
#else
    model.compile(optimizers::Adam{}, losses::CategoricalCrossentropy{}, metrics::CategoricalAccuracy{});
#endif
}
