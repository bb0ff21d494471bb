/// @file `fit`'s, `evaluate`'s and `predict`'s keyword arguments (tpudsl::FitOptions,
/// tpudsl::EvaluateOptions), with Keras' defaults and Keras' rule for a batch size left unset.
#ifndef TPUDSL_TRAIN_FIT_OPTIONS_HPP
#define TPUDSL_TRAIN_FIT_OPTIONS_HPP

#include <tpudsl/data/dataset.hpp>
#include <tpudsl/train/callbacks.hpp>

#include <cstddef>
#include <cstdint>
#include <iostream>
#include <map>
#include <optional>
#include <vector>

namespace tpudsl {

/// `fit`'s keyword arguments, with Keras' defaults.
struct FitOptions {
    /// Samples per step. Unset, as Keras derives it: with arrays and steps_per_epoch, ceil(samples /
    /// steps_per_epoch) (so that an epoch is one pass); otherwise 32. A Dataset brings its own batch,
    /// and setting one beside it is refused, as in Keras.
    std::optional<std::size_t> batch_size;
    std::size_t epochs = 1;
    /// 0 silent, 1 progress bar, 2 one line per epoch.
    int verbose = 1;
    /// Batches per epoch; 0 means one pass over the data. With arrays the batch stream continues
    /// across epochs (Keras does not reset the iterator).
    std::size_t steps_per_epoch = 0;
    /// Keras' `validation_split`: the fraction of the arrays, taken from their end before any shuffling,
    /// that is not trained on but validated on at the end of each epoch. Arrays only; validation_data,
    /// when given, is used instead.
    double validation_split = 0.0;
    /// Keras' `validation_data`: `validation_data(x_val, y_val)` or a batched Dataset, one spelling for
    /// both (a Dataset is evaluated at its own batch size).
    std::optional<ValidationData> validation_data;
    /// Validate when (epoch + 1) % validation_freq == 0.
    std::size_t validation_freq = 1;
    /// The batch of validation arrays: unset, fit's `batch_size` as given, else 32 (Keras 3 and current
    /// tf-keras; it is never the batch derived from steps_per_epoch). A validation Dataset brings its own.
    std::optional<std::size_t> validation_batch_size;
    std::size_t initial_epoch = 0;
    /// Reshuffle the samples before each pass.
    bool shuffle = true;
    /// Keras' `sample_weight`: a weight per sample of the arrays (finite, >= 0) that multiplies its loss
    /// and its part in the metrics; the loss stays divided by the batch, as Keras' reduction. With
    /// validation_split, the last fraction of the weights goes with the validation samples.
    std::vector<float> sample_weight;
    /// Keras' `class_weight`: a sample's weight from its class (its class id, or its one-hot target's
    /// largest entry), 1 for a class not named; training data only. Not with sample_weight (Keras
    /// refuses both too), nor for a graph of several outputs or a label per timestep.
    std::map<std::int32_t, float> class_weight;
    /// Keras' `callbacks=[...]`: callbacks written in place are owned by the list; named ones are
    /// referred to (CallbackRef).
    std::vector<CallbackRef> callbacks;
    /// Where progress goes (a terminal redraws the bar in place).
    std::ostream* out = &std::cout;

    /// The batch of a step on `samples` samples of arrays, as Keras derives it (a batch larger than the
    /// data then trains on all of it).
    [[nodiscard]] std::size_t
    batch_for(std::size_t samples) const noexcept
    {
        return batch_size.value_or(steps_per_epoch ? samples / steps_per_epoch + (samples % steps_per_epoch != 0) : 32);
    }
    /// The batch of validation arrays.
    [[nodiscard]] std::size_t
    validation_batch() const noexcept
    {
        return validation_batch_size.value_or(batch_size.value_or(32));
    }
};

/// `evaluate`'s and `predict`'s keyword arguments.
struct EvaluateOptions {
    /// Unset: with `steps`, ceil(samples / steps) (evaluate); otherwise 32. Not with a Dataset.
    std::optional<std::size_t> batch_size;
    int verbose = 1;
    std::size_t steps = 0;   // 0: all the data
    std::ostream* out = &std::cout;
    /// evaluate's `sample_weight`: a weight per sample of the arrays, as fit's.
    std::vector<float> sample_weight;
};

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_FIT_OPTIONS_HPP
