// libFuzzer harness for the weights loader (tpudsl::load_weights): the input is a file's bytes, loaded
// as the weights of a small fixed model. What a load must do with any input:
//   - succeed only for a file that save_weights would write: saving the loaded weights again gives
//     the input byte for byte (so nothing in the file is ignored and nothing is invented);
//   - otherwise throw std::runtime_error (std::system_error included) naming the file, and leave
//     the weights as they were;
//   - never crash, hang, allocate beyond the model's size, or throw anything else.
//
// Build and run (clang 19, from the repository root):
//   clang++-19 -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
//       -Iinclude tests/fuzz/fuzz_weights.cpp -lz -o fuzz_weights
//   ./fuzz_weights -max_total_time=30 tests/fuzz/corpus/weights
// Seed corpus: tests/fuzz/corpus/weights/, written by this file built with TPUDSL_FUZZ_WRITE_SEEDS
// (GCC):
//   g++ -std=c++20 -DTPUDSL_FUZZ_WRITE_SEEDS -Iinclude tests/fuzz/fuzz_weights.cpp -lz -o write_seeds
//   ./write_seeds tests/fuzz/corpus/weights
#include <tpudsl/io/weights.hpp>

#include "common.hpp"
#include "models.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace fuzz {

const char* const harness = "fuzz_weights";

} // namespace fuzz

#ifndef TPUDSL_FUZZ_WRITE_SEEDS

namespace fuzz {
const std::string input = scratch("input"), again = scratch("again");
} // namespace fuzz

extern "C" int
LLVMFuzzerInitialize(int*, char***)
{
    fuzz::remove_scratch_files_at_exit();
    return 0;
}

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using fuzz::again;
    using fuzz::input;
    fuzz::write_file(input, data, size);

    // weights that a failed load must leave as they are: a NaN with a payload no file is likely to hold
    constexpr std::uint32_t sentinel_bits = 0x7fc0'5a5aU;
    float sentinel;
    std::memcpy(&sentinel, &sentinel_bits, 4);
    std::vector<float> params(fuzz::model::param_buffer_size, sentinel);

    bool loaded = false;
    try {
        tpudsl::load_weights<fuzz::model>(input, params.data());
        loaded = true;
    } catch (const std::runtime_error& e) {
        if (std::string(e.what()).find("'" + input + "'") == std::string::npos)
            fuzz::fail("an error that does not name the file", e.what());
        for (float p : params)
            if (std::memcmp(&p, &sentinel, 4) != 0)
                fuzz::fail("a refused file changed the weights", e.what());
    }
    if (loaded) {
        tpudsl::save_weights<fuzz::model>(again, params.data());
        const std::vector<std::uint8_t> saved = fuzz::read_file(again);
        if (saved.size() != size || std::memcmp(saved.data(), data, size) != 0)
            fuzz::fail("a file was accepted, but its weights saved again differ from it",
                       std::to_string(size) + " bytes in, " + std::to_string(saved.size()) + " bytes out");
    }
    return 0;
}

#else   // the seed corpus, written by the library

#include <tpudsl/tpudsl.hpp>

#include <cmath>
#include <filesystem>
#include <limits>

namespace {
using Real = fuzz::model;

/// Another model's file, whose header must be refused.
using Other = tpudsl::Sequential<tpudsl::Input<tpudsl::Shape<2>>, tpudsl::Dense<2>>;

void
put(const std::filesystem::path& path, std::vector<std::uint8_t> bytes)
{
    fuzz::write_file(path.string(), bytes.data(), bytes.size());
}
} // namespace

int
main(int argc, char** argv)
{
    namespace fs = std::filesystem;
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <corpus directory>\n", argv[0]);
        return 2;
    }
    const fs::path dir = argv[1];
    fs::create_directories(dir);
    std::vector<float> w(Real::param_buffer_size, 0.0f);

    tpudsl::save_weights<Real>((dir / "valid_zeros").string(), w.data());
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = static_cast<float>(i) * 0.25f - 3.0f;
    tpudsl::save_weights<Real>((dir / "valid_pattern").string(), w.data());
    const std::vector<std::uint8_t> valid = fuzz::read_file((dir / "valid_pattern").string());
    w[0] = std::numeric_limits<float>::max();
    w[1] = std::numeric_limits<float>::lowest();
    w[2] = -0.0f;
    w[3] = std::numeric_limits<float>::denorm_min();
    tpudsl::save_weights<Real>((dir / "valid_specials").string(), w.data());
    // a NaN and an infinity with the checksum made right: refused for the values, not the checksum
    auto nonfinite = valid;
    const std::uint32_t nan_bits = 0x7fc00000U, inf_bits = 0x7f800000U;
    for (int b = 0; b < 4; ++b) {
        nonfinite[tpudsl::detail::weights_header_bytes + static_cast<std::size_t>(b)] =
            static_cast<std::uint8_t>(nan_bits >> (8 * b));
        nonfinite[tpudsl::detail::weights_header_bytes + 4 + static_cast<std::size_t>(b)] =
            static_cast<std::uint8_t>(inf_bits >> (8 * b));
    }
    const std::size_t floats = 4 * Real::param_buffer_size;
    tpudsl::detail::put_u64(nonfinite.data() + tpudsl::detail::weights_header_bytes + floats,
                            tpudsl::detail::fnv1a(tpudsl::detail::fnv1a_offset,
                                                  nonfinite.data() + tpudsl::detail::weights_header_bytes, floats));
    put(dir / "nonfinite", nonfinite);
    std::vector<float> o(Other::param_buffer_size, 1.0f);
    tpudsl::save_weights<Other>((dir / "other_model").string(), o.data());

    for (std::size_t cut : {0, 5, 8, 20, 32, 100, 288, 295})
        put(dir / ("truncated_" + std::to_string(cut)), {valid.begin(), valid.begin() + static_cast<long>(cut)});
    // one flipped bit in the magic, the count, the buffer size, the fingerprint, a float, the checksum
    for (std::size_t at : {3, 9, 17, 30, 100, 290}) {
        auto b = valid;
        b[at] ^= 0x10;
        put(dir / ("bitflip_" + std::to_string(at)), b);
    }
    auto longer = valid;
    for (char c : std::string("junk"))
        longer.push_back(static_cast<std::uint8_t>(c));
    put(dir / "trailing_bytes", longer);
    return 0;
}

#endif
