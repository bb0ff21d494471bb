/// @file Defines Dataset<E>, a small typed input pipeline with tf.data's semantics:
///
///   auto ds = Dataset<Example<Shape<300>, std::int32_t>>::from_tensor_slices(x, y)
///                 .shuffle(1000, /*seed*/ 0).batch<32>().prefetch(2).cache();
///
/// Elements are typed by their shape, so `fit` refuses, at compile time, a dataset whose samples do not
/// have the model's input shape. Every stage is re-iterable: each `fit` epoch starts a new iteration,
/// and `shuffle` reshuffles on each one (seeded by the iteration), unless a `cache()` downstream of it
/// replays the first iteration, as tf.data does (keras-semantics §5).
#ifndef TPUDSL_DATA_DATASET_HPP
#define TPUDSL_DATA_DATASET_HPP

#include <tpudsl/core/shape.hpp>
#include <tpudsl/detail/random.hpp>
#include <tpudsl/data/array_ref.hpp>
#include <tpudsl/detail/text.hpp>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace tpudsl {

/// One sample: `x` of shape XShape and element type XT, and its label `y` (one YT; for one-hot
/// labels use YT = float and YSize classes).
template <class XShape, class XT = float, class YT = std::int32_t, std::size_t YSize = 1>
struct Example {
    using x_shape = XShape;
    using x_type = XT;
    using y_type = YT;
    static constexpr std::size_t x_size = XShape::size;
    static constexpr std::size_t y_size = YSize;
    std::array<XT, XShape::size> x{};
    std::array<YT, YSize> y{};
};

/// The batch size of `Dataset::batch(n)`: chosen at run time (Keras users pass `--batch 256`).
inline constexpr std::size_t dynamic_batch = 0;

/// Up to B examples, stored as two flat row-major arrays (what a model step reads). B is a constant
/// of the type (`batch<B>()`), or dynamic_batch: the dataset's batch size is then set at run time
/// (`batch(n)`) and the arrays are sized when the first batch is filled.
template <class E, std::size_t B>
struct Batch {
    using example_type = E;
    static constexpr std::size_t capacity = B;
    std::vector<typename E::x_type> x = std::vector<typename E::x_type>(B * E::x_size);
    std::vector<typename E::y_type> y = std::vector<typename E::y_type>(B * E::y_size);
    std::size_t size = 0;
};

/// What a dataset knows of its values without reading them again: from_tensor_slices learns it in the
/// pass that copies them in (every float finite? the range of the integers), and the stages that only
/// reorder, group, cut or repeat elements keep it; `map` may make anything of them, so after it the
/// values are unknown and `fit` checks each batch as it arrives.
struct value_summary {
    bool known = false;
    bool x_finite = true, y_finite = true;
    long long x_min = 0, x_max = 0, y_min = 0, y_max = 0;   ///< integer inputs and labels

    /// The summary of n values of type T: min and max of integers, finiteness of floats.
    template <class T>
    static void
    of(const T* v, std::size_t n, bool& finite, long long& lo, long long& hi) noexcept
    {
        if constexpr (std::is_integral_v<T>) {
            lo = n ? static_cast<long long>(*std::min_element(v, v + n)) : 0;
            hi = n ? static_cast<long long>(*std::max_element(v, v + n)) : 0;
        } else {
            finite = detail::first_where(v, n, [](T x) { return detail::not_finite(static_cast<float>(x)); }) == n;
        }
    }
};

template <class T>
struct is_batch : std::false_type {};
template <class E, std::size_t B>
struct is_batch<Batch<E, B>> : std::true_type {};

namespace detail {

/// tf.data's cardinality: the number of elements of one iteration, or `infinite`.
inline constexpr std::size_t infinite = static_cast<std::size_t>(-1);

/// A stage of the pipeline: `start(iteration)` begins a pass, `next(out)` yields elements until false.
template <class T>
class stage {
public:
    virtual ~stage() = default;
    virtual void start(std::size_t iteration) = 0;
    virtual bool next(T& out) = 0;
    [[nodiscard]] virtual std::size_t cardinality() const = 0;
};

template <class E>
class slices_stage final : public stage<E> {
public:
    slices_stage(std::shared_ptr<const std::vector<typename E::x_type>> x,
                 std::shared_ptr<const std::vector<typename E::y_type>> y, std::size_t n)
        : x_(std::move(x)), y_(std::move(y)), n_(n)
    {
    }
    void start(std::size_t) override { i_ = 0; }
    [[nodiscard]] std::size_t cardinality() const override { return n_; }
    bool
    next(E& out) override
    {
        if (i_ == n_)
            return false;
        std::copy_n(x_->data() + i_ * E::x_size, E::x_size, out.x.begin());
        std::copy_n(y_->data() + i_ * E::y_size, E::y_size, out.y.begin());
        ++i_;
        return true;
    }

private:
    std::shared_ptr<const std::vector<typename E::x_type>> x_;
    std::shared_ptr<const std::vector<typename E::y_type>> y_;
    std::size_t n_, i_ = 0;
};

/// tf.data's shuffle: a buffer of `size` elements; each output is a uniformly drawn slot, refilled
/// from upstream. Iteration k draws from the seed (seed, k): reshuffled each iteration.
template <class T>
class shuffle_stage final : public stage<T> {
public:
    shuffle_stage(std::shared_ptr<stage<T>> up, std::size_t size, std::uint64_t seed)
        : up_(std::move(up)), size_(size), seed_(seed)
    {
    }
    [[nodiscard]] std::size_t cardinality() const override { return up_->cardinality(); }
    void
    start(std::size_t iteration) override
    {
        up_->start(iteration);
        iteration_ = iteration;
        draws_ = 0;
        buffer_.clear();
        T item;
        while (buffer_.size() < size_ && up_->next(item))
            buffer_.push_back(item);
    }
    bool
    next(T& out) override
    {
        if (buffer_.empty())
            return false;
        const std::size_t pick = static_cast<std::size_t>(hash4(seed_, iteration_, draws_++, 0x5f) % buffer_.size());
        out = buffer_[pick];
        T item;
        if (up_->next(item)) {
            buffer_[pick] = std::move(item);
        } else {
            buffer_[pick] = std::move(buffer_.back());
            buffer_.pop_back();
        }
        return true;
    }

private:
    std::shared_ptr<stage<T>> up_;
    std::size_t size_;
    std::uint64_t seed_;
    std::size_t iteration_ = 0, draws_ = 0;
    std::vector<T> buffer_;
};

/// tf.data's cache: the first complete iteration is recorded; later ones replay it without
/// touching upstream (so a shuffle above it is frozen at its first order). What it records is always
/// upstream's iteration 0, whichever iteration first reads it: a fit resumed at epoch k (a new process,
/// an empty cache) replays what the uninterrupted fit replays.
template <class T>
class cache_stage final : public stage<T> {
public:
    explicit cache_stage(std::shared_ptr<stage<T>> up) : up_(std::move(up)) {}
    [[nodiscard]] std::size_t cardinality() const override { return up_->cardinality(); }
    void
    start(std::size_t iteration) override
    {
        pos_ = 0;
        static_cast<void>(iteration);
        if (!complete_) {
            recording_.clear();
            up_->start(0);
        }
    }
    bool
    next(T& out) override
    {
        if (complete_) {
            if (pos_ == cached_.size())
                return false;
            out = cached_[pos_++];
            return true;
        }
        if (!up_->next(out)) {
            cached_ = std::move(recording_);
            complete_ = true;
            return false;
        }
        recording_.push_back(out);
        return true;
    }

private:
    std::shared_ptr<stage<T>> up_;
    std::vector<T> cached_, recording_;
    bool complete_ = false;
    std::size_t pos_ = 0;
};

/// repeat(count): count passes of upstream per iteration (each a new upstream iteration); forever
/// when count is empty.
template <class T>
class repeat_stage final : public stage<T> {
public:
    repeat_stage(std::shared_ptr<stage<T>> up, std::optional<std::size_t> count) : up_(std::move(up)), count_(count) {}
    [[nodiscard]] std::size_t
    cardinality() const override
    {
        const std::size_t n = up_->cardinality();
        if (n == 0 || (count_ && *count_ == 0))
            return 0;
        if (!count_ || n == infinite)
            return infinite;
        return n * *count_;
    }
    void
    start(std::size_t iteration) override
    {
        base_ = iteration * 1000003;
        pass_ = 0;
        up_->start(base_);
    }
    bool
    next(T& out) override
    {
        for (;;) {
            if (up_->next(out)) {
                yielded_in_pass_ = true;
                return true;
            }
            ++pass_;
            if ((count_ && pass_ >= *count_) || !yielded_in_pass_)
                return false;   // done, or an empty upstream (which would loop forever)
            yielded_in_pass_ = false;
            up_->start(base_ + pass_);
        }
    }

private:
    std::shared_ptr<stage<T>> up_;
    std::optional<std::size_t> count_;
    std::size_t base_ = 0, pass_ = 0;
    bool yielded_in_pass_ = false;
};

/// take(n) / skip(n) on elements.
template <class T>
class slice_stage final : public stage<T> {
public:
    slice_stage(std::shared_ptr<stage<T>> up, std::size_t skip, std::optional<std::size_t> take)
        : up_(std::move(up)), skip_(skip), take_(take)
    {
    }
    [[nodiscard]] std::size_t
    cardinality() const override
    {
        const std::size_t n = up_->cardinality();
        const std::size_t left = n == infinite ? infinite : (n > skip_ ? n - skip_ : 0);
        return take_ ? std::min(left, *take_) : left;
    }
    void
    start(std::size_t iteration) override
    {
        up_->start(iteration);
        taken_ = 0;
        T item;
        for (std::size_t i = 0; i < skip_ && up_->next(item); ++i) {
        }
    }
    bool
    next(T& out) override
    {
        if (take_ && taken_ >= *take_)
            return false;
        if (!up_->next(out))
            return false;
        ++taken_;
        return true;
    }

private:
    std::shared_ptr<stage<T>> up_;
    std::size_t skip_;
    std::optional<std::size_t> take_;
    std::size_t taken_ = 0;
};

template <class T, class U>
class map_stage final : public stage<U> {
public:
    map_stage(std::shared_ptr<stage<T>> up, std::function<U(const T&)> f) : up_(std::move(up)), f_(std::move(f)) {}
    [[nodiscard]] std::size_t cardinality() const override { return up_->cardinality(); }
    void start(std::size_t iteration) override { up_->start(iteration); }
    bool
    next(U& out) override
    {
        T item;
        if (!up_->next(item))
            return false;
        out = f_(item);
        return true;
    }

private:
    std::shared_ptr<stage<T>> up_;
    std::function<U(const T&)> f_;
};

/// Batches of `size` examples (B, or the run-time size when B is dynamic_batch).
template <class E, std::size_t B>
class batch_stage final : public stage<Batch<E, B>> {
public:
    batch_stage(std::shared_ptr<stage<E>> up, std::size_t size, bool drop_remainder)
        : up_(std::move(up)), size_(size), drop_(drop_remainder)
    {
    }
    [[nodiscard]] std::size_t
    cardinality() const override
    {
        const std::size_t n = up_->cardinality();
        return n == infinite ? infinite : (drop_ ? n / size_ : n / size_ + (n % size_ != 0));
    }
    void start(std::size_t iteration) override { up_->start(iteration); }
    bool
    next(Batch<E, B>& out) override
    {
        out.size = 0;
        // Room for a whole batch, but never more than one iteration of the data holds: a batch size
        // larger than the data (Keras allows it) takes what arrives, growing as it does. A no-op unless
        // `out` is new or was moved from.
        reserve(out, std::min({size_, up_->cardinality(), first_room}));
        E item;
        while (out.size < size_ && up_->next(item)) {
            if (out.size == out.x.size() / E::x_size)
                reserve(out, std::min(size_, std::max<std::size_t>(2 * out.size, 1)));
            std::copy(item.x.begin(), item.x.end(), out.x.begin() + out.size * E::x_size);
            std::copy(item.y.begin(), item.y.end(), out.y.begin() + out.size * E::y_size);
            ++out.size;
        }
        return out.size == size_ || (out.size > 0 && !drop_);
    }

private:
    /// Examples a batch holds before it grows (a batch larger than this, of data that holds more, grows
    /// while its first batch is read, then stays).
    static constexpr std::size_t first_room = std::size_t{1} << 16;

    static void
    reserve(Batch<E, B>& out, std::size_t examples)
    {
        if (out.x.size() < examples * E::x_size) {
            out.x.resize(examples * E::x_size);
            out.y.resize(examples * E::y_size);
        }
    }

    std::shared_ptr<stage<E>> up_;
    std::size_t size_;
    bool drop_;
};

/// prefetch(n): a background thread runs upstream into a bounded queue of n elements; the order is
/// upstream's. The thread lives for one iteration.
template <class T>
class prefetch_stage final : public stage<T> {
public:
    prefetch_stage(std::shared_ptr<stage<T>> up, std::size_t depth) : up_(std::move(up)), depth_(std::max<std::size_t>(depth, 1)) {}
    [[nodiscard]] std::size_t cardinality() const override { return up_->cardinality(); }
    ~prefetch_stage() override { stop(); }

    void
    start(std::size_t iteration) override
    {
        stop();
        {
            std::lock_guard lock(mutex_);
            queue_.clear();
            done_ = false;
            cancel_ = false;
            error_ = nullptr;
        }
        worker_ = std::thread([this, iteration] { produce(iteration); });
    }

    bool
    next(T& out) override
    {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return !queue_.empty() || done_; });
        if (queue_.empty()) {
            if (error_)
                std::rethrow_exception(error_);
            return false;
        }
        out = std::move(queue_.front());
        queue_.pop_front();
        space_.notify_one();
        return true;
    }

private:
    void
    produce(std::size_t iteration)
    {
        try {
            up_->start(iteration);
            for (T item; up_->next(item); item = T{}) {   // a fresh element: the queue takes this one
                std::unique_lock lock(mutex_);
                space_.wait(lock, [&] { return queue_.size() < depth_ || cancel_; });
                if (cancel_)
                    break;
                queue_.push_back(std::move(item));
                ready_.notify_one();
            }
        } catch (...) {
            std::lock_guard lock(mutex_);
            error_ = std::current_exception();
        }
        std::lock_guard lock(mutex_);
        done_ = true;
        ready_.notify_all();
    }

    void
    stop()
    {
        if (!worker_.joinable())
            return;
        {
            std::lock_guard lock(mutex_);
            cancel_ = true;
        }
        space_.notify_all();
        worker_.join();
    }

    std::shared_ptr<stage<T>> up_;
    std::size_t depth_;
    std::thread worker_;
    std::mutex mutex_;
    std::condition_variable ready_, space_;
    std::deque<T> queue_;
    bool done_ = false, cancel_ = false;
    std::exception_ptr error_;
};

} // namespace detail

/// A re-iterable, typed pipeline of elements T (an Example or a Batch of them).
template <class T>
class Dataset {
public:
    using element_type = T;

    /// A pipeline ending in stage s; `batch_size`: its batches' size (0 for unbatched elements);
    /// `values`: what is known of its values.
    explicit Dataset(std::shared_ptr<detail::stage<T>> s, std::size_t batch_size = 0, value_summary values = {})
        : stage_(std::move(s)), batch_size_(batch_size), values_(values)
    {
    }

    /// `from_tensor_slices((x, y))`: one Example per row of x and y (copied once, here). The arrays'
    /// element types and per-sample sizes are checked against the Example type.
    template <class X, class Y>
        requires(!is_batch<T>::value)
    [[nodiscard]] static Dataset
    from_tensor_slices(const X& x, const Y& y)
    {
        const array_ref xr = make_array_ref(x), yr = make_array_ref(y);
        if (xr.type != dtype_of<typename T::x_type>)
            detail::bad_input(tpudsl::detail::concat({"from_tensor_slices: x holds ", dtype_name(xr.type),
                                                      ", the dataset's examples ",
                                                      dtype_name(dtype_of<typename T::x_type>)}));
        if (yr.type != dtype_of<typename T::y_type>)
            detail::bad_input(tpudsl::detail::concat({"from_tensor_slices: y holds ", dtype_name(yr.type),
                                                      ", the dataset's labels ",
                                                      dtype_name(dtype_of<typename T::y_type>)}));
        if (xr.shape.size() < 2 || xr.sample_size() != T::x_size)
            detail::bad_input(tpudsl::detail::concat({"from_tensor_slices: x has shape ", xr.shape_string(),
                                                      ", but an example holds ", std::to_string(T::x_size),
                                                      " values ", T::x_shape::keras_string()}));
        if (yr.samples() != xr.samples() || yr.sample_size() != T::y_size)
            detail::bad_input(tpudsl::detail::concat({"from_tensor_slices: y has shape ", yr.shape_string(), " for ",
                                                      std::to_string(xr.samples()), " samples of ",
                                                      std::to_string(T::y_size), " label(s)"}));
        auto xs = std::make_shared<const std::vector<typename T::x_type>>(
            xr.as<typename T::x_type>(), xr.as<typename T::x_type>() + xr.samples() * T::x_size);
        auto ys = std::make_shared<const std::vector<typename T::y_type>>(
            yr.as<typename T::y_type>(), yr.as<typename T::y_type>() + yr.samples() * T::y_size);
        value_summary values;
        value_summary::of(xs->data(), xs->size(), values.x_finite, values.x_min, values.x_max);
        value_summary::of(ys->data(), ys->size(), values.y_finite, values.y_min, values.y_max);
        values.known = true;
        return Dataset(std::make_shared<detail::slices_stage<T>>(std::move(xs), std::move(ys), xr.samples()), 0,
                       values);
    }

    /// `shuffle(buffer_size, seed)`, reshuffled on each iteration.
    [[nodiscard]] Dataset
    shuffle(std::size_t buffer_size, std::uint64_t seed = 0) const
    {
        if (buffer_size == 0)
            detail::bad_input("Dataset::shuffle: buffer_size must be at least 1");
        return Dataset(std::make_shared<detail::shuffle_stage<T>>(stage_, buffer_size, seed), batch_size_, values_);
    }

    /// `batch(B, drop_remainder)`: the batch size is a constant of the type (checked at compile time
    /// against a strategy's replicas).
    template <std::size_t B>
        requires(!is_batch<T>::value)
    [[nodiscard]] Dataset<Batch<T, B>>
    batch(bool drop_remainder = false) const
    {
        static_assert(B > 0, "tpudsl::Dataset::batch<B>: requires B > 0");
        return Dataset<Batch<T, B>>(std::make_shared<detail::batch_stage<T, B>>(stage_, B, drop_remainder), B,
                                    values_);
    }

    /// `batch(batch_size, drop_remainder)` with the size chosen at run time (a command line's
    /// `--batch`): the same batches as batch<B>(), checked against a strategy's replicas when fit
    /// starts.
    [[nodiscard]] Dataset<Batch<T, dynamic_batch>>
    batch(std::size_t batch_size, bool drop_remainder = false) const
        requires(!is_batch<T>::value)
    {
        if (batch_size == 0)
            detail::bad_input("Dataset::batch: batch_size must be at least 1");
        return Dataset<Batch<T, dynamic_batch>>(
            std::make_shared<detail::batch_stage<T, dynamic_batch>>(stage_, batch_size, drop_remainder), batch_size,
            values_);
    }

    /// The size of this dataset's batches (0 when its elements are not batches).
    [[nodiscard]] std::size_t batch_size() const noexcept { return batch_size_; }
    /// What is known of its values (value_summary).
    [[nodiscard]] const value_summary& values() const noexcept { return values_; }

    [[nodiscard]] Dataset
    cache() const
    {
        return Dataset(std::make_shared<detail::cache_stage<T>>(stage_), batch_size_, values_);
    }

    /// `repeat()` forever, or `repeat(count)`.
    [[nodiscard]] Dataset
    repeat(std::optional<std::size_t> count = std::nullopt) const
    {
        return Dataset(std::make_shared<detail::repeat_stage<T>>(stage_, count), batch_size_, values_);
    }

    [[nodiscard]] Dataset
    take(std::size_t n) const
    {
        return Dataset(std::make_shared<detail::slice_stage<T>>(stage_, 0, n), batch_size_, values_);
    }

    [[nodiscard]] Dataset
    skip(std::size_t n) const
    {
        return Dataset(std::make_shared<detail::slice_stage<T>>(stage_, n, std::nullopt), batch_size_, values_);
    }

    /// `map(f)`: f takes an element and returns the new one (its type may change).
    template <class F, class U = std::invoke_result_t<F, const T&>>
    [[nodiscard]] Dataset<U>
    map(F f) const
    {
        // A batch mapped to a batch of the same size keeps its size; anything else is unbatched.
        return Dataset<U>(std::make_shared<detail::map_stage<T, U>>(stage_, std::function<U(const T&)>(std::move(f))),
                          is_batch<U>::value ? batch_size_ : 0);
    }

    /// `prefetch(n)`: a background thread keeps up to n elements ready (tf.data's AUTOTUNE: 2 here).
    [[nodiscard]] Dataset
    prefetch(std::size_t n = 2) const
    {
        return Dataset(std::make_shared<detail::prefetch_stage<T>>(stage_, n), batch_size_, values_);
    }

    /// Elements in one iteration (`tf.data.Dataset.cardinality()`), or `infinite_cardinality` for a
    /// dataset that repeats forever.
    [[nodiscard]] std::size_t cardinality() const { return stage_->cardinality(); }
    static constexpr std::size_t infinite_cardinality = detail::infinite;

    /// Starts iteration `iteration` (fit starts one per epoch).
    void start(std::size_t iteration = 0) const { stage_->start(iteration); }
    /// The next element of the current iteration, or false at its end.
    bool next(T& out) const { return stage_->next(out); }

private:
    std::shared_ptr<detail::stage<T>> stage_;
    std::size_t batch_size_ = 0;
    value_summary values_;
};

/// A batched dataset whose element types are known at run time only: what `validation_data` holds for
/// a Dataset (FitOptions is no template). Each batch is handed out as a dataset_ref into the stream's
/// own storage, valid until the next call; the model checks its types and shapes against its Input.
class batch_stream {
public:
    virtual ~batch_stream() = default;
    virtual void start(std::size_t iteration) = 0;
    /// The next batch, or null at the end of the iteration.
    virtual const dataset_ref* next() = 0;
    [[nodiscard]] virtual std::size_t batch_size() const = 0;
    [[nodiscard]] virtual value_summary values() const = 0;
};

namespace detail {
template <class E, std::size_t B>
class dataset_stream final : public batch_stream {
public:
    explicit dataset_stream(Dataset<Batch<E, B>> data) : data_(std::move(data))
    {
        ref_.x = {nullptr, dtype_of<typename E::x_type>, {0}};
        ref_.y = {nullptr, dtype_of<typename E::y_type>, {0}};
        for (std::size_t d : E::x_shape::dims)
            ref_.x.shape.push_back(d);
        if (E::y_size > 1)
            ref_.y.shape.push_back(E::y_size);
    }
    void start(std::size_t iteration) override { data_.start(iteration); }
    const dataset_ref*
    next() override
    {
        if (!data_.next(batch_))
            return nullptr;
        ref_.x.data = batch_.x.data();   // a batch moved in from a prefetch queue has new storage
        ref_.y.data = batch_.y.data();
        ref_.x.shape[0] = ref_.y.shape[0] = batch_.size;
        return &ref_;
    }
    [[nodiscard]] std::size_t batch_size() const override { return data_.batch_size(); }
    [[nodiscard]] value_summary values() const override { return data_.values(); }

private:
    Dataset<Batch<E, B>> data_;
    Batch<E, B> batch_;
    dataset_ref ref_;
};
} // namespace detail

/// Keras' `validation_data`, one spelling for arrays and Datasets: `validation_data(x_val, y_val)`, or
/// a batched Dataset (evaluated at its own batch size).
class ValidationData {
public:
    /// Arrays, as `validation_data(x, y)` makes them.
    ValidationData(dataset_ref arrays) : arrays_(arrays) {}
    /// A batched Dataset: it is shared, not copied (a dataset is a handle on its pipeline).
    template <class E, std::size_t B>
    ValidationData(const Dataset<Batch<E, B>>& data) : stream_(std::make_shared<detail::dataset_stream<E, B>>(data))
    {
    }

    /// The arrays, or null for a Dataset.
    [[nodiscard]] const dataset_ref* arrays() const noexcept { return stream_ ? nullptr : &arrays_; }
    /// The Dataset's batches, or null for arrays.
    [[nodiscard]] batch_stream* dataset() const noexcept { return stream_.get(); }

private:
    dataset_ref arrays_;
    std::shared_ptr<batch_stream> stream_;
};

} // namespace tpudsl

#endif // !TPUDSL_DATA_DATASET_HPP
