// libFuzzer harness for the FreeDict reader (tpudsl::data::freedict::read): the input is a dictionary's
// index, a NUL byte, then its text (plain, or gzip as dictzip writes it). What a read must do with any
// input:
//   - succeed or refuse with std::runtime_error (or a type derived from it) naming the index or the text
//     file: an index line without its three tab-separated fields, a number that is not dictd's base 64
//     or has more than 10 digits, an entry past the text's end, an entry without a headword line and a
//     translation, a text that is not whole gzip;
//   - when it succeeds, give at most one entry per index line (the 00-database ones skipped), each with
//     a headword and translations that are not empty, hold no line break, and no translation a comma
//     or a space at either end;
//   - never crash, hang, throw anything else, or make an allocation larger than 32 bytes per byte of
//     the input and of its text once decompressed, plus 1 MiB.
//
// Build and run as every harness (tests/fuzz/run.sh builds and runs them all):
//   clang++-19 -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
//       -Iinclude tests/fuzz/fuzz_freedict.cpp -lz -o fuzz_freedict
//   ./fuzz_freedict -max_total_time=30 -max_len=4096 tests/fuzz/corpus/freedict
// run.sh: -max_len=4096
// Seed corpus: tests/fuzz/corpus/freedict/, written by tests/fuzz/make_seeds.py (a small dictionary,
// plain and gzip, the first entries of Debian's eng-spa; broken indexes and texts).
#include "common.hpp"

#include <tpudsl/data/freedict.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fuzz {

const char* const harness = "fuzz_freedict";
const std::string index_file = scratch("index");
const std::string text_file = scratch("dict");

bool
well_formed(std::string_view s, bool translation)
{
    if (s.empty() || s.find('\n') != std::string_view::npos)
        return false;
    if (!translation)
        return true;
    return s.find(',') == std::string_view::npos && s.front() != ' ' && s.back() != ' ' && s.front() != '\t' &&
           s.back() != '\t';
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
    const auto* nul = std::find(data, data + size, std::uint8_t{0});
    const std::size_t index_size = static_cast<std::size_t>(nul - data);
    const std::size_t text_at = std::min(size, index_size + 1);
    fuzz::write_file(fuzz::index_file, data, index_size);
    fuzz::write_file(fuzz::text_file, data + text_at, size - text_at);
    const fuzz::decoded text = fuzz::decode(data + text_at, size - text_at);
    const std::string what = std::to_string(index_size) + " bytes of index, " + std::to_string(size - text_at) +
                             " of text (" + std::to_string(text.bytes.size()) + " decompressed)";

    std::vector<tpudsl::data::dictionary_entry> got;
    std::size_t largest = 0;
    const bool loaded = fuzz::loads([&] { got = tpudsl::data::freedict::read(fuzz::index_file, fuzz::text_file); },
                                    {fuzz::index_file, fuzz::text_file}, largest);
    fuzz::check_allocation(largest, fuzz::allocation_slack + 32 * (size + text.bytes.size()), what.c_str());
    if (!loaded)
        return 0;
    if (!text.clean)
        fuzz::fail("a text that is not whole gzip was accepted", what);
    const std::size_t lines = static_cast<std::size_t>(std::count(data, data + index_size, std::uint8_t{'\n'})) + 1;
    if (got.size() > lines)
        fuzz::fail("more entries than index lines", what);
    for (const auto& e : got) {
        if (!fuzz::well_formed(e.headword, false))
            fuzz::fail("an empty headword, or one with a line break", what);
        if (e.translations.empty())
            fuzz::fail("an entry without a translation", what);
        for (const auto& t : e.translations)
            if (!fuzz::well_formed(t, true))
                fuzz::fail("a translation empty, with a line break or a comma, or not trimmed", what);
    }
    return 0;
}
