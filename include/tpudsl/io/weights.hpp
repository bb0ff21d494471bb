/// @file Saves and loads a model's flat parameter buffer in a small versioned binary format,
/// atomically (a temporary file beside the target, then a rename), with a checksum.
///
///   "TPUDSLW1" | u64 param_count | u64 buffer floats | u64 layout fingerprint | floats | u64 FNV-1a
/// All integers and floats are little-endian. A file written for another model type, truncated or
/// corrupted is refused with a message naming the file and what differs.
#ifndef TPUDSL_IO_WEIGHTS_HPP
#define TPUDSL_IO_WEIGHTS_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tpudsl {

namespace detail {

inline constexpr char weights_magic[8] = {'T', 'P', 'U', 'D', 'S', 'L', 'W', '1'};

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
    std::uint64_t h = 0xcbf29ce484222325ULL;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((h = mix_layer<typename Model::template layer<I>>(h)), ...);
    }(std::make_index_sequence<Model::layer_count>{});
    return h;
}

inline void
put_u64(std::ofstream& out, std::uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; ++i)
        b[i] = static_cast<unsigned char>(v >> (8 * i));
    out.write(reinterpret_cast<const char*>(b), 8);
}

inline bool
get_u64(std::ifstream& in, std::uint64_t& v)
{
    unsigned char b[8];
    if (!in.read(reinterpret_cast<char*>(b), 8))
        return false;
    v = 0;
    for (int i = 0; i < 8; ++i)
        v |= static_cast<std::uint64_t>(b[i]) << (8 * i);
    return true;
}

static_assert(sizeof(float) == 4, "tpudsl: weights files store IEEE-754 binary32 floats");

} // namespace detail

/// Writes the parameters of `Model` to `path` atomically.
template <class Model>
void
save_weights(const std::string& path, const float* params)
{
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path tmp = target.string() + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out)
            throw std::runtime_error("tpudsl::save_weights: cannot open '" + tmp.string() + "' for writing");
        out.write(detail::weights_magic, sizeof detail::weights_magic);
        detail::put_u64(out, Model::param_count);
        detail::put_u64(out, Model::param_buffer_size);
        detail::put_u64(out, detail::layout_fingerprint<Model>());
        std::uint64_t sum = 0xcbf29ce484222325ULL;
        for (std::size_t i = 0; i < Model::param_buffer_size; ++i) {
            std::uint32_t bits;
            std::memcpy(&bits, params + i, 4);
            unsigned char b[4] = {static_cast<unsigned char>(bits), static_cast<unsigned char>(bits >> 8),
                                  static_cast<unsigned char>(bits >> 16), static_cast<unsigned char>(bits >> 24)};
            out.write(reinterpret_cast<const char*>(b), 4);
            sum = detail::fnv1a(sum, b, 4);
        }
        detail::put_u64(out, sum);
        out.flush();
        if (!out)
            throw std::runtime_error("tpudsl::save_weights: writing '" + tmp.string() + "' failed");
    }
    std::error_code ec;
    fs::rename(tmp, target, ec);
    if (ec) {
        fs::remove(tmp);
        throw std::runtime_error("tpudsl::save_weights: cannot move '" + tmp.string() + "' to '" + path +
                                 "': " + ec.message());
    }
}

/// Reads parameters written by save_weights<Model> into `params` (left untouched on any error).
template <class Model>
void
load_weights(const std::string& path, float* params)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error("tpudsl::load_weights: cannot open '" + path + "'");
    char magic[8];
    if (!in.read(magic, 8) || std::memcmp(magic, detail::weights_magic, 8) != 0)
        throw std::runtime_error("tpudsl::load_weights: '" + path + "' is not a tpudsl weights file (bad magic)");
    std::uint64_t count = 0, size = 0, fingerprint = 0;
    if (!detail::get_u64(in, count) || !detail::get_u64(in, size) || !detail::get_u64(in, fingerprint))
        throw std::runtime_error("tpudsl::load_weights: '" + path + "' is truncated in its header");
    if (count != Model::param_count || size != Model::param_buffer_size ||
        fingerprint != detail::layout_fingerprint<Model>())
        throw std::runtime_error("tpudsl::load_weights: '" + path + "' holds " + std::to_string(count) +
                                 " parameters of another model layout; this model has " +
                                 std::to_string(Model::param_count));
    std::vector<float> buffer(Model::param_buffer_size);
    std::uint64_t sum = 0xcbf29ce484222325ULL;
    for (std::size_t i = 0; i < buffer.size(); ++i) {
        unsigned char b[4];
        if (!in.read(reinterpret_cast<char*>(b), 4))
            throw std::runtime_error("tpudsl::load_weights: '" + path + "' is truncated at float " + std::to_string(i) +
                                     " of " + std::to_string(buffer.size()));
        sum = detail::fnv1a(sum, b, 4);
        const std::uint32_t bits = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
        std::memcpy(&buffer[i], &bits, 4);
    }
    std::uint64_t stored = 0;
    if (!detail::get_u64(in, stored))
        throw std::runtime_error("tpudsl::load_weights: '" + path + "' is truncated before its checksum");
    if (stored != sum)
        throw std::runtime_error("tpudsl::load_weights: '" + path + "' is corrupt (checksum mismatch)");
    std::memcpy(params, buffer.data(), buffer.size() * sizeof(float));
}

} // namespace tpudsl

#endif // !TPUDSL_IO_WEIGHTS_HPP
