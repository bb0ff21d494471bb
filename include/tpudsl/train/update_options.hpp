/// @file What a model does around its optimizer's update for Keras' optimizer options
/// (optimizers::optimizer_options): detail::update_with_options (clipping by value, the decoupled weight
/// decay, the update, the moving average of the weights), detail::take_moving_average (Keras'
/// finalize_variable_values), and detail::norm_clipping: Keras' clipnorm (each trainable weight's gradient scaled to an
/// L2 norm of at most clipnorm) and global_clipnorm (the whole gradient scaled to a global norm of at
/// most global_clipnorm) over a step's summed gradient. A norm needs every element before any update,
/// so a step that clips by norm runs its fused pass in three parts on the strategy's threads: the
/// reduce, which leaves the sums here; the sums of squares, in fixed segments (a weight cut at every
/// 4,096th float), each summed by one thread; then the scaling and the update over each thread's shard.
/// The segments are summed in order, so the norms, and the bits, do not depend on the threads.
/// Allocates in prepare only.
#ifndef TPUDSL_TRAIN_UPDATE_OPTIONS_HPP
#define TPUDSL_TRAIN_UPDATE_OPTIONS_HPP

#include <tpudsl/core/gradient_layout.hpp>
#include <tpudsl/detail/aligned_buffer.hpp>
#include <tpudsl/train/optimizers.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace tpudsl::detail {

/// The optimizer's update of [b, e) of the weights w from the summed gradient g, inside Keras' options:
/// the gradient clipped by value, the decoupled weight decay at this step's learning rate, the update,
/// then the moving average (the first step's is w), copied into the weights every
/// ema_overwrite_frequency steps. `iterations` counts this step. Element-wise, so any shards give the
/// same bits.
template <class Opt>
inline void
update_with_options(const Opt& opt, const typename Opt::step_constants& c, float lr, std::uint64_t iterations,
                    float* w, float* g, float* const* slots, std::size_t b, std::size_t e) noexcept
{
    const optimizers::optimizer_options* o = optimizers::options_of(opt);
    if (o && o->clipvalue > 0.0f)
        for (std::size_t i = b; i < e; ++i)
            g[i] = std::clamp(g[i], -o->clipvalue, o->clipvalue);
    if (o && o->weight_decay > 0.0f)
        for (std::size_t i = b; i < e; ++i)
            w[i] = w[i] - w[i] * o->weight_decay * lr;
    opt.update(c, w, g, slots, b, e);
    if (o && o->use_ema) {
        float* average = slots[Opt::slots];
        const float m = iterations == 1 ? 0.0f : o->ema_momentum;
        for (std::size_t i = b; i < e; ++i)
            average[i] = m * average[i] + (1.0f - m) * w[i];
        if (o->ema_overwrite_frequency && iterations % o->ema_overwrite_frequency == 0)
            std::copy(average + b, average + e, w + b);
    }
}

/// The weights take their moving average, but for the moving statistics (which no optimizer updates).
inline void
take_moving_average(float* w, const float* average, std::size_t size, std::span<const moving_range> moving) noexcept
{
    std::size_t from = 0;
    for (const moving_range& m : moving) {
        std::copy(average + from, average + m.begin, w + from);
        from = m.end;
    }
    std::copy(average + from, average + size, w + from);
}

/// Keras' clipnorm and global_clipnorm (see the file's comment).
class norm_clipping {
public:
    /// Floats a segment holds at most.
    static constexpr std::size_t segment_floats = 4096;

    /// Clips the gradients of `variables` (each trainable weight's [begin, end) in a buffer of `size`
    /// floats) to `clipnorm` each, or all of them to a global norm of `global_clipnorm`; neither set
    /// (both 0): off.
    void
    prepare(std::span<const std::pair<std::size_t, std::size_t>> variables, std::size_t size, float clipnorm,
            float global_clipnorm)
    {
        variables_.assign(variables.begin(), variables.end());
        std::ranges::sort(variables_);
        clip_ = clipnorm > 0.0f ? clipnorm : global_clipnorm;
        global_ = clipnorm == 0.0f;
        segments_.clear();
        if (clip_ == 0.0f) {
            sums_.resize(0);
            return;
        }
        for (std::size_t v = 0; v < variables_.size(); ++v)
            for (std::size_t b = variables_[v].first; b < variables_[v].second;) {
                const std::size_t e = std::min(variables_[v].second, (b / segment_floats + 1) * segment_floats);
                segments_.push_back({b, e, v});
                b = e;
            }
        segment_sums_.assign(segments_.size(), 0.0);
        per_variable_.assign(variables_.size(), 0.0);
        bounds_.assign(variables_.size(), clip_);
        sums_.resize(size);
    }

    [[nodiscard]] bool on() const noexcept { return clip_ > 0.0f; }

    /// Where the reduce leaves the step's summed gradient.
    [[nodiscard]] float* sums() noexcept { return sums_.data(); }

    /// Thread t of `threads`: the sums of squares of its segments (t, t + threads, ...).
    void
    square_sums(std::size_t t, std::size_t threads) noexcept
    {
        for (std::size_t s = t; s < segments_.size(); s += threads) {
            double sum = 0.0;
            for (std::size_t i = segments_[s].begin; i < segments_[s].end; ++i)
                sum += static_cast<double>(sums_.data()[i]) * sums_.data()[i];
            segment_sums_[s] = sum;
        }
    }

    /// After square_sums on every thread: each weight's bound max(norm, clip), or for global_clipnorm
    /// the scale clip min(1 / norm, 1 / clip) (Keras' clip_by_norm and clip_by_global_norm).
    void
    compute_factors() noexcept
    {
        std::fill(per_variable_.begin(), per_variable_.end(), 0.0);
        for (std::size_t s = 0; s < segments_.size(); ++s)
            per_variable_[segments_[s].variable] += segment_sums_[s];
        if (global_) {
            double total = 0.0;
            for (const double p : per_variable_)
                total += p;
            const float norm = static_cast<float>(std::sqrt(total));
            scale_ = clip_ * std::min(1.0f / norm, 1.0f / clip_);
            return;
        }
        for (std::size_t v = 0; v < variables_.size(); ++v)
            bounds_[v] = std::max(static_cast<float>(std::sqrt(per_variable_[v])), clip_);
    }

    /// The sums in [lo, hi) of the trainable weights scaled as Keras scales them (g clip / max(norm,
    /// clip) per weight; g scale globally), each piece then handed to update(b, e).
    template <class Update>
    void
    clip(std::size_t lo, std::size_t hi, Update&& update) noexcept
    {
        float* g = sums_.data();
        for (std::size_t v = 0; v < variables_.size(); ++v) {
            const std::size_t b = std::max(lo, variables_[v].first), e = std::min(hi, variables_[v].second);
            if (b >= e)
                continue;
            if (global_) {
                for (std::size_t i = b; i < e; ++i)
                    g[i] = g[i] * scale_;
            } else {
                const float bound = bounds_[v];
                for (std::size_t i = b; i < e; ++i)
                    g[i] = g[i] * clip_ / bound;
            }
            update(b, e);
        }
    }

private:
    struct segment {
        std::size_t begin, end, variable;
    };
    std::vector<std::pair<std::size_t, std::size_t>> variables_;
    std::vector<segment> segments_;
    std::vector<double> segment_sums_, per_variable_;
    std::vector<float> bounds_;
    aligned_floats_buffer sums_;
    float clip_ = 0.0f, scale_ = 1.0f;
    bool global_ = false;
};

} // namespace tpudsl::detail

#endif // !TPUDSL_TRAIN_UPDATE_OPTIONS_HPP
