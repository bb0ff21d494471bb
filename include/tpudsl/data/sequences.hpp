/// @file Reads labelled token sequences (Reuters, IMDB) from a plain-text format:
///
///   tpudsl-sequences 1              <- header: format name and version
///   count 8982                      <- the number of samples that follow
///   3<TAB>1 2 2 8 43 10 447 5 ...   <- one sample per line: label, a tab, token ids separated by spaces
///
/// `tools/export_keras_dataset.py` writes Keras' reuters and imdb data sets in it (Keras' own
/// preprocessing: start char 1, OOV char 2, index_from 3, seed 113). Every malformed line raises an
/// exception naming the file, the line and what was expected (the text found shown with control
/// characters as \xHH).
#ifndef TPUDSL_DATA_SEQUENCES_HPP
#define TPUDSL_DATA_SEQUENCES_HPP

#include <tpudsl/data/idx.hpp>
#include <tpudsl/detail/text.hpp>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <istream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tpudsl::data {

struct sequence_split {
    std::vector<std::vector<std::int32_t>> x;
    std::vector<std::int32_t> y;
};

struct sequence_dataset {
    sequence_split train, test;
};

namespace detail {
[[noreturn]] inline void
bad_line(const std::string& path, std::size_t line, const std::string& what)
{
    throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path, "', line ", std::to_string(line), ": ", what}));
}

inline std::int64_t
parse_int(std::string_view s, const std::string& path, std::size_t line, const char* what)
{
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range)
        bad_line(path, line, tpudsl::detail::concat({what, " '", shown(s), "' does not fit in 64 bits"}));
    if (ec != std::errc{} || end != s.data() + s.size() || s.empty())
        bad_line(path, line, tpudsl::detail::concat({"expected ", what, ", found '", shown(s), "'"}));
    return v;
}

/// One line without its end: "\n" or "\r\n" (a file written on Windows reads the same).
inline bool
next_line(std::istream& in, std::string& line)
{
    if (!std::getline(in, line))
        return false;
    if (!line.empty() && line.back() == '\r')
        line.pop_back();
    return true;
}
} // namespace detail

/// Reads one file of the format above. Line ends may be "\n" or "\r\n"; labels and token ids must
/// lie in [0, 2^31) (read as 64-bit numbers first, never truncated).
inline sequence_split
read_sequences(const std::string& path)
{
    const std::uint64_t size = detail::regular_file_size(path);
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: cannot open '", path, "'"}));
    std::string line;
    std::size_t number = 1;
    if (!detail::next_line(in, line) || line != "tpudsl-sequences 1")
        detail::bad_line(path, 1, tpudsl::detail::concat({"expected the header 'tpudsl-sequences 1', found '",
                                                          detail::shown(line), "'"}));
    ++number;
    if (!detail::next_line(in, line) || line.rfind("count ", 0) != 0)
        detail::bad_line(path, 2, tpudsl::detail::concat({"expected 'count N', found '", detail::shown(line), "'"}));
    const auto count = detail::parse_int(std::string_view(line).substr(6), path, 2, "a sample count");
    if (count < 0)
        detail::bad_line(path, 2, tpudsl::detail::concat({"negative sample count ", std::to_string(count)}));
    // Each sample takes at least three bytes ("label<TAB>" and a line end, but the last): a count
    // beyond that is a broken header, refused before anything is reserved for it.
    const auto pos = static_cast<std::uint64_t>(std::max<std::streamoff>(0, in.tellg()));
    const std::uint64_t most = (size - std::min(size, pos) + 1) / 3;
    if (static_cast<std::uint64_t>(count) > most)
        detail::bad_line(path, 2, tpudsl::detail::concat({"the header announces ", std::to_string(count),
                                                          " samples, but the ", std::to_string(size),
                                                          "-byte file can hold at most ", std::to_string(most)}));
    sequence_split s;
    const auto reserved = static_cast<std::size_t>(std::min<std::int64_t>(count, 1 << 16));
    s.x.reserve(reserved);
    s.y.reserve(reserved);
    while (detail::next_line(in, line)) {
        ++number;
        if (line.empty())
            continue;
        const auto tab = line.find('\t');
        if (tab == std::string::npos)
            detail::bad_line(path, number, tpudsl::detail::concat({"expected 'label<TAB>tokens', found no tab in '",
                                                                   detail::shown(line), "'"}));
        const auto label = detail::parse_int(std::string_view(line).substr(0, tab), path, number, "an integer label");
        if (label < 0 || label > INT32_MAX)
            detail::bad_line(path, number, tpudsl::detail::concat({"label ", std::to_string(label),
                                                                   " is outside [0, 2^31)"}));
        s.y.push_back(static_cast<std::int32_t>(label));
        std::vector<std::int32_t> tokens;
        std::string_view rest = std::string_view(line).substr(tab + 1);
        while (!rest.empty()) {
            const auto space = rest.find(' ');
            const auto token = rest.substr(0, space);
            const auto v = detail::parse_int(token, path, number, "a token id");
            if (v < 0 || v > INT32_MAX)
                detail::bad_line(path, number, tpudsl::detail::concat({"token id ", std::to_string(v),
                                                                       " is outside [0, 2^31)"}));
            tokens.push_back(static_cast<std::int32_t>(v));
            rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
            if (space != std::string_view::npos && rest.empty())
                detail::bad_line(path, number, "expected a token id after the last space, found the end of the line");
        }
        s.x.push_back(std::move(tokens));
    }
    if (in.bad())
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: cannot read '", path, "' to its end"}));
    if (s.x.size() != static_cast<std::size_t>(count))
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path, "' announces ", std::to_string(count),
                                                         " samples but holds ", std::to_string(s.x.size())}));
    return s;
}

namespace reuters {

/// Where the data is looked for: $TPUDSL_REUTERS_DIR, else ./reuters.
inline std::string
default_directory()
{
    if (const char* env = std::getenv("TPUDSL_REUTERS_DIR"); env && *env)
        return env;
    return "reuters";
}

/// `reuters.load_data()`: reuters_train.txt and reuters_test.txt from `dir`.
[[gnu::cold]] inline sequence_dataset
load_data(const std::string& dir = default_directory())
{
    const std::string how = "export it with tools/export_keras_dataset.py reuters DIR (needs Keras) and point "
                            "TPUDSL_REUTERS_DIR (or --data) at DIR";
    return {read_sequences(find_file(dir, {"reuters_train.txt"}, how)),
            read_sequences(find_file(dir, {"reuters_test.txt"}, how))};
}

} // namespace reuters

} // namespace tpudsl::data

#endif // !TPUDSL_DATA_SEQUENCES_HPP
