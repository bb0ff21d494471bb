// The Fashion-MNIST seed: a one-convolution CNN trained with Adam on the real data set, on 8 replicas
// (TpuStrategy<8>) over the machine's cores. One core and 8 replicas give the same bits.
//
//   fashion_mnist_cnn [--epochs 5] [--batch 128] [--steps N] [--data DIR] [--seed S] [--train-samples N]
//
// It reads the IDX files from DIR (default: $TPUDSL_FASHION_MNIST_DIR, else Debian's
// dataset-fashion-mnist), scales pixels to [0, 1], trains, and ends with "Test accuracy: 0.xxxx".
// Without the data it trains on a synthetic stand-in, and says so on its first line. The seed's own
// schedule is --steps 60 (steps_per_epoch=60, validated on the last of its 5 epochs).
#include "common/args.hpp"
#include "common/data.hpp"
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
    const auto x_train = data.train.x<28, 28, 1>({.limit = args.train_samples});
    const auto y_train = data.train.y(args.train_samples);
    const auto x_test = data.test.x<28, 28, 1>();
    const auto y_test = data.test.y();

    // [fashion_strategy]
    tpudsl::CpuClusterResolver resolver;
    tpudsl::initialize_cpu_system(resolver);
    tpudsl::TpuStrategy<8> strategy(resolver);
    auto model = strategy.scope<seeds::FashionCnn>(args.seed);
    // [fashion_strategy]

    // [fashion_training]
    model.summary();
    model.compile(tpudsl::optimizers::Adam{.learning_rate = 1e-3f},
                  tpudsl::losses::SparseCategoricalCrossentropy{},
                  tpudsl::metrics::SparseCategoricalAccuracy{});
    auto history = model.fit(x_train, y_train,
                             {.batch_size = args.batch,
                              .epochs = args.epochs,
                              .steps_per_epoch = args.steps,
                              .validation_data = tpudsl::validation_data(x_test, y_test),
                              .validation_freq = args.epochs});
    const auto scores = model.evaluate(x_test, y_test, {.batch_size = args.batch, .verbose = 0});
    // [fashion_training]

    std::printf("Test accuracy: %.4f\n", scores[1]);
    return history.epoch.empty() ? 1 : 0;
} catch (const std::exception& e) {
    std::cerr << "fashion_mnist_cnn: " << e.what() << '\n';
    return 1;
}
