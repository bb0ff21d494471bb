/// @file Defines BackupAndRestore, Keras' callback for fault tolerance: a fit backs up its whole
/// training state into `backup_dir` as it goes; a fit started again with a backup there restores it
/// and goes on from where it was, to the bits of a run never interrupted.
#ifndef TPUDSL_TRAIN_BACKUP_HPP
#define TPUDSL_TRAIN_BACKUP_HPP

#include <tpudsl/detail/text.hpp>
#include <tpudsl/io/files.hpp>
#include <tpudsl/train/callbacks.hpp>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tpudsl {

namespace detail {

/// An advisory lock (flock) on a lock file, held while the object lives: the file is removed, then
/// the lock released, when it ends. A process that dies holding it (even by SIGKILL) releases it with
/// its descriptors; the file it leaves is taken over by the next holder.
class directory_lock {
public:
    directory_lock() noexcept = default;
    directory_lock(directory_lock&& o) noexcept : path_(std::move(o.path_)), fd_(std::move(o.fd_)) {}
    directory_lock&
    operator=(directory_lock&& o) noexcept
    {
        if (this != &o) {
            release();
            path_ = std::move(o.path_);
            fd_ = std::move(o.fd_);
        }
        return *this;
    }
    ~directory_lock() { release(); }

    [[nodiscard]] bool held() const noexcept { return static_cast<bool>(fd_); }

    /// Takes the lock on the file at `path` (created if missing), or throws: std::runtime_error saying
    /// `busy` when another holds it, std::system_error when the file cannot be made. A file system
    /// without flock (ENOLCK, EOPNOTSUPP) gives no lock, as it never did, and no error.
    [[gnu::cold]] void
    acquire(const std::string& path, std::string_view who, const std::string& busy)
    {
        if (held())
            return;
        for (int attempt = 0;; ++attempt) {
            unique_fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666));
            if (!fd)
                throw_errno(errno, concat({who, ": cannot create the lock file '", path, "'"}));
            if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
                const int err = errno;
                if (err == EINTR)
                    continue;
                if (err == EWOULDBLOCK)
                    throw std::runtime_error(busy);
                if (err == ENOLCK || err == EOPNOTSUPP || err == ENOSYS)
                    return;
                throw_errno(err, concat({who, ": cannot lock '", path, "'"}));
            }
            // A holder that ended between our open and our flock removed the file: lock the one there now.
            struct stat held_file {}, there {};
            if (::fstat(fd.get(), &held_file) == 0 && ::stat(path.c_str(), &there) == 0 &&
                held_file.st_dev == there.st_dev && held_file.st_ino == there.st_ino) {
                path_ = path;
                fd_ = std::move(fd);
                return;
            }
            if (attempt == 100)
                throw std::runtime_error(concat({who, ": the lock file '", path, "' keeps being replaced"}));
        }
    }

    /// Removes the lock file (while it is still held: no other process holds one of that name), then
    /// releases the lock.
    void
    release() noexcept
    {
        if (!fd_)
            return;
        (void)::unlink(path_.c_str());
        fd_.reset();
    }

private:
    std::string path_;
    unique_fd fd_;
};

} // namespace detail

/// The options of BackupAndRestore, with Keras' defaults.
struct BackupAndRestoreOptions {
    /// 0: back up at the end of every epoch (Keras' `save_freq="epoch"`); N: after every N batches,
    /// counted across epochs, as Keras counts them.
    std::size_t save_freq = 0;
    /// Remove the backup when fit completes (Keras' `delete_checkpoint=True`).
    bool delete_checkpoint = true;
};

/// `BackupAndRestore(backup_dir, save_freq="epoch", delete_checkpoint=True)`.
///
/// At the start of fit, when `backup_dir` holds a backup, the model takes everything from it (weights,
/// optimizer slots and iteration count, the learning rate, the seed that draws the shuffles and the
/// dropout masks, the epoch, the step within it and where the data stream stands) and fit goes on
/// from there: a run killed at any moment, even while a backup is written, and started again with the
/// same data and options ends with bitwise the weights of a run never interrupted. A backup is one
/// file, `<backup_dir>/backup.tpudsl`, replaced atomically, so a kill never leaves a broken one.
///
/// Unlike Keras: a backup made mid-epoch (save_freq N) resumes at that very batch (Keras restarts the
/// epoch); a backup of another fit (other data sizes, batch, steps_per_epoch, shuffle, optimizer or
/// metrics), of another model (its weight layout) or of a model built with another seed, or one that
/// has done more epochs than the new fit asks for, is refused with std::invalid_argument /
/// std::runtime_error saying what differs and what to do, rather than resumed (Keras would train on, or
/// train nothing and return the backup's weights). A fit asking for more (or fewer, but at least as
/// many as done) epochs than the backup's fit resumes it as Keras does, and says so on fit's output.
/// After a completed fit only the backup is removed (and the directory if that empties it), not the
/// whole directory tree. Before its first step a fit checks that it can write into backup_dir, and
/// locks it (flock on `<backup_dir>/backup.lock`, held until the fit ends): a second fit given the
/// same directory meanwhile is refused at its start, rather than have the first one's end delete the
/// other's backups. Other callbacks' own state (the
/// patience of EarlyStopping, ReduceLROnPlateau's counters) starts afresh, as in Keras.
class BackupAndRestore : public Callback {
public:
    using Options = BackupAndRestoreOptions;
    static constexpr std::string_view file_name = "backup.tpudsl";
    /// The lock file a fit holds in the backup directory (flock) while it runs.
    static constexpr std::string_view lock_name = "backup.lock";

    /// Throws std::invalid_argument for an empty backup_dir.
    explicit BackupAndRestore(std::string backup_dir, Options o = {}) : dir_(std::move(backup_dir)), options_(o)
    {
        if (dir_.empty())
            throw std::invalid_argument("tpudsl::BackupAndRestore: backup_dir is empty (give a directory for the "
                                        "backup; it is created if missing)");
    }

    [[nodiscard]] const std::string& backup_dir() const noexcept { return dir_; }
    /// The backup's file: `<backup_dir>/backup.tpudsl`.
    [[nodiscard]] std::string backup_path() const { return (std::filesystem::path(dir_) / file_name).string(); }
    /// True when the last fit began from a backup.
    [[nodiscard]] bool restored() const noexcept { return restored_; }

    /// Creates the directory, checks that a backup can be written there, locks it (a second fit on
    /// the same directory is refused while this one runs), removes temporaries that killed writers left
    /// there, and restores the backup when there is one.
    [[gnu::cold]] void
    on_train_begin(TrainingControl& control) override
    {
        namespace fs = std::filesystem;
        std::error_code ec;
        fs::create_directories(dir_, ec);
        if (ec)
            throw std::system_error(ec, detail::concat({"tpudsl::BackupAndRestore: cannot create the backup directory '",
                                                        dir_, "'"}));
        if (!fs::is_directory(dir_, ec))
            throw std::runtime_error(detail::concat({"tpudsl::BackupAndRestore: '", dir_,
                                                     "' is not a directory (backup_dir names "
                                                     "the directory that holds the backup)"}));
        if (control.writes_files()) {   // a multi-worker job's chief: the workers only read its backup
            detail::require_writable_directory("tpudsl::BackupAndRestore", dir_, "the backup directory");
            const std::string lock = (fs::path(dir_) / lock_name).string();
            lock_.acquire(lock, "tpudsl::BackupAndRestore",
                          detail::concat({"tpudsl::BackupAndRestore: the backup directory '", dir_,
                                          "' is in use by another fit, which holds its lock '", lock,
                                          "'; give each fit its own backup_dir, or wait for that one to end"}));
        }
        remove_stale_temporaries();
        batches_ = 0;
        restored_ = false;
        const std::string path = backup_path();
        if (fs::exists(fs::symlink_status(path, ec))) {
            control.restore_training_state(path);
            restored_ = true;
        }
    }

    void
    on_train_batch_end(std::size_t, const Logs&, TrainingControl& control) override
    {
        if (options_.save_freq != 0 && ++batches_ >= options_.save_freq) {
            batches_ = 0;
            if (control.writes_files())   // a multi-worker job: the chief's backup serves every worker
                control.save_training_state(backup_path());
        }
    }

    void
    on_epoch_end(std::size_t, Logs&, TrainingControl& control) override
    {
        if (options_.save_freq == 0 && control.writes_files())
            control.save_training_state(backup_path());
    }

    /// The fit completed: removes the backup (delete_checkpoint), and the directory if that empties it;
    /// releases the directory's lock.
    void
    on_train_end(TrainingControl& control) override
    {
        if (!options_.delete_checkpoint || !control.writes_files()) {
            lock_.release();
            return;
        }
        const std::string path = backup_path();
        if (::unlink(path.c_str()) != 0 && errno != ENOENT)
            detail::throw_errno(errno, detail::concat({"tpudsl::BackupAndRestore: cannot remove the backup '", path,
                                                       "'"}));
        remove_stale_temporaries();
        lock_.release();
        (void)::rmdir(dir_.c_str());   // only when empty: what else is there is the user's
    }

private:
    /// Removes `backup.tpudsl.tmp.<pid>.<n>` files of processes that no longer run (killed while they
    /// wrote a backup); a live writer's temporary is left alone.
    [[gnu::cold]] void
    remove_stale_temporaries() const
    {
        namespace fs = std::filesystem;
        std::error_code ec;
        const std::string prefix = std::string(file_name) + ".tmp.";
        for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string name = it->path().filename().string();
            if (name.compare(0, prefix.size(), prefix) != 0)
                continue;
            const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
            if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
                (void)::unlink(it->path().c_str());
        }
    }

    std::string dir_;
    Options options_;
    std::size_t batches_ = 0;
    bool restored_ = false;
    detail::directory_lock lock_;   // held from on_train_begin to on_train_end (or to the end of this object)
};

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_BACKUP_HPP
