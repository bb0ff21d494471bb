// What the harnesses (fuzz_idx, fuzz_cifar10, fuzz_sequences, fuzz_csv, fuzz_weights,
// fuzz_training_state) share: a scratch file per process for the input, a way to fail that libFuzzer
// records as a crash, and a watch on the largest single
// allocation a load makes (through the sanitizer allocator's hooks, so with -fsanitize=address only;
// without it the watch sees nothing and checks nothing).
#ifndef TPUDSL_TESTS_FUZZ_COMMON_HPP
#define TPUDSL_TESTS_FUZZ_COMMON_HPP

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

#include <zlib.h>

#include <fcntl.h>
#include <unistd.h>

// The sanitizer runtime's hook registration, weak: absent (null) in a build without a sanitizer.
extern "C" int
__sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, std::size_t),
                                          void (*free_hook)(const volatile void*)) __attribute__((weak));

namespace fuzz {

/// The harness's name, for messages and scratch files (each harness defines it).
extern const char* const harness;

/// The scratch files of this process, removed when a check fails (libFuzzer has saved the input).
inline std::vector<std::string> scratch_files;

/// A file of this process (in /dev/shm when it exists: a file system in memory; else $TMPDIR or /tmp).
inline std::string
scratch(const char* what)
{
    const char* tmp = std::getenv("TMPDIR");
    const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : tmp && *tmp ? tmp : "/tmp";
    scratch_files.push_back(std::string(dir) + "/tpudsl_" + harness + "_" + what + "." + std::to_string(::getpid()));
    return scratch_files.back();
}

/// Removes this process's scratch files when it exits (each harness's LLVMFuzzerInitialize calls it).
inline void
remove_scratch_files_at_exit()
{
    std::atexit([] {
        for (const std::string& f : scratch_files)
            ::unlink(f.c_str());
    });
}

[[noreturn]] inline void
fail(const char* why, const std::string& detail = {})
{
    std::fprintf(stderr, "%s: %s%s%s\n", harness, why, detail.empty() ? "" : ": ", detail.c_str());
    std::fflush(stderr);
    for (const std::string& f : scratch_files)
        ::unlink(f.c_str());
    std::abort();
}

inline void
write_file(const std::string& path, const std::uint8_t* data, std::size_t size)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        fail("cannot write the input file", path);
    for (std::size_t done = 0; done < size;) {
        const ssize_t w = ::write(fd, data + done, size - done);
        if (w <= 0)
            fail("cannot write the input file", path);
        done += static_cast<std::size_t>(w);
    }
    ::close(fd);
}

/// The largest single allocation made while armed.
struct alloc_watch {
    static inline volatile bool armed = false;
    static inline volatile std::size_t largest = 0;

    static void
    on_malloc(const volatile void*, std::size_t size)
    {
        if (armed && size > largest)
            largest = size;
    }
    static void on_free(const volatile void*) {}

    static void
    install()
    {
        if (__sanitizer_install_malloc_and_free_hooks)
            __sanitizer_install_malloc_and_free_hooks(&on_malloc, &on_free);
    }

    /// Runs f with the watch armed; returns the largest allocation it made.
    template <class F>
    static std::size_t
    during(F&& f)
    {
        largest = 0;
        armed = true;
        struct disarm {
            ~disarm() { armed = false; }
        } d;
        f();
        return largest;
    }
};

/// Slack for the loaders' own buffers (zlib's window and buffers, a stream's buffer, a line).
inline constexpr std::size_t allocation_slack = std::size_t{1} << 20;

/// Fails unless `largest` (bytes) stays within `bound`.
inline void
check_allocation(std::size_t largest, std::size_t bound, const char* what)
{
    if (largest > bound)
        fail("a load allocated far more than the data present",
             std::string(what) + ": one allocation of " + std::to_string(largest) + " bytes, bound " +
                 std::to_string(bound));
}

/// Runs a load: returns true if it succeeded, false if it threw std::runtime_error (or a type derived
/// from it) whose message names one of `paths` (the files it reads); fails on anything else thrown.
template <class F>
bool
loads(F&& load, std::initializer_list<std::string_view> paths, std::size_t& largest_allocation)
{
    try {
        largest_allocation = alloc_watch::during(load);
        return true;
    } catch (const std::runtime_error& e) {
        largest_allocation = alloc_watch::largest;
        const std::string_view message = e.what();
        if (std::none_of(paths.begin(), paths.end(), [&](std::string_view p) { return message.find(p) != message.npos; }))
            fail("an error that does not name the file", e.what());
        return false;
    } catch (const std::exception& e) {
        fail("threw an exception that is not a std::runtime_error", std::string(typeid(e).name()) + ": " + e.what());
    } catch (...) {
        fail("threw something that is not a std::exception");
    }
}

/// The same for a reader of one file.
template <class F>
bool
loads(F&& load, const std::string& path, std::size_t& largest_allocation)
{
    return loads(std::forward<F>(load), {std::string_view(path)}, largest_allocation);
}

/// What a file holds once decompressed: `clean` when it is plain, or when it is whole gzip members
/// with nothing after the last; `bytes` is what could be decompressed (all of it when clean).
struct decoded {
    bool gzip = false;
    bool clean = false;
    bool too_big = false;
    std::vector<std::uint8_t> bytes;
};

inline constexpr std::size_t decode_cap = std::size_t{64} << 20;

decoded
decode(const std::uint8_t* data, std::size_t size)
{
    decoded d;
    if (size < 2 || data[0] != 0x1f || data[1] != 0x8b) {
        d.clean = true;
        d.bytes.assign(data, data + size);
        return d;
    }
    d.gzip = true;
    if (size > UINT_MAX)
        fail("an input too large for one inflate call");
    z_stream z{};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        fail("inflateInit2 failed");
    unsigned char out[16384];
    std::size_t at = 0;
    for (;;) { // one member from `at`
        z.next_in = const_cast<Bytef*>(data + at);
        z.avail_in = static_cast<uInt>(size - at);
        int ret;
        do {
            z.next_out = out;
            z.avail_out = sizeof out;
            ret = inflate(&z, Z_NO_FLUSH);
            d.bytes.insert(d.bytes.end(), out, out + (sizeof out - z.avail_out));
            if (d.bytes.size() > decode_cap) {
                d.too_big = true;
                break;
            }
        } while (ret == Z_OK);
        if (d.too_big || ret != Z_STREAM_END) // Z_BUF_ERROR: cut short; Z_DATA_ERROR: corrupt, a bad check
            break;
        at = size - z.avail_in;
        if (at == size) {
            d.clean = true;
            break;
        }
        if (inflateReset(&z) != Z_OK) // what follows must be another whole member
            fail("inflateReset failed");
    }
    inflateEnd(&z);
    return d;
}

/// All of a file's bytes (a harness's own output: failing to read it is a failure).
inline std::vector<std::uint8_t>
read_file(const std::string& path)
{
    std::vector<std::uint8_t> out;
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        fail("cannot read the file written", path);
    std::uint8_t buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
        out.insert(out.end(), buf, buf + n);
    std::fclose(f);
    return out;
}

} // namespace fuzz

#endif // !TPUDSL_TESTS_FUZZ_COMMON_HPP
