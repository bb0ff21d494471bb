// The model object: Keras' progress output, History, fit's arguments, bad input, determinism,
// callbacks and weight files.
#include "scratch_dir.hpp"
#include "toy_data.hpp"

#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <cmath>
#include <limits>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <random>
#include <regex>
#include <thread>
#include <type_traits>
#include <chrono>
#include <algorithm>
#include <sstream>
#include <string>
#include <iterator>
#include <system_error>
#include <utility>
#include <vector>

using namespace tpudsl;

namespace {

using Toy = Sequential<Input<Shape<4>>, Dense<8, Tanh>, Dense<3, Softmax>>;

/// A learnable toy problem: the class is the index of the largest of the first three features.
using tpudsl_tests::make_toy;
using tpudsl_tests::toy_data;

std::vector<std::string>
lines(const std::string& s)
{
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);)
        out.push_back(l);
    return out;
}

} // namespace

TEST_CASE("progress line: Keras' bar, ETA, step time and values", "[fit][format]")
{
    Logs logs;
    logs.set("loss", 0.5);
    logs.set("sparse_categorical_accuracy", 0.0001234);
    CHECK(progbar_line(3, 10, 1.0, 1.0, logs) ==
          " 3/10 [========>.....................] - ETA: 7s - loss: 0.5000 - sparse_categorical_accuracy: 1.2340e-04");
    CHECK(progbar_line(281, 281, 5.6, 0.0204, logs) ==
          "281/281 [==============================] - 6s 20ms/step - loss: 0.5000 - sparse_categorical_accuracy: "
          "1.2340e-04");
    CHECK(progbar_line(1, 1, 0.0, 0.0004, Logs{}) == "1/1 [==============================] - 0s 400us/step");
    CHECK(progbar_line(0, 100, 0.0, 100.0, Logs{}).find(" - ETA: 2:46:40") != std::string::npos);
    CHECK(progbar_epoch_line(281, 6.2, logs) == "281/281 - 6s - loss: 0.5000 - sparse_categorical_accuracy: 1.2340e-04");
    // an unknown length (Keras' first pass over a generator): no bar
    CHECK(progbar_line(281, 0, 5.6, 0.02, Logs{}) == "    281/Unknown - 6s 20ms/step");
}

TEST_CASE("fit prints Epoch i/N and one Keras line per epoch, History holds val_* only when validated",
          "[fit][format]")
{
    const auto train = make_toy(256, 1);
    const auto val = make_toy(64, 2);
    Trainable<Toy> model(3);
    model.compile(optimizers::Adam{.learning_rate = 0.01f}, losses::SparseCategoricalCrossentropy{},
                  metrics::SparseCategoricalAccuracy{});
    std::ostringstream out;
    // [fit_call]
    auto history = model.fit(train.x, train.y,
                             {.batch_size = 32,
                              .epochs = 3,
                              .validation_data = validation_data(val.x, val.y),
                              .validation_freq = 2,
                              .out = &out});
    // [fit_call]
    const auto l = lines(out.str());
    REQUIRE(l.size() == 6);
    CHECK(l[0] == "Epoch 1/3");
    const std::regex plain(R"(8/8 \[==============================\] - \d+s \d+(s|ms|us)/step - loss: \d\.\d{4} - )"
                           R"(sparse_categorical_accuracy: \d\.\d{4})");
    const std::regex validated(R"(8/8 \[={30}\] - \d+s \d+(s|ms|us)/step - loss: \d\.\d{4} - sparse_categorical_accuracy: )"
                               R"(\d\.\d{4} - val_loss: \d\.\d{4} - val_sparse_categorical_accuracy: \d\.\d{4})");
    CHECK(std::regex_match(l[1], plain));
    CHECK(l[2] == "Epoch 2/3");
    CHECK(std::regex_match(l[3], validated));
    CHECK(l[4] == "Epoch 3/3");
    CHECK(std::regex_match(l[5], plain));

    CHECK(history.epoch == std::vector<std::size_t>{0, 1, 2});
    CHECK(history["loss"].size() == 3);
    CHECK(history["sparse_categorical_accuracy"].size() == 3);
    CHECK(history["val_loss"].size() == 1);
    CHECK(history["val_sparse_categorical_accuracy"].size() == 1);
    CHECK(history.params.steps == 8);
    CHECK(history.params.epochs == 3);
    CHECK(history["loss"][2] < history["loss"][0]);
    CHECK(model.iterations() == 24);

    // the reported epoch loss is the per-sample mean: evaluate on the same data agrees in kind
    const auto scores = model.evaluate(val.x, val.y, {.verbose = 0});
    CHECK(scores.size() == 2);
    CHECK(scores[1] > 0.7);   // chance is 1/3
    // by name, as Keras' return_dict=True
    CHECK(scores.names() == std::vector<std::string>{"loss", "sparse_categorical_accuracy"});
    CHECK(scores["loss"] == scores[0]);
    CHECK(scores["sparse_categorical_accuracy"] == scores[1]);
    CHECK(scores.contains("loss"));
    CHECK_THROWS_WITH(scores["accuracy"], Catch::Contains("no value named 'accuracy'") &&
                                              Catch::Contains("loss, sparse_categorical_accuracy"));
}

TEST_CASE("the trained model reads as Keras' Model, a user's own Model alias stays free", "[fit]")
{
    STATIC_REQUIRE(std::is_same_v<keras::Model<Toy>, Trainable<Toy, OneDeviceStrategy>>);
    STATIC_REQUIRE(std::is_same_v<keras::Model<Toy, TpuStrategy<2>>, decltype(TpuStrategy<2>{}.scope<Toy>())>);
    using Model = Toy;   // what users write beside `using namespace tpudsl`
    STATIC_REQUIRE(Model::layer_count == 2);
    keras::Model<Model> model(1);
    CHECK(model.iterations() == 0);
}

TEST_CASE("compile's warnings go to the model's output stream", "[fit]")
{
    using Soft = Sequential<Input<Shape<4>>, Dense<3, Softmax>>;
    Trainable<Soft> model(1);
    std::ostringstream out;
    model.set_output(out);
    model.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{.from_logits = true});
    CHECK(out.str().find("UserWarning: \"`sparse_categorical_crossentropy` received `from_logits=True`") == 0);
    CHECK(&model.output() == &out);
}

TEST_CASE("callbacks written in place belong to the list, named ones are read after fit", "[fit][callbacks]")
{
    const auto train = make_toy(64, 8);
    Trainable<Toy> model(5);
    model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    // No epoch improves the loss by 100: the owned EarlyStopping stops training after the second epoch.
    auto history = model.fit(train.x, train.y,
                             {.batch_size = 16, .epochs = 10, .verbose = 0,
                              .callbacks = {EarlyStopping({.monitor = "loss", .min_delta = 100.0})}});
    CHECK(history.epoch.size() == 2);
    // A named one is the caller's: its state is there to read afterwards.
    EarlyStopping named({.monitor = "loss", .min_delta = 100.0, .patience = 2});
    history = model.fit(train.x, train.y, {.batch_size = 16, .epochs = 10, .verbose = 0, .callbacks = {named}});
    CHECK(history.epoch.size() == 3);
    CHECK(named.stopped_epoch() == std::size_t{2});
    TerminateOnNaN terminate;
    history = model.fit(train.x, train.y,
                        {.batch_size = 16, .epochs = 1, .verbose = 0, .callbacks = {std::ref(terminate)}});
    CHECK(history.epoch.size() == 1);
}

// Records the hooks fit calls, in order.
class HookLog : public Callback {
public:
    std::vector<std::string> calls;
    void on_train_begin(TrainingControl&) override { calls.push_back("train_begin"); }
    void on_epoch_begin(std::size_t e, Logs&, TrainingControl&) override { calls.push_back("epoch_begin " + std::to_string(e)); }
    void
    on_train_batch_end(std::size_t b, const Logs&, TrainingControl&) override
    {
        calls.push_back("batch_end " + std::to_string(b));
    }
    void on_epoch_end(std::size_t e, Logs&, TrainingControl&) override { calls.push_back("epoch_end " + std::to_string(e)); }
    void on_train_end(TrainingControl&) override { calls.push_back("train_end"); }
};

// A library callback with one hook of its own added.
class CountingEarlyStopping : public EarlyStopping {
public:
    using EarlyStopping::EarlyStopping;
    std::size_t epochs_ended = 0;
    void
    on_epoch_end(std::size_t epoch, Logs& logs, TrainingControl& control) override
    {
        ++epochs_ended;
        EarlyStopping::on_epoch_end(epoch, logs, control);
    }
};

TEST_CASE("fit calls each callback's own hooks, given as itself, as its base class or moved in", "[fit][callbacks]")
{
    const auto train = make_toy(48, 8);
    Trainable<Toy> model(5);
    model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    const std::vector<std::string> expected{"train_begin", "epoch_begin 0", "batch_end 0", "batch_end 1", "batch_end 2",
                                            "epoch_end 0", "epoch_begin 1", "batch_end 0", "batch_end 1", "batch_end 2",
                                            "epoch_end 1", "train_end"};
    HookLog named;
    model.fit(train.x, train.y, {.batch_size = 16, .epochs = 2, .verbose = 0, .callbacks = {named}});
    CHECK(named.calls == expected);
    HookLog behind_base;
    Callback& base = behind_base;   // the hooks are virtual: the derived class' run
    model.fit(train.x, train.y, {.batch_size = 16, .epochs = 2, .verbose = 0, .callbacks = {base}});
    CHECK(behind_base.calls == expected);
    // A class derived from a library callback: its override runs, and the library's behaviour with it
    // (no epoch improves the loss by 100: stopped after the second of ten).
    CountingEarlyStopping stopper({.monitor = "loss", .min_delta = 100.0});
    EarlyStopping& as_library = stopper;
    const auto history =
        model.fit(train.x, train.y, {.batch_size = 16, .epochs = 10, .verbose = 0, .callbacks = {as_library}});
    CHECK(history.epoch.size() == 2);
    CHECK(stopper.epochs_ended == 2);
    CHECK(stopper.stopped_epoch() == std::size_t{1});
}

TEST_CASE("verbose=2 prints one line per epoch, verbose=0 prints nothing", "[fit][format]")
{
    const auto train = make_toy(100, 4);
    Trainable<Toy> model;
    model.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    std::ostringstream two, zero;
    model.fit(train.x, train.y, {.batch_size = 32, .epochs = 2, .verbose = 2, .out = &two});
    const auto l = lines(two.str());
    REQUIRE(l.size() == 4);
    CHECK(std::regex_match(l[1], std::regex(R"(4/4 - \d+s - loss: \d\.\d{4} - sparse_categorical_accuracy: \d\.\d{4})")));
    model.fit(train.x, train.y, {.batch_size = 32, .epochs = 1, .verbose = 0, .out = &zero});
    CHECK(zero.str().empty());
}

TEST_CASE("steps_per_epoch, initial_epoch and partial batches", "[fit]")
{
    const auto train = make_toy(100, 5);
    Trainable<Toy> model;
    model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{});
    auto h = model.fit(train.x, train.y, {.batch_size = 32, .epochs = 5, .verbose = 0, .steps_per_epoch = 3});
    CHECK(model.iterations() == 15);   // the batch stream runs on across epochs
    CHECK(h.params.steps == 3);
    auto h2 = model.fit(train.x, train.y, {.batch_size = 32, .epochs = 4, .verbose = 0, .initial_epoch = 2});
    CHECK(h2.epoch == std::vector<std::size_t>{2, 3});
    CHECK(model.iterations() == 15 + 2 * 4);   // 100 samples: 3 batches of 32 and one of 4
}

TEST_CASE("validation_split validates on the arrays' last fraction, taken before shuffling, as Keras", "[fit]")
{
    const auto data = make_toy(100, 12);
    auto compiled = [](Trainable<Toy>& m) {
        m.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    };
    Trainable<Toy> split(4);
    compiled(split);
    // floor(100 x (1 - 0.25)) = 75 samples trained on, in batches of 16: 5 steps an epoch
    const History h = split.fit(data.x, data.y, {.batch_size = 16, .epochs = 3, .verbose = 0, .validation_split = 0.25});
    CHECK(h.params.steps == 5);
    REQUIRE(h["val_loss"].size() == 3);

    // the same as training on the first 75 samples and validating on the last 25
    const xt::xtensor<float, 2> x_train = xt::view(data.x, xt::range(0, 75));
    const xt::xtensor<std::int32_t, 1> y_train = xt::view(data.y, xt::range(0, 75));
    const xt::xtensor<float, 2> x_val = xt::view(data.x, xt::range(75, 100));
    const xt::xtensor<std::int32_t, 1> y_val = xt::view(data.y, xt::range(75, 100));
    Trainable<Toy> by_hand(4);
    compiled(by_hand);
    const History hand = by_hand.fit(x_train, y_train, {.batch_size = 16, .epochs = 3, .verbose = 0,
                                                        .validation_data = validation_data(x_val, y_val)});
    CHECK(std::memcmp(split.parameters(), by_hand.parameters(), Toy::param_buffer_size * sizeof(float)) == 0);
    CHECK(h["val_loss"] == hand["val_loss"]);
    CHECK(h["val_sparse_categorical_accuracy"] == hand["val_sparse_categorical_accuracy"]);

    // validation_data, when given, is used instead (Keras' precedence): all 100 samples are trained on
    Trainable<Toy> both(4);
    compiled(both);
    const History hb = both.fit(data.x, data.y, {.batch_size = 16, .epochs = 1, .verbose = 0, .validation_split = 0.25,
                                                  .validation_data = validation_data(x_val, y_val)});
    CHECK(hb.params.steps == 7);
    CHECK(hb.contains("val_loss"));

    CHECK_THROWS_WITH(split.fit(data.x, data.y, {.verbose = 0, .validation_split = 0.995}),
                      Catch::Contains("holds 100 samples, too few to split") && Catch::Contains("0.995"));
    CHECK_THROWS_WITH(split.fit(data.x, data.y, {.verbose = 0, .validation_split = 1.0}),
                      Catch::Contains("validation_split must lie in [0, 1)"));
    CHECK_THROWS_WITH(split.fit(data.x, data.y, {.verbose = 0, .validation_split = -0.5}),
                      Catch::Contains("validation_split must lie in [0, 1)") && Catch::Contains("-0.5"));
    using Ex = Example<Shape<4>, float, std::int32_t>;
    const auto batches = Dataset<Ex>::from_tensor_slices(data.x, data.y).batch<16>();
    CHECK_THROWS_WITH(split.fit(batches, {.verbose = 0, .validation_split = 0.25}),
                      Catch::Contains("validation_split takes its samples from arrays, not from a Dataset"));
}

TEST_CASE("ignore_class: the ignored labels count for nothing and the mean is over the others, on every strategy",
          "[fit][losses]")
{
    const auto data = make_toy(48, 23);
    xt::xtensor<std::int32_t, 1> y = data.y, zeroed = data.y;
    std::vector<float> w(48);
    std::size_t scored = 0;
    for (std::size_t i = 0; i < 48; ++i)
        if (i % 5 == 0) {
            y(i) = -1;
            zeroed(i) = 0;
        } else {
            ++scored;
        }
    // the same step as sample weights of n / scored on the scored samples and 0 on the others
    for (std::size_t i = 0; i < 48; ++i)
        w[i] = i % 5 == 0 ? 0.0f : 48.0f / static_cast<float>(scored);
    auto train = [&](auto strategy, auto loss, const auto& labels, FitOptions options) {
        auto m = strategy.template scope<Toy>(5);
        m.compile(optimizers::SGD{.learning_rate = 0.1f}, loss, metrics::SparseCategoricalAccuracy{});
        options.batch_size = 48;
        options.epochs = 3;
        options.verbose = 0;
        const History h = m.fit(data.x, labels, options);
        return std::pair{m.get_weights(), h};
    };
    const losses::SparseCategoricalCrossentropy ignoring{.ignore_class = -1};
    const auto one = train(OneDeviceStrategy{}, ignoring, y, {});
    const auto two = train(TpuStrategy<2>{}, ignoring, y, {});
    const auto weighted = train(OneDeviceStrategy{}, losses::SparseCategoricalCrossentropy{}, zeroed, {.sample_weight = w});
    CHECK(one.first == two.first);
    CHECK(one.second["loss"] == two.second["loss"]);
    REQUIRE(one.first.size() == weighted.first.size());
    for (std::size_t i = 0; i < one.first.size(); ++i)
        CHECK(one.first[i] == Approx(weighted.first[i]).epsilon(1e-5).margin(1e-6));
    for (std::size_t e = 0; e < 3; ++e)
        CHECK(one.second["loss"][e] == Approx(weighted.second["loss"][e]).epsilon(1e-6));

    // evaluate: the loss over the scored samples alone, the accuracy over every sample (an ignored
    // label is never the argmax, as in Keras)
    Trainable<Toy> model(7);
    model.compile(optimizers::SGD{}, ignoring, metrics::SparseCategoricalAccuracy{});
    Trainable<Toy> plain(7);
    plain.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    xt::xtensor<float, 2> kept_x(std::array<std::size_t, 2>{scored, 4});
    xt::xtensor<std::int32_t, 1> kept_y(std::array<std::size_t, 1>{scored});
    for (std::size_t i = 0, k = 0; i < 48; ++i)
        if (i % 5 != 0) {
            xt::view(kept_x, k) = xt::view(data.x, i);
            kept_y(k++) = data.y(i);
        }
    const Scores all = model.evaluate(data.x, y, {.batch_size = 48, .verbose = 0});
    const Scores kept = plain.evaluate(kept_x, kept_y, {.batch_size = 48, .verbose = 0});
    CHECK(all[0] == Approx(kept[0]).epsilon(1e-6));
    CHECK(all[1] == Approx(kept[1] * static_cast<double>(scored) / 48.0).epsilon(1e-12));

    // the ignored label is accepted as given in any integer or float type; another outside the classes is not
    xt::xtensor<std::int8_t, 1> narrow = xt::cast<std::int8_t>(y);
    CHECK(model.evaluate(data.x, narrow, {.batch_size = 48, .verbose = 0})[0] == all[0]);
    y(3) = -2;
    narrow(3) = -2;
    const std::string refused = "tpudsl: label -2 at sample 3 of y is outside [0, 3) (the model's classes) and is not "
                                "the loss's ignore_class, -1";
    CHECK_THROWS_WITH(model.fit(data.x, y, {.verbose = 0}), refused);
    CHECK_THROWS_WITH(model.fit(data.x, narrow, {.verbose = 0}), refused);
    xt::xtensor<std::int32_t, 1> minus_one = zeroed;
    minus_one.fill(-1);
    CHECK_THROWS_WITH(plain.fit(data.x, minus_one, {.verbose = 0}),
                      Catch::Contains("label -1 at sample 0 of y is outside [0, 3) (the model's classes)"));
}

TEST_CASE("sample_weight and class_weight weigh each sample's loss and metrics, as Keras", "[fit]")
{
    const auto data = make_toy(96, 21);
    auto compiled = [](auto& m, float lr) {
        m.compile(optimizers::SGD{.learning_rate = lr}, losses::SparseCategoricalCrossentropy{},
                  metrics::SparseCategoricalAccuracy{});
    };
    // evaluate: the loss is sum(w l) / n and the accuracy sum(w hit) / sum(w), each sample's l and hit
    // as evaluate gives them for that sample alone
    Trainable<Toy> model(2);
    compiled(model, 0.1f);
    std::vector<float> w(96);
    for (std::size_t i = 0; i < 96; ++i)
        w[i] = static_cast<float>(i % 4) * 0.5f;   // 0, 0.5, 1, 1.5, ...
    const Scores weighted = model.evaluate(data.x, data.y, {.verbose = 0, .sample_weight = w});
    double loss = 0.0, hits = 0.0, total = 0.0;
    for (std::size_t i = 0; i < 96; ++i) {
        const xt::xtensor<float, 2> xi = xt::view(data.x, xt::range(i, i + 1));
        const xt::xtensor<std::int32_t, 1> yi = xt::view(data.y, xt::range(i, i + 1));
        const Scores one = model.evaluate(xi, yi, {.verbose = 0});
        loss += w[i] * one[0];
        hits += w[i] * one[1];
        total += w[i];
    }
    CHECK(weighted[0] == Approx(loss / 96).epsilon(1e-6));
    CHECK(weighted[1] == Approx(hits / total).epsilon(1e-12));

    // fit: a weight of 2 on every sample doubles every gradient, the same bits as SGD at twice the rate;
    // class_weight of 2 for every class is the same; on one core and on two replicas
    const std::vector<float> twos(96, 2.0f);
    auto train = [&](auto strategy, float lr, FitOptions options) {
        auto m = strategy.template scope<Toy>(5);
        compiled(m, lr);
        options.batch_size = 16;
        options.epochs = 2;
        options.verbose = 0;
        const History h = m.fit(data.x, data.y, options);
        return std::pair{m.get_weights(), h};
    };
    const auto doubled_rate = train(OneDeviceStrategy{}, 0.2f, {});
    const auto by_sample = train(OneDeviceStrategy{}, 0.1f, {.sample_weight = twos});
    const auto by_class = train(TpuStrategy<2>{}, 0.1f, {.class_weight = {{0, 2.0f}, {1, 2.0f}, {2, 2.0f}}});
    CHECK(by_sample.first == doubled_rate.first);
    CHECK(by_class.first == doubled_rate.first);
    CHECK(by_sample.second["loss"][0] == Approx(2 * doubled_rate.second["loss"][0]).epsilon(1e-12));

    // class_weight as the sample weights it makes: class 1 weighs 3, the others 1
    std::vector<float> from_classes(96);
    for (std::size_t i = 0; i < 96; ++i)
        from_classes[i] = data.y(i) == 1 ? 3.0f : 1.0f;
    CHECK(train(TpuStrategy<2>{}, 0.1f, {.class_weight = {{1, 3.0f}}}).first ==
          train(OneDeviceStrategy{}, 0.1f, {.sample_weight = from_classes}).first);

    // validation_split takes the weights' last fraction with its samples
    const auto split = train(OneDeviceStrategy{}, 0.1f, {.validation_split = 0.25, .sample_weight = w});
    Trainable<Toy> check(5);
    compiled(check, 0.1f);
    check.set_weights(split.first);
    const xt::xtensor<float, 2> x_val = xt::view(data.x, xt::range(72, 96));
    const xt::xtensor<std::int32_t, 1> y_val = xt::view(data.y, xt::range(72, 96));
    const std::vector<float> w_val(w.begin() + 72, w.end());
    CHECK(split.second["val_loss"].back() ==
          check.evaluate(x_val, y_val, {.batch_size = 16, .verbose = 0, .sample_weight = w_val})[0]);

    CHECK_THROWS_WITH(model.fit(data.x, data.y, {.verbose = 0, .sample_weight = twos, .class_weight = {{1, 2.0f}}}),
                      Catch::Contains("give class_weight or sample_weight, not both"));
    CHECK_THROWS_WITH(model.fit(data.x, data.y, {.verbose = 0, .sample_weight = std::vector<float>(95, 1.0f)}),
                      Catch::Contains("sample_weight holds 95 weights for 96 samples"));
    std::vector<float> bad = twos;
    bad[7] = -1.0f;
    CHECK_THROWS_WITH(model.evaluate(data.x, data.y, {.verbose = 0, .sample_weight = bad}),
                      Catch::Contains("evaluate: sample_weight[7] is -1; a weight is finite and >= 0"));
    CHECK_THROWS_WITH(model.fit(data.x, data.y, {.verbose = 0, .class_weight = {{0, NAN}}}),
                      Catch::Contains("class_weight of class 0 is nan"));
    using Ex = Example<Shape<4>, float, std::int32_t>;
    const auto batches = Dataset<Ex>::from_tensor_slices(data.x, data.y).batch<16>();
    CHECK_THROWS_WITH(model.fit(batches, {.verbose = 0, .sample_weight = twos}),
                      Catch::Contains("a Dataset's samples cannot be weighed yet"));
}

TEST_CASE("optimizer options: weight decay, clipping by value, a moving average, schedules", "[fit]")
{
    const auto data = make_toy(64, 23);
    auto trained = [&](auto optimizer, FitOptions options = {}) {
        auto m = TpuStrategy<2>{}.scope<Toy>(6);
        m.compile(optimizer, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
        options.batch_size = 16;
        options.epochs = options.epochs == 1 ? 2 : options.epochs;
        options.verbose = 0;
        m.fit(data.x, data.y, options);
        return m.get_weights();
    };
    // Adam with the decoupled decay of its options is AdamW, bit for bit
    CHECK(trained(optimizers::Adam{.options = {.weight_decay = 0.05f}}) ==
          trained(optimizers::AdamW{.weight_decay = 0.05f}));
    CHECK(trained(optimizers::Adam{.options = {.weight_decay = 0.05f}}) != trained(optimizers::Adam{}));

    // clipped by value, no weight moves by more than lr x clipvalue a step; a bound never met changes nothing
    const std::vector<float> start = Trainable<Toy>(6).get_weights();
    auto one_step = [&](optimizers::SGD sgd) {
        auto m = TpuStrategy<2>{}.scope<Toy>(6);
        m.compile(sgd, losses::SparseCategoricalCrossentropy{});
        m.fit(data.x, data.y, {.batch_size = 64, .epochs = 1, .verbose = 0});
        return m.get_weights();
    };
    const auto clipped = one_step(optimizers::SGD{.learning_rate = 1.0f, .options = {.clipvalue = 1e-3f}});
    std::size_t at_bound = 0;
    for (std::size_t i = 0; i < start.size(); ++i) {
        CHECK(std::abs(clipped[i] - start[i]) <= 1.001e-3f);
        at_bound += std::abs(clipped[i] - start[i]) > 0.999e-3f;
    }
    CHECK(at_bound > 10);
    CHECK(one_step(optimizers::SGD{.options = {.clipvalue = 1e30f}}) == one_step(optimizers::SGD{}));

    // clipped by norm: each weight's step (clipnorm), or the whole step (global_clipnorm), of length
    // lr x clip when the gradient is longer; on one core and two replicas to the same bits
    auto step_norms = [&](const std::vector<float>& after) {
        std::vector<double> norms;   // each weight's, then the whole step's
        double total = 0.0;
        for (const auto& [b, e] : ops::weight_ranges<Toy>::trainable) {
            double sq = 0.0;
            for (std::size_t i = b; i < e; ++i)
                sq += double{after[i] - start[i]} * (after[i] - start[i]);
            norms.push_back(std::sqrt(sq));
            total += sq;
        }
        norms.push_back(std::sqrt(total));
        return norms;
    };
    const auto per_weight = one_step(optimizers::SGD{.learning_rate = 1.0f, .options = {.clipnorm = 1e-4f}});
    const auto per_norms = step_norms(per_weight);
    REQUIRE(per_norms.size() == 5);
    for (std::size_t v = 0; v < 4; ++v)
        CHECK(per_norms[v] == Approx(1e-4).epsilon(1e-3));
    const auto global = one_step(optimizers::SGD{.learning_rate = 1.0f, .options = {.global_clipnorm = 1e-4f}});
    CHECK(step_norms(global)[4] == Approx(1e-4).epsilon(1e-3));
    const auto unclipped = one_step(optimizers::SGD{.learning_rate = 1.0f});
    const auto loose = one_step(optimizers::SGD{.learning_rate = 1.0f, .options = {.clipnorm = 1e6f}});
    for (std::size_t i = 0; i < start.size(); ++i)   // a bound never met scales by clip / clip
        CHECK(loose[i] == Approx(unclipped[i]).epsilon(1e-6));
    auto on_one_core = Trainable<Toy>(6);
    on_one_core.compile(optimizers::Adam{.options = {.global_clipnorm = 0.05f}}, losses::SparseCategoricalCrossentropy{});
    on_one_core.fit(data.x, data.y, {.batch_size = 16, .epochs = 2, .verbose = 0});
    CHECK(on_one_core.get_weights() == trained(optimizers::Adam{.options = {.global_clipnorm = 0.05f}}));

    // use_ema: training runs as without it, and the weights end as the moving average of each step's
    struct trajectory : Callback {
        std::vector<std::vector<float>> steps;
        void on_train_batch_end(std::size_t, const Logs&, TrainingControl& model) override
        {
            steps.push_back(model.get_weights());
        }
    } plain_steps;
    auto plain = TpuStrategy<2>{}.scope<Toy>(6);
    plain.compile(optimizers::SGD{.learning_rate = 0.1f}, losses::SparseCategoricalCrossentropy{});
    plain.fit(data.x, data.y, {.batch_size = 16, .epochs = 2, .verbose = 0, .callbacks = {CallbackRef(plain_steps)}});
    auto averaged = TpuStrategy<2>{}.scope<Toy>(6);
    averaged.compile(optimizers::SGD{.learning_rate = 0.1f, .options = {.use_ema = true, .ema_momentum = 0.75f}},
                     losses::SparseCategoricalCrossentropy{});
    averaged.fit(data.x, data.y, {.batch_size = 16, .epochs = 2, .verbose = 0});
    REQUIRE(plain_steps.steps.size() == 8);
    std::vector<double> ema(plain_steps.steps[0].begin(), plain_steps.steps[0].end());
    for (std::size_t k = 1; k < 8; ++k)
        for (std::size_t i = 0; i < ema.size(); ++i)
            ema[i] = 0.75 * ema[i] + 0.25 * plain_steps.steps[k][i];
    const auto final_weights = averaged.get_weights();
    for (std::size_t i = 0; i < ema.size(); ++i)
        CHECK(final_weights[i] == Approx(ema[i]).margin(1e-6));

    // a schedule that changes the rate after the first epoch's 4 steps is LearningRateScheduler doing so
    const auto by_schedule = trained(optimizers::Scheduled{optimizers::SGD{},
                                                           optimizers::schedules::PiecewiseConstantDecay{{3}, {0.2f, 0.05f}}});
    const auto by_callback =
        trained(optimizers::SGD{.learning_rate = 0.2f},
                {.callbacks = {LearningRateScheduler([](std::size_t epoch, double lr) { return epoch == 0 ? lr : 0.05f; })}});
    CHECK(by_schedule == by_callback);
    Trainable<Toy> refused(6);
    refused.compile(optimizers::Scheduled{optimizers::Adam{}, optimizers::schedules::InverseTimeDecay{
                                                                  .initial_learning_rate = 0.1f, .decay_steps = 5, .decay_rate = 1.0f}},
                    losses::SparseCategoricalCrossentropy{});
    CHECK(refused.learning_rate() == Approx(0.1));
    CHECK_THROWS_WITH(refused.set_learning_rate(0.5), Catch::Contains("hence its learning rate is not settable"));
    CHECK_THROWS_WITH(refused.compile(optimizers::SGD{.options = {.clipnorm = 1.0f, .clipvalue = 1.0f}},
                                      losses::SparseCategoricalCrossentropy{}),
                      Catch::Contains("only one of options.clipnorm, options.clipvalue and options.global_clipnorm"));
    CHECK_THROWS_WITH(refused.compile(optimizers::SGD{.options = {.weight_decay = -1.0f}},
                                      losses::SparseCategoricalCrossentropy{}),
                      Catch::Contains("tpudsl::optimizers::SGD: options.weight_decay must be a finite float >= 0, got -1"));
}

namespace {
/// The points of the polylines drawn for `key`, as (x, y) pairs, line by line.
std::vector<std::vector<std::pair<double, double>>>
polylines_of(const std::string& svg, const std::string& key)
{
    std::vector<std::vector<std::pair<double, double>>> lines;
    const std::string tag = "<polyline data-key=\"" + key + "\"";
    for (std::size_t at = svg.find(tag); at != std::string::npos; at = svg.find(tag, at + 1)) {
        const std::size_t begin = svg.find("points=\"", at) + 8, end = svg.find('"', begin);
        std::istringstream points(svg.substr(begin, end - begin));
        std::vector<std::pair<double, double>> line;
        for (std::string p; points >> p;) {
            const std::size_t comma = p.find(',');
            line.emplace_back(std::stod(p.substr(0, comma)), std::stod(p.substr(comma + 1)));
        }
        lines.push_back(line);
    }
    return lines;
}

std::string
read_text(const std::filesystem::path& path)
{
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
} // namespace

TEST_CASE("plot_history draws each quantity's curves, save_history_csv writes CSVLogger's rows", "[fit][io]")
{
    const auto train = make_toy(96, 31);
    const auto val = make_toy(32, 32);
    Trainable<Toy> model(6);
    model.compile(optimizers::Adam{.learning_rate = 0.05f}, losses::SparseCategoricalCrossentropy{},
                  metrics::SparseCategoricalAccuracy{});
    const History h = model.fit(train.x, train.y, {.batch_size = 32, .epochs = 4, .verbose = 0,
                                                   .validation_data = validation_data(val.x, val.y),
                                                   .validation_freq = 2});
    CHECK(h.epochs_of("loss") == std::vector<std::size_t>{0, 1, 2, 3});
    CHECK(h.epochs_of("val_loss") == std::vector<std::size_t>{1, 3});
    const tpudsl_tests::scratch_dir dir("history_files");

    // [plot_history]
    plot_history(h, dir / "curves.svg");        // a panel per quantity: training solid, validation dashed
    save_history_csv(h, dir / "history.csv");   // CSVLogger's columns, a row per epoch, NA where none
    // [plot_history]
    const std::string svg = read_text(dir / "curves.svg");
    CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
    CHECK(svg.find(">loss</text>") != std::string::npos);
    CHECK(svg.find(">sparse_categorical_accuracy</text>") != std::string::npos);
    const auto loss = polylines_of(svg, "loss"), val_loss = polylines_of(svg, "val_loss");
    REQUIRE(loss.size() == 1);
    REQUIRE(val_loss.size() == 1);
    REQUIRE(loss[0].size() == 4);
    REQUIRE(val_loss[0].size() == 2);
    for (std::size_t i = 0; i + 1 < 4; ++i) {
        CHECK(loss[0][i].first < loss[0][i + 1].first);   // epochs left to right
        // a larger value is drawn higher (a smaller y), on one scale for both curves
        CHECK((h["loss"][i] > h["loss"][i + 1]) == (loss[0][i].second < loss[0][i + 1].second));
    }
    CHECK(val_loss[0][0].first == loss[0][1].first);   // validation at epochs 2 and 4
    CHECK(val_loss[0][1].first == loss[0][3].first);
    CHECK((h["val_loss"][0] > h["loss"][1]) == (val_loss[0][0].second < loss[0][1].second));
    CHECK(polylines_of(svg, "val_sparse_categorical_accuracy").size() == 1);

    std::istringstream csv(read_text(dir / "history.csv"));
    std::string line;
    std::getline(csv, line);
    CHECK(line == "epoch,loss,sparse_categorical_accuracy,val_loss,val_sparse_categorical_accuracy");
    std::getline(csv, line);
    CHECK(line.rfind("0,", 0) == 0);
    CHECK(line.ends_with(",NA,NA"));   // no validation at the first epoch
    CHECK(std::stod(line.substr(2)) == h["loss"][0]);   // 17 digits read back the same double
    std::getline(csv, line);
    CHECK(line.rfind("1,", 0) == 0);
    CHECK(std::stod(line.substr(line.find(',', line.find(',', 2) + 1) + 1)) == h["val_loss"][0]);

    // a non-finite value breaks its line; an empty History and a missing directory are refused
    History broken;
    Logs logs;
    for (std::size_t e = 0; e < 5; ++e) {
        logs.set("loss", e == 2 ? std::numeric_limits<double>::quiet_NaN() : 1.0 / static_cast<double>(e + 1));
        broken.record(e, logs);
    }
    plot_history(broken, dir / "broken.svg");
    const auto pieces = polylines_of(read_text(dir / "broken.svg"), "loss");
    REQUIRE(pieces.size() == 2);
    CHECK(pieces[0].size() == 2);
    CHECK(pieces[1].size() == 2);
    CHECK_THROWS_WITH(plot_history(History{}, dir / "none.svg"), Catch::Contains("the History holds no epoch"));
    CHECK_THROWS_AS(save_history_csv(h, (std::filesystem::path(dir / "missing") / "history.csv").string()), std::system_error);
    CHECK_FALSE(std::filesystem::exists(dir / "none.svg"));
}

TEST_CASE("the same seed gives the same bits", "[fit][determinism]")
{
    const auto train = make_toy(200, 6);
    using Drop = Sequential<Input<Shape<4>>, Dense<16, Relu>, Dropout<0.3f>, Dense<3, Softmax>>;
    auto run = [&](std::uint64_t seed) {
        Trainable<Drop> model(seed);
        model.compile(optimizers::Nadam{}, losses::SparseCategoricalCrossentropy{});
        model.fit(train.x, train.y, {.batch_size = 16, .epochs = 2, .verbose = 0});
        return std::vector<float>(model.parameters(), model.parameters() + Drop::param_buffer_size);
    };
    const auto a = run(42), b = run(42), c = run(43);
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    CHECK(a != c);
}

TEST_CASE("bad input: an exception that says what, where and what was expected", "[fit][errors]")
{
    auto train = make_toy(10, 7);
    Trainable<Toy> model;
    CHECK_THROWS_WITH(model.fit(train.x, train.y), Catch::Contains("must be compiled first"));
    model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});

    train.y(4) = 3;
    CHECK_THROWS_WITH(model.fit(train.x, train.y, {.verbose = 0}),
                      Catch::Contains("label 3 at sample 4 of y is outside [0, 3)"));
    train.y(4) = 0;
    train.x(2, 1) = NAN;
    CHECK_THROWS_WITH(model.fit(train.x, train.y, {.verbose = 0}),
                      Catch::Contains("non-finite value nan at sample 2, element 1 of x"));
    train.x(2, 1) = 0.0f;
    xt::xtensor<std::int32_t, 1> short_y(std::array<std::size_t, 1>{9});
    CHECK_THROWS_WITH(model.fit(train.x, short_y, {.verbose = 0}),
                      Catch::Contains("x and y have different lengths: x has 10 samples, y has 9"));
    xt::xtensor<float, 2> wide(std::array<std::size_t, 2>{10, 5});
    CHECK_THROWS_WITH(model.fit(wide, train.y, {.verbose = 0}), Catch::Contains("has shape (10, 5)"));
    xt::xtensor<float, 1> float_labels = xt::cast<float>(train.y);
    float_labels(6) = 2.5f;
    CHECK_THROWS_WITH(model.fit(train.x, float_labels, {.verbose = 0}),
                      Catch::Contains("label 2.5 at sample 6 of y is not a whole number"));
    xt::xtensor<bool, 1> bool_labels(std::array<std::size_t, 1>{10}, false);
    CHECK_THROWS_WITH(model.fit(train.x, bool_labels, {.verbose = 0}),
                      Catch::Contains("y holds an unsupported element type, but a sparse loss or metric reads int32 "
                                      "class ids"));

    using Ids = Sequential<Input<Shape<3>, std::int32_t>, Embedding<5, 2>, Flatten, Dense<2, Softmax>>;
    Trainable<Ids> text;
    text.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{});
    xt::xtensor<std::int32_t, 2> tokens(std::array<std::size_t, 2>{2, 3}, 1);
    xt::xtensor<std::int32_t, 1> labels(std::array<std::size_t, 1>{2}, 0);
    tokens(1, 2) = 5;
    CHECK_THROWS_WITH(text.fit(tokens, labels, {.verbose = 0}),
                      Catch::Contains("token id 5 at sample 1, position 2 of x is outside [0, 5)"));
    tokens(1, 2) = -1;
    CHECK_THROWS_WITH(text.fit(tokens, labels, {.verbose = 0}), Catch::Contains("token id -1"));

    // Past the first block of 1024 values that the checks test at once: the first bad value is named.
    xt::xtensor<std::int32_t, 2> many(std::array<std::size_t, 2>{1000, 3}, 1);
    xt::xtensor<std::int32_t, 1> many_labels(std::array<std::size_t, 1>{1000}, 0);
    many(700, 1) = 5;
    many(900, 0) = -3;
    CHECK_THROWS_WITH(text.fit(many, many_labels, {.verbose = 0}),
                      Catch::Contains("token id 5 at sample 700, position 1 of x"));
    many(700, 1) = 4;
    CHECK_THROWS_WITH(text.fit(many, many_labels, {.verbose = 0}),
                      Catch::Contains("token id -3 at sample 900, position 0 of x"));
    auto big = make_toy(1000, 3);
    big.x(500, 3) = INFINITY;
    big.x(600, 0) = NAN;
    CHECK_THROWS_WITH(model.fit(big.x, big.y, {.verbose = 0}),
                      Catch::Contains("non-finite value inf at sample 500, element 3 of x"));
    big.x(500, 3) = -INFINITY;
    CHECK_THROWS_WITH(model.fit(big.x, big.y, {.verbose = 0}),
                      Catch::Contains("non-finite value -inf at sample 500, element 3 of x"));
    big.x(500, 3) = std::numeric_limits<float>::max();   // large, but finite
    CHECK_THROWS_WITH(model.fit(big.x, big.y, {.verbose = 0}),
                      Catch::Contains("non-finite value nan at sample 600, element 0 of x"));
    big.x(600, 0) = 0.0f;
    Trainable<Toy> dense_targets;
    dense_targets.compile(optimizers::Adam{}, losses::CategoricalCrossentropy{});
    xt::xtensor<float, 2> one_hot(std::array<std::size_t, 2>{1000, 3}, 0.0f);
    for (std::size_t s = 0; s < 1000; ++s)
        one_hot(s, s % 3) = 1.0f;
    one_hot(800, 2) = NAN;
    CHECK_THROWS_WITH(dense_targets.fit(big.x, one_hot, {.verbose = 0}),
                      Catch::Contains("non-finite target nan at sample 800 of y"));
}

namespace {
/// A stand-in for the model, to drive callbacks with chosen logs.
struct fake_control : TrainingControl {
    double lr = 0.1;
    std::vector<float> weights{1.0f};
    std::vector<std::string> saved;
    [[nodiscard]] double learning_rate() const override { return lr; }
    void set_learning_rate(double v) override { lr = v; }
    void save_weights(const std::string& p) const override { const_cast<fake_control*>(this)->saved.push_back(p); }
    [[nodiscard]] std::vector<float> get_weights() const override { return weights; }
    void set_weights(const std::vector<float>& w) override { weights = w; }
};

void
epoch_end(Callback& cb, fake_control& c, std::size_t epoch, const std::string& key, double value)
{
    Logs logs;
    logs.set(key, value);
    cb.on_epoch_end(epoch, logs, c);
}
} // namespace

TEST_CASE("EarlyStopping: patience, min_delta, mode and restore_best_weights", "[callbacks]")
{
    fake_control c;
    std::ostringstream out;
    EarlyStopping es({.patience = 2, .verbose = 1, .restore_best_weights = true}, out);
    es.on_train_begin(c);
    const double losses[] = {1.0, 0.8, 0.9, 0.85, 0.7};
    std::size_t e = 0;
    for (; e < 5 && !c.stop_training; ++e) {
        c.weights = {static_cast<float>(e)};
        epoch_end(es, c, e, "val_loss", losses[e]);
    }
    CHECK(c.stop_training);
    CHECK(es.stopped_epoch() == std::size_t{3});   // 0.9 and 0.85 did not improve on 0.8
    CHECK(c.weights == std::vector<float>{1.0f});  // the best epoch's weights
    es.on_train_end(c);
    CHECK(out.str().find("Epoch 4: early stopping") != std::string::npos);

    fake_control c2;
    EarlyStopping acc({.monitor = "val_accuracy", .min_delta = 0.05, .patience = 1});
    acc.on_train_begin(c2);
    epoch_end(acc, c2, 0, "val_accuracy", 0.5);
    epoch_end(acc, c2, 1, "val_accuracy", 0.53);   // auto mode is max; +0.03 < min_delta
    CHECK(c2.stop_training);
}

TEST_CASE("ReduceLROnPlateau and LearningRateScheduler", "[callbacks]")
{
    fake_control c;
    // Keras' rule: a cooldown of k skips the k - 1 epochs after a reduction (the counter is
    // decremented before the test), so cooldown 2 leaves one epoch out.
    ReduceLROnPlateau plateau({.factor = 0.5, .patience = 1, .cooldown = 2, .min_lr = 0.02});
    plateau.on_train_begin(c);
    const double expected[] = {0.1, 0.05, 0.05, 0.025, 0.025, 0.02};
    for (std::size_t e = 0; e < 6; ++e) {
        epoch_end(plateau, c, e, "val_loss", 1.0);
        INFO("epoch " << e);
        CHECK(c.lr == Approx(expected[e]));
    }
    Logs logs;
    plateau.on_epoch_end(6, logs, c);
    CHECK(logs.get("lr") == Approx(0.02));

    LearningRateScheduler sched([](std::size_t epoch, double lr) { return epoch < 2 ? lr : lr * 0.1; });
    Logs l;
    sched.on_epoch_begin(1, l, c);
    CHECK(c.lr == Approx(0.02));
    sched.on_epoch_begin(2, l, c);
    CHECK(c.lr == Approx(0.002));
}

TEST_CASE("TerminateOnNaN stops on a non-finite loss", "[callbacks]")
{
    fake_control c;
    std::ostringstream out;
    TerminateOnNaN t(out);
    Logs logs;
    logs.set("loss", 1.0);
    t.on_train_batch_end(0, logs, c);
    CHECK(!c.stop_training);
    logs.set("loss", NAN);
    t.on_train_batch_end(7, logs, c);
    CHECK(c.stop_training);
    CHECK(out.str() == "Batch 7: Invalid loss, terminating training\n");
}

TEST_CASE("CSVLogger and ModelCheckpoint write real files, weights round-trip", "[callbacks][io]")
{
    const auto dir = std::filesystem::temp_directory_path() / "tpudsl_fit_test";
    std::filesystem::create_directories(dir);
    const auto train = make_toy(64, 8);
    const auto val = make_toy(32, 9);
    Trainable<Toy> model(5);
    model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    CSVLogger csv((dir / "log.csv").string());
    ModelCheckpoint every((dir / "w-{epoch:02d}.bin").string());
    ModelCheckpoint best((dir / "best.bin").string(), {.save_best_only = true});
    model.fit(train.x, train.y,
              {.batch_size = 16, .epochs = 2, .verbose = 0, .validation_data = validation_data(val.x, val.y),
               .callbacks = {csv, every, best}});
    std::ifstream log(dir / "log.csv");
    std::string header, row1, row2;
    std::getline(log, header);
    std::getline(log, row1);
    std::getline(log, row2);
    CHECK(header == "epoch,loss,sparse_categorical_accuracy,val_loss,val_sparse_categorical_accuracy");
    CHECK(row1.rfind("0,", 0) == 0);
    CHECK(row2.rfind("1,", 0) == 0);
    CHECK(std::filesystem::exists(dir / "w-01.bin"));
    CHECK(std::filesystem::exists(dir / "w-02.bin"));
    CHECK(!std::filesystem::exists(dir / "w-02.bin.tmp"));

    Trainable<Toy> other(99);
    other.load_weights((dir / "w-02.bin").string());
    CHECK(std::memcmp(other.parameters(), model.parameters(), Toy::param_buffer_size * sizeof(float)) == 0);

    // a truncated file and a flipped byte are refused, and leave the weights as they were
    const auto bytes = std::filesystem::file_size(dir / "w-02.bin");
    std::filesystem::copy_file(dir / "w-02.bin", dir / "cut.bin", std::filesystem::copy_options::overwrite_existing);
    std::filesystem::resize_file(dir / "cut.bin", bytes - 10);
    CHECK_THROWS_WITH(other.load_weights((dir / "cut.bin").string()), Catch::Contains("truncated"));
    {
        std::fstream f(dir / "w-01.bin", std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(40);
        f.put('\x7f');
    }
    CHECK_THROWS_WITH(other.load_weights((dir / "w-01.bin").string()), Catch::Contains("corrupt"));
    CHECK(std::memcmp(other.parameters(), model.parameters(), Toy::param_buffer_size * sizeof(float)) == 0);
    using Other = Sequential<Input<Shape<4>>, Dense<3, Softmax>>;
    Trainable<Other> wrong;
    CHECK_THROWS_WITH(wrong.load_weights((dir / "best.bin").string()), Catch::Contains("another model layout"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("Keras' initializers: glorot_uniform kernels, zero biases, uniform(-0.05, 0.05) embeddings",
          "[initializers]")
{
    using M = Sequential<Input<Shape<20>, std::int32_t>, Embedding<50, 8>, Conv1D<6, 3, Relu>, Flatten, Dense<5>>;
    Trainable<M> a(11), b(11), c(12);
    CHECK(std::memcmp(a.parameters(), b.parameters(), M::param_buffer_size * sizeof(float)) == 0);
    CHECK(std::memcmp(a.parameters(), c.parameters(), M::param_buffer_size * sizeof(float)) != 0);

    auto stats = [&](const float* p, std::size_t n) {
        double lo = 1e9, hi = -1e9, mean = 0;
        for (std::size_t i = 0; i < n; ++i) {
            lo = std::min<double>(lo, p[i]);
            hi = std::max<double>(hi, p[i]);
            mean += p[i] / static_cast<double>(n);
        }
        return std::array<double, 3>{lo, hi, mean};
    };
    const float* w = a.parameters();
    // embeddings (50, 8): within 0.05, spread over most of it
    auto e = stats(w + M::layer<0>::weight<0>::offset, 400);
    CHECK(e[0] >= -0.05);
    CHECK(e[1] <= 0.05);
    CHECK(e[1] - e[0] > 0.09);
    // conv kernel (3, 8, 6): fan_in 24, fan_out 18 -> limit sqrt(6/42)
    const double conv_limit = std::sqrt(6.0 / 42.0);
    auto k = stats(w + M::layer<1>::weight<0>::offset, 144);
    CHECK(k[0] >= -conv_limit);
    CHECK(k[1] <= conv_limit);
    CHECK(k[1] - k[0] > 1.6 * conv_limit);
    CHECK(std::abs(k[2]) < 0.1 * conv_limit);
    // dense kernel (108, 5): limit sqrt(6/113)
    const double dense_limit = std::sqrt(6.0 / 113.0);
    auto d = stats(w + M::layer<3>::weight<0>::offset, 540);
    CHECK(d[0] >= -dense_limit);
    CHECK(d[1] <= dense_limit);
    CHECK(d[1] - d[0] > 1.8 * dense_limit);
    // biases are zero
    auto bias = stats(w + M::layer<3>::weight<1>::offset, 5);
    CHECK(bias[0] == 0.0);
    CHECK(bias[1] == 0.0);
}

TEST_CASE("predict returns the outputs, evaluate's accuracy agrees with them", "[fit]")
{
    const auto data = make_toy(50, 10);
    Trainable<Toy> model(2);
    model.compile(optimizers::Adam{.learning_rate = 0.02f}, losses::SparseCategoricalCrossentropy{},
                  metrics::SparseCategoricalAccuracy{});
    model.fit(data.x, data.y, {.batch_size = 10, .epochs = 5, .verbose = 0});
    const auto p = model.predict(data.x, {.batch_size = 7});
    REQUIRE(p.size() == 50 * 3);
    std::size_t hits = 0;
    for (std::size_t s = 0; s < 50; ++s) {
        const float* row = p.data() + s * 3;
        CHECK(row[0] + row[1] + row[2] == Approx(1.0).epsilon(1e-5));
        hits += static_cast<std::int32_t>(std::max_element(row, row + 3) - row) == data.y(s);
    }
    const auto scores = model.evaluate(data.x, data.y, {.batch_size = 16, .verbose = 0});
    CHECK(scores[1] == Approx(hits / 50.0));
}

TEMPLATE_TEST_CASE("a model computes with denormals flushed to zero, as TensorFlow's CPU threads do, and the "
                   "caller's mode comes back",
                   "[fit][numerics]", OneDeviceStrategy, TpuStrategy<2>)
{
    // Two inputs, two units: out0 = 1e-20 x0 with x0 = 1e-20 (a product below the normal floats: FTZ
    // makes it zero), out1 = 1e-39 x1 with x1 = 1e10 (a denormal weight times a large input: 1e-29, a
    // normal float, unless DAZ reads the weight as zero). Each flag is tested on its own.
    using Tiny = Sequential<Input<Shape<2>>, Dense<2>>;
    constexpr float small = 1e-20f, denormal = 1e-39f;
    REQUIRE(std::fpclassify(denormal) == FP_SUBNORMAL);
    Trainable<Tiny, TestType> model(1);
    model.compile(optimizers::SGD{.learning_rate = 0.1f}, losses::MeanSquaredError{});
    float* w = model.parameters();
    const float kernel[4] = {small, 0.0f, 0.0f, denormal};   // (inputs, units) row-major, Keras' layout
    std::copy(kernel, kernel + 4, w + Tiny::layer<0>::weight<0>::offset);
    std::fill_n(w + Tiny::layer<0>::weight<1>::offset, 2, 0.0f);
    xt::xtensor<float, 2> x = {{small, 1e10f}, {small, 1e10f}, {small, 1e10f}, {small, 1e10f}};
    const auto p = model.predict(x, {.batch_size = 4});
    REQUIRE(p.size() == 8);
    for (std::size_t i = 0; i < p.size(); ++i) {
        INFO("output " << i % 2 << " of sample " << i / 2 << ": " << p[i]);
        CHECK(std::fpclassify(p[i]) == FP_ZERO);
    }

    // Training: the weight from an input that is always zero gets a zero gradient, and SGD's
    // w - lr g reads the denormal w as zero: zero after one step (it would stay 1e-39).
    xt::xtensor<float, 2> x0 = {{0.5f, 0.0f}, {0.25f, 0.0f}, {0.5f, 0.0f}, {0.25f, 0.0f}};
    xt::xtensor<float, 2> y = {{1.0f, 1.0f}, {1.0f, 1.0f}, {1.0f, 1.0f}, {1.0f, 1.0f}};
    model.fit(x0, y, {.batch_size = 4, .epochs = 1, .verbose = 0});
    const float* trained = static_cast<const Trainable<Tiny, TestType>&>(model).parameters();
    CHECK(std::fpclassify(trained[Tiny::layer<0>::weight<0>::offset + 3]) == FP_ZERO);   // kernel(1, 1)
    CHECK(trained[Tiny::layer<0>::weight<0>::offset] != small);   // kernel(0, 0) trained

    // The calling thread computes denormals again after the calls.
    volatile float a = small;
    const float product = a * a;
    CHECK(std::fpclassify(product) == FP_SUBNORMAL);
}

TEST_CASE("a narrow Dense's forward follows every change of the weights", "[fit]")
{
    // Dense<10, Softmax> over 96 units runs from its transposed kernel (dot products along K) where the
    // SIMD width leaves 10 columns narrow (kernels::prefers_dot_products), the copy kept per version of
    // the weights: predict must see training, set_weights, a write through parameters() and
    // load_weights.
    using Narrow = Sequential<Input<Shape<40>>, Dense<96, Relu>, Dense<10, Softmax>>;
    constexpr std::size_t n = 30, I = 40, H = 96, U = 10;
    xt::xtensor<float, 2> x(std::array<std::size_t, 2>{n, I});
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{n});
    std::mt19937 gen(4);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (auto& v : x)
        v = u(gen);
    for (std::size_t s = 0; s < n; ++s)
        y(s) = static_cast<std::int32_t>(s % U);

    Trainable<Narrow> model(5);
    model.compile(optimizers::Adam{.learning_rate = 0.01f}, losses::SparseCategoricalCrossentropy{});
    auto check_predict = [&](const char* after) {
        INFO("after " << after);
        const float* w = static_cast<const Trainable<Narrow>&>(model).parameters();
        const float* w1 = w + Narrow::layer<0>::weight<0>::offset;
        const float* b1 = w + Narrow::layer<0>::weight<1>::offset;
        const float* w2 = w + Narrow::layer<1>::weight<0>::offset;
        const float* b2 = w + Narrow::layer<1>::weight<1>::offset;
        const auto p = model.predict(x, {.batch_size = 8});
        REQUIRE(p.size() == n * U);
        std::size_t bad = 0;
        for (std::size_t s = 0; s < n; ++s) {
            double h[H], z[U], top = -1e30, sum = 0.0;
            for (std::size_t j = 0; j < H; ++j) {
                h[j] = b1[j];
                for (std::size_t i = 0; i < I; ++i)
                    h[j] += double(x(s, i)) * w1[i * H + j];
                h[j] = std::max(h[j], 0.0);
            }
            for (std::size_t j = 0; j < U; ++j) {
                z[j] = b2[j];
                for (std::size_t i = 0; i < H; ++i)
                    z[j] += h[i] * w2[i * U + j];
                top = std::max(top, z[j]);
            }
            for (std::size_t j = 0; j < U; ++j)
                sum += std::exp(z[j] - top);
            for (std::size_t j = 0; j < U; ++j)
                bad += std::abs(p[s * U + j] - std::exp(z[j] - top) / sum) > 1e-5;
        }
        CHECK(bad == 0);
    };
    check_predict("initialisation");
    model.fit(x, y, {.batch_size = 8, .epochs = 2, .verbose = 0});
    check_predict("fit");
    const auto trained = model.get_weights();
    auto flipped = trained;
    for (std::size_t i = 0; i < H * U; ++i)
        flipped[Narrow::layer<1>::weight<0>::offset + i] *= -1.0f;
    model.set_weights(flipped);
    check_predict("set_weights");
    float* w = model.parameters();
    for (std::size_t i = 0; i < H * U; i += 7)
        w[Narrow::layer<1>::weight<0>::offset + i] += 0.5f;
    check_predict("a write through parameters()");
    const auto file = std::filesystem::temp_directory_path() / "tpudsl-narrow-dense.weights";
    Trainable<Narrow> other(6);
    other.set_weights(trained);
    other.save_weights(file.string());
    model.load_weights(file.string());
    std::filesystem::remove(file);
    CHECK(model.get_weights() == trained);
    check_predict("load_weights");
}

TEST_CASE("on a terminal the bar is redrawn in place with a carriage return", "[fit][format]")
{
    std::ostringstream out;
    Logs logs;
    logs.set("loss", 0.25);
    Progbar bar(out, 3, 1, /*dynamic=*/true);
    bar.update(1, logs);
    std::this_thread::sleep_for(std::chrono::milliseconds(60));   // past the redraw interval
    bar.update(2, logs);
    bar.finish(3, logs);
    const std::string s = out.str();
    REQUIRE(std::count(s.begin(), s.end(), '\r') == 2);   // the redraw at step 2 and the final line
    // 2 of 3: 30 * 2 / 3 = 20 columns done, the last of them the arrow
    CHECK(s.rfind("\r2/3 [" + std::string(19, '=') + ">" + std::string(10, '.') + "] - ETA: ", 0) == 0);
    CHECK(s.find("\r3/3 [==============================] - 0s ") != std::string::npos);
    CHECK(s.back() == '\n');
    CHECK(std::count(s.begin(), s.end(), '\n') == 1);

    std::ostringstream pipe;
    Progbar quiet(pipe, 3, 1, /*dynamic=*/false);
    quiet.update(1, logs);
    quiet.update(2, logs);
    CHECK(pipe.str().empty());   // not a terminal: only the epoch's final line
    quiet.finish(3, logs);
    const std::string p = pipe.str();
    CHECK(std::count(p.begin(), p.end(), '\n') == 1);
    CHECK(p.find('\r') == std::string::npos);
}

TEST_CASE("an Embedding's gradient arenas are summed and cleared only on the rows their token ids mark",
          "[fit]")
{
    SECTION("the marked sum gives the dense sum's bits; clearing leaves the table's range at +0")
    {
        const distribute::table_span table{5, 150, 3};   // rows over three 64-bit words of marks
        constexpr std::size_t arenas = 4, size = 5 + 150 * 3 + 7;
        std::mt19937 gen(8);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        std::vector<std::vector<float>> g(arenas, std::vector<float>(size, 0.0f));
        std::vector<std::vector<std::uint64_t>> marks(arenas, std::vector<std::uint64_t>(3, 0));
        for (std::size_t k = 0; k < arenas; ++k) {
            for (std::size_t i = 0; i < 5; ++i)   // outside the table: never touched
                g[k][i] = u(gen);
            for (std::size_t r = 0; r < table.rows; ++r)
                if (gen() % 3 == 0) {
                    marks[k][r / 64] |= std::uint64_t{1} << (r % 64);
                    for (std::size_t d = 0; d < table.width; ++d)
                        g[k][table.begin + r * table.width + d] = u(gen);
                }
        }
        const float* others[arenas - 1] = {g[1].data(), g[2].data(), g[3].data()};
        const std::uint64_t* other_marks[arenas - 1] = {marks[1].data(), marks[2].data(), marks[3].data()};
        const std::uint64_t* all_marks[arenas] = {marks[0].data(), marks[1].data(), marks[2].data(), marks[3].data()};
        // A shard that cuts rows at both ends.
        const std::size_t lo = table.begin + 4, hi = table.begin + 301;
        std::vector<float> want = g[0];
        for (std::size_t i = lo; i < hi; ++i) {
            float s = want[i];
            for (std::size_t k = 1; k < arenas; ++k)
                s += g[k][i];
            want[i] = s;
        }
        std::vector<float> got = g[0];
        detail::sum_marked_rows(got.data(), others, other_marks, arenas - 1, table, lo, hi);
        CHECK(std::memcmp(got.data(), want.data(), size * sizeof(float)) == 0);
        detail::clear_marked_rows(got.data(), all_marks, arenas, table, lo, hi);
        for (std::size_t i = 0; i < size; ++i) {
            INFO("element " << i);
            if (i >= lo && i < hi)
                CHECK(std::signbit(got[i]) == false);
            CHECK(got[i] == (i >= lo && i < hi ? 0.0f : want[i]));
        }
    }
    SECTION("plain SGD moves a row only in the steps whose batch holds its id")
    {
        using Ids = Sequential<Input<Shape<3>, std::int32_t>, Embedding<200, 2>, Flatten, Dense<2, Softmax>>;
        constexpr std::size_t table = Ids::layer<0>::weight<0>::offset;
        Trainable<Ids> model(3);
        model.compile(optimizers::SGD{.learning_rate = 0.5f}, losses::SparseCategoricalCrossentropy{});
        auto row = [&](std::size_t r) {
            const float* p = model.parameters() + table + 2 * r;
            return std::vector<float>(p, p + 2);
        };
        std::vector<std::vector<float>> initial;
        for (std::size_t r = 0; r < 200; ++r)
            initial.push_back(row(r));
        // Step 1 over eight micro-batches of 2: ids 1, 2, 70, 130 (rows in three words of marks).
        xt::xtensor<std::int32_t, 2> first(std::array<std::size_t, 2>{16, 3});
        xt::xtensor<std::int32_t, 2> second(std::array<std::size_t, 2>{16, 3});
        xt::xtensor<std::int32_t, 1> labels(std::array<std::size_t, 1>{16});
        const std::int32_t ids[4] = {1, 2, 70, 130};
        for (std::size_t s = 0; s < 16; ++s) {
            labels(s) = static_cast<std::int32_t>(s % 2);
            for (std::size_t t = 0; t < 3; ++t) {
                first(s, t) = ids[(s + t) % 4];
                second(s, t) = static_cast<std::int32_t>(3 + (s + t) % 2);
            }
        }
        const FitOptions one_step{.batch_size = 16, .epochs = 1, .verbose = 0, .shuffle = false};
        model.fit(first, labels, one_step);
        std::vector<std::vector<float>> after_first;
        for (std::size_t r = 0; r < 200; ++r)
            after_first.push_back(row(r));
        model.fit(second, labels, one_step);
        for (std::size_t r = 0; r < 200; ++r) {
            INFO("row " << r);
            const bool in_first = r == 1 || r == 2 || r == 70 || r == 130, in_second = r == 3 || r == 4;
            CHECK((after_first[r] != initial[r]) == in_first);
            // A row touched only in the first step keeps its value in the second: its gradient rows
            // were cleared from every arena after the first step.
            CHECK((row(r) != after_first[r]) == in_second);
        }
        // The first batch again: the same bits as a fresh model (clean arenas) from these weights.
        Trainable<Ids> fresh(4);
        fresh.compile(optimizers::SGD{.learning_rate = 0.5f}, losses::SparseCategoricalCrossentropy{});
        fresh.set_weights(model.get_weights());
        model.fit(first, labels, one_step);
        fresh.fit(first, labels, one_step);
        CHECK(std::memcmp(model.parameters(), fresh.parameters(), Ids::param_buffer_size * sizeof(float)) == 0);
    }
}
