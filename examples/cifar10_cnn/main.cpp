// The CIFAR-10 seed: Keras' classic four-convolution network, on 8 replicas. As in the Keras program:
// pixels scaled to [0, 1], labels through to_categorical, RMSprop(learning_rate=1e-4), categorical
// crossentropy and accuracy, batch 32, 100 epochs (pass --epochs for fewer).
//
//   cifar10_cnn [--epochs 100] [--batch 32] [--steps N] [--data DIR] [--seed S] [--train-samples N]
//
// The data is CIFAR-10's binary version in DIR ($TPUDSL_CIFAR10_DIR, else ./cifar-10-batches-bin);
// without it the program trains on a synthetic stand-in (5,000 training and 1,000 test images), and
// says so on its first line.
#include "common/args.hpp"
#include "common/synthetic.hpp"
#include "model.hpp"

#include <tpudsl/tpudsl.hpp>

#include <cstdio>
#include <exception>
#include <iostream>

namespace {

std::pair<xt::xtensor<float, 4>, xt::xtensor<float, 2>>
to_arrays(const tpudsl::data::image_split& s, std::size_t limit)
{
    const std::size_t n = limit ? std::min(limit, s.count) : s.count;
    xt::xtensor<float, 4> x(std::array<std::size_t, 4>{n, 32, 32, 3});
    for (std::size_t i = 0; i < n * 3072; ++i)
        x.data()[i] = static_cast<float>(s.images[i]) / 255.0f;
    const std::vector<std::uint8_t> labels(s.labels.begin(), s.labels.begin() + static_cast<std::ptrdiff_t>(n));
    return {std::move(x), tpudsl::to_categorical<10>(labels)};
}

} // namespace

int
main(int argc, char** argv)
try {
    const auto args =
        seeds::parse_args(argc, argv, {.epochs = 100, .batch = 32, .data = tpudsl::data::cifar10::default_directory()});
    tpudsl::data::image_dataset data;
    try {
        data = tpudsl::data::cifar10::load_data(args.data);
        std::cout << "Data: CIFAR-10 (" << data.train.count << " training, " << data.test.count << " test images)\n";
    } catch (const std::runtime_error& e) {
        data.train = seeds::synthetic_images(5000, 32, 32, 3, 1);
        data.test = seeds::synthetic_images(1000, 32, 32, 3, 2);
        std::cout << "Data: SYNTHETIC stand-in (5000 training, 1000 test images of CIFAR-10's shape): " << e.what()
                  << '\n';
    }
    auto [x_train, y_train] = to_arrays(data.train, args.train_samples);
    auto [x_test, y_test] = to_arrays(data.test, 0);

    // [cifar_training]
    tpudsl::CpuClusterResolver resolver;
    tpudsl::initialize_cpu_system(resolver);
    tpudsl::TpuStrategy<8> strategy(resolver);
    auto model = strategy.scope<seeds::Cifar10Cnn>(args.seed);
    model.summary();
    model.compile(tpudsl::optimizers::RMSprop{.learning_rate = 1e-4f},
                  tpudsl::losses::CategoricalCrossentropy{},
                  tpudsl::metrics::CategoricalAccuracy{});
    auto history = model.fit(x_train, y_train,
                             {.batch_size = args.batch, .epochs = args.epochs, .steps_per_epoch = args.steps,
                              .validation_data = tpudsl::validation_data(x_test, y_test)});
    const auto scores = model.evaluate(x_test, y_test, {.batch_size = 256, .verbose = 0});
    // [cifar_training]
    std::printf("Test accuracy: %.4f\n", scores[1]);
    return history.epoch.empty() ? 1 : 0;
} catch (const std::exception& e) {
    std::cerr << "cifar10_cnn: " << e.what() << '\n';
    return 1;
}
