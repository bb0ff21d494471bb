// The MNIST seed: a dense network on flattened digits, on 8 replicas. As in the Keras program:
// pixels scaled to [0, 1], labels through to_categorical, RMSprop, categorical crossentropy and
// accuracy, batch 128, 20 epochs, steps_per_epoch (--steps) over the arrays.
//
//   mnist_mlp [--epochs 20] [--batch 128] [--steps N] [--data DIR] [--seed S] [--recipe default|seed]
//             [--strategy one|tpu8|multiworker] [--save-weights PATH] [--load-weights PATH] [--backup-dir DIR]
//             [--tensorboard DIR] [--plot FILE.svg]
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
// The data is the four MNIST IDX files in DIR ($TPUDSL_MNIST_DIR, else ./mnist), else the real
// 5,000-image subset mnist_5k.csv.gz there (scripts/fetch_mnist_subset.sh DIR puts it there: 4,000
// images train, 1,000 test); without either the program trains on a synthetic stand-in. Its first
// line says which. The default schedule is the tutorial's own (--recipe seed runs the same).
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
    const auto args = seeds::parse_args(argc, argv, {.epochs = 20, .batch = 128, .data = tpudsl::data::mnist::default_directory()});
    std::string name = "MNIST";   // the first line names what was found
    const auto data = seeds::load_or_stand_in(
        name,
        [&] {
            try {
                return tpudsl::data::mnist::load_data(args.data);
            } catch (const tpudsl::data::missing_data_set& idx) {
                try {
                    name = "real MNIST subset";
                    return tpudsl::data::mnist::load_subset(args.data);
                } catch (const tpudsl::data::missing_data_set&) {
                    name = "MNIST";
                    throw tpudsl::data::missing_data_set(std::string(idx.what()) + "; nor its 5,000-image subset "
                                                         "(scripts/fetch_mnist_subset.sh DIR fetches it)");
                }
            }
        },
        [] { return tpudsl::data::image_dataset{seeds::synthetic_images(60000, 28, 28, 1, 1),
                                                seeds::synthetic_images(10000, 28, 28, 1, 2)}; });
    const auto x_train = data.train.x<784>({.limit = args.train_samples});
    const auto y_train = tpudsl::to_categorical<10>(data.train.y(args.train_samples));
    const auto x_test = data.test.x<784>();
    const auto y_test = tpudsl::to_categorical<10>(data.test.y());

    // [mnist_training]
    return seeds::with_strategy(args, [&](auto& strategy) {   // --strategy one|tpu8|multiworker
        auto model = strategy.template scope<seeds::MnistMlp>(args.seed);
        model.summary();
        model.compile(tpudsl::optimizers::RMSprop{},
                      tpudsl::losses::CategoricalCrossentropy{},
                      tpudsl::metrics::CategoricalAccuracy{});
        seeds::load_weights(model, strategy, args);   // --load-weights
        if (args.epochs > 0)                          // --epochs 0: no training; the weights as loaded are evaluated
            model.fit(x_train, y_train,
                      {.batch_size = args.batch, .epochs = args.epochs, .steps_per_epoch = args.steps,
                       .validation_data = tpudsl::validation_data(x_test, y_test),
                       .callbacks = seeds::callbacks(args, model)});
        const auto scores = model.evaluate(x_test, y_test, {.batch_size = args.batch, .verbose = 0});
        return seeds::finish(model, strategy, args, scores);   // the chief saves and reports
    });
    // [mnist_training]
} catch (const std::exception& e) {
    std::cerr << "mnist_mlp: " << e.what() << '\n';
    return 1;
}
