// Losses: values against Keras' formulas, gradients against central finite differences; metrics'
// rules (ties in top-k).
#include <tpudsl/train/losses.hpp>
#include <tpudsl/train/metrics.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

using namespace tpudsl;

namespace {

constexpr std::size_t n = 3, d = 4;

std::vector<float>
softmax_rows(const std::vector<float>& z)
{
    std::vector<float> p(z.size());
    for (std::size_t s = 0; s < n; ++s)
        detail::softmax_row(z.data() + s * d, d, p.data() + s * d);
    return p;
}

/// Checks d(sum of losses)/d(input) against central differences, where `input` is what the
/// gradient is taken with respect to (the output, or the logits on the fused path).
template <class Loss>
void
check_gradient(const Loss& loss, std::vector<float> output, std::vector<float> logits, const std::vector<std::int32_t>& sl,
               const std::vector<float>& dl, bool expect_logit_grad)
{
    auto value = [&](const std::vector<float>& out, const std::vector<float>& lg) {
        loss_view v{n, d, out.data(), lg.empty() ? nullptr : lg.data(), sl.data(), dl.data()};
        std::vector<float> g(n * d);
        return evaluate(loss, v, 1.0f, g.data());
    };
    loss_view v{n, d, output.data(), logits.empty() ? nullptr : logits.data(), sl.data(), dl.data()};
    std::vector<float> grad(n * d);
    const float scale = 0.5f;
    evaluate(loss, v, scale, grad.data());
    CHECK(v.logit_grad == expect_logit_grad);
    auto& wrt = expect_logit_grad ? logits : output;
    for (std::size_t i = 0; i < wrt.size(); ++i) {
        const float saved = wrt[i];
        const float h = 1e-3f;
        wrt[i] = saved + h;
        auto up_out = expect_logit_grad ? softmax_rows(logits) : output;
        const double up = value(up_out, logits);
        wrt[i] = saved - h;
        auto down_out = expect_logit_grad ? softmax_rows(logits) : output;
        const double down = value(down_out, logits);
        wrt[i] = saved;
        INFO("element " << i);
        CHECK(grad[i] == Approx(scale * (up - down) / (2 * h)).margin(2e-3));
    }
}

} // namespace

TEST_CASE("sparse categorical crossentropy: the three paths", "[losses]")
{
    const std::vector<float> z = {1.0f, 2.0f, 0.5f, -1.0f, 0.2f, 0.1f, 3.0f, 0.0f, -2.0f, 1.5f, 0.3f, 0.9f};
    const std::vector<std::int32_t> y = {1, 2, 3};
    const auto p = softmax_rows(z);

    // value: logsumexp(z) - z_y per sample, identical on every path for a true softmax
    double want = 0;
    for (std::size_t s = 0; s < n; ++s)
        want += detail::log_sum_exp(z.data() + s * d, d) - z[s * d + y[s]];
    std::vector<float> g(n * d);
    loss_view fused{n, d, p.data(), z.data(), y.data(), nullptr};
    CHECK(evaluate(losses::SparseCategoricalCrossentropy{}, fused, 1.0f, g.data()) == Approx(want).epsilon(1e-6));
    loss_view logits{n, d, z.data(), nullptr, y.data(), nullptr};
    CHECK(evaluate(losses::SparseCategoricalCrossentropy{.from_logits = true}, logits, 1.0f, g.data()) ==
          Approx(want).epsilon(1e-6));
    loss_view probs{n, d, p.data(), nullptr, y.data(), nullptr};
    CHECK(evaluate(losses::SparseCategoricalCrossentropy{}, probs, 1.0f, g.data()) == Approx(want).epsilon(1e-5));

    check_gradient(losses::SparseCategoricalCrossentropy{}, p, z, y, {}, true);
    check_gradient(losses::SparseCategoricalCrossentropy{.from_logits = true}, z, {}, y, {}, false);
    // probabilities that are not a softmax: Keras' -log(clip(p_y)) + log(sum clip(p))
    const std::vector<float> q = {0.2f, 0.3f, 0.4f, 0.05f, 0.1f, 0.1f, 0.6f, 0.15f, 0.25f, 0.25f, 0.25f, 0.2f};
    check_gradient(losses::SparseCategoricalCrossentropy{}, q, {}, y, {}, false);
}

TEST_CASE("sparse crossentropy clips probabilities at 1e-7 as Keras", "[losses]")
{
    const std::vector<float> p = {1.0f, 0.0f, 0.0f, 0.0f};
    const std::vector<std::int32_t> y = {1};
    std::vector<float> g(4);
    loss_view v{1, 4, p.data(), nullptr, y.data(), nullptr};
    const double l = evaluate(losses::SparseCategoricalCrossentropy{}, v, 1.0f, g.data());
    const double eps = 1e-7, one = 1.0f - 1e-7f;
    CHECK(l == Approx(-std::log(eps) + std::log(one + 3 * eps)).epsilon(1e-5));
    CHECK(std::isfinite(l));
}

TEST_CASE("categorical crossentropy: logits, fused and normalised probabilities", "[losses]")
{
    const std::vector<float> z = {0.3f, -0.2f, 1.1f, 0.4f, 2.0f, 0.1f, -1.0f, 0.5f, 0.0f, 0.7f, 0.2f, -0.4f};
    const std::vector<float> t = {0, 0, 1, 0, 0.5f, 0.5f, 0, 0, 0, 0, 0, 1};
    const auto p = softmax_rows(z);
    check_gradient(losses::CategoricalCrossentropy{}, p, z, {}, t, true);
    check_gradient(losses::CategoricalCrossentropy{.from_logits = true}, z, {}, {}, t, false);
    const std::vector<float> q = {0.2f, 0.3f, 0.4f, 0.3f, 0.1f, 0.2f, 0.6f, 0.15f, 0.25f, 0.25f, 0.25f, 0.2f};
    check_gradient(losses::CategoricalCrossentropy{}, q, {}, {}, t, false);
}

TEST_CASE("binary crossentropy and mean squared error", "[losses]")
{
    const std::vector<float> p = {0.2f, 0.7f, 0.5f, 0.9f, 0.1f, 0.4f, 0.6f, 0.3f, 0.8f, 0.35f, 0.45f, 0.55f};
    const std::vector<float> t = {0, 1, 1, 0, 0, 1, 0.5f, 1, 0, 1, 0, 1};
    check_gradient(losses::BinaryCrossentropy{}, p, {}, {}, t, false);
    const std::vector<float> z = {-1.0f, 2.0f, 0.5f, 0.1f, -0.3f, 1.2f, 0.0f, -2.0f, 0.7f, 1.5f, -0.6f, 0.2f};
    check_gradient(losses::BinaryCrossentropy{.from_logits = true}, z, {}, {}, t, false);
    check_gradient(losses::MeanSquaredError{}, z, {}, {}, t, false);

    // values: the mean over the last axis
    std::vector<float> g(12);
    loss_view v{n, d, z.data(), nullptr, nullptr, t.data()};
    double want = 0;
    for (std::size_t i = 0; i < 12; ++i)
        want += (z[i] - t[i]) * (z[i] - t[i]) / 4.0;
    CHECK(evaluate(losses::MeanSquaredError{}, v, 1.0f, g.data()) == Approx(want).epsilon(1e-6));
}

TEST_CASE("accuracy metrics, top-k counts ties at the boundary as hits", "[metrics]")
{
    const std::vector<float> out = {0.1f, 0.5f, 0.2f, 0.2f,    // argmax 1
                                    0.3f, 0.3f, 0.3f, 0.1f,    // tie: first max is 0
                                    0.4f, 0.1f, 0.25f, 0.25f};
    const std::vector<std::int32_t> y = {1, 1, 3};
    CHECK(count_hits(metrics::SparseCategoricalAccuracy{}, out.data(), 3, 4, y.data(), nullptr) == 1);
    // top-2: sample 0 hit; sample 1: nothing scores above 0.3 -> hit; sample 2: label 3 (0.25) has
    // one higher (0.4) and ties with 0.25 -> hit
    CHECK(count_hits(metrics::SparseTopKCategoricalAccuracy<2>{}, out.data(), 3, 4, y.data(), nullptr) == 3);
    // top-1 on the tie of sample 1: fewer than 1 higher -> a hit too
    CHECK(count_hits(metrics::SparseTopKCategoricalAccuracy<1>{}, out.data(), 3, 4, y.data(), nullptr) == 2);
    const std::vector<float> nan_row = {NAN, 0.1f, 0.2f, 0.3f};
    const std::int32_t label = 3;
    CHECK(count_hits(metrics::SparseTopKCategoricalAccuracy<5>{}, nan_row.data(), 1, 4, &label, nullptr) == 0);
    const std::vector<float> onehot = {0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0};
    CHECK(count_hits(metrics::CategoricalAccuracy{}, out.data(), 3, 4, nullptr, onehot.data()) == 2);
}
