// The Fashion-MNIST seed: a one-convolution CNN trained with Adam on the real data set, on 8 replicas
// (TpuStrategy<8>) over the machine's cores. One core and 8 replicas give the same bits.
//
//   fashion_mnist_cnn [--epochs 5] [--batch 128] [--steps N] [--data DIR] [--seed S] [--train-samples N]
//                     [--recipe default|seed] [--strategy one|tpu8|multiworker] [--save-weights PATH]
//                     [--load-weights PATH] [--backup-dir DIR]
//                     [--tensorboard DIR] [--plot FILE.svg]
//
// --strategy picks where the replicas run (examples/common/strategy.hpp): tpu8, the default,
// TpuStrategy<8>; one, OneDeviceStrategy; multiworker, MultiWorkerStrategy<1>: one thread in each
// process that `mpirun -np K --bind-to none fashion_mnist_cnn --strategy multiworker` launches (K
// dividing 8; only the chief prints the test accuracy and writes --save-weights). All three give the
// same bits.
// It reads the IDX files from DIR (default: $TPUDSL_FASHION_MNIST_DIR, else Debian's
// dataset-fashion-mnist), scales pixels to [0, 1], trains, and ends with "Test accuracy: 0.xxxx".
// --load-weights starts from a weights file, --save-weights writes the trained weights (Keras'
// formats for *.weights.h5 and *.h5, else tpudsl's own); --load-weights W --epochs 0 evaluates W.
// --backup-dir DIR backs the training up there at every epoch's end (tpudsl::BackupAndRestore): the
// same command started again after a crash goes on from the last backup, to the bits of a run never
// interrupted.
// --tensorboard DIR logs the training for TensorBoard (tpudsl::TensorBoard, with the weights'
// histograms; `tensorboard --logdir DIR` shows it); --plot FILE.svg draws its curves after fit
// (tpudsl::plot_history) and writes their values to FILE.csv.
// Without the data it trains on a synthetic stand-in, and says so on its first line.
// --recipe seed is the tutorial's own call, line for line: raw 0-255 pixels and float32 labels,
// steps_per_epoch=60 with no batch size (Keras derives ceil(60000 / 60) = 1000), 5 epochs, validated
// once, after the fifth (validation_freq=5).
#include "common/args.hpp"
#include "common/data.hpp"
#include "common/persistence.hpp"
#include "common/strategy.hpp"
#include "common/synthetic.hpp"
#include "model.hpp"

#include <tpudsl/tpudsl.hpp>

#include <xtensor/xtensor.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>

int
main(int argc, char** argv)
try {
    const auto args = seeds::parse_args(argc, argv, {.epochs = 5, .batch = 128, .data = tpudsl::data::fashion_mnist::default_directory()});
    const auto data = seeds::load_or_stand_in(
        "Fashion-MNIST", [&] { return tpudsl::data::fashion_mnist::load_data(args.data); },
        [] { return tpudsl::data::image_dataset{seeds::synthetic_images(60000, 28, 28, 1, 1),
                                                seeds::synthetic_images(10000, 28, 28, 1, 2)}; });
    if (args.seed_recipe())
        std::cout << "Recipe: the tutorial's own fit call (raw pixels, float32 labels, steps_per_epoch=60, no batch "
                     "size)\n";

    return seeds::with_strategy(args, [&](auto& strategy) {
        // [fashion_strategy]
        // strategy: TpuStrategy<8> (the default), OneDeviceStrategy or MultiWorkerStrategy<1> (--strategy)
        auto model = strategy.template scope<seeds::FashionCnn>(args.seed);
        // [fashion_strategy]

        // [fashion_compile]
        model.summary();
        model.compile(tpudsl::optimizers::Adam{.learning_rate = 1e-3f},
                      tpudsl::losses::SparseCategoricalCrossentropy{},
                      tpudsl::metrics::SparseCategoricalAccuracy{});
        // [fashion_compile]
        seeds::load_weights(model, strategy, args);
        if (args.seed_recipe()) {
            // [fashion_seed_recipe]
            // model.fit(x_train.astype(np.float32), y_train.astype(np.float32), epochs=5, steps_per_epoch=60,
            //           validation_data=(x_test.astype(np.float32), y_test.astype(np.float32)), validation_freq=5)
            const auto x_train = data.train.x<28, 28, 1>({.divide_by = 1.0f, .limit = args.train_samples});
            const xt::xtensor<float, 1> y_train = xt::cast<float>(data.train.y(args.train_samples));
            const auto x_test = data.test.x<28, 28, 1>({.divide_by = 1.0f});
            const xt::xtensor<float, 1> y_test = xt::cast<float>(data.test.y());
            tpudsl::FitOptions options{.epochs = args.epochs_given ? args.epochs : 5,
                                       .steps_per_epoch = args.steps_given ? args.steps : 60,
                                       .validation_data = tpudsl::validation_data(x_test, y_test),
                                       .validation_freq = args.epochs_given ? args.epochs : 5,
                                       .callbacks = seeds::callbacks(args, model)};
            if (args.batch_given)
                options.batch_size = args.batch;
            if (options.epochs > 0)   // --epochs 0: no training; the weights as loaded are evaluated
                model.fit(x_train, y_train, options);
            const auto scores = model.evaluate(x_test, y_test, {.verbose = 0});
            // [fashion_seed_recipe]
            return seeds::finish(model, strategy, args, scores);   // the chief saves and reports
        }

        const auto x_train = data.train.x<28, 28, 1>({.limit = args.train_samples});
        const auto y_train = data.train.y(args.train_samples);
        const auto x_test = data.test.x<28, 28, 1>();
        const auto y_test = data.test.y();
        // [fashion_training]
        if (args.epochs > 0)   // --epochs 0: no training; the weights as loaded are evaluated
            model.fit(x_train, y_train,
                      {.batch_size = args.batch,
                       .epochs = args.epochs,
                       .steps_per_epoch = args.steps,
                       .validation_data = tpudsl::validation_data(x_test, y_test),
                       .validation_freq = args.epochs,
                       .callbacks = seeds::callbacks(args, model)});
        const auto scores = model.evaluate(x_test, y_test, {.batch_size = args.batch, .verbose = 0});
        // [fashion_training]

        return seeds::finish(model, strategy, args, scores);   // the chief saves and reports
    });
} catch (const std::exception& e) {
    std::cerr << "fashion_mnist_cnn: " << e.what() << '\n';
    return 1;
}
