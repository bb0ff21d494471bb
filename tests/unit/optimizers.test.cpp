// Optimizers against hand-computed steps of Keras' formulas (keras-semantics §4): one weight
// w0 = 0.5, gradients 0.1, -0.2, 0.3; the expected weights were computed in double precision from
// the formulas written out in each optimizer's documentation.
#include <tpudsl/train/optimizers.hpp>
#include <tpudsl/train/schedules.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <vector>

using namespace tpudsl;

namespace {

template <class Opt>
std::array<double, 3>
run(Opt opt)
{
    float w = 0.5f;
    std::vector<float> slots(Opt::slots, 0.0f);
    float* slot_ptrs[4] = {};
    for (std::size_t s = 0; s < Opt::slots; ++s) {
        if constexpr (requires { opt.initial_slot_value(s); })
            slots[s] = opt.initial_slot_value(s);
        slot_ptrs[s] = &slots[s];
    }
    const float grads[3] = {0.1f, -0.2f, 0.3f};
    std::array<double, 3> out{};
    for (std::uint64_t t = 1; t <= 3; ++t) {
        const auto c = opt.prepare(t);
        opt.update(c, &w, &grads[t - 1], slot_ptrs, 0, 1);
        if constexpr (requires { opt.advance(c); })
            opt.advance(c);
        out[t - 1] = w;
    }
    return out;
}

void
check(const std::array<double, 3>& got, const std::array<double, 3>& want)
{
    for (std::size_t i = 0; i < 3; ++i) {
        INFO("step " << i + 1);
        CHECK(got[i] == Approx(want[i]).margin(1e-6));
    }
}

} // namespace

TEST_CASE("SGD: plain, momentum and Nesterov", "[optimizers]")
{
    check(run(optimizers::SGD{}), {0.499, 0.501, 0.498});
    check(run(optimizers::SGD{.momentum = 0.9f}), {0.499, 0.5001, 0.49809});
    check(run(optimizers::SGD{.momentum = 0.9f, .nesterov = true}), {0.4981, 0.50109, 0.496281});
}

TEST_CASE("Adam with epsilon hat", "[optimizers]")
{
    check(run(optimizers::Adam{}), {0.499000032, 0.499366130, 0.499022892});
}

TEST_CASE("Nadam: tf.keras >= 2.11 schedule and the legacy 0.004 schedule", "[optimizers]")
{
    check(run(optimizers::Nadam{}), {0.498937213, 0.499818878, 0.498987156});
    check(run(optimizers::Nadam{.schedule = optimizers::nadam_schedule::legacy}),
          {0.498943549, 0.499850106, 0.498966540});
    // The schedules themselves (keras-semantics §4.2): mu_1 = 0.468 (new), 0.450073 (legacy).
    CHECK(optimizers::Nadam{}.mu(1) == Approx(0.468).margin(1e-9));
    CHECK(optimizers::Nadam{.schedule = optimizers::nadam_schedule::legacy}.mu(1) == Approx(0.450073).margin(1e-6));
    CHECK(optimizers::Nadam{}.mu(10) == Approx(0.600825).margin(1e-6));
}

TEST_CASE("RMSprop: epsilon inside the square root, momentum and centered", "[optimizers]")
{
    check(run(optimizers::RMSprop{}), {0.496837880, 0.499694994, 0.497104365});
    check(run(optimizers::RMSprop{.momentum = 0.9f, .centered = true}), {0.496666852, 0.496560075, 0.493833418});
}

TEST_CASE("AdamW, Adagrad, Adamax, Adadelta and Lion against their formulas by hand", "[optimizers]")
{
    // AdamW: w -= w wd lr, then Adam's step
    check(run(optimizers::AdamW{}), {0.498998032, 0.499362134, 0.499016898});
    check(run(optimizers::AdamW{.learning_rate = 0.01f, .weight_decay = 0.1f}), {0.489500316, 0.492671799, 0.488746746});
    // Adagrad: the accumulator starts at 0.1
    check(run(optimizers::Adagrad{}), {0.499698489, 0.500214886, 0.499602514});
    // Adamax: u = max(b2 u, |g|), the step corrected by 1 - b1^t
    check(run(optimizers::Adamax{}), {0.499000001, 0.499289475, 0.499042242});
    // Adadelta at Keras 2's rate of 1 (its steps at 1e-3 are below the margin)
    check(run(optimizers::Adadelta{.learning_rate = 1.0f, .epsilon = 1e-3f}), {0.418350342, 0.542236265, 0.387673027});
    // Lion: the sign of the interpolated momentum, lr each step
    check(run(optimizers::Lion{}), {0.499, 0.5, 0.499});
}

TEST_CASE("the learning rate can change between steps", "[optimizers]")
{
    optimizers::SGD opt;
    float w = 1.0f, v = 0.0f;
    float* slots[1] = {&v};
    const float g = 1.0f;
    opt.update(opt.prepare(1), &w, &g, slots, 0, 1);
    opt.learning_rate = 0.5f;
    opt.update(opt.prepare(2), &w, &g, slots, 0, 1);
    CHECK(w == Approx(1.0 - 0.01 - 0.5).margin(1e-7));
}

TEST_CASE("optimizers: the same bits whether a buffer is updated whole, in shards or element by element",
          "[optimizers]")
{
    // 37 elements: whole vectors and a partial last one; shards that begin and end inside vectors
    // (the strategies cut the buffer between their threads, the fused pass into blocks).
    constexpr std::size_t n = 37;
    auto run_split = [](auto opt, const std::vector<std::size_t>& cuts) {
        using Opt = decltype(opt);
        std::vector<float> w(n), g(n), slots(Opt::slots * n, 0.0f);
        for (std::size_t i = 0; i < n; ++i) {
            w[i] = 0.01f * static_cast<float>(i) - 0.2f;
            g[i] = 0.3f * std::sin(static_cast<float>(i) + 1.0f);
        }
        float* slot_ptrs[4] = {};
        for (std::size_t s = 0; s < Opt::slots; ++s)
            slot_ptrs[s] = slots.data() + s * n;
        for (std::uint64_t t = 1; t <= 3; ++t) {
            const auto c = opt.prepare(t);
            for (std::size_t k = 0; k + 1 < cuts.size(); ++k)
                opt.update(c, w.data(), g.data(), slot_ptrs, cuts[k], cuts[k + 1]);
            opt.advance(c);
        }
        w.insert(w.end(), slots.begin(), slots.end());
        return w;
    };
    std::vector<std::size_t> each(n + 1);
    for (std::size_t i = 0; i <= n; ++i)
        each[i] = i;
    auto check_opt = [&](auto opt, const char* name) {
        INFO(name);
        const auto whole = run_split(opt, {0, n});
        CHECK(run_split(opt, {0, 5, 21, 22, n}) == whole);
        CHECK(run_split(opt, each) == whole);
        CHECK(whole[0] != -0.2f);   // it did update
    };
    check_opt(optimizers::SGD{.momentum = 0.9f, .nesterov = true}, "SGD");
    check_opt(optimizers::Adam{}, "Adam");
    check_opt(optimizers::Nadam{}, "Nadam");
    check_opt(optimizers::RMSprop{.momentum = 0.9f, .centered = true}, "RMSprop");
}

TEST_CASE("learning-rate schedules by hand, at Keras' steps", "[optimizers]")
{
    using namespace optimizers::schedules;
    const ExponentialDecay exp{.initial_learning_rate = 0.1f, .decay_steps = 10, .decay_rate = 0.5f};
    CHECK(exp(0) == Approx(0.1));
    CHECK(exp(10) == Approx(0.05));
    CHECK(exp(15) == Approx(0.1 * std::pow(0.5, 1.5)));
    const ExponentialDecay stairs{.initial_learning_rate = 0.1f, .decay_steps = 10, .decay_rate = 0.5f, .staircase = true};
    CHECK(stairs(15) == Approx(0.05));
    const InverseTimeDecay inverse{.initial_learning_rate = 1.0f, .decay_steps = 10, .decay_rate = 1.0f};
    CHECK(inverse(10) == Approx(0.5));
    CHECK(inverse(5) == Approx(1.0 / 1.5));
    const PiecewiseConstantDecay pieces{{10, 20}, {1.0f, 0.5f, 0.1f}};
    CHECK(pieces(0) == 1.0f);
    CHECK(pieces(10) == 1.0f);   // up to and at the boundary
    CHECK(pieces(11) == 0.5f);
    CHECK(pieces(20) == 0.5f);
    CHECK(pieces(21) == 0.1f);
    const CosineDecay cosine{.initial_learning_rate = 1.0f, .decay_steps = 10, .alpha = 0.1f};
    CHECK(cosine(0) == Approx(1.0));
    CHECK(cosine(5) == Approx(0.9 * 0.5 + 0.1));
    CHECK(cosine(20) == Approx(0.1));   // held at the end
    const CosineDecay warm{.initial_learning_rate = 0.0f, .decay_steps = 10, .warmup_target = 1.0f, .warmup_steps = 4};
    CHECK(warm(2) == Approx(0.5));
    CHECK(warm(4) == Approx(1.0));
    CHECK(warm(9) == Approx(0.5));   // 5 of 10 decay steps after the warmup
    CHECK_THROWS_WITH(check(PiecewiseConstantDecay{{10}, {1.0f}}),
                      Catch::Contains("values must hold one more element than boundaries, got 1 values and 1"));
    CHECK_THROWS_WITH(check(CosineDecay{.initial_learning_rate = 0.0f, .decay_steps = 10, .warmup_target = 1.0f}),
                      Catch::Contains("a warmup_target needs warmup_steps > 0"));
}

TEST_CASE("a Scheduled optimizer steps with its schedule's rate at iterations - 1", "[optimizers]")
{
    // SGD under a schedule is SGD whose rate is set to schedule(t - 1) before step t
    const optimizers::schedules::ExponentialDecay decay{.initial_learning_rate = 0.5f, .decay_steps = 1,
                                                        .decay_rate = 0.5f};
    optimizers::Scheduled scheduled{optimizers::SGD{}, decay};
    float w = 1.0f, by_hand = 1.0f;
    const float g[3] = {0.25f, -0.5f, 1.0f};
    for (std::uint64_t t = 1; t <= 3; ++t) {
        CHECK(scheduled.learning_rate == decay(t - 1));
        const auto c = scheduled.prepare(t);
        float* none[1] = {nullptr};
        scheduled.update(c, &w, &g[t - 1], none, 0, 1);
        scheduled.advance(c);
        by_hand -= decay(t - 1) * g[t - 1];
    }
    CHECK(w == by_hand);
    CHECK(scheduled.learning_rate == decay(3));
}
