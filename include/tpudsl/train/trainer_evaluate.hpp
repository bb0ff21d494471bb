/// @file Defines detail::trainer_evaluate, the engine's evaluation and prediction: Keras' `evaluate`
/// on arrays, on a batched Dataset and on a validation Dataset, and `predict`, over the step machinery
/// that trainer_core (train/trainer_core.hpp) compiled.
#ifndef TPUDSL_TRAIN_TRAINER_EVALUATE_HPP
#define TPUDSL_TRAIN_TRAINER_EVALUATE_HPP

#include <tpudsl/data/array_ref.hpp>
#include <tpudsl/data/convert.hpp>
#include <tpudsl/data/dataset.hpp>
#include <tpudsl/detail/text.hpp>
#include <tpudsl/kernels/scratch.hpp>
#include <tpudsl/train/batch_sources.hpp>
#include <tpudsl/train/fit_options.hpp>
#include <tpudsl/train/history.hpp>
#include <tpudsl/train/predictions.hpp>
#include <tpudsl/train/progbar.hpp>
#include <tpudsl/train/trainer_core.hpp>

#include <algorithm>
#include <cstddef>
#include <iostream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <unistd.h>
#include <utility>
#include <vector>

namespace tpudsl::detail {

/// Evaluation and prediction over trainer_core's compiled model (see there for the template
/// parameters); detail::trainer adds fit.
template <class Seq, std::size_t MicroBatches>
class trainer_evaluate : public trainer_core<Seq, MicroBatches> {
    using core = trainer_core<Seq, MicroBatches>;

public:
    using typename core::batch_view;
    using typename core::graph;
    using typename core::input_type;
    using core::classes;
    using core::input_size;
    using core::label_positions;
    using core::output_size;
    using core::ensure_capacity;
    using core::micro_batch_sizes;

protected:
    using typename core::micro_batch;
    using core::arenas_;
    using core::metrics_;
    using core::micro_batch_capacity_;
    using core::micro_batches_;
    using core::params_;
    using core::runner_;
    using core::seed_;
    using core::accumulate;
    using core::chained;
    using core::check_data;
    using core::context;
    using core::for_each_micro_batch_of;
    using core::quiet_unless_chief;
    using core::require_compiled;
    using core::reset_metrics;
    using core::scores;
    using core::sparse_labels;
    using core::split;
    using core::step;
    using core::values_fit;
    using core::vocabulary;
    using core::write_running_logs;

public:
    using core::core;

    /// `evaluate` on a batch_stream (a Dataset given as `validation_data`): its types and shapes are
    /// checked against the model's Input batch by batch, its values once when they were summarised
    /// where they entered.
    Scores
    evaluate(batch_stream& data, EvaluateOptions options = {})
    {
        require_compiled("evaluate");
        quiet_unless_chief(options);
        const std::size_t batch = data.batch_size();
        if (batch == 0 || batch % runner_.replicas_in_sync != 0)
            detail::bad_input(detail::concat({"evaluate(validation Dataset): its batch size (", std::to_string(batch),
                                              ") must be a multiple of the strategy's ",
                                              std::to_string(runner_.replicas_in_sync), " replicas"}));
        const bool check_values = !values_fit(data.values());
        Logs logs;
        reset_metrics(logs);
        Progbar bar(*options.out, 0, options.verbose, options.out == &std::cout && ::isatty(STDOUT_FILENO));
        data.start(0);
        std::size_t steps = 0;
        while (options.steps == 0 || steps < options.steps) {
            const dataset_ref* b = data.next();
            if (!b)
                break;
            try {
                check_data(*b, "validation x", "validation y", check_values);
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument(detail::concat({e.what(), " (in batch ",
                                                            std::to_string(steps), " of the validation dataset)"}));
            }
            const batch_view view = batch_view::of(*b, nullptr, b->x.samples());   // read in place
            ensure_capacity(view.n);   // sized by the batches that come: a batch size beyond the data costs nothing
            accumulate(step(&view, view.n, false), view.n);
            write_running_logs(logs);
            bar.update(++steps, logs);
        }
        if (steps == 0)
            detail::bad_input("evaluate(validation Dataset): the dataset yielded no batch");
        bar.finish(steps, logs);
        return scores();
    }

    /// `evaluate(x, y)`: [loss, metrics...] in compile order.
    template <class X, class Y>
    Scores
    evaluate(const X& x, const Y& y, EvaluateOptions options = {})
    {
        if constexpr (detail::is_tuple<X> || detail::is_tuple<Y> || detail::packed_inputs_of<Seq> || core::heads > 1) {
            const PackedArrays packed = this->pack(x, y);   // a graph's several inputs or outputs
            return evaluate(packed.ref(), options);
        } else {
            return evaluate(dataset_ref{make_array_ref(x), make_array_ref(y)}, options);
        }
    }

    /// Arrays of any numeric element type are converted to the model's once, here (data/convert.hpp).
    Scores
    evaluate(const dataset_ref& arrays, EvaluateOptions options)
    {
        const std::vector<float> weights =
            this->sample_weights_of(options.sample_weight, arrays.x.samples(), "evaluate");
        return evaluate_arrays(arrays, options, weights.empty() ? nullptr : weights.data());
    }

protected:
    /// evaluate on arrays, each sample weighed by `weights` (null: 1 each).
    Scores
    evaluate_arrays(const dataset_ref& arrays, EvaluateOptions options, const float* weights)
    {
        require_compiled("evaluate");
        quiet_unless_chief(options);
        if (options.batch_size == 0u)
            detail::bad_input("evaluate: batch_size must be at least 1");
        const detail::model_arrays<input_type> data(arrays, "x", "y", sparse_labels(), classes, vocabulary(), label_positions,
                                                    this->loss_.ignore_class);
        check_data(data.ref(), "x", "y");
        const std::size_t samples = arrays.x.samples();
        if (samples == 0)
            detail::bad_input("evaluate: x holds no samples (Keras refuses empty data too)");
        // As given, else derived from steps, else 32; a larger batch is all of the data.
        const std::size_t batch = std::min(
            options.batch_size.value_or(options.steps ? (samples + options.steps - 1) / options.steps : 32), samples);
        ensure_capacity(batch);
        std::size_t steps = (samples + batch - 1) / batch;
        if (options.steps)
            steps = std::min(steps, options.steps);
        Logs logs;
        reset_metrics(logs);
        Progbar bar(*options.out, steps, options.verbose, options.out == &std::cout && ::isatty(STDOUT_FILENO));
        batch_view all = batch_view::of(data.ref(), nullptr, samples);
        all.weights = weights;
        for (std::size_t s = 0; s < steps; ++s) {
            const std::size_t begin = s * batch;
            const batch_view b = all.samples(begin, std::min(batch, samples - begin));   // in place
            accumulate(step(&b, b.n, false), b.n);
            write_running_logs(logs);
            bar.update(s + 1, logs);
        }
        bar.finish(steps, logs);
        return scores();
    }

public:
    /// `predict(x)`: the outputs as Keras' array of shape (samples, output dims...) (tpudsl::Predictions);
    /// for a graph of several outputs, a tuple of one such array per output, in Outputs' order (x a tuple
    /// of arrays for several inputs).
    template <class X>
    auto
    predict(const X& x, EvaluateOptions options = {})
    {
        static_assert(detail::is_tuple<X> == detail::packed_inputs_of<Seq>,
                      "tpudsl: x is a tuple of arrays (std::tie(x1, x2)) exactly when the graph has several Inputs "
                      "[TPUDSL_GRAPH_INPUT_COUNT]");
        std::vector<input_type> converted;   // x of another numeric type, as the model reads it
        array_ref given;
        if constexpr (detail::is_tuple<X>)   // packed rows, already in the model's types
            given = detail::packer<Seq>::inputs(x, converted);
        else
            given = make_array_ref(x);
        const array_ref xr = detail::converted_inputs(given, "x", vocabulary(), converted);
        detail::check_inputs<Seq>(xr, "x", vocabulary());
        if (options.batch_size == 0u)
            detail::bad_input("predict: batch_size must be at least 1");
        const std::size_t samples = xr.samples();
        if (samples == 0)
            detail::bad_input("predict: x holds no samples (Keras refuses empty data too)");
        const std::size_t batch = std::min(options.batch_size.value_or(32), samples);   // larger: all of the data
        ensure_capacity(batch);
        std::vector<float> out(samples * output_size);
        const input_type* src = xr.as<input_type>();
        for (std::size_t begin = 0; begin < samples; begin += batch) {
            const std::size_t n = std::min(batch, samples - begin);
            split(n);
            auto work = [&](std::size_t t) {
                const kernels::scratch_scope scratch(arenas_[t]);
                for_each_micro_batch_of(t, [&](std::size_t c) {
                    micro_batch& k = micro_batches_[c];
                    if (k.n == 0)
                        return;
                    graph::forward(params_.data(), src + (begin + k.offset) * input_size, k.workspace.data(),
                                   micro_batch_capacity_, k.n, context(false, k.offset));
                    if constexpr (core::heads > 1) {   // each head's rows into its part of the packed rows
                        [&]<std::size_t... H>(std::index_sequence<H...>) {
                            ([&] {
                                using h = typename core::template head<H>;
                                const float* y = graph::template head_output<H>(k.workspace.data(), micro_batch_capacity_);
                                for (std::size_t s = 0; s < k.n; ++s)
                                    std::copy_n(y + s * h::size, h::size,
                                                out.data() + (begin + k.offset + s) * output_size + h::at);
                            }(),
                             ...);
                        }(std::make_index_sequence<core::heads>{});
                    } else {
                        const float* y = graph::output(k.workspace.data(), micro_batch_capacity_);
                        std::copy(y, y + k.n * output_size, out.data() + (begin + k.offset) * output_size);
                    }
                });
            };
            runner_.run(work);
            if (chained())   // each worker computed its micro-batches' rows
                runner_.workers->share_rows(out.data() + begin * output_size, micro_batch_sizes(n).data(), output_size);
        }
        if constexpr (core::heads > 1) {   // one array per output
            return [&]<std::size_t... H>(std::index_sequence<H...>) {
                auto part = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) {
                    using h = typename core::template head<K>;
                    std::vector<float> values(samples * h::size);
                    for (std::size_t s = 0; s < samples; ++s)
                        std::copy_n(out.data() + s * output_size + h::at, h::size, values.data() + s * h::size);
                    return Predictions<typename h::shape>(samples, std::move(values));
                };
                return std::tuple{part(std::integral_constant<std::size_t, H>{})...};
            }(std::make_index_sequence<core::heads>{});
        } else {
            return Predictions<typename Seq::output_shape>(samples, std::move(out));
        }
    }


protected:
    /// `evaluate` on a batched Dataset (Trainable checks its type first).
    template <class E, std::size_t B>
    Scores
    evaluate_dataset(const Dataset<Batch<E, B>>& data, EvaluateOptions options)
    {
        require_compiled("evaluate");
        quiet_unless_chief(options);
        if (options.batch_size)
            detail::bad_input("evaluate: batch_size must not be set with a Dataset: its batches are its own (Keras "
                              "refuses both too)");
        static_cast<void>(detail::dataset_batch(data, runner_.replicas_in_sync));   // against the replicas
        if (data.cardinality() == 0)
            detail::bad_input("evaluate: the dataset holds no batch (its cardinality is 0)");
        detail::dataset_source<core, E, B> source(*this, data, 0);
        Logs logs;
        reset_metrics(logs);
        Progbar bar(*options.out, 0, options.verbose, options.out == &std::cout && ::isatty(STDOUT_FILENO));
        source.begin_epoch(0);
        std::size_t steps = 0;
        batch_view b;
        while ((options.steps == 0 || steps < options.steps) && source.next(b)) {
            accumulate(step(&b, b.n, false), b.n);
            write_running_logs(logs);
            bar.update(++steps, logs);
        }
        bar.finish(steps, logs);
        return scores();
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_TRAIN_TRAINER_EVALUATE_HPP
