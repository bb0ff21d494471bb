/// @file Defines how tpudsl writes files (POSIX): a checked open, a complete write, and the atomic
/// replacement of a file by a unique temporary beside it, flushed to disk and renamed over it.
///
/// Every failure throws std::system_error with the system's reason (`std::generic_category()`, e.g.
/// "No space left on device") and the path; a target that exists and is not a regular file (a
/// directory, a FIFO, a device, a socket) is refused with std::runtime_error and left as it is. A
/// failed replacement removes its temporary and leaves the target as it was.
#ifndef TPUDSL_IO_FILES_HPP
#define TPUDSL_IO_FILES_HPP

#include <tpudsl/detail/text.hpp>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

namespace tpudsl::detail {

/// An open file descriptor, closed when it goes out of scope.
class unique_fd {
public:
    unique_fd() noexcept = default;
    explicit unique_fd(int fd) noexcept : fd_(fd) {}
    unique_fd(unique_fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    unique_fd&
    operator=(unique_fd&& o) noexcept
    {
        if (this != &o) {
            reset();
            fd_ = std::exchange(o.fd_, -1);
        }
        return *this;
    }
    unique_fd(const unique_fd&) = delete;
    unique_fd& operator=(const unique_fd&) = delete;
    ~unique_fd() { reset(); }

    [[nodiscard]] int get() const noexcept { return fd_; }
    [[nodiscard]] explicit operator bool() const noexcept { return fd_ >= 0; }
    void
    reset() noexcept
    {
        if (fd_ >= 0)
            ::close(std::exchange(fd_, -1));
    }
    /// Closes the file, returning 0 or the errno of a failed close (a write-back error shows here).
    [[nodiscard]] int
    close() noexcept
    {
        if (fd_ < 0)
            return 0;
        return ::close(std::exchange(fd_, -1)) == 0 ? 0 : errno;
    }

private:
    int fd_ = -1;
};

/// Throws std::system_error for `err` (an errno): "<what>: <the system's reason>".
[[noreturn]] inline void
throw_errno(int err, const std::string& what)
{
    throw std::system_error(err, std::generic_category(), what);
}

/// What a non-regular file is, in words ("a directory", "a FIFO", ...).
[[nodiscard]] inline std::string_view
file_kind(mode_t mode) noexcept
{
    if (S_ISREG(mode))
        return "a regular file";
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

/// Refuses, with std::runtime_error, a file of `mode` that is not regular: "<who>: '<path>' is a
/// directory, not a regular file; <then>".
inline void
require_regular(mode_t mode, std::string_view who, const std::string& path, std::string_view then)
{
    if (!S_ISREG(mode))
        throw std::runtime_error(detail::concat({who, ": '", path, "' is ", file_kind(mode),
                                                 ", not a regular file; ", then}));
}

/// Writes all `n` bytes of `p`, through short writes and interrupted calls; false with errno set
/// on failure.
[[nodiscard]] inline bool
write_all(int fd, const void* p, std::size_t n) noexcept
{
    const auto* b = static_cast<const unsigned char*>(p);
    while (n > 0) {
        const ssize_t w = ::write(fd, b, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        if (w == 0) {   // no progress and no error: report it as a full device rather than spin
            errno = ENOSPC;
            return false;
        }
        b += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

/// Reads up to `n` bytes into `p`, through short reads and interrupted calls; the count read (less
/// than n only at the end of the file), or -1 with errno set.
[[nodiscard]] inline std::ptrdiff_t
read_full(int fd, void* p, std::size_t n) noexcept
{
    auto* b = static_cast<unsigned char*>(p);
    std::size_t got = 0;
    while (got < n) {
        const ssize_t r = ::read(fd, b + got, n - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        got += static_cast<std::size_t>(r);
    }
    return static_cast<std::ptrdiff_t>(got);
}

/// A number no other temporary of this process has had (one counter for every caller).
[[nodiscard]] inline std::uint64_t
next_temporary_number() noexcept
{
    static std::atomic<std::uint64_t> counter{0};
    return counter.fetch_add(1, std::memory_order_relaxed);
}

/// Where replace_file's content goes: `sink(bytes, n)` appends n bytes to the temporary file, and
/// throws std::system_error with the system's reason when that fails.
class file_sink {
public:
    file_sink(int fd, const std::string& failure) noexcept : fd_(fd), failure_(&failure) {}

    void
    operator()(const void* bytes, std::size_t n) const
    {
        if (!write_all(fd_, bytes, n))
            throw_errno(errno, *failure_);
    }

private:
    int fd_;
    const std::string* failure_;
};

/// Where a save to `path` writes: `path` itself, or the file a symbolic link there leads to; and the
/// permission bits of the file already there (none for a new file). A target that exists and is not a
/// regular file is refused (std::runtime_error), an empty path too (std::invalid_argument), a link that
/// leads nowhere or a path that cannot be examined with the system's reason (std::system_error; with
/// `missing_parts_ok`, a missing or non-directory part of the path is left for the caller to report).
struct save_target {
    std::string path;
    std::optional<mode_t> mode;
};

[[gnu::cold]] [[nodiscard]] inline save_target
resolve_save_target(std::string_view who, const std::string& path, bool missing_parts_ok)
{
    const std::string w(who);
    if (path.empty())
        throw std::invalid_argument(detail::concat({w, ": the path is empty"}));
    save_target t{path, std::nullopt};
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            if (::stat(path.c_str(), &st) != 0)
                throw_errno(errno, detail::concat({w, ": '", path, "' is a symbolic link that leads nowhere"}));
            std::error_code ec;
            t.path = std::filesystem::canonical(path, ec).string();
            if (ec)
                throw_errno(ec.value(), detail::concat({w, ": cannot follow the symbolic link '", path, "'"}));
        }
        require_regular(st.st_mode, who, path, "it is left as it is (give the path of a file)");
        t.mode = st.st_mode & 0777;
    } else if (errno != ENOENT && !(missing_parts_ok && errno == ENOTDIR)) {
        throw_errno(errno, detail::concat({w, ": cannot save to '", path, "'"}));
    }
    return t;
}

/// replace_file's work, one function for every caller: `fill(context, sink)` writes the content.
[[gnu::cold]] inline void
replace_file_with(std::string_view who, const std::string& path, void (*fill)(void*, const file_sink&), void* context)
{
    namespace fs = std::filesystem;
    const std::string w(who);
    const save_target resolved = resolve_save_target(who, path, false);
    const std::string& target = resolved.path;
    const mode_t mode = resolved.mode.value_or(0666);   // a new file: what the umask leaves of rw, as fopen gives
    const bool keep_mode = resolved.mode.has_value();

    // A name no other writer uses: the process id and a per-process counter; O_EXCL makes sure
    // (a stale temporary of a process whose id came back is stepped over).
    std::string tmp;
    unique_fd fd;
    for (int attempt = 0; !fd; ++attempt) {
        tmp = concat({target, ".tmp.", std::to_string(::getpid()), ".", std::to_string(next_temporary_number())});
        fd = unique_fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
        if (!fd && (errno != EEXIST || attempt == 100))
            throw_errno(errno, detail::concat({w, ": cannot create the temporary file '", tmp, "' to write '", path,
                                               "'"}));
    }

    struct remove_unless_renamed {
        const std::string& name;
        bool renamed = false;
        ~remove_unless_renamed()
        {
            if (!renamed)
                ::unlink(name.c_str());
        }
    } guard{tmp};

    const std::string writing = concat({w, ": writing '", tmp, "', the temporary file for '", path, "', failed"});
    if (keep_mode && ::fchmod(fd.get(), mode) != 0)
        throw_errno(errno, writing);
    fill(context, file_sink(fd.get(), writing));
    if (::fsync(fd.get()) != 0)
        throw_errno(errno, writing);
    if (const int err = fd.close())
        throw_errno(err, writing);
    if (::rename(tmp.c_str(), target.c_str()) != 0)
        throw_errno(errno, detail::concat({w, ": cannot rename '", tmp, "' to '", target, "'"}));
    guard.renamed = true;

    // The rename is durable once the directory is on disk too; a file system that cannot sync a
    // directory still holds a complete file, so a failure here is not reported.
    const fs::path parent = fs::path(target).parent_path();
    if (const unique_fd dir(::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); dir)
        (void)::fsync(dir.get());
}

/// Writes a new file in place of `path`, atomically: `fill(sink)` calls `sink(bytes, n)` with the
/// content, which goes to a temporary `<path>.tmp.<pid>.<n>` created (exclusively) beside the
/// target; the temporary is flushed to disk (fsync), then renamed over `path`, and the directory is
/// flushed too. Two threads or processes saving to one path each write their own temporary, so the
/// file is always one complete save or the other. A symbolic link to a regular file is followed (the
/// file it points to is replaced, the link is kept). A replaced file keeps its permission bits.
/// On any failure, or an exception from `fill`, the temporary is removed and `path` is as it was.
/// The work is replace_file_with's, compiled once however many callers a program has.
/// @param who the caller's name, which starts every message ("tpudsl::save_weights")
template <class Fill>
void
replace_file(std::string_view who, const std::string& path, Fill&& fill)
{
    using F = std::remove_reference_t<Fill>;
    replace_file_with(
        who, path, [](void* f, const file_sink& sink) { (*static_cast<F*>(f))(sink); },
        const_cast<void*>(static_cast<const void*>(std::addressof(fill))));
}

/// Checks now, before a long run, that a file can be written into the directory `dir` ("" is the
/// current one), as replace_file will write there: a file is created in it (exclusively, under a name
/// no other writer uses and without ".tmp.", so that nothing takes it for a save under way) and removed.
/// Throws std::system_error with the system's reason: "<who>: cannot write into the directory '<dir>'
/// (<purpose>)" (no such directory, not a directory, read-only, no permission, no inodes left).
[[gnu::cold]] inline void
require_writable_directory(std::string_view who, const std::string& dir, std::string_view purpose)
{
    const std::string where = dir.empty() ? std::string(".") : dir;
    const std::string failure = concat({who, ": cannot write into the directory '", where, "' (", purpose, ")"});
    struct stat st {};
    if (::stat(where.c_str(), &st) != 0)
        throw_errno(errno, failure);
    if (!S_ISDIR(st.st_mode))
        throw_errno(ENOTDIR, failure);
    std::string probe;
    unique_fd fd;
    for (int attempt = 0; !fd; ++attempt) {
        probe = concat({where, "/.tpudsl-write-check.", std::to_string(::getpid()), ".",
                        std::to_string(next_temporary_number())});
        fd = unique_fd(::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
        if (!fd && (errno != EEXIST || attempt == 100))
            throw_errno(errno, failure);
    }
    fd.reset();
    (void)::unlink(probe.c_str());
}

/// Checks now what replace_file(who, path, ...) will need later, so that a run whose result cannot be
/// saved fails before it starts rather than after: a path that is not empty, a target that is a
/// regular file if it exists (a symbolic link to one is followed, as replace_file follows it), and a
/// directory it can write a file into (require_writable_directory). Throws as replace_file does.
[[gnu::cold]] inline void
require_replaceable(std::string_view who, const std::string& path, std::string_view purpose)
{
    namespace fs = std::filesystem;
    // a missing or non-directory part of the path: the directory's check below says which
    const std::string target = resolve_save_target(who, path, true).path;
    require_writable_directory(who, fs::path(target).parent_path().string(),
                               detail::concat({purpose, " '", path, "' goes there"}));
}

} // namespace tpudsl::detail

namespace tpudsl {

/// Writes `text` as the whole content of the file at `path`, atomically (detail::replace_file): a
/// reader, or a crash, sees the old file or the new one, never a part. Throws as replace_file does,
/// each message starting with `who`.
inline void
write_file(const std::string& path, std::string_view text, std::string_view who = "tpudsl::write_file")
{
    detail::replace_file(who, path, [&](auto&& sink) { sink(text.data(), text.size()); });
}

} // namespace tpudsl

#endif // !TPUDSL_IO_FILES_HPP
