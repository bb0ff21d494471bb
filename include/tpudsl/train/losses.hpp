/// @file Defines the Loss concept (what compile asks of a loss, built-in or a user's) and Keras'
/// losses with their gradients (keras-semantics §3.1): the cross-entropies, the regression losses,
/// KLDivergence, CosineSimilarity and Hinge.
///
/// A loss scores one row at a time: `loss(row, scale, grad)` returns the row's loss and writes
/// `scale * d(loss)/d(output)` into `grad` (with respect to the logits when the row carries them).
/// `evaluate(loss, view, scale, grad)` runs it over a batch, weighting each row by its sample's
/// weight, and returns the sum; Keras' reduction divides by the global batch, which is what `scale`
/// carries.
#ifndef TPUDSL_TRAIN_LOSSES_HPP
#define TPUDSL_TRAIN_LOSSES_HPP

#include <tpudsl/train/loss_fit.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace tpudsl {

/// One row a loss scores: a sample's output, or one timestep's when the loss is over the last axis
/// and the output is (timesteps, classes).
struct loss_row {
    const float* output = nullptr;   // `width` values
    /// The pre-softmax values when the model ends in Softmax and the loss declares `takes_logits`
    /// (then the gradient is taken with respect to them); null otherwise.
    const float* logits = nullptr;
    std::int32_t label = 0;           // the class id, for a loss of `sparse_labels`
    const float* target = nullptr;   // `width` targets otherwise
    std::size_t width = 0;
};

/// What compile asks of a loss: a name, the kind of labels it reads, and the row function.
/// Optional: `static constexpr bool over_last_axis` (true unless declared: an output of
/// (timesteps, classes) is scored a row per timestep and a sample's loss is their mean; false: the
/// sample's whole output is one row) and `static constexpr bool takes_logits` (false unless
/// declared: true receives the logits of a model ending in Softmax, Keras' shortcut for the
/// cross-entropies); for a loss of sparse labels, a member `std::optional<std::int32_t> ignore_class`
/// (Keras' ignore_class: a row of that label is never scored, its gradient is zero, and the batch's
/// loss is the mean over the rows that are not ignored).
template <class L>
concept Loss = std::copy_constructible<L> && requires(const L& loss, const loss_row& row, float scale, float* grad) {
    { L::name } -> std::convertible_to<std::string_view>;
    { L::sparse_labels } -> std::convertible_to<bool>;
    { loss(row, scale, grad) } -> std::convertible_to<double>;
};

namespace detail {
template <class L>
inline constexpr bool loss_over_last_axis = [] {
    if constexpr (requires { L::over_last_axis; })
        return static_cast<bool>(L::over_last_axis);
    else
        return true;
}();
template <class L>
inline constexpr bool loss_takes_logits = [] {
    if constexpr (requires { L::takes_logits; })
        return static_cast<bool>(L::takes_logits);
    else
        return false;
}();
} // namespace detail

/// The label whose rows a loss does not score (its `ignore_class`), if it declares one and it is set.
template <Loss L>
[[nodiscard]] std::optional<std::int32_t>
ignored_class(const L& loss) noexcept
{
    if constexpr (L::sparse_labels && requires { requires std::same_as<decltype(loss.ignore_class), std::optional<std::int32_t>>; })
        return loss.ignore_class;
    else
        return std::nullopt;
}

namespace losses {
/// Keras' `backend.epsilon()`: probabilities are clipped to [eps, 1 - eps].
inline constexpr float epsilon = 1e-7f;
} // namespace losses

/// What a loss sees of a batch: n rows of `width` outputs, the logits when the model keeps them
/// (it ends in Softmax), the labels (one int32 per row, or `width` floats per row), and optionally
/// a weight per sample (row r belongs to sample r / rows_per_sample).
struct loss_view {
    std::size_t n = 0;
    std::size_t width = 0;
    const float* output = nullptr;
    const float* logits = nullptr;   // null unless the last layer is a softmax
    const std::int32_t* sparse_labels = nullptr;
    const float* dense_labels = nullptr;
    const float* sample_weight = nullptr;   // null: every sample weighs 1
    std::size_t rows_per_sample = 1;
    bool logit_grad = false;         // out: grad is with respect to the logits
};

/// The sum over a batch of a loss's rows, each times its sample's weight; `grad` (n, width)
/// receives scale * d(sum)/d(output) (or d/d(logits): then `view.logit_grad` is set). A row whose
/// label the loss ignores adds nothing and its gradient is zero.
template <Loss L>
inline double
evaluate(const L& loss, loss_view& v, float scale, float* grad) noexcept
{
    const std::size_t d = v.width;
    const float* logits = detail::loss_takes_logits<L> ? v.logits : nullptr;
    v.logit_grad = logits != nullptr;
    const std::optional<std::int32_t> ignored = ignored_class(loss);
    double total = 0.0;
    for (std::size_t s = 0; s < v.n; ++s) {
        if (ignored && v.sparse_labels[s] == *ignored) {
            std::fill_n(grad + s * d, d, 0.0f);
            continue;
        }
        const loss_row row{.output = v.output + s * d,
                           .logits = logits ? logits + s * d : nullptr,
                           .label = v.sparse_labels ? v.sparse_labels[s] : 0,
                           .target = v.dense_labels ? v.dense_labels + s * d : nullptr,
                           .width = d};
        if (v.sample_weight) {
            const float w = v.sample_weight[s / v.rows_per_sample];
            total += static_cast<double>(w) * loss(row, scale * w, grad + s * d);
        } else {
            total += loss(row, scale, grad + s * d);
        }
    }
    return total;
}

/// The rows of a view that a loss scores: all of them, but those of the label it ignores. Keras'
/// reduction of such a loss divides the batch's sum by this count, not by the rows.
template <Loss L>
[[nodiscard]] std::size_t
scored_rows(const L& loss, const loss_view& v) noexcept
{
    const std::optional<std::int32_t> ignored = ignored_class(loss);
    if (!ignored)
        return v.n;
    return static_cast<std::size_t>(std::count_if(v.sparse_labels, v.sparse_labels + v.n,
                                                  [&](std::int32_t y) { return y != *ignored; }));
}

namespace detail {

/// A step's loss over a micro-batch's view (its gradient into `grad`, times `weight`) on an output of
/// `Positions` rows of `Classes` a sample, scaled so that the replicas' sums are the mean over the
/// global batch of n samples (Keras' sum_over_batch_size); for a loss that ignores a class, the mean
/// over the `scored` rows of the global batch that it scores, returned times n so that the step's
/// sum over n samples stays that mean.
template <std::size_t Positions, std::size_t Classes, Loss L>
double
batch_mean_loss(const L& l, loss_view& view, std::size_t global_n, std::size_t scored, float weight, float* grad) noexcept
{
    constexpr bool per_position = Positions > 1 && loss_over_last_axis<L>;
    if constexpr (per_position) {   // Keras: a loss per timestep, their mean a sample's loss
        view.n *= Positions;
        view.width = Classes;
        view.rows_per_sample = Positions;
    }
    if (ignored_class(l)) {
        const float scale = scored == 0 ? 0.0f : weight / static_cast<float>(scored);
        const double sum = tpudsl::evaluate(l, view, scale, grad);
        return scored == 0 ? 0.0 : sum * static_cast<double>(global_n) / static_cast<double>(scored);
    }
    if constexpr (per_position)
        return tpudsl::evaluate(l, view, weight / static_cast<float>(global_n * Positions), grad) /
               static_cast<double>(Positions);
    return tpudsl::evaluate(l, view, weight / static_cast<float>(global_n), grad);
}

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

/// Target j of a row: t_j (or 1 for the label), smoothed as Keras' label_smoothing does:
/// t (1 - s) + s / d.
inline double
target_of(const float* t, std::int32_t label, std::size_t j, std::size_t d, float smoothing) noexcept
{
    const double tj = t ? t[j] : (static_cast<std::int32_t>(j) == label ? 1.0 : 0.0);
    return smoothing == 0.0f ? tj : tj * (1.0f - smoothing) + static_cast<double>(smoothing) / static_cast<double>(d);
}

/// Cross-entropy against targets t (sum of t is the weight of the row) on logits z:
/// l = sum_j t_j (lse(z) - z_j); dl/dz = p sum(t) - t with p = softmax(z).
inline double
logits_crossentropy_row(const float* z, const float* p, std::size_t d, const float* t, std::int32_t label,
                        float scale, float* grad, float smoothing = 0.0f) noexcept
{
    const double lse = log_sum_exp(z, d);
    double l = 0.0, tsum = 0.0;
    for (std::size_t j = 0; j < d; ++j) {
        const double tj = target_of(t, label, j, d, smoothing);
        l += tj * (lse - z[j]);
        tsum += tj;
    }
    for (std::size_t j = 0; j < d; ++j) {
        const double tj = target_of(t, label, j, d, smoothing);
        const double pj = p ? p[j] : std::exp(z[j] - lse);
        grad[j] = static_cast<float>(scale * (pj * tsum - tj));
    }
    return l;
}

/// The mean over a row of f(e_j) for e = output - target, f returning {value, derivative}.
template <class F>
inline double
mean_of_errors(const loss_row& r, float scale, float* grad, F f) noexcept
{
    const std::size_t d = r.width;
    double l = 0.0;
    for (std::size_t j = 0; j < d; ++j) {
        const auto [value, slope] = f(static_cast<double>(r.output[j]) - r.target[j]);
        l += value / d;
        grad[j] = static_cast<float>(scale * slope / d);
    }
    return l;
}

} // namespace detail

namespace losses {

/// `SparseCategoricalCrossentropy(from_logits=False)`: integer class labels in [0, classes). With
/// probabilities it clips at 1e-7 as Keras does; when the model ends in Softmax it works on the
/// logits (log-sum-exp), whatever `from_logits` says, as modern tf.keras does. An output of
/// (timesteps, classes) takes a label per timestep. `ignore_class` (e.g. -1, or a padding id): rows
/// of that label count for nothing, and the batch's loss is the mean over the others (Keras').
struct SparseCategoricalCrossentropy {
    bool from_logits = false;
    std::optional<std::int32_t> ignore_class = std::nullopt;
    static constexpr std::string_view name = "sparse_categorical_crossentropy";
    static constexpr output_kind reads = output_kind::classes;
    static constexpr bool sparse_labels = true;
    static constexpr bool takes_logits = true;

    double
    operator()(const loss_row& r, float scale, float* g) const noexcept
    {
        const std::size_t d = r.width;
        const std::int32_t y = r.label;
        if (r.logits)
            return detail::logits_crossentropy_row(r.logits, r.output, d, nullptr, y, scale, g);
        if (from_logits)
            return detail::logits_crossentropy_row(r.output, nullptr, d, nullptr, y, scale, g);
        // Keras on probabilities: q = log(clip(p)), then the logits op on q:
        // l = -log(clip(p_y)) + log(sum_j clip(p_j)).
        const float* out = r.output;
        double csum = 0.0;
        for (std::size_t j = 0; j < d; ++j)
            csum += detail::clip_probability(out[j]);
        const float cy = detail::clip_probability(out[y]);
        for (std::size_t j = 0; j < d; ++j) {
            const bool inside = out[j] > epsilon && out[j] < 1.0f - epsilon;
            double gj = 1.0 / csum;
            if (static_cast<std::int32_t>(j) == y)
                gj -= 1.0 / cy;
            g[j] = inside ? static_cast<float>(scale * gj) : 0.0f;
        }
        return -std::log(static_cast<double>(cy)) + std::log(csum);
    }
};

/// `CategoricalCrossentropy(from_logits=False, label_smoothing=0)`: one-hot (or soft) float
/// targets, a row per sample (per timestep of a (T, classes) output); label smoothing makes the
/// targets t (1 - s) + s / classes.
struct CategoricalCrossentropy {
    bool from_logits = false;
    float label_smoothing = 0.0f;
    static constexpr std::string_view name = "categorical_crossentropy";
    static constexpr output_kind reads = output_kind::classes;
    static constexpr bool sparse_labels = false;
    static constexpr bool takes_logits = true;

    double
    operator()(const loss_row& r, float scale, float* g) const noexcept
    {
        const std::size_t d = r.width;
        const float* t = r.target;
        const float s = label_smoothing;
        if (r.logits)
            return detail::logits_crossentropy_row(r.logits, r.output, d, t, 0, scale, g, s);
        if (from_logits)
            return detail::logits_crossentropy_row(r.output, nullptr, d, t, 0, scale, g, s);
        // Keras: p /= sum(p); clip; l = -sum t log p. Chain rule through the normalisation.
        const float* out = r.output;
        double psum = 0.0;
        for (std::size_t j = 0; j < d; ++j)
            psum += out[j];
        double l = 0.0, gq_dot_q = 0.0;
        for (std::size_t j = 0; j < d; ++j) {
            const double tj = detail::target_of(t, 0, j, d, s);
            const float q = static_cast<float>(out[j] / psum);
            const float c = detail::clip_probability(q);
            l -= tj * std::log(static_cast<double>(c));
            const bool inside = q > epsilon && q < 1.0f - epsilon;
            const double gq = inside ? -tj / static_cast<double>(c) : 0.0;
            g[j] = static_cast<float>(gq);
            gq_dot_q += gq * q;
        }
        for (std::size_t j = 0; j < d; ++j)
            g[j] = static_cast<float>(scale * (g[j] - gq_dot_q) / psum);
        return l;
    }
};

/// `BinaryCrossentropy(from_logits=False, label_smoothing=0)`: float targets in [0, 1], the mean over
/// the outputs of -(t log p + (1 - t) log(1 - p)), p clipped to [1e-7, 1 - 1e-7] (Keras 3); label
/// smoothing makes the targets t (1 - s) + s / 2.
struct BinaryCrossentropy {
    bool from_logits = false;
    float label_smoothing = 0.0f;
    static constexpr std::string_view name = "binary_crossentropy";
    static constexpr output_kind reads = output_kind::probabilities;
    static constexpr bool sparse_labels = false;
    /// The mean over every output of a sample already is Keras' mean over the last axis, then over
    /// the timesteps: the output is read whole.
    static constexpr bool over_last_axis = false;

    double
    operator()(const loss_row& r, float scale, float* g) const noexcept
    {
        const std::size_t d = r.width;
        double l = 0.0;
        for (std::size_t i = 0; i < d; ++i) {
            const double t =
                label_smoothing == 0.0f ? r.target[i] : r.target[i] * (1.0f - label_smoothing) + 0.5f * label_smoothing;
            const float o = r.output[i];
            if (from_logits) {
                // max(z, 0) - z t + log(1 + exp(-|z|)); d/dz = sigmoid(z) - t
                l += (std::max(o, 0.0f) - o * t + std::log1p(std::exp(-std::abs(static_cast<double>(o))))) / d;
                g[i] = static_cast<float>(scale * (1.0 / (1.0 + std::exp(-static_cast<double>(o))) - t) / d);
            } else {
                // Keras 3: clip to [eps, 1 - eps], then the plain logs (tf.keras 2 added eps inside them)
                const double p = detail::clip_probability(o);
                l += -(t * std::log(p) + (1.0 - t) * std::log(1.0 - p)) / d;
                const bool inside = o > epsilon && o < 1.0f - epsilon;
                g[i] = inside ? static_cast<float>(scale * -(t / p - (1.0 - t) / (1.0 - p)) / d) : 0.0f;
            }
        }
        return l;
    }
};

/// `MeanSquaredError()`: the mean over the last axis of (output - target)^2.
struct MeanSquaredError {
    static constexpr std::string_view name = "mean_squared_error";
    static constexpr bool sparse_labels = false;
    static constexpr bool over_last_axis = false;   // as BinaryCrossentropy

    double
    operator()(const loss_row& r, float scale, float* g) const noexcept
    {
        return detail::mean_of_errors(r, scale, g, [](double e) { return std::pair{e * e, 2.0 * e}; });
    }
};

/// `MeanAbsoluteError()`: the mean over the last axis of |output - target| (slope 0 where they are equal).
struct MeanAbsoluteError {
    static constexpr std::string_view name = "mean_absolute_error";
    static constexpr bool sparse_labels = false;

    double
    operator()(const loss_row& r, float scale, float* g) const noexcept
    {
        return detail::mean_of_errors(r, scale, g, [](double e) {
            return std::pair{std::abs(e), static_cast<double>((e > 0.0) - (e < 0.0))};
        });
    }
};

/// `Huber(delta=1.0)`: e^2 / 2 where |e| <= delta, else delta (|e| - delta / 2); the mean over the last axis.
struct Huber {
    float delta = 1.0f;
    static constexpr std::string_view name = "huber_loss";
    static constexpr bool sparse_labels = false;

    double
    operator()(const loss_row& r, float scale, float* g) const noexcept
    {
        const double dl = delta;
        return detail::mean_of_errors(r, scale, g, [dl](double e) {
            const double a = std::abs(e);
            return a <= dl ? std::pair{0.5 * e * e, e}
                           : std::pair{dl * a - 0.5 * dl * dl, dl * static_cast<double>((e > 0.0) - (e < 0.0))};
        });
    }
};

/// `LogCosh()`: log(cosh(e)) = e + softplus(-2e) - log 2, the mean over the last axis; slope tanh(e).
struct LogCosh {
    static constexpr std::string_view name = "log_cosh";
    static constexpr bool sparse_labels = false;

    double
    operator()(const loss_row& r, float scale, float* g) const noexcept
    {
        return detail::mean_of_errors(r, scale, g, [](double e) {
            const double x = -2.0 * e;
            const double softplus = std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x)));
            return std::pair{e + softplus - std::log(2.0), std::tanh(e)};
        });
    }
};

/// `KLDivergence()`: sum_j t_j log(t_j / p_j), targets and outputs clipped to [1e-7, 1].
struct KLDivergence {
    static constexpr std::string_view name = "kl_divergence";
    static constexpr bool sparse_labels = false;

    double
    operator()(const loss_row& r, float scale, float* g) const noexcept
    {
        double l = 0.0;
        for (std::size_t j = 0; j < r.width; ++j) {
            const double t = std::clamp(r.target[j], epsilon, 1.0f);
            const float o = r.output[j];
            const double p = std::clamp(o, epsilon, 1.0f);
            l += t * std::log(t / p);
            g[j] = o > epsilon && o < 1.0f ? static_cast<float>(scale * -t / p) : 0.0f;
        }
        return l;
    }
};

/// `CosineSimilarity(axis=-1)`: -sum_j t_j p_j over the L2-normalised rows, each norm taken as at
/// least 1e-7 (Keras' `ops.normalize`).
struct CosineSimilarity {
    static constexpr std::string_view name = "cosine_similarity";
    static constexpr bool sparse_labels = false;

    double
    operator()(const loss_row& r, float scale, float* g) const noexcept
    {
        double pp = 0.0, tt = 0.0, pt = 0.0;
        for (std::size_t j = 0; j < r.width; ++j) {
            pp += static_cast<double>(r.output[j]) * r.output[j];
            tt += static_cast<double>(r.target[j]) * r.target[j];
            pt += static_cast<double>(r.output[j]) * r.target[j];
        }
        constexpr double floor = 1e-14;   // the squared norm's
        const double np = 1.0 / std::sqrt(std::max(pp, floor)), nt = 1.0 / std::sqrt(std::max(tt, floor));
        const double c = pt * np * nt;
        // d(-c)/dp_j = -(t_j nt np - c p_j np^2) where the norm is above its floor (-t_j nt np below)
        const bool floored = pp < floor;
        for (std::size_t j = 0; j < r.width; ++j) {
            const double dj = r.target[j] * nt * np - (floored ? 0.0 : c * r.output[j] * np * np);
            g[j] = static_cast<float>(-scale * dj);
        }
        return -c;
    }
};

/// `Hinge()`: the mean over the last axis of max(1 - t p, 0); a row whose targets are all 0 or 1
/// takes them as -1 and 1 (Keras decides that over the whole batch: it differs only for a batch that
/// mixes such rows with targets other than -1, 0 and 1).
struct Hinge {
    static constexpr std::string_view name = "hinge";
    static constexpr bool sparse_labels = false;

    double
    operator()(const loss_row& r, float scale, float* g) const noexcept
    {
        const std::size_t d = r.width;
        const bool binary = std::all_of(r.target, r.target + d, [](float t) { return t == 0.0f || t == 1.0f; });
        double l = 0.0;
        for (std::size_t j = 0; j < d; ++j) {
            const double t = binary ? 2.0 * r.target[j] - 1.0 : r.target[j];
            const double m = 1.0 - t * r.output[j];
            l += std::max(m, 0.0) / d;
            g[j] = m > 0.0 ? static_cast<float>(scale * -t / d) : 0.0f;
        }
        return l;
    }
};

} // namespace losses

static_assert(Loss<losses::SparseCategoricalCrossentropy> && Loss<losses::CategoricalCrossentropy> &&
              Loss<losses::BinaryCrossentropy> && Loss<losses::MeanSquaredError> && Loss<losses::MeanAbsoluteError> &&
              Loss<losses::Huber> && Loss<losses::LogCosh> && Loss<losses::KLDivergence> &&
              Loss<losses::CosineSimilarity> && Loss<losses::Hinge>);

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_LOSSES_HPP
