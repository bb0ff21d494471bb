// The MNIST seed: a dense network on flattened digits, on 8 replicas. As in the Keras program:
// pixels scaled to [0, 1], labels through to_categorical, RMSprop, categorical crossentropy and
// accuracy, batch 128, 20 epochs, steps_per_epoch (--steps) over the arrays.
//
//   mnist_mlp [--epochs 20] [--batch 128] [--steps N] [--data DIR] [--seed S]
//
// The data is the four MNIST IDX files in DIR ($TPUDSL_MNIST_DIR, else ./mnist); without them the
// program trains on a synthetic stand-in, and says so on its first line.
#include "common/args.hpp"
#include "common/synthetic.hpp"
#include "model.hpp"

#include <tpudsl/tpudsl.hpp>

#include <cstdio>
#include <exception>
#include <iostream>

namespace {

std::pair<xt::xtensor<float, 2>, xt::xtensor<float, 2>>
to_arrays(const tpudsl::data::image_split& s, std::size_t limit)
{
    const std::size_t n = limit ? std::min(limit, s.count) : s.count;
    xt::xtensor<float, 2> x(std::array<std::size_t, 2>{n, 784});
    for (std::size_t i = 0; i < n * 784; ++i)
        x.data()[i] = static_cast<float>(s.images[i]) / 255.0f;
    const std::vector<std::uint8_t> labels(s.labels.begin(), s.labels.begin() + static_cast<std::ptrdiff_t>(n));
    return {std::move(x), tpudsl::to_categorical<10>(labels)};
}

} // namespace

int
main(int argc, char** argv)
try {
    const auto args = seeds::parse_args(argc, argv, {.epochs = 20, .batch = 128, .data = tpudsl::data::mnist::default_directory()});
    tpudsl::data::image_dataset data;
    try {
        data = tpudsl::data::mnist::load_data(args.data);
        std::cout << "Data: MNIST (" << data.train.count << " training, " << data.test.count << " test images)\n";
    } catch (const std::runtime_error& e) {
        data.train = seeds::synthetic_images(60000, 28, 28, 1, 1);
        data.test = seeds::synthetic_images(10000, 28, 28, 1, 2);
        std::cout << "Data: SYNTHETIC stand-in of MNIST's sizes (60000 training, 10000 test): " << e.what() << '\n';
    }
    auto [x_train, y_train] = to_arrays(data.train, args.train_samples);
    auto [x_test, y_test] = to_arrays(data.test, 0);

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
