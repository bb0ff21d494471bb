/// @file Defines Keras' learning-rate schedules (keras.optimizers.schedules: ExponentialDecay,
/// PiecewiseConstantDecay, CosineDecay with warmup, InverseTimeDecay), the LearningRateSchedule concept
/// a user's schedule meets too, and optimizers::Scheduled, an optimizer whose learning rate a schedule
/// gives: Keras' `Adam(learning_rate=ExponentialDecay(...))` is
/// `Scheduled{optimizers::Adam{}, schedules::ExponentialDecay{...}}`. A schedule is a function of the
/// step (the optimizer's iterations before the step, from 0), so a resumed fit stays bit-exact.
#ifndef TPUDSL_TRAIN_SCHEDULES_HPP
#define TPUDSL_TRAIN_SCHEDULES_HPP

#include <tpudsl/detail/text.hpp>
#include <tpudsl/train/optimizers.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tpudsl {

/// A learning rate as a function of the step: `schedule(step)`, step = iterations before the update.
template <class S>
concept LearningRateSchedule = std::copy_constructible<S> && requires(const S& s, std::uint64_t step) {
    { s(step) } -> std::convertible_to<float>;
};

namespace optimizers::schedules {

namespace detail {
/// step / decay_steps, floored when staircase (Keras' p, in float32).
[[nodiscard]] inline float
decay_fraction(std::uint64_t step, float decay_steps, bool staircase) noexcept
{
    const float p = static_cast<float>(step) / decay_steps;
    return staircase ? std::floor(p) : p;
}
} // namespace detail

/// `ExponentialDecay(initial_learning_rate, decay_steps, decay_rate, staircase=False)`:
/// lr0 * rate^(step / decay_steps) (the exponent floored when staircase).
struct ExponentialDecay {
    float initial_learning_rate = 0.0f;
    float decay_steps = 1.0f;
    float decay_rate = 1.0f;
    bool staircase = false;

    [[nodiscard]] float
    operator()(std::uint64_t step) const noexcept
    {
        return initial_learning_rate * std::pow(decay_rate, detail::decay_fraction(step, decay_steps, staircase));
    }
};

/// `InverseTimeDecay(initial_learning_rate, decay_steps, decay_rate, staircase=False)`:
/// lr0 / (1 + rate * step / decay_steps) (the fraction floored when staircase).
struct InverseTimeDecay {
    float initial_learning_rate = 0.0f;
    float decay_steps = 1.0f;
    float decay_rate = 0.0f;
    bool staircase = false;

    [[nodiscard]] float
    operator()(std::uint64_t step) const noexcept
    {
        return initial_learning_rate / (1.0f + decay_rate * detail::decay_fraction(step, decay_steps, staircase));
    }
};

/// `PiecewiseConstantDecay(boundaries, values)`: values[0] up to and at boundaries[0], values[i] in
/// (boundaries[i - 1], boundaries[i]], the last value after the last boundary; one value more than
/// boundaries.
struct PiecewiseConstantDecay {
    std::vector<std::uint64_t> boundaries;
    std::vector<float> values;

    [[nodiscard]] float
    operator()(std::uint64_t step) const noexcept
    {
        const auto above = std::lower_bound(boundaries.begin(), boundaries.end(), step);   // first >= step
        return values[static_cast<std::size_t>(above - boundaries.begin())];
    }
};

/// `CosineDecay(initial_learning_rate, decay_steps, alpha=0.0, warmup_target=None, warmup_steps=0)`:
/// without a warmup target, lr0 ((1 - alpha) (1 + cos(pi min(step, decay_steps) / decay_steps)) / 2 +
/// alpha); with one, a linear rise from lr0 to the target over warmup_steps, then that decay from the
/// target.
struct CosineDecay {
    float initial_learning_rate = 0.0f;
    float decay_steps = 1.0f;
    float alpha = 0.0f;
    std::optional<float> warmup_target;
    float warmup_steps = 0.0f;

    [[nodiscard]] float
    operator()(std::uint64_t step) const noexcept
    {
        float s = static_cast<float>(step);
        if (!warmup_target)
            return decay(std::min(s, decay_steps), initial_learning_rate);
        s = std::min(s, decay_steps + warmup_steps);
        if (s < warmup_steps)
            return (*warmup_target - initial_learning_rate) * (s / warmup_steps) + initial_learning_rate;
        return decay(s - warmup_steps, *warmup_target);
    }

private:
    [[nodiscard]] float
    decay(float s, float from) const noexcept
    {
        const float cosine = 0.5f * (1.0f + std::cos(std::numbers::pi_v<float> * (s / decay_steps)));
        return from * ((1.0f - alpha) * cosine + alpha);
    }
};

namespace detail {
[[noreturn]] inline void
bad_schedule(std::string_view what)
{
    throw std::invalid_argument(tpudsl::detail::concat({"tpudsl::optimizers::schedules::", what}));
}
} // namespace detail

/// decay_steps finite and > 0.
inline void
check(const ExponentialDecay& s)
{
    if (!(s.decay_steps > 0.0f && std::isfinite(s.decay_steps)))
        detail::bad_schedule("ExponentialDecay: decay_steps must be > 0");
}
inline void
check(const InverseTimeDecay& s)
{
    if (!(s.decay_steps > 0.0f && std::isfinite(s.decay_steps)))
        detail::bad_schedule("InverseTimeDecay: decay_steps must be > 0");
}
/// decay_steps > 0; warmup_steps > 0 with a warmup target.
inline void
check(const CosineDecay& s)
{
    if (!(s.decay_steps > 0.0f && std::isfinite(s.decay_steps)))
        detail::bad_schedule("CosineDecay: decay_steps must be > 0");
    if (s.warmup_target && !(s.warmup_steps > 0.0f))
        detail::bad_schedule("CosineDecay: a warmup_target needs warmup_steps > 0");
}
/// One value more than boundaries, the boundaries increasing (Keras' rule).
inline void
check(const PiecewiseConstantDecay& s)
{
    if (s.values.size() != s.boundaries.size() + 1)
        detail::bad_schedule(tpudsl::detail::concat({"PiecewiseConstantDecay: values must hold one more element "
                                                     "than boundaries, got ",
                                                     std::to_string(s.values.size()), " values and ",
                                                     std::to_string(s.boundaries.size()), " boundaries"}));
    if (!std::is_sorted(s.boundaries.begin(), s.boundaries.end()))
        detail::bad_schedule("PiecewiseConstantDecay: boundaries must increase");
}

static_assert(LearningRateSchedule<ExponentialDecay> && LearningRateSchedule<InverseTimeDecay> &&
              LearningRateSchedule<PiecewiseConstantDecay> && LearningRateSchedule<CosineDecay>);

} // namespace optimizers::schedules

namespace optimizers {

/// An optimizer whose learning rate the schedule gives at each step (its own learning_rate is not
/// read). `learning_rate` holds the rate of the next step, for callbacks and logs to read; setting it
/// is refused (tpudsl::Trainable::set_learning_rate throws, as Keras raises).
template <Optimizer Opt, LearningRateSchedule S>
struct Scheduled {
    Opt optimizer;
    S schedule;
    float learning_rate = static_cast<float>(schedule(0));

    static constexpr std::string_view name = Opt::name;
    static constexpr std::size_t slots = Opt::slots;
    /// Tells the model that the learning rate is the schedule's, not settable.
    static constexpr bool scheduled = true;

    struct step_constants {
        typename Opt::step_constants inner;
        std::uint64_t t;
    };
    [[nodiscard]] step_constants
    prepare(std::uint64_t t) const
    {
        Opt at = optimizer;
        at.learning_rate = static_cast<float>(schedule(t - 1));
        return {at.prepare(t), t};
    }
    void
    advance(const step_constants& c)
    {
        if constexpr (requires { optimizer.advance(c.inner); })
            optimizer.advance(c.inner);
        learning_rate = static_cast<float>(schedule(c.t));
    }
    void
    update(const step_constants& c, float* w, const float* g, float* const* s, std::size_t begin,
           std::size_t end) const noexcept
    {
        optimizer.update(c.inner, w, g, s, begin, end);
    }
    [[nodiscard]] float
    initial_slot_value(std::size_t slot) const noexcept
    {
        if constexpr (requires { optimizer.initial_slot_value(slot); })
            return optimizer.initial_slot_value(slot);
        else
            return 0.0f;
    }
};

/// `Scheduled{optimizer, schedule}`, for compilers without aggregate deduction.
template <class Opt, class S>
Scheduled(Opt, S) -> Scheduled<Opt, S>;

/// Refuses the wrapped optimizer's hyperparameters as compile would refuse them unwrapped, and the
/// schedule's (a `check` found for it).
template <class Opt, class S>
inline void
check(const Scheduled<Opt, S>& o)
{
    if constexpr (requires { check(o.optimizer); })
        check(o.optimizer);
    if constexpr (requires { check(o.schedule); })
        check(o.schedule);
}

} // namespace optimizers

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_SCHEDULES_HPP
