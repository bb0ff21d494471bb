// A recurrent classifier of the Reuters newswires into 46 topics: Embedding, LSTM(64), Dense(46), on
// 8 replicas. Sequences padded (and truncated) to 200 tokens as Keras' pad_sequences does, Adam,
// sparse categorical crossentropy, accuracy and top-5 accuracy, batch 64, 10 epochs.
//
//   reuters_lstm [--epochs 10] [--batch 64] [--steps N] [--data DIR] [--seed S]
//                [--strategy one|tpu8|multiworker] [--save-weights PATH] [--load-weights PATH]
//                [--backup-dir DIR]
//                [--tensorboard DIR] [--plot FILE.svg]
//
// The flags are the seeds' (see reuters_conv1d/main.cpp). The data is Keras' Reuters exported by
// tools/export_keras_dataset.py (see docs/data.md); without it the program trains on a synthetic
// stand-in of the same sizes, and says so on its first line.
#include "common/args.hpp"
#include "common/data.hpp"
#include "common/persistence.hpp"
#include "common/strategy.hpp"
#include "common/synthetic.hpp"
#include "model.hpp"

#include <tpudsl/tpudsl.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <exception>
#include <iostream>

namespace {

xt::xtensor<std::int32_t, 1>
labels(const tpudsl::data::sequence_split& s)
{
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{s.y.size()});
    std::copy(s.y.begin(), s.y.end(), y.begin());
    return y;
}

} // namespace

int
main(int argc, char** argv)
try {
    const auto args = seeds::parse_args(argc, argv, {.epochs = 10, .batch = 64, .data = tpudsl::data::reuters::default_directory()});
    const auto data = seeds::load_or_stand_in(
        "Keras' Reuters newswires", [&] { return tpudsl::data::reuters::load_data(args.data); },
        [] { return tpudsl::data::sequence_dataset{seeds::synthetic_sequences(8982, 46, 30982, 1),
                                                   seeds::synthetic_sequences(2246, 46, 30982, 2)}; });
    // [reuters_lstm_training]
    using namespace tpudsl;
    const auto x_train = pad_sequences<200>(data.train.x);
    const auto x_test = pad_sequences<200>(data.test.x);
    const auto y_train = labels(data.train), y_test = labels(data.test);

    return seeds::with_strategy(args, [&](auto& strategy) {   // --strategy one|tpu8|multiworker
        auto model = strategy.template scope<seeds::ReutersLstm>(args.seed);
        model.summary();
        model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{},
                      metrics::SparseTopKCategoricalAccuracy<5>{});
        seeds::load_weights(model, strategy, args);   // --load-weights
        if (args.epochs > 0)                          // --epochs 0: no training; the weights as loaded are evaluated
            model.fit(x_train, y_train,
                      {.batch_size = args.batch, .epochs = args.epochs, .steps_per_epoch = args.steps,
                       .validation_data = validation_data(x_test, y_test),
                       .callbacks = seeds::callbacks(args, model)});
        const auto scores = model.evaluate(x_test, y_test, {.batch_size = 256, .verbose = 0});
        return seeds::finish(model, strategy, args, scores);   // the chief saves and reports
    });
    // [reuters_lstm_training]
} catch (const std::exception& e) {
    std::cerr << "reuters_lstm: " << e.what() << '\n';
    return 1;
}
