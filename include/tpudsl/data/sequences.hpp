/// @file Reads labelled token sequences (Reuters, IMDB) from a plain-text format:
///
///   tpudsl-sequences 1              <- header: format name and version
///   count 8982                      <- the number of samples that follow
///   3<TAB>1 2 2 8 43 10 447 5 ...   <- one sample per line: label, a tab, token ids separated by spaces
///
/// `tools/export_keras_dataset.py` writes Keras' reuters and imdb data sets in it (Keras' own
/// preprocessing: start char 1, OOV char 2, index_from 3, seed 113). Every malformed line raises an
/// exception naming the file, the line and what was expected.
#ifndef TPUDSL_DATA_SEQUENCES_HPP
#define TPUDSL_DATA_SEQUENCES_HPP

#include <tpudsl/data/idx.hpp>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
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
    throw std::runtime_error("tpudsl: '" + path + "', line " + std::to_string(line) + ": " + what);
}

inline std::int64_t
parse_int(std::string_view s, const std::string& path, std::size_t line, const char* what)
{
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || s.empty())
        bad_line(path, line, std::string("expected ") + what + ", found '" + std::string(s) + "'");
    return v;
}
} // namespace detail

/// Reads one file of the format above.
inline sequence_split
read_sequences(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error("tpudsl: cannot open '" + path + "'");
    std::string line;
    std::size_t number = 1;
    if (!std::getline(in, line) || line != "tpudsl-sequences 1")
        detail::bad_line(path, 1, "expected the header 'tpudsl-sequences 1', found '" + line + "'");
    ++number;
    if (!std::getline(in, line) || line.rfind("count ", 0) != 0)
        detail::bad_line(path, 2, "expected 'count N', found '" + line + "'");
    const auto count = detail::parse_int(std::string_view(line).substr(6), path, 2, "a sample count");
    if (count < 0)
        detail::bad_line(path, 2, "negative sample count");
    sequence_split s;
    s.x.reserve(static_cast<std::size_t>(count));
    while (std::getline(in, line)) {
        ++number;
        if (line.empty())
            continue;
        const auto tab = line.find('\t');
        if (tab == std::string::npos)
            detail::bad_line(path, number, "expected 'label<TAB>tokens', found no tab");
        s.y.push_back(static_cast<std::int32_t>(
            detail::parse_int(std::string_view(line).substr(0, tab), path, number, "an integer label")));
        std::vector<std::int32_t> tokens;
        std::string_view rest = std::string_view(line).substr(tab + 1);
        while (!rest.empty()) {
            const auto space = rest.find(' ');
            const auto token = rest.substr(0, space);
            const auto v = detail::parse_int(token, path, number, "a token id");
            if (v < 0 || v > INT32_MAX)
                detail::bad_line(path, number, "token id " + std::to_string(v) + " is outside [0, 2^31)");
            tokens.push_back(static_cast<std::int32_t>(v));
            rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
        }
        s.x.push_back(std::move(tokens));
    }
    if (s.x.size() != static_cast<std::size_t>(count))
        throw std::runtime_error("tpudsl: '" + path + "' announces " + std::to_string(count) + " samples but holds " +
                                 std::to_string(s.x.size()));
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
inline sequence_dataset
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
