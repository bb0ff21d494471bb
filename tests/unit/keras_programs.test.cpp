// Two programs a Keras user writes in their first week, written as in Keras: a binary classifier of
// token sequences and a regression MLP, with validation_split, class_weight (sample_weight for the
// regression), EarlyStopping and TensorBoard. Each Keras program is in the comment above its test,
// line for line; the C++ between the markers is what a user writes for it. They train on synthetic
// data with a known rule, to real accuracy.
#include "scratch_dir.hpp"

#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <random>
#include <vector>

using namespace tpudsl;

namespace {

/// Reviews of 20 token ids from a vocabulary of 1,000: a positive review (one in four) holds more of
/// the ids 1-50 than of 51-100, a negative one the other way round; the rest is noise.
struct reviews {
    xt::xtensor<std::int32_t, 2> x;
    xt::xtensor<float, 1> y;
};

reviews
make_reviews(std::size_t n, std::uint32_t seed)
{
    reviews r{xt::xtensor<std::int32_t, 2>(std::array<std::size_t, 2>{n, 20}),
              xt::xtensor<float, 1>(std::array<std::size_t, 1>{n})};
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> noise(101, 999), good(1, 50), bad(51, 100), coin(0, 3);
    for (std::size_t i = 0; i < n; ++i) {
        const bool positive = coin(gen) == 0;
        r.y(i) = positive ? 1.0f : 0.0f;
        for (std::size_t t = 0; t < 20; ++t) {
            const int kind = coin(gen);
            r.x(i, t) = kind == 0 ? (positive ? good(gen) : bad(gen)) : kind == 1 ? (positive ? bad(gen) / 2 + 25 : good(gen) / 2 + 50) : noise(gen);
        }
    }
    return r;
}

/// Houses: 8 features in [-1, 1]; the price a smooth function of them plus a little noise.
struct houses {
    xt::xtensor<float, 2> x;
    xt::xtensor<float, 1> y;
};

houses
make_houses(std::size_t n, std::uint32_t seed)
{
    houses h{xt::xtensor<float, 2>(std::array<std::size_t, 2>{n, 8}), xt::xtensor<float, 1>(std::array<std::size_t, 1>{n})};
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::normal_distribution<float> noise(0.0f, 0.05f);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < 8; ++j)
            h.x(i, j) = u(gen);
        h.y(i) = 2.0f * h.x(i, 0) - h.x(i, 1) * h.x(i, 2) + std::sin(3.0f * h.x(i, 3)) + noise(gen);
    }
    return h;
}

} // namespace

// Keras (11 lines):
//   model = keras.Sequential([keras.Input((20,), dtype="int32"), layers.Embedding(1000, 16),
//                             layers.GlobalAveragePooling1D(), layers.Dense(16, activation="relu"),
//                             layers.Dense(1, activation="sigmoid")])
//   model.compile(optimizer="adam", loss="binary_crossentropy",
//                 metrics=["binary_accuracy", keras.metrics.AUC()])
//   stop = keras.callbacks.EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True)
//   history = model.fit(x, y, batch_size=32, epochs=20, validation_split=0.2,
//                       class_weight={0: 1.0, 1: 3.0},
//                       callbacks=[stop, keras.callbacks.TensorBoard(log_dir)])
//   loss, accuracy, auc = model.evaluate(x_test, y_test)
TEST_CASE("a binary classifier of token ids, written as in Keras", "[keras_programs]")
{
    const tpudsl_tests::scratch_dir dir("keras_programs_binary");
    const auto train = make_reviews(2000, 1), test = make_reviews(500, 2);
    const auto& [x, y] = train;
    const auto& [x_test, y_test] = test;
    const std::string log_dir = (dir.path / "logs").string();
    // [binary_classifier]
    using Model = Sequential<Input<Shape<20>, std::int32_t>, Embedding<1000, 16>, GlobalAveragePooling1D,
                             Dense<16, Relu>, Dense<1, Sigmoid>>;
    Trainable<Model> model(1);
    model.compile(optimizers::Adam{}, losses::BinaryCrossentropy{}, metrics::BinaryAccuracy{}, metrics::AUC{});
    EarlyStopping stop({.monitor = "val_loss", .patience = 2, .restore_best_weights = true});
    const History history =
        model.fit(x, y, {.batch_size = 32, .epochs = 20, .validation_split = 0.2, .class_weight = {{0, 1.0f}, {1, 3.0f}},
                         .callbacks = {stop, TensorBoard(log_dir)}});
    const Scores scores = model.evaluate(x_test, y_test);
    // [binary_classifier]
    CHECK(scores["binary_accuracy"] > 0.9);
    CHECK(scores["auc"] > 0.95);
    CHECK(history["val_loss"].size() == history["loss"].size());
    CHECK(history["loss"].back() < history["loss"].front());
    CHECK(std::filesystem::exists(dir.path / "logs" / "train"));
    CHECK(std::filesystem::exists(dir.path / "logs" / "validation"));
}

// Keras (11 lines):
//   model = keras.Sequential([keras.Input((8,)), layers.Dense(64, activation="relu"),
//                             layers.Dense(64, activation="relu"), layers.Dense(1)])
//   model.compile(optimizer=keras.optimizers.Adam(learning_rate=3e-3), loss="mse",
//                 metrics=["mae", keras.metrics.RootMeanSquaredError()])
//   stop = keras.callbacks.EarlyStopping(monitor="val_loss", patience=3, restore_best_weights=True)
//   weights = np.where(np.abs(x[:, 0]) > 0.5, 2.0, 1.0)
//   history = model.fit(x, y, batch_size=32, epochs=40, validation_split=0.2, sample_weight=weights,
//                       callbacks=[stop, keras.callbacks.TensorBoard(log_dir)])
//   loss, mae, rmse = model.evaluate(x_test, y_test)
TEST_CASE("a regression MLP, written as in Keras", "[keras_programs]")
{
    const tpudsl_tests::scratch_dir dir("keras_programs_regression");
    const auto train = make_houses(2000, 3), test = make_houses(500, 4);
    const auto& [x, y] = train;
    const auto& [x_test, y_test] = test;
    const std::string log_dir = (dir.path / "logs").string();
    // [regression_mlp]
    using Model = Sequential<Input<Shape<8>>, Dense<64, Relu>, Dense<64, Relu>, Dense<1>>;
    Trainable<Model> model(1);
    model.compile(optimizers::Adam{.learning_rate = 3e-3f}, losses::MeanSquaredError{}, metrics::MeanAbsoluteError{},
                  metrics::RootMeanSquaredError{});
    EarlyStopping stop({.monitor = "val_loss", .patience = 3, .restore_best_weights = true});
    std::vector<float> weights(x.shape()[0]);
    for (std::size_t i = 0; i < weights.size(); ++i)
        weights[i] = std::abs(x(i, 0)) > 0.5f ? 2.0f : 1.0f;
    const History history = model.fit(x, y, {.batch_size = 32, .epochs = 40, .validation_split = 0.2,
                                             .sample_weight = weights, .callbacks = {stop, TensorBoard(log_dir)}});
    const Scores scores = model.evaluate(x_test, y_test);
    // [regression_mlp]
    // the price's spread is about 1.4; a model that learned the rule errs by a small part of it
    CHECK(scores["mean_absolute_error"] < 0.15);
    CHECK(scores["root_mean_squared_error"] == Approx(std::sqrt(scores["loss"])).epsilon(1e-5));
    CHECK(history["val_loss"].back() < 0.1 * history["val_loss"].front());
    CHECK(std::filesystem::exists(dir.path / "logs" / "train"));
}
