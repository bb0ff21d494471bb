/// @file Reads IDX files (MNIST, Fashion-MNIST), plain or gzip-compressed (through zlib).
///
/// IDX: big-endian magic 0x000008RR (unsigned bytes, rank RR), then RR big-endian 32-bit dimensions,
/// then their product in bytes. A file that is missing, a directory, truncated, longer than its
/// header says, a corrupt gzip stream (bad deflate data, a wrong CRC-32, no end or trailer, bytes after
/// its end), or a header whose sizes overflow or exceed what the file can hold raises an exception
/// naming the file, what was expected and what was found; nothing is allocated beyond the data that
/// is really there.
#ifndef TPUDSL_DATA_IDX_HPP
#define TPUDSL_DATA_IDX_HPP

#include <tpudsl/detail/text.hpp>

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tpudsl::data {

/// The content of an IDX file of unsigned bytes: dims[0] items of dims[1..] each (rank 0: one byte).
struct idx_array {
    std::vector<std::size_t> dims;
    std::vector<std::uint8_t> bytes;
};

/// Thrown when a data set's files are not there at all (as opposed to present but unreadable): the
/// one error after which an example may train on a stand-in instead.
class missing_data_set : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

namespace detail {

/// The size of the regular file at `path`, or an error saying what is there instead.
[[gnu::cold]] inline std::uint64_t
regular_file_size(const std::string& path)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status))
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: cannot open '", path, "': ",
                                                         (ec ? ec.message() : std::string("no such file"))}));
    if (fs::is_directory(status))
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path, "' is a directory, expected a file"}));
    if (!fs::is_regular_file(status))
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path,
                                                         "' is not a regular file (a device, pipe or socket)"}));
    const auto size = fs::file_size(path, ec);
    if (ec)
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: cannot read the size of '", path, "': ",
                                                         ec.message()}));
    return size;
}

/// A text excerpt shown in an error: at most 40 characters, control and non-ASCII bytes as \xHH.
inline std::string
shown(std::string_view s)
{
    std::string out;
    for (std::size_t i = 0; i < s.size() && i < 40; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        }
    }
    if (s.size() > 40)
        out += "...";
    return out;
}

/// The bytes of a file, plain or gzip-compressed (one or more members, as `gzip` writes and `cat`
/// joins them): read exactly n bytes, then check the end. Compression is told by the gzip magic.
class byte_reader {
public:
    explicit byte_reader(const std::string& path) : path_(path), size_(regular_file_size(path))
    {
        file_.reset(std::fopen(path.c_str(), "rb"));
        if (!file_)
            throw std::runtime_error(tpudsl::detail::concat({"tpudsl: cannot open '", path, "': ",
                                                             std::strerror(errno)}));
        fill();
        gzip_ = have_ >= 2 && in_[0] == 0x1f && in_[1] == 0x8b;
        if (gzip_) {
            if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK)
                throw std::runtime_error(tpudsl::detail::concat({"tpudsl: zlib could not start reading '", path, "'"}));
            z_open_ = true;
        }
    }
    byte_reader(const byte_reader&) = delete;
    byte_reader& operator=(const byte_reader&) = delete;
    ~byte_reader()
    {
        if (z_open_)
            inflateEnd(&z_);
    }

    [[nodiscard]] bool compressed() const noexcept { return gzip_; }
    [[nodiscard]] std::uint64_t file_size() const noexcept { return size_; }

    /// The most bytes the rest of the file can give: what is left of a plain file; for a gzip file,
    /// deflate's largest ratio (1032:1) times its compressed size.
    [[nodiscard]] std::uint64_t
    most_remaining() const noexcept
    {
        return gzip_ ? size_ * 1032 : size_ - std::min(size_, consumed_);
    }

    /// Reads up to n bytes; fewer only at the end of the data.
    std::size_t
    read_some(void* dst, std::size_t n)
    {
        return gzip_ ? inflate_into(static_cast<unsigned char*>(dst), n) : copy_into(static_cast<unsigned char*>(dst), n);
    }

    /// Reads exactly n bytes, or throws naming `what`.
    void
    read(void* dst, std::size_t n, const std::string& what)
    {
        const std::size_t got = read_some(dst, n);
        if (got < n)
            throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path_, "' is truncated: ", what, " needs ",
                                                             std::to_string(n), " bytes, found ", std::to_string(got)}));
    }

    /// Checks that nothing follows the bytes read: for gzip, that the stream ends cleanly (its
    /// CRC-32 and length trailer checked) and no other bytes follow it.
    void
    expect_end(const std::string& what)
    {
        unsigned char extra[256];
        const std::size_t more = gzip_ ? inflate_into(extra, sizeof extra) : copy_into(extra, sizeof extra);
        if (more > 0)
            throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path_, "' holds more data than ", what}));
    }

private:
    void
    fill()
    {
        if (pos_ < have_)
            return;
        have_ = std::fread(in_.data(), 1, in_.size(), file_.get());
        pos_ = 0;
        if (have_ == 0 && std::ferror(file_.get()))
            throw std::runtime_error(tpudsl::detail::concat({"tpudsl: cannot read '", path_, "': ",
                                                             std::strerror(errno)}));
    }

    std::size_t
    copy_into(unsigned char* dst, std::size_t n)
    {
        std::size_t got = 0;
        while (got < n) {
            fill();
            if (have_ == 0)
                break;
            const std::size_t k = std::min(n - got, have_ - pos_);
            std::memcpy(dst + got, in_.data() + pos_, k);
            pos_ += k;
            consumed_ += k;
            got += k;
        }
        return got;
    }

    [[noreturn]] void
    corrupt(const std::string& what) const
    {
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path_, "' is not a valid gzip file: ", what,
                                                         " (at compressed byte ", std::to_string(consumed_), " of ",
                                                         std::to_string(size_), ")"}));
    }

    /// Inflates up to n bytes into dst; stops early only at the clean end of the last member.
    std::size_t
    inflate_into(unsigned char* dst, std::size_t n)
    {
        std::size_t got = 0;
        while (got < n) {
            if (member_done_) {
                fill();
                if (have_ == 0)
                    return got;                             // the clean end of the file
                if (have_ - pos_ < 2 && have_ == in_.size())
                    fill_keep();                            // a member magic split across reads
                if (!(have_ - pos_ >= 2 && in_[pos_] == 0x1f && in_[pos_ + 1] == 0x8b))
                    corrupt(std::to_string(size_ - consumed_) + " bytes of trailing garbage follow the end of the "
                            "gzip stream");
                inflateReset(&z_);
                member_done_ = false;
            }
            fill();
            if (have_ == 0)
                corrupt("the stream is cut off before its end (its CRC-32 and length trailer are missing)");
            z_.next_in = in_.data() + pos_;
            z_.avail_in = static_cast<uInt>(have_ - pos_);
            const std::size_t room = std::min<std::size_t>(n - got, 1u << 30);
            z_.next_out = dst + got;
            z_.avail_out = static_cast<uInt>(room);
            const int r = inflate(&z_, Z_NO_FLUSH);
            const std::size_t used = (have_ - pos_) - z_.avail_in;
            pos_ += used;
            consumed_ += used;
            got += room - z_.avail_out;
            if (r == Z_STREAM_END)
                member_done_ = true;
            else if (r == Z_MEM_ERROR)
                throw std::bad_alloc();
            else if (r == Z_NEED_DICT)
                corrupt("the stream needs a preset dictionary");
            else if (r == Z_DATA_ERROR || r == Z_STREAM_ERROR)
                corrupt(z_.msg ? z_.msg : "corrupt deflate data");
        }
        return got;
    }

    /// Moves the unread bytes to the front and reads more behind them.
    void
    fill_keep()
    {
        const std::size_t left = have_ - pos_;
        std::memmove(in_.data(), in_.data() + pos_, left);
        have_ = left + std::fread(in_.data() + left, 1, in_.size() - left, file_.get());
        pos_ = 0;
    }

    std::string path_;
    std::uint64_t size_;
    struct closer {
        void operator()(std::FILE* f) const noexcept { std::fclose(f); }
    };
    std::unique_ptr<std::FILE, closer> file_;
    std::vector<unsigned char> in_ = std::vector<unsigned char>(std::size_t{1} << 16);
    std::size_t have_ = 0, pos_ = 0;
    std::uint64_t consumed_ = 0;
    bool gzip_ = false, z_open_ = false, member_done_ = false;
    z_stream z_{};
};

inline std::uint32_t
big_endian(const unsigned char* b) noexcept
{
    return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
}

inline std::string
dims_text(const std::vector<std::size_t>& dims)
{
    std::string s;
    for (const auto d : dims)
        s += (s.empty() ? "" : " x ") + std::to_string(d);
    return s.empty() ? "a scalar" : s;
}

} // namespace detail

/// Reads an IDX file of unsigned bytes with `rank` dimensions (1: labels, 3: images; 0: one byte).
inline idx_array
read_idx(const std::string& path, std::size_t rank)
{
    if (rank > 255)
        throw std::invalid_argument(tpudsl::detail::concat({"tpudsl::data::read_idx: rank ", std::to_string(rank),
                                                            " cannot be an IDX rank (one byte of the magic number: at most 255)"}));
    detail::byte_reader in(path);
    unsigned char header[4];
    in.read(header, 4, "the magic number");
    const std::uint32_t magic = detail::big_endian(header);
    const std::uint32_t expected = 0x00000800u | static_cast<std::uint32_t>(rank);
    if (magic != expected) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "bad magic number 0x%08x, expected 0x%08x (unsigned bytes, rank %zu)", magic,
                      expected, rank);
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path, "': ", buf}));
    }
    idx_array a;
    std::uint64_t total = 1;
    bool overflows = false;
    for (std::size_t d = 0; d < rank; ++d) {
        in.read(header, 4, tpudsl::detail::concat({"dimension ", std::to_string(d)}));
        a.dims.push_back(detail::big_endian(header));
        overflows = overflows || __builtin_mul_overflow(total, std::uint64_t{a.dims.back()}, &total);
    }
    if (std::find(a.dims.begin(), a.dims.end(), std::size_t{0}) != a.dims.end()) {
        total = 0;   // an empty array, whatever the other dimensions
        overflows = false;
    }
    const std::string records = rank == 0 ? std::string("its one byte") : std::to_string(a.dims[0]) + " records";
    if (overflows || total > in.most_remaining())
        throw std::runtime_error(
            tpudsl::detail::concat({"tpudsl: '", path, "': its header announces ", detail::dims_text(a.dims), " = ",
                                    (overflows ? std::string("more than 2^64") : std::to_string(total)),
                                    " bytes, more than the file can hold (", std::to_string(in.file_size()), " bytes",
                                    (in.compressed() ? " compressed" : ""), ")"}));
    // Grown as the data arrives: a gzip header may still claim more than the stream really holds.
    constexpr std::uint64_t step = std::uint64_t{1} << 26;
    for (std::uint64_t done = 0; done < total;) {
        const std::uint64_t k = std::min(total - done, std::max(step, done));
        a.bytes.resize(static_cast<std::size_t>(done + k));
        const std::size_t got = in.read_some(a.bytes.data() + done, static_cast<std::size_t>(k));
        done += got;
        if (got < k)
            throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path, "' is truncated: ", records,
                                                             " needs ", std::to_string(total), " bytes, found ",
                                                             std::to_string(done)}));
    }
    in.expect_end(tpudsl::detail::concat({"its header's ", records}));
    return a;
}

/// Returns the first of `names` that exists in `dir`, or throws missing_data_set saying where it
/// looked and how to get the data.
[[gnu::cold]] inline std::string
find_file(const std::string& dir, std::initializer_list<const char*> names, const std::string& how_to_get)
{
    for (const char* n : names) {
        const auto p = std::filesystem::path(dir) / n;
        std::error_code ec;
        if (std::filesystem::exists(p, ec))
            return p.string();
    }
    std::string tried;
    for (const char* n : names)
        tried += std::string(tried.empty() ? "" : ", ") + n;
    throw missing_data_set(tpudsl::detail::concat({"tpudsl: no data set in '", dir, "' (looked for ", tried, "); ",
                                                   how_to_get}));
}

} // namespace tpudsl::data

#endif // !TPUDSL_DATA_IDX_HPP
