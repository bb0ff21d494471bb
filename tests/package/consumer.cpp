// A user's program: declares a model, checks it at compile time, prints its summary.
#include <tpudsl/tpudsl.hpp>

using namespace tpudsl;

using Model = Sequential<Input<Shape<28, 28, 1>>, Flatten, Dense<10, Softmax>>;
static_assert(Model::param_count == 7'850);

int
main()
{
    summary<Model>();
}
