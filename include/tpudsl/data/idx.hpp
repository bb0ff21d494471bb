/// @file Reads IDX files (MNIST, Fashion-MNIST), plain or gzip-compressed (through zlib).
///
/// IDX: big-endian magic 0x00000801 (labels, u8) or 0x00000803 (images, u8), then the item count,
/// then rows and cols for images, then the bytes. A missing, truncated or malformed file raises an
/// exception naming the file, what was expected and what was found.
#ifndef TPUDSL_DATA_IDX_HPP
#define TPUDSL_DATA_IDX_HPP

#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace tpudsl::data {

/// The content of an IDX file of unsigned bytes: dims[0] items of dims[1..] each.
struct idx_array {
    std::vector<std::size_t> dims;
    std::vector<std::uint8_t> bytes;
};

namespace detail {

class gz_reader {
public:
    explicit gz_reader(const std::string& path) : path_(path), file_(gzopen(path.c_str(), "rb"))
    {
        if (!file_)
            throw std::runtime_error("tpudsl: cannot open '" + path + "'");
    }
    gz_reader(const gz_reader&) = delete;
    gz_reader& operator=(const gz_reader&) = delete;
    ~gz_reader() { gzclose(file_); }

    /// Reads exactly n bytes, or throws naming `what`.
    void
    read(void* dst, std::size_t n, const std::string& what)
    {
        std::size_t got = 0;
        auto* p = static_cast<unsigned char*>(dst);
        while (got < n) {
            const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(n - got, 1u << 30));
            const int r = gzread(file_, p + got, chunk);
            if (r < 0) {
                int err = 0;
                const char* msg = gzerror(file_, &err);
                throw std::runtime_error("tpudsl: '" + path_ + "' is corrupt while reading " + what + ": " + msg);
            }
            if (r == 0)
                throw std::runtime_error("tpudsl: '" + path_ + "' is truncated: " + what + " needs " +
                                         std::to_string(n) + " bytes, found " + std::to_string(got));
            got += static_cast<std::size_t>(r);
        }
    }

    [[nodiscard]] bool
    at_end()
    {
        unsigned char c;
        return gzread(file_, &c, 1) == 0;
    }

private:
    std::string path_;
    gzFile file_;
};

inline std::uint32_t
big_endian(const unsigned char* b) noexcept
{
    return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
}

} // namespace detail

/// Reads an IDX file of unsigned bytes with `rank` dimensions (1: labels, 3: images).
inline idx_array
read_idx(const std::string& path, std::size_t rank)
{
    detail::gz_reader in(path);
    unsigned char header[4];
    in.read(header, 4, "the magic number");
    const std::uint32_t magic = detail::big_endian(header);
    const std::uint32_t expected = 0x00000800u | static_cast<std::uint32_t>(rank);
    if (magic != expected) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "bad magic number 0x%08x, expected 0x%08x (unsigned bytes, rank %zu)", magic,
                      expected, rank);
        throw std::runtime_error("tpudsl: '" + path + "': " + buf);
    }
    idx_array a;
    std::size_t total = 1;
    for (std::size_t d = 0; d < rank; ++d) {
        in.read(header, 4, "dimension " + std::to_string(d));
        a.dims.push_back(detail::big_endian(header));
        total *= a.dims.back();
    }
    a.bytes.resize(total);
    in.read(a.bytes.data(), total, std::to_string(a.dims[0]) + " records");
    if (!in.at_end())
        throw std::runtime_error("tpudsl: '" + path + "' holds more data than its header's " +
                                 std::to_string(a.dims[0]) + " records");
    return a;
}

/// Returns the first of `names` that exists in `dir`, or throws saying where it looked.
inline std::string
find_file(const std::string& dir, std::initializer_list<const char*> names, const std::string& how_to_get)
{
    for (const char* n : names) {
        const auto p = std::filesystem::path(dir) / n;
        if (std::filesystem::exists(p))
            return p.string();
    }
    std::string tried;
    for (const char* n : names)
        tried += std::string(tried.empty() ? "" : ", ") + n;
    throw std::runtime_error("tpudsl: no data set in '" + dir + "' (looked for " + tried + "); " + how_to_get);
}

} // namespace tpudsl::data

#endif // !TPUDSL_DATA_IDX_HPP
