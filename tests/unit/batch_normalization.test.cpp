// BatchNormalization: the batch's statistics in training, the moving ones outside it, the moving
// update of Keras (with one micro-batch) or the mean of the micro-batches' statistics (with several),
// the same bits under every strategy, and a frozen layer (momentum 1) that never moves.
#include <tpudsl/tpudsl.hpp>

#include "toy_data.hpp"

#include <catch2/catch.hpp>

#include <xtensor/xtensor.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

using namespace tpudsl;

namespace {

constexpr std::size_t positions = 3, channels = 2;
using Normalized = Sequential<Input<Shape<positions, channels>>, BatchNormalization<0.9f>, Flatten, Dense<2, Softmax>>;

struct sequences {
    xt::xtensor<float, 3> x;
    xt::xtensor<std::int32_t, 1> y;
};

/// n samples of (3, 2), each channel with its own mean and spread.
sequences
make_sequences(std::size_t n, std::uint32_t seed)
{
    sequences d{xt::xtensor<float, 3>(std::array<std::size_t, 3>{n, positions, channels}),
                xt::xtensor<std::int32_t, 1>(std::array<std::size_t, 1>{n})};
    std::mt19937 gen(seed);
    std::normal_distribution<float> z(0.0f, 1.0f);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t p = 0; p < positions; ++p) {
            d.x(i, p, 0) = 3.0f + 2.0f * z(gen);
            d.x(i, p, 1) = -1.0f + 0.5f * z(gen);
        }
        d.y(i) = d.x(i, 0, 0) > 3.0f ? 1 : 0;
    }
    return d;
}

/// Mean and biased variance of channel c over samples [b, e), in double.
std::array<double, 2>
moments(const sequences& d, std::size_t b, std::size_t e, std::size_t c)
{
    double s = 0.0, q = 0.0;
    const double count = static_cast<double>((e - b) * positions);
    for (std::size_t i = b; i < e; ++i)
        for (std::size_t p = 0; p < positions; ++p)
            s += d.x(i, p, c);
    const double mean = s / count;
    for (std::size_t i = b; i < e; ++i)
        for (std::size_t p = 0; p < positions; ++p)
            q += (d.x(i, p, c) - mean) * (d.x(i, p, c) - mean);
    return {mean, q / count};
}

using bn = Normalized::layer<0>;

template <class M>
std::vector<float>
weights_of(const M& m)
{
    return {m.parameters(), m.parameters() + M::sequential::param_buffer_size};
}

} // namespace

TEST_CASE("BatchNormalization: counts its moving statistics as non-trainable, in Keras' order", "[batchnorm]")
{
    STATIC_REQUIRE(bn::param_count == 4 * channels);
    STATIC_REQUIRE(bn::trainable_param_count == 2 * channels);
    STATIC_REQUIRE(Normalized::non_trainable_param_count == 2 * channels);
    STATIC_REQUIRE(bn::weight<0>::role == weight_role::gamma);
    STATIC_REQUIRE(bn::weight<3>::role == weight_role::moving_variance);
    STATIC_REQUIRE(!bn::weight<2>::trainable);
    STATIC_REQUIRE(ops::graph<Normalized>::moving_ranges.size() == 2);
    STATIC_REQUIRE(ops::graph<Normalized>::moving_ranges[0].begin == bn::weight<2>::offset);
    auto m = OneDeviceStrategy{}.scope<Normalized>(3);
    const auto w = weights_of(m);
    for (std::size_t c = 0; c < channels; ++c) {
        CHECK(w[bn::weight<0>::offset + c] == 1.0f);   // gamma
        CHECK(w[bn::weight<1>::offset + c] == 0.0f);   // beta
        CHECK(w[bn::weight<2>::offset + c] == 0.0f);   // moving mean
        CHECK(w[bn::weight<3>::offset + c] == 1.0f);   // moving variance
    }
}

TEST_CASE("BatchNormalization: one step in one piece moves the moving statistics by Keras' rule", "[batchnorm]")
{
    const auto d = make_sequences(8, 1);
    auto m = TpuStrategy<1, 1>{}.scope<Normalized>(5);
    m.compile(optimizers::SGD{.learning_rate = 0.1f}, losses::SparseCategoricalCrossentropy{});
    m.fit(d.x, d.y, {.batch_size = 8, .epochs = 1, .verbose = 0, .shuffle = false});
    const auto w = weights_of(m);
    for (std::size_t c = 0; c < channels; ++c) {
        const auto [mean, variance] = moments(d, 0, 8, c);
        INFO("channel " << c);
        CHECK(w[bn::weight<2>::offset + c] == Approx(0.1 * mean).epsilon(1e-6));
        CHECK(w[bn::weight<3>::offset + c] == Approx(0.9 + 0.1 * variance).epsilon(1e-6));
        CHECK(w[bn::weight<0>::offset + c] != 1.0f);   // gamma and beta trained
        CHECK(w[bn::weight<1>::offset + c] != 0.0f);
    }
}

TEST_CASE("BatchNormalization: several micro-batches normalise each on its own and average their statistics",
          "[batchnorm]")
{
    // OneDeviceStrategy: 8 micro-batches; a batch of 20 gives them 3, 3, 3, 3, 2, 2, 2, 2 samples.
    const auto d = make_sequences(20, 2);
    auto m = OneDeviceStrategy{}.scope<Normalized>(5);
    m.compile(optimizers::SGD{.learning_rate = 0.1f}, losses::SparseCategoricalCrossentropy{});
    m.fit(d.x, d.y, {.batch_size = 20, .epochs = 1, .verbose = 0, .shuffle = false});
    const auto w = weights_of(m);
    const std::array<std::size_t, 9> bounds{0, 3, 6, 9, 12, 14, 16, 18, 20};
    for (std::size_t c = 0; c < channels; ++c) {
        double mean = 0.0, variance = 0.0;
        for (std::size_t k = 0; k < 8; ++k) {
            const auto s = moments(d, bounds[k], bounds[k + 1], c);
            mean += s[0] / 8.0;
            variance += s[1] / 8.0;
        }
        INFO("channel " << c);
        CHECK(w[bn::weight<2>::offset + c] == Approx(0.1 * mean).epsilon(1e-6));
        CHECK(w[bn::weight<3>::offset + c] == Approx(0.9 + 0.1 * variance).epsilon(1e-6));
        // Not the whole batch's variance: its micro-batches' spreads are smaller.
        CHECK(w[bn::weight<3>::offset + c] != Approx(0.9 + 0.1 * moments(d, 0, 20, c)[1]).epsilon(1e-4));
    }
}

TEST_CASE("BatchNormalization: predict and evaluate use the moving statistics", "[batchnorm]")
{
    const auto d = make_sequences(16, 3);
    auto m = TpuStrategy<1, 1>{}.scope<Normalized>(7);
    m.compile(optimizers::Adam{.learning_rate = 0.05f}, losses::SparseCategoricalCrossentropy{});
    m.fit(d.x, d.y, {.batch_size = 8, .epochs = 3, .verbose = 0, .shuffle = false});
    const auto w = weights_of(m);
    const auto out = m.predict(d.x, {.batch_size = 5});
    using dense = Normalized::layer<2>;
    for (std::size_t i = 0; i < 16; ++i) {
        std::array<double, positions * channels> h{};
        for (std::size_t p = 0; p < positions; ++p)
            for (std::size_t c = 0; c < channels; ++c) {
                const double inv = 1.0 / std::sqrt(double{w[bn::weight<3>::offset + c]} + double{1e-3f});
                h[p * channels + c] = w[bn::weight<0>::offset + c] * (d.x(i, p, c) - w[bn::weight<2>::offset + c]) * inv +
                                      w[bn::weight<1>::offset + c];
            }
        std::array<double, 2> z{};
        for (std::size_t u = 0; u < 2; ++u) {
            z[u] = w[dense::weight<1>::offset + u];
            for (std::size_t k = 0; k < h.size(); ++k)
                z[u] += h[k] * w[dense::weight<0>::offset + k * 2 + u];
        }
        const double p1 = 1.0 / (1.0 + std::exp(z[0] - z[1]));
        INFO("sample " << i);
        CHECK(out[i * 2 + 1] == Approx(p1).margin(1e-5));
    }
}

TEST_CASE("BatchNormalization: one core and 2 or 8 replicas train to the same bits", "[batchnorm][distribute]")
{
    using Model = Sequential<Input<Shape<4>>, Dense<16>, BatchNormalization<>, Activation<Relu>, Dense<3, Softmax>>;
    const auto d = tpudsl_tests::make_toy(300, 4);
    auto train = [&](auto strategy) {
        auto m = strategy.template scope<Model>(11);
        m.compile(optimizers::Adam{.learning_rate = 0.01f}, losses::SparseCategoricalCrossentropy{},
                  metrics::SparseCategoricalAccuracy{});
        const History h = m.fit(d.x, d.y, {.batch_size = 64, .epochs = 20, .verbose = 0});
        const auto scores = m.evaluate(d.x, d.y, {.verbose = 0});
        return std::pair{weights_of(m), scores[1]};
    };
    const auto [one, accuracy] = train(OneDeviceStrategy{});
    const auto [two, accuracy2] = train(TpuStrategy<2>{});
    const auto [eight, accuracy8] = train(TpuStrategy<8>{});
    CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(one.data(), eight.data(), one.size() * sizeof(float)) == 0);
    CHECK(accuracy == accuracy8);
    CHECK(accuracy > 0.9);   // it learns (with the moving statistics at inference)
}

TEST_CASE("BatchNormalization: momentum 1 freezes the moving statistics, the optimizer never touches them",
          "[batchnorm]")
{
    const auto d = make_sequences(16, 5);
    auto m = OneDeviceStrategy{}.scope<Sequential<Input<Shape<positions, channels>>, BatchNormalization<1.0f>, Flatten,
                                                  Dense<2, Softmax>>>(7);
    m.compile(optimizers::Adam{.learning_rate = 0.05f}, losses::SparseCategoricalCrossentropy{});
    m.fit(d.x, d.y, {.batch_size = 8, .epochs = 2, .verbose = 0});
    const auto w = weights_of(m);
    for (std::size_t c = 0; c < channels; ++c) {
        CHECK(w[bn::weight<2>::offset + c] == 0.0f);
        CHECK(w[bn::weight<3>::offset + c] == 1.0f);
    }
}

TEST_CASE("BatchNormalization after an LSTM's sequences: one core and 2 or 8 replicas train to the same bits",
          "[batchnorm][distribute]")
{
    using Model = Sequential<Input<Shape<12>, std::int32_t>, Embedding<20, 6>, LSTM<8, true>, BatchNormalization<0.9f>,
                             GlobalAveragePooling1D, Dense<3, Softmax>>;
    xt::xtensor<std::int32_t, 2> x(std::array<std::size_t, 2>{90, 12});
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{90});
    std::mt19937 gen(9);
    std::uniform_int_distribution<int> id(0, 19);
    for (std::size_t i = 0; i < 90; ++i) {
        for (std::size_t t = 0; t < 12; ++t)
            x(i, t) = id(gen);
        y(i) = x(i, 0) % 3;
    }
    auto train = [&](auto strategy) {
        auto m = strategy.template scope<Model>(13);
        m.compile(optimizers::Adam{.learning_rate = 0.01f}, losses::SparseCategoricalCrossentropy{});
        m.fit(x, y, {.batch_size = 40, .epochs = 2, .verbose = 0});   // 40, 40 and 10 samples a step
        return weights_of(m);
    };
    const auto one = train(OneDeviceStrategy{});
    const auto two = train(TpuStrategy<2>{});
    const auto eight = train(TpuStrategy<8>{});
    CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(one.data(), eight.data(), one.size() * sizeof(float)) == 0);
    using B = Model::layer<2>;
    CHECK(one[B::weight<2>::offset] != 0.0f);   // the moving mean moved
}
