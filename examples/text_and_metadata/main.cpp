// A functional model of two inputs and two outputs (model.hpp): token ids and numbers in, a topic
// and a score out. Each output has its loss (sparse categorical crossentropy for the topic, mean
// squared error for the score, weighted 1 and 0.5 as Keras' loss_weights), the topic its accuracy;
// the arrays go in as tuples, as Keras takes lists, and predict gives one array per output. The data
// is synthetic (model.hpp says how it is made): 4,000 training and 1,000 test samples.
//
//   text_and_metadata [--epochs 10] [--batch 32] [--steps N] [--seed S] [--train-samples N]
//                     [--strategy one|tpu8|multiworker] [--save-weights PATH] [--load-weights PATH]
//                     [--backup-dir DIR]
//                     [--tensorboard DIR] [--plot FILE.svg]
#include "common/args.hpp"
#include "common/persistence.hpp"
#include "common/strategy.hpp"
#include "model.hpp"

#include <tpudsl/tpudsl.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <tuple>

int
main(int argc, char** argv)
try {
    const auto args = seeds::parse_args(argc, argv, {.epochs = 10, .batch = 32, .data = ""});
    const auto train = seeds::make_text_and_metadata(args.train_samples ? args.train_samples : 4000, 1);
    const auto test = seeds::make_text_and_metadata(1000, 2);

    // [two_heads_training]
    return seeds::with_strategy(args, [&](auto& strategy) {   // --strategy one|tpu8|multiworker
        using namespace tpudsl;
        auto model = strategy.template scope<seeds::TextAndMetadata>(args.seed);
        model.summary();   // two InputLayer rows, "Connected to" naming both of joined's inputs
        // loss=[SparseCategoricalCrossentropy(), MeanSquaredError()], loss_weights=[1.0, 0.5],
        // metrics={"topic": ["sparse_categorical_accuracy"]}
        model.compile(optimizers::Adam{},
                      PerOutput{losses::SparseCategoricalCrossentropy{}, losses::MeanSquaredError{}}.loss_weights({1.0, 0.5}),
                      OnOutput<0, metrics::SparseCategoricalAccuracy>{});
        seeds::load_weights(model, strategy, args);   // --load-weights
        const PackedArrays validation = model.pack(std::tie(test.words, test.numbers), std::tie(test.topics, test.scores));
        if (args.epochs > 0)
            model.fit(std::tie(train.words, train.numbers), std::tie(train.topics, train.scores),
                      {.batch_size = args.batch, .epochs = args.epochs, .steps_per_epoch = args.steps,
                       .validation_data = validation.ref(), .callbacks = seeds::callbacks(args, model)});
        // loss, score_loss, topic_loss, topic_sparse_categorical_accuracy: Keras 3's names, in its order
        const Scores scores = model.evaluate(std::tie(test.words, test.numbers), std::tie(test.topics, test.scores),
                                             {.batch_size = 256, .verbose = 0});
        const auto [topics, predicted_scores] = model.predict(std::tie(test.words, test.numbers), {.batch_size = 256});
        // [two_heads_training]
        seeds::save_weights(model, strategy, args);
        if (!seeds::is_chief(strategy))
            return 0;
        std::printf("Test accuracy: %.4f\n", scores["topic_sparse_categorical_accuracy"]);   // the topic's
        std::printf("Test score mean squared error: %.4f (the scores' own variance: 1.19)\n", scores["score_loss"]);
        std::printf("First test sample: topic %d predicted with p = %.3f; score %.3f predicted %.3f\n", test.topics(0),
                    topics[static_cast<std::size_t>(test.topics(0))], test.scores(0, 0), predicted_scores[0]);
        return 0;
    });
} catch (const std::exception& e) {
    std::cerr << "text_and_metadata: " << e.what() << '\n';
    return 1;
}
