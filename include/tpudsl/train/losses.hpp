/// @file Defines Keras' losses and their gradients: SparseCategoricalCrossentropy,
/// CategoricalCrossentropy, BinaryCrossentropy, MeanSquaredError (keras-semantics §3.1).
///
/// `evaluate(loss, view, scale, grad)` returns the sum of the per-sample losses of a batch and
/// writes `scale * d(sum)/d(output)` into `grad` (or with respect to the logits, when the model ends
/// in Softmax and the loss takes the fused path: then `view.logit_grad` is set). Keras' reduction
/// divides by the global batch, which is what `scale` carries.
#ifndef TPUDSL_TRAIN_LOSSES_HPP
#define TPUDSL_TRAIN_LOSSES_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tpudsl {

namespace losses {

/// Keras' `backend.epsilon()`: probabilities are clipped to [eps, 1 - eps].
inline constexpr float epsilon = 1e-7f;

/// Integer class labels in [0, classes). With probabilities it clips at 1e-7 as Keras does; when
/// the model ends in Softmax it works on the logits (log-sum-exp), whatever `from_logits` says,
/// as modern tf.keras does. An output of (timesteps, classes) takes a label per timestep.
struct SparseCategoricalCrossentropy {
    bool from_logits = false;
    static constexpr std::string_view name = "sparse_categorical_crossentropy";
    static constexpr bool sparse_labels = true;
    /// A row's loss is over the output's last axis (the classes): an output of (T, classes) is T
    /// rows, each with its own label, and a sample's loss is their mean (Keras' reduction).
    static constexpr bool over_last_axis = true;
};

/// One-hot (or soft) float targets, one row per sample (per timestep of a (T, classes) output).
struct CategoricalCrossentropy {
    bool from_logits = false;
    static constexpr std::string_view name = "categorical_crossentropy";
    static constexpr bool sparse_labels = false;
    static constexpr bool over_last_axis = true;
};

/// Float targets in [0, 1], one per output; the mean over the last axis.
struct BinaryCrossentropy {
    bool from_logits = false;
    static constexpr std::string_view name = "binary_crossentropy";
    static constexpr bool sparse_labels = false;
    /// Its mean over every output of a sample already is Keras' mean over the last axis, then over
    /// the timesteps: the output is read whole.
    static constexpr bool over_last_axis = false;
};

/// Float targets; the mean over the last axis of the squared error.
struct MeanSquaredError {
    static constexpr std::string_view name = "mean_squared_error";
    static constexpr bool sparse_labels = false;
    static constexpr bool over_last_axis = false;   // as BinaryCrossentropy
};

} // namespace losses

/// What a loss sees of a batch: n rows of `width` outputs, the logits when the model keeps them
/// (it ends in Softmax), and the labels (one int32 per sample, or `width` floats per sample).
struct loss_view {
    std::size_t n = 0;
    std::size_t width = 0;
    const float* output = nullptr;
    const float* logits = nullptr;   // null unless the last layer is a softmax
    const std::int32_t* sparse_labels = nullptr;
    const float* dense_labels = nullptr;
    bool logit_grad = false;         // out: grad is with respect to the logits
};

namespace detail {

/// log(sum_j exp(z_j)), stably.
inline double
log_sum_exp(const float* z, std::size_t d) noexcept
{
    const float m = *std::max_element(z, z + d);
    double s = 0.0;
    for (std::size_t j = 0; j < d; ++j)
        s += std::exp(static_cast<double>(z[j]) - m);
    return m + std::log(s);
}

/// softmax(z) into out.
inline void
softmax_row(const float* z, std::size_t d, float* out) noexcept
{
    const double lse = log_sum_exp(z, d);
    for (std::size_t j = 0; j < d; ++j)
        out[j] = static_cast<float>(std::exp(z[j] - lse));
}

inline float
clip_probability(float p) noexcept
{
    return std::clamp(p, losses::epsilon, 1.0f - losses::epsilon);
}

/// Cross-entropy against targets t (sum of t is the weight of the row) on logits z:
/// l = sum_j t_j (lse(z) - z_j); dl/dz = p sum(t) - t with p = softmax(z).
inline double
logits_crossentropy_row(const float* z, const float* p, std::size_t d, const float* t, std::int32_t label,
                        float scale, float* grad) noexcept
{
    const double lse = log_sum_exp(z, d);
    double l = 0.0, tsum = 0.0;
    for (std::size_t j = 0; j < d; ++j) {
        const double tj = t ? t[j] : (static_cast<std::int32_t>(j) == label ? 1.0 : 0.0);
        l += tj * (lse - z[j]);
        tsum += tj;
    }
    for (std::size_t j = 0; j < d; ++j) {
        const double tj = t ? t[j] : (static_cast<std::int32_t>(j) == label ? 1.0 : 0.0);
        const double pj = p ? p[j] : std::exp(z[j] - lse);
        grad[j] = static_cast<float>(scale * (pj * tsum - tj));
    }
    return l;
}

} // namespace detail

/// Sum of the per-sample losses of the batch; `grad` (n, width) receives scale * d(sum)/d(...).
inline double
evaluate(const losses::SparseCategoricalCrossentropy& loss, loss_view& v, float scale, float* grad) noexcept
{
    double total = 0.0;
    const std::size_t d = v.width;
    v.logit_grad = v.logits != nullptr;
    for (std::size_t s = 0; s < v.n; ++s) {
        const std::int32_t y = v.sparse_labels[s];
        const float* out = v.output + s * d;
        float* g = grad + s * d;
        if (v.logits) {
            total += detail::logits_crossentropy_row(v.logits + s * d, out, d, nullptr, y, scale, g);
        } else if (loss.from_logits) {
            total += detail::logits_crossentropy_row(out, nullptr, d, nullptr, y, scale, g);
        } else {
            // Keras on probabilities: q = log(clip(p)), then the logits op on q:
            // l = -log(clip(p_y)) + log(sum_j clip(p_j)).
            double csum = 0.0;
            for (std::size_t j = 0; j < d; ++j)
                csum += detail::clip_probability(out[j]);
            const float cy = detail::clip_probability(out[y]);
            total += -std::log(static_cast<double>(cy)) + std::log(csum);
            for (std::size_t j = 0; j < d; ++j) {
                const bool inside = out[j] > losses::epsilon && out[j] < 1.0f - losses::epsilon;
                double gj = 1.0 / csum;
                if (static_cast<std::int32_t>(j) == y)
                    gj -= 1.0 / cy;
                g[j] = inside ? static_cast<float>(scale * gj) : 0.0f;
            }
        }
    }
    return total;
}

inline double
evaluate(const losses::CategoricalCrossentropy& loss, loss_view& v, float scale, float* grad) noexcept
{
    double total = 0.0;
    const std::size_t d = v.width;
    v.logit_grad = v.logits != nullptr;
    for (std::size_t s = 0; s < v.n; ++s) {
        const float* t = v.dense_labels + s * d;
        const float* out = v.output + s * d;
        float* g = grad + s * d;
        if (v.logits) {
            total += detail::logits_crossentropy_row(v.logits + s * d, out, d, t, 0, scale, g);
        } else if (loss.from_logits) {
            total += detail::logits_crossentropy_row(out, nullptr, d, t, 0, scale, g);
        } else {
            // Keras: p /= sum(p); clip; l = -sum t log p. Chain rule through the normalisation.
            double psum = 0.0;
            for (std::size_t j = 0; j < d; ++j)
                psum += out[j];
            double l = 0.0, gq_dot_q = 0.0;
            for (std::size_t j = 0; j < d; ++j) {
                const float q = static_cast<float>(out[j] / psum);
                const float c = detail::clip_probability(q);
                l -= t[j] * std::log(static_cast<double>(c));
                const bool inside = q > losses::epsilon && q < 1.0f - losses::epsilon;
                const double gq = inside ? -t[j] / static_cast<double>(c) : 0.0;
                g[j] = static_cast<float>(gq);
                gq_dot_q += gq * q;
            }
            for (std::size_t j = 0; j < d; ++j)
                g[j] = static_cast<float>(scale * (g[j] - gq_dot_q) / psum);
            total += l;
        }
    }
    return total;
}

inline double
evaluate(const losses::BinaryCrossentropy& loss, loss_view& v, float scale, float* grad) noexcept
{
    double total = 0.0;
    const std::size_t d = v.width;
    v.logit_grad = false;
    for (std::size_t i = 0; i < v.n * d; ++i) {
        const double t = v.dense_labels[i];
        const float o = v.output[i];
        if (loss.from_logits) {
            // max(z, 0) - z t + log(1 + exp(-|z|)); d/dz = sigmoid(z) - t
            total += (std::max(o, 0.0f) - o * t + std::log1p(std::exp(-std::abs(static_cast<double>(o))))) / d;
            grad[i] = static_cast<float>(scale * (1.0 / (1.0 + std::exp(-static_cast<double>(o))) - t) / d);
        } else {
            const double p = detail::clip_probability(o);
            total += -(t * std::log(p + losses::epsilon) + (1.0 - t) * std::log(1.0 - p + losses::epsilon)) / d;
            const bool inside = o > losses::epsilon && o < 1.0f - losses::epsilon;
            grad[i] = inside ? static_cast<float>(
                                   scale * -(t / (p + losses::epsilon) - (1.0 - t) / (1.0 - p + losses::epsilon)) / d)
                             : 0.0f;
        }
    }
    return total;
}

inline double
evaluate(const losses::MeanSquaredError&, loss_view& v, float scale, float* grad) noexcept
{
    double total = 0.0;
    const std::size_t d = v.width;
    v.logit_grad = false;
    for (std::size_t i = 0; i < v.n * d; ++i) {
        const double e = static_cast<double>(v.output[i]) - v.dense_labels[i];
        total += e * e / d;
        grad[i] = static_cast<float>(scale * 2.0 * e / d);
    }
    return total;
}

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_LOSSES_HPP
