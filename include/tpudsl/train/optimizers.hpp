/// @file Defines the Optimizer concept (what compile asks of an optimizer, built-in or a user's) and
/// Keras' optimizers with their exact update rules and defaults (keras-semantics §4): SGD (momentum,
/// Nesterov), Adam ("epsilon hat"), AdamW, Nadam (tf.keras >= 2.11 schedule, or the legacy 0.004
/// one), RMSprop (epsilon inside the square root; centered), Adagrad, Adamax, Adadelta and Lion.
///
/// An optimizer updates a shard [begin, end) of the flat parameter buffer from the summed gradient,
/// with its slots (m, v, ...) in buffers of the same layout:
///   auto c = opt.prepare(t);                       // per-step scalars, t = iterations + 1
///   opt.update(c, w, g, slots, begin, end);        // element-wise, in vectors, no allocation
/// `advance(c)` then commits per-step state (Nadam's momentum product), once per step.
/// Every element goes through the same vector operations (the last vector of a shard with masked
/// loads and stores), so the bits do not depend on where the shards begin and end.
///
/// `check(opt)` refuses hyperparameters outside their domain (std::invalid_argument naming the
/// optimizer, the field, its value and the domain); compile calls it, and the model's learning-rate
/// setter calls `check_learning_rate`.
#ifndef TPUDSL_TRAIN_OPTIMIZERS_HPP
#define TPUDSL_TRAIN_OPTIMIZERS_HPP

#include <tpudsl/detail/simd.hpp>
#include <tpudsl/detail/text.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace tpudsl {

/// The most slots (buffers the size of the weights, such as Adam's m and v) an optimizer may keep.
inline constexpr std::size_t max_optimizer_slots = 4;

namespace optimizers {
/// What every Keras optimizer takes beside its own hyperparameters (Keras' `clipnorm`, `clipvalue`,
/// `global_clipnorm`, `weight_decay`, `use_ema`, `ema_momentum`, `ema_overwrite_frequency`), applied
/// by the model around the optimizer's update in Keras' order: the summed gradient clipped (at most one
/// of the three clips), the decoupled weight decay `w -= w wd lr`, the update, then the moving average.
/// 0 is off, as Keras' None.
struct optimizer_options {
    /// Each weight's gradient scaled to an L2 norm of at most clipnorm.
    float clipnorm = 0.0f;
    /// Each element of the gradient clipped to [-clipvalue, clipvalue].
    float clipvalue = 0.0f;
    /// The whole gradient scaled to a global L2 norm of at most global_clipnorm.
    float global_clipnorm = 0.0f;
    float weight_decay = 0.0f;
    /// Keeps an exponential moving average of the weights (`a = m a + (1 - m) w` after each step, `a = w`
    /// after the first), copied into the weights every ema_overwrite_frequency steps and at the end of
    /// fit, as Keras' use_ema.
    bool use_ema = false;
    float ema_momentum = 0.99f;
    std::size_t ema_overwrite_frequency = 0;
};
} // namespace optimizers

/// What compile asks of an optimizer: a name, its slots, a learning rate, the per-step constants
/// (`prepare(t)`, t = iterations + 1) and the element-wise update of a shard [begin, end) of the
/// weights from the summed gradient. Optional: `advance(constants)` (commits per-step state once a
/// step, as Nadam's momentum product), `initial_slot_value(slot)` (0 unless declared, as Adagrad's
/// initial accumulator), and a `check(optimizer)` found by ADL that refuses hyperparameters.
template <class O>
concept Optimizer = std::copy_constructible<O> &&
                    requires(O& o, const O& c, std::uint64_t t, float* w, const float* g, float* const* slots,
                             std::size_t i) {
                        { O::name } -> std::convertible_to<std::string_view>;
                        { O::slots } -> std::convertible_to<std::size_t>;
                        requires O::slots <= max_optimizer_slots;
                        requires std::same_as<decltype(o.learning_rate), float>;
                        c.prepare(t);
                        c.update(c.prepare(t), w, g, slots, i, i);
                    };

} // namespace tpudsl

namespace tpudsl::optimizers {

namespace detail {
using tpudsl::detail::simd::vfloat;

/// A view of w, g or a slot from element i on, `lanes` of them (the last vector of a shard: fewer).
struct lanes_at {
    std::size_t i, lanes;
    [[nodiscard]] vfloat
    operator()(const float* p) const noexcept
    {
        return lanes == vfloat::size ? vfloat::load(p + i) : vfloat::load_n(p + i, lanes);
    }
    void
    store(vfloat v, float* p) const noexcept
    {
        if (lanes == vfloat::size)
            v.store(p + i);
        else
            v.store_n(p + i, lanes);
    }
};

/// f(at) for the vectors of [begin, end), at a lanes_at.
template <class F>
inline void
for_each_vector(std::size_t begin, std::size_t end, F&& f) noexcept
{
    for (std::size_t i = begin; i < end; i += vfloat::size)
        f(lanes_at{i, std::min(vfloat::size, end - i)});
}

[[nodiscard]] inline vfloat
splat(float x) noexcept
{
    return vfloat::broadcast(x);
}

/// Adam's and Nadam's moments at `at`: m += (g - m) a1, v += (g^2 - v) a2, stored; returns {g, m, v}.
struct moments {
    vfloat g, m, v;
};
[[nodiscard]] inline moments
update_moments(lanes_at at, const float* g, float* m, float* v, vfloat a1, vfloat a2) noexcept
{
    const vfloat gi = at(g), m0 = at(m), v0 = at(v);
    const moments r{gi, m0 + (gi - m0) * a1, v0 + (gi * gi - v0) * a2};
    at.store(r.m, m);
    at.store(r.v, v);
    return r;
}
} // namespace detail

/// `SGD(learning_rate=0.01, momentum=0.0, nesterov=False)`: v = mu v - lr g; w += v
/// (Nesterov: w += mu v - lr g, with the updated v).
struct SGD {
    float learning_rate = 0.01f;
    float momentum = 0.0f;
    bool nesterov = false;
    optimizer_options options{};   // clipping, weight decay, moving average
    static constexpr std::string_view name = "SGD";
    static constexpr std::size_t slots = 1;

    struct step_constants {
        float lr, mu;
    };
    [[nodiscard]] step_constants
    prepare(std::uint64_t) const noexcept
    {
        return {learning_rate, momentum};
    }
    void
    advance(const step_constants&) noexcept
    {
    }
    void
    update(const step_constants& c, float* w, const float* g, float* const* s, std::size_t begin,
           std::size_t end) const noexcept
    {
        using detail::splat;
        float* v = s[0];
        const auto lr = splat(c.lr), mu = splat(c.mu);
        if (c.mu == 0.0f) {
            detail::for_each_vector(begin, end, [&](detail::lanes_at at) { at.store(at(w) - lr * at(g), w); });
        } else if (nesterov) {
            detail::for_each_vector(begin, end, [&](detail::lanes_at at) {
                const auto vi = mu * at(v) - lr * at(g);
                at.store(vi, v);
                at.store(at(w) + (mu * vi - lr * at(g)), w);
            });
        } else {
            detail::for_each_vector(begin, end, [&](detail::lanes_at at) {
                const auto vi = mu * at(v) - lr * at(g);
                at.store(vi, v);
                at.store(at(w) + vi, w);
            });
        }
    }
};

/// `Adam(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7)`:
/// m += (g - m)(1 - b1); v += (g^2 - v)(1 - b2); w -= lr sqrt(1 - b2^t)/(1 - b1^t) m / (sqrt(v) + eps).
struct Adam {
    float learning_rate = 1e-3f;
    float beta_1 = 0.9f;
    float beta_2 = 0.999f;
    float epsilon = 1e-7f;
    optimizer_options options{};   // clipping, weight decay, moving average
    static constexpr std::string_view name = "Adam";
    static constexpr std::size_t slots = 2;

    struct step_constants {
        float alpha;
    };
    [[nodiscard]] step_constants
    prepare(std::uint64_t t) const noexcept
    {
        const double td = static_cast<double>(t);
        return {static_cast<float>(learning_rate * std::sqrt(1.0 - std::pow(double{beta_2}, td)) /
                                   (1.0 - std::pow(double{beta_1}, td)))};
    }
    void
    advance(const step_constants&) noexcept
    {
    }
    void
    update(const step_constants& c, float* w, const float* g, float* const* s, std::size_t begin,
           std::size_t end) const noexcept
    {
        using detail::splat;
        float* m = s[0];
        float* v = s[1];
        const auto a1 = splat(1.0f - beta_1), a2 = splat(1.0f - beta_2), alpha = splat(c.alpha), eps = splat(epsilon);
        detail::for_each_vector(begin, end, [&](detail::lanes_at at) {
            const auto mv = detail::update_moments(at, g, m, v, a1, a2);
            at.store(at(w) - alpha * mv.m / (sqrt(mv.v) + eps), w);
        });
    }
};

/// Nadam's momentum schedule: tf.keras >= 2.11 and Keras 3 (mu_t = b1 (1 - 0.5 * 0.96^t)), or the
/// legacy tf.keras <= 2.10 one (0.96^(0.004 t)).
enum class nadam_schedule { keras, legacy };

/// `Nadam(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7)`:
/// m_hat = mu_{t+1} m / (1 - P_t mu_{t+1}) + (1 - mu_t) g / (1 - P_t), P_t = prod_{i<=t} mu_i;
/// w -= lr m_hat / (sqrt(v / (1 - b2^t)) + eps).
struct Nadam {
    float learning_rate = 1e-3f;
    float beta_1 = 0.9f;
    float beta_2 = 0.999f;
    float epsilon = 1e-7f;
    nadam_schedule schedule = nadam_schedule::keras;
    /// The product of the momentum schedule so far (Keras' `_u_product`, a state of the optimizer).
    double momentum_product = 1.0;
    optimizer_options options{};   // clipping, weight decay, moving average
    static constexpr std::string_view name = "Nadam";
    static constexpr std::size_t slots = 2;

    [[nodiscard]] double
    mu(std::uint64_t t) const noexcept
    {
        const double e = schedule == nadam_schedule::keras ? static_cast<double>(t) : 0.004 * static_cast<double>(t);
        return beta_1 * (1.0 - 0.5 * std::pow(0.96, e));
    }

    struct step_constants {
        float m_coef, g_coef, v_correction, lr;
        double product_t;
    };
    [[nodiscard]] step_constants
    prepare(std::uint64_t t) const noexcept
    {
        const double mu_t = mu(t), mu_next = mu(t + 1);
        const double product_t = momentum_product * mu_t;
        const double product_next = product_t * mu_next;
        return {static_cast<float>(mu_next / (1.0 - product_next)), static_cast<float>((1.0 - mu_t) / (1.0 - product_t)),
                static_cast<float>(1.0 / (1.0 - std::pow(double{beta_2}, static_cast<double>(t)))), learning_rate,
                product_t};
    }
    void
    advance(const step_constants& c) noexcept
    {
        momentum_product = c.product_t;
    }
    void
    update(const step_constants& c, float* w, const float* g, float* const* s, std::size_t begin,
           std::size_t end) const noexcept
    {
        using detail::splat;
        float* m = s[0];
        float* v = s[1];
        const auto a1 = splat(1.0f - beta_1), a2 = splat(1.0f - beta_2), eps = splat(epsilon);
        const auto m_coef = splat(c.m_coef), g_coef = splat(c.g_coef), v_corr = splat(c.v_correction), lr = splat(c.lr);
        detail::for_each_vector(begin, end, [&](detail::lanes_at at) {
            const auto mv = detail::update_moments(at, g, m, v, a1, a2);
            const auto m_hat = m_coef * mv.m + g_coef * mv.g;
            at.store(at(w) - lr * m_hat / (sqrt(mv.v * v_corr) + eps), w);
        });
    }
};

/// `RMSprop(learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False)`:
/// v = rho v + (1 - rho) g^2; d = lr g / sqrt(v + eps) (centered: sqrt(v - gbar^2 + eps));
/// momentum: mom = momentum mom + d; w -= mom; otherwise w -= d.
struct RMSprop {
    float learning_rate = 1e-3f;
    float rho = 0.9f;
    float momentum = 0.0f;
    float epsilon = 1e-7f;
    bool centered = false;
    optimizer_options options{};   // clipping, weight decay, moving average
    static constexpr std::string_view name = "RMSprop";
    static constexpr std::size_t slots = 3;   // v, momentum, gbar

    struct step_constants {
        float lr;
    };
    [[nodiscard]] step_constants
    prepare(std::uint64_t) const noexcept
    {
        return {learning_rate};
    }
    void
    advance(const step_constants&) noexcept
    {
    }
    void
    update(const step_constants& c, float* w, const float* g, float* const* s, std::size_t begin,
           std::size_t end) const noexcept
    {
        using detail::splat;
        float* v = s[0];
        float* mom = s[1];
        float* gbar = s[2];
        const auto r = splat(rho), r1 = splat(1.0f - rho), eps = splat(epsilon), lr = splat(c.lr), mu = splat(momentum);
        detail::for_each_vector(begin, end, [&](detail::lanes_at at) {
            const auto gi = at(g);
            const auto vi = r * at(v) + r1 * gi * gi;
            at.store(vi, v);
            auto denom = vi;
            if (centered) {
                const auto gb = r * at(gbar) + r1 * gi;
                at.store(gb, gbar);
                denom = denom - gb * gb;
            }
            const auto d = lr * gi / sqrt(denom + eps);
            if (momentum > 0.0f) {
                const auto mi = mu * at(mom) + d;
                at.store(mi, mom);
                at.store(at(w) - mi, w);
            } else {
                at.store(at(w) - d, w);
            }
        });
    }
};

/// `AdamW(learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7)`: Adam
/// after Keras' decoupled weight decay, w -= w wd lr.
struct AdamW {
    float learning_rate = 1e-3f;
    float weight_decay = 0.004f;
    float beta_1 = 0.9f;
    float beta_2 = 0.999f;
    float epsilon = 1e-7f;
    optimizer_options options{};   // clipping, weight decay, moving average
    static constexpr std::string_view name = "AdamW";
    static constexpr std::size_t slots = 2;

    struct step_constants {
        Adam::step_constants adam;
        float lr;
    };
    [[nodiscard]] step_constants
    prepare(std::uint64_t t) const noexcept
    {
        return {adam().prepare(t), learning_rate};
    }
    void
    update(const step_constants& c, float* w, const float* g, float* const* s, std::size_t begin,
           std::size_t end) const noexcept
    {
        using detail::splat;
        const auto wd = splat(weight_decay), lr = splat(c.lr);
        detail::for_each_vector(begin, end, [&](detail::lanes_at at) {
            const auto wi = at(w);
            at.store(wi - wi * wd * lr, w);
        });
        adam().update(c.adam, w, g, s, begin, end);
    }
    /// The Adam this AdamW updates with after its decay.
    [[nodiscard]] Adam
    adam() const noexcept
    {
        return {.learning_rate = learning_rate, .beta_1 = beta_1, .beta_2 = beta_2, .epsilon = epsilon};
    }
};

/// `Adagrad(learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7)`:
/// a += g^2; w -= lr g / sqrt(a + eps).
struct Adagrad {
    float learning_rate = 1e-3f;
    float initial_accumulator_value = 0.1f;
    float epsilon = 1e-7f;
    optimizer_options options{};   // clipping, weight decay, moving average
    static constexpr std::string_view name = "Adagrad";
    static constexpr std::size_t slots = 1;

    [[nodiscard]] float initial_slot_value(std::size_t) const noexcept { return initial_accumulator_value; }
    struct step_constants {
        float lr;
    };
    [[nodiscard]] step_constants prepare(std::uint64_t) const noexcept { return {learning_rate}; }
    void
    update(const step_constants& c, float* w, const float* g, float* const* s, std::size_t begin,
           std::size_t end) const noexcept
    {
        using detail::splat;
        float* a = s[0];
        const auto lr = splat(c.lr), eps = splat(epsilon);
        detail::for_each_vector(begin, end, [&](detail::lanes_at at) {
            const auto gi = at(g);
            const auto ai = at(a) + gi * gi;
            at.store(ai, a);
            at.store(at(w) - lr * gi / sqrt(ai + eps), w);
        });
    }
};

/// `Adamax(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7)`:
/// m += (g - m)(1 - b1); u = max(b2 u, |g|); w -= lr m / ((1 - b1^t)(u + eps)).
struct Adamax {
    float learning_rate = 1e-3f;
    float beta_1 = 0.9f;
    float beta_2 = 0.999f;
    float epsilon = 1e-7f;
    optimizer_options options{};   // clipping, weight decay, moving average
    static constexpr std::string_view name = "Adamax";
    static constexpr std::size_t slots = 2;

    struct step_constants {
        float lr, correction;
    };
    [[nodiscard]] step_constants
    prepare(std::uint64_t t) const noexcept
    {
        return {learning_rate, 1.0f - std::pow(beta_1, static_cast<float>(t))};
    }
    void
    update(const step_constants& c, float* w, const float* g, float* const* s, std::size_t begin,
           std::size_t end) const noexcept
    {
        using detail::splat;
        float* m = s[0];
        float* u = s[1];
        const auto a1 = splat(1.0f - beta_1), b2 = splat(beta_2), lr = splat(c.lr), corr = splat(c.correction),
                   eps = splat(epsilon), zero = splat(0.0f);
        detail::for_each_vector(begin, end, [&](detail::lanes_at at) {
            const auto gi = at(g), m0 = at(m);
            const auto mi = m0 + (gi - m0) * a1;
            const auto ui = max(b2 * at(u), max(gi, zero - gi));
            at.store(mi, m);
            at.store(ui, u);
            at.store(at(w) - lr * mi / (corr * (ui + eps)), w);
        });
    }
};

/// `Adadelta(learning_rate=0.001, rho=0.95, epsilon=1e-7)`: a = rho a + (1 - rho) g^2;
/// d = -sqrt(ad + eps) g / sqrt(a + eps); ad = rho ad + (1 - rho) d^2; w += lr d.
struct Adadelta {
    float learning_rate = 1e-3f;
    float rho = 0.95f;
    float epsilon = 1e-7f;
    optimizer_options options{};   // clipping, weight decay, moving average
    static constexpr std::string_view name = "Adadelta";
    static constexpr std::size_t slots = 2;   // accumulated gradients, accumulated deltas

    struct step_constants {
        float lr;
    };
    [[nodiscard]] step_constants prepare(std::uint64_t) const noexcept { return {learning_rate}; }
    void
    update(const step_constants& c, float* w, const float* g, float* const* s, std::size_t begin,
           std::size_t end) const noexcept
    {
        using detail::splat;
        float* ag = s[0];
        float* ad = s[1];
        const auto r = splat(rho), r1 = splat(1.0f - rho), eps = splat(epsilon), lr = splat(c.lr);
        detail::for_each_vector(begin, end, [&](detail::lanes_at at) {
            const auto gi = at(g), adi = at(ad);
            const auto agi = r * at(ag) + r1 * (gi * gi);
            at.store(agi, ag);
            const auto d = sqrt(adi + eps) * gi / sqrt(agi + eps);   // Keras' delta is -d
            at.store(r * adi + r1 * (d * d), ad);
            at.store(at(w) - lr * d, w);
        });
    }
};

/// `Lion(learning_rate=0.001, beta_1=0.9, beta_2=0.99)`: w -= lr sign(b1 m + (1 - b1) g);
/// m = b2 m + (1 - b2) g.
struct Lion {
    float learning_rate = 1e-3f;
    float beta_1 = 0.9f;
    float beta_2 = 0.99f;
    optimizer_options options{};   // clipping, weight decay, moving average
    static constexpr std::string_view name = "Lion";
    static constexpr std::size_t slots = 1;

    struct step_constants {
        float lr;
    };
    [[nodiscard]] step_constants prepare(std::uint64_t) const noexcept { return {learning_rate}; }
    void
    update(const step_constants& c, float* w, const float* g, float* const* s, std::size_t begin,
           std::size_t end) const noexcept
    {
        using detail::splat;
        float* m = s[0];
        const auto b1 = splat(beta_1), c1 = splat(1.0f - beta_1), b2 = splat(beta_2), c2 = splat(1.0f - beta_2),
                   lr = splat(c.lr), zero = splat(0.0f), one = splat(1.0f);
        detail::for_each_vector(begin, end, [&](detail::lanes_at at) {
            const auto gi = at(g), mi = at(m);
            const auto dir = mi * b1 + gi * c1;
            const auto sign = where_greater(dir, zero, one) - where_greater(zero, dir, one);
            at.store(at(w) - lr * sign, w);
            at.store(mi * b2 + gi * c2, m);
        });
    }
};

/// The options an optimizer takes (its `options`, or those of the optimizer it wraps, as Scheduled's);
/// null for one that takes none.
template <class O>
[[nodiscard]] const optimizer_options*
options_of(const O& o) noexcept
{
    if constexpr (requires { { o.options } -> std::convertible_to<const optimizer_options&>; })
        return &o.options;
    else if constexpr (requires { o.optimizer; })
        return options_of(o.optimizer);
    else
        return nullptr;
}

/// @name Domains of the hyperparameters
/// Keras checks only SGD's momentum (in [0, 1]); tpudsl also refuses the values that make an update
/// divide by zero or turn the weights into NaN: a negative or non-finite learning rate, betas of 1
/// (Adam's bias correction 1 - beta_1^t is 0), a zero epsilon (0 / 0 where a gradient and its
/// moments are 0), and NaN anywhere (every comparison with NaN is false, so no rule below lets it
/// through).
/// @{
namespace detail {
/// The shortest text that reads back as `v` ("0.9" for 0.9f, "nan", "inf", "1e+39").
template <class T>
[[nodiscard]] inline std::string
shortest(T v)
{
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

[[noreturn]] inline void
out_of_domain(std::string_view where, std::string_view field, const std::string& value, std::string_view domain,
              std::string_view hint)
{
    throw std::invalid_argument(tpudsl::detail::concat({where, ": ", field, " must be ", domain, ", got ", value,
                                                        " (", hint, ")"}));
}

/// A learning rate: finite and >= 0, and finite once held as a float.
template <class T>
inline void
check_learning_rate(T lr, std::string_view where, std::string_view hint)
{
    if (!(lr >= T{0}) || !std::isfinite(static_cast<float>(lr)))
        out_of_domain(where, "learning_rate", shortest(lr), "a finite float >= 0", hint);
}

/// 0 <= v < 1.
inline void
check_unit_open(float v, std::string_view where, std::string_view field, std::string_view keras_default)
{
    if (!(v >= 0.0f && v < 1.0f))
        out_of_domain(where, field, shortest(v), "in [0, 1)", tpudsl::detail::concat({"Keras' default is ",
                                                                                      keras_default}));
}

/// 0 <= v <= 1.
inline void
check_unit_closed(float v, std::string_view where, std::string_view field, std::string_view keras_default)
{
    if (!(v >= 0.0f && v <= 1.0f))
        out_of_domain(where, field, shortest(v), "in [0, 1]", tpudsl::detail::concat({"Keras' default is ",
                                                                                      keras_default}));
}

/// 0 < v < infinity.
inline void
check_epsilon(float v, std::string_view where)
{
    if (!(v > 0.0f && std::isfinite(v)))
        out_of_domain(where, "epsilon", shortest(v), "finite and > 0", "Keras' default is 1e-07");
}

/// 0 <= v < infinity.
inline void
check_non_negative(float v, std::string_view where, std::string_view field, std::string_view hint)
{
    if (!(v >= 0.0f && std::isfinite(v)))
        out_of_domain(where, field, shortest(v), "a finite float >= 0", hint);
}

/// Adam's family (Adam, AdamW, Nadam, Adamax): learning_rate finite and >= 0; beta_1 and beta_2 in
/// [0, 1); epsilon finite and > 0; Keras' defaults 0.001, 0.9, 0.999.
template <class O>
inline void
check_adam_domains(const O& o, std::string_view where)
{
    check_learning_rate(o.learning_rate, where, "Keras' default is 0.001");
    check_unit_open(o.beta_1, where, "beta_1", "0.9");
    check_unit_open(o.beta_2, where, "beta_2", "0.999");
    check_epsilon(o.epsilon, where);
}
} // namespace detail

/// Refuses a learning rate that is NaN, negative, or beyond a float's range (the optimizers hold it
/// as a float): std::invalid_argument naming `where` and the value.
inline void
check_learning_rate(double lr, std::string_view where)
{
    detail::check_learning_rate(lr, where, "0 leaves the weights unchanged");
}

/// The options every optimizer takes: finite and >= 0, at most one of the three clips (Keras' rule),
/// ema_momentum in [0, 1].
inline void
check(const optimizer_options& o, std::string_view where)
{
    const std::pair<std::string_view, float> fields[] = {
        {"options.clipnorm", o.clipnorm}, {"options.clipvalue", o.clipvalue},
        {"options.global_clipnorm", o.global_clipnorm}, {"options.weight_decay", o.weight_decay}};
    for (const auto& [field, v] : fields)
        detail::check_non_negative(v, where, field, "0 is off");
    if ((o.clipnorm > 0.0f) + (o.clipvalue > 0.0f) + (o.global_clipnorm > 0.0f) > 1)
        throw std::invalid_argument(tpudsl::detail::concat(
            {where, ": only one of options.clipnorm, options.clipvalue and options.global_clipnorm can be set "
                    "(Keras refuses more too)"}));
    detail::check_unit_closed(o.ema_momentum, where, "options.ema_momentum", "0.99");
}

/// SGD: learning_rate finite and >= 0; momentum in [0, 1] (Keras' rule).
inline void
check(const SGD& o)
{
    constexpr std::string_view where = "tpudsl::optimizers::SGD";
    detail::check_learning_rate(o.learning_rate, where, "Keras' default is 0.01");
    detail::check_unit_closed(o.momentum, where, "momentum", "0");
}

/// Adam: learning_rate finite and >= 0; beta_1 and beta_2 in [0, 1); epsilon finite and > 0.
inline void
check(const Adam& o)
{
    detail::check_adam_domains(o, "tpudsl::optimizers::Adam");
}

/// Nadam: as Adam; its momentum product (a state, 1 for a fresh optimizer) in [0, 1].
inline void
check(const Nadam& o)
{
    constexpr std::string_view where = "tpudsl::optimizers::Nadam";
    detail::check_adam_domains(o, where);
    if (!(o.momentum_product >= 0.0 && o.momentum_product <= 1.0))
        detail::out_of_domain(where, "momentum_product", detail::shortest(o.momentum_product), "in [0, 1]",
                              "1 for a fresh optimizer");
}

/// RMSprop: learning_rate finite and >= 0; rho in [0, 1); momentum in [0, 1] (SGD's rule);
/// epsilon finite and > 0.
inline void
check(const RMSprop& o)
{
    constexpr std::string_view where = "tpudsl::optimizers::RMSprop";
    detail::check_learning_rate(o.learning_rate, where, "Keras' default is 0.001");
    detail::check_unit_open(o.rho, where, "rho", "0.9");
    detail::check_unit_closed(o.momentum, where, "momentum", "0");
    detail::check_epsilon(o.epsilon, where);
}
/// AdamW: Adam's domains; weight_decay finite and >= 0.
inline void
check(const AdamW& o)
{
    constexpr std::string_view where = "tpudsl::optimizers::AdamW";
    detail::check_adam_domains(o, where);
    detail::check_non_negative(o.weight_decay, where, "weight_decay", "Keras' default is 0.004");
}

/// Adagrad: learning_rate finite and >= 0; initial_accumulator_value finite and >= 0; epsilon > 0.
inline void
check(const Adagrad& o)
{
    constexpr std::string_view where = "tpudsl::optimizers::Adagrad";
    detail::check_learning_rate(o.learning_rate, where, "Keras' default is 0.001");
    detail::check_non_negative(o.initial_accumulator_value, where, "initial_accumulator_value", "Keras' default is 0.1");
    detail::check_epsilon(o.epsilon, where);
}

/// Adamax: learning_rate finite and >= 0; beta_1 and beta_2 in [0, 1); epsilon finite and > 0.
inline void
check(const Adamax& o)
{
    detail::check_adam_domains(o, "tpudsl::optimizers::Adamax");
}

/// Adadelta: learning_rate finite and >= 0; rho in [0, 1); epsilon finite and > 0.
inline void
check(const Adadelta& o)
{
    constexpr std::string_view where = "tpudsl::optimizers::Adadelta";
    detail::check_learning_rate(o.learning_rate, where, "Keras' default is 0.001");
    detail::check_unit_open(o.rho, where, "rho", "0.95");
    detail::check_epsilon(o.epsilon, where);
}

/// Lion: learning_rate finite and >= 0; beta_1 and beta_2 in [0, 1] (Keras refuses beta_1 outside it).
inline void
check(const Lion& o)
{
    constexpr std::string_view where = "tpudsl::optimizers::Lion";
    detail::check_learning_rate(o.learning_rate, where, "Keras' default is 0.001");
    detail::check_unit_closed(o.beta_1, where, "beta_1", "0.9");
    detail::check_unit_closed(o.beta_2, where, "beta_2", "0.99");
}
/// @}

} // namespace tpudsl::optimizers

namespace tpudsl {
static_assert(Optimizer<optimizers::SGD> && Optimizer<optimizers::Adam> && Optimizer<optimizers::AdamW> &&
              Optimizer<optimizers::Nadam> && Optimizer<optimizers::RMSprop> && Optimizer<optimizers::Adagrad> &&
              Optimizer<optimizers::Adamax> && Optimizer<optimizers::Adadelta> && Optimizer<optimizers::Lion>);
} // namespace tpudsl

#endif // !TPUDSL_TRAIN_OPTIMIZERS_HPP
