// compile_fail.metric_labels: a metric reads the labels its loss reads; SparseCategoricalAccuracy (class
// ids) beside CategoricalCrossentropy (one-hot targets) is refused, naming both.
#include <tpudsl/tpudsl.hpp>

using namespace tpudsl;

using Classifier = Sequential<Input<Shape<784>>, Dense<64, Relu>, Dense<10, Softmax>>;

void
compile(Trainable<Classifier>& model)
{
#ifdef TPUDSL_COMPILE_FAIL
    model.compile(optimizers::Adam{}, losses::CategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
#else
    model.compile(optimizers::Adam{}, losses::CategoricalCrossentropy{}, metrics::CategoricalAccuracy{});
#endif
}
