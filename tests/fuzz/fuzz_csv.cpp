// libFuzzer harness for the CSV reader (tpudsl::data::read_csv): the input is a file's bytes, the
// first of them choosing the options (bit 0: the first column is the label; bit 1: a header line),
// the rest the file. What a load must do with any input:
//   - succeed for a table of small whole numbers (plain, or whole gzip members: the harness inflates
//     them itself, as fuzz_idx does): lines of decimal digits (at most 6, an optional
//     '-') separated by ',', every line with the same number of fields, a line's one trailing '\r'
//     ignored, lines of only spaces and tabs skipped, the last line's '\n' optional; and give back
//     exactly those numbers, the label column taken out. The harness parses such a table itself;
//   - refuse a file whose lines (blank ones aside) do not all have the same number of fields;
//   - whatever it accepts: rows x columns features, one label per row when asked, every value finite;
//   - refuse anything else with std::runtime_error (or a type derived from it) naming the file;
//   - never crash, hang, throw anything else, or make an allocation larger than 32 bytes per byte of
//     the file plus 1 MiB.
//
// Build and run: as the other harnesses (tests/fuzz/run.sh builds and runs every fuzz_*.cpp).
// run.sh: -max_len=4096
// Seed corpus: tests/fuzz/corpus/csv/, written by tests/fuzz/make_seeds.py.
#include "common.hpp"

#include <tpudsl/data/csv.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fuzz {

const char* const harness = "fuzz_csv";
const std::string input = scratch("input");

/// The file's lines, each without its one trailing '\r', blank ones (only spaces and tabs) left out.
std::vector<std::string_view>
data_lines(std::string_view text)
{
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (line.find_first_not_of(" \t") != std::string_view::npos)
            lines.push_back(line);
    }
    return lines;
}

std::size_t
fields_of(std::string_view line)
{
    std::size_t n = 1;
    for (char c : line)
        n += c == ',';
    return n;
}

/// A field of the strict form (an optional '-', then 1 to 6 digits), or nothing.
std::optional<float>
small_whole(std::string_view f)
{
    const bool negative = !f.empty() && f[0] == '-';
    if (negative)
        f.remove_prefix(1);
    if (f.empty() || f.size() > 6)
        return std::nullopt;
    long v = 0;
    for (char c : f) {
        if (c < '0' || c > '9')
            return std::nullopt;
        v = v * 10 + (c - '0');
    }
    return static_cast<float>(negative ? -v : v);
}

struct table {
    bool strict = false;   // every data line of the strict form, all of one width
    bool ragged = false;   // two data lines of different widths
    std::vector<float> features, labels;
    std::size_t rows = 0;
};

table
parse(const std::vector<std::string_view>& lines, bool label_first)
{
    table t;
    t.strict = !lines.empty();
    for (const std::string_view line : lines) {
        if (fields_of(line) != fields_of(lines[0]))
            t.ragged = true;
        std::size_t column = 0;
        for (std::string_view rest = line;; ++column) {
            const auto comma = rest.find(',');
            const auto v = small_whole(rest.substr(0, comma));
            if (!v)
                t.strict = false;
            else
                (label_first && column == 0 ? t.labels : t.features).push_back(*v);
            if (comma == std::string_view::npos)
                break;
            rest.remove_prefix(comma + 1);
        }
        ++t.rows;
    }
    t.strict = t.strict && !t.ragged;
    return t;
}

} // namespace fuzz

extern "C" int
LLVMFuzzerInitialize(int*, char***)
{
    fuzz::alloc_watch::install();
    fuzz::remove_scratch_files_at_exit();
    return 0;
}

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0)
        return 0;
    const bool label_first = data[0] & 1, header = data[0] & 2;
    fuzz::write_file(fuzz::input, data + 1, size - 1);
    const fuzz::decoded d = fuzz::decode(data + 1, size - 1);
    const bool known = d.clean && !d.too_big;   // what the file holds, as the harness read it
    const std::string_view text(reinterpret_cast<const char*>(d.bytes.data()), known ? d.bytes.size() : 0);
    std::vector<std::string_view> lines = fuzz::data_lines(text);
    if (header && !lines.empty())
        lines.erase(lines.begin());
    const fuzz::table expected = fuzz::parse(lines, label_first);

    tpudsl::data::csv_options options{.header = header};
    if (label_first)
        options.label_column = 0;
    tpudsl::data::csv_table got;
    std::size_t largest = 0;
    const bool loaded = fuzz::loads([&] { got = tpudsl::data::read_csv(fuzz::input, options); }, fuzz::input, largest);
    const std::string what = std::to_string(size - 1) + " bytes" + (d.gzip ? " of gzip" : "") +
                             (known ? ", " + std::to_string(lines.size()) + " data lines" : ", not whole") +
                             (expected.strict ? ", a strict table" : expected.ragged ? ", ragged" : "");
    const std::size_t text_size = known ? d.bytes.size() : d.gzip ? 1032 * size : size;
    fuzz::check_allocation(largest, fuzz::allocation_slack + 32 * text_size, what.c_str());

    if (!loaded) {
        if (expected.strict)
            fuzz::fail("a table of small whole numbers was refused", what);
        return 0;
    }
    if (expected.ragged)
        fuzz::fail("a ragged file was accepted", what);
    if ((known && got.rows != lines.size()) || got.features.size() != got.rows * got.columns ||
        got.labels.size() != (label_first ? got.rows : 0))
        fuzz::fail("the table's sizes disagree", what + ": " + std::to_string(got.rows) + " rows of " +
                                                     std::to_string(got.columns) + ", " +
                                                     std::to_string(got.features.size()) + " features, " +
                                                     std::to_string(got.labels.size()) + " labels");
    for (const float v : got.features)
        if (!std::isfinite(v))
            fuzz::fail("a non-finite feature was accepted", what);
    for (const float v : got.labels)
        if (!std::isfinite(v))
            fuzz::fail("a non-finite label was accepted", what);
    if (expected.strict && (got.features != expected.features || got.labels != expected.labels))
        fuzz::fail("the numbers loaded differ from the file's", what);
    return 0;
}
