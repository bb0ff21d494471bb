// compile_fail.dataset_label_type: a dataset's labels are int32 class ids or float targets; another
// element type is converted where the dataset is made, not in every step.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

using Model = Sequential<Input<Shape<4>>, Dense<3, Softmax>>;

void
train(Trainable<Model>& model,
#ifdef TPUDSL_COMPILE_FAIL
      // [dataset_label_type]
      const Dataset<Batch<Example<Shape<4>, float, std::uint8_t>, 32>>& data)
// [dataset_label_type]
#else
      // [dataset_label_type_fixed]
      const Dataset<Batch<Example<Shape<4>, float, std::int32_t>, 32>>& data)
// [dataset_label_type_fixed]
#endif
{
    model.fit(data);
}
