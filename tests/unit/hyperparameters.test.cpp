// Hyperparameters outside their domain are refused where they are set: an optimizer given to
// compile, the model's learning-rate setter, a LearningRateScheduler's return value, and the options
// of ReduceLROnPlateau, EarlyStopping and ModelCheckpoint at construction. Each error names the class,
// the field, the value and the domain.
#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <xtensor/xtensor.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace tpudsl;

namespace {

using Tiny = Sequential<Input<Shape<2>>, Dense<2, Softmax>>;

constexpr float nan_f = std::numeric_limits<float>::quiet_NaN();
constexpr float inf_f = std::numeric_limits<float>::infinity();
constexpr double nan_d = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_d = std::numeric_limits<double>::infinity();

/// The message of the std::invalid_argument that `f` throws, or "" if it throws nothing.
std::string
refusal(const std::function<void()>& f)
{
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

/// The message compile gives for `opt`, or "" if it accepts it.
template <class Opt>
std::string
compile_refusal(Opt opt)
{
    Trainable<Tiny> model;
    return refusal([&] { model.compile(opt, losses::SparseCategoricalCrossentropy{}); });
}

/// A stand-in for the model, to drive callbacks.
struct fake_control : TrainingControl {
    double lr = 0.1;
    std::vector<float> weights{1.0f};
    [[nodiscard]] double learning_rate() const override { return lr; }
    void set_learning_rate(double v) override { lr = v; }
    void save_weights(const std::string&) const override {}
    [[nodiscard]] std::vector<float> get_weights() const override { return weights; }
    void set_weights(const std::vector<float>& w) override { weights = w; }
};

} // namespace

TEST_CASE("compile refuses an optimizer whose hyperparameters are outside their domain", "[hyperparameters]")
{
    // the messages, in full for one of each kind
    CHECK(compile_refusal(optimizers::SGD{.momentum = 1.5f}) ==
          "tpudsl::optimizers::SGD: momentum must be in [0, 1], got 1.5 (Keras' default is 0)");
    CHECK(compile_refusal(optimizers::Adam{.beta_1 = 1.0f}) ==
          "tpudsl::optimizers::Adam: beta_1 must be in [0, 1), got 1 (Keras' default is 0.9)");
    CHECK(compile_refusal(optimizers::Adam{.epsilon = 0.0f}) ==
          "tpudsl::optimizers::Adam: epsilon must be finite and > 0, got 0 (Keras' default is 1e-07)");
    CHECK(compile_refusal(optimizers::RMSprop{.learning_rate = -0.001f}) ==
          "tpudsl::optimizers::RMSprop: learning_rate must be a finite float >= 0, got -0.001 (Keras' default is "
          "0.001)");

    SECTION("SGD")
    {
        for (float lr : {-0.1f, nan_f, inf_f, -inf_f})
            CHECK_THAT(compile_refusal(optimizers::SGD{.learning_rate = lr}), Catch::Contains("SGD: learning_rate"));
        for (float mu : {-0.1f, 1.0001f, nan_f, inf_f})
            CHECK_THAT(compile_refusal(optimizers::SGD{.momentum = mu}), Catch::Contains("SGD: momentum"));
        // the ends of the domains are accepted: a rate of 0, momenta of 0 and 1 (Keras' rule)
        CHECK(compile_refusal(optimizers::SGD{.learning_rate = 0.0f, .momentum = 1.0f, .nesterov = true}).empty());
        CHECK(compile_refusal(optimizers::SGD{.momentum = 0.0f}).empty());
    }
    SECTION("Adam and Nadam")
    {
        for (float b : {-0.1f, 1.0f, 2.0f, nan_f}) {
            CHECK_THAT(compile_refusal(optimizers::Adam{.beta_1 = b}), Catch::Contains("Adam: beta_1"));
            CHECK_THAT(compile_refusal(optimizers::Adam{.beta_2 = b}), Catch::Contains("Adam: beta_2"));
            CHECK_THAT(compile_refusal(optimizers::Nadam{.beta_1 = b}), Catch::Contains("Nadam: beta_1"));
            CHECK_THAT(compile_refusal(optimizers::Nadam{.beta_2 = b}), Catch::Contains("Nadam: beta_2"));
        }
        for (float eps : {0.0f, -1e-7f, nan_f, inf_f}) {
            CHECK_THAT(compile_refusal(optimizers::Adam{.epsilon = eps}), Catch::Contains("Adam: epsilon"));
            CHECK_THAT(compile_refusal(optimizers::Nadam{.epsilon = eps}), Catch::Contains("Nadam: epsilon"));
        }
        CHECK_THAT(compile_refusal(optimizers::Nadam{.learning_rate = nan_f}), Catch::Contains("Nadam: learning_rate"));
        CHECK_THAT(compile_refusal(optimizers::Nadam{.momentum_product = nan_d}),
                   Catch::Contains("Nadam: momentum_product must be in [0, 1], got nan"));
        CHECK(compile_refusal(optimizers::Adam{.beta_1 = 0.0f, .beta_2 = 0.0f, .epsilon = 1e-30f}).empty());
        CHECK(compile_refusal(optimizers::Nadam{.schedule = optimizers::nadam_schedule::legacy}).empty());
    }
    SECTION("RMSprop")
    {
        for (float rho : {-0.5f, 1.0f, nan_f})
            CHECK_THAT(compile_refusal(optimizers::RMSprop{.rho = rho}), Catch::Contains("RMSprop: rho"));
        for (float mu : {-0.5f, 1.5f, nan_f})
            CHECK_THAT(compile_refusal(optimizers::RMSprop{.momentum = mu}), Catch::Contains("RMSprop: momentum"));
        for (float eps : {0.0f, nan_f})
            CHECK_THAT(compile_refusal(optimizers::RMSprop{.epsilon = eps}), Catch::Contains("RMSprop: epsilon"));
        CHECK(compile_refusal(optimizers::RMSprop{.rho = 0.0f, .momentum = 1.0f, .centered = true}).empty());
    }
}

TEST_CASE("a refused compile leaves the model as it was", "[hyperparameters]")
{
    Trainable<Tiny> model;
    xt::xtensor<float, 2> x = {{0.0f, 1.0f}, {1.0f, 0.0f}};
    xt::xtensor<std::int32_t, 1> y = {1, 0};
    CHECK_THROWS_AS(model.compile(optimizers::Adam{.beta_2 = 1.0f}, losses::SparseCategoricalCrossentropy{}),
                    std::invalid_argument);
    CHECK_THROWS_WITH(model.fit(x, y, {.verbose = 0}), Catch::Contains("must be compiled first"));

    model.compile(optimizers::SGD{.learning_rate = 0.5f}, losses::SparseCategoricalCrossentropy{});
    CHECK_THROWS_AS(model.compile(optimizers::SGD{.momentum = nan_f}, losses::SparseCategoricalCrossentropy{}),
                    std::invalid_argument);
    CHECK(model.learning_rate() == 0.5);
}

TEST_CASE("set_learning_rate refuses NaN, negative rates and rates beyond a float's range", "[hyperparameters]")
{
    Trainable<Tiny> model;
    model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{});
    CHECK(refusal([&] { model.set_learning_rate(nan_d); }) ==
          "tpudsl::Trainable::set_learning_rate: learning_rate must be a finite float >= 0, got nan (0 leaves the "
          "weights unchanged)");
    for (double lr : {-1e-3, inf_d, -inf_d, 1e39})
        CHECK_THAT(refusal([&] { model.set_learning_rate(lr); }), Catch::Contains("must be a finite float >= 0"));
    CHECK(model.learning_rate() == Approx(1e-3));   // unchanged by the refusals
    model.set_learning_rate(0.0);
    CHECK(model.learning_rate() == 0.0);
    model.set_learning_rate(0.25);
    CHECK(model.learning_rate() == 0.25);
}

TEST_CASE("LearningRateScheduler refuses an empty schedule and a rate that is negative or not finite",
          "[hyperparameters][callbacks]")
{
    CHECK_THAT(refusal([] { LearningRateScheduler s{LearningRateScheduler::schedule_fn{}}; }),
               Catch::Contains("tpudsl::LearningRateScheduler: the schedule is empty"));

    fake_control c;
    Logs logs;
    LearningRateScheduler negative([](std::size_t epoch, double lr) { return epoch < 2 ? lr : -lr; });
    negative.on_epoch_begin(1, logs, c);
    CHECK(refusal([&] { negative.on_epoch_begin(2, logs, c); }) ==
          "tpudsl::LearningRateScheduler: the schedule returned learning rate -0.1 at epoch 2 (0-based); a "
          "learning rate must be a finite float >= 0");
    CHECK(c.lr == 0.1);
    for (double bad : {nan_d, inf_d, 1e39}) {
        LearningRateScheduler s([bad](std::size_t, double) { return bad; });
        CHECK_THAT(refusal([&] { s.on_epoch_begin(0, logs, c); }), Catch::Contains("at epoch 0"));
    }
    CHECK(c.lr == 0.1);

    // through fit, the schedule's refusal stops training and the model keeps its rate
    Trainable<Tiny> model;
    model.compile(optimizers::SGD{.learning_rate = 0.5f}, losses::SparseCategoricalCrossentropy{});
    xt::xtensor<float, 2> x = {{0.0f, 1.0f}, {1.0f, 0.0f}};
    xt::xtensor<std::int32_t, 1> y = {1, 0};
    LearningRateScheduler halve_then_negate([](std::size_t epoch, double lr) { return epoch == 0 ? lr / 2 : -1.0; });
    CHECK_THROWS_WITH(model.fit(x, y, {.epochs = 3, .verbose = 0, .callbacks = {halve_then_negate}}),
                      Catch::Contains("returned learning rate -1 at epoch 1"));
    CHECK(model.learning_rate() == 0.25);
}

TEST_CASE("ReduceLROnPlateau refuses a factor outside 0 to 1 (1 excluded), a negative or non-finite min_lr or min_delta",
          "[hyperparameters][callbacks]")
{
    CHECK(refusal([] { ReduceLROnPlateau r({.factor = nan_d}); }) ==
          "tpudsl::ReduceLROnPlateau: factor must be in [0, 1), got nan (the new rate is lr * factor; Keras' default "
          "is 0.1)");
    for (double f : {1.0, 2.0, -0.5, inf_d, -inf_d})
        CHECK_THAT(refusal([f] { ReduceLROnPlateau r({.factor = f}); }), Catch::Contains("factor must be in [0, 1)"));
    for (double m : {-1e-3, nan_d, inf_d})
        CHECK_THAT(refusal([m] { ReduceLROnPlateau r({.min_lr = m}); }),
                   Catch::Contains("ReduceLROnPlateau: min_lr must be finite and >= 0"));
    for (double d : {-1e-4, nan_d, inf_d})
        CHECK_THAT(refusal([d] { ReduceLROnPlateau r({.min_delta = d}); }),
                   Catch::Contains("ReduceLROnPlateau: min_delta must be finite and >= 0"));
    CHECK(refusal([] { ReduceLROnPlateau r({.factor = 0.0, .min_delta = 0.0, .min_lr = 0.0}); }).empty());
}

TEST_CASE("EarlyStopping refuses a non-finite min_delta or baseline", "[hyperparameters][callbacks]")
{
    CHECK(refusal([] { EarlyStopping e({.min_delta = nan_d}); }) ==
          "tpudsl::EarlyStopping: min_delta must be finite, got nan (Keras' default is 0; its sign is ignored)");
    CHECK_THAT(refusal([] { EarlyStopping e({.min_delta = inf_d}); }), Catch::Contains("min_delta must be finite"));
    for (double b : {nan_d, inf_d, -inf_d})
        CHECK_THAT(refusal([b] { EarlyStopping e({.baseline = b}); }),
                   Catch::Contains("EarlyStopping: baseline must be finite"));
    // a negative min_delta is Keras' magnitude, as before
    CHECK(refusal([] { EarlyStopping e({.min_delta = -0.5, .baseline = 0.3}); }).empty());
}

TEST_CASE("ModelCheckpoint refuses a non-finite initial_value_threshold and an {epoch:0Nd} it cannot pad",
          "[hyperparameters][callbacks]")
{
    CHECK(refusal([] { ModelCheckpoint m("w.bin", {.save_best_only = true, .initial_value_threshold = nan_d}); }) ==
          "tpudsl::ModelCheckpoint: initial_value_threshold must be finite, got nan (leave it unset to save the "
          "first epoch)");
    CHECK(refusal([] { ModelCheckpoint m("w-{epoch:0xd}.bin"); }) ==
          "tpudsl::ModelCheckpoint: '{epoch:0xd}' in the file path 'w-{epoch:0xd}.bin': the width must be a number "
          "from 1 to 255 ({epoch:02d} pads the epoch to 2 digits)");
    // a negative or enormous width asked for gigabytes of zeros
    CHECK_THAT(refusal([] { ModelCheckpoint m("w-{epoch:0-5d}.bin"); }), Catch::Contains("from 1 to 255"));
    CHECK_THAT(refusal([] { ModelCheckpoint m("w-{epoch:099999999999d}.bin"); }), Catch::Contains("from 1 to 255"));
    CHECK(ModelCheckpoint("w-{epoch:03d}.bin").format_path(7) == "w-007.bin");
    CHECK(ModelCheckpoint("w-{epoch}.bin").format_path(12) == "w-12.bin");
}
