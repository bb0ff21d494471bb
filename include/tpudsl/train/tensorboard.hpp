/// @file Defines TensorBoard, Keras' callback that logs a fit for TensorBoard (keras.callbacks.TensorBoard):
/// each epoch's loss, metrics and learning rate as scalars (and, with update_freq, every N batches'
/// values), and with histogram_freq the weights' histograms, in TensorFlow's event files, which the
/// `tensorboard` package reads. The files are written here, with no TensorFlow or protobuf: TFRecord
/// framing (a length, the record, each with a masked CRC-32C) around Event protos encoded by hand.
#ifndef TPUDSL_TRAIN_TENSORBOARD_HPP
#define TPUDSL_TRAIN_TENSORBOARD_HPP

#include <tpudsl/detail/text.hpp>
#include <tpudsl/io/files.hpp>
#include <tpudsl/io/weights.hpp>
#include <tpudsl/train/callbacks.hpp>
#include <tpudsl/train/history.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace tpudsl {

/// One weight whose histogram TensorBoard writes: its name ("dense/kernel") and where its floats lie
/// in the buffer TrainingControl::get_weights returns.
struct TensorBoardWeight {
    std::string name;
    std::size_t offset = 0, size = 0;
};

namespace detail {

/// The model type of a Trainable (its `sequential`), or the type itself.
template <class M>
struct model_type_of {
    using type = M;
};
template <class M>
    requires requires { typename M::sequential; }
struct model_type_of<M> {
    using type = typename M::sequential;
};

/// CRC-32C (Castagnoli; reflected polynomial 0x82F63B78), the checksum TFRecord frames its records with.
inline constexpr std::array<std::uint32_t, 256> crc32c_table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        t[i] = c;
    }
    return t;
}();

[[nodiscard]] inline std::uint32_t
crc32c(const void* data, std::size_t n) noexcept
{
    const auto* p = static_cast<const unsigned char*>(data);
    std::uint32_t c = 0xFFFFFFFFu;
    for (std::size_t i = 0; i < n; ++i)
        c = crc32c_table[(c ^ p[i]) & 0xFFu] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/// TFRecord's masked CRC: the CRC rotated right by 15 bits, plus 0xa282ead8.
[[nodiscard]] constexpr std::uint32_t
masked_crc32c(std::uint32_t crc) noexcept
{
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

/// Appends `v`'s `bytes` bytes, little-endian.
inline void
put_le(std::string& out, std::uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        out += static_cast<char>(static_cast<unsigned char>(v >> (8 * i)));
}

/// Appends `data` as one TFRecord: its length (uint64), the masked CRC-32C of those 8 bytes, the data,
/// the masked CRC-32C of the data.
inline void
append_tfrecord(std::string& out, std::string_view data)
{
    unsigned char length[8];
    for (int i = 0; i < 8; ++i)
        length[i] = static_cast<unsigned char>(static_cast<std::uint64_t>(data.size()) >> (8 * i));
    out.append(reinterpret_cast<const char*>(length), 8);
    put_le(out, masked_crc32c(crc32c(length, 8)), 4);
    out.append(data);
    put_le(out, masked_crc32c(crc32c(data.data(), data.size())), 4);
}

/// Protocol buffers' wire format, what the Event protos need of it.
namespace pb {
inline void
varint(std::string& out, std::uint64_t v)
{
    while (v >= 0x80) {
        out += static_cast<char>(static_cast<unsigned char>(v | 0x80));
        v >>= 7;
    }
    out += static_cast<char>(static_cast<unsigned char>(v));
}
inline void key(std::string& out, unsigned field, unsigned wire_type) { varint(out, (field << 3) | wire_type); }
inline void
fixed64(std::string& out, unsigned field, double v)
{
    std::uint64_t bits;
    std::memcpy(&bits, &v, 8);
    key(out, field, 1);
    put_le(out, bits, 8);
}
inline void
fixed32(std::string& out, unsigned field, float v)
{
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    key(out, field, 5);
    put_le(out, bits, 4);
}
inline void
bytes(std::string& out, unsigned field, std::string_view data)
{
    key(out, field, 2);
    varint(out, data.size());
    out.append(data);
}
/// A packed repeated double.
inline void
doubles(std::string& out, unsigned field, const std::vector<double>& values)
{
    key(out, field, 2);
    varint(out, values.size() * 8);
    for (const double v : values) {
        std::uint64_t bits;
        std::memcpy(&bits, &v, 8);
        put_le(out, bits, 8);
    }
}
} // namespace pb

/// TensorFlow's default histogram buckets (tensorflow/core/lib/histogram): limits growing by 10% from
/// 1e-12 to 1e20, mirrored below 0, with 0 and -DBL_MAX, DBL_MAX; bucket i holds [limit[i-1], limit[i]).
[[nodiscard]] inline const std::vector<double>&
default_histogram_limits()
{
    static const std::vector<double> limits = [] {
        std::vector<double> positive;
        for (double v = 1.0e-12; v < 1.0e20; v *= 1.1)
            positive.push_back(v);
        positive.push_back(DBL_MAX);
        std::vector<double> all;
        all.reserve(2 * positive.size() + 1);
        for (auto it = positive.rbegin(); it != positive.rend(); ++it)
            all.push_back(-*it);
        all.push_back(0.0);
        all.insert(all.end(), positive.begin(), positive.end());
        return all;
    }();
    return limits;
}

/// One event file of a run: created new (never appended to an existing one), its first record the
/// file_version event, then Events added whole. What is added waits in memory until flush(), which
/// appends it in one write, so the file holds whole records only (a crash can cut at most the records
/// of the write under way at its end, which a reader takes for not yet written; none can be corrupted).
class event_file {
public:
    [[nodiscard]] bool is_open() const noexcept { return static_cast<bool>(fd_); }
    [[nodiscard]] const std::string& path() const noexcept { return path_; }

    /// Creates the directory `dir` (and its parents) and a new event file in it, named as TensorFlow
    /// names them: events.out.tfevents.<seconds>.<host>.<pid>.<n>.v2. Throws std::system_error with the
    /// system's reason and the path that could not be made.
    [[gnu::cold]] void
    open(const std::string& dir, const std::string& log_dir, std::string_view who)
    {
        namespace fs = std::filesystem;
        std::error_code ec;
        fs::create_directories(dir, ec);
        const auto failure = [&] {
            return concat(
                {who, ": cannot create the directory '", dir, "' for the event files (log_dir '", log_dir, "')"});
        };
        if (ec)
            throw std::system_error(ec, failure());
        if (!fs::is_directory(dir, ec))
            throw_errno(ENOTDIR, failure());
        char host[256] = {};
        if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0')
            std::strcpy(host, "localhost");
        for (char& c : host)
            if (c == '/')
                c = '_';
        const std::string seconds = std::to_string(static_cast<long long>(std::time(nullptr)));
        const std::string stem =
            concat({dir, "/events.out.tfevents.", seconds, ".", host, ".", std::to_string(::getpid()), "."});
        for (int attempt = 0; !fd_; ++attempt) {
            path_ = concat({stem, std::to_string(next_temporary_number()), ".v2"});
            fd_ = unique_fd(::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0666));
            if (!fd_ && (errno != EEXIST || attempt == 100))
                throw_errno(errno, concat({who, ": cannot create the event file '", path_, "'"}));
        }
        who_ = who;
        pending_.clear();
        event_.clear();
        pb::fixed64(event_, 1, wall_time());
        pb::bytes(event_, 3, "brain.Event:2");
        append_tfrecord(pending_, event_);
        flush();
    }

    /// Adds a scalar: an Event at `step` whose Summary holds one Value {tag, simple_value}.
    void
    scalar(std::string_view tag, std::uint64_t step, double value)
    {
        value_.clear();
        pb::bytes(value_, 1, tag);
        pb::fixed32(value_, 2, static_cast<float>(value));   // simple_value
        add_event(step);
    }

    /// Adds the histogram of `values` (a HistogramProto with TensorFlow's default buckets, empty runs of
    /// buckets merged as TensorFlow merges them). Values that are not finite are left out.
    void
    histogram(std::string_view tag, std::uint64_t step, const float* values, std::size_t n)
    {
        const std::vector<double>& limits = default_histogram_limits();
        counts_.assign(limits.size(), 0.0);
        double lo = DBL_MAX, hi = -DBL_MAX, count = 0, sum = 0, sum_squares = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const double v = values[i];
            if (!std::isfinite(v))
                continue;
            counts_[static_cast<std::size_t>(std::upper_bound(limits.begin(), limits.end(), v) - limits.begin())] += 1;
            lo = std::min(lo, v);
            hi = std::max(hi, v);
            count += 1;
            sum += v;
            sum_squares += v * v;
        }
        bucket_limit_.clear();
        bucket_.clear();
        for (std::size_t i = 0; i < counts_.size();) {   // TensorFlow's Histogram::EncodeToProto
            double end = limits[i], c = counts_[i];
            ++i;
            if (c <= 0.0)
                while (i < counts_.size() && counts_[i] <= 0.0)
                    end = limits[i], c = counts_[i], ++i;
            bucket_limit_.push_back(end);
            bucket_.push_back(c);
        }
        inner_.clear();
        pb::fixed64(inner_, 1, lo);
        pb::fixed64(inner_, 2, hi);
        pb::fixed64(inner_, 3, count);
        pb::fixed64(inner_, 4, sum);
        pb::fixed64(inner_, 5, sum_squares);
        pb::doubles(inner_, 6, bucket_limit_);
        pb::doubles(inner_, 7, bucket_);
        value_.clear();
        pb::bytes(value_, 1, tag);
        pb::bytes(value_, 5, inner_);   // histo
        add_event(step);
    }

    /// Appends what was added to the file, in one write. Throws std::system_error naming the file.
    void
    flush()
    {
        if (pending_.empty())
            return;
        if (!fd_)
            throw std::logic_error(concat({"tpudsl::TensorBoard: the event file '", path_,
                                           "' is not open (on_train_begin opens it)"}));
        if (!write_all(fd_.get(), pending_.data(), pending_.size()))
            throw_errno(errno, concat({who_, ": writing the event file '", path_, "' failed"}));
        pending_.clear();
    }

    /// Flushes and closes the file (nothing when it is not open).
    void
    close()
    {
        if (!fd_)
            return;
        flush();
        if (const int err = fd_.close())
            throw_errno(err, concat({who_, ": closing the event file '", path_, "' failed"}));
    }

private:
    [[nodiscard]] static double
    wall_time() noexcept
    {
        return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    }

    /// Wraps value_ in a Summary and an Event {wall_time, step, summary}, framed into pending_.
    void
    add_event(std::uint64_t step)
    {
        inner_.clear();
        pb::bytes(inner_, 1, value_);   // Summary.value
        event_.clear();
        pb::fixed64(event_, 1, wall_time());
        if (step != 0)
            key_step(step);
        pb::bytes(event_, 5, inner_);
        append_tfrecord(pending_, event_);
    }
    void
    key_step(std::uint64_t step)
    {
        pb::key(event_, 2, 0);
        pb::varint(event_, step);
    }

    std::string path_;
    std::string_view who_;
    unique_fd fd_;
    std::string pending_, event_, inner_, value_;
    std::vector<double> counts_, bucket_limit_, bucket_;
};

} // namespace detail

/// Every weight of `M` (a Sequential, a functional graph, or the Trainable of one), layer by layer in
/// Keras' order, named "<layer>/<weight>" with Keras' names ("conv2d/kernel", "dense_1/bias"; Keras 3's
/// paths put a Sequential's under "sequential/"): what TensorBoard's `histogram_freq` draws, given as
/// `.weights = tensorboard_weights<Model>()`.
template <class M>
[[nodiscard]] std::vector<TensorBoardWeight>
tensorboard_weights()
{
    using Model = typename detail::model_type_of<M>::type;
    std::vector<TensorBoardWeight> weights;
    for (const detail::weight_place& w : detail::weight_places<Model>)
        weights.push_back({detail::concat({detail::auto_layer_name(w.base_name, w.same_name_count), "/", w.role}),
                           w.offset, w.size});
    return weights;
}

/// The options of TensorBoard, with Keras' defaults.
struct TensorBoardOptions {
    /// Every how many epochs the weights' histograms are written (0: never); Keras writes them at the
    /// epochs where epoch % histogram_freq == 0 (0-based), the first one included. Needs `weights`.
    std::size_t histogram_freq = 0;
    /// 0 is Keras' "epoch": scalars at each epoch's end only; N also writes the batch's running values
    /// as `batch_<name>` every N batches, at the batch's count since the fit began (1 is "batch").
    std::size_t update_freq = 0;
    /// The weights histogram_freq draws: `tensorboard_weights<Model>()`.
    std::vector<TensorBoardWeight> weights;
};

/// `TensorBoard(log_dir="logs", histogram_freq=0, update_freq="epoch")`: writes TensorFlow event files
/// that `tensorboard --logdir log_dir` shows, as Keras' callback does:
///
///   log_dir/train/events.out.tfevents.*       `epoch_loss`, `epoch_<metric>`, `epoch_learning_rate` at
///                                             step = the epoch (0-based); with update_freq N,
///                                             `batch_loss`, `batch_<metric>` at step = the batch's count;
///                                             with histogram_freq, `<layer>/<weight>/histogram`
///   log_dir/validation/events.out.tfevents.*  `epoch_loss`, `epoch_<metric>`: the `val_` values, at the
///                                             epochs validation ran on
///
/// Each fit writes new files (Keras' writers are per fit too). It also puts `learning_rate` into the
/// epoch's logs, which History and the callbacks after it see (Keras 3's callback writes the rate, but
/// adds it to a copy of the logs only). The values are scalar summaries (`simple_value`, a float), as
/// TensorBoard's EventAccumulator reads them. Records are appended whole, an epoch's in one write at its
/// end: a crash can at worst cut the last write short, which TensorBoard's reader takes for records not
/// yet written, never for a corrupt one. On the workers of a multi-worker job other than the chief it
/// writes nothing (Keras' rule), and still logs the rate.
///
/// Not done: the graph (`write_graph`), images, profiling, embeddings, steps per second, and Keras 3's
/// `evaluation_<name>_vs_iterations` scalars.
class TensorBoard : public Callback {
public:
    using Options = TensorBoardOptions;

    /// Throws std::invalid_argument for an empty log_dir, a histogram_freq with no weights, or a
    /// weight with no name or no floats.
    explicit TensorBoard(std::string log_dir = "logs", Options o = {})
        : log_dir_(std::move(log_dir)), options_(std::move(o))
    {
        if (log_dir_.empty())
            throw std::invalid_argument("tpudsl::TensorBoard: log_dir is empty (give the directory the event files go "
                                        "in; Keras' default is \"logs\")");
        if (options_.histogram_freq > 0 && options_.weights.empty())
            throw std::invalid_argument(detail::concat(
                {"tpudsl::TensorBoard: histogram_freq is ", std::to_string(options_.histogram_freq),
                 " but no weights are given to draw (set .weights = tpudsl::tensorboard_weights<Model>(), or "
                 "histogram_freq = 0)"}));
        for (const TensorBoardWeight& w : options_.weights)
            if (w.name.empty() || w.size == 0)
                throw std::invalid_argument(detail::concat(
                    {"tpudsl::TensorBoard: the weight '", w.name, "' at offset ", std::to_string(w.offset), " has ",
                     w.name.empty() ? "no name" : "no floats",
                     " (tpudsl::tensorboard_weights<Model>() lists a model's)"}));
    }

    [[nodiscard]] const std::string& log_dir() const noexcept { return log_dir_; }
    /// The event files of the last fit ("" for one not written: no fit yet, no validation, a worker).
    [[nodiscard]] const std::string& train_file() const noexcept { return train_.path(); }
    [[nodiscard]] const std::string& validation_file() const noexcept { return validation_.path(); }

    /// Creates log_dir/train and the fit's event file in it, before the first step: a log_dir that
    /// cannot be made (a regular file on the way, no permission) stops the fit here, with the path and
    /// the system's reason (std::system_error). Refuses weights beyond the model's (std::invalid_argument).
    void
    on_train_begin(TrainingControl& control) override
    {
        global_batch_ = 0;
        train_ = {};
        validation_ = {};
        writes_ = control.writes_files();
        if (options_.histogram_freq > 0) {
            const std::size_t floats = control.get_weights().size();
            for (const TensorBoardWeight& w : options_.weights)
                if (w.offset > floats || w.size > floats - w.offset)
                    throw std::invalid_argument(detail::concat(
                        {"tpudsl::TensorBoard: the weight '", w.name, "' lies at floats [", std::to_string(w.offset),
                         ", ", std::to_string(w.offset + w.size), "), beyond the model's ", std::to_string(floats),
                         " (weights listed for another model? tensorboard_weights<Model>() lists this one's)"}));
        }
        if (writes_)
            train_.open(subdirectory("train"), log_dir_, who);
    }

    /// With update_freq N: every N-th batch's running values as `batch_<name>`, at the batch's count.
    void
    on_train_batch_end(std::size_t, const Logs& logs, TrainingControl&) override
    {
        ++global_batch_;
        if (!writes_ || options_.update_freq == 0 || global_batch_ % options_.update_freq != 0)
            return;
        for (const auto& [name, value] : logs)
            train_.scalar(tag("batch_", name), global_batch_, value);
        train_.flush();
    }

    /// Puts `learning_rate` into the logs, then writes the epoch's values (and, every histogram_freq
    /// epochs, the weights' histograms) and flushes them.
    void
    on_epoch_end(std::size_t epoch, Logs& logs, TrainingControl& control) override
    {
        if (logs.size() == 0)
            return;
        logs.set("learning_rate", control.learning_rate());
        if (!writes_)
            return;
        bool validated = false;
        for (const auto& [name, value] : logs) {
            if (name.starts_with("val_"))
                validated = true;
            else
                train_.scalar(tag("epoch_", name), epoch, value);
        }
        if (validated) {
            if (!validation_.is_open())
                validation_.open(subdirectory("validation"), log_dir_, who);
            for (const auto& [name, value] : logs)
                if (name.starts_with("val_"))
                    validation_.scalar(tag("epoch_", std::string_view(name).substr(4)), epoch, value);
            validation_.flush();
        }
        if (options_.histogram_freq > 0 && epoch % options_.histogram_freq == 0) {
            const std::vector<float> weights = control.get_weights();
            for (const TensorBoardWeight& w : options_.weights)
                train_.histogram(tag(w.name, "/histogram"), epoch, weights.data() + w.offset, w.size);
        }
        train_.flush();
    }

    /// Closes the fit's files.
    void
    on_train_end(TrainingControl&) override
    {
        train_.close();
        validation_.close();
    }

private:
    static constexpr std::string_view who = "tpudsl::TensorBoard";

    [[nodiscard]] std::string
    subdirectory(std::string_view name) const
    {
        return (std::filesystem::path(log_dir_) / name).string();
    }
    /// `a` then `b`, in a buffer kept from one tag to the next.
    [[nodiscard]] std::string_view
    tag(std::string_view a, std::string_view b)
    {
        tag_.assign(a).append(b);
        return tag_;
    }

    std::string log_dir_;
    Options options_;
    detail::event_file train_, validation_;
    std::uint64_t global_batch_ = 0;
    bool writes_ = true;   // false on a multi-worker job's workers other than the chief
    std::string tag_;
};

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_TENSORBOARD_HPP
