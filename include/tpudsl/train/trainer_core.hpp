/// @file Defines detail::trainer_core, the part of a trainable model's engine that compile sets up and
/// that fit and evaluate share: the compiled optimizer, loss and metrics, the running scores, the
/// checks of data against the model, and the weights. detail::trainer_evaluate
/// (train/trainer_evaluate.hpp) and detail::trainer (train/trainer_fit.hpp) build on it; Trainable
/// (train/trainable.hpp) is what users hold.
///
/// A step (train/replica_steps.hpp): the global batch is split into the strategy's fixed
/// micro-batches; each replica (a thread of the strategy's threads) runs forward, loss and backward on
/// its micro-batches into their own gradient arenas; then one fused pass, sharded over the threads,
/// sums the arenas in micro-batch order and applies the optimizer to the shared parameters.
/// OneDeviceStrategy is the case of one thread running every micro-batch: there is no second code
/// path. A training step allocates nothing and takes no lock.
#ifndef TPUDSL_TRAIN_TRAINER_CORE_HPP
#define TPUDSL_TRAIN_TRAINER_CORE_HPP

#include <tpudsl/data/array_ref.hpp>
#include <tpudsl/data/convert.hpp>
#include <tpudsl/data/dataset.hpp>
#include <tpudsl/detail/text.hpp>
#include <tpudsl/io/weight_formats.hpp>
#include <tpudsl/model/summary.hpp>
#include <tpudsl/train/batch_sources.hpp>
#include <tpudsl/train/buffers.hpp>
#include <tpudsl/train/callbacks.hpp>
#include <tpudsl/train/history.hpp>
#include <tpudsl/train/losses.hpp>
#include <tpudsl/train/metrics.hpp>
#include <tpudsl/train/optimizers.hpp>
#include <tpudsl/train/replica_steps.hpp>
#include <tpudsl/train/resume.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace tpudsl::detail {

/// The compile step and what the engine's parts share, for every strategy that splits a step into
/// `MicroBatches` micro-batches. What the strategy decides (its threads, which replicas run here, the
/// other processes of a multi-worker job) it reads at run time (distribute::replica_runner), so that
/// OneDeviceStrategy, TpuStrategy<N> and MultiWorkerStrategy<R> share one engine per model: a program
/// that offers all three compiles the model's machinery once.
/// @tparam Seq          the model type; its constants size every buffer
/// @tparam MicroBatches the fixed pieces a step's global batch is computed in
template <class Seq, std::size_t MicroBatches>
class trainer_core : public replica_steps<Seq, MicroBatches>, protected TrainingControl {
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
    trainer_core(std::uint64_t seed, distribute::replica_runner runner) : steps(seed, std::move(runner)) {}

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

protected:
    template <class, class, std::size_t>
    friend struct detail::dataset_source;   // reads check_data and ensure_capacity
    friend struct detail::resume_access;    // saves and restores the training state

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

    /// Keras' multi-worker rule: only the chief prints progress.
    template <class Options>
    void
    quiet_unless_chief(Options& options) const noexcept
    {
        if (chained() && !runner_.workers->is_chief())
            options.verbose = 0;
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

    [[nodiscard]] static constexpr std::size_t
    vocabulary() noexcept
    {
        if constexpr (requires { Seq::input_bound; })
            return Seq::input_bound;   // a Functional model: the layers that read its input
        else
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
};

} // namespace tpudsl::detail

#endif // !TPUDSL_TRAIN_TRAINER_CORE_HPP
