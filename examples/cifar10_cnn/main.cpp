// The CIFAR-10 seed: Keras' classic four-convolution network, on 8 replicas. As in the Keras program:
// pixels scaled to [0, 1], labels through to_categorical, RMSprop(learning_rate=1e-4), categorical
// crossentropy and accuracy, batch 32, 100 epochs (pass --epochs for fewer).
//
//   cifar10_cnn [--epochs 100] [--batch 32] [--steps N] [--data DIR] [--seed S] [--train-samples N]
//               [--recipe default|seed] [--strategy one|tpu8|multiworker] [--save-weights PATH]
//               [--load-weights PATH] [--backup-dir DIR]
//               [--tensorboard DIR] [--plot FILE.svg]
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
// --recipe seed is the TPU timing study's own run: batch 32 for 20 epochs.
//
// The data is CIFAR-10's binary version in DIR ($TPUDSL_CIFAR10_DIR, else ./cifar-10-batches-bin);
// without it the program trains on a synthetic stand-in (5,000 training and 1,000 test images), and
// says so on its first line.
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
    auto args =
        seeds::parse_args(argc, argv, {.epochs = 100, .batch = 32, .data = tpudsl::data::cifar10::default_directory()});
    if (args.seed_recipe() && !args.epochs_given)
        args.epochs = 20;   // the timing study trains 20 epochs at batch 32
    const auto data = seeds::load_or_stand_in(
        "CIFAR-10", [&] { return tpudsl::data::cifar10::load_data(args.data); },
        [] { return tpudsl::data::image_dataset{seeds::synthetic_images(5000, 32, 32, 3, 1),
                                                seeds::synthetic_images(1000, 32, 32, 3, 2)}; });
    const auto x_train = data.train.x<32, 32, 3>({.limit = args.train_samples});
    const auto y_train = tpudsl::to_categorical<10>(data.train.y(args.train_samples));
    const auto x_test = data.test.x<32, 32, 3>();
    const auto y_test = tpudsl::to_categorical<10>(data.test.y());

    // [cifar_training]
    return seeds::with_strategy(args, [&](auto& strategy) {   // --strategy one|tpu8|multiworker
        auto model = strategy.template scope<seeds::Cifar10Cnn>(args.seed);
        model.summary();
        model.compile(tpudsl::optimizers::RMSprop{.learning_rate = 1e-4f},
                      tpudsl::losses::CategoricalCrossentropy{},
                      tpudsl::metrics::CategoricalAccuracy{});
        seeds::load_weights(model, strategy, args);   // --load-weights
        if (args.epochs > 0)                          // --epochs 0: no training; the weights as loaded are evaluated
            model.fit(x_train, y_train,
                      {.batch_size = args.batch, .epochs = args.epochs, .steps_per_epoch = args.steps,
                       .validation_data = tpudsl::validation_data(x_test, y_test),
                       .callbacks = seeds::callbacks(args, model)});
        const auto scores = model.evaluate(x_test, y_test, {.batch_size = 256, .verbose = 0});
        return seeds::finish(model, strategy, args, scores);   // the chief saves and reports
    });
    // [cifar_training]
} catch (const std::exception& e) {
    std::cerr << "cifar10_cnn: " << e.what() << '\n';
    return 1;
}
