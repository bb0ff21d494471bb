/// @file Defines tpudsl::Trainable<Sequential>: the trainable object of a model type, with Keras' compile,
/// fit, evaluate, predict and summary.
///
/// Memory: the parameters, the optimizer's slots and the gradient arena are allocated when the model
/// is built (sizes are constants of the type); a replica's workspace, input and label buffers when
/// `fit`/`evaluate`/`predict` first see a batch size (B x constants of the type). A training step
/// allocates nothing. The step is laid out as the multi-replica strategies run it: the replica fills
/// its gradient arena, then one fused pass sums the arenas and applies the optimizer to the shared
/// parameters; one core is the case of one replica.
#ifndef TPUDSL_TRAIN_MODEL_HPP
#define TPUDSL_TRAIN_MODEL_HPP

#include <tpudsl/io/weights.hpp>
#include <tpudsl/model/summary.hpp>
#include <tpudsl/ops/graph.hpp>
#include <tpudsl/train/callbacks.hpp>
#include <tpudsl/train/data.hpp>
#include <tpudsl/train/history.hpp>
#include <tpudsl/train/initializers.hpp>
#include <tpudsl/train/losses.hpp>
#include <tpudsl/train/metrics.hpp>
#include <tpudsl/train/optimizers.hpp>
#include <tpudsl/train/progbar.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iostream>
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

/// `fit`'s keyword arguments, with Keras' defaults.
struct FitOptions {
    std::size_t batch_size = 32;
    std::size_t epochs = 1;
    /// 0 silent, 1 progress bar, 2 one line per epoch.
    int verbose = 1;
    /// Batches per epoch; 0 means one pass over the data. With arrays the batch stream continues
    /// across epochs (Keras does not reset the iterator).
    std::size_t steps_per_epoch = 0;
    std::optional<dataset_ref> validation_data;
    /// Validate when (epoch + 1) % validation_freq == 0.
    std::size_t validation_freq = 1;
    std::size_t initial_epoch = 0;
    /// Reshuffle the samples before each pass.
    bool shuffle = true;
    std::vector<Callback*> callbacks;
    /// Where progress goes (a terminal redraws the bar in place).
    std::ostream* out = &std::cout;
};

/// `evaluate`'s and `predict`'s keyword arguments.
struct EvaluateOptions {
    std::size_t batch_size = 32;
    int verbose = 1;
    std::size_t steps = 0;   // 0: all the data
    std::ostream* out = &std::cout;
};

namespace detail {

/// 64-byte aligned, zeroed float storage of a fixed size.
class aligned_floats_buffer {
public:
    aligned_floats_buffer() = default;
    explicit aligned_floats_buffer(std::size_t n) { resize(n); }
    void
    resize(std::size_t n)
    {
        data_.reset(n ? static_cast<float*>(::operator new[](n * sizeof(float), std::align_val_t{buffer_alignment}))
                      : nullptr);
        size_ = n;
        std::fill_n(data_.get(), n, 0.0f);
    }
    [[nodiscard]] float* data() noexcept { return data_.get(); }
    [[nodiscard]] const float* data() const noexcept { return data_.get(); }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }

private:
    struct deleter {
        void operator()(float* p) const noexcept { ::operator delete[](p, std::align_val_t{buffer_alignment}); }
    };
    std::unique_ptr<float[], deleter> data_;
    std::size_t size_ = 0;
};

/// A compiled metric: its name, whether it reads sparse labels, and how it counts hits.
struct metric_entry {
    std::string name;
    bool sparse_labels;
    double (*hits)(const float*, std::size_t, std::size_t, const std::int32_t*, const float*);
};

template <class M>
metric_entry
make_metric_entry(M)
{
    return {std::string(M::name), M::sparse_labels,
            +[](const float* out, std::size_t n, std::size_t d, const std::int32_t* sl, const float* dl) {
                return count_hits(M{}, out, n, d, sl, dl);
            }};
}

} // namespace detail

/// A trainable model of type `Seq` (a `Sequential<...>`).
/// @tparam Seq the model type; its constants size every buffer
template <class Seq>
class Trainable final : private TrainingControl {
public:
    using sequential = Seq;
    using graph = ops::graph<Seq>;
    using input_type = typename Seq::input_type;
    static constexpr std::size_t input_size = Seq::input_shape::size;
    static constexpr std::size_t output_size = Seq::output_shape::size;

    using optimizer_type = std::variant<optimizers::SGD, optimizers::Adam, optimizers::Nadam, optimizers::RMSprop>;
    using loss_type = std::variant<losses::SparseCategoricalCrossentropy, losses::CategoricalCrossentropy,
                                   losses::BinaryCrossentropy, losses::MeanSquaredError>;

    /// Builds the model with Keras' initial weights drawn from `seed`.
    explicit Trainable(std::uint64_t seed = 0) : seed_(seed), params_(Seq::param_buffer_size), grads_(Seq::param_buffer_size)
    {
        initialize_parameters<Seq>(params_.data(), seed_);
    }

    Trainable(const Trainable&) = delete;
    Trainable& operator=(const Trainable&) = delete;

    /// Keras' summary table.
    void
    summary(std::ostream& out = std::cout) const
    {
        tpudsl::summary<Seq>(out);
    }

    /// `compile(optimizer, loss, metrics...)`. Resets the optimizer's state.
    template <class Optimizer, class Loss, class... Metrics>
    void
    compile(Optimizer optimizer, Loss loss, Metrics... metrics)
    {
        optimizer_ = optimizer;
        loss_ = loss;
        metrics_ = {detail::make_metric_entry(metrics)...};
        hits_.assign(metrics_.size(), 0.0);
        slots_.resize(Optimizer::slots * Seq::param_buffer_size);
        iterations_ = 0;
        compiled_ = true;
        if constexpr (requires { loss.from_logits; }) {
            if (graph::softmax_output && loss.from_logits && !std::is_same_v<Loss, losses::BinaryCrossentropy>)
                std::cerr << "UserWarning: \"`" << Loss::name
                          << "` received `from_logits=True`, but the `output` argument was produced by a Softmax "
                             "activation and thus does not represent logits. Was this intended?\"\n";
        }
    }

    /// `fit(x, y, ...)`: trains on arrays (xtensor containers or std::vector), returns the History.
    template <class X, class Y>
    History
    fit(const X& x, const Y& y, FitOptions options = {})
    {
        return fit(dataset_ref{make_array_ref(x), make_array_ref(y)}, std::move(options));
    }

    History
    fit(const dataset_ref& data, FitOptions options)
    {
        require_compiled("fit");
        if (options.batch_size == 0)
            detail::bad_input("fit: batch_size must be at least 1");
        check_data(data, "x", "y");
        if (options.validation_data)
            check_data(*options.validation_data, "validation x", "validation y");
        const std::size_t samples = data.x.samples();
        if (samples == 0)
            detail::bad_input("fit: x holds no samples");
        ensure_capacity(options.batch_size);

        const std::size_t batches_per_pass = (samples + options.batch_size - 1) / options.batch_size;
        const std::size_t steps = options.steps_per_epoch ? options.steps_per_epoch : batches_per_pass;
        // The batch stream: pass p visits the samples in order_p, batch by batch (the last one
        // partial). Without steps_per_epoch an epoch is one pass; with it, the stream runs on across
        // epochs, as Keras' array adapter does.
        std::vector<std::uint32_t> order(samples);
        std::size_t pass = 0, batch = 0;
        start_pass(order, pass, options.shuffle);

        History history;
        history.params = {options.verbose, options.epochs, steps};
        const bool dynamic = options.out == &std::cout && ::isatty(STDOUT_FILENO);
        Logs logs;
        stop_training = false;
        for (auto* cb : options.callbacks)
            cb->on_train_begin(*this);

        for (std::size_t epoch = options.initial_epoch; epoch < options.epochs && !stop_training; ++epoch) {
            logs.clear();
            if (options.verbose && options.epochs > 1)
                *options.out << "Epoch " << epoch + 1 << '/' << options.epochs << '\n';
            for (auto* cb : options.callbacks)
                cb->on_epoch_begin(epoch, logs, *this);
            if (!options.steps_per_epoch && batch != 0)
                start_pass(order, ++pass, options.shuffle), batch = 0;
            reset_metrics(logs);
            Progbar bar(*options.out, steps, options.verbose, dynamic);
            std::size_t done = 0;
            while (done < steps && !stop_training) {
                if (batch == batches_per_pass)
                    start_pass(order, ++pass, options.shuffle), batch = 0;
                const std::size_t begin = batch * options.batch_size;
                const std::size_t n = std::min(options.batch_size, samples - begin);
                gather(data, order.data() + begin, n);
                ++batch;
                accumulate(train_step(n), n);
                write_running_logs(logs);
                bar.update(++done, logs);
                for (auto* cb : options.callbacks)
                    cb->on_train_batch_end(done - 1, logs, *this);
            }
            if (options.validation_data && options.validation_freq && (epoch + 1) % options.validation_freq == 0) {
                const auto values = evaluate(*options.validation_data,
                                             EvaluateOptions{options.batch_size, 0, 0, options.out});
                logs.set("val_loss", values[0]);
                for (std::size_t m = 0; m < metrics_.size(); ++m)
                    logs.set("val_" + metrics_[m].name, values[m + 1]);
            }
            // Keras' order: the progress bar ends the line, then the callbacks, then History.
            bar.finish(done, logs);
            for (auto* cb : options.callbacks)
                cb->on_epoch_end(epoch, logs, *this);
            history.record(epoch, logs);
        }
        for (auto* cb : options.callbacks)
            cb->on_train_end(*this);
        return history;
    }

    /// `evaluate(x, y)`: [loss, metrics...] in compile order.
    template <class X, class Y>
    std::vector<double>
    evaluate(const X& x, const Y& y, EvaluateOptions options = {})
    {
        return evaluate(dataset_ref{make_array_ref(x), make_array_ref(y)}, options);
    }

    std::vector<double>
    evaluate(const dataset_ref& data, EvaluateOptions options)
    {
        require_compiled("evaluate");
        if (options.batch_size == 0)
            detail::bad_input("evaluate: batch_size must be at least 1");
        check_data(data, "x", "y");
        ensure_capacity(options.batch_size);
        const std::size_t samples = data.x.samples();
        std::size_t steps = (samples + options.batch_size - 1) / options.batch_size;
        if (options.steps)
            steps = std::min(steps, options.steps);
        Logs logs;
        reset_metrics(logs);
        Progbar bar(*options.out, steps, options.verbose, options.out == &std::cout && ::isatty(STDOUT_FILENO));
        std::vector<std::uint32_t> order(samples);
        for (std::size_t i = 0; i < samples; ++i)
            order[i] = static_cast<std::uint32_t>(i);
        for (std::size_t step = 0; step < steps; ++step) {
            const std::size_t begin = step * options.batch_size;
            const std::size_t n = std::min(options.batch_size, samples - begin);
            gather(data, order.data() + begin, n);
            accumulate(test_step(n), n);
            write_running_logs(logs);
            bar.update(step + 1, logs);
        }
        bar.finish(steps, logs);
        std::vector<double> out{seen_ ? loss_total_ / static_cast<double>(seen_) : 0.0};
        for (double h : hits_)
            out.push_back(seen_ ? h / static_cast<double>(seen_) : 0.0);
        return out;
    }

    /// `predict(x)`: the outputs, (samples, output_size) row-major.
    template <class X>
    std::vector<float>
    predict(const X& x, EvaluateOptions options = {})
    {
        const array_ref xr = make_array_ref(x);
        detail::check_inputs<Seq>(xr, "x", vocabulary());
        if (options.batch_size == 0)
            detail::bad_input("predict: batch_size must be at least 1");
        ensure_capacity(options.batch_size);
        const std::size_t samples = xr.samples();
        std::vector<float> out(samples * output_size);
        const input_type* src = xr.as<input_type>();
        for (std::size_t begin = 0; begin < samples; begin += options.batch_size) {
            const std::size_t n = std::min(options.batch_size, samples - begin);
            graph::forward(params_.data(), src + begin * input_size, workspace_.data(), capacity_, n,
                           step_context{.training = false, .seed = seed_, .step = iterations_});
            const float* y = graph::output(workspace_.data(), capacity_);
            std::copy(y, y + n * output_size, out.data() + begin * output_size);
        }
        return out;
    }

    /// The flat parameter buffer (Keras' weights in order, each at `layer<I>::weight<J>::offset`).
    [[nodiscard]] float* parameters() noexcept { return params_.data(); }
    [[nodiscard]] const float* parameters() const noexcept { return params_.data(); }

    /// Optimizer steps taken (Keras' `optimizer.iterations`).
    [[nodiscard]] std::uint64_t iterations() const noexcept { return iterations_; }

    [[nodiscard]] double learning_rate() const override
    {
        return std::visit([](const auto& o) { return static_cast<double>(o.learning_rate); }, optimizer_);
    }
    void set_learning_rate(double lr) override
    {
        std::visit([&](auto& o) { o.learning_rate = static_cast<float>(lr); }, optimizer_);
    }
    void save_weights(const std::string& path) const override { tpudsl::save_weights<Seq>(path, params_.data()); }
    void load_weights(const std::string& path) { tpudsl::load_weights<Seq>(path, params_.data()); }
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
    }

    /// Makes room for batches of up to `batch` samples (allocates only when it grows).
    void
    ensure_capacity(std::size_t batch)
    {
        if (batch <= capacity_)
            return;
        workspace_.resize(batch * Seq::workspace_size);
        inputs_.assign(batch * input_size, input_type{});
        sparse_labels_.assign(batch, 0);
        dense_labels_.assign(batch * output_size, 0.0f);
        capacity_ = batch;
    }

    /// One training step on the first n samples of the batch buffers: forward, loss, backward, the
    /// fused reduce-and-update. Returns the sum of the per-sample losses. Allocates nothing.
    double
    train_step(std::size_t n) noexcept
    {
        const step_context ctx{.training = true, .seed = seed_, .step = iterations_, .first_sample = 0};
        graph::forward(params_.data(), inputs_.data(), workspace_.data(), capacity_, n, ctx);
        loss_view view = make_loss_view(n);
        const double loss_sum = std::visit(
            [&](const auto& l) {
                return tpudsl::evaluate(l, view, 1.0f / static_cast<float>(n),
                                        graph::loss_gradient(workspace_.data(), capacity_));
            },
            loss_);
        count_metrics(n);
        graph::backward(params_.data(), inputs_.data(), workspace_.data(), capacity_, n, grads_.data(), view.logit_grad);
        apply_gradients();
        return loss_sum;
    }

private:
    [[nodiscard]] static constexpr std::size_t
    vocabulary() noexcept
    {
        using first = typename Seq::template layer<0>::spec;
        if constexpr (requires { first::input_dim; })
            return first::input_dim;
        else
            return 0;
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

    void
    check_data(const dataset_ref& d, const char* xname, const char* yname) const
    {
        detail::check_inputs<Seq>(d.x, xname, vocabulary());
        const bool sparse = sparse_labels();
        for (const auto& m : metrics_)
            if (m.sparse_labels != sparse)
                detail::bad_input("the metric " + m.name + " reads " + (m.sparse_labels ? "sparse" : "one-hot") +
                                  " labels, but the loss reads " + (sparse ? "sparse" : "one-hot") + " ones");
        detail::check_labels(d.y, yname, d.x.samples(), sparse, output_size);
    }

    /// The sample order of pass p: the identity, or a permutation drawn from (seed, pass).
    void
    start_pass(std::vector<std::uint32_t>& order, std::size_t pass, bool shuffle) const
    {
        for (std::size_t i = 0; i < order.size(); ++i)
            order[i] = static_cast<std::uint32_t>(i);
        if (!shuffle)
            return;
        for (std::size_t i = order.size(); i > 1; --i) {
            const std::uint64_t r = detail::hash4(seed_ ^ 0x5eed5eed5eedULL, pass, i, 0);
            std::swap(order[i - 1], order[static_cast<std::size_t>(r % i)]);
        }
    }

    /// Copies the samples `idx[0..n)` into the batch buffers.
    void
    gather(const dataset_ref& d, const std::uint32_t* idx, std::size_t n) noexcept
    {
        const input_type* x = d.x.as<input_type>();
        for (std::size_t s = 0; s < n; ++s)
            std::copy_n(x + static_cast<std::size_t>(idx[s]) * input_size, input_size, inputs_.data() + s * input_size);
        if (d.y.type == dtype::int32) {
            const std::int32_t* y = d.y.as<std::int32_t>();
            for (std::size_t s = 0; s < n; ++s)
                sparse_labels_[s] = y[idx[s]];
        } else {
            const float* y = d.y.as<float>();
            for (std::size_t s = 0; s < n; ++s)
                std::copy_n(y + static_cast<std::size_t>(idx[s]) * output_size, output_size,
                            dense_labels_.data() + s * output_size);
        }
    }

    loss_view
    make_loss_view(std::size_t n) noexcept
    {
        loss_view v;
        v.n = n;
        v.width = output_size;
        v.output = graph::output(workspace_.data(), capacity_);
        if constexpr (graph::softmax_output)
            v.logits = graph::logits(workspace_.data(), capacity_, n);
        v.sparse_labels = sparse_labels_.data();
        v.dense_labels = dense_labels_.data();
        return v;
    }

    void
    count_metrics(std::size_t n) noexcept
    {
        const float* out = graph::output(workspace_.data(), capacity_);
        for (std::size_t m = 0; m < metrics_.size(); ++m)
            hits_[m] += metrics_[m].hits(out, n, output_size, sparse_labels_.data(), dense_labels_.data());
    }

    /// The fused pass: sum the gradient arenas (one here) and apply the optimizer to the parameters,
    /// chunk by chunk, then clear the arena for the next step.
    void
    apply_gradients() noexcept
    {
        ++iterations_;
        std::visit(
            [&](auto& opt) {
                const auto c = opt.prepare(iterations_);
                float* slot_ptrs[4] = {};
                for (std::size_t s = 0; s < std::decay_t<decltype(opt)>::slots; ++s)
                    slot_ptrs[s] = slots_.data() + s * Seq::param_buffer_size;
                opt.update(c, params_.data(), grads_.data(), slot_ptrs, 0, Seq::param_buffer_size);
                opt.advance(c);
            },
            optimizer_);
        std::fill_n(grads_.data(), Seq::param_buffer_size, 0.0f);
    }

    /// Forward in inference mode and the loss, without gradients' use; returns the loss sum.
    double
    test_step(std::size_t n) noexcept
    {
        graph::forward(params_.data(), inputs_.data(), workspace_.data(), capacity_, n,
                       step_context{.training = false, .seed = seed_, .step = iterations_});
        loss_view view = make_loss_view(n);
        const double loss_sum = std::visit(
            [&](const auto& l) {
                return tpudsl::evaluate(l, view, 1.0f / static_cast<float>(n),
                                        graph::loss_gradient(workspace_.data(), capacity_));
            },
            loss_);
        count_metrics(n);
        return loss_sum;
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
    detail::aligned_floats_buffer params_;
    detail::aligned_floats_buffer grads_;
    detail::aligned_floats_buffer slots_;
    detail::aligned_floats_buffer workspace_;
    std::vector<input_type> inputs_;
    std::vector<std::int32_t> sparse_labels_;
    std::vector<float> dense_labels_;
    std::size_t capacity_ = 0;

    optimizer_type optimizer_;
    loss_type loss_;
    std::vector<detail::metric_entry> metrics_;
    bool compiled_ = false;
    std::uint64_t iterations_ = 0;

    double loss_total_ = 0.0;
    std::size_t seen_ = 0;
    std::vector<double> hits_;
};

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_MODEL_HPP
