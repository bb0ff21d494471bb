/// @file The training state that BackupAndRestore writes and reads: everything a fit needs to go on
/// from where it was, so that a run killed at any moment and restarted ends with the bits of a run
/// never interrupted. One file, written atomically (detail::replace_file), with a checksum:
///
///   "TPUDSLB2" | u64 layout fingerprint | u64 parameter floats | u64 seed | u64 iterations
///   | u64 epoch | u64 step | u64 pass | u64 batch                       (where the fit is)
///   | u64 source | u64 samples | u64 batch size | u64 steps per epoch | u64 shuffle  (which fit)
///   | u64 epochs                                                        (the fit's `epochs`)
///   | u64 n + the optimizer's name | u32 learning rate (binary32) | u64 momentum product (binary64)
///   | f64 loss sum | u64 samples seen | u64 n + n f64 metric states   (the epoch's running values)
///   | u64 n + n floats: parameters | u64 n + n floats: optimizer slots | u64 FNV-1a of all after the magic
///
/// Integers and floats are little-endian. A file that is truncated, corrupt, of another model layout or
/// larger than this model's state can be is refused with a message naming it and what is wrong. A file
/// of the first format, "TPUDSLB1" (without the fit's epochs), is still read: its epochs read as 0,
/// unknown.
#ifndef TPUDSL_IO_TRAINING_STATE_HPP
#define TPUDSL_IO_TRAINING_STATE_HPP

#include <tpudsl/detail/text.hpp>
#include <tpudsl/io/files.hpp>
#include <tpudsl/io/weights.hpp>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>

namespace tpudsl::detail {

/// Which fit a state belongs to: a resumed fit must read the same data the same way.
struct fit_signature {
    std::uint64_t source = 0;            // 0: arrays, 1: a Dataset
    std::uint64_t samples = 0;           // arrays: samples; a Dataset: its cardinality in batches
    std::uint64_t batch_size = 0;        // arrays: fit's batch; a Dataset: 0 (its batches are its own)
    std::uint64_t steps_per_epoch = 0;   // as given to fit (0: a whole pass)
    std::uint64_t shuffle = 0;

    friend bool operator==(const fit_signature&, const fit_signature&) = default;

    /// "arrays of 60000 samples in batches of 128, 0 steps per epoch, shuffled" (for messages).
    [[nodiscard]] std::string
    text() const
    {
        if (source == 0)
            return concat({"arrays of ", std::to_string(samples), " samples in batches of ",
                           std::to_string(batch_size), steps_per_epoch ? ", steps_per_epoch=" : ", whole passes",
                           steps_per_epoch ? std::to_string(steps_per_epoch) : "",
                           shuffle ? ", shuffled" : ", in order"});
        return concat({"a Dataset of ", std::to_string(samples), " batches",
                       steps_per_epoch ? ", steps_per_epoch=" : ", whole passes",
                       steps_per_epoch ? std::to_string(steps_per_epoch) : ""});
    }
};

/// Where a fit is: the next epoch to run and how many of its batches are done, and where its data
/// stream stands (arrays: pass and batch of that pass; a Dataset: batches read of the epoch's iteration).
struct fit_position {
    std::uint64_t epoch = 0, step = 0, pass = 0, batch = 0;
};

/// Everything of a fit in progress, apart from the model's buffers (given as pointers when written).
struct training_state {
    std::uint64_t seed = 0, iterations = 0;
    fit_position position;
    fit_signature fit;
    std::uint64_t epochs = 0;   // the fit's `epochs` (0: unknown, a file of the first format)
    std::string optimizer;
    float learning_rate = 0.0f;
    double momentum_product = 1.0;
    double loss_total = 0.0;
    std::uint64_t seen = 0;
    std::vector<double> running;   // the metrics' states, then each output's loss
    std::vector<float> params, slots;   // filled when read
};

inline constexpr char training_state_magic[8] = {'T', 'P', 'U', 'D', 'S', 'L', 'B', '2'};
/// The first format's magic: the same fields but the fit's epochs.
inline constexpr char training_state_magic_v1[8] = {'T', 'P', 'U', 'D', 'S', 'L', 'B', '1'};

/// The layout a training state belongs to: the model's weight-layout fingerprint and parameter floats.
struct state_layout {
    std::uint64_t fingerprint;
    std::size_t param_floats;

    template <class Model>
    [[nodiscard]] static constexpr state_layout
    of() noexcept
    {
        return {layout_fingerprint<Model>(), Model::param_buffer_size};
    }
};

/// Writes `s` and the buffers (`layout.param_floats` parameters, `slot_floats` slot floats) to `path`
/// atomically; std::system_error with the system's reason when a step fails (nothing is left behind,
/// a previous file stays as it was). Not a template: one function for every model.
[[gnu::cold]] inline void
write_training_state(const std::string& path, const training_state& s, state_layout layout, const float* params,
                     const float* slots, std::size_t slot_floats)
{
    std::vector<unsigned char> bytes;
    bytes.reserve(256 + 8 * s.running.size() + 4 * (layout.param_floats + slot_floats));
    auto append = [&](const void* p, std::size_t n) {
        const std::size_t at = bytes.size();
        bytes.resize(at + n);
        if (n != 0)
            std::memcpy(bytes.data() + at, p, n);
    };
    auto u64 = [&](std::uint64_t v) {
        unsigned char b[8];
        put_u64(b, v);
        append(b, 8);
    };
    auto f64 = [&](double v) {
        std::uint64_t bits;
        std::memcpy(&bits, &v, 8);
        u64(bits);
    };
    auto floats = [&](const float* p, std::size_t n) {
        u64(n);
        for (std::size_t i = 0; i < n; ++i) {
            std::uint32_t bits;
            std::memcpy(&bits, p + i, 4);
            const unsigned char b[4] = {static_cast<unsigned char>(bits), static_cast<unsigned char>(bits >> 8),
                                        static_cast<unsigned char>(bits >> 16), static_cast<unsigned char>(bits >> 24)};
            append(b, 4);
        }
    };
    append(training_state_magic, 8);
    u64(layout.fingerprint);
    u64(layout.param_floats);
    u64(s.seed);
    u64(s.iterations);
    for (const std::uint64_t v : {s.position.epoch, s.position.step, s.position.pass, s.position.batch})
        u64(v);
    for (const std::uint64_t v : {s.fit.source, s.fit.samples, s.fit.batch_size, s.fit.steps_per_epoch, s.fit.shuffle})
        u64(v);
    u64(s.epochs);
    u64(s.optimizer.size());
    append(s.optimizer.data(), s.optimizer.size());
    floats(&s.learning_rate, 1);
    f64(s.momentum_product);
    f64(s.loss_total);
    u64(s.seen);
    u64(s.running.size());
    for (const double h : s.running)
        f64(h);
    floats(params, layout.param_floats);
    floats(slots, slot_floats);
    u64(fnv1a(fnv1a_offset, bytes.data() + 8, bytes.size() - 8));
    replace_file("tpudsl::BackupAndRestore", path, [&](auto&& sink) { sink(bytes.data(), bytes.size()); });
}

/// Reads a state written by write_training_state for `layout`; std::runtime_error naming the file and
/// what is wrong for a file that is not one, is truncated or corrupt, or belongs to another model
/// layout; std::system_error with the system's reason when it cannot be opened or read.
[[gnu::cold]] [[nodiscard]] inline training_state
read_training_state(const std::string& path, state_layout layout, std::size_t max_slot_floats)
{
    const std::string who = concat({"tpudsl::BackupAndRestore: the backup '", path, "'"});
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (!fd)
        throw_errno(errno, detail::concat({who, " cannot be opened"}));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        throw_errno(errno, detail::concat({who, " cannot be examined"}));
    require_regular(st.st_mode, "tpudsl::BackupAndRestore", path, "a backup is a regular file");
    // No state of this model is larger: refuse before reading what could be any size.
    const std::uint64_t most = 4096 + 8 * 4096 + 4 * (static_cast<std::uint64_t>(layout.param_floats) + max_slot_floats) + 64;
    if (static_cast<std::uint64_t>(st.st_size) > most)
        throw std::runtime_error(detail::concat({who, " is ", std::to_string(st.st_size),
                                                 " bytes; no training state of this model ", "is larger than ",
                                                 std::to_string(most)}));
    std::vector<unsigned char> bytes(static_cast<std::size_t>(st.st_size));
    const std::ptrdiff_t got = read_full(fd.get(), bytes.data(), bytes.size());
    if (got < 0)
        throw_errno(errno, detail::concat({who, " cannot be read"}));
    bytes.resize(static_cast<std::size_t>(got));
    const bool first_format = bytes.size() >= 8 && std::memcmp(bytes.data(), training_state_magic_v1, 8) == 0;
    if (bytes.size() < 8 || (!first_format && std::memcmp(bytes.data(), training_state_magic, 8) != 0))
        throw std::runtime_error(detail::concat({who, " is not a tpudsl training state (bad magic)"}));
    if (bytes.size() < 16 || get_u64(bytes.data() + bytes.size() - 8) !=
                                 fnv1a(fnv1a_offset, bytes.data() + 8, bytes.size() - 16))
        throw std::runtime_error(detail::concat({who, " is truncated or corrupt (checksum mismatch)"}));

    std::size_t at = 8;
    const std::size_t end = bytes.size() - 8;
    auto need = [&](std::size_t n, const char* what) {
        if (end - at < n)
            throw std::runtime_error(detail::concat({who, " is truncated in its ", what}));
    };
    auto u64 = [&](const char* what) {
        need(8, what);
        const std::uint64_t v = get_u64(bytes.data() + at);
        at += 8;
        return v;
    };
    auto f64 = [&](const char* what) {
        const std::uint64_t bits = u64(what);
        double v;
        std::memcpy(&v, &bits, 8);
        return v;
    };
    auto floats = [&](std::vector<float>& out, std::size_t expected, const char* what) {
        const std::uint64_t n = u64(what);
        if (n != expected)
            throw std::runtime_error(detail::concat({who, " holds ", std::to_string(n), " ", what,
                                                     "; this model has ", std::to_string(expected)}));
        need(4 * n, what);
        out.resize(n);
        for (std::size_t i = 0; i < n; ++i, at += 4) {
            const unsigned char* b = bytes.data() + at;
            const std::uint32_t bits = static_cast<std::uint32_t>(b[0]) | (static_cast<std::uint32_t>(b[1]) << 8) |
                                       (static_cast<std::uint32_t>(b[2]) << 16) |
                                       (static_cast<std::uint32_t>(b[3]) << 24);
            std::memcpy(&out[i], &bits, 4);
        }
    };

    training_state s;
    if (u64("header") != layout.fingerprint || u64("header") != layout.param_floats)
        throw std::runtime_error(concat({who, " was written by a model of another layout (its layers or weight "
                                                "shapes differ from this model's)"}));
    s.seed = u64("header");
    s.iterations = u64("header");
    s.position = {u64("position"), u64("position"), u64("position"), u64("position")};
    s.fit = {u64("fit"), u64("fit"), u64("fit"), u64("fit"), u64("fit")};
    s.epochs = first_format ? 0 : u64("fit");
    const std::uint64_t name = u64("optimizer");
    need(name, "optimizer");
    s.optimizer.assign(reinterpret_cast<const char*>(bytes.data() + at), name);
    at += name;
    std::vector<float> lr;
    floats(lr, 1, "learning rate");
    s.learning_rate = lr[0];
    s.momentum_product = f64("optimizer");
    s.loss_total = f64("running values");
    s.seen = u64("running values");
    const std::uint64_t hits = u64("running values");
    if (hits > 4096)
        throw std::runtime_error(detail::concat({who, " holds ", std::to_string(hits),
                                                 " metric values; a model has at most 4096"}));
    for (std::uint64_t i = 0; i < hits; ++i)
        s.running.push_back(f64("running values"));
    floats(s.params, layout.param_floats, "parameters");
    const std::uint64_t slot_floats = end - at >= 8 ? get_u64(bytes.data() + at) : 0;
    if (slot_floats > max_slot_floats)
        throw std::runtime_error(detail::concat({who, " holds ", std::to_string(slot_floats),
                                                 " optimizer slot floats; no optimizer of this model has more than ",
                                                 std::to_string(max_slot_floats)}));
    floats(s.slots, static_cast<std::size_t>(slot_floats), "optimizer slots");
    if (at != end)
        throw std::runtime_error(detail::concat({who, " has ", std::to_string(end - at),
                                                 " bytes after its optimizer slots"}));
    return s;
}

} // namespace tpudsl::detail

#endif // !TPUDSL_IO_TRAINING_STATE_HPP
