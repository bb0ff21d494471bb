// compile_fail.loss_sparse_on_sigmoid: SparseCategoricalCrossentropy reads a distribution over classes;
// on a 1-unit sigmoid output it is refused, naming the loss, the output layer and its shape.
#include <tpudsl/tpudsl.hpp>

using namespace tpudsl;

using Sentiment = Sequential<Input<Shape<20>, std::int32_t>, Embedding<1000, 16>, GlobalAveragePooling1D,
                             Dense<16, Relu>, Dense<1, Sigmoid>>;

void
compile(Trainable<Sentiment>& model)
{
#ifdef TPUDSL_COMPILE_FAIL
    // [loss_sparse_on_sigmoid]
    model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{});
    // [loss_sparse_on_sigmoid]
#else
    // [loss_sparse_on_sigmoid_fixed]
    model.compile(optimizers::Adam{}, losses::BinaryCrossentropy{}, metrics::BinaryAccuracy{});
    // [loss_sparse_on_sigmoid_fixed]
#endif
}
