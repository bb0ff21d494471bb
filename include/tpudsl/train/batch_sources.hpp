/// @file What a training step reads (detail::batch_view: samples and labels, typed) and where fit's
/// epochs take them from: arrays as a stream of shuffled passes (detail::array_source), or a batched
/// Dataset, one iteration per epoch (detail::dataset_source), and what a Dataset must be for a model
/// (its type at compile time, its batch against the replicas).
#ifndef TPUDSL_TRAIN_BATCH_SOURCES_HPP
#define TPUDSL_TRAIN_BATCH_SOURCES_HPP

#include <tpudsl/data/array_ref.hpp>
#include <tpudsl/data/dataset.hpp>
#include <tpudsl/detail/random.hpp>
#include <tpudsl/detail/text.hpp>
#include <tpudsl/io/training_state.hpp>
#include <tpudsl/train/fit_options.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tpudsl::detail {

/// What a step reads, typed: samples of `InputSize` elements of In and their labels (arrays whose
/// types, shapes and values were checked where they entered, or a Dataset's batch, typed at compile
/// time), and which of them. A sample has `Positions` class ids (one per timestep of a (T, classes)
/// output, else one).
template <class In, std::size_t InputSize, std::size_t OutputSize, std::size_t Positions = 1>
struct batch_view {
    const In* x = nullptr;
    const std::int32_t* sparse = nullptr;   // Positions class ids a sample (a sparse loss), or
    const float* dense = nullptr;           // rows of OutputSize targets
    const std::uint32_t* idx = nullptr;     // samples idx[0, n) of them; null: [0, n) in order, read in place
    std::size_t n = 0;
    const float* weights = nullptr;         // a weight per sample (Keras' sample_weight); null: 1 each

    /// Arrays that the checks accepted, typed: y holds int32 class ids or float32 rows (no other type
    /// passes them).
    [[nodiscard]] static batch_view
    of(const dataset_ref& d, const std::uint32_t* idx, std::size_t n) noexcept
    {
        const bool ids = d.y.type == dtype::int32;
        return {d.x.as<In>(), ids ? d.y.as<std::int32_t>() : nullptr, ids ? nullptr : d.y.as<float>(), idx, n, nullptr};
    }

    /// Samples [begin, begin + count) in order, read in place.
    [[nodiscard]] batch_view
    samples(std::size_t begin, std::size_t count) const noexcept
    {
        return {x + begin * InputSize, sparse ? sparse + begin * Positions : nullptr,
                dense ? dense + begin * OutputSize : nullptr,
                nullptr, count, weights ? weights + begin : nullptr};
    }

    /// How many of the n samples' class ids differ from `ignored`: `count` a sample, at `at` of its
    /// labels (its Positions ids, or a packed row of OutputSize floats holding them).
    [[nodiscard]] std::size_t
    ids_other_than(std::int32_t ignored, std::size_t at, std::size_t count) const noexcept
    {
        std::size_t others = 0;
        for (std::size_t s = 0; s < n; ++s) {
            const std::size_t i = idx ? idx[s] : s;
            for (std::size_t p = at; p < at + count; ++p)
                others += (sparse ? sparse[i * Positions + p] : static_cast<std::int32_t>(dense[i * OutputSize + p])) != ignored;
        }
        return others;
    }
};

/// The sample order of pass p: the identity, or a permutation drawn from (seed, pass).
inline void
sample_order(std::vector<std::uint32_t>& order, std::uint64_t seed, std::size_t pass, bool shuffle)
{
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = static_cast<std::uint32_t>(i);
    if (!shuffle)
        return;
    for (std::size_t i = order.size(); i > 1; --i) {
        const std::uint64_t r = hash4(seed ^ 0x5eed5eed5eedULL, pass, i, 0);
        std::swap(order[i - 1], order[static_cast<std::size_t>(r % i)]);
    }
}

/// Arrays as a batch stream: pass p visits the samples in a permutation drawn from (seed, p), batch by
/// batch (the last one partial, a step of its own). Without steps_per_epoch an epoch is one pass; with
/// it, the stream runs on across epochs, as Keras' array adapter does.
template <class View>
struct array_source {
    View data;   // all of the arrays
    const FitOptions& options;
    std::uint64_t seed;
    std::size_t batch_size;
    std::vector<std::uint32_t> order;
    std::size_t pass = 0, batch = 0, per_pass;

    array_source(const View& all, const FitOptions& o, std::uint64_t s, std::size_t size)
        : data(all), options(o), seed(s), batch_size(size), order(all.n), per_pass((all.n + size - 1) / size)
    {
        sample_order(order, seed, pass, options.shuffle);
    }
    [[nodiscard]] std::size_t steps() const noexcept { return options.steps_per_epoch ? options.steps_per_epoch : per_pass; }
    void
    begin_epoch(std::size_t)
    {
        if (!options.steps_per_epoch && batch != 0)
            sample_order(order, seed, ++pass, options.shuffle), batch = 0;
    }
    /// A fit at `step` of `epoch`, with where the stream stands: pass and batch of that pass.
    [[nodiscard]] fit_position
    position(std::size_t epoch, std::size_t step) const noexcept
    {
        return {epoch, step, pass, batch};
    }
    /// Puts the stream where position() said it stood (a restored fit), drawing with `s`.
    void
    seek(const fit_position& p, std::uint64_t s)
    {
        if (p.batch > per_pass)
            throw std::invalid_argument(detail::concat({"tpudsl::BackupAndRestore: the backup stands at batch ",
                                                        std::to_string(p.batch), " of a pass of ",
                                                        std::to_string(per_pass),
                                                        " batches; it was written by another fit"}));
        seed = s;
        pass = static_cast<std::size_t>(p.pass);
        batch = static_cast<std::size_t>(p.batch);
        sample_order(order, seed, pass, options.shuffle);
    }
    bool
    next(View& b)
    {
        if (batch == per_pass)
            sample_order(order, seed, ++pass, options.shuffle), batch = 0;
        const std::size_t begin = batch++ * batch_size;
        b = data;
        b.idx = order.data() + begin;
        b.n = std::min(batch_size, data.n - begin);
        return true;
    }
};

/// A batched Dataset as a batch stream: epoch e is iteration e of the dataset. Its types and shapes are
/// the model's (checked at compile time) and its labels' kind is checked once, here; its values are
/// read again only when the dataset's value_summary does not already show that they fit (after a map).
/// The micro-batches read each batch where it lies, typed. Model: the Trainable (its check_data,
/// values_fit and ensure_capacity).
template <class Model, class E, std::size_t B>
struct dataset_source {
    using view = typename Model::batch_view;
    Model& model;
    const Dataset<Batch<E, B>>& data;
    Batch<E, B> batch;
    std::size_t count = 0, first_epoch;
    /// False when the dataset's values were checked where they entered (its value_summary fits the
    /// model): its batches' values are then not read again.
    bool check_values;

    dataset_source(Model& m, const Dataset<Batch<E, B>>& d, std::size_t first)
        : model(m), data(d), first_epoch(first), check_values(!m.values_fit(d.values()))
    {
        model.check_data(batch_ref(0), "x", "y", false);   // the labels' type and width against the loss
    }
    /// The batch as the checks read it (no sample is read through it).
    [[nodiscard]] dataset_ref
    batch_ref(std::size_t samples) const
    {
        dataset_ref r{{batch.x.data(), dtype_of<typename E::x_type>, {samples}},
                      {batch.y.data(), dtype_of<typename E::y_type>, {samples, E::y_size}}};
        r.x.shape.insert(r.x.shape.end(), E::x_shape::dims.begin(), E::x_shape::dims.end());
        return r;
    }
    void
    begin_epoch(std::size_t epoch)
    {
        data.start(epoch);
        count = 0;
    }
    /// A fit at `step` of `epoch`, with where the stream stands: batches read of the epoch's iteration.
    [[nodiscard]] fit_position
    position(std::size_t epoch, std::size_t step) const noexcept
    {
        return {epoch, step, 0, count};
    }
    /// Reads on to the step of the epoch where a restored fit stood (after begin_epoch: each epoch is
    /// an iteration of its own, so only the step within it matters).
    void
    seek(const fit_position& p, std::uint64_t)
    {
        while (count < p.step) {
            if (!data.next(batch))
                throw std::invalid_argument(detail::concat({"tpudsl::BackupAndRestore: the backup stands at batch ",
                                                            std::to_string(p.step),
                                                            " of the epoch, but the dataset holds only ",
                                                            std::to_string(count), "; it was written by another fit"}));
            ++count;
        }
    }
    bool
    next(view& b)
    {
        if (!data.next(batch))
            return false;
        if (check_values) {
            try {
                model.check_data(batch_ref(batch.size), "x", "y", true);
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument(detail::concat({e.what(), " (in batch ",
                                                            std::to_string(count), " of the dataset)"}));
            }
        }
        ++count;
        // The buffers are sized by the batches that come: a batch size larger than the data (or than
        // memory, for data that never fills it) costs nothing.
        model.ensure_capacity(batch.size);
        b = {batch.x.data(), nullptr, nullptr, nullptr, batch.size};   // read where it lies: no copy
        if constexpr (std::is_same_v<typename E::y_type, std::int32_t>)
            b.sparse = batch.y.data();
        else if constexpr (std::is_same_v<typename E::y_type, float>)   // else the model's checks said why not
            b.dense = batch.y.data();
        return true;
    }
};

/// A batched dataset's batch size: its type's, or the one `batch(n)` chose at run time, which must
/// split evenly over the replicas (Keras' TPU rule; a compile-time batch is checked at compile time).
template <class E, std::size_t B>
[[nodiscard]] std::size_t
dataset_batch(const Dataset<Batch<E, B>>& data, std::size_t replicas)
{
    if constexpr (B != dynamic_batch) {
        return B;
    } else {
        const std::size_t size = data.batch_size();
        if (size % replicas != 0)
            bad_input(detail::concat({"fit/evaluate(Dataset): the dataset's batch size (", std::to_string(size),
                                      ") must be a multiple of the strategy's ", std::to_string(replicas),
                                      " replicas; round it to a multiple of ", std::to_string(replicas)}));
        return size;
    }
}

/// What a model of type Seq on Replicas replicas requires of a Dataset's type, checked at compile time.
template <class Seq, std::size_t Replicas, class E, std::size_t B>
constexpr void
check_dataset_type() noexcept
{
    static_assert(std::is_same_v<typename E::x_shape, typename Seq::input_shape>,
                  "tpudsl::Trainable::fit/evaluate(Dataset): the dataset's examples must have the model's input "
                  "shape [TPUDSL_DATASET_SHAPE]");
    static_assert(std::is_same_v<typename E::x_type, typename Seq::input_type>,
                  "tpudsl::Trainable::fit/evaluate(Dataset): the dataset's examples must have the model's input "
                  "element type [TPUDSL_DATASET_TYPE]");
    static_assert(std::is_same_v<typename E::y_type, std::int32_t> || std::is_same_v<typename E::y_type, float>,
                  "tpudsl::Trainable::fit/evaluate(Dataset): the dataset's labels must be int32 class ids or float "
                  "targets; convert them where the dataset is made (from_tensor_slices of converted arrays, or a "
                  "map) [TPUDSL_DATASET_LABEL_TYPE]");
    static_assert(B == dynamic_batch || B % Replicas == 0,
                  "tpudsl::Trainable::fit(Dataset): the dataset's batch must be a multiple of the strategy's "
                  "replicas (Keras' TPU rule, made static) [TPUDSL_TPU_BATCH_NOT_DIVISIBLE]");
}

} // namespace tpudsl::detail

#endif // !TPUDSL_TRAIN_BATCH_SOURCES_HPP
