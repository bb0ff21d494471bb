// Digests of what the four seed models compute, for comparing two builds bit for bit (a refactoring
// must not move a bit): each model trains one epoch from a fixed seed on fixed synthetic data, with
// its example's optimizer, loss and metrics, on one core and on TpuStrategy<2>, then predicts; the
// program prints a 64-bit FNV-1a hash of the weights, of the predictions and the exact loss. A fifth
// model stands for the VGG-style blocks users write: `Same` convolutions, each fused with a pooling.
//
//   same_bits            # one line per model and strategy
//
// benchmarks/same_bits.sh builds it at two revisions and compares the lines.
#include "cifar10_cnn/model.hpp"
#include "common/synthetic.hpp"
#include "fashion_mnist_cnn/model.hpp"
#include "mnist_mlp/model.hpp"
#include "reuters_conv1d/model.hpp"

#include <tpudsl/tpudsl.hpp>

#include <xtensor/xtensor.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::uint64_t
fnv1a(const void* data, std::size_t bytes)
{
    std::uint64_t h = 0xcbf29ce484222325ULL;
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

template <std::size_t... Dims>
xt::xtensor<float, sizeof...(Dims) + 1>
images(std::size_t n, std::size_t channels, std::uint32_t seed, xt::xtensor<std::int32_t, 1>& labels)
{
    constexpr std::size_t size = (std::size_t{1} * ... * Dims);
    constexpr std::size_t rank = sizeof...(Dims);
    constexpr std::array<std::size_t, rank> dims{Dims...};
    const std::size_t rows = rank == 1 ? 28 : dims[0];
    const std::size_t cols = size / rows / channels;
    const auto split = seeds::synthetic_images(n, rows, cols, channels, seed);
    xt::xtensor<float, rank + 1> x(std::array<std::size_t, rank + 1>{n, Dims...});
    for (std::size_t i = 0; i < n * size; ++i)
        x.data()[i] = static_cast<float>(split.images[i]) / 255.0f;
    labels = xt::xtensor<std::int32_t, 1>(std::array<std::size_t, 1>{n});
    for (std::size_t i = 0; i < n; ++i)
        labels(i) = split.labels[i];
    return x;
}

template <class Model, class X, class Y>
void
report(const char* name, const char* strategy, Model& model, const X& x, const Y& y)
{
    const auto history = model.fit(x, y, {.batch_size = 64, .epochs = 1, .verbose = 0});
    const auto scores = model.evaluate(x, y, {.batch_size = 50, .verbose = 0});
    const auto out = model.predict(x, {.batch_size = 50, .verbose = 0});
    const auto w = model.get_weights();
    std::printf("%s %s weights=%016llx predictions=%016llx loss=%a eval_loss=%a\n", name, strategy,
                static_cast<unsigned long long>(fnv1a(w.data(), w.size() * sizeof(float))),
                static_cast<unsigned long long>(fnv1a(out.data(), out.size() * sizeof(float))),
                history["loss"].back(), scores[0]);
}

template <class Seq, class Strategy, class Compile, class X, class Y>
void
run(const char* name, const char* strategy_name, Compile compile, const X& x, const Y& y)
{
    Strategy strategy;
    auto model = strategy.template scope<Seq>(7);
    compile(model);
    report(name, strategy_name, model, x, y);
}

template <class Seq, class Compile, class X, class Y>
void
both(const char* name, Compile compile, const X& x, const Y& y)
{
    run<Seq, tpudsl::OneDeviceStrategy>(name, "one", compile, x, y);
    run<Seq, tpudsl::TpuStrategy<2>>(name, "tpu2", compile, x, y);
}

} // namespace

int
main()
{
    using namespace tpudsl;
    xt::xtensor<std::int32_t, 1> labels;

    const auto fashion = images<28, 28, 1>(320, 1, 11, labels);
    both<seeds::FashionCnn>(
        "fashion",
        [](auto& m) {
            m.compile(optimizers::Adam{.learning_rate = 1e-3f}, losses::SparseCategoricalCrossentropy{},
                      metrics::SparseCategoricalAccuracy{});
        },
        fashion, labels);

    const auto mnist = images<784>(320, 1, 12, labels);
    const auto onehot = to_categorical<10>(labels);
    both<seeds::MnistMlp>(
        "mnist_mlp",
        [](auto& m) {
            m.compile(optimizers::RMSprop{}, losses::CategoricalCrossentropy{}, metrics::CategoricalAccuracy{});
        },
        mnist, onehot);

    const auto cifar = images<32, 32, 3>(128, 3, 13, labels);
    both<seeds::Cifar10Cnn>(
        "cifar10",
        [](auto& m) {
            m.compile(optimizers::RMSprop{.learning_rate = 1e-4f}, losses::SparseCategoricalCrossentropy{},
                      metrics::SparseCategoricalAccuracy{});
        },
        cifar, labels);

    using Vgg = Sequential<Input<Shape<32, 32, 3>>, Conv2D<16, 3, Relu, Same>, MaxPool2D<2>, Conv2D<32, 3, Relu, Same>,
                           MaxPool2D<2>, Flatten, Dense<10, Softmax>>;
    both<Vgg>(
        "vgg_same",
        [](auto& m) {
            m.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
        },
        cifar, labels);

    const auto seqs = seeds::synthetic_sequences(256, 46, 30982, 14);
    const auto tokens = pad_sequences<300>(seqs.x);
    xt::xtensor<std::int32_t, 1> topics(std::array<std::size_t, 1>{seqs.y.size()});
    for (std::size_t i = 0; i < seqs.y.size(); ++i)
        topics(i) = seqs.y[i];
    both<seeds::Reuters>(
        "reuters",
        [](auto& m) {
            m.compile(optimizers::Nadam{}, losses::SparseCategoricalCrossentropy{.from_logits = true},
                      metrics::SparseCategoricalAccuracy{}, metrics::SparseTopKCategoricalAccuracy<5>{});
        },
        tokens, topics);
    return 0;
}
