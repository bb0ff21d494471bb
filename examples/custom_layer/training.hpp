/// @file A loss, two metrics and an optimizer written outside the library, as a user writes them
/// (docs/training.md, "Writing a loss, a metric, an optimizer"): each is a plain struct that the
/// Loss, Metric and Optimizer concepts accept, and compile takes them as it takes the built-ins.
#ifndef TPUDSL_EXAMPLES_CUSTOM_LAYER_TRAINING_HPP
#define TPUDSL_EXAMPLES_CUSTOM_LAYER_TRAINING_HPP

#include <tpudsl/train/losses.hpp>
#include <tpudsl/train/metrics.hpp>
#include <tpudsl/train/optimizers.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace mytraining {

// [focal_loss]
/// The focal loss of Lin et al. on class ids: -(1 - p_y)^gamma log(p_y), on the probabilities a
/// Softmax output gives (clipped to [1e-7, 1 - 1e-7]); gamma = 0 is the cross-entropy.
struct SparseFocalLoss {
    float gamma = 2.0f;
    static constexpr std::string_view name = "sparse_focal_loss";   // the loss's name
    static constexpr bool sparse_labels = true;                     // reads class ids

    /// One row: returns its loss and writes scale * d(loss)/d(output) into grad.
    double
    operator()(const tpudsl::loss_row& row, float scale, float* grad) const noexcept
    {
        std::fill(grad, grad + row.width, 0.0f);
        const float raw = row.output[row.label];
        const double p = std::clamp(raw, 1e-7f, 1.0f - 1e-7f);
        const double q = 1.0 - p, g = gamma;
        const double loss = -std::pow(q, g) * std::log(p);
        if (raw > 1e-7f && raw < 1.0f - 1e-7f)   // the clip has no slope outside
            grad[row.label] = static_cast<float>(scale * (g * std::pow(q, g - 1.0) * std::log(p) - std::pow(q, g) / p));
        return loss;
    }
};
static_assert(tpudsl::Loss<SparseFocalLoss>);
// [focal_loss]

// [true_class_probability]
/// The mean probability the model gives the true class: a value per row, averaged with the
/// samples' weights by tpudsl::metrics::mean_of_rows.
struct TrueClassProbability : tpudsl::metrics::mean_of_rows<TrueClassProbability> {
    static constexpr std::string_view name = "true_class_probability";
    static constexpr bool sparse_labels = true;

    [[nodiscard]] static double
    value(const tpudsl::metric_row& row) noexcept
    {
        return row.output[row.label];
    }
};
static_assert(tpudsl::Metric<TrueClassProbability>);
// [true_class_probability]

// [calibration_error]
/// The expected calibration error over ten bins of confidence: sum over the bins of
/// |accuracy - confidence| times the bin's share of the rows. Its state is sums (each bin's
/// weight, confidence and hits), so the model can add the micro-batches' states.
struct CalibrationError {
    static constexpr std::size_t bins = 10;
    static constexpr std::string_view name = "calibration_error";
    static constexpr bool sparse_labels = true;
    static constexpr std::size_t state_size = 3 * bins;

    void
    update(const tpudsl::metric_batch& batch, double* state) const noexcept
    {
        for (std::size_t r = 0; r < batch.rows; ++r) {
            const tpudsl::metric_row row = batch.row(r);
            const float* best = std::max_element(row.output, row.output + row.width);
            const double confidence = *best, w = batch.weight(r);
            const std::size_t bin = std::min(bins - 1, static_cast<std::size_t>(confidence * bins));
            state[3 * bin] += w;
            state[3 * bin + 1] += w * confidence;
            state[3 * bin + 2] += w * (best - row.output == row.label);
        }
    }
    [[nodiscard]] static double
    result(const double* state) noexcept
    {
        double total = 0.0, error = 0.0;
        for (std::size_t b = 0; b < bins; ++b) {
            total += state[3 * b];
            error += std::abs(state[3 * b + 2] - state[3 * b + 1]);   // |hits - confidence|, weighted
        }
        return total > 0.0 ? error / total : 0.0;
    }
};
static_assert(tpudsl::Metric<CalibrationError>);
// [calibration_error]

// [signum]
/// Signum (Bernstein et al.): m = beta m + (1 - beta) g; w -= lr sign(m). One slot, the momentum.
struct Signum {
    float learning_rate = 1e-3f;
    float beta = 0.9f;
    static constexpr std::string_view name = "Signum";
    static constexpr std::size_t slots = 1;

    struct step_constants {   // what a step computes once for every weight
        float lr;
    };
    [[nodiscard]] step_constants
    prepare(std::uint64_t /*t: the step, from 1*/) const noexcept
    {
        return {learning_rate};
    }
    /// Elements [begin, end) of the weights w from the summed gradient g; slot[0] is the momentum.
    /// Element-wise: element i reads and writes only element i, so shards give the same bits.
    void
    update(const step_constants& c, float* w, const float* g, float* const* slot, std::size_t begin,
           std::size_t end) const noexcept
    {
        float* m = slot[0];
        for (std::size_t i = begin; i < end; ++i) {
            m[i] = beta * m[i] + (1.0f - beta) * g[i];
            w[i] -= c.lr * static_cast<float>((m[i] > 0.0f) - (m[i] < 0.0f));
        }
    }
};
static_assert(tpudsl::Optimizer<Signum>);

/// Found by compile (argument-dependent lookup) and called before any state changes.
inline void
check(const Signum& o)
{
    if (!(o.beta >= 0.0f && o.beta < 1.0f))
        throw std::invalid_argument("mytraining::Signum: beta must be in [0, 1), got " + std::to_string(o.beta));
}
// [signum]

} // namespace mytraining

#endif // !TPUDSL_EXAMPLES_CUSTOM_LAYER_TRAINING_HPP
