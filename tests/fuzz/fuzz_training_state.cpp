// libFuzzer harness for the training-state reader of BackupAndRestore (detail::read_training_state):
// the input is a mode byte and a backup file's bytes, read as the state of a small real model (models.hpp). Mode
// (the first byte) even: the bytes are the file; odd: the harness appends the FNV-1a checksum the file
// needs, so that mutations reach the parser behind the checksum. What a read must do with any file:
//   - succeed only for a file that write_training_state would write: writing the state read gives the
//     input byte for byte (so nothing in the file is ignored and nothing is invented); a file of the
//     first format, "TPUDSLB1", gives the same bytes in the current one (its epochs 0, unknown);
//   - otherwise throw std::runtime_error (std::system_error included) naming the file;
//   - never crash, hang, or throw anything else.
//
// Build and run (clang 19, from the repository root):
//   clang++-19 -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
//       -Iinclude tests/fuzz/fuzz_training_state.cpp -lz -o fuzz_training_state
//   ./fuzz_training_state -max_total_time=30 tests/fuzz/corpus/training_state
// Seed corpus: tests/fuzz/corpus/training_state/, written by this file built with TPUDSL_FUZZ_WRITE_SEEDS
// (GCC):
//   g++ -std=c++20 -DTPUDSL_FUZZ_WRITE_SEEDS -Iinclude tests/fuzz/fuzz_training_state.cpp -lz -o write_seeds
//   ./write_seeds tests/fuzz/corpus/training_state
#include <tpudsl/io/training_state.hpp>

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

const char* const harness = "fuzz_training_state";

/// The most slot floats a state of this model holds (4 slots, as the model's own check allows).
constexpr std::size_t max_slot_floats = 4 * model::param_buffer_size;

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
    if (size == 0)
        return 0;
    std::vector<std::uint8_t> file(data + 1, data + size);
    if ((data[0] & 1) != 0 && file.size() >= 8) {
        const std::uint64_t sum = tpudsl::detail::fnv1a(tpudsl::detail::fnv1a_offset, file.data() + 8, file.size() - 8);
        unsigned char b[8];
        tpudsl::detail::put_u64(b, sum);
        file.insert(file.end(), b, b + 8);
    }
    fuzz::write_file(input, file.data(), file.size());
    tpudsl::detail::training_state s;
    try {
        s = tpudsl::detail::read_training_state(input, tpudsl::detail::state_layout::of<fuzz::model>(),
                                                fuzz::max_slot_floats);
    } catch (const std::runtime_error& e) {
        if (std::string(e.what()).find("'" + input + "'") == std::string::npos)
            fuzz::fail("an error that does not name the file", e.what());
        return 0;
    }
    if (s.params.size() != fuzz::model::param_buffer_size || s.slots.size() > fuzz::max_slot_floats)
        fuzz::fail("a state was accepted with buffers of the wrong size");
    tpudsl::detail::write_training_state(again, s, tpudsl::detail::state_layout::of<fuzz::model>(), s.params.data(),
                                         s.slots.data(), s.slots.size());
    // A file of the first format ("TPUDSLB1", without the fit's epochs) is written again in the
    // current one: the same bytes with the epochs, 0 (unknown), after the fit's five fields.
    std::vector<std::uint8_t> expected = file;
    if (std::memcmp(file.data(), tpudsl::detail::training_state_magic_v1, 8) == 0) {
        constexpr std::size_t epochs_at = 8 + 8 * (4 + 4 + 5);   // magic, header, position, fit
        std::memcpy(expected.data(), tpudsl::detail::training_state_magic, 8);
        expected.insert(expected.begin() + epochs_at, 8, 0);
        tpudsl::detail::put_u64(expected.data() + expected.size() - 8,
                                tpudsl::detail::fnv1a(tpudsl::detail::fnv1a_offset, expected.data() + 8,
                                                      expected.size() - 16));
    }
    const std::vector<std::uint8_t> written = fuzz::read_file(again);
    if (written != expected)
        fuzz::fail("a file was accepted, but the state written again differs from it",
                   std::to_string(file.size()) + " bytes in, " + std::to_string(written.size()) + " bytes out");
    return 0;
}

#else   // the seed corpus, written by the library

#include <tpudsl/tpudsl.hpp>

#include <filesystem>
#include <limits>

namespace {
using Real = fuzz::model;
using Other = tpudsl::Sequential<tpudsl::Input<tpudsl::Shape<2>>, tpudsl::Dense<2>>;

/// A seed: mode byte 0 and the file as it is; for a file that ends in its checksum, also mode 1 and
/// the file without it (the harness appends it).
void
put(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes, bool has_checksum = false)
{
    std::vector<std::uint8_t> seed{0};
    seed.insert(seed.end(), bytes.begin(), bytes.end());
    fuzz::write_file(path.string(), seed.data(), seed.size());
    if (has_checksum && bytes.size() >= 16) {
        seed[0] = 1;
        seed.resize(seed.size() - 8);
        fuzz::write_file(path.string() + "_unsummed", seed.data(), seed.size());
    }
}

/// Writes a state with the library, then stores it as a seed.
template <class M>
void
write_seed(const std::filesystem::path& path, const tpudsl::detail::training_state& s, const float* w,
           const float* slots, std::size_t slot_floats)
{
    const std::string tmp = path.string() + ".state";
    tpudsl::detail::write_training_state(tmp, s, tpudsl::detail::state_layout::of<M>(), w, slots, slot_floats);
    put(path, fuzz::read_file(tmp), true);
    std::filesystem::remove(tmp);
}
} // namespace

int
main(int argc, char** argv)
{
    namespace fs = std::filesystem;
    using tpudsl::detail::write_training_state;
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <corpus directory>\n", argv[0]);
        return 2;
    }
    const fs::path dir = argv[1];
    fs::create_directories(dir);
    std::vector<float> w(Real::param_buffer_size), slots(2 * Real::param_buffer_size);
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = static_cast<float>(i) * 0.25f - 3.0f;
    for (std::size_t i = 0; i < slots.size(); ++i)
        slots[i] = static_cast<float>(i) * 1e-3f;

    tpudsl::detail::training_state s;   // at an epoch's end: Adam after 40 steps
    s.seed = 7;
    s.iterations = 40;
    s.position = {4, 0, 3, 10};
    s.fit = {0, 100, 10, 0, 1};
    s.optimizer = "Adam";
    s.learning_rate = 1e-3f;
    write_seed<Real>(dir / "epoch_end", s, w.data(), slots.data(), slots.size());
    const std::string tmp = (dir / "valid.state").string();
    write_training_state(tmp, s, tpudsl::detail::state_layout::of<Real>(), w.data(), slots.data(), slots.size());
    const std::vector<std::uint8_t> valid = fuzz::read_file(tmp);
    fs::remove(tmp);

    s.position = {2, 5, 0, 5};   // mid-epoch, with its running values; Nadam's momentum product
    s.fit = {1, 12, 8, 0, 0};
    s.optimizer = "Nadam";
    s.momentum_product = 0.25;
    s.loss_total = 12.5;
    s.seen = 40;
    s.running = {30.0, 38.0};
    write_seed<Real>(dir / "mid_epoch", s, w.data(), slots.data(), slots.size());
    s.optimizer = "SGD";
    s.running.clear();
    write_seed<Real>(dir / "no_slots", s, w.data(), slots.data(), 0);
    std::vector<float> o(Other::param_buffer_size, 1.0f);
    write_seed<Other>(dir / "other_model", s, o.data(), o.data(), 0);

    for (std::size_t cut : std::vector<std::size_t>{0, 5, 8, 30, 150, 200, valid.size() - 9, valid.size() - 1})
        put(dir / ("truncated_" + std::to_string(cut)), {valid.begin(), valid.begin() + static_cast<long>(cut)}, true);
    for (std::size_t at : std::vector<std::size_t>{3, 9, 17, 60, 130, 300, valid.size() - 3}) {
        auto b = valid;
        b[at] ^= 0x10;
        put(dir / ("bitflip_" + std::to_string(at)), b, true);
    }
    auto longer = valid;
    for (char c : std::string("junk"))
        longer.push_back(static_cast<std::uint8_t>(c));
    put(dir / "trailing_bytes", longer);
    return 0;
}

#endif
