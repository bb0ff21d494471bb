// libFuzzer harness for the CIFAR-10 batch reader (tpudsl::data::cifar10::read_batch): the input is a
// batch file's bytes, appended to a split that already holds one image. What a load must do with any
// input:
//   - succeed only for N >= 1 whole records of 3,073 bytes (a label 0..9, then the 1,024 red, 1,024
//     green and 1,024 blue bytes of a 32x32 image), nothing more or less;
//   - then append exactly them: count, labels and images grow by N, the image already there is kept,
//     and image byte p * 3 + c (pixel p, channel c: channels-last) is record byte 1 + c * 1024 + p;
//   - otherwise throw std::runtime_error (or a type derived from it) naming the file, and leave the
//     split as it was (count, rows, cols, images and labels): a caller that catches the error keeps
//     a usable split (see `refusal_keeps_split` below);
//   - never crash, hang, throw anything else, or make an allocation larger than the file plus the
//     split's own bytes (twice, for growth) plus 1 MiB.
//
// Build and run (clang 19, from the repository root; tests/fuzz/run.sh does both for every harness):
//   clang++-19 -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
//       -Iinclude tests/fuzz/fuzz_cifar10.cpp -lz -o fuzz_cifar10
//   ./fuzz_cifar10 -max_total_time=30 -max_len=12292 tests/fuzz/corpus/cifar10
// run.sh: -max_len=12292
// Seed corpus: tests/fuzz/corpus/cifar10/, written by tests/fuzz/make_seeds.py (one and two records,
// a label of 10 in the first and of 255 in the second record, a byte short or long, a lone label,
// an empty file).
#include "common.hpp"

#include <tpudsl/data/cifar10.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace fuzz {

const char* const harness = "fuzz_cifar10";
const std::string input = scratch("input");

/// Whether a refused file must leave the split untouched (not only its count): set to false to
/// check only the count and the image already there.
inline constexpr bool refusal_keeps_split = true;

inline constexpr std::size_t record = 3073, image = 3072;

/// The split a batch is appended to: one image already there, label 7.
tpudsl::data::image_split
before()
{
    tpudsl::data::image_split s;
    s.count = 1;
    s.rows = s.cols = 32;
    s.images.resize(image);
    for (std::size_t i = 0; i < image; ++i)
        s.images[i] = static_cast<std::uint8_t>(i * 31 + 5);
    s.labels = {7};
    return s;
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
    using fuzz::image;
    using fuzz::record;
    fuzz::write_file(fuzz::input, data, size);

    const std::size_t n = size / record;
    bool valid = size > 0 && size % record == 0;
    for (std::size_t r = 0; valid && r < n; ++r)
        valid = data[r * record] <= 9;

    const tpudsl::data::image_split old = fuzz::before();
    tpudsl::data::image_split split = old;
    std::size_t largest = 0;
    const bool loaded =
        fuzz::loads([&] { tpudsl::data::cifar10::read_batch(fuzz::input, split); }, fuzz::input, largest);
    const std::string what = std::to_string(size) + " bytes, " + (valid ? "valid" : "invalid");
    fuzz::check_allocation(largest, fuzz::allocation_slack + 2 * (size + old.images.size()), what.c_str());

    if (!loaded) {
        if (valid)
            fuzz::fail("a valid batch was refused", what);
        if (split.count != old.count)
            fuzz::fail("a refused batch changed the split's count", what + ", count " + std::to_string(split.count));
        if (split.images.size() < image || std::memcmp(split.images.data(), old.images.data(), image) != 0 ||
            split.labels.empty() || split.labels[0] != old.labels[0])
            fuzz::fail("a refused batch changed the image already in the split", what);
        if (fuzz::refusal_keeps_split && (split.rows != old.rows || split.cols != old.cols ||
                                          split.images != old.images || split.labels != old.labels))
            fuzz::fail("a refused batch left the split changed", what + ": " + std::to_string(split.images.size()) +
                                                                   " image bytes and " +
                                                                   std::to_string(split.labels.size()) +
                                                                   " labels for a count of " +
                                                                   std::to_string(split.count));
        return 0;
    }
    if (!valid)
        fuzz::fail("an invalid batch was accepted", what);
    if (split.count != 1 + n || split.rows != 32 || split.cols != 32 || split.images.size() != (1 + n) * image ||
        split.labels.size() != 1 + n)
        fuzz::fail("the split's sizes do not match the batch",
                   what + ": count " + std::to_string(split.count) + ", " + std::to_string(split.images.size()) +
                       " image bytes, " + std::to_string(split.labels.size()) + " labels");
    if (std::memcmp(split.images.data(), old.images.data(), image) != 0 || split.labels[0] != old.labels[0])
        fuzz::fail("appending changed the image already in the split", what);
    for (std::size_t r = 0; r < n; ++r) {
        const std::uint8_t* rec = data + r * record;
        const std::uint8_t* img = split.images.data() + (1 + r) * image;
        if (split.labels[1 + r] != rec[0])
            fuzz::fail("a label differs from the file's", "record " + std::to_string(r));
        for (std::size_t c = 0; c < 3; ++c)     // channel c of the record, a plane of 1,024 bytes
            for (std::size_t p = 0; p < 1024; ++p)
                if (img[p * 3 + c] != rec[1 + c * 1024 + p])
                    fuzz::fail("an image byte differs from the file's",
                               "record " + std::to_string(r) + ", pixel " + std::to_string(p) + ", channel " +
                                   std::to_string(c));
    }
    return 0;
}
