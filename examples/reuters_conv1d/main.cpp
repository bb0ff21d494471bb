// The Reuters seed: a Conv1D classifier of newswires into 46 topics, on 8 replicas. As in the Keras
// program: pad_sequences to 300 tokens, from_tensor_slices().shuffle(1000).batch(32).prefetch()
// .cache(), Nadam, sparse crossentropy with from_logits=True (Keras warns, and uses the logits), top-5
// accuracy, 10 epochs.
//
//   reuters_conv1d [--epochs 10] [--batch 32] [--steps N] [--data DIR] [--seed S] [--recipe default|seed]
//                  [--strategy one|tpu8|multiworker] [--save-weights PATH] [--load-weights PATH]
//                  [--backup-dir DIR]
//                  [--tensorboard DIR] [--plot FILE.svg]
//
// --strategy picks where the replicas run: tpu8, the default, TpuStrategy<8>; one, OneDeviceStrategy;
// multiworker, MultiWorkerStrategy<1> in each process `mpirun` launches (see fashion_mnist_cnn/main.cpp).
// All three give the same bits.
// --load-weights starts from a weights file, --save-weights writes the trained weights (Keras'
// formats for *.weights.h5 and *.h5, else tpudsl's own); --load-weights W --epochs 0 evaluates W.
// --backup-dir DIR backs the training up there at every epoch's end (tpudsl::BackupAndRestore): the
// same command started again after a crash goes on from the last backup, to the bits of a run never
// interrupted.
// --tensorboard DIR logs the training for TensorBoard (tpudsl::TensorBoard, with the weights'
// histograms; `tensorboard --logdir DIR` shows it); --plot FILE.svg draws its curves after fit
// (tpudsl::plot_history) and writes their values to FILE.csv.
//
// The default is the tutorial's own pipeline and schedule: --recipe seed runs the same.
//
// The data is Keras' Reuters exported by tools/export_keras_dataset.py (see docs/data.md); without
// it the program trains on a synthetic stand-in of the same sizes, and says so on its first line.
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

namespace {

using Ex = tpudsl::Example<tpudsl::Shape<300>, std::int32_t, std::int32_t>;

int
train(const seeds::Args& args, const tpudsl::data::sequence_dataset& data)
{
    using namespace tpudsl;
    // [reuters_pipeline]
    auto x_train = pad_sequences<300>(data.train.x);
    auto x_test = pad_sequences<300>(data.test.x);
    auto ds_train = Dataset<Ex>::from_tensor_slices(x_train, seeds::topic_labels(data.train))
                        .shuffle(1000, args.seed).batch(args.batch).prefetch().cache();
    auto ds_test = Dataset<Ex>::from_tensor_slices(x_test, seeds::topic_labels(data.test))
                       .shuffle(1000, args.seed).batch(args.batch).prefetch().cache();

    return seeds::with_strategy(args, [&](auto& strategy) {   // --strategy one|tpu8|multiworker
        auto model = strategy.template scope<seeds::Reuters>(args.seed);
        model.summary();
        model.compile(optimizers::Nadam{},
                      losses::SparseCategoricalCrossentropy{.from_logits = true},
                      metrics::SparseCategoricalAccuracy{},
                      metrics::SparseTopKCategoricalAccuracy<5>{});
        seeds::load_weights(model, strategy, args);   // --load-weights
        if (args.epochs > 0)                          // --epochs 0: no training; the weights as loaded are evaluated
            model.fit(ds_train, {.epochs = args.epochs, .steps_per_epoch = args.steps, .validation_data = ds_test,
                                 .callbacks = seeds::callbacks(args, model)});
        const auto scores = model.evaluate(ds_test, {.verbose = 0});
        return seeds::finish(model, strategy, args, scores);   // the chief saves and reports
    });
    // [reuters_pipeline]
}

} // namespace

int
main(int argc, char** argv)
try {
    const auto args = seeds::parse_args(argc, argv, {.epochs = 10, .batch = 32, .data = tpudsl::data::reuters::default_directory()});
    const auto data = seeds::reuters_or_stand_in(args.data);
    return train(args, data);
} catch (const std::exception& e) {
    std::cerr << "reuters_conv1d: " << e.what() << '\n';
    return 1;
}
