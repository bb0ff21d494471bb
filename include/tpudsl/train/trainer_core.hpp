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
#include <tpudsl/train/compiled_training.hpp>
#include <tpudsl/train/history.hpp>
#include <tpudsl/train/loss_fit.hpp>
#include <tpudsl/train/packed_arrays.hpp>
#include <tpudsl/train/per_output.hpp>
#include <tpudsl/train/replica_steps.hpp>
#include <tpudsl/train/resume.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
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
    using steps::classes;
    using steps::heads;
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

    /// `compile(optimizer, loss, metrics...)`: any Optimizer, Loss (or PerOutput of losses) and
    /// Metrics (OnOutput for a graph of several outputs). Resets the optimizer's state.
    template <class Opt, class L, class... Ms>
    void
    compile(Opt optimizer, L loss, Ms... metrics)
    {
        compile_with<Opt, false>(optimizer, loss, metrics...);
    }

    [[nodiscard]] double learning_rate() const override
    {
        require_compiled("learning_rate");
        return static_cast<double>(*optimizer_.learning_rate);
    }
    void set_learning_rate(double lr) override
    {
        require_compiled("set_learning_rate");
        if (optimizer_.scheduled)
            throw std::logic_error("tpudsl::Trainable::set_learning_rate: this optimizer was given a learning-rate "
                                   "schedule (optimizers::Scheduled), hence its learning rate is not settable (Keras "
                                   "refuses it too); drop the callback that sets it, or the schedule");
        optimizers::check_learning_rate(lr, "tpudsl::Trainable::set_learning_rate");
        *optimizer_.learning_rate = static_cast<float>(lr);
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

    /// Keras' lists of arrays for a graph of several inputs or outputs: x and y packed as its steps read
    /// them, each given as a tuple (`std::tie(tokens, meta)`) where the graph has several, else as an
    /// array. fit and evaluate take the tuples themselves; this is for `validation_data = packed.ref()`.
    /// The model must be compiled: its losses say which labels are class ids.
    template <class X, class Y>
    [[nodiscard]] PackedArrays
    pack(const X& x, const Y& y) const
    {
        require_compiled("pack");
        check_parts<X, Y>();
        std::array<std::optional<std::int32_t>, heads> ignored;
        for (std::size_t h = 0; h < heads; ++h)
            ignored[h] = this->head_losses_[h].ignore_class;
        return detail::packer<Seq>::pack(x, y, this->head_sparse_, ignored);
    }

    /// One training step on a global batch of n samples already in the micro-batch buffers (as
    /// split(n) lays them out): forward, loss, backward, the fused reduce-and-update. Returns the
    /// sum of the per-sample losses. Allocates nothing. The model must be compiled. A loss with an
    /// ignore_class counts its positions in the buffers: every worker's, so not under MultiWorkerStrategy.
    double
    train_step(std::size_t n)
    {
        require_compiled("train_step");
        if (this->chained() && (this->loss_.ignore_class || std::ranges::any_of(this->head_losses_, [](const auto& l) {
                                    return l.ignore_class.has_value();
                                })))
            throw std::logic_error("tpudsl::Trainable::train_step: a loss with an ignore_class divides by the "
                                   "positions it scores in the whole global batch, which one worker of a "
                                   "MultiWorkerStrategy does not hold; use fit");
        return step(nullptr, n, true);
    }

protected:
    template <class, class, std::size_t>
    friend struct detail::dataset_source;   // reads check_data and ensure_capacity
    friend struct detail::resume_access;    // saves and restores the training state

    /// compile, with the training step of a strategy of processes when `Chained`: what it is given
    /// checked against the concepts first, so that a type that is none says so in one message.
    template <class Opt, bool Chained, class L, class... Ms>
    void
    compile_with(Opt optimizer, L loss, Ms... metrics)
    {
        static_assert(Optimizer<Opt>, "tpudsl::Trainable::compile: the first argument is not an Optimizer (see "
                                      "docs/training.md, \"Writing a loss, a metric, an optimizer\") [TPUDSL_OPTIMIZER]");
        static_assert(detail::compilable_loss<L>, "tpudsl::Trainable::compile: the second argument is not a Loss "
                                                  "(see docs/training.md, \"Writing a loss, a metric, an optimizer\") "
                                                  "[TPUDSL_LOSS]");
        static_assert((detail::compilable_metric<Ms> && ...),
                      "tpudsl::Trainable::compile: a metric argument is not a Metric (see docs/training.md, "
                      "\"Writing a loss, a metric, an optimizer\") [TPUDSL_METRIC]");
        if constexpr (Optimizer<Opt> && detail::compilable_loss<L> && (detail::compilable_metric<Ms> && ...))
            compile_checked<Opt, Chained>(optimizer, loss, metrics...);
    }

    template <class Opt, bool Chained, class L, class... Ms>
    void
    compile_checked(Opt optimizer, L loss, Ms... metrics)
    {
        constexpr bool per_output = detail::is_per_output<L>;
        static_assert(per_output == (heads > 1),
                      "tpudsl::Trainable::compile: a graph of several outputs takes a loss per output, "
                      "PerOutput{loss, ...}, and a model of one output a single loss [TPUDSL_LOSS_PER_OUTPUT]");
        static_assert(((heads == 1 || detail::is_on_output<Ms>) && ...),
                      "tpudsl::Trainable::compile: a graph of several outputs takes each metric on its output, "
                      "OnOutput<output, Metric>{} [TPUDSL_METRIC_OUTPUT]");
        if constexpr (per_output == (heads > 1))
            static_assert(fits<L, Ms...>(), "the loss and metrics fit the outputs");
        if constexpr (requires { check(optimizer); })
            check(optimizer);   // hyperparameters in their domains, before any state changes
        const optimizers::optimizer_options* options = optimizers::options_of(optimizer);
        if (options)
            optimizers::check(*options, detail::concat({"tpudsl::optimizers::", Opt::name}));
        const bool by_norm = options && (options->clipnorm > 0.0f || options->global_clipnorm > 0.0f);
        if (by_norm && Chained)
            throw std::invalid_argument("tpudsl::Trainable::compile: options.clipnorm and options.global_clipnorm "
                                        "need every gradient on one process; MultiWorkerStrategy clips by value "
                                        "only (options.clipvalue)");
        this->clipping_.prepare(ops::weight_ranges<Seq>::trainable, Seq::param_buffer_size,
                                by_norm ? options->clipnorm : 0.0f, by_norm ? options->global_clipnorm : 0.0f);
        if constexpr (per_output) {
            static_assert(L::count == heads, "tpudsl::Trainable::compile: PerOutput{...} takes one loss per "
                                                "output of the graph [TPUDSL_LOSS_PER_OUTPUT]");
            for (const double w : loss.weights)
                if (!std::isfinite(w) || w < 0.0)
                    detail::bad_input(detail::concat({"compile: loss_weights must be finite and not negative, got ",
                                                      std::to_string(w)}));
            [&]<std::size_t... H>(std::index_sequence<H...>) {
                ((this->head_losses_[H] = compiled_loss::of(std::get<H>(loss.losses)),
                  this->head_weights_[H] = static_cast<float>(loss.weights[H]),
                  this->head_sparse_[H] = std::tuple_element_t<H, decltype(loss.losses)>::sparse_labels,
                  this->head_score_[H] =
                      &steps::template score_head_with<std::tuple_element_t<H, decltype(loss.losses)>, H>),
                 ...);
            }(std::make_index_sequence<heads>{});
        } else {
            loss_ = compiled_loss::of(loss);
            score_ = &steps::template score_with<L>;
        }
        optimizer_ = compiled_optimizer::of(optimizer);
        // Only the compiled optimizer's fused pass and the compiled loss are generated for this model.
        train_ = &steps::template train_with<Opt, Chained>;
        metrics_ = {compiled_metric_of(metrics)...};
        std::size_t states = 0;
        for (compiled_metric& m : metrics_) {
            m.state_at = states;
            states += m.state_size;
        }
        metric_states_.assign(states, 0.0);
        for (auto& k : micro_batches_)
            k.metric_states.assign(states, 0.0);
        this->moving_average_ = options && options->use_ema;
        slots_.resize((Opt::slots + (this->moving_average_ ? 1 : 0)) * Seq::param_buffer_size);
        if constexpr (requires { optimizer.initial_slot_value(std::size_t{0}); })
            for (std::size_t s = 0; s < Opt::slots; ++s)
                std::fill_n(slots_.data() + s * Seq::param_buffer_size, Seq::param_buffer_size,
                            static_cast<float>(optimizer.initial_slot_value(s)));
        iterations_ = 0;
        compiled_ = true;
        if constexpr (!per_output && requires { loss.from_logits; }) {
            if (graph::softmax_output && loss.from_logits && detail::loss_takes_logits<L>)
                *out_ << "UserWarning: \"`" << L::name
                          << "` received `from_logits=True`, but the `output` argument was produced by a Softmax "
                             "activation and thus does not represent logits. Was this intended?\"\n";
        }
    }

    /// The layer (its spec) that makes output H, and the output's shape.
    template <std::size_t H>
    static consteval std::size_t
    output_layer() noexcept
    {
        if constexpr (requires { Seq::output_layers; })
            return Seq::output_layers[H];   // a Functional's
        else
            return Seq::layer_count - 1;
    }
    template <std::size_t H>
    using output_spec = typename Seq::template layer<output_layer<H>()>::spec;
    template <std::size_t H>
    static consteval auto
    output_shape_type() noexcept
    {
        if constexpr (heads > 1)
            return std::type_identity<typename steps::template head<H>::shape>{};
        else
            return std::type_identity<typename Seq::output_shape>{};
    }
    template <std::size_t H>
    using output_shape_of = typename decltype(output_shape_type<H>())::type;

    /// The loss (each output's) and the metrics against the outputs they read (train/loss_fit.hpp).
    template <class L, class... Ms>
    static consteval bool
    fits() noexcept
    {
        if constexpr (heads == 1) {
            return detail::check_fit<output_spec<0>, output_shape_of<0>, L, detail::plain_metric<Ms>...>();
        } else {
            using losses_t = decltype(L::losses);
            const bool losses_fit = []<std::size_t... H>(std::index_sequence<H...>) {
                return (detail::check_fit<output_spec<H>, output_shape_of<H>, std::tuple_element_t<H, losses_t>>() &&
                        ...);
            }(std::make_index_sequence<heads>{});
            const bool metrics_fit = (detail::check_fit<output_spec<Ms::output>, output_shape_of<Ms::output>,
                                                        std::tuple_element_t<Ms::output, losses_t>,
                                                        detail::plain_metric<Ms>>() &&
                                      ...);
            return losses_fit && metrics_fit;
        }
    }

    /// Several inputs (outputs) come as a tuple of arrays, one as an array.
    template <class X, class Y>
    static constexpr void
    check_parts() noexcept
    {
        static_assert(detail::is_tuple<X> == detail::packed_inputs_of<Seq>,
                      "tpudsl: x is a tuple of arrays (std::tie(x1, x2)) exactly when the graph has several Inputs "
                      "[TPUDSL_GRAPH_INPUT_COUNT]");
        static_assert(detail::is_tuple<Y> == (heads > 1),
                      "tpudsl: y is a tuple of arrays (std::tie(y1, y2)) exactly when the graph has several outputs "
                      "[TPUDSL_GRAPH_OUTPUT_COUNT]");
    }

    /// A compiled metric; one on an output of a graph of several is named `<output>_<metric>`.
    template <class M>
    [[nodiscard]] static compiled_metric
    compiled_metric_of(const M& m)
    {
        if constexpr (detail::is_on_output<M>) {
            static_assert(M::output < heads, "tpudsl::OnOutput<output, Metric>: the graph has fewer outputs "
                                             "[TPUDSL_METRIC_OUTPUT]");
            compiled_metric e = compiled_metric::of(m.metric);
            if constexpr (heads > 1)
                e.name = detail::concat({std::string(Seq::node_names[Seq::output_nodes[M::output]]), "_", e.name});
            e.output = M::output;
            return e;
        } else {
            return compiled_metric::of(m);
        }
    }

    /// The output's name of head h (its node's), for the logs.
    [[nodiscard]] static std::string
    head_name(std::size_t h)
    {
        if constexpr (heads > 1)
            return std::string(Seq::node_names[Seq::output_nodes[h]]);
        else
            return {};
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
        if (!v.known || heads > 1 || requires { requires Seq::packed_inputs; })
            return false;   // packed rows: each batch's parts are checked (check_packed)
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
        if constexpr (heads > 1)
            return false;   // the packed rows of every head's labels
        return loss_.sparse_labels;
    }

    /// Checks data against the model (types, shapes, and unless `values` is false every value).
    void
    check_data(const dataset_ref& d, const char* xname, const char* yname, bool values = true) const
    {
        detail::check_inputs<Seq>(d.x, xname, vocabulary(), values);
        const bool sparse = sparse_labels();
        for (const auto& m : metrics_) {
            const bool reads = heads > 1 ? this->head_sparse_[m.output] : sparse;
            if (m.sparse_labels != reads)
                detail::bad_input(detail::concat({"the metric ", m.name, " reads ",
                                                  (m.sparse_labels ? "sparse" : "one-hot"),
                                                  " labels, but the loss reads ", (reads ? "sparse" : "one-hot"),
                                                  " ones"}));
        }
        detail::check_labels(d.y, yname, d.x.samples(), sparse, sparse ? classes : output_size, values, label_positions,
                             this->loss_.ignore_class);
        if (values)
            check_packed(d, xname, yname);
    }

    /// The parts of packed rows that the float checks cannot judge: token ids of each integer input
    /// inside its vocabulary, class ids of each head with a sparse loss inside its classes.
    void
    check_packed(const dataset_ref& d, const char* xname, const char* yname) const
    {
        const std::size_t n = d.x.samples();
        if constexpr (requires { requires Seq::packed_inputs; }) {
            const float* x = d.x.as<float>();
            for (std::size_t k = 0; k < Seq::input_count; ++k)
                if (Seq::input_integral[k])
                    check_packed_ids(x, n, input_size, Seq::input_offsets[k], Seq::input_sizes[k], Seq::input_bounds[k],
                                     xname, "token id", "the Embedding's vocabulary", k);
        }
        if constexpr (heads > 1) {
            const float* y = d.y.as<float>();
            [&]<std::size_t... H>(std::index_sequence<H...>) {
                ([&] {
                    using h = typename steps::template head<H>;
                    if (this->head_sparse_[H])
                        check_packed_ids(y, n, output_size, h::at, h::positions, h::classes, yname, "label",
                                         "the output's classes", H, this->head_losses_[H].ignore_class);
                }(),
                 ...);
            }(std::make_index_sequence<heads>{});
        }
    }

    static void
    check_packed_ids(const float* rows, std::size_t n, std::size_t width, std::size_t at, std::size_t count,
                     std::size_t bound, const char* name, const char* what, const char* range, std::size_t part,
                     std::optional<std::int32_t> ignored = std::nullopt)
    {
        for (std::size_t s = 0; s < n; ++s)
            for (std::size_t j = 0; j < count; ++j) {
                const float v = rows[s * width + at + j];
                if (ignored && v == static_cast<float>(*ignored))
                    continue;
                if (!(std::trunc(v) == v && v >= 0.0f && static_cast<double>(v) < static_cast<double>(bound)))
                    detail::bad_input(detail::concat({what, " ", detail::number_text(v), " at sample ",
                                                      std::to_string(s), ", position ", std::to_string(j), " of ",
                                                      name, "[", std::to_string(part), "] is not a whole number in [0, ",
                                                      std::to_string(bound), ") (", range, ")"}));
            }
    }

    /// Keras' sample_weight: a copy of `given` once it holds one finite weight >= 0 per sample (empty
    /// when it is).
    [[nodiscard]] static std::vector<float>
    sample_weights_of(const std::vector<float>& given, std::size_t samples, const char* where)
    {
        if (given.empty())
            return {};
        if (given.size() != samples)
            detail::bad_input(detail::concat({where, ": sample_weight holds ", std::to_string(given.size()),
                                              " weights for ", std::to_string(samples),
                                              " samples; give one weight per sample"}));
        for (std::size_t i = 0; i < samples; ++i)
            if (!(given[i] >= 0.0f && std::isfinite(given[i])))
                detail::bad_input(detail::concat({where, ": sample_weight[", std::to_string(i), "] is ",
                                                  detail::number_text(given[i]), "; a weight is finite and >= 0"}));
        return given;
    }

    /// Keras' class_weight: each sample's weight from its class (its class id, or the largest entry of
    /// its one-hot target; a single target rounded), 1 for a class `weights` does not name.
    [[nodiscard]] std::vector<float>
    class_weights_of(const std::map<std::int32_t, float>& weights, const array_ref& y, std::size_t samples) const
    {
        if (heads > 1 || label_positions > 1)
            detail::bad_input(heads > 1 ? "fit: class_weight is for a model of one output (Keras refuses it for "
                                          "several too); weigh the samples with sample_weight instead"
                                        : "fit: class_weight takes a class per sample, not one per timestep (Keras "
                                          "refuses it for such targets too); weigh the samples with sample_weight");
        for (const auto& [c, w] : weights)
            if (!(w >= 0.0f && std::isfinite(w)))
                detail::bad_input(detail::concat({"fit: class_weight of class ", std::to_string(c), " is ",
                                                  detail::number_text(w), "; a weight is finite and >= 0"}));
        std::vector<float> out(samples, 1.0f);
        for (std::size_t s = 0; s < samples; ++s) {
            std::int32_t c;
            if (sparse_labels()) {
                c = y.as<std::int32_t>()[s];
            } else {
                const float* row = y.as<float>() + s * output_size;
                c = output_size > 1 ? static_cast<std::int32_t>(detail::argmax(row, output_size))
                                    : static_cast<std::int32_t>(std::nearbyint(row[0]));
            }
            if (const auto it = weights.find(c); it != weights.end())
                out[s] = it->second;
        }
        return out;
    }

    /// [loss, metrics...] averaged over the samples seen since reset_metrics, with their names.
    [[nodiscard]] Scores
    scores() const
    {
        const double seen = static_cast<double>(seen_);
        std::vector<std::string> names{"loss"};
        std::vector<double> values{seen_ ? loss_total_ / seen : 0.0};
        for (const compiled_metric& m : metrics_) {
            names.push_back(m.name);
            values.push_back(m.result(metric_states_.data()));
        }
        if constexpr (heads > 1) {   // each output's own loss; Keras 3 logs them all by name
            for (std::size_t h = 0; h < heads; ++h) {
                names.push_back(head_log_names_[h]);
                values.push_back(seen_ ? this->head_loss_totals_[h] / seen : 0.0);
            }
            std::vector<std::size_t> order(names.size());
            for (std::size_t i = 0; i < order.size(); ++i)
                order[i] = i;
            std::ranges::sort(order, [&](std::size_t a, std::size_t b) { return names[a] < names[b]; });
            std::vector<std::string> sorted_names;
            std::vector<double> sorted_values;
            for (const std::size_t i : order) {
                sorted_names.push_back(names[i]);
                sorted_values.push_back(values[i]);
            }
            return {std::move(sorted_names), std::move(sorted_values)};
        }
        return {std::move(names), std::move(values)};
    }

    void
    reset_metrics(Logs& logs)
    {
        loss_total_ = 0.0;
        seen_ = 0;
        std::fill(metric_states_.begin(), metric_states_.end(), 0.0);
        this->head_loss_totals_.fill(0.0);
        if constexpr (heads > 1) {   // the logs in Keras 3's order, by name
            const Scores names = scores();
            for (const std::string& name : names.names())
                logs.set(name, 0.0);
            return;
        }
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
        for (const compiled_metric& m : metrics_)
            logs.set(m.name, m.result(metric_states_.data()));
        if constexpr (heads > 1)
            for (std::size_t h = 0; h < heads; ++h)
                logs.set(head_log_names_[h], this->head_loss_totals_[h] / seen);
    }

    // What the step machinery holds, named here as the Keras API reads it.
    using steps::arenas_;
    using steps::metric_states_;
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
    /// Each output's loss as the logs name it, `<output>_loss` (a graph of several outputs).
    std::array<std::string, heads> head_log_names_ = [] {
        std::array<std::string, heads> names;
        if constexpr (heads > 1)
            for (std::size_t h = 0; h < heads; ++h)
                names[h] = head_name(h) + "_loss";
        return names;
    }();
    double loss_total_ = 0.0;
    std::size_t seen_ = 0;
};

} // namespace tpudsl::detail

#endif // !TPUDSL_TRAIN_TRAINER_CORE_HPP
