/// @file Saves and loads a model's flat parameter buffer in a small versioned binary format,
/// atomically (a unique temporary file beside the target, flushed, then renamed), with a checksum.
///
///   "TPUDSLW1" | u64 param_count | u64 buffer floats | u64 layout fingerprint | floats | u64 FNV-1a
/// All integers and floats are little-endian. A file written for another model type, truncated, with
/// bytes after its checksum or corrupted is refused with a message naming the file and what differs.
#ifndef TPUDSL_IO_WEIGHTS_HPP
#define TPUDSL_IO_WEIGHTS_HPP

#include <tpudsl/detail/text.hpp>
#include <tpudsl/io/files.hpp>
#include <tpudsl/model/sequential.hpp>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>

namespace tpudsl {

namespace detail {

inline constexpr char weights_magic[8] = {'T', 'P', 'U', 'D', 'S', 'L', 'W', '1'};
inline constexpr std::uint64_t fnv1a_offset = 0xcbf29ce484222325ULL;

[[nodiscard]] constexpr std::uint64_t
fnv1a(std::uint64_t h, const unsigned char* p, std::size_t n) noexcept
{
    for (std::size_t i = 0; i < n; ++i)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

template <class W>
constexpr std::uint64_t
mix_weight(std::uint64_t h) noexcept
{
    h = (h ^ W::offset) * 0x100000001b3ULL;
    for (std::size_t d : W::shape::dims)
        h = (h ^ d) * 0x100000001b3ULL;
    return h;
}

template <class B>
constexpr std::uint64_t
mix_layer(std::uint64_t h) noexcept
{
    [&]<std::size_t... J>(std::index_sequence<J...>) {
        ((h = mix_weight<typename B::template weight<J>>(h)), ...);
    }(std::make_index_sequence<B::weight_count>{});
    return h;
}

/// A fingerprint of the model's weight layout: every weight's offset and shape.
template <class Model>
[[nodiscard]] constexpr std::uint64_t
layout_fingerprint() noexcept
{
    std::uint64_t h = fnv1a_offset;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((h = mix_layer<typename Model::template layer<I>>(h)), ...);
    }(std::make_index_sequence<Model::layer_count>{});
    return h;
}

inline void
put_u64(unsigned char* b, std::uint64_t v) noexcept
{
    for (int i = 0; i < 8; ++i)
        b[i] = static_cast<unsigned char>(v >> (8 * i));
}

[[nodiscard]] inline std::uint64_t
get_u64(const unsigned char* b) noexcept
{
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v |= static_cast<std::uint64_t>(b[i]) << (8 * i);
    return v;
}

/// Where a weight lies in the parameter buffer and what it is called: first_non_finite_in's table
/// of a model's weights (weight_places), constants of the model's type.
struct weight_place {
    std::size_t offset, size;
    std::string_view role;         // "kernel"
    std::size_t layer;             // the layer's index
    std::string_view base_name;    // with same_name_count, the layer's auto-name ("dense_1")
    std::size_t same_name_count;
    std::string_view class_name;   // "Dense"
};

/// Every weight of `Model`, layer by layer in Keras' order.
template <class Model>
inline constexpr auto weight_places = [] {
    constexpr std::size_t count = []<std::size_t... I>(std::index_sequence<I...>) {
        return (std::size_t{0} + ... + Model::template layer<I>::weight_count);
    }(std::make_index_sequence<Model::layer_count>{});
    std::array<weight_place, count> places{};
    std::size_t n = 0;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        ([&]<std::size_t L>(std::integral_constant<std::size_t, L>) {
            using B = typename Model::template layer<L>;
            [&]<std::size_t... J>(std::index_sequence<J...>) {
                ((places[n++] = weight_place{B::template weight<J>::offset, B::template weight<J>::size,
                                             B::template weight<J>::name, L,
                                             layer_base_name<Model, L>(), layer_same_name_count<Model, L>(),
                                             B::spec::class_name}),
                 ...);
            }(std::make_index_sequence<B::weight_count>{});
        }(std::integral_constant<std::size_t, I>{}), ...);
    }(std::make_index_sequence<Model::layer_count>{});
    return places;
}();

/// The first value in `params` of the weights `places` lists that is not finite, described ("nan at
/// element 7 of the kernel of layer 2 'dense_1' (Dense)"), or "" when every one is finite.
[[nodiscard]] inline std::string
first_non_finite_in(const float* params, std::span<const weight_place> places)
{
    for (const weight_place& w : places)
        for (std::size_t e = 0; e < w.size; ++e) {
            const float v = params[w.offset + e];
            if (!std::isfinite(v))
                return detail::concat({std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf", " at element ",
                                       std::to_string(e), " of the ", w.role, " of layer ", std::to_string(w.layer),
                                       " '", auto_layer_name(w.base_name, w.same_name_count), "' (", w.class_name,
                                       ")"});
        }
    return {};
}

/// Refuses to save weights that are not all finite: a file of NaNs would replace a good one, and
/// every reader refuses it anyway. Throws std::runtime_error "<who>: '<path>' not written: ...".
inline void
require_finite_to_save(std::string_view who, const std::string& path, const float* params,
                       std::span<const weight_place> places)
{
    if (const std::string bad = first_non_finite_in(params, places); !bad.empty())
        throw std::runtime_error(detail::concat({who, ": '", path, "' not written: the weights hold ", bad,
                                                 "; non-finite weights are never saved (TerminateOnNaN stops a "
                                                 "run whose loss is no longer finite)"}));
}

template <class Model>
void
require_finite_to_save(std::string_view who, const std::string& path, const float* params)
{
    require_finite_to_save(who, path, params, weight_places<Model>);
}

/// The sizes of a weights file's parts, in bytes.
inline constexpr std::size_t weights_header_bytes = 8 + 3 * 8;   // magic, count, size, fingerprint
inline constexpr std::size_t weights_trailer_bytes = 8;          // the FNV-1a checksum of the floats
static_assert(sizeof(float) == 4, "tpudsl: weights files store IEEE-754 binary32 floats");

/// What a weights file of a model records and is checked against: its parameter count, its buffer's
/// floats, its layout's fingerprint and its weights (for the finite check). Constants of the model's
/// type; save_weights_file and load_weights_file, the work, are compiled once for every model.
struct weights_layout {
    std::size_t count, size;
    std::uint64_t fingerprint;
    std::span<const weight_place> places;
};

template <class Model>
[[nodiscard]] constexpr weights_layout
weights_layout_of() noexcept
{
    return {Model::param_count, Model::param_buffer_size, layout_fingerprint<Model>(), weight_places<Model>};
}

/// save_weights' work, for a model of layout `m`.
[[gnu::cold]] inline void
save_weights_file(const std::string& path, const float* params, const weights_layout& m)
{
    constexpr std::string_view who = "tpudsl::save_weights";
    require_finite_to_save(who, path, params, m.places);
    replace_file(who, path, [&](auto&& sink) {
        unsigned char header[weights_header_bytes];
        std::memcpy(header, weights_magic, sizeof weights_magic);
        put_u64(header + 8, m.count);
        put_u64(header + 16, m.size);
        put_u64(header + 24, m.fingerprint);
        sink(header, sizeof header);
        std::uint64_t sum = fnv1a_offset;
        unsigned char chunk[4096];
        std::size_t used = 0;
        for (std::size_t i = 0; i < m.size; ++i) {
            std::uint32_t bits;
            std::memcpy(&bits, params + i, 4);
            unsigned char* b = chunk + used;
            b[0] = static_cast<unsigned char>(bits);
            b[1] = static_cast<unsigned char>(bits >> 8);
            b[2] = static_cast<unsigned char>(bits >> 16);
            b[3] = static_cast<unsigned char>(bits >> 24);
            sum = fnv1a(sum, b, 4);
            used += 4;
            if (used == sizeof chunk) {
                sink(chunk, used);
                used = 0;
            }
        }
        put_u64(chunk + used, sum);   // sizeof chunk is a multiple of 4 and > 8: room left
        sink(chunk, used + weights_trailer_bytes);
    });
}

/// load_weights' work, for a model of layout `m`.
[[gnu::cold]] inline void
load_weights_file(const std::string& path, float* params, const weights_layout& m)
{
    constexpr std::string_view who = "tpudsl::load_weights";
    const std::string w(who);
    // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused just below)
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (!fd)
        throw_errno(errno, concat({w, ": cannot open '", path, "'"}));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        throw_errno(errno, concat({w, ": cannot examine '", path, "'"}));
    require_regular(st.st_mode, who, path, "a weights file is a regular file");
    const auto file_bytes = static_cast<std::uint64_t>(st.st_size);

    auto read_exactly = [&](unsigned char* p, std::size_t n) {
        const std::ptrdiff_t got = read_full(fd.get(), p, n);
        if (got < 0)
            throw_errno(errno, concat({w, ": reading '", path, "' failed"}));
        return static_cast<std::size_t>(got);
    };

    unsigned char header[weights_header_bytes];
    const std::size_t header_got = read_exactly(header, sizeof header);
    if (header_got < sizeof weights_magic || std::memcmp(header, weights_magic, sizeof weights_magic) != 0)
        throw std::runtime_error(concat({w, ": '", path, "' is not a tpudsl weights file (bad magic)"}));
    if (header_got < sizeof header)
        throw std::runtime_error(concat({w, ": '", path, "' is truncated in its header"}));
    const std::uint64_t count = get_u64(header + 8), size = get_u64(header + 16), fingerprint = get_u64(header + 24);
    if (count != m.count || size != m.size || fingerprint != m.fingerprint)
        throw std::runtime_error(concat({w, ": '", path, "' holds ", std::to_string(count),
                                         " parameters of another model layout; this model has ",
                                         std::to_string(m.count)}));

    // The header matches this model, so the body's size is known: read exactly that much (never a
    // size taken from the file), then look for anything after it.
    const std::size_t body_bytes = 4 * m.size + weights_trailer_bytes;
    std::vector<unsigned char> body(body_bytes + 1);
    const std::size_t got = read_exactly(body.data(), body.size());
    if (got < 4 * m.size)
        throw std::runtime_error(concat({w, ": '", path, "' is truncated at float ", std::to_string(got / 4),
                                         " of ", std::to_string(m.size)}));
    if (got < body_bytes)
        throw std::runtime_error(concat({w, ": '", path, "' is truncated before its checksum"}));
    if (got > body_bytes) {
        const std::uint64_t expected = weights_header_bytes + body_bytes;
        throw std::runtime_error(concat({w, ": '", path, "' has ",
                                         (file_bytes > expected ? std::to_string(file_bytes - expected) : std::string("some")),
                                         " bytes after its checksum; a weights file of this model is ",
                                         std::to_string(expected), " bytes"}));
    }
    std::uint64_t sum = fnv1a_offset;
    std::vector<float> buffer(m.size);
    for (std::size_t i = 0; i < buffer.size(); ++i) {
        const unsigned char* b = body.data() + 4 * i;
        sum = fnv1a(sum, b, 4);
        const std::uint32_t bits = static_cast<std::uint32_t>(b[0]) | (static_cast<std::uint32_t>(b[1]) << 8) |
                                   (static_cast<std::uint32_t>(b[2]) << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
        std::memcpy(&buffer[i], &bits, 4);
    }
    if (get_u64(body.data() + 4 * m.size) != sum)
        throw std::runtime_error(concat({w, ": '", path, "' is corrupt (checksum mismatch)"}));
    if (const std::string bad = first_non_finite_in(buffer.data(), m.places); !bad.empty())
        throw std::runtime_error(concat({w, ": '", path, "' holds ", bad, "; weights must be finite"}));
    std::memcpy(params, buffer.data(), buffer.size() * sizeof(float));
}

} // namespace detail

/// Writes the parameters of `Model` to `path` atomically: a unique temporary file beside it,
/// flushed to disk, then renamed over it (detail::replace_file). Throws std::system_error with the
/// system's reason when a step fails (the temporary is removed, `path` is left as it was), and
/// std::runtime_error when `path` is a directory, a FIFO, a device or a socket, or when a weight is
/// NaN or infinite (nothing is written).
template <class Model>
void
save_weights(const std::string& path, const float* params)
{
    detail::save_weights_file(path, params, detail::weights_layout_of<Model>());
}

/// Reads parameters written by save_weights<Model> into `params` (left untouched on any error).
/// The file must be a regular file of exactly the size this model's weights take: a file of another
/// model layout, truncated, with bytes after its checksum, corrupted, or holding a NaN or an infinity
/// is refused with std::runtime_error naming it and what differs; a file that cannot be opened or read, with
/// std::system_error and the system's reason.
template <class Model>
void
load_weights(const std::string& path, float* params)
{
    detail::load_weights_file(path, params, detail::weights_layout_of<Model>());
}

} // namespace tpudsl

#endif // !TPUDSL_IO_WEIGHTS_HPP
