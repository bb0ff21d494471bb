/// @file Defines the Metric concept (what compile asks of a metric, built-in or a user's) and Keras'
/// metrics (keras-semantics §3.2): the accuracies, the regression errors, Precision, Recall and AUC.
///
/// A metric keeps its state as sums: `update(batch, state)` adds a batch's part to `state` (its
/// `state_size` doubles), and `result(state)` reads the value. The model sums the states of the
/// micro-batches in order, and of the workers of a job, so every strategy reads the same bits; the
/// state is cleared at each epoch and each evaluate, as Keras' reset_state.
#ifndef TPUDSL_TRAIN_METRICS_HPP
#define TPUDSL_TRAIN_METRICS_HPP

#include <tpudsl/train/loss_fit.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tpudsl {

/// One row a metric reads: `width` outputs over the output's last axis (a sample's, or one timestep's
/// of a (timesteps, classes) output), with its class id or its `width` targets.
struct metric_row {
    const float* output = nullptr;
    std::int32_t label = 0;           // the class id, for a metric of `sparse_labels`
    const float* target = nullptr;   // `width` targets otherwise
    std::size_t width = 0;
};

/// The rows of a batch a metric reads, and each row's weight (its sample's; 1 without sample weights).
struct metric_batch {
    std::size_t rows = 0, width = 0;
    const float* output = nullptr;
    const std::int32_t* labels = nullptr;
    const float* targets = nullptr;
    const float* sample_weight = nullptr;   // one per sample; null: every sample weighs 1
    std::size_t rows_per_sample = 1;

    [[nodiscard]] metric_row
    row(std::size_t r) const noexcept
    {
        return {output + r * width, labels ? labels[r] : 0, targets ? targets + r * width : nullptr, width};
    }
    [[nodiscard]] double
    weight(std::size_t r) const noexcept
    {
        return sample_weight ? static_cast<double>(sample_weight[r / rows_per_sample]) : 1.0;
    }
    /// f(output, target, weight) for every output of every row (the metrics over all outputs, as
    /// Keras' confusion counts flatten them).
    template <class F>
    void
    for_each_output(F&& f) const
    {
        for (std::size_t r = 0; r < rows; ++r) {
            const double w = weight(r);
            for (std::size_t j = 0; j < width; ++j)
                f(output[r * width + j], targets[r * width + j], w);
        }
    }
};

/// What compile asks of a metric: a name (the log's key), the kind of labels it reads, the size of
/// its state, how a batch adds to the state, and the value of a state. The state must be sums (the
/// model adds the micro-batches' states). A sparse label is a class id, or, when the loss has an
/// ignore_class, that label as given (Keras' metrics read it too: it may lie outside [0, width)).
template <class M>
concept Metric = std::copy_constructible<M> &&
                 requires(const M& m, const metric_batch& b, double* state, const double* summed) {
                     { std::string_view(m.name) };
                     { M::sparse_labels } -> std::convertible_to<bool>;
                     { M::state_size } -> std::convertible_to<std::size_t>;
                     m.update(b, state);
                     { m.result(summed) } -> std::convertible_to<double>;
                 };

namespace detail {
/// The first maximum of a row (TensorFlow's ArgMax on CPU).
inline std::size_t
argmax(const float* row, std::size_t d) noexcept
{
    std::size_t best = 0;
    for (std::size_t j = 1; j < d; ++j)
        if (row[j] > row[best])
            best = j;
    return best;
}

/// `tf.math.in_top_k`: fewer than k entries strictly above the target's, and every entry finite; a
/// target outside the row (a label a loss ignores) is in no top k.
inline bool
in_top_k(const float* row, std::size_t d, std::size_t target, std::size_t k) noexcept
{
    if (target >= d)
        return false;
    std::size_t higher = 0;
    bool finite = true;
    for (std::size_t j = 0; j < d; ++j) {
        finite = finite && std::isfinite(row[j]);
        higher += row[j] > row[target];
    }
    return finite && higher < k;
}

inline double
divide_no_nan(double a, double b) noexcept
{
    return b == 0.0 ? 0.0 : a / b;
}
} // namespace detail

namespace metrics {

/// A metric that is the weighted mean of a value per row (Keras' MeanMetricWrapper): `Derived`
/// gives `double value(const metric_row&) const`; the state is {sum of weight x value, sum of weights}.
template <class Derived>
struct mean_of_rows {
    static constexpr std::size_t state_size = 2;

    void
    update(const metric_batch& b, double* state) const noexcept
    {
        const auto& self = static_cast<const Derived&>(*this);
        for (std::size_t r = 0; r < b.rows; ++r) {
            const double w = b.weight(r);
            state[0] += w * self.value(b.row(r));
            state[1] += w;
        }
    }
    [[nodiscard]] double
    result(const double* state) const noexcept
    {
        return detail::divide_no_nan(state[0], state[1]);
    }
};

/// `argmax(output) == label` (the first maximum on ties, as TensorFlow's ArgMax on CPU).
struct SparseCategoricalAccuracy : mean_of_rows<SparseCategoricalAccuracy> {
    static constexpr std::string_view name = "sparse_categorical_accuracy";
    static constexpr output_kind reads = output_kind::classes;
    static constexpr bool sparse_labels = true;
    [[nodiscard]] static double
    value(const metric_row& r) noexcept
    {
        return detail::argmax(r.output, r.width) == static_cast<std::size_t>(r.label);
    }
};

/// `argmax(output) == argmax(target)`.
struct CategoricalAccuracy : mean_of_rows<CategoricalAccuracy> {
    static constexpr std::string_view name = "categorical_accuracy";
    static constexpr output_kind reads = output_kind::classes;
    static constexpr bool sparse_labels = false;
    [[nodiscard]] static double
    value(const metric_row& r) noexcept
    {
        return detail::argmax(r.output, r.width) == detail::argmax(r.target, r.width);
    }
};

/// A hit when fewer than K classes score strictly higher than the label (ties at the boundary
/// count as hits, as `tf.math.in_top_k`), and every score is finite.
template <std::size_t K = 5>
struct SparseTopKCategoricalAccuracy : mean_of_rows<SparseTopKCategoricalAccuracy<K>> {
    static_assert(K > 0, "tpudsl::metrics::SparseTopKCategoricalAccuracy<K>: requires K > 0");
    static constexpr std::string_view name = "sparse_top_k_categorical_accuracy";
    static constexpr output_kind reads = output_kind::classes;
    static constexpr bool sparse_labels = true;
    static constexpr std::size_t k = K;
    [[nodiscard]] static double
    value(const metric_row& r) noexcept
    {
        return detail::in_top_k(r.output, r.width, static_cast<std::size_t>(r.label), K);
    }
};

/// TopKCategoricalAccuracy<K> on one-hot targets: the target's class (its argmax) in the top K.
template <std::size_t K = 5>
struct TopKCategoricalAccuracy : mean_of_rows<TopKCategoricalAccuracy<K>> {
    static_assert(K > 0, "tpudsl::metrics::TopKCategoricalAccuracy<K>: requires K > 0");
    static constexpr std::string_view name = "top_k_categorical_accuracy";
    static constexpr output_kind reads = output_kind::classes;
    static constexpr bool sparse_labels = false;
    static constexpr std::size_t k = K;
    [[nodiscard]] static double
    value(const metric_row& r) noexcept
    {
        return detail::in_top_k(r.output, r.width, detail::argmax(r.target, r.width), K);
    }
};

/// `BinaryAccuracy(threshold=0.5)`: the mean over the last axis of (output > threshold) == target.
struct BinaryAccuracy : mean_of_rows<BinaryAccuracy> {
    float threshold = 0.5f;
    static constexpr std::string_view name = "binary_accuracy";
    static constexpr output_kind reads = output_kind::probabilities;
    static constexpr bool sparse_labels = false;
    [[nodiscard]] double
    value(const metric_row& r) const noexcept
    {
        double hits = 0.0;
        for (std::size_t j = 0; j < r.width; ++j)
            hits += static_cast<float>(r.output[j] > threshold) == r.target[j];
        return hits / static_cast<double>(r.width);
    }
};

/// `MeanAbsoluteError()`: the mean over the last axis of |output - target|.
struct MeanAbsoluteError : mean_of_rows<MeanAbsoluteError> {
    static constexpr std::string_view name = "mean_absolute_error";
    static constexpr bool sparse_labels = false;
    [[nodiscard]] static double
    value(const metric_row& r) noexcept
    {
        double s = 0.0;
        for (std::size_t j = 0; j < r.width; ++j)
            s += std::abs(static_cast<double>(r.output[j]) - r.target[j]);
        return s / static_cast<double>(r.width);
    }
};

/// `MeanSquaredError()`: the mean over the last axis of (output - target)^2.
struct MeanSquaredError : mean_of_rows<MeanSquaredError> {
    static constexpr std::string_view name = "mean_squared_error";
    static constexpr bool sparse_labels = false;
    [[nodiscard]] static double
    value(const metric_row& r) noexcept
    {
        double s = 0.0;
        for (std::size_t j = 0; j < r.width; ++j) {
            const double e = static_cast<double>(r.output[j]) - r.target[j];
            s += e * e;
        }
        return s / static_cast<double>(r.width);
    }
};

/// `RootMeanSquaredError()`: the square root of the mean squared error over everything seen.
struct RootMeanSquaredError : mean_of_rows<RootMeanSquaredError> {
    static constexpr std::string_view name = "root_mean_squared_error";
    static constexpr bool sparse_labels = false;
    [[nodiscard]] static double
    value(const metric_row& r) noexcept
    {
        return MeanSquaredError::value(r);
    }
    [[nodiscard]] double
    result(const double* state) const noexcept
    {
        return std::sqrt(detail::divide_no_nan(state[0], state[1]));
    }
};

/// `Precision(thresholds=0.5)`: true positives / predicted positives, over every output (a target
/// other than 0 is a positive; a prediction above the threshold is one).
struct Precision {
    float threshold = 0.5f;
    static constexpr std::string_view name = "precision";
    static constexpr bool sparse_labels = false;
    static constexpr std::size_t state_size = 2;   // true positives, false positives

    void
    update(const metric_batch& b, double* state) const noexcept
    {
        b.for_each_output([&](float out, float target, double w) {
            if (out > threshold)
                state[target != 0.0f ? 0 : 1] += w;
        });
    }
    [[nodiscard]] static double
    result(const double* state) noexcept
    {
        return detail::divide_no_nan(state[0], state[0] + state[1]);
    }
};

/// `Recall(thresholds=0.5)`: true positives / actual positives, over every output.
struct Recall {
    float threshold = 0.5f;
    static constexpr std::string_view name = "recall";
    static constexpr bool sparse_labels = false;
    static constexpr std::size_t state_size = 2;   // true positives, false negatives

    void
    update(const metric_batch& b, double* state) const noexcept
    {
        b.for_each_output([&](float out, float target, double w) {
            if (target != 0.0f)
                state[out > threshold ? 0 : 1] += w;
        });
    }
    [[nodiscard]] static double
    result(const double* state) noexcept
    {
        return detail::divide_no_nan(state[0], state[0] + state[1]);
    }
};

/// The curve AUC integrates.
enum class auc_curve { roc, pr };

/// `AUC(num_thresholds=200, curve="ROC", summation_method="interpolation")`: the area under the ROC
/// curve (trapezoids) or the precision-recall curve (Davis and Goadrich's interpolation), from the
/// confusion counts at Keras' 200 evenly spread thresholds (-1e-7, 1/199, ..., 198/199, 1 + 1e-7).
/// Outputs are clipped to [0, 1], a target other than 0 is a positive, over every output.
struct AUC {
    auc_curve curve = auc_curve::roc;
    static constexpr std::string_view name = "auc";
    static constexpr bool sparse_labels = false;
    static constexpr std::size_t thresholds = 200;
    /// Per bucket (the thresholds an output exceeds, Keras' bucket index), the positives' and the
    /// negatives' weight.
    static constexpr std::size_t state_size = 2 * thresholds;

    void
    update(const metric_batch& b, double* state) const noexcept
    {
        b.for_each_output([&](float out, float target, double w) {
            const float p = std::clamp(out, 0.0f, 1.0f);
            const float bucket = std::max(std::ceil(p * static_cast<float>(thresholds - 1)) - 1.0f, 0.0f);
            state[2 * static_cast<std::size_t>(bucket) + (target != 0.0f ? 0 : 1)] += w;
        });
    }

    [[nodiscard]] double
    result(const double* state) const noexcept
    {
        // Confusion counts at threshold i: the outputs in buckets >= i are predicted positive.
        std::array<double, thresholds> tp{}, fp{};
        double pos = 0.0, neg = 0.0;
        for (std::size_t i = thresholds; i-- > 0;) {
            pos += state[2 * i];
            neg += state[2 * i + 1];
            tp[i] = pos;
            fp[i] = neg;
        }
        double auc = 0.0;
        for (std::size_t i = 0; i + 1 < thresholds; ++i) {
            if (curve == auc_curve::roc) {
                const double x0 = detail::divide_no_nan(fp[i], neg), x1 = detail::divide_no_nan(fp[i + 1], neg);
                const double y0 = detail::divide_no_nan(tp[i], pos), y1 = detail::divide_no_nan(tp[i + 1], pos);
                auc += (x0 - x1) * (y0 + y1) / 2.0;
            } else {   // Keras' interpolate_pr_auc
                const double dtp = tp[i] - tp[i + 1];
                const double p0 = tp[i] + fp[i], p1 = tp[i + 1] + fp[i + 1];
                const double slope = detail::divide_no_nan(dtp, std::max(p0 - p1, 0.0));
                const double intercept = tp[i + 1] - slope * p1;
                const double ratio = p0 > 0.0 && p1 > 0.0 ? detail::divide_no_nan(p0, std::max(p1, 0.0)) : 1.0;
                auc += detail::divide_no_nan(slope * (dtp + intercept * std::log(ratio)), pos);   // tp + fn
            }
        }
        return auc;
    }
};

} // namespace metrics

static_assert(Metric<metrics::SparseCategoricalAccuracy> && Metric<metrics::CategoricalAccuracy> &&
              Metric<metrics::SparseTopKCategoricalAccuracy<>> && Metric<metrics::TopKCategoricalAccuracy<>> &&
              Metric<metrics::BinaryAccuracy> && Metric<metrics::MeanAbsoluteError> &&
              Metric<metrics::MeanSquaredError> && Metric<metrics::RootMeanSquaredError> &&
              Metric<metrics::Precision> && Metric<metrics::Recall> && Metric<metrics::AUC>);

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_METRICS_HPP
