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

namespace {

/// uint8 images (n, 28, 28) -> float (n, 28, 28, 1) in [0, 1]; labels -> int32.
std::pair<xt::xtensor<float, 4>, xt::xtensor<std::int32_t, 1>>
to_tensors(const tpudsl::data::image_split& split, std::size_t limit)
{
    const std::size_t n = limit ? std::min(limit, split.count) : split.count;
    xt::xtensor<float, 4> x(std::array<std::size_t, 4>{n, split.rows, split.cols, 1});
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{n});
    for (std::size_t i = 0; i < n * split.rows * split.cols; ++i)
        x.data()[i] = static_cast<float>(split.images[i]) / 255.0f;
    for (std::size_t i = 0; i < n; ++i)
        y(i) = split.labels[i];
    return {std::move(x), std::move(y)};
}

} // namespace

int
main(int argc, char** argv)
try {
    const auto args = seeds::parse_args(argc, argv, {.epochs = 5, .batch = 128, .data = tpudsl::data::fashion_mnist::default_directory()});
    tpudsl::data::image_dataset data;
    try {
        data = tpudsl::data::fashion_mnist::load_data(args.data);
        std::cout << "Data: Fashion-MNIST (" << data.train.count << " training, " << data.test.count
                  << " test images)\n";
    } catch (const std::runtime_error& e) {
        data.train = seeds::synthetic_images(60000, 28, 28, 1, 1);
        data.test = seeds::synthetic_images(10000, 28, 28, 1, 2);
        std::cout << "Data: SYNTHETIC stand-in of Fashion-MNIST's sizes (60000 training, 10000 test): " << e.what()
                  << '\n';
    }
    auto [x_train, y_train] = to_tensors(data.train, args.train_samples);
    auto [x_test, y_test] = to_tensors(data.test, 0);

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
