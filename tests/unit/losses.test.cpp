// Losses: values against Keras' formulas, gradients against central finite differences; metrics'
// rules (ties in top-k).
#include <tpudsl/train/losses.hpp>
#include <tpudsl/train/metrics.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
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

/// A metric's value over one batch of n rows of d outputs (weights per row, or none).
template <class M>
double
metric_value(const M& m, const std::vector<float>& out, std::size_t rows, std::size_t width,
             const std::int32_t* labels, const float* targets, const float* weights = nullptr)
{
    std::vector<double> state(M::state_size, 0.0);
    const metric_batch b{.rows = rows, .width = width, .output = out.data(), .labels = labels, .targets = targets,
                         .sample_weight = weights, .rows_per_sample = 1};
    m.update(b, state.data());
    return m.result(state.data());
}

TEST_CASE("accuracy metrics, top-k counts ties at the boundary as hits", "[metrics]")
{
    const std::vector<float> out = {0.1f, 0.5f, 0.2f, 0.2f,    // argmax 1
                                    0.3f, 0.3f, 0.3f, 0.1f,    // tie: first max is 0
                                    0.4f, 0.1f, 0.25f, 0.25f};
    const std::vector<std::int32_t> y = {1, 1, 3};
    CHECK(metric_value(metrics::SparseCategoricalAccuracy{}, out, 3, 4, y.data(), nullptr) == Approx(1.0 / 3));
    // top-2: sample 0 hit; sample 1: nothing scores above 0.3 -> hit; sample 2: label 3 (0.25) has
    // one higher (0.4) and ties with 0.25 -> hit
    CHECK(metric_value(metrics::SparseTopKCategoricalAccuracy<2>{}, out, 3, 4, y.data(), nullptr) == 1.0);
    // top-1 on the tie of sample 1: fewer than 1 higher -> a hit too
    CHECK(metric_value(metrics::SparseTopKCategoricalAccuracy<1>{}, out, 3, 4, y.data(), nullptr) == Approx(2.0 / 3));
    const std::vector<float> nan_row = {NAN, 0.1f, 0.2f, 0.3f};
    const std::int32_t label = 3;
    CHECK(metric_value(metrics::SparseTopKCategoricalAccuracy<5>{}, nan_row, 1, 4, &label, nullptr) == 0.0);
    const std::vector<float> onehot = {0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0};
    CHECK(metric_value(metrics::CategoricalAccuracy{}, out, 3, 4, nullptr, onehot.data()) == Approx(2.0 / 3));
    // the same hits as top-k on one-hot targets; a sample's weight scales its hit and its count
    CHECK(metric_value(metrics::TopKCategoricalAccuracy<1>{}, out, 3, 4, nullptr, onehot.data()) == Approx(2.0 / 3));
    const std::vector<float> w = {3.0f, 1.0f, 0.0f};
    CHECK(metric_value(metrics::SparseCategoricalAccuracy{}, out, 3, 4, y.data(), nullptr, w.data()) == 0.75);
}

TEST_CASE("regression and binary metrics by hand", "[metrics]")
{
    const std::vector<float> p = {0.2f, 0.7f, 0.5f, 0.9f, 0.1f, 0.4f};
    const std::vector<float> t = {0.0f, 1.0f, 1.0f, 1.0f, 0.0f, 0.0f};
    // rows of 3: (0.2 0.7 0.5 | 0 1 1) and (0.9 0.1 0.4 | 1 0 0)
    CHECK(metric_value(metrics::BinaryAccuracy{}, p, 2, 3, nullptr, t.data()) == Approx((2.0 / 3 + 1.0) / 2));
    CHECK(metric_value(metrics::BinaryAccuracy{.threshold = 0.45f}, p, 2, 3, nullptr, t.data()) ==
          Approx((1.0 + 1.0) / 2));
    const double mae = (0.2 + 0.3 + 0.5 + 0.1 + 0.1 + 0.4) / 6;
    const double mse = (0.04 + 0.09 + 0.25 + 0.01 + 0.01 + 0.16) / 6;
    CHECK(metric_value(metrics::MeanAbsoluteError{}, p, 2, 3, nullptr, t.data()) == Approx(mae));
    CHECK(metric_value(metrics::MeanSquaredError{}, p, 2, 3, nullptr, t.data()) == Approx(mse));
    CHECK(metric_value(metrics::RootMeanSquaredError{}, p, 2, 3, nullptr, t.data()) == Approx(std::sqrt(mse)));
    // weights 1 and 3: the second row counts three times
    const std::vector<float> w = {1.0f, 3.0f};
    const double mae_w = ((0.2 + 0.3 + 0.5) / 3 + 3 * (0.1 + 0.1 + 0.4) / 3) / 4;
    CHECK(metric_value(metrics::MeanAbsoluteError{}, p, 2, 3, nullptr, t.data(), w.data()) == Approx(mae_w));
    // above 0.5: 0.7 (positive), 0.9 (positive); 0.5 is not above. Positives: 0.7, 0.5, 0.9.
    CHECK(metric_value(metrics::Precision{}, p, 2, 3, nullptr, t.data()) == 1.0);
    CHECK(metric_value(metrics::Recall{}, p, 2, 3, nullptr, t.data()) == Approx(2.0 / 3));
    CHECK(metric_value(metrics::Precision{.threshold = 0.15f}, p, 2, 3, nullptr, t.data()) == Approx(3.0 / 5));
}

TEST_CASE("AUC: a perfect ranking, a reversed one, and the trapezoids of a tie", "[metrics]")
{
    const std::vector<float> t = {0.0f, 0.0f, 1.0f, 1.0f};
    const std::vector<float> ranked = {0.1f, 0.4f, 0.6f, 0.9f};
    const std::vector<float> reversed = {0.9f, 0.6f, 0.4f, 0.1f};
    CHECK(metric_value(metrics::AUC{}, ranked, 4, 1, nullptr, t.data()) == Approx(1.0));
    CHECK(metric_value(metrics::AUC{}, reversed, 4, 1, nullptr, t.data()) == Approx(0.0).margin(1e-12));
    // every output the same: the ROC curve is the diagonal, its area one half
    const std::vector<float> tied = {0.5f, 0.5f, 0.5f, 0.5f};
    CHECK(metric_value(metrics::AUC{}, tied, 4, 1, nullptr, t.data()) == Approx(0.5));
    // one negative above one positive of two each: 3 of the 4 pairs in order
    const std::vector<float> mixed = {0.1f, 0.7f, 0.6f, 0.9f};
    CHECK(metric_value(metrics::AUC{}, mixed, 4, 1, nullptr, t.data()) == Approx(0.75));
    // PR: a perfect ranking has precision 1 at every recall
    CHECK(metric_value(metrics::AUC{.curve = metrics::auc_curve::pr}, ranked, 4, 1, nullptr, t.data()) ==
          Approx(1.0));
}

TEST_CASE("regression losses: values by hand, gradients against finite differences", "[losses]")
{
    const std::vector<float> z = {-1.0f, 2.0f, 0.5f, 0.1f, -0.3f, 1.2f, 0.0f, -2.0f, 0.7f, 1.5f, -0.6f, 0.2f};
    const std::vector<float> t = {0, 1, 1, 0, 0, 1, 0.5f, 1, 0, 1, 0, 1};
    auto value = [&](const auto& loss) {
        std::vector<float> g(n * d);
        loss_view v{n, d, z.data(), nullptr, nullptr, t.data()};
        return evaluate(loss, v, 1.0f, g.data());
    };
    double mae = 0, huber = 0, logcosh = 0, hinge = 0;
    for (std::size_t i = 0; i < n * d; ++i) {
        const double e = z[i] - t[i], a = std::abs(e);
        mae += a / d;
        huber += (a <= 1.0 ? 0.5 * e * e : a - 0.5) / d;
        logcosh += std::log(std::cosh(e)) / d;
    }
    // hinge: rows 0 and 2 hold only 0 and 1 (taken as -1 and 1); row 1 holds 0.5 (taken as it is)
    for (std::size_t i = 0; i < n * d; ++i) {
        const double ti = i / d == 1 ? t[i] : 2.0 * t[i] - 1.0;
        hinge += std::max(1.0 - ti * z[i], 0.0) / d;
    }
    CHECK(value(losses::MeanAbsoluteError{}) == Approx(mae).epsilon(1e-6));
    CHECK(value(losses::Huber{}) == Approx(huber).epsilon(1e-6));
    CHECK(value(losses::LogCosh{}) == Approx(logcosh).epsilon(1e-6));
    CHECK(value(losses::Hinge{}) == Approx(hinge).epsilon(1e-6));
    check_gradient(losses::MeanAbsoluteError{}, z, {}, {}, t, false);
    check_gradient(losses::Huber{.delta = 0.5f}, z, {}, {}, t, false);
    check_gradient(losses::LogCosh{}, z, {}, {}, t, false);
    check_gradient(losses::CosineSimilarity{}, z, {}, {}, t, false);
    std::vector<float> off_kinks = z;   // no margin exactly 0 (z = -1 against -1), where hinge has no slope
    for (float& x : off_kinks)
        x += 0.13f;
    check_gradient(losses::Hinge{}, off_kinks, {}, {}, t, false);
}

TEST_CASE("KL divergence, cosine similarity and label smoothing by hand", "[losses]")
{
    const std::vector<float> p = {0.1f, 0.2f, 0.3f, 0.4f, 0.25f, 0.25f, 0.25f, 0.25f, 0.7f, 0.1f, 0.1f, 0.1f};
    const std::vector<float> t = {0.0f, 0.5f, 0.5f, 0.0f, 0.1f, 0.2f, 0.3f, 0.4f, 1.0f, 0.0f, 0.0f, 0.0f};
    double kl = 0, cos = 0;
    for (std::size_t s = 0; s < n; ++s) {
        double pp = 0, tt = 0, pt = 0;
        for (std::size_t j = 0; j < d; ++j) {
            const double ti = std::max(t[s * d + j], 1e-7f), pi = p[s * d + j];
            kl += ti * std::log(ti / pi);
            pp += pi * pi;
            tt += double{t[s * d + j]} * t[s * d + j];
            pt += pi * t[s * d + j];
        }
        cos -= pt / std::sqrt(pp * tt);
    }
    std::vector<float> g(n * d);
    loss_view v{n, d, p.data(), nullptr, nullptr, t.data()};
    CHECK(evaluate(losses::KLDivergence{}, v, 1.0f, g.data()) == Approx(kl).epsilon(1e-6));
    CHECK(evaluate(losses::CosineSimilarity{}, v, 1.0f, g.data()) == Approx(cos).epsilon(1e-6));
    check_gradient(losses::KLDivergence{}, p, {}, {}, t, false);

    // label smoothing 0.2 over 4 classes makes a one-hot row (0.05, 0.85, 0.05, 0.05); from logits
    const std::vector<float> z = {0.3f, -0.2f, 1.1f, 0.4f};
    const std::vector<float> onehot = {0, 1, 0, 0};
    const std::vector<float> smooth = {0.05f, 0.85f, 0.05f, 0.05f};
    loss_view a{1, 4, z.data(), nullptr, nullptr, onehot.data()};
    loss_view b{1, 4, z.data(), nullptr, nullptr, smooth.data()};
    CHECK(evaluate(losses::CategoricalCrossentropy{.from_logits = true, .label_smoothing = 0.2f}, a, 1.0f, g.data()) ==
          Approx(evaluate(losses::CategoricalCrossentropy{.from_logits = true}, b, 1.0f, g.data())).epsilon(1e-6));
    // binary: t (1 - s) + s / 2
    const std::vector<float> q = {0.3f, 0.8f};
    const std::vector<float> bt = {0.0f, 1.0f}, bs = {0.1f, 0.9f};
    loss_view c{1, 2, q.data(), nullptr, nullptr, bt.data()};
    loss_view e{1, 2, q.data(), nullptr, nullptr, bs.data()};
    CHECK(evaluate(losses::BinaryCrossentropy{.label_smoothing = 0.2f}, c, 1.0f, g.data()) ==
          Approx(evaluate(losses::BinaryCrossentropy{}, e, 1.0f, g.data())).epsilon(1e-6));
}

TEST_CASE("a sample's weight scales its loss and its gradient", "[losses]")
{
    const std::vector<float> z = {-1.0f, 2.0f, 0.5f, 0.1f, -0.3f, 1.2f, 0.0f, -2.0f, 0.7f, 1.5f, -0.6f, 0.2f};
    const std::vector<float> t = {0, 1, 1, 0, 0, 1, 0.5f, 1, 0, 1, 0, 1};
    const std::vector<float> w = {2.0f, 0.0f, 0.5f};
    std::vector<float> g(n * d), gw(n * d);
    loss_view plain{n, d, z.data(), nullptr, nullptr, t.data()};
    loss_view weighted{n, d, z.data(), nullptr, nullptr, t.data(), w.data()};
    evaluate(losses::MeanSquaredError{}, plain, 1.0f, g.data());
    double want = 0;
    for (std::size_t s = 0; s < n; ++s) {
        loss_view one{1, d, z.data() + s * d, nullptr, nullptr, t.data() + s * d};
        std::vector<float> scratch(d);
        want += w[s] * evaluate(losses::MeanSquaredError{}, one, 1.0f, scratch.data());
    }
    CHECK(evaluate(losses::MeanSquaredError{}, weighted, 1.0f, gw.data()) == Approx(want).epsilon(1e-12));
    for (std::size_t i = 0; i < n * d; ++i)
        CHECK(gw[i] == Approx(w[i / d] * g[i]).epsilon(1e-6));
}

TEST_CASE("ignore_class: an ignored row scores nothing and the mean is over the others", "[losses]")
{
    // Keras: the ignored rows' loss and gradient are zero and the batch's loss is divided by the rows
    // scored, so a batch with one row ignored is the mean of the two others.
    const std::vector<float> z = {-1.0f, 2.0f, 0.5f, 0.1f, -0.3f, 1.2f, 0.0f, -2.0f, 0.7f, 1.5f, -0.6f, 0.2f};
    const std::vector<std::int32_t> labels = {1, -1, 3};
    const losses::SparseCategoricalCrossentropy plain{.from_logits = true};
    const losses::SparseCategoricalCrossentropy ignoring{.from_logits = true, .ignore_class = -1};
    loss_view v{n, d, z.data(), nullptr, labels.data()};
    CHECK(scored_rows(ignoring, v) == 2);
    CHECK(scored_rows(plain, v) == 3);
    std::vector<float> g(n * d, 9.0f);
    const double sum = evaluate(ignoring, v, 0.5f, g.data());
    double want = 0.0;
    for (const std::size_t s : {0u, 2u}) {
        double e = 0.0;
        for (std::size_t j = 0; j < d; ++j)
            e += std::exp(double{z[s * d + j]});
        want += std::log(e) - z[s * d + static_cast<std::size_t>(labels[s])];
        for (std::size_t j = 0; j < d; ++j) {
            const double p = std::exp(double{z[s * d + j]}) / e;
            CHECK(g[s * d + j] == Approx(0.5 * (p - (static_cast<std::int32_t>(j) == labels[s]))).epsilon(1e-6));
        }
    }
    CHECK(sum == Approx(want).epsilon(1e-12));
    for (std::size_t j = 0; j < d; ++j)
        CHECK(g[d + j] == 0.0f);   // the ignored row's gradient, written as zero
    // the step's mean: the sum over the scored rows, whatever the batch's size
    std::vector<float> gm(n * d);
    CHECK(detail::batch_mean_loss<1, d>(ignoring, v, n, 2, 1.0f, gm.data()) / n == Approx(want / 2).epsilon(1e-12));
    for (std::size_t j = 0; j < d; ++j)
        CHECK(gm[j] == Approx(g[j]).epsilon(1e-6));   // scale 1/2 == 0.5 above
    // every row ignored: zero, not a division by zero
    const std::vector<std::int32_t> none = {-1, -1, -1};
    loss_view all{n, d, z.data(), nullptr, none.data()};
    CHECK(detail::batch_mean_loss<1, d>(ignoring, all, n, scored_rows(ignoring, all), 1.0f, gm.data()) == 0.0);
    for (const float x : gm)
        CHECK(x == 0.0f);
}
