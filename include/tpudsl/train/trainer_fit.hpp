/// @file Defines detail::trainer, the engine of Trainable<Seq, Strategy> (train/trainable.hpp): Keras'
/// `fit` on arrays and on a batched Dataset, its epoch loop with callbacks, validation and progress,
/// and the state of a fit in progress that BackupAndRestore saves (train/resume.hpp). Evaluation and
/// prediction are trainer_evaluate's (train/trainer_evaluate.hpp); the compile step and what they share,
/// trainer_core's (train/trainer_core.hpp).
#ifndef TPUDSL_TRAIN_TRAINER_FIT_HPP
#define TPUDSL_TRAIN_TRAINER_FIT_HPP

#include <tpudsl/train/callbacks.hpp>
#include <tpudsl/train/resume.hpp>
#include <tpudsl/train/trainer_evaluate.hpp>   // and what it includes: the data's types, options, History

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace tpudsl::detail {

/// The engine of Trainable<Seq, Strategy>: Keras' API (compile, fit, evaluate, predict, the weights)
/// over the step machinery (replica_steps), shared by the strategies that split a step into
/// `MicroBatches` micro-batches (trainer_core says how).
template <class Seq, std::size_t MicroBatches>
class trainer : public trainer_evaluate<Seq, MicroBatches> {
    using evaluation = trainer_evaluate<Seq, MicroBatches>;
    using typename evaluation::batch_view;
    using typename evaluation::input_type;

public:
    using evaluation::evaluation;
    using evaluation::evaluate;

    /// `fit(x, y, ...)`: trains on arrays (xtensor containers, or anything with data() and shape()).
    template <class X, class Y>
    History
    fit(const X& x, const Y& y, FitOptions options = {})
    {
        if constexpr (detail::is_tuple<X> || detail::is_tuple<Y> || detail::packed_inputs_of<Seq> || trainer_core<Seq, MicroBatches>::heads > 1) {
            const PackedArrays packed = this->pack(x, y);   // a graph's several inputs or outputs
            return fit(packed.ref(), std::move(options));
        } else {
            return fit(dataset_ref{make_array_ref(x), make_array_ref(y)}, std::move(options));
        }
    }

    /// Arrays of any numeric element type are converted to the model's once, here (data/convert.hpp).
    History
    fit(const dataset_ref& arrays, FitOptions options)
    {
        this->require_compiled("fit");
        this->quiet_unless_chief(options);
        if (options.batch_size == 0u || options.validation_batch_size == 0u)
            detail::bad_input(detail::concat({"fit: ", (options.batch_size == 0u ? "" : "validation_"),
                                              "batch_size must be at least 1"}));
        const detail::model_arrays<input_type> data(arrays, "x", "y", this->sparse_labels(), this->classes,
                                                    this->vocabulary(), this->label_positions, this->loss_.ignore_class);
        this->check_data(data.ref(), "x", "y");
        dataset_ref train = data.ref();
        if (train.x.samples() == 0)
            detail::bad_input("fit: x holds no samples (Keras refuses empty data too)");
        if (!options.sample_weight.empty() && !options.class_weight.empty())
            detail::bad_input("fit: give class_weight or sample_weight, not both (Keras refuses both too): fold the "
                              "classes' weights into sample_weight");
        std::vector<float> weights = this->sample_weights_of(options.sample_weight, train.x.samples(), "fit");
        split_validation(train, options, weights, validation_weights_);
        const std::size_t samples = train.x.samples();
        if (!options.class_weight.empty())
            weights = this->class_weights_of(options.class_weight, train.y, samples);
        std::optional<detail::model_arrays<input_type>> validation;
        prepare_validation(options, validation);
        // Keras' batch for arrays: as given, else derived from steps_per_epoch, else 32; a batch larger
        // than the data is all of it. Validation takes validation_batch_size, else the batch as given.
        const std::size_t batch = std::min(options.batch_for(samples), samples);
        const std::size_t validation_batch = options.validation_batch();
        this->ensure_capacity(batch);
        batch_view all = batch_view::of(train, nullptr, samples);
        all.weights = weights.empty() ? nullptr : weights.data();
        detail::array_source<batch_view> source(all, options, this->seed_, batch);
        auto validate = [&] { return validate_on(*options.validation_data, validation_batch, options.out); };
        const detail::fit_signature signature{0, samples, batch, options.steps_per_epoch, options.shuffle};
        return run_epochs(options, source.steps(), source, options.validation_data.has_value(), validate, signature);
    }

protected:
    friend struct detail::resume_access;   // saves and restores the fit in progress

    /// `fit` on a batched Dataset (Trainable checks its type first).
    template <class E, std::size_t B>
    History
    fit_dataset(const Dataset<Batch<E, B>>& data, FitOptions options)
    {
        this->require_compiled("fit");
        this->quiet_unless_chief(options);
        if (options.batch_size)
            detail::bad_input(detail::concat({"fit: batch_size must not be set with a Dataset: its batches are its own (Keras "
                                              "refuses both too); batch the dataset instead, dataset.batch<",
                                              std::to_string(*options.batch_size), ">()"}));
        if (options.validation_split != 0.0 && !options.validation_data)
            detail::bad_input("fit: validation_split takes its samples from arrays, not from a Dataset (Keras "
                              "refuses it too); split the dataset with take and skip, and pass the second part as "
                              "validation_data");
        if (!options.sample_weight.empty() || !options.class_weight.empty())
            detail::bad_input("fit: sample_weight and class_weight weigh the samples of arrays; a Dataset's "
                              "samples cannot be weighed yet: fit on the arrays instead");
        validation_weights_.clear();
        const std::size_t batch = detail::dataset_batch(data, this->runner_.replicas_in_sync);   // against the replicas
        if (data.cardinality() == 0)
            detail::bad_input("fit: the dataset holds no batch (its cardinality is 0)");
        std::optional<detail::model_arrays<input_type>> validation;
        prepare_validation(options, validation);
        detail::dataset_source<trainer_core<Seq, MicroBatches>, E, B> source(*this, data, options.initial_epoch);
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

    /// Keras' validation_split: the last fraction of `train`'s samples, before any shuffling, becomes
    /// the validation data (unless validation_data is given: then it is used instead, as in Keras).
    static void
    split_validation(dataset_ref& train, FitOptions& options, std::vector<float>& weights,
                     std::vector<float>& validation_weights)
    {
        validation_weights.clear();
        const double split = options.validation_split;
        if (!(split >= 0.0 && split < 1.0))
            detail::bad_input(detail::concat({"fit: validation_split must lie in [0, 1) (the fraction of the samples "
                                              "validated on), not ", detail::number_text(split)}));
        if (split == 0.0 || options.validation_data)
            return;
        const std::size_t samples = train.x.samples();
        const auto split_at = static_cast<std::size_t>(std::floor(static_cast<double>(samples) * (1.0 - split)));
        if (split_at == 0 || split_at >= samples)
            detail::bad_input(detail::concat({"fit: the training data holds ", std::to_string(samples),
                                              " samples, too few to split into a training and a validation set as "
                                              "validation_split = ", detail::number_text(split),
                                              " asks (Keras refuses it too); give more data or another fraction"}));
        options.validation_data = ValidationData(
            dataset_ref{samples_of(train.x, split_at, samples), samples_of(train.y, split_at, samples)});
        train = {samples_of(train.x, 0, split_at), samples_of(train.y, 0, split_at)};
        if (!weights.empty()) {   // the weights split with their samples
            validation_weights.assign(weights.begin() + static_cast<std::ptrdiff_t>(split_at), weights.end());
            weights.resize(split_at);
        }
    }

    /// Checks fit's validation data, and points validation arrays at `validation`, which holds them
    /// converted to the model's types (once per fit, not per epoch).
    void
    prepare_validation(FitOptions& options, std::optional<detail::model_arrays<input_type>>& validation) const
    {
        if (!options.validation_data)
            return;
        if (const dataset_ref* v = options.validation_data->arrays()) {
            validation.emplace(*v, "validation x", "validation y", this->sparse_labels(), this->classes,
                               this->vocabulary(), this->label_positions, this->loss_.ignore_class);
            this->check_data(validation->ref(), "validation x", "validation y");
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
        EvaluateOptions quiet;
        quiet.verbose = 0;
        quiet.out = out;
        if (const dataset_ref* arrays = v.arrays()) {
            quiet.batch_size = batch;
            return this->evaluate_arrays(*arrays, quiet, validation_weights_.empty() ? nullptr : validation_weights_.data());
        }
        return evaluate(*v.dataset(), quiet);
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
        this->stop_training = false;
        bool warned_non_finite = false;
        const bool terminates_on_nan = std::ranges::any_of(
            options.callbacks, [](const CallbackRef& cb) { return dynamic_cast<const TerminateOnNaN*>(&cb.get()) != nullptr; });
        std::size_t shown_target = steps;   // learned after the first pass when unknown, as Keras does
        for (auto& cb : options.callbacks)
            cb.on_train_begin(*this);

        const std::size_t first_epoch = resume_ ? resume_->position.epoch : options.initial_epoch;   // restored?
        position_ = {first_epoch, 0, 0, 0};
        for (std::size_t epoch = first_epoch; epoch < options.epochs && !this->stop_training; ++epoch) {
            logs.clear();
            if (options.verbose && options.epochs > 1)
                *options.out << "Epoch " << epoch + 1 << '/' << options.epochs << '\n';
            for (auto& cb : options.callbacks)
                cb.on_epoch_begin(epoch, logs, *this);
            source.begin_epoch(epoch);
            this->reset_metrics(logs);
            Progbar bar(*options.out, shown_target, options.verbose, dynamic);
            std::size_t done = 0;
            if (resume_)
                done = detail::resume_access::resume_at(*this, source, logs);
            batch_view b;
            while ((steps == 0 || done < steps) && !this->stop_training) {
                if (!source.next(b)) {
                    if (steps != 0) {
                        *options.out << "WARNING: Your input ran out of data; interrupting training. Make sure "
                                        "that your dataset or generator can generate at least `steps_per_epoch * "
                                        "epochs` batches (in this case, "
                                     << steps * options.epochs << " batches).\n";
                        this->stop_training = true;
                    }
                    break;
                }
                const double loss = this->step(&b, b.n, true);
                this->accumulate(loss, b.n);
                position_ = source.position(epoch, done + 1);
                if (!std::isfinite(loss) && !warned_non_finite && !terminates_on_nan) {
                    warned_non_finite = true;
                    this->output() << "WARNING: tpudsl: the loss became "
                                   << (std::isnan(loss) ? "nan" : loss > 0 ? "inf" : "-inf") << " at epoch "
                                   << epoch + 1 << ", step " << done + 1
                                   << "; training goes on, as in Keras, but the weights are no longer finite. Add "
                                      "tpudsl::TerminateOnNaN to the callbacks to stop at the first non-finite "
                                      "loss; a lower learning rate (now "
                                   << this->learning_rate()
                                   << ") or inputs scaled to [0, 1] usually prevent it. Said once per fit.\n";
                }
                this->write_running_logs(logs);
                bar.update(++done, logs);
                for (auto& cb : options.callbacks)
                    cb.on_train_batch_end(done - 1, logs, *this);
            }
            if (has_validation && (epoch + 1) % options.validation_freq == 0) {
                const Scores values = validate();
                for (std::size_t i = 0; i < values.size(); ++i)   // the loss, the metrics, each output's loss
                    logs.set(detail::concat({"val_", values.names()[i]}), values[i]);
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
        this->finalize_moving_average();   // Keras' finalize_variable_values, before on_train_end
        for (auto& cb : options.callbacks)
            cb.on_train_end(*this);
        return history;
    }

    /// The fit in progress, as BackupAndRestore saves and restores it: which fit, where it stands,
    /// and where a restored one goes on.
    bool in_fit_ = false;
    detail::fit_signature fit_signature_;
    std::size_t fit_epochs_ = 0;             // the fit's `epochs`, which a restored backup is checked against
    std::ostream* fit_out_ = nullptr;        // where the fit reports a resumed backup (null: verbose 0)
    detail::fit_position position_;
    std::optional<detail::resume_point> resume_;

    /// The validation samples' weights of a fit with sample_weight and validation_split (else empty).
    std::vector<float> validation_weights_;
};

} // namespace tpudsl::detail

#endif // !TPUDSL_TRAIN_TRAINER_FIT_HPP
