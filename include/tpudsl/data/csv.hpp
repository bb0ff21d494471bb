/// @file Reads a table of numbers from a CSV file, plain or gzip-compressed: every field a number, one
/// column optionally the label of its row (as `numpy.loadtxt(path, delimiter=",")` then a column split).
///
///   auto t = tpudsl::data::read_csv("mnist_5k.csv.gz", {.label_column = 784});   // 784 pixels, then the digit
///
/// A file that is not such a table is refused with the file, the line and the column and what was
/// found: a row with another number of fields than the first (ragged), a field that is not a number,
/// or one beyond float's range (3e38 is the largest). Lines may end in "\n" or "\r\n"; blank lines are
/// skipped; spaces around a field are allowed. The file's bytes are streamed: a gzip file is never
/// inflated whole, and its CRC is checked at its end.
#ifndef TPUDSL_DATA_CSV_HPP
#define TPUDSL_DATA_CSV_HPP

#include <tpudsl/data/idx.hpp>
#include <tpudsl/detail/text.hpp>

#include <charconv>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tpudsl::data {

/// How read_csv reads a file.
struct csv_options {
    /// The column, counted from 0, that holds each row's label; unset: every column is a feature.
    std::optional<std::size_t> label_column;
    /// True when the first line names the columns (it is skipped).
    bool header = false;
    char delimiter = ',';
};

/// A table read by read_csv: `rows` rows of `columns` features each (the label column left out).
struct csv_table {
    std::size_t rows = 0;
    std::size_t columns = 0;
    std::vector<float> features;   // rows x columns, row-major
    std::vector<float> labels;     // one per row, when a label column was chosen
};

namespace detail {

/// Parses one CSV field as a finite float (spaces around it and a leading '+' allowed), or throws with
/// its place.
inline float
parse_csv_number(std::string_view field, const std::string& path, std::size_t line, std::size_t column)
{
    auto where = [&] { return "'" + path + "', line " + std::to_string(line) + ", column " + std::to_string(column + 1) + ": "; };
    while (!field.empty() && (field.front() == ' ' || field.front() == '\t'))
        field.remove_prefix(1);
    while (!field.empty() && (field.back() == ' ' || field.back() == '\t'))
        field.remove_suffix(1);
    if (field.empty())
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: ", where(), "an empty field, expected a number"}));
    std::string_view digits = field;
    if (digits.size() > 1 && digits.front() == '+' && digits[1] != '-' && digits[1] != '+')
        digits.remove_prefix(1);
    double v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec == std::errc::result_out_of_range ||
        (ec == std::errc{} && std::isfinite(v) && std::fabs(v) > std::numeric_limits<float>::max()))
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: ", where(), "'", shown(field),
                                                         "' is beyond float's range (at most 3.4e38 in magnitude)"}));
    if (ec != std::errc{} || end != digits.data() + digits.size())
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: ", where(), "'", shown(field), "' is not a number"}));
    if (!std::isfinite(v))
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: ", where(), "'", shown(field),
                                                         "' is not a finite number"}));
    return static_cast<float>(v);
}

} // namespace detail

/// Reads the CSV file at `path` (gzip-compressed when it starts with gzip's magic bytes).
inline csv_table
read_csv(const std::string& path, const csv_options& options = {})
{
    detail::byte_reader in(path);
    csv_table t;
    std::size_t fields = 0;        // per row, the label's included: set by the first row
    std::size_t first_row = 0;     // its line
    std::size_t line_number = 0;
    bool header_pending = options.header;
    std::string carry;             // a line cut by the end of a chunk
    std::vector<char> chunk(1 << 16);

    auto take_line = [&](std::string_view line) {
        ++line_number;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (line.find_first_not_of(" \t") == std::string_view::npos)
            return;   // blank
        if (header_pending) {
            header_pending = false;
            return;
        }
        std::size_t column = 0;
        for (std::size_t begin = 0;; ++column) {
            const std::size_t end = std::min(line.find(options.delimiter, begin), line.size());
            if (fields != 0 && column >= fields)
                throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path, "', line ",
                                                                 std::to_string(line_number), ": more than the ",
                                                                 std::to_string(fields), " fields of line ",
                                                                 std::to_string(first_row), " (a ragged row)"}));
            float v;
            try {
                v = detail::parse_csv_number(line.substr(begin, end - begin), path, line_number, column);
            } catch (const std::runtime_error& e) {
                if (fields != 0 || options.header)
                    throw;
                throw std::runtime_error(std::string(e.what()) + " (if the first line names the columns, read the "
                                         "file with .header = true)");
            }
            if (options.label_column == column)
                t.labels.push_back(v);
            else
                t.features.push_back(v);
            if (end == line.size())
                break;
            begin = end + 1;
        }
        ++column;
        if (fields == 0) {
            fields = column;
            first_row = line_number;
            if (options.label_column && *options.label_column >= fields)
                throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path, "': the label column ",
                                                                 std::to_string(*options.label_column),
                                                                 " (counted from 0) is beyond the ",
                                                                 std::to_string(fields), " fields of line ",
                                                                 std::to_string(line_number)}));
            t.columns = fields - (options.label_column ? 1 : 0);
        } else if (column != fields) {
            throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path, "', line ",
                                                             std::to_string(line_number), ": ",
                                                             std::to_string(column), " fields, but line ",
                                                             std::to_string(first_row), " has ",
                                                             std::to_string(fields), " (a ragged row)"}));
        }
        ++t.rows;
    };

    for (;;) {
        const std::size_t got = in.read_some(chunk.data(), chunk.size());
        if (got == 0)
            break;
        std::string_view rest(chunk.data(), got);
        for (std::size_t nl; (nl = rest.find('\n')) != std::string_view::npos; rest.remove_prefix(nl + 1)) {
            if (carry.empty()) {
                take_line(rest.substr(0, nl));
            } else {
                carry.append(rest.substr(0, nl));
                take_line(carry);
                carry.clear();
            }
        }
        carry.append(rest);
    }
    if (!carry.empty())
        take_line(carry);   // a last line without its newline
    in.expect_end("its table");
    if (t.rows == 0)
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path, "' holds no rows of numbers"}));
    return t;
}

} // namespace tpudsl::data

#endif // !TPUDSL_DATA_CSV_HPP
