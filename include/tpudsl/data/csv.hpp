/// @file Reads a table of numbers from a CSV file, plain or gzip-compressed: every field a number, one
/// column optionally the label of its row (as `numpy.loadtxt(path, delimiter=",")` then a column split).
///
///   auto t = tpudsl::data::read_csv("mnist_5k.csv.gz", {.label_column = 784, .fields = 785});   // 784 pixels, then the digit
///
/// A file that is not such a table is refused with the file, the line and the column and what was
/// found: a row with another number of fields than the first (ragged) or than csv_options::fields, a
/// field that is not a number, or one beyond float's range (3.4e38 is the largest). A number too small
/// for a float reads as float32 reads it, as numpy's and Keras' float32 do: 1e-40 as the nearest
/// subnormal, 1e-50 and 1e-400 as 0 (with their sign). Lines may end in "\n" or "\r\n"; blank lines are
/// skipped; spaces around a field are allowed. The file's bytes are streamed: a gzip file is never
/// inflated whole, and its CRC is checked at its end. A line is never held longer than its bound
/// (csv_options::max_line_bytes): a longer one is refused as soon as it passes it. When the text of a
/// gzip file is refused, the rest of its stream is checked first: a damaged file is reported as
/// zlib's data or CRC error, naming the file, rather than as the garbage it inflates to.
#ifndef TPUDSL_DATA_CSV_HPP
#define TPUDSL_DATA_CSV_HPP

#include <tpudsl/data/idx.hpp>
#include <tpudsl/detail/text.hpp>

#include <algorithm>
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
    /// The number of fields every row holds, its label's included (785 for an MNIST row: 784 pixels,
    /// then the digit); unset: as many as the first row's. A row with more is refused at its extra
    /// field, one with fewer at its end.
    std::optional<std::size_t> fields;
    /// The longest line read, in bytes (its "\n" left out); a longer one is refused before more of it
    /// is held. 0: 64 bytes a field when `fields` is set (a float needs at most 16 digits, its sign,
    /// point and exponent), else default_max_line_bytes.
    std::size_t max_line_bytes = 0;
    /// The most rows read; a file with more is refused at the first past it (so a small gzip file of
    /// rows that inflates without end grows no table past it). 0: no bound.
    std::size_t max_rows = 0;

    /// The bound on a line when neither `fields` nor `max_line_bytes` says otherwise: 1 MiB.
    static constexpr std::size_t default_max_line_bytes = std::size_t{1} << 20;
    /// The bytes a field may take when `fields` sets the bound.
    static constexpr std::size_t bytes_per_field = 64;

    /// The bound on a line these options give.
    [[nodiscard]] std::size_t
    line_bound() const noexcept
    {
        if (max_line_bytes != 0)
            return max_line_bytes;
        if (fields && *fields != 0)
            return std::min(*fields, std::size_t(-1) / bytes_per_field) * bytes_per_field;
        return default_max_line_bytes;
    }
};

/// A table read by read_csv: `rows` rows of `columns` features each (the label column left out).
struct csv_table {
    std::size_t rows = 0;
    std::size_t columns = 0;
    std::vector<float> features;   // rows x columns, row-major
    std::vector<float> labels;     // one per row, when a label column was chosen
};

namespace detail {

/// True when the decimal number `text` (as std::from_chars reads it: sign, digits, point, exponent)
/// is below 1 in magnitude: a number from_chars finds out of double's range underflows then, else it
/// overflows.
[[nodiscard]] inline bool
below_one(std::string_view text) noexcept
{
    std::size_t i = 0;
    if (i < text.size() && (text[i] == '-' || text[i] == '+'))
        ++i;
    bool found = false;
    long long integer_digits = 0, leading_fraction_zeros = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i)
        if (found || text[i] != '0') {
            found = true;
            ++integer_digits;
        }
    if (i < text.size() && text[i] == '.')
        for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i)
            if (!found) {
                if (text[i] == '0')
                    ++leading_fraction_zeros;
                else
                    found = true;
            }
    if (!found)
        return true;   // zero
    const long long order = integer_digits > 0 ? integer_digits - 1 : -(leading_fraction_zeros + 1);
    long long exponent = 0;
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        ++i;
        bool negative = false;
        if (i < text.size() && (text[i] == '-' || text[i] == '+'))
            negative = text[i++] == '-';
        for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i)
            exponent = std::min<long long>(exponent * 10 + (text[i] - '0'), 1LL << 40);   // saturates
        if (negative)
            exponent = -exponent;
    }
    return order + exponent < 0;
}

/// Parses one CSV field as a finite float (spaces around it and a leading '+' allowed; a number too
/// small for a float rounds as float32 rounds it, to a subnormal or a signed 0), or throws with its place.
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
    if (ec == std::errc::result_out_of_range && end == digits.data() + digits.size() && below_one(digits))
        return digits.front() == '-' ? -0.0f : 0.0f;   // too small even for a double: float32's 0, signed
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
    using tpudsl::detail::concat;
    if (options.fields && options.label_column && *options.label_column >= *options.fields)
        throw std::invalid_argument(concat({"tpudsl::data::read_csv: the label column ",
                                            std::to_string(*options.label_column), " (counted from 0) is beyond the ",
                                            std::to_string(*options.fields), " fields of a row (csv_options::fields)"}));
    detail::byte_reader in(path);
    csv_table t;
    std::size_t fields = options.fields.value_or(0);   // per row, the label's included: else set by the first row
    std::size_t first_row = 0;     // the line that set it
    std::size_t line_number = 0;
    bool header_pending = options.header;
    const std::size_t max_line = options.line_bound();
    std::string carry;             // a line cut by the end of a chunk
    std::vector<char> chunk(1 << 16);

    auto fields_of = [&] {
        return first_row ? concat({"the ", std::to_string(fields), " fields of line ", std::to_string(first_row)})
                         : concat({"the ", std::to_string(fields), " fields a row holds (csv_options::fields)"});
    };
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
        if (options.max_rows != 0 && t.rows == options.max_rows)
            throw std::runtime_error(concat({"tpudsl: '", path, "', line ", std::to_string(line_number),
                                             ": more than the ", std::to_string(options.max_rows),
                                             " rows a table may hold here (csv_options::max_rows)"}));
        std::size_t column = 0;
        for (std::size_t begin = 0;; ++column) {
            const std::size_t end = std::min(line.find(options.delimiter, begin), line.size());
            if (fields != 0 && column >= fields)
                throw std::runtime_error(concat({"tpudsl: '", path, "', line ", std::to_string(line_number),
                                                 ": more than ", fields_of(), " (a ragged row)"}));
            float v;
            try {
                v = detail::parse_csv_number(line.substr(begin, end - begin), path, line_number, column);
            } catch (const std::runtime_error& e) {
                if (t.rows != 0 || options.header)
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
        } else if (column != fields) {
            throw std::runtime_error(concat({"tpudsl: '", path, "', line ", std::to_string(line_number), ": ",
                                             std::to_string(column), " fields, but ",
                                             first_row ? concat({"line ", std::to_string(first_row), " has ",
                                                                 std::to_string(fields)})
                                                       : concat({"a row holds ", std::to_string(fields),
                                                                 " (csv_options::fields)"}),
                                             " (a ragged row)"}));
        }
        if (t.rows == 0 && options.label_column && *options.label_column >= fields)
            throw std::runtime_error(concat({"tpudsl: '", path, "': the label column ",
                                             std::to_string(*options.label_column), " (counted from 0) is beyond the ",
                                             std::to_string(fields), " fields of line ", std::to_string(line_number)}));
        t.columns = fields - (options.label_column ? 1 : 0);
        ++t.rows;
    };
    // A line past its bound is refused before more of it is held.
    auto check_length = [&](std::size_t bytes) {
        if (bytes <= max_line)
            return;
        throw std::runtime_error(concat(
            {"tpudsl: '", path, "', line ", std::to_string(line_number + 1), ": longer than ", std::to_string(max_line),
             " bytes, the most a line may hold here (",
             options.max_line_bytes ? std::string("csv_options::max_line_bytes")
             : options.fields       ? concat({std::to_string(csv_options::bytes_per_field), " bytes for each of its ",
                                              std::to_string(*options.fields), " fields"})
                                    : std::string("the default bound; set csv_options::fields or max_line_bytes for "
                                                  "longer rows"),
             "): not a table of numbers"}));
    };
    // Text refused in a gzip file: a damaged stream inflates to garbage before zlib's check fails, so
    // the rest of the stream is checked first and a damage found there is what is reported. The check
    // reads at most 16 MiB more (a stream that inflates without end is refused as the text it gave).
    auto refuse_text = [&](const std::runtime_error& refused) {
        if (in.compressed()) {
            try {
                constexpr std::size_t most = std::size_t{16} << 20;
                for (std::size_t drained = 0; drained < most;) {
                    const std::size_t got = in.read_some(chunk.data(), chunk.size());
                    if (got == 0)
                        break;
                    drained += got;
                }
            } catch (const std::runtime_error& damage) {
                throw std::runtime_error(concat({damage.what(), "; the text inflated before it was refused: ",
                                                 refused.what()}));
            }
        }
        throw refused;
    };

    for (;;) {
        const std::size_t got = in.read_some(chunk.data(), chunk.size());
        if (got == 0)
            break;
        try {
            std::string_view rest(chunk.data(), got);
            for (std::size_t nl; (nl = rest.find('\n')) != std::string_view::npos; rest.remove_prefix(nl + 1)) {
                check_length(carry.size() + nl);
                if (carry.empty()) {
                    take_line(rest.substr(0, nl));
                } else {
                    carry.append(rest.substr(0, nl));
                    take_line(carry);
                    carry.clear();
                }
            }
            check_length(carry.size() + rest.size());
            carry.append(rest);
        } catch (const std::runtime_error& e) {
            refuse_text(e);
        }
    }
    if (!carry.empty())
        take_line(carry);   // a last line without its newline (the stream has ended: nothing left to check)
    in.expect_end("its table");
    if (t.rows == 0)
        throw std::runtime_error(concat({"tpudsl: '", path, "' holds no rows of numbers"}));
    return t;
}

} // namespace tpudsl::data

#endif // !TPUDSL_DATA_CSV_HPP
