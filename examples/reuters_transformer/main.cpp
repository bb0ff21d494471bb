// keras.io's "Text classification with Transformer" (model.hpp) on the Reuters newswires' 46 topics:
// sequences padded (and truncated) to 200 tokens as Keras' pad_sequences does, Adam, sparse categorical
// crossentropy and accuracy, batch 32, 2 epochs: keras.io's compile and fit calls.
//
//   reuters_transformer [--epochs 2] [--batch 32] [--steps N] [--data DIR] [--seed S]
//                       [--strategy one|tpu8|multiworker] [--save-weights PATH] [--load-weights PATH]
//                       [--backup-dir DIR]
//                       [--tensorboard DIR] [--plot FILE.svg]
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

#include <cstdio>
#include <exception>
#include <iostream>

int
main(int argc, char** argv)
try {
    const auto args = seeds::parse_args(argc, argv, {.epochs = 2, .batch = 32, .data = tpudsl::data::reuters::default_directory()});
    const auto data = seeds::reuters_or_stand_in(args.data);
    // [reuters_transformer_training]
    using namespace tpudsl;
    const auto x_train = pad_sequences<200>(data.train.x);   // maxlen=200
    const auto x_test = pad_sequences<200>(data.test.x);
    const auto y_train = seeds::topic_labels(data.train), y_test = seeds::topic_labels(data.test);

    return seeds::with_strategy(args, [&](auto& strategy) {   // --strategy one|tpu8|multiworker
        auto model = strategy.template scope<seeds::ReutersTransformer>(args.seed);
        model.summary();
        // model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
        seeds::load_weights(model, strategy, args);   // --load-weights
        if (args.epochs > 0)                          // --epochs 0: no training; the weights as loaded are evaluated
            model.fit(x_train, y_train,
                      {.batch_size = args.batch, .epochs = args.epochs, .steps_per_epoch = args.steps,
                       .validation_data = validation_data(x_test, y_test),
                       .callbacks = seeds::callbacks(args, model)});
        const auto scores = model.evaluate(x_test, y_test, {.batch_size = 256, .verbose = 0});
        return seeds::finish(model, strategy, args, scores);   // the chief saves and reports
    });
    // [reuters_transformer_training]
} catch (const std::exception& e) {
    std::cerr << "reuters_transformer: " << e.what() << '\n';
    return 1;
}
