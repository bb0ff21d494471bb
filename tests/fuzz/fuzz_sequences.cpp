// libFuzzer harness for the token-sequence reader (tpudsl::data::read_sequences): the input is a
// file's bytes. What a load must do with any input:
//   - succeed for a file of the format: line 1 `tpudsl-sequences 1`, line 2 `count N`, then N samples
//     `label<TAB>id id id` (ids separated by single spaces, none at all after the tab allowed), empty
//     lines skipped, a line's one trailing '\r' (CRLF) ignored, the last line's '\n' optional; labels
//     and ids decimal numbers in [0, 2^31);
//   - give back exactly those samples: x.size() == y.size() == N, each label and id as written. The
//     harness parses the input itself to know them, and checks that writing the result out again in
//     the format gives back the input, less its '\r's and empty lines;
//   - refuse anything else with std::runtime_error (or a type derived from it) naming the file:
//     another header, a count that is not the number of samples, a line without a tab, a number
//     out of range or not a number, an empty id (two spaces, a space before or after the ids), ...
//     Where the format leaves a choice, either answer is right, but an accepted file must still give
//     what it says: numbers with leading zeros, a sign ("+5", "-0"), a line ending in several '\r's;
//   - never crash, hang, throw anything else, or make an allocation larger than 32 bytes per byte of
//     the file plus 1 MiB: a count far beyond what the file could hold is refused before reserving
//     memory for it.
//
// Build and run (clang 19, from the repository root; tests/fuzz/run.sh does both for every harness):
//   clang++-19 -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
//       -Iinclude tests/fuzz/fuzz_sequences.cpp -lz -o fuzz_sequences
//   ./fuzz_sequences -max_total_time=30 -max_len=4096 tests/fuzz/corpus/sequences
// run.sh: -max_len=4096
// Seed corpus: tests/fuzz/corpus/sequences/, written by tests/fuzz/make_seeds.py (Reuters-like,
// CRLF, empty lines, no final newline, count 0; and broken ones: counts too high, too low, huge or
// negative, labels and ids out of range, stray spaces and tabs, a bad header).
#include "common.hpp"

#include <tpudsl/data/sequences.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fuzz {

const char* const harness = "fuzz_sequences";
const std::string input = scratch("input");

/// strict: the format as written; lenient: also what it leaves open (leading zeros, a sign, several
/// '\r's at a line's end). A file strict accepts must load; one lenient refuses must be refused.
enum class reading { strict, lenient };

struct parsed {
    bool ok = false;
    std::string why;
    std::vector<std::vector<std::int32_t>> x;
    std::vector<std::int32_t> y;
};

std::vector<std::string_view>
lines_of(std::string_view text)
{
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        lines.push_back(text.substr(0, nl));
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    }
    return lines;
}

std::string_view
without_cr(std::string_view line, reading how)
{
    if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
    while (how == reading::lenient && !line.empty() && line.back() == '\r')
        line.remove_suffix(1);
    return line;
}

/// A number in [0, most], or -1.
std::int64_t
number(std::string_view s, reading how, std::int64_t most)
{
    bool negative = false;
    if (how == reading::lenient && !s.empty() && (s[0] == '+' || s[0] == '-')) {
        negative = s[0] == '-';
        s.remove_prefix(1);
    }
    if (s.empty() || (how == reading::strict && s.size() > 1 && s[0] == '0'))
        return -1;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9')
            return -1;
        const auto digit = static_cast<std::uint64_t>(c - '0');
        if (v > (static_cast<std::uint64_t>(most) - digit) / 10) // v * 10 + digit > most
            return -1;
        v = v * 10 + digit;
    }
    if (negative && v != 0)
        return -1;
    return static_cast<std::int64_t>(v);
}

parsed
parse(std::string_view text, reading how)
{
    parsed p;
    const auto lines = lines_of(text);
    if (lines.empty() || without_cr(lines[0], how) != "tpudsl-sequences 1") {
        p.why = "no header";
        return p;
    }
    const std::string_view count_line = lines.size() > 1 ? without_cr(lines[1], how) : std::string_view{};
    const std::int64_t count = count_line.substr(0, 6) == "count " ? number(count_line.substr(6), how, INT64_MAX) : -1;
    if (count < 0) {
        p.why = "no count";
        return p;
    }
    for (std::size_t i = 2; i < lines.size(); ++i) {
        const std::string_view line = without_cr(lines[i], how);
        if (line.empty())
            continue;
        const auto tab = line.find('\t');
        if (tab == std::string_view::npos) {
            p.why = "line " + std::to_string(i + 1) + ": no tab";
            return p;
        }
        const std::int64_t label = number(line.substr(0, tab), how, INT32_MAX);
        if (label < 0) {
            p.why = "line " + std::to_string(i + 1) + ": a bad label";
            return p;
        }
        std::vector<std::int32_t> ids;
        for (std::string_view rest = line.substr(tab + 1); !rest.empty();) {
            const auto space = rest.find(' ');
            const std::int64_t id = number(rest.substr(0, space), how, INT32_MAX);
            if (id < 0 || (space != std::string_view::npos && space + 1 == rest.size())) {
                p.why = "line " + std::to_string(i + 1) + ": a bad id";
                return p;
            }
            ids.push_back(static_cast<std::int32_t>(id));
            rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
        }
        p.y.push_back(static_cast<std::int32_t>(label));
        p.x.push_back(std::move(ids));
    }
    if (p.x.size() != static_cast<std::uint64_t>(count)) {
        p.why = "count " + std::to_string(count) + ", " + std::to_string(p.x.size()) + " samples";
        return p;
    }
    p.ok = true;
    return p;
}

/// The input as the format writes it: '\r's at line ends and empty sample lines dropped, every line
/// ended by '\n'.
std::string
normalised(std::string_view text)
{
    std::string out;
    const auto lines = lines_of(text);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string_view line = without_cr(lines[i], reading::strict);
        if (i >= 2 && line.empty())
            continue;
        out.append(line);
        out += '\n';
    }
    return out;
}

std::string
written(const tpudsl::data::sequence_split& s)
{
    std::string out = "tpudsl-sequences 1\ncount " + std::to_string(s.x.size()) + "\n";
    for (std::size_t i = 0; i < s.x.size(); ++i) {
        out += std::to_string(s.y[i]) + "\t";
        for (std::size_t j = 0; j < s.x[i].size(); ++j)
            out += (j ? " " : "") + std::to_string(s.x[i][j]);
        out += '\n';
    }
    return out;
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
    using fuzz::reading;
    fuzz::write_file(fuzz::input, data, size);
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const fuzz::parsed strict = fuzz::parse(text, reading::strict);
    const fuzz::parsed lenient = fuzz::parse(text, reading::lenient);
    if (strict.ok && !lenient.ok)
        fuzz::fail("the harness's own parser is inconsistent", lenient.why);

    tpudsl::data::sequence_split got;
    std::size_t largest = 0;
    const bool loaded = fuzz::loads([&] { got = tpudsl::data::read_sequences(fuzz::input); }, fuzz::input, largest);
    const std::string what = std::to_string(size) + " bytes, " +
                             (strict.ok ? "valid" : lenient.ok ? "valid or not (" + strict.why + ")" : "invalid (" + lenient.why + ")");
    fuzz::check_allocation(largest, fuzz::allocation_slack + 32 * size, what.c_str());

    if (!loaded) {
        if (strict.ok)
            fuzz::fail("a valid file was refused", what);
        return 0;
    }
    if (!lenient.ok)
        fuzz::fail("an invalid file was accepted", what);
    if (got.x.size() != got.y.size())
        fuzz::fail("x and y differ in size", std::to_string(got.x.size()) + " and " + std::to_string(got.y.size()));
    if (got.y != lenient.y)
        fuzz::fail("the labels loaded differ from the file's", what);
    if (got.x != lenient.x)
        fuzz::fail("the token ids loaded differ from the file's", what);
    if (strict.ok && fuzz::written(got) != fuzz::normalised(text))
        fuzz::fail("the samples loaded, written out again, differ from the file", what);
    return 0;
}
