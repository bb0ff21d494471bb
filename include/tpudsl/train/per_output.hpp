/// @file Defines what compile takes for a graph of several outputs: a loss per output with Keras'
/// `loss_weights` (tpudsl::PerOutput), and a metric on one output (tpudsl::OnOutput).
#ifndef TPUDSL_TRAIN_PER_OUTPUT_HPP
#define TPUDSL_TRAIN_PER_OUTPUT_HPP

#include <array>
#include <cstddef>
#include <tuple>

namespace tpudsl {

/// Keras' `loss=[...]` with `loss_weights=[...]` for a graph of several outputs: one loss per output,
/// in the order of the graph's Outputs<...>. The loss fit minimises is the weighted sum; the logs show
/// it as `loss`, and each output's own loss, before its weight, as `<output>_loss` (as Keras 3 logs them).
///
///     model.compile(optimizers::Adam{}, PerOutput{losses::SparseCategoricalCrossentropy{},
///                                                 losses::MeanSquaredError{}}.loss_weights({1.0, 0.5}),
///                   OnOutput<0, metrics::SparseCategoricalAccuracy>{});
template <class... Losses>
struct PerOutput {
    static constexpr std::size_t count = sizeof...(Losses);
    std::tuple<Losses...> losses;
    std::array<double, count> weights;

    constexpr explicit PerOutput(Losses... l) : losses(l...) { weights.fill(1.0); }

    /// Keras' `loss_weights`: each output's loss is multiplied by its weight (1 by default).
    constexpr PerOutput&
    loss_weights(const std::array<double, count>& w) noexcept
    {
        weights = w;
        return *this;
    }
};

/// A metric of output `Output` (0-based, in Outputs' order), logged as `<output>_<metric>` as Keras
/// does for `metrics={"output": [...]}`.
template <std::size_t Output, class Metric>
struct OnOutput {
    static constexpr std::size_t output = Output;
    Metric metric{};
};

namespace detail {
template <class T>
inline constexpr bool is_per_output = false;
template <class... Losses>
inline constexpr bool is_per_output<PerOutput<Losses...>> = true;
template <class T>
inline constexpr bool is_on_output = false;
template <std::size_t Output, class Metric>
inline constexpr bool is_on_output<OnOutput<Output, Metric>> = true;
} // namespace detail

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_PER_OUTPUT_HPP
