/// @file A recurrent classifier of the Reuters newswires: Embedding, LSTM, Dense.
#ifndef TPUDSL_EXAMPLES_REUTERS_LSTM_MODEL_HPP
#define TPUDSL_EXAMPLES_REUTERS_LSTM_MODEL_HPP

#include <tpudsl/model.hpp>

#include <cstdint>

namespace seeds {

// [reuters_lstm_model]
using namespace tpudsl;

using ReutersLstm = Sequential<
    Input<Shape<200>, std::int32_t>,   // the first 200 token ids of a newswire
    Embedding<30982, 32>,              // (200, 32)
    LSTM<64>,                          // (64): the state after the last token
    Dense<46, Softmax>>;               // 46 topics

static_assert(ReutersLstm::param_count == 30'982 * 32 + 4 * 64 * (32 + 64 + 1) + 46 * (64 + 1));
// [reuters_lstm_model]

} // namespace seeds

#endif
