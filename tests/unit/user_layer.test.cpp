// A layer written outside the library (examples/custom_layer/scale.hpp, docs/layers.md): it binds,
// counts its weights, prints in the summary, trains on one core and on two replicas with the same
// bits, and its gradients agree with finite differences (gradcheck.test.cpp).
#include "custom_layer/scale.hpp"
#include "custom_layer/training.hpp"

#include <tpudsl/testing/gradient_check.hpp>
#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <xtensor/xtensor.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using namespace tpudsl;

namespace {

// [scale_model]
using Scaled = Sequential<Input<Shape<8>>, Dense<16, Relu>, mylayers::Scale, Dense<3, Softmax>>;

static_assert(Scaled::layer<1>::param_count == 16);   // one factor per channel of its (16) input
static_assert(Scaled::param_count == 8 * 16 + 16 + 16 + 16 * 3 + 3);
// [scale_model]

/// The class is the index of the largest of the first three features.
void
make_data(std::size_t n, xt::xtensor<float, 2>& x, xt::xtensor<std::int32_t, 1>& y)
{
    x = xt::xtensor<float, 2>(std::array<std::size_t, 2>{n, 8});
    y = xt::xtensor<std::int32_t, 1>(std::array<std::size_t, 1>{n});
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < 8; ++j)
            x(i, j) = u(gen);
        y(i) = x(i, 0) > x(i, 1) ? (x(i, 0) > x(i, 2) ? 0 : 2) : (x(i, 1) > x(i, 2) ? 1 : 2);
    }
}

} // namespace

TEST_CASE("a user-written layer binds, counts and prints like a built-in one", "[user_layer]")
{
    STATIC_REQUIRE(std::is_same_v<Scaled::layer<1>::output_shape, Shape<16>>);
    STATIC_REQUIRE(Scaled::trainable_param_count == Scaled::param_count);
    std::ostringstream out;
    summary<Scaled>(out);
    CHECK(out.str().find("\nscale (Scale)                (None, 16)                16        \n") != std::string::npos);
}

TEST_CASE("a user-written layer trains, the same bits on one core and on two replicas", "[user_layer]")
{
    xt::xtensor<float, 2> x;
    xt::xtensor<std::int32_t, 1> y;
    make_data(512, x, y);
    auto train = [&](auto strategy) {
        auto model = strategy.template scope<Scaled>(3);
        model.compile(optimizers::Adam{.learning_rate = 1e-2f}, losses::SparseCategoricalCrossentropy{},
                      metrics::SparseCategoricalAccuracy{});
        const auto before = model.evaluate(x, y, {.verbose = 0});
        model.fit(x, y, {.batch_size = 32, .epochs = 5, .verbose = 0});
        const auto after = model.evaluate(x, y, {.verbose = 0});
        CHECK(after[0] < 0.6 * before[0]);
        CHECK(after[1] > 0.85);
        const auto w = model.get_weights();
        constexpr std::size_t scale = Scaled::layer<1>::weight<0>::offset;
        std::size_t moved = 0;
        for (std::size_t c = 0; c < 16; ++c)
            moved += w[scale + c] != 1.0f;
        CHECK(moved > 8);   // the factors started at one and were trained
        return w;
    };
    const auto one = train(OneDeviceStrategy{});
    const auto two = train(TpuStrategy<2>{});
    CHECK(one == two);
}

TEST_CASE("a user-written loss, metrics and optimizer train, the same bits on one core and on two replicas",
          "[user_layer]")
{
    xt::xtensor<float, 2> x;
    xt::xtensor<std::int32_t, 1> y;
    make_data(512, x, y);
    auto train = [&](auto strategy) {
        auto model = strategy.template scope<Scaled>(3);
        // [custom_compile]
        model.compile(mytraining::Signum{.learning_rate = 3e-3f}, mytraining::SparseFocalLoss{.gamma = 2.0f},
                      metrics::SparseCategoricalAccuracy{}, mytraining::TrueClassProbability{},
                      mytraining::CalibrationError{});
        // [custom_compile]
        const auto before = model.evaluate(x, y, {.verbose = 0});
        const History h = model.fit(x, y, {.batch_size = 32, .epochs = 6, .verbose = 0});
        const auto after = model.evaluate(x, y, {.verbose = 0});
        CHECK(after["loss"] < 0.5 * before["loss"]);
        CHECK(after["sparse_categorical_accuracy"] > 0.85);
        CHECK(after["true_class_probability"] > before["true_class_probability"] + 0.2);
        CHECK(h["calibration_error"].size() == 6);

        // the metrics against their definitions, over the model's own predictions
        const std::vector<float> p = model.predict(x);
        double truth = 0.0, total = 0.0;
        std::array<double, 30> bins{};
        for (std::size_t s = 0; s < 512; ++s) {
            const float* row = p.data() + 3 * s;
            truth += row[y(s)];
            const auto best = static_cast<std::size_t>(std::max_element(row, row + 3) - row);
            const std::size_t b = std::min<std::size_t>(9, static_cast<std::size_t>(double{row[best]} * 10));
            bins[3 * b] += 1;
            bins[3 * b + 1] += row[best];
            bins[3 * b + 2] += best == static_cast<std::size_t>(y(s));
            total += 1;
        }
        double ece = 0.0;
        for (std::size_t b = 0; b < 10; ++b)
            ece += std::abs(bins[3 * b + 2] - bins[3 * b + 1]);
        CHECK(after["true_class_probability"] == Approx(truth / 512).epsilon(1e-6));
        CHECK(after["calibration_error"] == Approx(ece / total).epsilon(1e-6));
        return std::pair{model.get_weights(), h.history};
    };
    const auto one = train(OneDeviceStrategy{});
    const auto two = train(TpuStrategy<2>{});
    CHECK(one.first == two.first);
    CHECK(one.second == two.second);
}

TEST_CASE("a user-written layer's and loss's gradients agree with finite differences (tpudsl::testing)",
          "[user_layer]")
{
    // [check_layer_gradients]
    // Every weight's gradient and the input's, from the layer's backward, against central differences
    // of the forward pass, over a batch of 3 (the Dense after it reads every output).
    const testing::gradient_report layer =
        testing::check_gradients<Sequential<Input<Shape<6>>, Dense<4, Tanh>, mylayers::Scale, Dense<3>>>();
    INFO(layer.describe());
    CHECK(layer.ok());
    // [check_layer_gradients]

    // [check_loss_gradient]
    // d(loss)/d(output) from the row function against central differences of the loss itself.
    const std::vector<float> outputs = {0.2f, 0.5f, 0.3f, 0.6f, 0.1f, 0.3f};   // 2 rows of 3 probabilities
    const std::vector<std::int32_t> labels = {1, 2};
    const testing::gradient_report loss =
        testing::check_loss_gradient(mytraining::SparseFocalLoss{.gamma = 2.0f}, outputs, labels, {}, 3,
                                     {.step = 1e-3});
    INFO(loss.describe());
    CHECK(loss.ok());
    // [check_loss_gradient]
    CHECK(loss.checked == 6);

    // the checker can fail: a loss whose gradient is off by a factor
    struct halved : mytraining::SparseFocalLoss {
        double
        operator()(const loss_row& row, float scale, float* grad) const noexcept
        {
            return mytraining::SparseFocalLoss::operator()(row, 0.5f * scale, grad);
        }
    };
    CHECK_FALSE(testing::check_loss_gradient(halved{}, outputs, labels, {}, 3, {.step = 1e-3}).ok());
}

TEST_CASE("a user-written optimizer's check refuses before compile changes anything", "[user_layer]")
{
    auto model = OneDeviceStrategy{}.scope<Scaled>(3);
    CHECK_THROWS_WITH(model.compile(mytraining::Signum{.beta = 1.0f}, mytraining::SparseFocalLoss{}),
                      Catch::Contains("mytraining::Signum: beta must be in [0, 1), got 1"));
}

namespace {
// [named_weight]
/// Scale with its factors named as Keras' `self.add_weight(name="factors", initializer="ones")` names
/// them: the name goes into Keras' weight files and the logs (TensorBoard's histograms).
struct NamedScale : mylayers::Scale {
    template <class In>
    using weights = tpudsl::weight_list<tpudsl::named_weight<"factors", tpudsl::Shape<In::shape::dims[In::shape::rank - 1]>,
                                                             tpudsl::initializers::Ones>>;
};
// [named_weight]
using NamedScaled = Sequential<Input<Shape<8>>, Dense<16, Relu>, NamedScale, Dense<3, Softmax>>;
} // namespace

TEST_CASE("a user-written layer names its weights as Keras' add_weight does", "[user_layer]")
{
    STATIC_REQUIRE(NamedScaled::layer<1>::weight<0>::name == "factors");
    STATIC_REQUIRE(Scaled::layer<1>::weight<0>::name == "kernel");   // a role's name otherwise
    const auto names = tensorboard_weights<NamedScaled>();
    REQUIRE(names.size() == 5);
    CHECK(names[2].name == "scale/factors");
    CHECK(tensorboard_weights<Scaled>()[2].name == "scale/kernel");
    // the same layer otherwise: the same weights from the same seed, the same bits after training
    Trainable<NamedScaled> named(3);
    Trainable<Scaled> plain(3);
    CHECK(named.get_weights() == plain.get_weights());
}
