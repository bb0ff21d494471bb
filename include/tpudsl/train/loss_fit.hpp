/// @file Defines the compile-time check that a loss and its metrics fit the model's output
/// (detail::check_fit): what a loss or metric says it reads (its optional `reads`, an output_kind)
/// against the output layer and its shape, and the metrics' labels against the loss's. A misfit is one
/// error naming the loss or metric, the output layer and its shape, and what would fit.
#ifndef TPUDSL_TRAIN_LOSS_FIT_HPP
#define TPUDSL_TRAIN_LOSS_FIT_HPP

#include <tpudsl/core/activation_tags.hpp>

#include <cstddef>
#include <type_traits>

namespace tpudsl {

/// What a loss or a metric reads of the output (its `static constexpr output_kind reads`; any when it
/// declares none).
enum class output_kind {
    any,
    /// A distribution over the classes on the output's last axis: at least two of them.
    classes,
    /// Each output a probability of its own (a sigmoid's): not a softmax over several classes.
    probabilities,
};

namespace detail {

enum class fit_rule { fits, needs_classes, softmax_is_not_probabilities, labels_differ };

/// Fails to compile when rule R is broken; its arguments, which the compiler prints, are the loss or
/// metric, the output layer and the output's shape (for labels_differ: the metric and the loss).
template <fit_rule R, class LossOrMetric, class OutputLayer, class OutputShape>
struct output_fit_error {
    static_assert(R != fit_rule::needs_classes,
                  "tpudsl::Trainable::compile: this loss or metric reads a distribution over classes on the "
                  "output's last axis, which has a single unit: a 1-unit (sigmoid) output fits BinaryCrossentropy "
                  "and BinaryAccuracy; the loss or metric, the output layer and its shape follow "
                  "[TPUDSL_LOSS_OUTPUT]");
    static_assert(R != fit_rule::softmax_is_not_probabilities,
                  "tpudsl::Trainable::compile: this loss or metric reads each output as a probability of its own, "
                  "but the output is a Softmax over several classes: it fits CategoricalCrossentropy (one-hot "
                  "targets) or SparseCategoricalCrossentropy (class ids) and their accuracies; the loss or metric, "
                  "the output layer and its shape follow [TPUDSL_LOSS_OUTPUT]");
    static_assert(R != fit_rule::labels_differ,
                  "tpudsl::Trainable::compile: the metric reads class ids where the loss reads targets, or targets "
                  "where it reads class ids: take the metric of the loss's labels (SparseCategoricalAccuracy with "
                  "SparseCategoricalCrossentropy, CategoricalAccuracy with CategoricalCrossentropy); the metric "
                  "and the loss follow [TPUDSL_METRIC_LABELS]");
    static constexpr bool checked = true;
};

template <class X>
inline constexpr output_kind reads_of = [] {
    if constexpr (requires { X::reads; })
        return static_cast<output_kind>(X::reads);
    else
        return output_kind::any;
}();

/// The rule X (a loss or a metric) breaks on an output of OutputShape made by OutputLayer (a spec).
template <class X, class OutputLayer, class OutputShape>
consteval fit_rule
output_rule() noexcept
{
    constexpr std::size_t last = OutputShape::dims[OutputShape::rank - 1];
    constexpr bool softmax = [] {
        if constexpr (requires { typename OutputLayer::activation; })
            return std::is_same_v<typename OutputLayer::activation, Softmax>;
        else
            return false;
    }();
    if (reads_of<X> == output_kind::classes && last < 2)
        return fit_rule::needs_classes;
    if (reads_of<X> == output_kind::probabilities && softmax && last > 1)
        return fit_rule::softmax_is_not_probabilities;
    return fit_rule::fits;
}

/// Checks loss L and metrics Ms (plain ones: OnOutput's unwrapped) on an output.
template <class OutputLayer, class OutputShape, class L, class... Ms>
consteval bool
check_fit() noexcept
{
    constexpr bool loss_fits =
        output_fit_error<output_rule<L, OutputLayer, OutputShape>(), L, OutputLayer, OutputShape>::checked;
    constexpr bool metrics_fit =
        (output_fit_error<output_rule<Ms, OutputLayer, OutputShape>(), Ms, OutputLayer, OutputShape>::checked && ...);
    constexpr bool labels_agree =
        (output_fit_error<static_cast<bool>(Ms::sparse_labels) == static_cast<bool>(L::sparse_labels)
                              ? fit_rule::fits
                              : fit_rule::labels_differ,
                          Ms, L, OutputShape>::checked &&
         ...);
    return loss_fits && metrics_fit && labels_agree;
}

} // namespace detail

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_LOSS_FIT_HPP
