/// @file Defines tpudsl::Trainable<Model, Strategy>: the trainable object of a model type, with Keras'
/// compile, fit, evaluate, predict and summary, on one core or on the replicas of a strategy, and
/// detail::trainer, its engine, shared by the strategies that split a step alike.
///
/// A step (train/replica_steps.hpp): the global batch is split into the strategy's fixed
/// micro-batches; each replica (a thread of the strategy's threads) runs forward, loss and backward on
/// its micro-batches into their own gradient arenas; then one fused pass, sharded over the threads,
/// sums the arenas in micro-batch order and applies the optimizer to the shared parameters.
/// OneDeviceStrategy is the case of one thread running every micro-batch: there is no second code
/// path. A training step allocates nothing and takes no lock.
#ifndef TPUDSL_TRAIN_MODEL_HPP
#define TPUDSL_TRAIN_MODEL_HPP

#include <tpudsl/data/convert.hpp>
#include <tpudsl/data/dataset.hpp>
#include <tpudsl/train/batch_sources.hpp>
#include <tpudsl/train/buffers.hpp>
#include <tpudsl/train/fit_options.hpp>
#include <tpudsl/distribute/all_reduce.hpp>
#include <tpudsl/distribute/strategy.hpp>
#include <tpudsl/io/training_state.hpp>
#include <tpudsl/io/weight_formats.hpp>
#include <tpudsl/model/summary.hpp>
#include <tpudsl/detail/simd.hpp>
#include <tpudsl/ops/graph.hpp>
#include <tpudsl/train/backup.hpp>
#include <tpudsl/train/callbacks.hpp>
#include <tpudsl/data/array_ref.hpp>
#include <tpudsl/detail/text.hpp>
#include <tpudsl/train/history.hpp>
#include <tpudsl/train/initializers.hpp>
#include <tpudsl/train/losses.hpp>
#include <tpudsl/train/metrics.hpp>
#include <tpudsl/train/optimizers.hpp>
#include <tpudsl/train/progbar.hpp>
#include <tpudsl/train/replica_steps.hpp>
#include <tpudsl/train/resume.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <variant>
#include <vector>

namespace tpudsl {

namespace detail {
/// The engine of Trainable<Seq, Strategy>: Keras' API (compile, fit, evaluate, predict, the weights)
/// over the step machinery (replica_steps), for every strategy that splits a step into `MicroBatches`
/// micro-batches. What the strategy decides (its threads, which replicas run here, the other
/// processes of a multi-worker job) it reads at run time (distribute::replica_runner), so that
/// OneDeviceStrategy, TpuStrategy<N> and MultiWorkerStrategy<R> share one engine per model: a program
/// that offers all three compiles the model's machinery once.
/// @tparam Seq          the model type; its constants size every buffer
/// @tparam MicroBatches the fixed pieces a step's global batch is computed in
template <class Seq, std::size_t MicroBatches>
class trainer : public replica_steps<Seq, MicroBatches>, private TrainingControl {
    using steps = replica_steps<Seq, MicroBatches>;

public:
    using typename steps::batch_view;
    using typename steps::graph;
    using typename steps::input_type;
    using typename steps::loss_type;
    using typename steps::optimizer_type;
    using steps::classes;
    using steps::input_size;
    using steps::label_positions;
    using steps::micro_batches;
    using steps::output_size;
    using steps::ensure_capacity;
    using steps::micro_batch_sizes;

    /// Builds the model with Keras' initial weights drawn from `seed`, to run as `runner` says.
    trainer(std::uint64_t seed, distribute::replica_runner runner) : steps(seed, std::move(runner)) {}

    /// Keras' summary table.
    void
    summary(std::ostream& out = std::cout) const
    {
        tpudsl::summary<Seq>(out);
    }

    /// Where the model's warnings go (std::cout unless set; fit's progress goes to FitOptions::out).
    void set_output(std::ostream& out) noexcept { out_ = &out; }
    [[nodiscard]] std::ostream& output() const noexcept { return *out_; }

    /// `compile(optimizer, loss, metrics...)`. Resets the optimizer's state.
    template <class Optimizer, class Loss, class... Metrics>
    void
    compile(Optimizer optimizer, Loss loss, Metrics... metrics)
    {
        compile_with<Optimizer, false>(optimizer, loss, metrics...);
    }

protected:
    /// compile, with the training step of a strategy of processes when `Chained`.
    template <class Optimizer, bool Chained, class Loss, class... Metrics>
    void
    compile_with(Optimizer optimizer, Loss loss, Metrics... metrics)
    {
        optimizers::check(optimizer);   // hyperparameters in their domains, before any state changes
        optimizer_ = optimizer;
        loss_ = loss;
        // Only the compiled optimizer's fused pass and the compiled loss are generated for this model,
        // not those of every optimizer and loss the variants could hold.
        train_ = &steps::template train_with<Optimizer, Chained>;
        score_ = &steps::template score_with<Loss>;
        metrics_ = {detail::make_metric_entry(metrics)...};
        hits_.assign(metrics_.size(), 0.0);
        for (auto& k : micro_batches_)
            k.hits.assign(metrics_.size(), 0.0);
        slots_.resize(Optimizer::slots * Seq::param_buffer_size);
        iterations_ = 0;
        compiled_ = true;
        if constexpr (requires { loss.from_logits; }) {
            if (graph::softmax_output && loss.from_logits && !std::is_same_v<Loss, losses::BinaryCrossentropy>)
                *out_ << "UserWarning: \"`" << Loss::name
                          << "` received `from_logits=True`, but the `output` argument was produced by a Softmax "
                             "activation and thus does not represent logits. Was this intended?\"\n";
        }
    }

public:

    /// `fit(x, y, ...)`: trains on arrays (xtensor containers, or anything with data() and shape()).
    template <class X, class Y>
    History
    fit(const X& x, const Y& y, FitOptions options = {})
    {
        return fit(dataset_ref{make_array_ref(x), make_array_ref(y)}, std::move(options));
    }

    /// Arrays of any numeric element type are converted to the model's once, here (data/convert.hpp).
    History
    fit(const dataset_ref& arrays, FitOptions options)
    {
        require_compiled("fit");
        quiet_unless_chief(options);
        if (options.batch_size == 0u || options.validation_batch_size == 0u)
            detail::bad_input(detail::concat({"fit: ", (options.batch_size == 0u ? "" : "validation_"),
                                              "batch_size must be at least 1"}));
        const detail::model_arrays<input_type> data(arrays, "x", "y", sparse_labels(), classes, vocabulary(), label_positions);
        check_data(data.ref(), "x", "y");
        const std::size_t samples = arrays.x.samples();
        if (samples == 0)
            detail::bad_input("fit: x holds no samples (Keras refuses empty data too)");
        std::optional<detail::model_arrays<input_type>> validation;
        prepare_validation(options, validation);
        // Keras' batch for arrays: as given, else derived from steps_per_epoch, else 32; a batch larger
        // than the data is all of it. Validation takes validation_batch_size, else the batch as given.
        const std::size_t batch = std::min(options.batch_for(samples), samples);
        const std::size_t validation_batch = options.validation_batch();
        ensure_capacity(batch);
        detail::array_source<batch_view> source(batch_view::of(data.ref(), nullptr, samples), options, seed_, batch);
        auto validate = [&] { return validate_on(*options.validation_data, validation_batch, options.out); };
        const detail::fit_signature signature{0, samples, batch, options.steps_per_epoch, options.shuffle};
        return run_epochs(options, source.steps(), source, options.validation_data.has_value(), validate, signature);
    }

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
        detail::dataset_source<trainer, E, B> source(*this, data, 0);
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
        return evaluate(dataset_ref{make_array_ref(x), make_array_ref(y)}, options);
    }

    /// Arrays of any numeric element type are converted to the model's once, here (data/convert.hpp).
    Scores
    evaluate(const dataset_ref& arrays, EvaluateOptions options)
    {
        require_compiled("evaluate");
        quiet_unless_chief(options);
        if (options.batch_size == 0u)
            detail::bad_input("evaluate: batch_size must be at least 1");
        const detail::model_arrays<input_type> data(arrays, "x", "y", sparse_labels(), classes, vocabulary(), label_positions);
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
        const batch_view all = batch_view::of(data.ref(), nullptr, samples);
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

    /// `predict(x)`: the outputs, (samples, output_size) row-major.
    template <class X>
    std::vector<float>
    predict(const X& x, EvaluateOptions options = {})
    {
        std::vector<input_type> converted;   // x of another numeric type, as the model reads it
        const array_ref xr = detail::converted_inputs(make_array_ref(x), "x", vocabulary(), converted);
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
                    const float* y = graph::output(k.workspace.data(), micro_batch_capacity_);
                    std::copy(y, y + k.n * output_size, out.data() + (begin + k.offset) * output_size);
                });
            };
            runner_.run(work);
            if (chained())   // each worker computed its micro-batches' rows
                runner_.workers->share_rows(out.data() + begin * output_size, micro_batch_sizes(n).data(), output_size);
        }
        return out;
    }

    [[nodiscard]] double learning_rate() const override
    {
        return std::visit([](const auto& o) { return static_cast<double>(o.learning_rate); }, optimizer_);
    }
    void set_learning_rate(double lr) override
    {
        optimizers::check_learning_rate(lr, "tpudsl::Trainable::set_learning_rate");
        std::visit([&](auto& o) { o.learning_rate = static_cast<float>(lr); }, optimizer_);
    }
    /// TrainingControl: callbacks write files on the chief of a multi-worker job only.
    [[nodiscard]] bool writes_files() const override
    {
        return !chained() || runner_.workers->is_chief();
    }
    /// The format follows the path (weights_format_of): `.weights.h5` Keras 3, `.h5` Keras 2, else tpudsl's.
    void save_weights(const std::string& path) const override { save_weights_by_path<Seq>(path, params_.data()); }
    void
    load_weights(const std::string& path)
    {
        load_weights_by_path<Seq>(path, params_.data());
        weights_version_ = detail::next_weights_version();
    }
    [[nodiscard]] std::vector<float> get_weights() const override
    {
        return {params_.data(), params_.data() + Seq::param_buffer_size};
    }
    void set_weights(const std::vector<float>& w) override
    {
        if (w.size() != Seq::param_buffer_size)
            detail::bad_input(detail::concat({"set_weights: expected ", std::to_string(Seq::param_buffer_size),
                                              " floats, got ", std::to_string(w.size())}));
        std::copy(w.begin(), w.end(), params_.data());
        weights_version_ = detail::next_weights_version();
    }

    /// One training step on a global batch of n samples already in the micro-batch buffers (as
    /// split(n) lays them out): forward, loss, backward, the fused reduce-and-update. Returns the
    /// sum of the per-sample losses. Allocates nothing. The model must be compiled.
    double
    train_step(std::size_t n)
    {
        require_compiled("train_step");
        return step(nullptr, n, true);
    }

private:
    template <class, class, std::size_t>
    friend struct detail::dataset_source;   // reads check_data and values_fit
    friend struct detail::resume_access;    // saves and restores the training state
    template <class, class>
    friend class tpudsl::Trainable;   // reads fit_dataset and evaluate_dataset

    /// Keras' multi-worker rule: only the chief prints progress.
    template <class Options>
    void
    quiet_unless_chief(Options& options) const noexcept
    {
        if (chained() && !runner_.workers->is_chief())
            options.verbose = 0;
    }

    /// Checks fit's validation data, and points validation arrays at `validation`, which holds them
    /// converted to the model's types (once per fit, not per epoch).
    void
    prepare_validation(FitOptions& options, std::optional<detail::model_arrays<input_type>>& validation) const
    {
        if (!options.validation_data)
            return;
        if (const dataset_ref* v = options.validation_data->arrays()) {
            validation.emplace(*v, "validation x", "validation y", sparse_labels(), classes, vocabulary(), label_positions);
            check_data(validation->ref(), "validation x", "validation y");
            if (v->x.samples() == 0)
                detail::bad_input("fit: validation x holds no samples; pass validation data with at least one "
                                  "sample, or none");
            options.validation_data = ValidationData(validation->ref());
        } else if (options.validation_batch_size) {
            detail::bad_input("fit: validation_batch_size must not be set with a validation Dataset: it brings its "
                              "own batch (Keras refuses both too)");
        }
    }

    /// Validation at the end of an epoch: arrays at the batch fit chose for them, a Dataset at its own.
    Scores
    validate_on(const ValidationData& v, std::size_t batch, std::ostream* out)
    {
        if (const dataset_ref* arrays = v.arrays())
            return evaluate(*arrays, EvaluateOptions{.batch_size = batch, .verbose = 0, .out = out});
        return evaluate(*v.dataset(), EvaluateOptions{.verbose = 0, .out = out});
    }

    /// True when what a dataset knows of its values fits the model: token ids inside the vocabulary and
    /// floats finite, class ids inside the classes (sparse labels) or finite targets.
    [[nodiscard]] bool
    values_fit(const value_summary& v) const noexcept
    {
        if (!v.known)
            return false;
        const bool inputs = std::is_integral_v<input_type>
                                ? v.x_min >= 0 && static_cast<unsigned long long>(v.x_max) < vocabulary()
                                : v.x_finite;
        const bool labels = sparse_labels() ? v.y_min >= 0 && static_cast<unsigned long long>(v.y_max) < classes
                                            : v.y_finite;
        return inputs && labels;
    }

    /// `fit` on a batched Dataset (Trainable checks its type first).
    template <class E, std::size_t B>
    History
    fit_dataset(const Dataset<Batch<E, B>>& data, FitOptions options)
    {
        require_compiled("fit");
        quiet_unless_chief(options);
        if (options.batch_size)
            detail::bad_input(detail::concat({"fit: batch_size must not be set with a Dataset: its batches are its own (Keras "
                                              "refuses both too); batch the dataset instead, dataset.batch<",
                                              std::to_string(*options.batch_size), ">()"}));
        const std::size_t batch = detail::dataset_batch(data, runner_.replicas_in_sync);   // against the replicas
        if (data.cardinality() == 0)
            detail::bad_input("fit: the dataset holds no batch (its cardinality is 0)");
        std::optional<detail::model_arrays<input_type>> validation;
        prepare_validation(options, validation);
        detail::dataset_source<trainer, E, B> source(*this, data, options.initial_epoch);
        std::size_t steps = options.steps_per_epoch;
        if (steps == 0) {
            steps = data.cardinality();
            if (steps == Dataset<Batch<E, B>>::infinite_cardinality)
                throw std::invalid_argument("tpudsl::Trainable::fit: the dataset repeats forever; pass "
                                            "steps_per_epoch (how many batches make an epoch)");
        }
        // Validation arrays: validation_batch_size, else 32 (fit's batch_size is unset with a Dataset).
        const std::size_t validation_batch = options.validation_batch_size.value_or(32);
        auto validate = [&] { return validate_on(*options.validation_data, validation_batch, options.out); };
        const detail::fit_signature signature{1, data.cardinality(), batch, options.steps_per_epoch, 0};
        return run_epochs(options, steps, source, options.validation_data.has_value(), validate, signature);
    }

    /// TrainingControl: the state of the fit in progress (BackupAndRestore; train/resume.hpp).
    void
    save_training_state(const std::string& path) const override
    {
        detail::resume_access::save(*this, path);
    }
    /// TrainingControl: takes everything from a state that save_training_state wrote, once it is
    /// known to belong to this model and this fit (train/resume.hpp).
    void
    restore_training_state(const std::string& path) override
    {
        detail::resume_access::restore(*this, path);
    }

    /// Keras' epoch loop, shared by arrays and datasets. `steps` 0: unknown until the data ends.
    template <class Source, class Validate>
    History
    run_epochs(const FitOptions& options, std::size_t steps, Source& source, bool has_validation, Validate&& validate,
               const detail::fit_signature& signature)
    {
        if (options.validation_freq == 0)
            detail::bad_input("fit: validation_freq must be at least 1 (validate when (epoch + 1) % validation_freq "
                              "== 0; Keras refuses 0 too); to validate only after the last epoch, set it to epochs");
        // What BackupAndRestore reads and writes while this fit runs (restore_training_state, below).
        fit_signature_ = signature;
        fit_epochs_ = options.epochs;
        fit_out_ = options.verbose ? options.out : nullptr;
        resume_.reset();
        in_fit_ = true;
        struct fit_scope {
            bool& in_fit;
            ~fit_scope() { in_fit = false; }
        } scope{in_fit_};
        History history;
        history.params = {options.verbose, options.epochs, steps};
        const bool dynamic = options.out == &std::cout && ::isatty(STDOUT_FILENO);
        Logs logs;
        stop_training = false;
        bool warned_non_finite = false;
        const bool terminates_on_nan = std::ranges::any_of(
            options.callbacks, [](const CallbackRef& cb) { return dynamic_cast<const TerminateOnNaN*>(&cb.get()) != nullptr; });
        std::size_t shown_target = steps;   // learned after the first pass when unknown, as Keras does
        for (auto& cb : options.callbacks)
            cb.on_train_begin(*this);

        const std::size_t first_epoch = resume_ ? resume_->position.epoch : options.initial_epoch;   // restored?
        position_ = {first_epoch, 0, 0, 0};
        for (std::size_t epoch = first_epoch; epoch < options.epochs && !stop_training; ++epoch) {
            logs.clear();
            if (options.verbose && options.epochs > 1)
                *options.out << "Epoch " << epoch + 1 << '/' << options.epochs << '\n';
            for (auto& cb : options.callbacks)
                cb.on_epoch_begin(epoch, logs, *this);
            source.begin_epoch(epoch);
            reset_metrics(logs);
            Progbar bar(*options.out, shown_target, options.verbose, dynamic);
            std::size_t done = 0;
            if (resume_)
                done = detail::resume_access::resume_at(*this, source, logs);
            batch_view b;
            while ((steps == 0 || done < steps) && !stop_training) {
                if (!source.next(b)) {
                    if (steps != 0) {
                        *options.out << "WARNING: Your input ran out of data; interrupting training. Make sure "
                                        "that your dataset or generator can generate at least `steps_per_epoch * "
                                        "epochs` batches (in this case, "
                                     << steps * options.epochs << " batches).\n";
                        stop_training = true;
                    }
                    break;
                }
                const double loss = step(&b, b.n, true);
                accumulate(loss, b.n);
                position_ = source.position(epoch, done + 1);
                if (!std::isfinite(loss) && !warned_non_finite && !terminates_on_nan) {
                    warned_non_finite = true;
                    output() << "WARNING: tpudsl: the loss became " << (std::isnan(loss) ? "nan" : loss > 0 ? "inf" : "-inf")
                             << " at epoch "
                             << epoch + 1 << ", step " << done + 1
                             << "; training goes on, as in Keras, but the weights are no longer finite. Add "
                                "tpudsl::TerminateOnNaN to the callbacks to stop at the first non-finite loss; a "
                                "lower learning rate (now "
                             << learning_rate() << ") or inputs scaled to [0, 1] usually prevent it. Said once per fit.\n";
                }
                write_running_logs(logs);
                bar.update(++done, logs);
                for (auto& cb : options.callbacks)
                    cb.on_train_batch_end(done - 1, logs, *this);
            }
            if (has_validation && (epoch + 1) % options.validation_freq == 0) {
                const auto values = validate();
                logs.set("val_loss", values[0]);
                for (std::size_t m = 0; m < metrics_.size(); ++m)
                    logs.set(detail::concat({"val_", metrics_[m].name}), values[m + 1]);
            }
            // Keras' order: the progress bar ends the line, then the callbacks, then History.
            bar.finish(done, logs);
            if (shown_target == 0)
                shown_target = history.params.steps = done;   // known after the first pass
            position_ = source.position(epoch + 1, 0);
            for (auto& cb : options.callbacks)
                cb.on_epoch_end(epoch, logs, *this);
            history.record(epoch, logs);
        }
        for (auto& cb : options.callbacks)
            cb.on_train_end(*this);
        return history;
    }

    [[nodiscard]] static constexpr std::size_t
    vocabulary() noexcept
    {
        return Seq::template layer<0>::spec::input_bound;
    }

    void
    require_compiled(const char* what) const
    {
        if (!compiled_)
            throw std::logic_error(detail::concat({"tpudsl::Trainable::", what,
                                                   ": the model must be compiled first (call compile(optimizer, loss, metrics...))"}));
    }

    [[nodiscard]] bool
    sparse_labels() const noexcept
    {
        return std::visit([](const auto& l) { return std::decay_t<decltype(l)>::sparse_labels; }, loss_);
    }

    /// Checks data against the model (types, shapes, and unless `values` is false every value).
    void
    check_data(const dataset_ref& d, const char* xname, const char* yname, bool values = true) const
    {
        detail::check_inputs<Seq>(d.x, xname, vocabulary(), values);
        const bool sparse = sparse_labels();
        for (const auto& m : metrics_)
            if (m.sparse_labels != sparse)
                detail::bad_input(detail::concat({"the metric ", m.name, " reads ",
                                                  (m.sparse_labels ? "sparse" : "one-hot"),
                                                  " labels, but the loss reads ", (sparse ? "sparse" : "one-hot"),
                                                  " ones"}));
        detail::check_labels(d.y, yname, d.x.samples(), sparse, sparse ? classes : output_size, values, label_positions);
    }


    /// [loss, metrics...] averaged over the samples seen since reset_metrics, with their names.
    [[nodiscard]] Scores
    scores() const
    {
        const double seen = static_cast<double>(seen_);
        std::vector<std::string> names{"loss"};
        std::vector<double> values{seen_ ? loss_total_ / seen : 0.0};
        for (std::size_t m = 0; m < metrics_.size(); ++m) {
            names.push_back(metrics_[m].name);
            values.push_back(seen_ ? hits_[m] / seen : 0.0);
        }
        return {std::move(names), std::move(values)};
    }

    void
    reset_metrics(Logs& logs)
    {
        loss_total_ = 0.0;
        seen_ = 0;
        std::fill(hits_.begin(), hits_.end(), 0.0);
        logs.set("loss", 0.0);
        for (const auto& m : metrics_)
            logs.set(m.name, 0.0);
    }

    void
    accumulate(double loss_sum, std::size_t n) noexcept
    {
        loss_total_ += loss_sum;
        seen_ += n;
    }

    void
    write_running_logs(Logs& logs) const
    {
        const double seen = static_cast<double>(seen_);
        logs.set("loss", loss_total_ / seen);
        for (std::size_t m = 0; m < metrics_.size(); ++m)
            logs.set(metrics_[m].name, hits_[m] / seen);
    }


    // What the step machinery holds, named here as the Keras API reads it.
    using steps::arenas_;
    using steps::hits_;
    using steps::iterations_;
    using steps::loss_;
    using steps::metrics_;
    using steps::micro_batch_capacity_;
    using steps::micro_batches_;
    using steps::optimizer_;
    using steps::params_;
    using steps::runner_;
    using steps::score_;
    using steps::seed_;
    using steps::slots_;
    using steps::train_;
    using steps::weights_version_;
    using steps::chained;
    using steps::step;
    using steps::split;
    using steps::for_each_micro_batch_of;
    using steps::context;
    using typename steps::micro_batch;

    std::ostream* out_ = &std::cout;
    bool compiled_ = false;
    double loss_total_ = 0.0;
    std::size_t seen_ = 0;

    /// The fit in progress, as BackupAndRestore saves and restores it: which fit, where it stands,
    /// and where a restored one goes on.
    bool in_fit_ = false;
    detail::fit_signature fit_signature_;
    std::size_t fit_epochs_ = 0;             // the fit's `epochs`, which a restored backup is checked against
    std::ostream* fit_out_ = nullptr;        // where the fit reports a resumed backup (null: verbose 0)
    detail::fit_position position_;
    std::optional<detail::resume_point> resume_;
};

} // namespace detail

/// A trainable model of type `Seq` (a `Sequential<...>`), run by `Strategy`: Keras' compile, fit,
/// evaluate, predict and summary (detail::trainer, shared by the strategies of the same micro-batches),
/// and what the strategy's type decides at compile time: the replicas a Dataset's batch must divide into.
/// @tparam Seq      the model type; its constants size every buffer
/// @tparam Strategy OneDeviceStrategy (default), TpuStrategy<N> or MultiWorkerStrategy<R>
template <class Seq, class Strategy = OneDeviceStrategy>
class Trainable final : public detail::trainer<Seq, Strategy::micro_batches> {
    using engine = detail::trainer<Seq, Strategy::micro_batches>;
    /// A strategy whose workers are processes (MultiWorkerStrategy): its steps take the chained reduce.
    static constexpr bool chained = requires { requires Strategy::chained; };

public:
    using strategy_type = Strategy;
    static constexpr std::size_t num_replicas_in_sync = Strategy::num_replicas_in_sync;

    /// Builds the model with Keras' initial weights drawn from `seed`, with a strategy of its own.
    explicit Trainable(std::uint64_t seed = 0) : Trainable(seed, Strategy{}) {}

    /// Builds the model on a strategy's threads (what `strategy.scope<Model>(seed)` does).
    Trainable(std::uint64_t seed, const Strategy& strategy) : engine(seed, strategy.runner()) {}

    using engine::evaluate;
    using engine::fit;

    /// `compile(optimizer, loss, metrics...)`. Resets the optimizer's state.
    template <class Optimizer, class Loss, class... Metrics>
    void
    compile(Optimizer optimizer, Loss loss, Metrics... metrics)
    {
        this->template compile_with<Optimizer, chained>(optimizer, loss, metrics...);
    }

    /// `fit(dataset)`: trains on a batched Dataset; each epoch is a new iteration of it (reshuffled
    /// unless cached). Its examples must have the model's input shape and type, and its batch must
    /// split evenly over the replicas: both are checked at compile time.
    template <class E, std::size_t B>
    History
    fit(const Dataset<Batch<E, B>>& data, FitOptions options = {})
    {
        detail::check_dataset_type<Seq, num_replicas_in_sync, E, B>();
        return this->fit_dataset(data, std::move(options));
    }

    /// `evaluate(dataset)`: [loss, metrics...] over one iteration of a batched Dataset.
    template <class E, std::size_t B>
    Scores
    evaluate(const Dataset<Batch<E, B>>& data, EvaluateOptions options = {})
    {
        detail::check_dataset_type<Seq, num_replicas_in_sync, E, B>();
        return this->evaluate_dataset(data, options);
    }
};

namespace keras {
/// Keras' `keras.Model`, the trained model, as Keras spells it: `tpudsl::keras::Model<FashionCnn>` is
/// `tpudsl::Trainable<FashionCnn>`. It lives in a namespace of its own so that `using namespace
/// tpudsl` leaves free the name users give their model types (`using Model = Sequential<...>`).
template <class Seq, class Strategy = OneDeviceStrategy>
using Model = Trainable<Seq, Strategy>;
} // namespace keras

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_MODEL_HPP
