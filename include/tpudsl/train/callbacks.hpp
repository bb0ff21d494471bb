/// @file Defines the Callback interface of `fit` and Keras' callbacks: EarlyStopping, ModelCheckpoint,
/// CSVLogger, TerminateOnNaN, LearningRateScheduler, ReduceLROnPlateau, with Keras' defaults and
/// rules (keras-semantics §2).
#ifndef TPUDSL_TRAIN_CALLBACKS_HPP
#define TPUDSL_TRAIN_CALLBACKS_HPP

#include <tpudsl/detail/text.hpp>
#include <tpudsl/io/files.hpp>
#include <tpudsl/io/weight_formats.hpp>
#include <tpudsl/train/history.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <concepts>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>

namespace tpudsl {

/// What a callback may ask of the model being trained.
class TrainingControl {
public:
    virtual ~TrainingControl() = default;
    /// Set to stop `fit` at the end of the current batch's epoch (Keras' `model.stop_training`).
    bool stop_training = false;
    [[nodiscard]] virtual double learning_rate() const = 0;
    virtual void set_learning_rate(double lr) = 0;
    /// Writes the weights to `path` atomically (a temporary file, then a rename).
    virtual void save_weights(const std::string& path) const = 0;
    [[nodiscard]] virtual std::vector<float> get_weights() const = 0;
    virtual void set_weights(const std::vector<float>& w) = 0;
    /// Writes everything the fit in progress needs to go on from here (BackupAndRestore) to `path`,
    /// atomically: weights, optimizer state, iterations, learning rate, epoch and step, where the data
    /// stream stands, the seed and the epoch's running values.
    virtual void
    save_training_state(const std::string& /*path*/) const
    {
        throw std::logic_error("tpudsl::TrainingControl: this model cannot save a training state");
    }
    /// Reads a state that save_training_state wrote; the fit in progress then goes on from where it
    /// was written. Called from on_train_begin.
    virtual void
    restore_training_state(const std::string& /*path*/)
    {
        throw std::logic_error("tpudsl::TrainingControl: this model cannot restore a training state");
    }
    /// False on the workers of a multi-worker job other than the chief (rank 0): callbacks write no
    /// file there (Keras' rule: the chief writes checkpoints, backups and logs; the others compute the
    /// same values and would write the same files).
    [[nodiscard]] virtual bool writes_files() const { return true; }
};

/// Keras' callback hooks. Logs hold the epoch's (or batch's) running values.
class Callback {
public:
    virtual ~Callback() = default;
    virtual void on_train_begin(TrainingControl&) {}
    virtual void on_epoch_begin(std::size_t /*epoch*/, Logs& /*logs*/, TrainingControl&) {}
    virtual void on_train_batch_end(std::size_t /*batch*/, const Logs& /*logs*/, TrainingControl&) {}
    virtual void on_epoch_end(std::size_t /*epoch*/, Logs& /*logs*/, TrainingControl&) {}
    virtual void on_train_end(TrainingControl&) {}
};

namespace detail {
/// The five hooks of a callback, as `fit` calls them: each one calls the hook of the type `C` the
/// callback was given as. A call through `Callback&` would be a virtual call that GCC may turn
/// into a direct one, so it compiles every override of every callback class the program has seen
/// (all of this header's, with their files and formats) in case one of them is the target; through
/// these, a program compiles the hooks of the callbacks it passes to `fit`, and no others.
struct callback_hooks {
    void (*train_begin)(Callback&, TrainingControl&);
    void (*epoch_begin)(Callback&, std::size_t, Logs&, TrainingControl&);
    void (*train_batch_end)(Callback&, std::size_t, const Logs&, TrainingControl&);
    void (*epoch_end)(Callback&, std::size_t, Logs&, TrainingControl&);
    void (*train_end)(Callback&, TrainingControl&);
};

template <class C>
struct hooks_of {
    static void train_begin(Callback& cb, TrainingControl& control) { static_cast<C&>(cb).on_train_begin(control); }
    static void
    epoch_begin(Callback& cb, std::size_t epoch, Logs& logs, TrainingControl& control)
    {
        static_cast<C&>(cb).on_epoch_begin(epoch, logs, control);
    }
    static void
    train_batch_end(Callback& cb, std::size_t batch, const Logs& logs, TrainingControl& control)
    {
        static_cast<C&>(cb).on_train_batch_end(batch, logs, control);
    }
    static void
    epoch_end(Callback& cb, std::size_t epoch, Logs& logs, TrainingControl& control)
    {
        static_cast<C&>(cb).on_epoch_end(epoch, logs, control);
    }
    static void train_end(Callback& cb, TrainingControl& control) { static_cast<C&>(cb).on_train_end(control); }

    static constexpr callback_hooks table{train_begin, epoch_begin, train_batch_end, epoch_end, train_end};
};
} // namespace detail

/// One entry of `FitOptions::callbacks`, as Keras' `callbacks=[...]` list holds them: a callback
/// written in place is moved into the list, which owns it (`EarlyStopping{{.patience = 2}}`); a named
/// one is referred to, so that it can be read after `fit` (`best.stopped_epoch()`), and lives where it
/// was declared; `std::ref(cb)` says the same explicitly. Nothing to keep alive by hand, no pointers.
/// A callback given as a reference to a base class (`Callback&`) still has its own hooks called:
/// they are virtual.
class CallbackRef {
public:
    /// Takes over a temporary callback.
    template <class C>
        requires std::derived_from<C, Callback> && (!std::is_lvalue_reference_v<C>)
    CallbackRef(C&& callback)
        : owned_(std::make_shared<C>(std::move(callback))), callback_(owned_.get()), hooks_(&detail::hooks_of<C>::table)
    {
    }
    /// Refers to the caller's callback.
    template <class C>
        requires std::derived_from<C, Callback>
    CallbackRef(C& callback) noexcept : callback_(&callback), hooks_(&detail::hooks_of<C>::table)
    {
    }
    template <class C>
        requires std::derived_from<C, Callback>
    CallbackRef(std::reference_wrapper<C> callback) noexcept
        : callback_(&callback.get()), hooks_(&detail::hooks_of<C>::table)
    {
    }

    [[nodiscard]] Callback& get() const noexcept { return *callback_; }
    Callback* operator->() const noexcept { return callback_; }

    /// The hooks, as `fit` calls them.
    void on_train_begin(TrainingControl& control) const { hooks_->train_begin(*callback_, control); }
    void
    on_epoch_begin(std::size_t epoch, Logs& logs, TrainingControl& control) const
    {
        hooks_->epoch_begin(*callback_, epoch, logs, control);
    }
    void
    on_train_batch_end(std::size_t batch, const Logs& logs, TrainingControl& control) const
    {
        hooks_->train_batch_end(*callback_, batch, logs, control);
    }
    void
    on_epoch_end(std::size_t epoch, Logs& logs, TrainingControl& control) const
    {
        hooks_->epoch_end(*callback_, epoch, logs, control);
    }
    void on_train_end(TrainingControl& control) const { hooks_->train_end(*callback_, control); }

private:
    std::shared_ptr<Callback> owned_;
    Callback* callback_;
    const detail::callback_hooks* hooks_;
};

/// `mode="auto"`, `"min"` or `"max"`.
enum class monitor_mode { automatic, min, max };

namespace detail {
/// The shortest text that reads back as `v` ("0.1", "nan", "-inf", "1e+39").
[[nodiscard]] inline std::string
number_text(double v)
{
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

/// Refuses a callback's option outside its domain: std::invalid_argument naming the callback, the
/// option, its value and the domain.
[[noreturn]] inline void
bad_option(std::string_view callback, std::string_view option, double value, std::string_view domain,
           std::string_view hint)
{
    throw std::invalid_argument(detail::concat({"tpudsl::", callback, ": ", option, " must be ", domain, ", got ",
                                                number_text(value), " (", hint, ")"}));
}

inline void
check_finite_option(std::string_view callback, std::string_view option, double value, std::string_view hint)
{
    if (!std::isfinite(value))
        bad_option(callback, option, value, "finite", hint);
}

inline bool
ends_with(const std::string& s, std::string_view tail)
{
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// Monitors a value for improvement: auto is max for accuracies (EarlyStopping: names ending in
/// acc/accuracy/auc; ModelCheckpoint: names containing "acc"), min otherwise.
struct monitor {
    std::string name;
    bool maximize = false;
    double min_delta = 0.0;
    double best = std::numeric_limits<double>::infinity();

    void
    reset(std::optional<double> baseline = std::nullopt)
    {
        best = baseline ? *baseline : (maximize ? -std::numeric_limits<double>::infinity()
                                               : std::numeric_limits<double>::infinity());
    }
    [[nodiscard]] bool
    improved(double current) const noexcept
    {
        return maximize ? current - min_delta > best : current + min_delta < best;
    }
};
} // namespace detail

/// `TerminateOnNaN()`: stops training when a batch's loss is NaN or infinite, printing
/// "Batch {b}: Invalid loss, terminating training".
class TerminateOnNaN : public Callback {
public:
    explicit TerminateOnNaN(std::ostream& out = std::cout) : out_(&out) {}
    void
    on_train_batch_end(std::size_t batch, const Logs& logs, TrainingControl& control) override
    {
        const auto loss = logs.get("loss");
        if (loss && !std::isfinite(*loss)) {
            *out_ << "Batch " << batch << ": Invalid loss, terminating training\n";
            control.stop_training = true;
        }
    }

private:
    std::ostream* out_;
};

/// The options of EarlyStopping, with Keras' defaults.
struct EarlyStoppingOptions {
    std::string monitor = "val_loss";
    double min_delta = 0.0;
    std::size_t patience = 0;
    int verbose = 0;
    monitor_mode mode = monitor_mode::automatic;
    std::optional<double> baseline;
    bool restore_best_weights = false;
    std::size_t start_from_epoch = 0;
};

/// `EarlyStopping(monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
/// restore_best_weights=False, start_from_epoch=0)`.
class EarlyStopping : public Callback {
public:
    using Options = EarlyStoppingOptions;

    /// Throws std::invalid_argument for a non-finite min_delta or baseline.
    explicit EarlyStopping(Options o = {}, std::ostream& out = std::cout) : options_(std::move(o)), out_(&out)
    {
        detail::check_finite_option("EarlyStopping", "min_delta", options_.min_delta,
                                    "Keras' default is 0; its sign is ignored");
        if (options_.baseline)
            detail::check_finite_option("EarlyStopping", "baseline", *options_.baseline,
                                        "leave it unset for no baseline");
        monitor_.name = options_.monitor;
        monitor_.maximize = options_.mode == monitor_mode::max ||
                            (options_.mode == monitor_mode::automatic &&
                             (detail::ends_with(monitor_.name, "acc") || detail::ends_with(monitor_.name, "accuracy") ||
                              detail::ends_with(monitor_.name, "auc")));
        monitor_.min_delta = std::abs(options_.min_delta);
    }

    /// The epoch (0-based) at which training stopped, if it did.
    [[nodiscard]] std::optional<std::size_t> stopped_epoch() const noexcept { return stopped_epoch_; }

    void
    on_train_begin(TrainingControl&) override
    {
        wait_ = 0;
        stopped_epoch_.reset();
        best_weights_.clear();
        best_epoch_ = 0;
        monitor_.reset();
    }

    void
    on_epoch_end(std::size_t epoch, Logs& logs, TrainingControl& control) override
    {
        const auto current = logs.get(monitor_.name);
        if (!current || epoch < options_.start_from_epoch)
            return;
        if (options_.restore_best_weights && best_weights_.empty())
            best_weights_ = control.get_weights();
        ++wait_;
        if (monitor_.improved(*current)) {
            monitor_.best = *current;
            best_epoch_ = epoch;
            if (options_.restore_best_weights)
                best_weights_ = control.get_weights();
            if (!options_.baseline || improves_on_baseline(*current))
                wait_ = 0;
            return;
        }
        if (wait_ >= options_.patience && epoch > 0) {
            stopped_epoch_ = epoch;
            control.stop_training = true;
            if (options_.restore_best_weights && !best_weights_.empty()) {
                if (options_.verbose > 0)
                    *out_ << "Restoring model weights from the end of the best epoch: " << best_epoch_ + 1 << ".\n";
                control.set_weights(best_weights_);
            }
        }
    }

    void
    on_train_end(TrainingControl&) override
    {
        if (stopped_epoch_ && options_.verbose > 0)
            *out_ << "Epoch " << *stopped_epoch_ + 1 << ": early stopping\n";
    }

private:
    [[nodiscard]] bool
    improves_on_baseline(double current) const noexcept
    {
        detail::monitor m = monitor_;
        m.best = *options_.baseline;
        return m.improved(current);
    }

    Options options_;
    std::ostream* out_;
    detail::monitor monitor_;
    std::size_t wait_ = 0, best_epoch_ = 0;
    std::optional<std::size_t> stopped_epoch_;
    std::vector<float> best_weights_;
};

/// The options of ReduceLROnPlateau, with Keras' defaults.
struct ReduceLROnPlateauOptions {
    std::string monitor = "val_loss";
    double factor = 0.1;
    std::size_t patience = 10;
    int verbose = 0;
    monitor_mode mode = monitor_mode::automatic;
    double min_delta = 1e-4;
    std::size_t cooldown = 0;
    double min_lr = 0.0;
};

/// `ReduceLROnPlateau(monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
/// min_delta=1e-4, cooldown=0, min_lr=0)`; writes `lr` into the epoch's logs.
class ReduceLROnPlateau : public Callback {
public:
    using Options = ReduceLROnPlateauOptions;

    /// Throws std::invalid_argument for a factor outside [0, 1) (Keras: "ReduceLROnPlateau does not
    /// support a factor >= 1.0"), a min_lr or min_delta that is negative or not finite.
    explicit ReduceLROnPlateau(Options o = {}, std::ostream& out = std::cout) : options_(std::move(o)), out_(&out)
    {
        if (!(options_.factor >= 0.0 && options_.factor < 1.0))
            detail::bad_option("ReduceLROnPlateau", "factor", options_.factor, "in [0, 1)",
                               "the new rate is lr * factor; Keras' default is 0.1");
        if (!(options_.min_lr >= 0.0 && std::isfinite(options_.min_lr)))
            detail::bad_option("ReduceLROnPlateau", "min_lr", options_.min_lr, "finite and >= 0",
                               "Keras' default is 0");
        if (!(options_.min_delta >= 0.0 && std::isfinite(options_.min_delta)))
            detail::bad_option("ReduceLROnPlateau", "min_delta", options_.min_delta, "finite and >= 0",
                               "Keras' default is 1e-4");
        monitor_.name = options_.monitor;
        monitor_.maximize = options_.mode == monitor_mode::max ||
                            (options_.mode == monitor_mode::automatic && monitor_.name.find("acc") != std::string::npos);
        monitor_.min_delta = options_.min_delta;
    }

    void
    on_train_begin(TrainingControl&) override
    {
        wait_ = 0;
        cooldown_counter_ = 0;
        monitor_.reset();
    }

    void
    on_epoch_end(std::size_t epoch, Logs& logs, TrainingControl& control) override
    {
        logs.set("lr", control.learning_rate());
        const auto current = logs.get(monitor_.name);
        if (!current)
            return;
        if (cooldown_counter_ > 0) {
            --cooldown_counter_;
            wait_ = 0;
        }
        if (monitor_.improved(*current)) {
            monitor_.best = *current;
            wait_ = 0;
        } else if (cooldown_counter_ == 0) {
            ++wait_;
            if (wait_ >= options_.patience) {
                const double old_lr = control.learning_rate();
                if (old_lr > options_.min_lr) {
                    const double new_lr = std::max(old_lr * options_.factor, options_.min_lr);
                    control.set_learning_rate(new_lr);
                    if (options_.verbose > 0) {
                        char buf[128];
                        std::snprintf(buf, sizeof buf, "\nEpoch %05zu: ReduceLROnPlateau reducing learning rate to %g.\n",
                                      epoch + 1, new_lr);
                        *out_ << buf;
                    }
                    cooldown_counter_ = options_.cooldown;
                    wait_ = 0;
                }
            }
        }
    }

private:
    Options options_;
    std::ostream* out_;
    detail::monitor monitor_;
    std::size_t wait_ = 0, cooldown_counter_ = 0;
};

/// `LearningRateScheduler(schedule, verbose=0)`: at each epoch's start, lr = schedule(epoch, lr);
/// writes `lr` into the epoch's logs.
class LearningRateScheduler : public Callback {
public:
    using schedule_fn = std::function<double(std::size_t epoch, double lr)>;
    /// Throws std::invalid_argument for an empty schedule.
    explicit LearningRateScheduler(schedule_fn schedule, int verbose = 0, std::ostream& out = std::cout)
        : schedule_(std::move(schedule)), verbose_(verbose), out_(&out)
    {
        if (!schedule_)
            throw std::invalid_argument("tpudsl::LearningRateScheduler: the schedule is empty (give a function "
                                        "(epoch, lr) -> new lr)");
    }

    /// Sets the schedule's rate; throws std::invalid_argument, naming the epoch, for a rate that is
    /// NaN, negative or beyond a float's range (the optimizers hold it as a float).
    void
    on_epoch_begin(std::size_t epoch, Logs&, TrainingControl& control) override
    {
        const double lr = schedule_(epoch, control.learning_rate());
        if (!(lr >= 0.0) || !std::isfinite(static_cast<float>(lr)))
            throw std::invalid_argument(detail::concat({"tpudsl::LearningRateScheduler: the schedule returned learning rate ",
                                                        detail::number_text(lr), " at epoch ", std::to_string(epoch),
                                                        " (0-based); a learning rate must be a finite float >= 0"}));
        control.set_learning_rate(lr);
        if (verbose_ > 0) {
            char buf[128];
            std::snprintf(buf, sizeof buf, "\nEpoch %05zu: LearningRateScheduler setting learning rate to %g.\n",
                          epoch + 1, lr);
            *out_ << buf;
        }
    }
    void
    on_epoch_end(std::size_t, Logs& logs, TrainingControl& control) override
    {
        logs.set("lr", control.learning_rate());
    }

private:
    schedule_fn schedule_;
    int verbose_;
    std::ostream* out_;
};

/// `CSVLogger(filename, separator=",", append=False)`: a header `epoch` + the sorted log keys, then
/// one row per epoch. Each row goes to the file as it is written. A file name that is a directory,
/// a FIFO or a device is refused (std::runtime_error) and left as it is; a failed open or write
/// throws std::system_error with the system's reason and the file's name.
class CSVLogger : public Callback {
public:
    explicit CSVLogger(std::string filename, char separator = ',', bool append = false)
        : filename_(std::move(filename)), separator_(separator), append_(append)
    {
    }

    void
    on_train_begin(TrainingControl& control) override
    {
        writes_ = control.writes_files();
        if (!writes_)
            return;
        constexpr std::string_view who = "tpudsl::CSVLogger";
        constexpr std::string_view then = "it is left as it is (give the path of a file)";
        struct stat st {};
        if (::stat(filename_.c_str(), &st) == 0)
            detail::require_regular(st.st_mode, who, filename_, then);
        // O_NONBLOCK: should a FIFO appear at the name meanwhile, opening it does not wait for a reader
        detail::unique_fd fd(::open(filename_.c_str(),
                                    O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK | (append_ ? O_APPEND : O_TRUNC), 0666));
        if (!fd)
            detail::throw_errno(errno, detail::concat({"tpudsl::CSVLogger: cannot open '", filename_, "' for writing"}));
        if (::fstat(fd.get(), &st) != 0)
            detail::throw_errno(errno, detail::concat({"tpudsl::CSVLogger: cannot examine '", filename_, "'"}));
        detail::require_regular(st.st_mode, who, filename_, then);
        file_ = std::move(fd);
        keys_.clear();
        header_written_ = append_ && st.st_size > 0;
    }

    void
    on_epoch_end(std::size_t epoch, Logs& logs, TrainingControl&) override
    {
        if (!writes_)
            return;
        std::string text;
        if (keys_.empty()) {
            for (const auto& [k, v] : logs)
                keys_.push_back(k);
            std::sort(keys_.begin(), keys_.end());
            if (!header_written_) {
                detail::append_csv_header(text, keys_, separator_);
                header_written_ = true;
            }
        }
        detail::append_csv_row(text, epoch, keys_, separator_, logs);
        if (!file_)
            throw std::logic_error(detail::concat({"tpudsl::CSVLogger: '", filename_,
                                                   "' is not open (on_train_begin opens it)"}));
        if (!detail::write_all(file_.get(), text.data(), text.size()))
            detail::throw_errno(errno, detail::concat({"tpudsl::CSVLogger: writing '", filename_, "' failed"}));
    }

    void
    on_train_end(TrainingControl&) override
    {
        if (!writes_)
            return;
        if (const int err = file_.close())
            detail::throw_errno(err, detail::concat({"tpudsl::CSVLogger: closing '", filename_, "' failed"}));
    }

private:
    std::string filename_;
    char separator_;
    bool append_;
    detail::unique_fd file_;
    std::vector<std::string> keys_;
    bool header_written_ = false;
    bool writes_ = true;   // false on a multi-worker job's workers other than the chief
};

/// The options of ModelCheckpoint, with Keras' defaults.
struct ModelCheckpointOptions {
    std::string monitor = "val_loss";
    int verbose = 0;
    bool save_best_only = false;
    monitor_mode mode = monitor_mode::automatic;
    std::optional<double> initial_value_threshold;
};

/// `ModelCheckpoint(filepath, monitor="val_loss", verbose=0, save_best_only=False, mode="auto")`:
/// saves the weights at each epoch's end (or only on improvement), atomically. `{epoch}` in the path
/// becomes the 1-based epoch number (`{epoch:02d}` pads it).
///
/// Unlike Keras, it never saves weights that hold a NaN or an infinity (a checkpoint of a diverged
/// model would replace the last good one), and with save_best_only a non-finite monitored value is
/// never the best; it skips such an epoch and says so once per `fit`.
class ModelCheckpoint : public Callback {
public:
    using Options = ModelCheckpointOptions;

    /// Throws std::invalid_argument for a non-finite initial_value_threshold, an `{epoch:0Nd}` whose
    /// width is not a number from 1 to 255, or a Keras `.h5` path in a program built without HDF5.
    explicit ModelCheckpoint(std::string filepath, Options o = {}, std::ostream& out = std::cout)
        : filepath_(std::move(filepath)), options_(std::move(o)), out_(&out)
    {
        if (options_.initial_value_threshold)
            detail::check_finite_option("ModelCheckpoint", "initial_value_threshold", *options_.initial_value_threshold,
                                        "leave it unset to save the first epoch");
        monitor_.name = options_.monitor;
        monitor_.maximize =
            options_.mode == monitor_mode::max ||
            (options_.mode == monitor_mode::automatic &&
             (monitor_.name.find("acc") != std::string::npos || monitor_.name.rfind("fmeasure", 0) == 0));
        // A bad {epoch:...}, or a Keras file in a program built without HDF5: refused now, not after the
        // first epoch.
        const std::string first = format_path(1);
        if (!keras_h5_enabled && weights_format_of(first) != weights_format::tpudsl)
            detail::keras_h5_disabled("tpudsl::ModelCheckpoint", filepath_);
    }

    /// Checks, before the first step, that the checkpoints' directory takes a new file (when the path
    /// puts every epoch's checkpoint in one directory), rather than find it after the first epoch.
    void
    on_train_begin(TrainingControl& control) override
    {
        monitor_.reset(options_.initial_value_threshold);
        warned_ = false;
        namespace fs = std::filesystem;
        const fs::path dir = fs::path(format_path(1)).parent_path();
        if (control.writes_files() && dir == fs::path(format_path(2)).parent_path())
            detail::require_writable_directory("tpudsl::ModelCheckpoint", dir.string(),
                                               detail::concat({"the checkpoints '", filepath_, "' go there"}));
    }

    void
    on_epoch_end(std::size_t epoch, Logs& logs, TrainingControl& control) override
    {
        const std::string path = format_path(epoch + 1);
        std::optional<double> current;
        if (options_.save_best_only) {
            current = logs.get(monitor_.name);
            if (!current) {
                *out_ << "Can save best model only with " << monitor_.name << " available, skipping.\n";
                return;
            }
            if (!std::isfinite(*current)) {
                skip(epoch, path, detail::concat({monitor_.name, " is ", detail::number_text(*current),
                                                  ", which is never the best"}));
                return;
            }
            if (!monitor_.improved(*current)) {
                if (options_.verbose > 0) {
                    char buf[256];
                    std::snprintf(buf, sizeof buf, "\nEpoch %05zu: %s did not improve from %.5f\n", epoch + 1,
                                  monitor_.name.c_str(), monitor_.best);
                    *out_ << buf;
                }
                return;
            }
        }
        const std::vector<float> weights = control.get_weights();
        const auto bad = std::find_if(weights.begin(), weights.end(), [](float w) { return !std::isfinite(w); });
        if (bad != weights.end()) {
            skip(epoch, path,
                 detail::concat({"the weights hold ", detail::number_text(*bad), " (parameter ",
                                 std::to_string(bad - weights.begin()), ")"}));
            return;
        }
        if (current)
            monitor_.best = *current;   // on every worker: the same decisions everywhere
        if (!control.writes_files())
            return;
        if (options_.verbose > 0) {
            char buf[256];
            if (current)
                std::snprintf(buf, sizeof buf, "\nEpoch %05zu: %s improved from %.5f to %.5f, saving model to ",
                              epoch + 1, monitor_.name.c_str(), monitor_.best, *current);
            else
                std::snprintf(buf, sizeof buf, "\nEpoch %05zu: saving model to ", epoch + 1);
            *out_ << buf << path << '\n';
        }
        control.save_weights(path);
    }

    /// The path for a 1-based epoch: `{epoch}` -> "3", `{epoch:02d}` -> "03".
    [[nodiscard]] std::string
    format_path(std::size_t epoch) const
    {
        std::string out;
        for (std::size_t i = 0; i < filepath_.size();) {
            if (filepath_.compare(i, 7, "{epoch}") == 0) {
                out += std::to_string(epoch);
                i += 7;
            } else if (filepath_.compare(i, 7, "{epoch:") == 0 && filepath_.find('}', i) != std::string::npos) {
                // {epoch:0Nd}: zero-padded to N digits; other format specs print the plain number
                const std::size_t close = filepath_.find('}', i);
                const std::string_view spec = std::string_view(filepath_).substr(i + 7, close - i - 7);
                std::string digits = std::to_string(epoch);
                if (spec.size() >= 3 && spec.front() == '0' && spec.back() == 'd') {
                    const std::string_view n = spec.substr(1, spec.size() - 2);
                    std::size_t width = 0;
                    const auto r = std::from_chars(n.data(), n.data() + n.size(), width);
                    if (r.ec != std::errc{} || r.ptr != n.data() + n.size() || width < 1 || width > 255)
                        throw std::invalid_argument(detail::concat({"tpudsl::ModelCheckpoint: '{epoch:", spec,
                                                                    "}' in the file path '", filepath_,
                                                                    "': the width must be a number from 1 to 255 ({epoch:02d} "
                                                                    "pads the epoch to 2 digits)"}));
                    if (digits.size() < width)
                        digits.insert(0, width - digits.size(), '0');
                }
                out += digits;
                i = close + 1;
            } else {
                out += filepath_[i++];
            }
        }
        return out;
    }

private:
    /// Skips this epoch's save, saying why the first time in a fit.
    void
    skip(std::size_t epoch, const std::string& path, const std::string& why)
    {
        if (warned_)
            return;
        warned_ = true;
        *out_ << "WARNING: tpudsl::ModelCheckpoint: epoch " << epoch + 1 << ": " << why << "; not saving to '"
              << path << "' (a file already there is kept as it is). The training has diverged: lower the "
                         "learning rate, or add TerminateOnNaN to stop at the first non-finite loss. Said once "
                         "per fit.\n";
    }

    std::string filepath_;
    Options options_;
    std::ostream* out_;
    detail::monitor monitor_;
    bool warned_ = false;
};

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_CALLBACKS_HPP
