// The TimeDistributed model of the one-step checks against Keras (keras_side.py builds the same layers
// in the same order): a per-timestep classifier, its loss a sparse cross-entropy over every timestep.
#ifndef TPUDSL_TESTS_KERAS_TIME_DISTRIBUTED_MODELS_HPP
#define TPUDSL_TESTS_KERAS_TIME_DISTRIBUTED_MODELS_HPP

#include <tpudsl/model.hpp>

namespace time_distributed_models {

using namespace tpudsl;

using TimeDistributedDense = Sequential<Input<Shape<10, 3>>,
                                        Conv1D<4, 3, Tanh, Same>,              // (10, 4)
                                        TimeDistributed<Dense<3, Softmax>>>;   // (10, 3)

static_assert(TimeDistributedDense::param_count == 4 * (3 * 3 + 1) + 3 * (4 + 1));

} // namespace time_distributed_models

#endif // !TPUDSL_TESTS_KERAS_TIME_DISTRIBUTED_MODELS_HPP
