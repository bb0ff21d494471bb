/// @file Defines tpudsl::Trainable<Model, Strategy>: the trainable object of a model type, with Keras'
/// compile, fit, evaluate, predict and summary, on one core or on the replicas of a strategy.
///
/// Memory: the parameters, the optimizer's slots and one gradient arena per micro-batch are allocated
/// when the model is built (sizes are constants of the type); the micro-batches' workspaces, input and
/// label buffers when `fit`/`evaluate`/`predict` first see a batch size (B / micro-batches x constants of the
/// type). A training step allocates nothing and takes no lock.
///
/// A step: the global batch is split into the strategy's fixed micro-batches; each replica (a thread of
/// the strategy's threads) runs forward, loss and backward on its micro-batches into their own gradient
/// arenas; then one fused pass, sharded over the threads, sums the arenas in micro-batch order and
/// applies the optimizer to the shared parameters. OneDeviceStrategy is the case of one micro-batch on
/// the calling thread: there is no second code path.
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
#include <tpudsl/train/history.hpp>
#include <tpudsl/train/initializers.hpp>
#include <tpudsl/train/losses.hpp>
#include <tpudsl/train/metrics.hpp>
#include <tpudsl/train/optimizers.hpp>
#include <tpudsl/train/progbar.hpp>
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
/// The engine of Trainable<Seq, Strategy>: all it does, for every strategy that splits a step into
/// `MicroBatches` micro-batches. What the strategy decides (its threads, which replicas run here, the
/// other processes of a multi-worker job) it reads at run time (distribute::replica_runner), so that
/// OneDeviceStrategy, TpuStrategy<N> and MultiWorkerStrategy<R> share one engine per model: a program
/// that offers all three compiles the model's machinery once.
/// @tparam Seq          the model type; its constants size every buffer
/// @tparam MicroBatches the fixed pieces a step's global batch is computed in
template <class Seq, std::size_t MicroBatches>
class trainer : private TrainingControl {
public:
    using sequential = Seq;
    using graph = ops::graph<Seq>;
    using input_type = typename Seq::input_type;
    static constexpr std::size_t input_size = Seq::input_shape::size;
    static constexpr std::size_t output_size = Seq::output_shape::size;
    /// The output's last axis, and the rows of it a sample holds: a (T, classes) output (a per-timestep
    /// classifier) takes T labels a sample, each scored on its own row as Keras does.
    static constexpr std::size_t classes = Seq::output_shape::dims[Seq::output_shape::rank - 1];
    static constexpr std::size_t label_positions = output_size / classes;
    static constexpr std::size_t micro_batches = MicroBatches;
    /// What a step reads: samples and their labels, typed.
    using batch_view = detail::batch_view<input_type, input_size, output_size, label_positions>;

    using optimizer_type = std::variant<optimizers::SGD, optimizers::Adam, optimizers::Nadam, optimizers::RMSprop>;
    using loss_type = std::variant<losses::SparseCategoricalCrossentropy, losses::CategoricalCrossentropy,
                                   losses::BinaryCrossentropy, losses::MeanSquaredError>;

    /// Builds the model with Keras' initial weights drawn from `seed`, to run as `runner` says.
    trainer(std::uint64_t seed, distribute::replica_runner runner)
        : seed_(seed), runner_(std::move(runner)), params_(Seq::param_buffer_size), micro_batches_(micro_batches)
    {
        for (std::size_t c = 0; c < micro_batches; ++c)
            if (runs_here(c)) {   // another worker's micro-batches need no buffers here
                micro_batches_[c].grads.resize(Seq::param_buffer_size);
                micro_batches_[c].marks.assign(graph::marked_table ? (graph::table.rows + 63) / 64 : 0, 0);
            }
        initialize_parameters<Seq>(params_.data(), seed_);
        if (chained())   // Keras' multi-worker rule: every worker starts from the chief's weights
            runner_.workers->broadcast_from_chief(params_.data(), Seq::param_buffer_size);
    }

    trainer(const trainer&) = delete;
    trainer& operator=(const trainer&) = delete;

    /// Keras' summary table.
    void
    summary(std::ostream& out = std::cout) const
    {
        tpudsl::summary<Seq>(out);
    }

    /// Where the model's warnings go (std::cout unless set; fit's progress goes to FitOptions::out).
    void set_output(std::ostream& out) noexcept { out_ = &out; }
    [[nodiscard]] std::ostream& output() const noexcept { return *out_; }

    /// Threads that run the replicas.
    [[nodiscard]] std::size_t threads() const noexcept { return runner_.threads(); }

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
        train_ = &trainer::train_with<Optimizer, Chained>;
        score_ = &trainer::score_with<Loss>;
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
            detail::bad_input(std::string("fit: ") + (options.batch_size == 0u ? "" : "validation_") +
                              "batch_size must be at least 1");
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
            detail::bad_input("evaluate(validation Dataset): its batch size (" + std::to_string(batch) +
                              ") must be a multiple of the strategy's " + std::to_string(runner_.replicas_in_sync) +
                              " replicas");
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
                throw std::invalid_argument(std::string(e.what()) + " (in batch " + std::to_string(steps) +
                                            " of the validation dataset)");
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

    /// Each thread's kernel scratch (kernels::scratch_arena): sized by the model's plan for the largest
    /// batch so far; `overflows()` counts requests the plan did not foresee (zero when it sized all).
    [[nodiscard]] const std::vector<kernels::scratch_arena>&
    scratch_arenas() const noexcept
    {
        return arenas_;
    }

    /// The flat parameter buffer (Keras' weights in order, each at `layer<I>::weight<J>::offset`).
    /// Writing through it counts as changing the weights.
    [[nodiscard]] float*
    parameters() noexcept
    {
        weights_version_ = detail::next_weights_version();
        return params_.data();
    }
    [[nodiscard]] const float* parameters() const noexcept { return params_.data(); }

    /// Optimizer steps taken (Keras' `optimizer.iterations`).
    [[nodiscard]] std::uint64_t iterations() const noexcept { return iterations_; }

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
            detail::bad_input("set_weights: expected " + std::to_string(Seq::param_buffer_size) + " floats, got " +
                              std::to_string(w.size()));
        std::copy(w.begin(), w.end(), params_.data());
        weights_version_ = detail::next_weights_version();
    }

    /// Makes room for global batches of up to `batch` samples (allocates only when it grows).
    void
    ensure_capacity(std::size_t batch)
    {
        const std::size_t cap = batch / micro_batches + (batch % micro_batches != 0);
        if (cap <= micro_batch_capacity_)
            return;
        check_memory(batch, cap);
        for (auto& k : micro_batches_) {
            if (!runs_here(static_cast<std::size_t>(&k - micro_batches_.data())))
                continue;
            k.workspace.resize(graph::workspace_floats(cap));
            k.inputs.assign(cap * input_size, input_type{});
            k.sparse_labels.assign(cap * label_positions, 0);
            k.dense_labels.assign(cap * output_size, 0.0f);
        }
        const kernels::scratch_sizes sizes =
            graph::scratch_sizes({.micro_batch = cap, .replica = cap * runner_.per_replica, .step = cap * micro_batches});
        const std::vector<std::size_t> kept(graph::kept_floats.begin(), graph::kept_floats.end());
        arenas_.clear();
        for (std::size_t t = 0; t < runner_.threads(); ++t)
            arenas_.emplace_back(sizes, kept);
        micro_batch_capacity_ = cap;
    }

    /// Refuses a batch whose buffers (the micro-batches' workspaces, inputs and labels, the threads'
    /// kernel scratch) would take more than the machine's memory, before allocating any of them.
    void
    check_memory(std::size_t batch, std::size_t cap) const
    {
        const kernels::scratch_sizes sizes =
            graph::scratch_sizes({.micro_batch = cap, .replica = cap * runner_.per_replica, .step = cap * micro_batches});
        long double scratch = static_cast<long double>(sizes.rows) * sizeof(kernels::detail::row_ref);
        for (const std::size_t f : sizes.floats)
            scratch += static_cast<long double>(f) * sizeof(float);
        const long double per_sample = static_cast<long double>(graph::plan.per_sample) * sizeof(float) +
                                       input_size * sizeof(input_type) + label_positions * sizeof(std::int32_t) +
                                       output_size * sizeof(float);
        const long double bytes = static_cast<long double>(micro_batches) * cap * per_sample +
                                  static_cast<long double>(runner_.threads()) * scratch;
        detail::check_batch_memory(batch, per_sample, bytes);
    }

    /// How a global batch of n splits over the micro-batches: sizes differ by at most one, the first
    /// n % micro-batches take the extra sample (TensorFlow's floor/ceil rule); some may be empty.
    [[nodiscard]] static constexpr std::array<std::size_t, micro_batches>
    micro_batch_sizes(std::size_t n) noexcept
    {
        std::array<std::size_t, micro_batches> sizes{};
        for (std::size_t c = 0; c < micro_batches; ++c)
            sizes[c] = n / micro_batches + (c < n % micro_batches ? 1 : 0);
        return sizes;
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

    /// One micro-batch: its buffers, its share of this step, and its results.
    struct alignas(64) micro_batch {
        detail::aligned_floats_buffer workspace;
        detail::aligned_floats_buffer grads;   // the gradient arena, in the parameter layout
        std::vector<std::uint64_t> marks;      // graph::marked_table: the table rows this step's backward touched
        std::vector<input_type> inputs;   // the samples gathered from arrays (or written by train_step's caller)
        std::vector<std::int32_t> sparse_labels;
        std::vector<float> dense_labels;
        // This step's samples and labels: the buffers above, or a Dataset batch read in place.
        const input_type* x = nullptr;
        const std::int32_t* sparse = nullptr;
        const float* dense = nullptr;
        std::vector<double> hits;
        std::size_t offset = 0, n = 0;   // this step's samples: [offset, offset + n) of the batch
        double loss = 0.0;
    };

    /// True for a strategy whose workers are processes (MultiWorkerStrategy): the chained reduce,
    /// shared scores.
    [[nodiscard]] bool chained() const noexcept { return runner_.workers != nullptr; }

    /// This process's micro-batches: [first_here(), last_here()) (all of them but in a multi-worker job).
    [[nodiscard]] std::size_t first_here() const noexcept { return runner_.first * runner_.per_replica; }
    [[nodiscard]] std::size_t last_here() const noexcept { return runner_.last * runner_.per_replica; }

    /// True when micro-batch c is computed in this process.
    [[nodiscard]] bool runs_here(std::size_t c) const noexcept { return c >= first_here() && c < last_here(); }

    /// Keras' multi-worker rule: only the chief prints progress.
    template <class Options>
    void
    quiet_unless_chief(Options& options) const noexcept
    {
        if (chained() && !runner_.workers->is_chief())
            options.verbose = 0;
    }
    static_assert(micro_batches <= distribute::max_micro_batches,
                  "tpudsl::Trainable: a strategy may split a step into at most 64 micro-batches");
    template <class, class>
    friend class tpudsl::Trainable;   // reads fit_dataset and evaluate_dataset

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
            detail::bad_input("fit: batch_size must not be set with a Dataset: its batches are its own (Keras "
                              "refuses both too); batch the dataset instead, dataset.batch<" +
                              std::to_string(*options.batch_size) + ">()");
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
        // What BackupAndRestore reads and writes while this fit runs (restore_training_state, below).
        fit_signature_ = signature;
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
            cb->on_train_begin(*this);

        const std::size_t first_epoch = resume_ ? resume_->position.epoch : options.initial_epoch;   // restored?
        position_ = {first_epoch, 0, 0, 0};
        for (std::size_t epoch = first_epoch; epoch < options.epochs && !stop_training; ++epoch) {
            logs.clear();
            if (options.verbose && options.epochs > 1)
                *options.out << "Epoch " << epoch + 1 << '/' << options.epochs << '\n';
            for (auto& cb : options.callbacks)
                cb->on_epoch_begin(epoch, logs, *this);
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
                    cb->on_train_batch_end(done - 1, logs, *this);
            }
            if (has_validation && options.validation_freq && (epoch + 1) % options.validation_freq == 0) {
                const auto values = validate();
                logs.set("val_loss", values[0]);
                for (std::size_t m = 0; m < metrics_.size(); ++m)
                    logs.set("val_" + metrics_[m].name, values[m + 1]);
            }
            // Keras' order: the progress bar ends the line, then the callbacks, then History.
            bar.finish(done, logs);
            if (shown_target == 0)
                shown_target = history.params.steps = done;   // known after the first pass
            position_ = source.position(epoch + 1, 0);
            for (auto& cb : options.callbacks)
                cb->on_epoch_end(epoch, logs, *this);
            history.record(epoch, logs);
        }
        for (auto& cb : options.callbacks)
            cb->on_train_end(*this);
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
            throw std::logic_error(std::string("tpudsl::Trainable::") + what +
                                   ": the model must be compiled first (call compile(optimizer, loss, metrics...))");
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
                detail::bad_input("the metric " + m.name + " reads " + (m.sparse_labels ? "sparse" : "one-hot") +
                                  " labels, but the loss reads " + (sparse ? "sparse" : "one-hot") + " ones");
        detail::check_labels(d.y, yname, d.x.samples(), sparse, sparse ? classes : output_size, values, label_positions);
    }

    void
    split(std::size_t n) noexcept
    {
        const auto sizes = micro_batch_sizes(n);
        std::size_t offset = 0;
        for (std::size_t c = 0; c < micro_batches; ++c) {
            micro_batches_[c].offset = offset;
            micro_batches_[c].n = sizes[c];
            offset += sizes[c];
        }
    }

    /// Calls f(c) for the micro-batches of the replicas that thread t runs (replicas round-robin).
    template <class F>
    void
    for_each_micro_batch_of(std::size_t t, F&& f) const
    {
        const std::size_t per = runner_.per_replica;
        runner_.for_each_replica_of(t, [&](std::size_t r) {
            for (std::size_t c = r * per; c < (r + 1) * per; ++c)
                f(c);
        });
    }

    /// Points a micro-batch at its samples: when `b.idx` is null, samples [k.offset, k.offset + k.n) of
    /// the batch in order, read where they lie (a Dataset's batch, arrays in order: no copy); otherwise
    /// it copies the samples idx[k.offset..k.offset + k.n) into its own buffers (arrays, shuffled).
    void
    gather(const batch_view& b, micro_batch& k) const noexcept
    {
        if (!b.idx) {
            k.x = b.x + k.offset * input_size;
            if (b.sparse)
                k.sparse = b.sparse + k.offset * label_positions;
            else
                k.dense = b.dense + k.offset * output_size;
            return;
        }
        const std::uint32_t* idx = b.idx + k.offset;
        for (std::size_t s = 0; s < k.n; ++s)
            std::copy_n(b.x + static_cast<std::size_t>(idx[s]) * input_size, input_size, k.inputs.data() + s * input_size);
        if (b.sparse) {
            for (std::size_t s = 0; s < k.n; ++s)
                std::copy_n(b.sparse + static_cast<std::size_t>(idx[s]) * label_positions, label_positions,
                            k.sparse_labels.data() + s * label_positions);
        } else {
            for (std::size_t s = 0; s < k.n; ++s)
                std::copy_n(b.dense + static_cast<std::size_t>(idx[s]) * output_size, output_size,
                            k.dense_labels.data() + s * output_size);
        }
    }

    /// Clears a micro-batch's loss and hits (and last step's marks), points it at its samples (gather;
    /// without data, at what its own buffers hold) and marks its token ids. False when it has no samples.
    bool
    prepare_micro_batch(micro_batch& k, const batch_view* data, bool training) noexcept
    {
        k.loss = 0.0;
        std::fill(k.hits.begin(), k.hits.end(), 0.0);
        if constexpr (graph::marked_table)
            if (training)   // last step's marks were used by its fused pass, which cleared their rows
                std::fill(k.marks.begin(), k.marks.end(), std::uint64_t{0});
        if (k.n == 0)
            return false;   // an empty replica contributes nothing
        k.x = k.inputs.data();
        k.sparse = k.sparse_labels.data();
        k.dense = k.dense_labels.data();
        if (data)
            gather(*data, k);
        if constexpr (graph::marked_table)
            if (training)
                distribute::mark_rows(k.marks.data(), k.x, k.n * input_size);
        return true;
    }

    [[nodiscard]] step_context
    context(bool training, std::size_t first_sample) const noexcept
    {
        return {.training = training,
                .seed = seed_,
                .step = iterations_,
                .first_sample = first_sample,
                .weights_version = weights_version_};
    }

    /// The loss (into k.loss, its gradient into the workspace) and the metrics' hits of a micro-batch
    /// after its forward; true when the gradient is with respect to the logits.
    bool
    score_micro_batch(micro_batch& k, std::size_t global_n) noexcept
    {
        loss_view view;
        view.n = k.n;
        view.width = output_size;
        view.output = graph::output(k.workspace.data(), micro_batch_capacity_);
        if constexpr (graph::softmax_output)
            view.logits = graph::logits(k.workspace.data(), micro_batch_capacity_, k.n);
        view.sparse_labels = k.sparse;
        view.dense_labels = k.dense;
        k.loss = score_(loss_, view, global_n, graph::loss_gradient(k.workspace.data(), micro_batch_capacity_));
        // Accuracies over the last axis, per timestep: a sample's hits are the fraction it gets right.
        for (std::size_t m = 0; m < metrics_.size(); ++m)
            k.hits[m] = metrics_[m].hits(view.output, k.n * label_positions, classes, k.sparse, k.dense) /
                        static_cast<double>(label_positions);
        return view.logit_grad;
    }

    /// Forward, loss and metrics (and backward when training) of one micro-batch; `global_n` scales
    /// the loss, so that the replicas' summed gradients are the gradient of the global batch's mean.
    void
    run_micro_batch(micro_batch& k, const batch_view* data, std::size_t global_n, bool training) noexcept
    {
        if (!prepare_micro_batch(k, data, training))
            return;
        graph::forward(params_.data(), k.x, k.workspace.data(), micro_batch_capacity_, k.n,
                       context(training, k.offset));
        const bool logit_grad = score_micro_batch(k, global_n);
        if (training)
            graph::backward(params_.data(), k.x, k.workspace.data(), micro_batch_capacity_, k.n, k.grads.data(),
                            logit_grad, nullptr, /*defer_kernels*/ true);
    }

    /// run_micro_batch on every micro-batch of replica r, for a dense network (graph::rows_only) layer by layer
    /// over them all: each Dense reads its kernel once per replica, not once per micro-batch. The same
    /// bits as run_micro_batch on each.
    void
    run_replica_rows(std::size_t r, const batch_view* data, std::size_t global_n, bool training) noexcept
    {
        const std::size_t per = runner_.per_replica;
        typename graph::micro_batch batches[micro_batches];
        std::size_t count = 0;
        for (std::size_t c = r * per; c < (r + 1) * per; ++c) {
            micro_batch& k = micro_batches_[c];
            if (prepare_micro_batch(k, data, training))
                batches[count++] = {k.x, k.workspace.data(), k.n, k.offset, k.grads.data()};
        }
        if (count == 0)
            return;
        graph::forward_micro_batches(params_.data(), batches, count, micro_batch_capacity_, context(training, 0));
        bool logit_grad = false;
        for (std::size_t c = r * per; c < (r + 1) * per; ++c)
            if (micro_batches_[c].n > 0)
                logit_grad = score_micro_batch(micro_batches_[c], global_n);
        if (training)
            graph::backward_micro_batches(params_.data(), batches, count, micro_batch_capacity_, logit_grad, /*defer_kernels*/ true);
    }

    /// The loss of a view (and its gradient into `grad`) by the compiled loss `L`, scaled so that the
    /// replicas' sums are the mean over the global batch of n samples.
    template <class L>
    static double
    score_with(const loss_type& loss, loss_view& view, std::size_t global_n, float* grad) noexcept
    {
        const L& l = *std::get_if<L>(&loss);
        if constexpr (label_positions > 1 && L::over_last_axis) {
            // Keras: a loss per timestep, their mean a sample's loss.
            view.n *= label_positions;
            view.width = classes;
            return tpudsl::evaluate(l, view, 1.0f / static_cast<float>(global_n * label_positions), grad) /
                   static_cast<double>(label_positions);
        }
        return tpudsl::evaluate(l, view, 1.0f / static_cast<float>(global_n), grad);
    }

    /// The micro-batches of the replicas that thread t runs, each through run_micro_batch (or the replica's
    /// all at once, for a dense network).
    void
    run_thread(std::size_t t, const batch_view* data, std::size_t global_n, bool training) noexcept
    {
        const kernels::scratch_scope scratch(arenas_[t]);
        if constexpr (graph::rows_only) {
            runner_.for_each_replica_of(t, [&](std::size_t r) { run_replica_rows(r, data, global_n, training); });
        } else {
            for_each_micro_batch_of(t, [&](std::size_t c) { run_micro_batch(micro_batches_[c], data, global_n, training); });
        }
    }

    /// The fused pass over thread t's shard of the parameters (distribute::reduce_and_update): the
    /// deferred kernels' gradients over every micro-batch (graph::deferred_gradient, into arena 0),
    /// elsewhere the arenas summed in micro-batch order, the optimizer applied in the same pass.
    template <class Opt>
    void
    reduce_and_update(std::size_t t, std::size_t threads, const Opt& opt, const typename Opt::step_constants& c) noexcept
    {
        const kernels::scratch_scope scratch(arenas_[t]);
        float* slot_ptrs[4] = {};
        for (std::size_t s = 0; s < Opt::slots; ++s)
            slot_ptrs[s] = slots_.data() + s * Seq::param_buffer_size;
        distribute::micro_batch_gradients gradients[micro_batches];
        typename graph::micro_batch batches[micro_batches];
        for (std::size_t k = 0; k < micro_batches; ++k) {
            gradients[k] = {micro_batches_[k].grads.data(), micro_batches_[k].marks.data(), micro_batches_[k].n > 0};
            batches[k] = {micro_batches_[k].x, micro_batches_[k].workspace.data(), micro_batches_[k].n};
        }
        distribute::reduce_and_update(
            t, threads, graph::gradient_layout, gradients, params_.data(),
            [&](std::size_t lo, std::size_t hi, float* g0) {
                graph::deferred_gradient(batches, micro_batches, micro_batch_capacity_, lo, hi, g0);
            },
            [&](float* g0, std::size_t b, std::size_t e) { opt.update(c, params_.data(), g0, slot_ptrs, b, e); });
    }

    /// A multi-worker strategy's link of the chained reduce (distribute::chain_reduce) over [lo, hi) of
    /// `sums`: this worker's micro-batches go on with the chain the previous worker sent (or start it).
    void
    chain_link(std::size_t lo, std::size_t hi, float* sums, bool first_link, std::size_t t) noexcept
    {
        const kernels::scratch_scope scratch(arenas_[t]);
        const std::size_t first = first_here(), count = last_here() - first;
        distribute::micro_batch_gradients gradients[micro_batches];
        typename graph::micro_batch batches[micro_batches];
        for (std::size_t k = 0; k < count; ++k) {
            micro_batch& m = micro_batches_[first + k];
            gradients[k] = {m.grads.data(), m.marks.data(), m.n > 0};
            batches[k] = {m.x, m.workspace.data(), m.n};
        }
        if (first_link && !gradients[0].has_samples) {   // a worker without samples (Reduction::allreduce) adds zero
            std::fill(sums + lo, sums + hi, 0.0f);
            return;
        }
        distribute::chain_reduce(lo, hi, graph::gradient_layout, std::span(gradients, count), sums, first_link,
                                 [&](std::size_t b, std::size_t e, float* g, bool go_on) {
                                     graph::deferred_gradient(batches, count, micro_batch_capacity_, b, e, g, go_on);
                                 });
    }

    /// The step's sums[lo, hi), the same on every worker, applied (distribute::chain_update).
    template <class Opt>
    void
    chain_apply(std::size_t lo, std::size_t hi, float* sums, const Opt& opt, const typename Opt::step_constants& c) noexcept
    {
        float* slot_ptrs[4] = {};
        for (std::size_t s = 0; s < Opt::slots; ++s)
            slot_ptrs[s] = slots_.data() + s * Seq::param_buffer_size;
        const std::size_t first = first_here(), count = last_here() - first;
        distribute::micro_batch_gradients gradients[micro_batches];
        std::size_t with_samples = 0;
        for (std::size_t k = 0; k < micro_batches; ++k)
            with_samples += micro_batches_[k].n > 0;
        for (std::size_t k = 0; k < count; ++k) {
            micro_batch& m = micro_batches_[first + k];
            gradients[k] = {m.grads.data(), m.marks.data(), m.n > 0};
        }
        distribute::chain_update(lo, hi, graph::gradient_layout, std::span(gradients, count), sums, params_.data(),
                                 with_samples,
                                 [&](float* g, std::size_t b, std::size_t e) { opt.update(c, params_.data(), g, slot_ptrs, b, e); });
    }

    /// A training step's replicas and fused pass with the compiled optimizer `Opt`, on the strategy's
    /// threads (the fused reduce-and-update), or over a multi-worker strategy's processes (the chained
    /// reduce) when `Chained`. Trainable<Seq, Strategy>::compile picks the chained one only for a
    /// strategy of processes, so that single-process programs do not generate it.
    template <class Opt, bool Chained>
    void
    train_with(const batch_view* data, std::size_t n) noexcept
    {
        Opt& opt = *std::get_if<Opt>(&optimizer_);
        ++iterations_;
        const auto constants = opt.prepare(iterations_);
        if constexpr (Chained)
            runner_.workers->chained_step(
                Seq::param_buffer_size, [&](std::size_t t) { run_thread(t, data, n, true); },
                [&](std::size_t lo, std::size_t hi, float* sums, bool first_link, std::size_t t) {
                    chain_link(lo, hi, sums, first_link, t);
                },
                [&](std::size_t lo, std::size_t hi, float* sums, std::size_t) { chain_apply(lo, hi, sums, opt, constants); });
        else
            runner_.step([&](std::size_t t) { run_thread(t, data, n, true); },
                         [&](std::size_t t, std::size_t threads) { reduce_and_update(t, threads, opt, constants); });
        opt.advance(constants);
        weights_version_ = detail::next_weights_version();
    }

    /// One step over a global batch of n: optionally points the micro-batches at `data`'s samples (or
    /// gathers them), runs them on the strategy's threads, and when training applies the fused
    /// update. Sums losses and hits in micro-batch order (deterministic). Allocates nothing.
    double
    step(const batch_view* data, std::size_t n, bool training) noexcept
    {
        split(n);
        if (!training) {
            runner_.run([&](std::size_t t) { run_thread(t, data, n, false); });
        } else {
            (this->*train_)(data, n);
        }
        if (chained())   // every worker sums every micro-batch's scores, in order
            runner_.workers->share_scores(
                1 + metrics_.size(),
                [&](std::size_t c, double* row) {
                    row[0] = micro_batches_[c].loss;
                    std::copy(micro_batches_[c].hits.begin(), micro_batches_[c].hits.end(), row + 1);
                },
                [&](std::size_t c, const double* row) {
                    micro_batches_[c].loss = row[0];
                    std::copy(row + 1, row + 1 + metrics_.size(), micro_batches_[c].hits.begin());
                });
        double loss_sum = 0.0;
        for (const auto& k : micro_batches_) {
            loss_sum += k.loss;
            for (std::size_t m = 0; m < metrics_.size(); ++m)
                hits_[m] += k.hits[m];
        }
        return loss_sum;
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

    std::uint64_t seed_;
    std::ostream* out_ = &std::cout;
    distribute::replica_runner runner_;   // shares its threads with the strategy object it was made in
    detail::aligned_floats_buffer params_;
    detail::aligned_floats_buffer slots_;
    std::vector<micro_batch> micro_batches_;
    std::size_t micro_batch_capacity_ = 0;
    /// Each thread's kernel scratch, sized by the graph's plan for micro_batch_capacity_.
    std::vector<kernels::scratch_arena> arenas_;

    optimizer_type optimizer_;
    loss_type loss_;
    void (trainer::*train_)(const batch_view*, std::size_t) noexcept = nullptr;   // set by compile
    double (*score_)(const loss_type&, loss_view&, std::size_t, float*) noexcept = nullptr;
    std::vector<detail::metric_entry> metrics_;
    bool compiled_ = false;
    std::uint64_t iterations_ = 0;
    /// A new process-unique value whenever the parameters may change (0 would mean "unknown"), so
    /// no two models, even one built where another was freed, share a version.
    std::uint64_t weights_version_ = detail::next_weights_version();

    double loss_total_ = 0.0;
    std::size_t seen_ = 0;
    std::vector<double> hits_;

    /// The fit in progress, as BackupAndRestore saves and restores it: which fit, where it stands,
    /// and where a restored one goes on.
    bool in_fit_ = false;
    detail::fit_signature fit_signature_;
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
