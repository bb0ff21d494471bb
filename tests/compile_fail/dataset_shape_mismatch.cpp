// compile_fail.dataset_shape_mismatch: a dataset of the wrong example shape does not feed a model.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

using Model = Sequential<Input<Shape<28, 28, 1>>, Flatten, Dense<10, Softmax>>;

void
train(Trainable<Model>& model,
#ifdef TPUDSL_COMPILE_FAIL
      // [dataset_shape_mismatch]
      const Dataset<Batch<Example<Shape<784>>, 32>>& data)
// [dataset_shape_mismatch]
#else
      // [dataset_shape_mismatch_fixed]
      const Dataset<Batch<Example<Shape<28, 28, 1>>, 32>>& data)
// [dataset_shape_mismatch_fixed]
#endif
{
    model.fit(data);
}
