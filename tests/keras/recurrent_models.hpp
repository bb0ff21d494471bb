// The models of the one-step checks of LSTM and GRU against Keras (keras_side.py builds the same
// layers in the same order): the last state, every state followed by Flatten or a global pooling,
// one recurrent layer feeding another, and one feeding a per-timestep classifier, so the step's
// gradient passes through time.
#ifndef TPUDSL_TESTS_KERAS_RECURRENT_MODELS_HPP
#define TPUDSL_TESTS_KERAS_RECURRENT_MODELS_HPP

#include <tpudsl/model.hpp>

namespace recurrent_models {

using namespace tpudsl;

using Lstm = Sequential<Input<Shape<8, 3>>, LSTM<6>, Dense<3, Softmax>>;
using LstmSequences = Sequential<Input<Shape<7, 3>>,
                                 LSTM<5, true>,      // (7, 5)
                                 Flatten,            // (35)
                                 Dense<3, Softmax>>;
using Gru = Sequential<Input<Shape<8, 3>>, GRU<6>, Dense<3, Softmax>>;
using GruSequences = Sequential<Input<Shape<7, 3>>,
                                GRU<5, true>,             // (7, 5)
                                GlobalAveragePooling1D,   // (5)
                                Dense<3, Softmax>>;
// Every state into a per-timestep classifier: a label per timestep.
using Tagger = Sequential<Input<Shape<7, 3>>,
                          GRU<5, true>,                        // (7, 5)
                          TimeDistributed<Dense<3, Softmax>>>;  // (7, 3)
using Stacked = Sequential<Input<Shape<6, 4>>,
                           LSTM<8, true>,   // (6, 8)
                           GRU<5>,          // (5)
                           Dense<3, Softmax>>;

static_assert(Lstm::param_count == 4 * 6 * (3 + 6 + 1) + 3 * (6 + 1));
static_assert(Gru::param_count == 3 * 6 * (3 + 6 + 2) + 3 * (6 + 1));
static_assert(Tagger::param_count == 3 * 5 * (3 + 5 + 2) + 3 * (5 + 1));
static_assert(Stacked::param_count == 4 * 8 * (4 + 8 + 1) + 3 * 5 * (8 + 5 + 2) + 3 * (5 + 1));

} // namespace recurrent_models

#endif // !TPUDSL_TESTS_KERAS_RECURRENT_MODELS_HPP
