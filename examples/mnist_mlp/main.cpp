// The MNIST seed: a dense network on flattened digits, on 8 replicas. As in the Keras program:
// pixels scaled to [0, 1], labels through to_categorical, RMSprop, categorical crossentropy and
// accuracy, batch 128, 20 epochs, steps_per_epoch (--steps) over the arrays.
//
//   mnist_mlp [--epochs 20] [--batch 128] [--steps N] [--data DIR] [--seed S]
//
// The data is the four MNIST IDX files in DIR ($TPUDSL_MNIST_DIR, else ./mnist); without them the
// program trains on a synthetic stand-in, and says so on its first line.
#include "common/args.hpp"
#include "common/data.hpp"
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
    const auto data = seeds::load_or_stand_in(
        "MNIST", [&] { return tpudsl::data::mnist::load_data(args.data); },
        [] { return tpudsl::data::image_dataset{seeds::synthetic_images(60000, 28, 28, 1, 1),
                                                seeds::synthetic_images(10000, 28, 28, 1, 2)}; });
    const auto x_train = data.train.x<784>({.limit = args.train_samples});
    const auto y_train = tpudsl::to_categorical<10>(data.train.y(args.train_samples));
    const auto x_test = data.test.x<784>();
    const auto y_test = tpudsl::to_categorical<10>(data.test.y());

    // [mnist_training]
    tpudsl::CpuClusterResolver resolver;
    tpudsl::initialize_cpu_system(resolver);
    tpudsl::TpuStrategy<8> strategy(resolver);
    auto model = strategy.scope<seeds::MnistMlp>(args.seed);
    model.summary();
    model.compile(tpudsl::optimizers::RMSprop{},
                  tpudsl::losses::CategoricalCrossentropy{},
                  tpudsl::metrics::CategoricalAccuracy{});
    auto history = model.fit(x_train, y_train,
                             {.batch_size = args.batch, .epochs = args.epochs, .steps_per_epoch = args.steps,
                              .validation_data = tpudsl::validation_data(x_test, y_test)});
    const auto scores = model.evaluate(x_test, y_test, {.batch_size = args.batch, .verbose = 0});
    // [mnist_training]
    std::printf("Test accuracy: %.4f\n", scores[1]);
    return history.epoch.empty() ? 1 : 0;
} catch (const std::exception& e) {
    std::cerr << "mnist_mlp: " << e.what() << '\n';
    return 1;
}
