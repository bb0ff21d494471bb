// libFuzzer harness for the Keras weights reader (tpudsl::load_keras_weights): the input is a small
// program that builds a Keras weights file of the MNIST seed's network at a small width (fuzz::mlp,
// models.hpp) through HDF5's own writer, from a file save_keras_weights wrote, edited: a weight's
// dataset replaced (contiguous, chunked, compact, in external storage, virtual; deflate, shuffle,
// Fletcher-32 or a filter the library lacks; float32, float64, integers or strings; its shape right
// or not; its values finite, NaN, infinite or beyond float32; written, partly written or not at
// all), a link on a weight's path made external or soft, a layer's group or a weight deleted, groups
// added, Keras 2's layer_names and weight_names rewritten. The file is then loaded. What a load
// must do with every such file:
//   - never open a file other than the input: the harness keeps a planted file and a FIFO in the
//     directory it runs in (planted.bin, planted.fifo), which the external links, external storage
//     and virtual datasets name; it fails if the planted file is opened or read (inotify), and a
//     reader that opens the FIFO blocks, which libFuzzer reports as a timeout;
//   - accept a file whose every edit is one Keras or h5py could make (another storage layout or a
//     filter HDF5 has, float64 values within float32's range), giving exactly the values written;
//     refuse a file with any edit that reaches outside it, is not fully written, cannot be decoded,
//     or holds a weight that is not finite, of another shape or not of floats; either way for the
//     other edits (deletions, renamings), as long as an accepted file's weights are finite and
//     survive a round trip (saved as a Keras 3 file and loaded back, bit for bit);
//   - refuse with std::runtime_error whose message is one line naming the file, leaving the weights
//     as they were; never crash, hang, or throw anything else.
// The files are well-formed HDF5: the harness checks the reader's own logic over everything an HDF5
// file can express, not HDF5's parser of malformed bytes (libhdf5 is not instrumented here, and its
// own fuzzing is upstream's; docs/errors.md, "Files from elsewhere", says what that leaves).
//
// Build and run (clang 19, from the repository root; tests/fuzz/run.sh does both):
//   clang++-19 -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
//       -Iinclude $(pkg-config --cflags hdf5) tests/fuzz/fuzz_keras_weights.cpp $(pkg-config --libs hdf5) -lz
//       -o fuzz_keras_weights
//   ./fuzz_keras_weights -max_total_time=30 -max_len=128 -len_control=0 tests/fuzz/corpus/keras_weights
// run.sh: -max_len=128 -len_control=0 pkg-config=hdf5
// Seed corpus: tests/fuzz/corpus/keras_weights/, programs written by this file built with
// TPUDSL_FUZZ_WRITE_SEEDS (GCC); each seed's name says what its file holds:
//   g++ -std=c++20 -DTPUDSL_FUZZ_WRITE_SEEDS -Iinclude $(pkg-config --cflags hdf5) tests/fuzz/fuzz_keras_weights.cpp
//       $(pkg-config --libs hdf5) -lz -o write_seeds
//   ./write_seeds tests/fuzz/corpus/keras_weights
#include <tpudsl/io/keras_h5.hpp>

#include "common.hpp"
#include "models.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fuzz {

const char* const harness = "fuzz_keras_weights";

/// What the external links, external storage and virtual datasets name, relative to the directory
/// the harness runs in (HDF5 looks there for each).
inline constexpr const char* planted_file = "planted.bin";
inline constexpr const char* planted_fifo = "planted.fifo";

/// The program's operations and choices, in the order the interpreter reads them (one byte each,
/// taken modulo the count; a program that ends reads zeros: no more edits).
enum op : std::uint8_t { op_end, op_dataset, op_link, op_delete, op_add_group, op_layer_names, op_weight_names, op_count };
enum storage : std::uint8_t { contiguous, chunked, compact, external_file, external_fifo, virtual_source, storage_count };
enum filter : std::uint8_t { without_filter, with_deflate, with_shuffle_deflate, with_fletcher32, with_missing_filter, filter_count };
enum dtype : std::uint8_t { f32, f64, i32, fixed_string, dtype_count };
enum shape_edit : std::uint8_t { same_shape, longer_last, extra_dim, scalar, shape_count };
enum values_edit : std::uint8_t { finite_values, zero_values, a_nan, an_inf, beyond_float32, values_count };
enum writing : std::uint8_t { written, never_written, partly_written, writing_count };
enum link_edit : std::uint8_t { to_external_fifo, to_external_file, to_soft, link_count };

/// The HDF5 id of the filter standing for one the library lacks (LZF's), registered only while a file
/// is written with it.
inline constexpr H5Z_filter_t missing_filter_id = 32000;

inline std::size_t
identity_filter(unsigned, std::size_t, const unsigned[], std::size_t nbytes, std::size_t*, void**)
{
    return nbytes;
}

} // namespace fuzz

#ifndef TPUDSL_FUZZ_WRITE_SEEDS

namespace fuzz {

const std::string input = scratch("input.weights.h5"), again = scratch("again.weights.h5");
int planted_watch = -1;   // inotify on planted.bin

/// Whether planted.bin was opened or read since the last call.
bool
planted_touched()
{
    alignas(inotify_event) char buf[4096];
    bool touched = false;
    while (::read(planted_watch, buf, sizeof buf) > 0)
        touched = true;
    return touched;
}

/// Reads the program from the front, one byte per choice.
struct program {
    const std::uint8_t* p;
    std::size_t n;
    std::uint8_t
    pick(std::uint8_t count)
    {
        if (n == 0)
            return 0;
        --n;
        return static_cast<std::uint8_t>(*p++ % count);
    }
};

/// Whether the reader must accept the file, must refuse it, or may do either.
enum class expect { accept, refuse, either };

void
worsen(expect& e, expect to)
{
    if (e == expect::refuse || to == expect::accept)
        return;
    e = to;
}

struct weight_path {
    std::string path;                 // the dataset, from the file's root
    std::vector<hsize_t> dims;        // Keras' shape
    std::size_t offset, size;         // in the parameter buffer
};

/// Deletes `name` (a path below the root) if there is anything there; true if there was.
bool
remove_link(hid_t f, const std::string& name)
{
    return H5Lexists(f, name.c_str(), H5P_DEFAULT) > 0 && H5Ldelete(f, name.c_str(), H5P_DEFAULT) >= 0;
}

/// A fixed-length string list attribute `name` of `obj`, replacing one there.
void
string_list(hid_t obj, const char* name, const std::vector<std::string>& values)
{
    if (H5Aexists(obj, name) > 0)
        H5Adelete(obj, name);
    const tpudsl::detail::h5::context ctx{"fuzz", "edit"};
    tpudsl::detail::h5::write_string_list_attribute(ctx, obj, name, values);
}

/// Replaces the dataset at `w.path` as the program says; returns what the reader must then do and
/// writes into `params` the values a reader that accepts must give.
expect
replace_dataset(hid_t f, program& prog, const weight_path& w, std::vector<float>& params)
{
    expect e = expect::accept;
    const auto store = static_cast<storage>(prog.pick(storage_count));
    const auto filt = static_cast<filter>(prog.pick(filter_count));
    const auto type = static_cast<dtype>(prog.pick(dtype_count));
    const auto shape = static_cast<shape_edit>(prog.pick(shape_count));
    const auto vals = static_cast<values_edit>(prog.pick(values_count));
    const auto write = static_cast<writing>(prog.pick(writing_count));
    const std::size_t at = prog.pick(255) % w.size;   // where a NaN or an infinity goes

    std::vector<hsize_t> dims = w.dims;
    if (shape == longer_last)
        dims.back() += 1;
    else if (shape == extra_dim)
        dims.push_back(1);
    else if (shape == scalar)
        dims.clear();
    if (shape != same_shape)
        worsen(e, expect::refuse);
    std::size_t count = 1;
    for (hsize_t d : dims)
        count *= static_cast<std::size_t>(d);

    std::vector<double> v(count);
    for (std::size_t i = 0; i < count; ++i)
        v[i] = vals == zero_values ? 0.0 : static_cast<double>(i % 13) * 0.0625 - 0.375;
    if (vals == a_nan)
        v[at % count] = std::numeric_limits<double>::quiet_NaN();
    else if (vals == an_inf)
        v[at % count] = -std::numeric_limits<double>::infinity();
    else if (vals == beyond_float32)
        v[at % count] = type == f64 ? 1e300 : 3e38;   // as float32: an infinity, or a finite value
    if (write == written && (vals == a_nan || vals == an_inf || (vals == beyond_float32 && type == f64)))
        worsen(e, expect::refuse);   // (values never written are not there to refuse)

    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    std::vector<hsize_t> chunk(dims.size(), 1);   // rows of a matrix, elements of a vector: a first row
    if (dims.size() > 1)                          // alone leaves the other chunks unwritten
        chunk.back() = dims.back();
    bool filtered = false;
    switch (store) {
    case contiguous: break;
    case chunked:
        if (!dims.empty())
            H5Pset_chunk(dcpl, static_cast<int>(dims.size()), chunk.data());
        break;
    case compact: H5Pset_layout(dcpl, H5D_COMPACT); break;
    case external_file:
    case external_fifo:
        H5Pset_external(dcpl, store == external_file ? planted_file : planted_fifo, 0, H5F_UNLIMITED);
        worsen(e, expect::refuse);
        break;
    case virtual_source: {
        const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
        H5Pset_virtual(dcpl, space, planted_file, "/weights", space);
        H5Sclose(space);
        worsen(e, expect::refuse);
        break;
    }
    default: break;
    }
    if (store == chunked && !dims.empty() && filt != without_filter) {
        filtered = true;
        if (filt == with_deflate)
            H5Pset_deflate(dcpl, 4);
        else if (filt == with_shuffle_deflate) {
            H5Pset_shuffle(dcpl);
            H5Pset_deflate(dcpl, 1);
        } else if (filt == with_fletcher32)
            H5Pset_fletcher32(dcpl);
        else {
            H5Pset_filter(dcpl, missing_filter_id, H5Z_FLAG_MANDATORY, 0, nullptr);
            worsen(e, expect::refuse);
        }
    }
    (void)filtered;
    if (type == i32 || type == fixed_string)
        worsen(e, expect::refuse);
    // Values never written read as the fill value; HDF5 tells so, except for a compact dataset, whose
    // space is there from the start, and a dataset whose values are elsewhere (refused anyway).
    const bool values_elsewhere = store == external_file || store == external_fifo || store == virtual_source;
    const bool partial = write == partly_written && store == chunked && !dims.empty() && dims[0] > 1;
    if (write != written)
        worsen(e, store == compact ? expect::either : expect::refuse);

    hid_t file_type = H5T_IEEE_F32LE, mem_type = H5T_NATIVE_DOUBLE;
    hid_t string_type = -1;
    if (type == f64)
        file_type = H5T_IEEE_F64LE;
    else if (type == i32)
        file_type = H5T_STD_I32LE;
    else if (type == fixed_string) {
        string_type = H5Tcopy(H5T_C_S1);
        H5Tset_size(string_type, 8);
        file_type = string_type;
    }
    remove_link(f, w.path);
    const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    const hid_t space = dims.empty() ? H5Screate(H5S_SCALAR)
                                     : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    const hid_t ds = H5Dcreate2(f, w.path.c_str(), file_type, space, lcpl, dcpl, H5P_DEFAULT);
    if (ds < 0) {   // a combination HDF5 does not make (a compact dataset too large, ...): the weight is gone
        worsen(e, expect::refuse);
    } else if (type != fixed_string && !values_elsewhere) {
        if (write == written) {
            if (H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
                worsen(e, expect::either);
        } else if (partial) {
            std::vector<hsize_t> start(dims.size(), 0), part = dims;
            part[0] = 1;
            const hid_t file_space = H5Dget_space(ds);
            H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr, part.data(), nullptr);
            const hid_t mem = H5Screate_simple(static_cast<int>(part.size()), part.data(), nullptr);
            H5Dwrite(ds, mem_type, mem, file_space, H5P_DEFAULT, v.data());
            H5Sclose(mem);
            H5Sclose(file_space);
        }
    }
    if (ds >= 0)
        H5Dclose(ds);
    H5Sclose(space);
    H5Pclose(lcpl);
    H5Pclose(dcpl);
    if (string_type >= 0)
        H5Tclose(string_type);
    if (e == expect::accept)
        for (std::size_t i = 0; i < w.size; ++i)
            params[w.offset + i] = static_cast<float>(v[i]);
    return e;
}

} // namespace fuzz

extern "C" int
LLVMFuzzerInitialize(int*, char***)
{
    fuzz::remove_scratch_files_at_exit();
    const std::string planted(4096, 'S');   // what external storage of a weight would read
    fuzz::write_file(fuzz::planted_file, reinterpret_cast<const std::uint8_t*>(planted.data()), planted.size());
    if (::mkfifo(fuzz::planted_fifo, 0600) != 0 && errno != EEXIST)
        fuzz::fail("cannot make the FIFO", fuzz::planted_fifo);
    fuzz::planted_watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fuzz::planted_watch < 0 || ::inotify_add_watch(fuzz::planted_watch, fuzz::planted_file, IN_OPEN | IN_ACCESS) < 0)
        fuzz::fail("cannot watch the planted file", fuzz::planted_file);
    (void)fuzz::planted_touched();
    (void)H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);   // the edits that HDF5 refuses need no printing
    return 0;
}

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace fuzz;
    using model = fuzz::mlp;
    program prog{data, size};
    const bool keras3 = prog.pick(2) == 0;

    // The file: the model's weights as save_keras_weights writes them, then the program's edits.
    std::vector<float> written_weights(model::param_buffer_size, 0.0f);
    for (std::size_t i = 0; i < written_weights.size(); ++i)
        written_weights[i] = static_cast<float>(i % 29) * 0.125f - 1.0f;
    tpudsl::save_keras_weights<model>(input, written_weights.data(),
                                      keras3 ? tpudsl::keras_h5_layout::keras3 : tpudsl::keras_h5_layout::keras2);
    std::vector<weight_path> weights;
    std::vector<std::string> layer_names, layer_groups;
    for (const auto& l : tpudsl::detail::h5::layers_of<model>()) {
        layer_names.push_back(l.name);
        layer_groups.push_back(keras3 ? "layers/" + l.group : l.name);
        for (std::size_t j = 0; j < l.weights.size(); ++j) {
            const auto& w = l.weights[j];
            weights.push_back({keras3 ? "layers/" + l.vars_path() + "/" + std::to_string(j)
                                      : l.name + "/" + l.name + "/" + w.role + ":0",
                               std::vector<hsize_t>(w.shape.begin(), w.shape.end()), w.offset, w.size});
        }
    }
    expect others = expect::accept;                               // what edits other than datasets ask
    std::vector<expect> per_weight(weights.size(), expect::accept);  // what each weight's last replacement asks
    {
        const H5Z_class2_t missing{H5Z_CLASS_T_VERS, missing_filter_id, 1, 1, "lzf", nullptr, nullptr, identity_filter};
        H5Zregister(&missing);
        const hid_t f = H5Fopen(input.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
        if (f < 0)
            fail("cannot open the file the harness wrote", input);
        for (int edits = 0; edits < 8; ++edits) {
            const auto what = static_cast<op>(prog.pick(op_count));
            if (what == op_end)
                break;
            const std::size_t wi = prog.pick(static_cast<std::uint8_t>(weights.size()));
            const weight_path& w = weights[wi];
            const std::size_t layer = prog.pick(static_cast<std::uint8_t>(layer_groups.size()));
            switch (what) {
            case op_dataset: per_weight[wi] = replace_dataset(f, prog, w, written_weights); break;
            case op_link: {
                // one link on the weight's path: the layer's group, a group below it, or the dataset
                std::vector<std::string> prefixes;
                for (std::size_t s = w.path.find('/'); s != std::string::npos; s = w.path.find('/', s + 1))
                    if (s > 0 && w.path.compare(0, s, "layers") != 0)
                        prefixes.push_back(w.path.substr(0, s));
                prefixes.push_back(w.path);
                const std::string& at = prefixes[prog.pick(static_cast<std::uint8_t>(prefixes.size()))];
                const auto kind = static_cast<link_edit>(prog.pick(link_count));
                if (kind == to_soft) {
                    H5Lmove(f, at.c_str(), f, "/moved_away", H5P_DEFAULT, H5P_DEFAULT);
                    H5Lcreate_soft("/moved_away", f, at.c_str(), H5P_DEFAULT, H5P_DEFAULT);
                } else {
                    remove_link(f, at);
                    H5Lcreate_external(kind == to_external_fifo ? planted_fifo : planted_file, "/x", f, at.c_str(),
                                       H5P_DEFAULT, H5P_DEFAULT);
                }
                others = expect::refuse;
                edits = 8;   // nothing after it: the harness's own edits would follow the link
                break;
            }
            case op_delete:
                if (prog.pick(2) == 0 ? remove_link(f, w.path) : remove_link(f, layer_groups[layer]))
                    worsen(others, expect::either);   // a layer without weights (Dropout) may go unmissed
                break;
            case op_add_group: {
                static const char* const names[] = {"dense_3", "input_layer", "dropout_2", "vars", "extra"};
                const std::string name = (keras3 ? "layers/" : "") + std::string(names[prog.pick(5)]);
                const bool with_weight = prog.pick(2) == 1;
                const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
                H5Pset_create_intermediate_group(lcpl, 1);
                const hid_t g = H5Gcreate2(f, (name + (keras3 ? "/vars" : "")).c_str(), lcpl, H5P_DEFAULT, H5P_DEFAULT);
                if (g >= 0) {
                    if (with_weight) {
                        const hsize_t n = 2;
                        const hid_t space = H5Screate_simple(1, &n, nullptr);
                        const float two[2] = {1, 2};
                        const hid_t ds = H5Dcreate2(g, "0", H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
                        if (ds >= 0) {
                            H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, two);
                            H5Dclose(ds);
                        }
                        H5Sclose(space);
                    }
                    H5Gclose(g);
                }
                H5Pclose(lcpl);
                worsen(others, expect::either);
                break;
            }
            case op_layer_names: {
                std::vector<std::string> names = layer_names;
                switch (prog.pick(4)) {
                case 0: std::swap(names[0], names[layer]); break;
                case 1: names.push_back("ghost"); break;
                case 2: names.erase(names.begin() + static_cast<std::ptrdiff_t>(layer)); break;
                default: names.clear(); break;
                }
                if (!keras3)
                    string_list(f, "layer_names", names);
                worsen(others, expect::either);
                break;
            }
            case op_weight_names: {
                if (!keras3 && H5Lexists(f, layer_names[layer].c_str(), H5P_DEFAULT) > 0) {
                    const hid_t g = H5Gopen2(f, layer_names[layer].c_str(), H5P_DEFAULT);
                    if (g >= 0) {
                        std::vector<std::string> names;
                        const std::size_t count = prog.pick(4);
                        for (std::size_t k = 0; k < count; ++k)
                            names.push_back(k == 0 ? "/" + w.path.substr(0, w.path.find('/')) : layer_names[layer] + "/w" +
                                                                                                    std::to_string(k) + ":0");
                        string_list(g, "weight_names", names);
                        H5Gclose(g);
                    }
                }
                worsen(others, expect::either);
                break;
            }
            default: break;
            }
        }
        if (H5Fclose(f) < 0)
            fail("cannot close the file the harness edited", input);
        H5Zunregister(missing_filter_id);
    }

    expect e = others;
    for (expect w : per_weight)
        worsen(e, w);

    // The load.
    (void)planted_touched();   // the harness's own edits made none, but start from a clean slate
    constexpr std::uint32_t sentinel_bits = 0x7fc0'5a5aU;   // a NaN with a payload no file holds
    float sentinel;
    std::memcpy(&sentinel, &sentinel_bits, 4);
    std::vector<float> params(model::param_buffer_size, sentinel);
    bool loaded = false;
    std::string refused;
    try {
        tpudsl::load_keras_weights<model>(input, params.data());
        loaded = true;
    } catch (const std::runtime_error& err) {
        refused = err.what();
        if (refused.find("'" + input + "'") == std::string::npos)
            fail("an error that does not name the file", refused);
        if (refused.find('\n') != std::string::npos || refused.find('\r') != std::string::npos)
            fail("an error of more than one line", refused);
        for (float p : params)
            if (std::memcmp(&p, &sentinel, 4) != 0)
                fail("a refused file changed the weights", refused);
    } catch (const std::exception& err) {
        fail("threw an exception that is not a std::runtime_error", err.what());
    } catch (...) {
        fail("threw something that is not a std::exception");
    }
    if (planted_touched())
        fail("the load opened or read a file other than the input", planted_file);
    if (e == expect::accept && !loaded)
        fail("refused a file Keras could have written", refused);
    if (e == expect::refuse && loaded)
        fail("accepted a file it must refuse (a link or storage outside it, values not all written or not "
             "decodable, a weight not finite, of another shape or not of floats)");
    if (!loaded)
        return 0;

    // Accepted: every weight finite and as written (when the harness knows it), the padding untouched,
    // and the weights survive a round trip.
    for (const auto& w : weights)
        for (std::size_t i = 0; i < w.size; ++i) {
            const float p = params[w.offset + i];
            if (!std::isfinite(p))
                fail("a file was accepted with a weight that is not finite", w.path);
            if (e == expect::accept && std::memcmp(&p, &written_weights[w.offset + i], 4) != 0)
                fail("a file was accepted but a weight differs from what was written", w.path);
        }
    std::vector<bool> is_weight(params.size(), false);
    for (const auto& w : weights)
        std::fill_n(is_weight.begin() + static_cast<std::ptrdiff_t>(w.offset), w.size, true);
    for (std::size_t i = 0; i < params.size(); ++i)
        if (!is_weight[i] && std::memcmp(&params[i], &sentinel, 4) != 0)
            fail("a file was accepted and the padding between weights changed", std::to_string(i));
    tpudsl::save_keras_weights<model>(again, params.data(), tpudsl::keras_h5_layout::keras3);
    std::vector<float> back(params.size(), sentinel);
    tpudsl::load_keras_weights<model>(again, back.data());
    if (std::memcmp(back.data(), params.data(), params.size() * sizeof(float)) != 0)
        fail("a file was accepted, but its weights saved again and loaded back differ");
    return 0;
}

#else   // the seed corpus: programs, one byte per choice (see the interpreter above)

#include <filesystem>
#include <initializer_list>

int
main(int argc, char** argv)
{
    namespace fs = std::filesystem;
    using namespace fuzz;
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <corpus directory>\n", argv[0]);
        return 2;
    }
    const fs::path dir = argv[1];
    fs::create_directories(dir);
    auto put = [&](const char* name, std::initializer_list<int> bytes) {
        std::vector<std::uint8_t> b;
        for (int v : bytes)
            b.push_back(static_cast<std::uint8_t>(v));
        write_file((dir / name).string(), b.data(), b.size());
    };
    // layout (0 Keras 3, 1 Keras 2), then edits: op, weight, layer, the op's own choices
    // replace_dataset's choices: storage, filter, type, shape, values, writing, where
    put("valid_keras3", {0});
    put("valid_keras2", {1});
    put("chunked_deflate_float64", {0, op_dataset, 0, 0, chunked, with_deflate, f64, same_shape, finite_values, written, 0});
    put("chunked_shuffle_keras2", {1, op_dataset, 3, 0, chunked, with_shuffle_deflate, f32, same_shape, zero_values, written, 0});
    put("chunked_fletcher32", {0, op_dataset, 5, 0, chunked, with_fletcher32, f32, same_shape, finite_values, written, 0});
    put("external_link_dataset_fifo", {0, op_link, 1, 0, 2, to_external_fifo});
    put("external_link_group_file", {1, op_link, 2, 0, 0, to_external_file});
    put("soft_link", {0, op_link, 4, 0, 1, to_soft});
    put("external_storage_file", {0, op_dataset, 1, 0, external_file, without_filter, f32, same_shape, finite_values, written, 0});
    put("external_storage_fifo", {1, op_dataset, 0, 0, external_fifo, without_filter, f32, same_shape, finite_values, written, 0});
    put("virtual_dataset", {0, op_dataset, 3, 0, virtual_source, without_filter, f32, same_shape, finite_values, written, 0});
    put("missing_filter", {0, op_dataset, 2, 0, chunked, with_missing_filter, f32, same_shape, finite_values, written, 0});
    put("nan", {1, op_dataset, 4, 0, contiguous, without_filter, f32, same_shape, a_nan, written, 3});
    put("inf", {0, op_dataset, 0, 0, chunked, with_deflate, f32, same_shape, an_inf, written, 7});
    put("float64_beyond_float32", {0, op_dataset, 5, 0, contiguous, without_filter, f64, same_shape, beyond_float32, written, 1});
    put("never_written", {0, op_dataset, 1, 0, contiguous, without_filter, f32, same_shape, finite_values, never_written, 0});
    put("partly_written", {1, op_dataset, 0, 0, chunked, without_filter, f32, same_shape, finite_values, partly_written, 0});
    put("integers", {0, op_dataset, 3, 0, contiguous, without_filter, i32, same_shape, finite_values, written, 0});
    put("wrong_shape", {1, op_dataset, 2, 0, contiguous, without_filter, f32, extra_dim, finite_values, written, 0});
    put("deleted_layer_keras2", {1, op_delete, 0, 2, 1});
    put("extra_group", {0, op_add_group, 0, 0, 1, 1});
    put("layer_names_ghost", {1, op_layer_names, 0, 1, 1});
    put("weight_names_rewritten", {1, op_weight_names, 2, 2, 3});
    return 0;
}

#endif
