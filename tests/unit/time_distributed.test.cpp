// TimeDistributed<Dense>: a per-timestep classifier trained end to end, with Keras' per-timestep
// losses and accuracies (a sample's loss the mean over its timesteps, accuracy the fraction of
// timesteps right), sparse labels (samples, T) and one-hot ones (samples, T, classes).
#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <xtensor/xtensor.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <sstream>
#include <vector>

using namespace tpudsl;

namespace {

constexpr std::size_t T = 10, F = 4, C = 3;

// [tagger_model]
using Tagger = Sequential<Input<Shape<10, 4>>,                  // (timesteps, features)
                          Conv1D<16, 3, Relu, Same>,            // (10, 16)
                          TimeDistributed<Dense<3, Softmax>>>;  // (10, 3): a class per timestep
// [tagger_model]

static_assert(std::is_same_v<Tagger::output_shape, Shape<T, C>>);
static_assert(Tagger::param_count == (3 * 4 * 16 + 16) + (16 * 3 + 3));

/// A sequence-labelling toy: each timestep's label is the largest of its first three features, its
/// neighbours giving context the Conv1D may use.
struct tagged {
    xt::xtensor<float, 3> x;          // (n, T, F)
    xt::xtensor<std::int32_t, 2> y;   // (n, T)
    xt::xtensor<float, 3> one_hot;    // (n, T, C)
};

tagged
make_tagged(std::size_t n, std::uint32_t seed)
{
    tagged d{xt::xtensor<float, 3>(std::array<std::size_t, 3>{n, T, F}),
             xt::xtensor<std::int32_t, 2>(std::array<std::size_t, 2>{n, T}),
             xt::xtensor<float, 3>(std::array<std::size_t, 3>{n, T, C})};
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    d.one_hot.fill(0.0f);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t t = 0; t < T; ++t) {
            for (std::size_t f = 0; f < F; ++f)
                d.x(i, t, f) = u(gen);
            const float* row = &d.x(i, t, 0);
            d.y(i, t) = static_cast<std::int32_t>(std::max_element(row, row + C) - row);
            d.one_hot(i, t, static_cast<std::size_t>(d.y(i, t))) = 1.0f;
        }
    return d;
}

/// Keras' numbers from the predictions: the mean over every timestep of -log p(label), and the
/// fraction of timesteps whose argmax is the label.
std::pair<double, double>
by_hand(const std::vector<float>& p, const tagged& d)
{
    const std::size_t rows = d.y.size();
    double loss = 0.0, hits = 0.0;
    for (std::size_t r = 0; r < rows; ++r) {
        const float* row = p.data() + r * C;
        const auto label = static_cast<std::size_t>(d.y.data()[r]);
        loss -= std::log(static_cast<double>(row[label]));
        hits += static_cast<std::size_t>(std::max_element(row, row + C) - row) == label;
    }
    return {loss / static_cast<double>(rows), hits / static_cast<double>(rows)};
}

} // namespace

TEST_CASE("TimeDistributed: a per-timestep classifier learns a sequence-labelling toy", "[time_distributed][fit]")
{
    const auto train = make_tagged(400, 1), test = make_tagged(100, 2);
    Trainable<Tagger> model(3);
    model.compile(optimizers::Adam{.learning_rate = 0.01f}, losses::SparseCategoricalCrossentropy{},
                  metrics::SparseCategoricalAccuracy{});
    const auto before = model.evaluate(test.x, test.y, {.batch_size = 50, .verbose = 0});
    const History h = model.fit(train.x, train.y, {.batch_size = 20, .epochs = 8, .verbose = 0});
    const auto after = model.evaluate(test.x, test.y, {.batch_size = 50, .verbose = 0});
    INFO("accuracy " << before[1] << " -> " << after[1] << ", loss " << before[0] << " -> " << after[0]);
    CHECK(before[1] < 0.6);
    CHECK(after[1] > 0.9);
    CHECK(after[0] < 0.5 * before[0]);
    CHECK(h["sparse_categorical_accuracy"].back() > 0.85);
}

TEST_CASE("TimeDistributed: the loss is the mean over every timestep, accuracy the fraction of timesteps right",
          "[time_distributed][losses]")
{
    const auto d = make_tagged(30, 4);
    Trainable<Tagger> model(5);
    model.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    const auto p = model.predict(d.x, {.batch_size = 8});
    REQUIRE(p.size() == 30 * T * C);
    // Keras' array: (samples, timesteps, classes), indexed per axis, row-major
    CHECK(p.shape() == std::array<std::size_t, 3>{30, T, C});
    CHECK(p(7, 4, 2) == p[(7 * T + 4) * C + 2]);
    CHECK(p.row(7)[4 * C + 2] == p(7, 4, 2));
    for (std::size_t r = 0; r < 30 * T; ++r)   // a softmax per timestep
        CHECK(p[r * C] + p[r * C + 1] + p[r * C + 2] == Approx(1.0).epsilon(1e-5));
    const auto [loss, accuracy] = by_hand(p, d);
    const auto scores = model.evaluate(d.x, d.y, {.batch_size = 7, .verbose = 0});
    CHECK(scores[0] == Approx(loss).epsilon(1e-5));
    CHECK(scores[1] == Approx(accuracy).epsilon(1e-12));

    // One-hot targets (samples, T, classes): the same numbers.
    Trainable<Tagger> dense(5);
    dense.compile(optimizers::SGD{}, losses::CategoricalCrossentropy{}, metrics::CategoricalAccuracy{});
    const auto one_hot = dense.evaluate(d.x, d.one_hot, {.batch_size = 7, .verbose = 0});
    CHECK(one_hot[0] == Approx(loss).epsilon(1e-5));
    CHECK(one_hot[1] == Approx(accuracy).epsilon(1e-12));
}

TEST_CASE("TimeDistributed with ignore_class: padded timesteps count for nothing in the loss, and as misses in "
          "accuracy (Keras)",
          "[time_distributed][losses]")
{
    auto d = make_tagged(30, 8);
    for (std::size_t i = 0; i < 30; ++i)   // sample i's last i % 4 timesteps are padding
        for (std::size_t t = T - i % 4; t < T; ++t)
            d.y(i, t) = -1;
    Trainable<Tagger> model(5);
    model.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{.ignore_class = -1},
                  metrics::SparseCategoricalAccuracy{});
    const auto p = model.predict(d.x, {.batch_size = 8});
    double loss = 0.0, hits = 0.0, scored = 0.0;
    for (std::size_t r = 0; r < 30 * T; ++r) {
        if (d.y.data()[r] < 0)
            continue;
        const float* row = p.data() + r * C;
        const auto label = static_cast<std::size_t>(d.y.data()[r]);
        loss -= std::log(static_cast<double>(row[label]));
        hits += static_cast<std::size_t>(std::max_element(row, row + C) - row) == label;
        scored += 1.0;
    }
    // one batch: Keras' loss is the mean over the scored timesteps; its accuracy reads every timestep
    const auto scores = model.evaluate(d.x, d.y, {.batch_size = 30, .verbose = 0});
    CHECK(scores[0] == Approx(loss / scored).epsilon(1e-5));
    CHECK(scores[1] == Approx(hits / (30.0 * T)).epsilon(1e-12));
    // trained, the loss falls on the scored timesteps, as without padding
    const History h = model.fit(d.x, d.y, {.batch_size = 10, .epochs = 3, .verbose = 0});
    CHECK(std::isfinite(h["loss"].back()));
    CHECK(h["loss"].back() < scores[0]);
}

TEST_CASE("TimeDistributed: one step's gradient is that of the mean over the timesteps", "[time_distributed][losses]")
{
    // The same step as a model whose T timesteps are T samples of one Dense: a batch of n samples of
    // T timesteps is n T rows, each weighted 1 / (n T).
    constexpr std::size_t n = 6;
    using Rows = Sequential<Input<Shape<F>>, Dense<C, Softmax>>;
    using Wrapped = Sequential<Input<Shape<T, F>>, TimeDistributed<Dense<C, Softmax>>>;
    const auto d = make_tagged(n, 6);
    xt::xtensor<float, 2> x_rows(std::array<std::size_t, 2>{n * T, F});
    xt::xtensor<std::int32_t, 1> y_rows(std::array<std::size_t, 1>{n * T});
    std::copy(d.x.begin(), d.x.end(), x_rows.begin());
    std::copy(d.y.begin(), d.y.end(), y_rows.begin());
    Trainable<Wrapped> wrapped(9);
    Trainable<Rows> rows(1);
    rows.set_weights(wrapped.get_weights());
    wrapped.compile(optimizers::SGD{.learning_rate = 0.5f}, losses::SparseCategoricalCrossentropy{});
    rows.compile(optimizers::SGD{.learning_rate = 0.5f}, losses::SparseCategoricalCrossentropy{});
    std::ostringstream quiet;
    const History a = wrapped.fit(d.x, d.y, {.batch_size = n, .epochs = 1, .verbose = 0, .shuffle = false, .out = &quiet});
    const History b = rows.fit(x_rows, y_rows, {.batch_size = n * T, .epochs = 1, .verbose = 0, .shuffle = false, .out = &quiet});
    CHECK(a["loss"][0] == Approx(b["loss"][0]).epsilon(1e-6));
    const auto wa = wrapped.get_weights(), wb = rows.get_weights();
    REQUIRE(wa.size() == wb.size());
    for (std::size_t i = 0; i < wa.size(); ++i)
        CHECK(wa[i] == Approx(wb[i]).margin(1e-6));
}

TEST_CASE("TimeDistributed: a Dataset of (T) labels trains as the arrays do", "[time_distributed][dataset]")
{
    using Ex = Example<Shape<T, F>, float, std::int32_t, T>;
    const auto d = make_tagged(60, 7);
    auto ds = Dataset<Ex>::from_tensor_slices(d.x, d.y).batch<20>();
    Trainable<Tagger> from_arrays(3), from_dataset(3);
    from_arrays.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    from_dataset.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    from_arrays.fit(d.x, d.y, {.batch_size = 20, .epochs = 2, .verbose = 0, .shuffle = false});
    from_dataset.fit(ds, {.epochs = 2, .verbose = 0});
    CHECK(from_arrays.get_weights() == from_dataset.get_weights());
}

TEST_CASE("TimeDistributed: labels of the wrong shape or outside the classes are refused, saying where",
          "[time_distributed][errors]")
{
    auto d = make_tagged(5, 8);
    Trainable<Tagger> model(3);
    model.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    const xt::xtensor<std::int32_t, 1> one_per_sample(std::array<std::size_t, 1>{5}, 0);
    CHECK_THROWS_WITH(model.fit(d.x, one_per_sample, {.verbose = 0}),
                      Catch::Contains("sparse labels are one class id per timestep: (samples, 10)"));
    d.y(2, 7) = 3;
    CHECK_THROWS_WITH(model.fit(d.x, d.y, {.verbose = 0}),
                      Catch::Contains("label 3 at sample 2, position 7 of y is outside [0, 3)"));
    xt::xtensor<std::int64_t, 2> wide = xt::cast<std::int64_t>(d.y);   // converted where it enters
    CHECK_THROWS_WITH(model.evaluate(d.x, wide, {.verbose = 0}),
                      Catch::Contains("label 3 at sample 2, position 7 of y is outside [0, 3)"));
}
