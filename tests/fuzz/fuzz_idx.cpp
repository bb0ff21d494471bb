// libFuzzer harness for the IDX loader (tpudsl::data::read_idx): the input is a file's bytes, plain
// or gzip, read with rank 0, 1 and 3 and with the rank its magic number names. What a load must do
// with any input:
//   - succeed only for an IDX file of unsigned bytes of that rank: the magic 0x00000800 | rank, then
//     `rank` big-endian u32 dimensions, then exactly product(dims) bytes (one for rank 0), nothing
//     after them; a file that starts with 1f 8b is gzip and must be one or more whole gzip members
//     (valid deflate data, CRC-32 and size trailer) with nothing after the last, and what they
//     decompress to must be such a file;
//   - give back exactly that: dims.size() == rank, the dimensions of the header, and the bytes after
//     the header. The harness decompresses the input itself (zlib's inflate, member by member,
//     requiring each member's clean end) to know what they are;
//   - otherwise throw std::runtime_error (or a type derived from it) naming the file;
//   - never crash, hang, throw anything else, or make an allocation much larger than the data present:
//     one allocation may take twice the file and its decompressed bytes together, plus 1 MiB for
//     buffers, plus for gzip the most its compressed bytes could inflate to (deflate's 1032:1), so a
//     loader may size a gzip file's data by what it could hold; a header announcing gigabytes in a
//     file of 100 bytes is refused before allocating them.
//
// Build and run (clang 19, from the repository root; tests/fuzz/run.sh does both for every harness):
//   clang++-19 -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
//       -Iinclude tests/fuzz/fuzz_idx.cpp -lz -o fuzz_idx
//   ./fuzz_idx -max_total_time=30 -max_len=16384 tests/fuzz/corpus/idx
// run.sh: -max_len=16384
// A custom mutator (LLVMFuzzerCustomMutator below) mutates gzip inputs inside their compression too.
// Seed corpus: tests/fuzz/corpus/idx/, written by tests/fuzz/make_seeds.py (plain and gzip label and
// image files, rank 0, a multi-member gzip, and broken ones: truncated, trailing bytes, a bad CRC).
#include "common.hpp"

#include <tpudsl/data/idx.hpp>

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace fuzz {

const char* const harness = "fuzz_idx";
const std::string input = scratch("input");

std::uint32_t
be32(const std::uint8_t* p)
{
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

/// The array `bytes` holds as an IDX file of `rank`, if it is one.
bool
expected(const std::vector<std::uint8_t>& bytes, std::size_t rank, tpudsl::data::idx_array& out)
{
    const std::size_t header = 4 + 4 * rank;
    if (bytes.size() < header || be32(bytes.data()) != (0x800u | rank))
        return false;
    // the product of the dimensions, saturated at 2^64 (a later 0 still makes it 0)
    constexpr unsigned __int128 saturated = static_cast<unsigned __int128>(1) << 64;
    unsigned __int128 count = 1;
    out.dims.clear();
    for (std::size_t d = 0; d < rank; ++d) {
        out.dims.push_back(be32(bytes.data() + 4 + 4 * d));
        count *= out.dims.back();
        if (count > saturated)
            count = saturated;
    }
    if (count != bytes.size() - header)
        return false;
    out.bytes.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
    return true;
}

std::string
describe(const decoded& d, std::size_t rank, std::size_t size)
{
    return "rank " + std::to_string(rank) + ", " + std::to_string(size) + " bytes in, " +
           (d.gzip ? std::string(d.clean ? "whole gzip members" : "broken gzip") + " of " +
                         std::to_string(d.bytes.size()) + " bytes"
                   : "plain");
}

void
check(std::size_t size, const decoded& d, std::size_t rank)
{
    tpudsl::data::idx_array want;
    const bool valid = d.clean && expected(d.bytes, rank, want);
    tpudsl::data::idx_array got;
    std::size_t largest = 0;
    const bool loaded = loads([&] { got = tpudsl::data::read_idx(input, rank); }, input, largest);
    const std::size_t could_inflate_to = d.gzip ? 1032 * size : 0;
    check_allocation(largest, allocation_slack + 2 * (size + d.bytes.size()) + could_inflate_to,
                     describe(d, rank, size).c_str());
    if (loaded && !valid)
        fail("a file that is not an IDX file of this rank was accepted", describe(d, rank, size));
    if (!loaded && valid)
        fail("a valid IDX file was refused", describe(d, rank, size));
    if (!loaded)
        return;
    if (got.dims != want.dims)
        fail("the dimensions loaded differ from the file's", describe(d, rank, size));
    if (got.bytes != want.bytes)
        fail("the bytes loaded differ from the file's", describe(d, rank, size) + ", " +
                                                             std::to_string(got.bytes.size()) + " loaded");
}

/// `bytes` as gzip members split at `cuts` (sorted offsets), at compression `level`.
std::vector<std::uint8_t>
gzip(const std::vector<std::uint8_t>& bytes, std::vector<std::size_t> cuts, int level)
{
    std::vector<std::uint8_t> out;
    cuts.push_back(bytes.size());
    std::size_t from = 0;
    for (std::size_t to : cuts) {
        z_stream z{};
        if (deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            fail("deflateInit2 failed");
        std::vector<std::uint8_t> member(deflateBound(&z, static_cast<uLong>(to - from)) + 64);
        z.next_in = const_cast<Bytef*>(bytes.data() + from);
        z.avail_in = static_cast<uInt>(to - from);
        z.next_out = member.data();
        z.avail_out = static_cast<uInt>(member.size());
        if (deflate(&z, Z_FINISH) != Z_STREAM_END)
            fail("deflate did not finish");
        out.insert(out.end(), member.begin(), member.begin() + static_cast<std::ptrdiff_t>(z.total_out));
        deflateEnd(&z);
        from = to;
    }
    return out;
}

} // namespace fuzz

extern "C" std::size_t
LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

/// Mutates half the gzip inputs (and a few plain ones) inside: decompressed, mutated as bytes, and
/// compressed again as one to three members at a random level, now and then cut short or followed by
/// a few bytes; everything else as libFuzzer does. Without it almost every mutant of a gzip seed is a
/// broken stream, and the IDX checks behind a valid stream would rarely be reached.
extern "C" std::size_t
LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned int seed)
{
    std::minstd_rand rng(seed);
    const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    if ((gzip && rng() % 2 == 0) || (!gzip && rng() % 16 == 0)) {
        const fuzz::decoded d = fuzz::decode(data, size);
        if (d.bytes.size() <= 4 * max_size) {
            std::vector<std::uint8_t> plain = d.bytes;
            if (plain.empty())
                plain.push_back(0);
            const std::size_t used = plain.size(), room = std::max<std::size_t>(used * 2, 64);
            plain.resize(room);
            plain.resize(LLVMFuzzerMutate(plain.data(), used, room));
            std::vector<std::size_t> cuts;
            for (unsigned k = rng() % 3; k > 0 && !plain.empty(); --k)
                cuts.push_back(rng() % (plain.size() + 1));
            std::sort(cuts.begin(), cuts.end());
            std::vector<std::uint8_t> out = fuzz::gzip(plain, cuts, static_cast<int>(rng() % 10));
            switch (rng() % 16) {
            case 0: // cut short
                out.resize(out.size() - std::min<std::size_t>(out.size(), 1 + rng() % 12));
                break;
            case 1: // a few bytes after the last member
                for (unsigned k = 1 + rng() % 4; k > 0; --k)
                    out.push_back(static_cast<std::uint8_t>(rng() % 3 == 0 ? 0 : rng()));
                break;
            default:
                break;
            }
            if (out.size() <= max_size) {
                std::copy(out.begin(), out.end(), data);
                return out.size();
            }
        }
    }
    return LLVMFuzzerMutate(data, size, max_size);
}

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
    fuzz::write_file(fuzz::input, data, size);
    const fuzz::decoded d = fuzz::decode(data, size);
    if (d.too_big) // more than this harness will decompress to compare (never with -max_len=16384)
        return 0;
    std::vector<std::size_t> ranks = {0, 1, 3};
    if (d.bytes.size() >= 4 && d.bytes[0] == 0 && d.bytes[1] == 0 && d.bytes[2] == 8 &&
        std::find(ranks.begin(), ranks.end(), d.bytes[3]) == ranks.end())
        ranks.push_back(d.bytes[3]);
    for (std::size_t rank : ranks)
        fuzz::check(size, d, rank);
    return 0;
}
