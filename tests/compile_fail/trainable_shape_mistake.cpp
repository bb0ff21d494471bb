// compile_fail.trainable_shape_mistake: a model with a shape mistake, trained, is one error: the
// layer's message with the shapes, and nothing from the engine that would have trained it.
#include <tpudsl/tpudsl.hpp>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
using Model = Sequential<Input<Shape<28, 28, 1>>, Conv2D<8, 3, Relu>, Dense<10, Softmax>>;
#else
using Model = Sequential<Input<Shape<28, 28, 1>>, Conv2D<8, 3, Relu>, Flatten, Dense<10, Softmax>>;
#endif

Scores
train(const xt::xtensor<float, 4>& x, const xt::xtensor<std::int32_t, 1>& y)
{
    Trainable<Model> model(1);
    model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    const History h = model.fit(x, y);
    model.summary();
    return model.evaluate(x, y);
}
