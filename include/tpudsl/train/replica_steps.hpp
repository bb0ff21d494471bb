/// @file Defines detail::replica_steps<Seq, MicroBatches>: what a trainable model computes a step with,
/// whatever its strategy: the parameters and the optimizer's slots, the fixed micro-batches with their
/// workspaces and gradient arenas, each thread's kernel scratch, and the step itself (forward, loss,
/// backward on the strategy's threads, then the fused reduce-and-update, or a multi-worker strategy's
/// chained reduce). Keras' API over it (compile, fit, evaluate, predict) is detail::trainer
/// (train/trainer_core.hpp, trainer_evaluate.hpp, trainer_fit.hpp).
///
/// Memory: the parameters, the optimizer's slots and one gradient arena per micro-batch are allocated
/// when the model is built (sizes are constants of the type); the micro-batches' workspaces, input and
/// label buffers when a batch size is first seen (B / micro-batches x constants of the type). A step
/// allocates nothing and takes no lock.
#ifndef TPUDSL_TRAIN_REPLICA_STEPS_HPP
#define TPUDSL_TRAIN_REPLICA_STEPS_HPP

#include <tpudsl/distribute/all_reduce.hpp>
#include <tpudsl/distribute/strategy.hpp>
#include <tpudsl/ops/graph.hpp>
#include <tpudsl/train/batch_sources.hpp>
#include <tpudsl/train/buffers.hpp>
#include <tpudsl/train/compiled_training.hpp>
#include <tpudsl/train/update_options.hpp>
#include <tpudsl/train/parameter_init.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace tpudsl::detail {

/// The step machinery of a model of type `Seq` computed in `MicroBatches` micro-batches, on the
/// threads and processes its strategy's distribute::replica_runner names.
template <class Seq, std::size_t MicroBatches>
class replica_steps {
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
    /// The outputs, each scored by a loss of its own when there are several (a graph's Outputs<...>):
    /// their labels then come as one packed row of output_size floats (Seq::output_offsets).
    static constexpr std::size_t heads = [] {
        if constexpr (requires { Seq::packed_outputs; })
            return Seq::output_count;
        else
            return std::size_t{1};
    }();
    /// What a step reads: samples and their labels, typed.
    using batch_view = detail::batch_view<input_type, input_size, output_size, label_positions>;

    /// Builds the model with Keras' initial weights drawn from `seed`, to run as `runner` says.
    replica_steps(std::uint64_t seed, distribute::replica_runner runner)
        : seed_(seed), runner_(std::move(runner)), params_(Seq::param_buffer_size), micro_batches_(micro_batches),
          shards_(Seq::param_buffer_size, runner_.threads())
    {
        for (std::size_t c = 0; c < micro_batches; ++c)
            if (runs_here(c)) {   // another worker's micro-batches need no buffers here
                micro_batches_[c].grads.resize(Seq::param_buffer_size);
                micro_batches_[c].marks.assign(graph::marked_table ? (graph::table.rows + 63) / 64 : 0, 0);
            }
        initialize_parameters<Seq>(params_.data(), seed_);
        if constexpr (shares_transposes)
            if (!chained())   // a multi-worker step updates outside the fused pass: each thread keeps its own
                make_shared_transposes();
        if (chained())   // Keras' multi-worker rule: every worker starts from the chief's weights
            runner_.workers->broadcast_from_chief(params_.data(), Seq::param_buffer_size);
    }

    replica_steps(const replica_steps&) = delete;
    replica_steps& operator=(const replica_steps&) = delete;

    /// Threads that run the replicas.
    [[nodiscard]] std::size_t threads() const noexcept { return runner_.threads(); }

    /// Each thread's kernel scratch (kernels::scratch_arena): sized by the model's plan for the largest
    /// batch so far; `overflows()` counts requests the plan did not foresee (zero when it sized all).
    [[nodiscard]] const std::vector<kernels::scratch_arena>&
    scratch_arenas() const noexcept
    {
        return arenas_;
    }

    /// Where each thread's shard of the fused pass lies (distribute::shard_cuts): the cuts follow the
    /// threads' measured times; placing them (assign) changes which thread computes what, never the
    /// result.
    [[nodiscard]] distribute::shard_cuts& fused_pass_shards() noexcept { return shards_; }
    [[nodiscard]] const distribute::shard_cuts& fused_pass_shards() const noexcept { return shards_; }

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
            k.sample_weights.assign(cap, 1.0f);
            if constexpr (heads > 1) {   // each head's labels, out of the packed rows
                k.head_sparse.assign(cap * output_size, 0);
                k.head_dense.assign(cap * output_size, 0.0f);
            }
        }
        const kernels::scratch_sizes sizes =
            graph::scratch_sizes({.micro_batch = cap, .replica = cap * runner_.per_replica, .step = cap * micro_batches});
        const std::vector<std::size_t> kept(graph::kept_floats.begin(), graph::kept_floats.end());
        arenas_.clear();
        for (std::size_t t = 0; t < runner_.threads(); ++t) {
            arenas_.emplace_back(sizes, kept);
            if (!shared_copies_.empty())
                arenas_.back().share(shared_copies_.data());
        }
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
                                       (output_size + 1) * sizeof(float);
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

protected:
    /// One micro-batch: its buffers, its share of this step, and its results.
    struct alignas(64) micro_batch {
        detail::aligned_floats_buffer workspace;
        detail::aligned_floats_buffer grads;   // the gradient arena, in the parameter layout
        std::vector<std::uint64_t> marks;      // graph::marked_table: the table rows this step's backward touched
        std::vector<input_type> inputs;   // the samples gathered from arrays (or written by train_step's caller)
        std::vector<std::int32_t> sparse_labels;
        std::vector<float> dense_labels;
        std::vector<float> sample_weights;
        // This step's samples, labels and weights (null: 1 each): the buffers above, or read in place.
        const input_type* x = nullptr;
        const std::int32_t* sparse = nullptr;
        const float* dense = nullptr;
        const float* weights = nullptr;
        std::vector<double> metric_states;   // the metrics' states over this micro-batch
        std::size_t offset = 0, n = 0;   // this step's samples: [offset, offset + n) of the batch
        double loss = 0.0;
        // Several heads: each one's own loss, and its labels taken out of the packed rows.
        std::array<double, heads> head_loss{};
        std::vector<std::int32_t> head_sparse;
        std::vector<float> head_dense;
    };

    /// True for a strategy whose workers are processes (MultiWorkerStrategy): the chained reduce,
    /// shared scores.
    [[nodiscard]] bool chained() const noexcept { return runner_.workers != nullptr; }

    /// This process's micro-batches: [first_here(), last_here()) (all of them but in a multi-worker job).
    [[nodiscard]] std::size_t first_here() const noexcept { return runner_.first * runner_.per_replica; }
    [[nodiscard]] std::size_t last_here() const noexcept { return runner_.last * runner_.per_replica; }

    /// True when micro-batch c is computed in this process.
    [[nodiscard]] bool runs_here(std::size_t c) const noexcept { return c >= first_here() && c < last_here(); }

    static_assert(micro_batches <= max_micro_batches,
                  "tpudsl::Trainable: a strategy may split a step into at most 64 micro-batches");

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
        if (b.weights && !b.idx) {
            k.weights = b.weights + k.offset;
        } else if (b.weights) {
            for (std::size_t s = 0; s < k.n; ++s)
                k.sample_weights[s] = b.weights[b.idx[k.offset + s]];
            k.weights = k.sample_weights.data();
        }
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

    /// Clears a micro-batch's loss and metric states (and last step's marks), points it at its samples (gather;
    /// without data, at what its own buffers hold) and marks its token ids. False when it has no samples.
    bool
    prepare_micro_batch(micro_batch& k, const batch_view* data, bool training) noexcept
    {
        k.loss = 0.0;
        k.head_loss.fill(0.0);
        std::fill(k.metric_states.begin(), k.metric_states.end(), 0.0);
        if constexpr (graph::marked_table)
            if (training)   // last step's marks were used by its fused pass, which cleared their rows
                std::fill(k.marks.begin(), k.marks.end(), std::uint64_t{0});
        if (k.n == 0)
            return false;   // an empty replica contributes nothing
        k.x = k.inputs.data();
        k.sparse = k.sparse_labels.data();
        k.dense = k.dense_labels.data();
        k.weights = nullptr;
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

    /// The loss (into k.loss, its gradient into the workspace) and the metrics' states of a micro-batch
    /// after its forward; bit H set when head H's gradient is with respect to its logits.
    unsigned
    score_micro_batch(micro_batch& k, std::size_t global_n) noexcept
    {
        if constexpr (heads > 1) {
            unsigned logit_heads = 0;
            k.loss = 0.0;
            [&]<std::size_t... H>(std::index_sequence<H...>) {
                (score_head<H>(k, global_n, logit_heads), ...);
            }(std::make_index_sequence<heads>{});
            return logit_heads;
        }
        loss_view view;
        view.n = k.n;
        view.width = output_size;
        view.output = graph::output(k.workspace.data(), micro_batch_capacity_);
        if constexpr (graph::softmax_output)
            view.logits = graph::logits(k.workspace.data(), micro_batch_capacity_, k.n);
        view.sparse_labels = k.sparse;
        view.dense_labels = k.dense;
        view.sample_weight = k.weights;
        k.loss = score_(loss_, view, global_n, scored_[0], graph::loss_gradient(k.workspace.data(), micro_batch_capacity_));
        // Metrics over the last axis: a row per timestep of a (timesteps, classes) output.
        const metric_batch rows{.rows = k.n * label_positions,
                                .width = classes,
                                .output = view.output,
                                .labels = k.sparse,
                                .targets = k.dense,
                                .sample_weight = k.weights,
                                .rows_per_sample = label_positions};
        for (const compiled_metric& m : metrics_)
            m.update(rows, k.metric_states.data());
        return view.logit_grad ? 1u : 0u;
    }

    /// Head H's part of a packed row: its offset, size, classes (last axis) and labels a sample.
    template <std::size_t H>
    struct head {
        using shape = typename Seq::template output_shape_at<H>;
        static constexpr std::size_t at = Seq::output_offsets[H], size = shape::size;
        static constexpr std::size_t classes = shape::dims[shape::rank - 1], positions = size / classes;
    };

    /// Head H's loss (into k.head_loss[H], added to k.loss times its weight; the gradient of the weighted
    /// loss into the head's block)
    /// and the states of the metrics on it, its labels taken out of the micro-batch's packed rows.
    template <std::size_t H>
    void
    score_head(micro_batch& k, std::size_t global_n, unsigned& logit_heads) noexcept
    {
        using h = head<H>;
        float* ws = k.workspace.data();
        const std::size_t cap = micro_batch_capacity_;
        loss_view view;
        view.n = k.n;
        view.width = h::size;
        view.output = graph::template head_output<H>(ws, cap);
        if constexpr (graph::head_softmax[H])
            view.logits = graph::template head_logits<H>(ws, cap, k.n);
        if (head_sparse_[H]) {   // class ids, whole numbers in range (check_data said so)
            std::int32_t* ids = k.head_sparse.data() + cap * h::at;
            for (std::size_t s = 0; s < k.n; ++s)
                for (std::size_t p = 0; p < h::positions; ++p)
                    ids[s * h::positions + p] = static_cast<std::int32_t>(k.dense[s * output_size + h::at + p]);
            view.sparse_labels = ids;
        } else {
            float* targets = k.head_dense.data() + cap * h::at;
            for (std::size_t s = 0; s < k.n; ++s)
                std::copy_n(k.dense + s * output_size + h::at, h::size, targets + s * h::size);
            view.dense_labels = targets;
        }
        view.sample_weight = k.weights;
        k.head_loss[H] = head_score_[H](head_losses_[H], view, global_n, scored_[H], head_weights_[H],
                                        graph::template head_gradient<H>(ws, cap));
        k.loss += static_cast<double>(head_weights_[H]) * k.head_loss[H];
        if (view.logit_grad)
            logit_heads |= 1u << H;
        const metric_batch rows{.rows = k.n * h::positions,
                                .width = h::classes,
                                .output = view.output,
                                .labels = view.sparse_labels,
                                .targets = view.dense_labels,
                                .sample_weight = k.weights,
                                .rows_per_sample = h::positions};
        for (const compiled_metric& m : metrics_)
            if (m.output == H)
                m.update(rows, k.metric_states.data());
    }

    /// Forward, loss and metrics (and backward when training) of one micro-batch; `global_n` scales
    /// the loss, so that the replicas' summed gradients are the gradient of the global batch's mean.
    void
    run_micro_batch(micro_batch& k, const batch_view* data, std::size_t global_n, bool training) noexcept
    {
        if (!prepare_micro_batch(k, data, training)) {
            keep_deferred_operands(k);
            return;
        }
        graph::forward(params_.data(), k.x, k.workspace.data(), micro_batch_capacity_, k.n,
                       context(training, k.offset));
        const unsigned logit_grad = score_micro_batch(k, global_n);
        if (training) {
            graph::backward(params_.data(), k.x, k.workspace.data(), micro_batch_capacity_, k.n, k.grads.data(),
                            logit_grad, nullptr, /*defer_kernels*/ true);
            keep_deferred_operands(k);
        }
    }

    /// Keeps where micro-batch k's backward left the operands of the deferred kernels' gradients (none
    /// without samples), for the fused pass.
    void
    keep_deferred_operands(micro_batch& k) noexcept
    {
        if constexpr (!graph::deferred_kernels.empty()) {
            const auto c = static_cast<std::size_t>(&k - micro_batches_.data());
            if (k.n == 0)
                for (std::size_t d = 0; d < graph::deferred_kernels.size(); ++d)
                    deferred_operands_[d * micro_batches + c] = {nullptr, nullptr, 0};
            else
                graph::deferred_operands_of(k.x, k.workspace.data(), micro_batch_capacity_, k.n,
                                            deferred_operands_.data() + c, micro_batches);
        }
    }

    /// run_micro_batch on every micro-batch of replica r, the row layers at the top of the model
    /// (graph::rows_from: every layer of a dense network) layer by layer over them all: each of those
    /// Dense layers reads its kernel once per replica, not once per micro-batch. The same bits as
    /// run_micro_batch on each.
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
        if (count == 0) {
            if (training)
                for (std::size_t c = r * per; c < (r + 1) * per; ++c)
                    keep_deferred_operands(micro_batches_[c]);
            return;
        }
        graph::forward_micro_batches(params_.data(), batches, count, micro_batch_capacity_, context(training, 0));
        bool logit_grad = false;
        for (std::size_t c = r * per; c < (r + 1) * per; ++c)
            if (micro_batches_[c].n > 0)
                logit_grad = score_micro_batch(micro_batches_[c], global_n) != 0;
        if (training) {
            graph::backward_micro_batches(params_.data(), batches, count, micro_batch_capacity_, logit_grad, /*defer_kernels*/ true);
            for (std::size_t c = r * per; c < (r + 1) * per; ++c)
                keep_deferred_operands(micro_batches_[c]);
        }
    }

    /// The model's loss by its compiled loss `L` (detail::batch_mean_loss).
    template <class L>
    static double
    score_with(const compiled_loss& loss, loss_view& view, std::size_t global_n, std::size_t scored, float* grad) noexcept
    {
        return detail::batch_mean_loss<label_positions, classes>(loss.as<L>(), view, global_n, scored, 1.0f, grad);
    }

    /// Head H's loss by its compiled loss `L`, its gradient times the head's weight (Keras' loss_weights),
    /// scaled as detail::batch_mean_loss.
    template <class L, std::size_t H>
    static double
    score_head_with(const compiled_loss& loss, loss_view& view, std::size_t global_n, std::size_t scored, float weight,
                    float* grad) noexcept
    {
        return detail::batch_mean_loss<head<H>::positions, head<H>::classes>(loss.as<L>(), view, global_n, scored, weight, grad);
    }

    /// For each loss that ignores a class, the label positions of this step's batch that it scores (scored_,
    /// Keras' divisor): in `data`, or in the micro-batches' own buffers (train_step) when it is null.
    void
    count_scored(const batch_view* data) noexcept
    {
        const auto count = [&](const compiled_loss& loss, std::size_t at, std::size_t positions) {
            std::size_t scored = data ? data->ids_other_than(*loss.ignore_class, at, positions) : 0;
            for (std::size_t c = first_here(); !data && c < last_here(); ++c) {
                const micro_batch& k = micro_batches_[c];
                const batch_view own{k.inputs.data(), heads > 1 ? nullptr : k.sparse_labels.data(),
                                     k.dense_labels.data(), nullptr, k.n, nullptr};
                scored += own.ids_other_than(*loss.ignore_class, at, positions);
            }
            return scored;
        };
        if constexpr (heads > 1) {
            [&]<std::size_t... H>(std::index_sequence<H...>) {
                ((head_losses_[H].ignore_class ? void(scored_[H] = count(head_losses_[H], head<H>::at, head<H>::positions))
                                               : void()),
                 ...);
            }(std::make_index_sequence<heads>{});
        } else if (loss_.ignore_class) {
            scored_[0] = count(loss_, 0, label_positions);
        }
    }

    /// The micro-batches of the replicas that thread t runs, each through run_micro_batch (or the replica's
    /// all at once, for a dense network).
    void
    run_thread(std::size_t t, const batch_view* data, std::size_t global_n, bool training) noexcept
    {
        const kernels::scratch_scope scratch(arenas_[t]);
        if constexpr (graph::rows_from < graph::layers) {
            runner_.for_each_replica_of(t, [&](std::size_t r) { run_replica_rows(r, data, global_n, training); });
        } else {
            for_each_micro_batch_of(t, [&](std::size_t c) { run_micro_batch(micro_batches_[c], data, global_n, training); });
        }
    }

    /// The fused pass over thread t's shard of the parameters (distribute::reduce_and_update): the
    /// deferred kernels' gradients over every micro-batch (their layers' functions, graph::deferred_kernels,
    /// on the operands the micro-batches kept, into arena 0), elsewhere the arenas summed in micro-batch
    /// order, the optimizer applied in the same pass, then the threads' shared copies of the updated
    /// weights remade (graph::shared_copies). Its time goes to shards_, which train_with moves after the
    /// step.
    /// With norm clipping on (clipping_), the pass only reduces: the sums go to the clipping's buffer,
    /// and clip_and_update applies them.
    template <class Opt>
    void
    reduce_and_update(std::size_t t, const Opt& opt, const typename Opt::step_constants& c, float lr) noexcept
    {
        const auto start = std::chrono::steady_clock::now();
        const kernels::scratch_scope scratch(arenas_[t]);
        slot_pointers slot_ptrs = this->slot_ptrs();
        distribute::micro_batch_gradients gradients[micro_batches];
        for (std::size_t k = 0; k < micro_batches; ++k)
            gradients[k] = {micro_batches_[k].grads.data(), micro_batches_[k].marks.data(), micro_batches_[k].n > 0};
        distribute::reduce_and_update(
            shards_.begin(t), shards_.end(t), graph::gradient_layout, gradients, params_.data(),
            [&](std::size_t lo, std::size_t hi, float* g0) { deferred_gradients(0, micro_batches, lo, hi, g0, false); },
            [&](float* g0, std::size_t b, std::size_t e) {
                if (clipping_.on()) {
                    std::copy(g0 + b, g0 + e, clipping_.sums() + b);
                    return;
                }
                apply_update(opt, c, lr, g0, slot_ptrs.data(), b, e);
                if constexpr (shares_transposes)
                    if (!shared_copies_.empty())
                        for (const shared_copy& s : graph::shared_copies)
                            s.remake(params_.data(), b, e, shared_transposes_.data() + s.at);
            });
        shards_.record(t, std::chrono::steady_clock::now() - start);
    }

    /// A multi-worker strategy's link of the chained reduce (distribute::chain_reduce) over [lo, hi) of
    /// `sums`: this worker's micro-batches go on with the chain the previous worker sent (or start it).
    void
    chain_link(std::size_t lo, std::size_t hi, float* sums, bool first_link, std::size_t t) noexcept
    {
        const kernels::scratch_scope scratch(arenas_[t]);
        const std::size_t first = first_here(), count = last_here() - first;
        distribute::micro_batch_gradients gradients[micro_batches];
        for (std::size_t k = 0; k < count; ++k) {
            micro_batch& m = micro_batches_[first + k];
            gradients[k] = {m.grads.data(), m.marks.data(), m.n > 0};
        }
        if (first_link && !gradients[0].has_samples) {   // a worker without samples (Reduction::allreduce) adds zero
            std::fill(sums + lo, sums + hi, 0.0f);
            return;
        }
        distribute::chain_reduce(lo, hi, graph::gradient_layout, std::span(gradients, count), sums, first_link,
                                 [&](std::size_t b, std::size_t e, float* g, bool go_on) {
                                     deferred_gradients(first, count, b, e, g, go_on);
                                 });
    }

    /// grads[lo, hi) where it meets a deferred kernel, from micro-batches [first, first + count)'s kept
    /// operands, by the kernel's layer's own function (graph::deferred_kernels).
    void
    deferred_gradients(std::size_t first, std::size_t count, std::size_t lo, std::size_t hi, float* grads,
                       bool go_on) const noexcept
    {
        for (std::size_t d = 0; d < graph::deferred_kernels.size(); ++d)
            graph::deferred_kernels[d].gradient(deferred_operands_.data() + d * micro_batches + first, count, lo, hi,
                                                grads, go_on);
    }

    /// The step's sums[lo, hi), the same on every worker, applied (distribute::chain_update).
    template <class Opt>
    void
    chain_apply(std::size_t lo, std::size_t hi, float* sums, const Opt& opt, const typename Opt::step_constants& c,
                float lr) noexcept
    {
        slot_pointers slot_ptrs = this->slot_ptrs();
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
                                 [&](float* g, std::size_t b, std::size_t e) {
                                     apply_update(opt, c, lr, g, slot_ptrs.data(), b, e);
                                 });
    }

    /// A training step's replicas and fused pass with the compiled optimizer `Opt`, on the strategy's
    /// threads (the fused reduce-and-update), or over a multi-worker strategy's processes (the chained
    /// reduce) when `Chained`. Trainable<Seq, Strategy>::compile picks the chained one only for a
    /// strategy of processes, so that single-process programs do not generate it.
    template <class Opt, bool Chained>
    void
    train_with(const batch_view* data, std::size_t n) noexcept
    {
        Opt& opt = optimizer_.as<Opt>();
        ++iterations_;
        const float lr = opt.learning_rate;   // this step's (a Scheduled optimizer's: its schedule's)
        const auto constants = opt.prepare(iterations_);
        if constexpr (Chained)
            runner_.workers->chained_step(
                Seq::param_buffer_size, [&](std::size_t t) { run_thread(t, data, n, true); },
                [&](std::size_t lo, std::size_t hi, float* sums, bool first_link, std::size_t t) {
                    chain_link(lo, hi, sums, first_link, t);
                },
                [&](std::size_t lo, std::size_t hi, float* sums, std::size_t) {
                    chain_apply(lo, hi, sums, opt, constants, lr);
                });
        else {
            runner_.step([&](std::size_t t) { run_thread(t, data, n, true); },
                         [&](std::size_t t, std::size_t) { reduce_and_update(t, opt, constants, lr); });
            if (clipping_.on())
                clip_and_update(opt, constants, lr);
            shards_.rebalance();
        }
        if constexpr (requires { opt.advance(constants); })
            opt.advance(constants);
        weights_version_ = detail::next_weights_version();
        if constexpr (!Chained)   // the fused pass made the shared transposes of these weights
            for (auto& s : shared_copies_)
                if (s.data)
                    s.version = weights_version_;
    }

    /// The optimizer's slots, then the moving average of the weights when its options keep one.
    using slot_pointers = std::array<float*, max_optimizer_slots + 1>;
    [[nodiscard]] slot_pointers
    slot_ptrs() noexcept
    {
        slot_pointers p{};
        for (std::size_t s = 0; s < slots_.size() / Seq::param_buffer_size; ++s)
            p[s] = slots_.data() + s * Seq::param_buffer_size;
        return p;
    }

    /// The optimizer's update of [b, e) from the summed gradient g inside its options (update_options.hpp).
    template <class Opt>
    void
    apply_update(const Opt& opt, const typename Opt::step_constants& c, float lr, float* g, float* const* slots,
                 std::size_t b, std::size_t e) noexcept
    {
        detail::update_with_options(opt, c, lr, iterations_, params_.data(), g, slots, b, e);
    }

    /// The rest of a step that clips by norm, after the reduce: the sums of squares, the norms, then each
    /// thread's shard scaled and updated (and the shared transposes remade), on the strategy's threads.
    template <class Opt>
    void
    clip_and_update(const Opt& opt, const typename Opt::step_constants& c, float lr) noexcept
    {
        runner_.run([&](std::size_t t) { clipping_.square_sums(t, runner_.threads()); });
        clipping_.compute_factors();
        runner_.run([&](std::size_t t) {
            const kernels::scratch_scope scratch(arenas_[t]);
            slot_pointers slot_ptrs = this->slot_ptrs();
            clipping_.clip(shards_.begin(t), shards_.end(t), [&](std::size_t b, std::size_t e) {
                apply_update(opt, c, lr, clipping_.sums(), slot_ptrs.data(), b, e);
                if constexpr (shares_transposes)
                    if (!shared_copies_.empty())
                        for (const shared_copy& s : graph::shared_copies)
                            s.remake(params_.data(), b, e, shared_transposes_.data() + s.at);
            });
        });
    }

    /// Keras' finalize_variable_values at the end of fit: the weights take their moving average.
    void
    finalize_moving_average() noexcept
    {
        if (!moving_average_ || iterations_ == 0)
            return;
        detail::take_moving_average(params_.data(), slots_.data() + (slots_.size() - Seq::param_buffer_size),
                                    Seq::param_buffer_size, graph::gradient_layout.moving);
        weights_version_ = detail::next_weights_version();
    }

    /// True when some layer's transposed kernel is shared by the threads (graph::shared_copies).
    static constexpr bool shares_transposes = !graph::shared_copies.empty();

    /// The transposed kernels the threads share, one region per layer of graph::shares_transpose
    /// (graph::shared_transpose_at), none valid (version 0) until the first fused pass makes them.
    void
    make_shared_transposes()
    {
        shared_transposes_.resize(graph::shared_transpose_at[graph::layers]);
        shared_copies_.assign(graph::layers, {});
        for (const shared_copy& s : graph::shared_copies)
            shared_copies_[s.layer] = {.from = params_.data() + s.from, .version = 0, .data = shared_transposes_.data() + s.at};
    }

    /// One step over a global batch of n: optionally points the micro-batches at `data`'s samples (or
    /// gathers them), runs them on the strategy's threads, and when training applies the fused
    /// update. Sums losses and metric states in micro-batch order (deterministic). Allocates nothing.
    double
    step(const batch_view* data, std::size_t n, bool training) noexcept
    {
        split(n);
        count_scored(data);
        if (!training) {
            runner_.run([&](std::size_t t) { run_thread(t, data, n, false); });
        } else {
            (this->*train_)(data, n);
        }
        constexpr std::size_t head_scores = heads > 1 ? heads : 0;
        if (chained())   // every worker sums every micro-batch's scores, in order
            runner_.workers->share_scores(
                1 + metric_states_.size() + head_scores,
                [&](std::size_t c, double* row) {
                    const micro_batch& k = micro_batches_[c];
                    row[0] = k.loss;
                    std::copy(k.metric_states.begin(), k.metric_states.end(), row + 1);
                    std::copy_n(k.head_loss.begin(), head_scores, row + 1 + metric_states_.size());
                },
                [&](std::size_t c, const double* row) {
                    micro_batch& k = micro_batches_[c];
                    k.loss = row[0];
                    std::copy_n(row + 1, metric_states_.size(), k.metric_states.begin());
                    std::copy_n(row + 1 + metric_states_.size(), head_scores, k.head_loss.begin());
                });
        double loss_sum = 0.0;
        for (const auto& k : micro_batches_) {
            loss_sum += k.loss;
            for (std::size_t i = 0; i < metric_states_.size(); ++i)
                metric_states_[i] += k.metric_states[i];
            if constexpr (heads > 1)
                for (std::size_t h = 0; h < heads; ++h)
                    head_loss_totals_[h] += k.head_loss[h];
        }
        return loss_sum;
    }

    std::uint64_t seed_;
    distribute::replica_runner runner_;   // shares its threads with the strategy object it was made in
    detail::aligned_floats_buffer params_;
    detail::aligned_floats_buffer slots_;
    std::vector<micro_batch> micro_batches_;
    /// Per deferred kernel (graph::deferred_kernels), each micro-batch's operands, as its backward left
    /// them: [d * micro_batches + c].
    std::array<deferred_operands, graph::deferred_kernels.size() * micro_batches> deferred_operands_{};
    std::size_t micro_batch_capacity_ = 0;
    /// Each thread's kernel scratch, sized by the graph's plan for micro_batch_capacity_.
    std::vector<kernels::scratch_arena> arenas_;
    /// The threads' shared transposed kernels (make_shared_transposes): the floats, and what each
    /// layer's region holds (the arenas point at these).
    detail::aligned_floats_buffer shared_transposes_;
    std::vector<kernels::kept_copy> shared_copies_;
    /// Each thread's shard of the fused pass.
    distribute::shard_cuts shards_;

    compiled_optimizer optimizer_;
    bool moving_average_ = false;   // the optimizer's options keep one: slots_' last slot
    norm_clipping clipping_;        // the optimizer's options clip by norm
    compiled_loss loss_;
    void (replica_steps::*train_)(const batch_view*, std::size_t) noexcept = nullptr;   // set by compile
    double (*score_)(const compiled_loss&, loss_view&, std::size_t, std::size_t, float*) noexcept = nullptr;
    std::vector<compiled_metric> metrics_;
    /// Several heads (compiled with PerOutput): each one's loss, weight, kind of labels and scoring.
    std::array<compiled_loss, heads> head_losses_{};
    std::array<float, heads> head_weights_{};
    std::array<bool, heads> head_sparse_{};
    using head_scoring = double (*)(const compiled_loss&, loss_view&, std::size_t, std::size_t, float, float*) noexcept;
    std::array<head_scoring, heads> head_score_{};
    std::array<std::size_t, heads> scored_{};   // this step's positions scored by a loss ignoring a class
    /// Each head's losses (unweighted, as Keras logs them) summed over the steps since the last reset.
    std::array<double, heads> head_loss_totals_{};
    /// The metrics' states (compiled_metric::state_at), summed over the steps since the last reset.
    std::vector<double> metric_states_;
    std::uint64_t iterations_ = 0;
    /// A new process-unique value whenever the parameters may change (0 would mean "unknown"), so
    /// no two models, even one built where another was freed, share a version.
    std::uint64_t weights_version_ = detail::next_weights_version();
};

} // namespace tpudsl::detail

#endif // !TPUDSL_TRAIN_REPLICA_STEPS_HPP
