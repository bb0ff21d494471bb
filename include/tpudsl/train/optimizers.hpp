/// @file Defines Keras' optimizers with their exact update rules and defaults (keras-semantics §4):
/// SGD (momentum, Nesterov), Adam ("epsilon hat"), Nadam (tf.keras >= 2.11 schedule, or the legacy
/// 0.004 one), RMSprop (epsilon inside the square root; centered).
///
/// An optimizer updates a shard [begin, end) of the flat parameter buffer from the summed gradient,
/// with its slots (m, v, ...) in buffers of the same layout:
///   auto c = opt.prepare(t);                       // per-step scalars, t = iterations + 1
///   opt.update(c, w, g, slots, begin, end);        // element-wise, vectorisable, no allocation
/// `advance(c)` then commits per-step state (Nadam's momentum product), once per step.
#ifndef TPUDSL_TRAIN_OPTIMIZERS_HPP
#define TPUDSL_TRAIN_OPTIMIZERS_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tpudsl::optimizers {

/// `SGD(learning_rate=0.01, momentum=0.0, nesterov=False)`: v = mu v - lr g; w += v
/// (Nesterov: w += mu v - lr g, with the updated v).
struct SGD {
    float learning_rate = 0.01f;
    float momentum = 0.0f;
    bool nesterov = false;
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
        float* v = s[0];
        if (c.mu == 0.0f) {
            for (std::size_t i = begin; i < end; ++i)
                w[i] -= c.lr * g[i];
        } else if (nesterov) {
            for (std::size_t i = begin; i < end; ++i) {
                v[i] = c.mu * v[i] - c.lr * g[i];
                w[i] += c.mu * v[i] - c.lr * g[i];
            }
        } else {
            for (std::size_t i = begin; i < end; ++i) {
                v[i] = c.mu * v[i] - c.lr * g[i];
                w[i] += v[i];
            }
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
        float* m = s[0];
        float* v = s[1];
        const float a1 = 1.0f - beta_1, a2 = 1.0f - beta_2;
        for (std::size_t i = begin; i < end; ++i) {
            m[i] += (g[i] - m[i]) * a1;
            v[i] += (g[i] * g[i] - v[i]) * a2;
            w[i] -= c.alpha * m[i] / (std::sqrt(v[i]) + epsilon);
        }
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
        float* m = s[0];
        float* v = s[1];
        const float a1 = 1.0f - beta_1, a2 = 1.0f - beta_2;
        for (std::size_t i = begin; i < end; ++i) {
            m[i] += (g[i] - m[i]) * a1;
            v[i] += (g[i] * g[i] - v[i]) * a2;
            const float m_hat = c.m_coef * m[i] + c.g_coef * g[i];
            w[i] -= c.lr * m_hat / (std::sqrt(v[i] * c.v_correction) + epsilon);
        }
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
        float* v = s[0];
        float* mom = s[1];
        float* gbar = s[2];
        for (std::size_t i = begin; i < end; ++i) {
            v[i] = rho * v[i] + (1.0f - rho) * g[i] * g[i];
            float denom = v[i];
            if (centered) {
                gbar[i] = rho * gbar[i] + (1.0f - rho) * g[i];
                denom -= gbar[i] * gbar[i];
            }
            const float d = c.lr * g[i] / std::sqrt(denom + epsilon);
            if (momentum > 0.0f) {
                mom[i] = momentum * mom[i] + d;
                w[i] -= mom[i];
            } else {
                w[i] -= d;
            }
        }
    }
};

} // namespace tpudsl::optimizers

#endif // !TPUDSL_TRAIN_OPTIMIZERS_HPP
