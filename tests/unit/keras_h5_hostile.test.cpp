// Keras weights files from elsewhere: a file that reaches outside itself (an external, soft or
// user-defined link, a dataset in external storage, a virtual dataset) is refused before anything
// outside it is opened, checked without tracing the process: a FIFO that a reader would block on is
// watched for a reader, and a planted file for any open (inotify). Datasets never written, compressed
// by a filter the library lacks, or holding NaNs or infinities are refused too; non-finite weights are
// never saved. Each refusal is one line naming the file and the problem, the parameters left as they
// were.
#include "scratch_dir.hpp"

#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <hdf5.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tpudsl;
using tpudsl_tests::scratch_dir;

namespace {

using OneDense = Sequential<Input<Shape<3>>, Dense<4>>;   // kernel (3, 4), bias (4,)

template <class F>
std::string
refusal(F&& f)
{
    try {
        f();
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "";
}

/// A FIFO at `path` and a thread that looks, every millisecond, for a reader that opened it: a
/// writer's non-blocking open succeeds only then. It then closes at once, so that a reader blocked
/// in open() or read() goes on (to end of file) instead of hanging the test.
class fifo_watch {
public:
    explicit fifo_watch(std::string path) : path_(std::move(path))
    {
        if (::mkfifo(path_.c_str(), 0600) != 0)
            throw std::runtime_error("mkfifo failed: " + path_);
        thread_ = std::thread([this] {
            while (!stop_.load()) {
                const int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK);
                if (fd >= 0) {
                    opened_.store(true);
                    ::close(fd);
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        });
    }
    fifo_watch(const fifo_watch&) = delete;
    fifo_watch& operator=(const fifo_watch&) = delete;
    ~fifo_watch()
    {
        stop_.store(true);
        thread_.join();
    }
    [[nodiscard]] bool opened() const { return opened_.load(); }

private:
    std::string path_;
    std::atomic<bool> stop_{false}, opened_{false};
    std::thread thread_;
};

/// Watches a file for opens and reads (inotify) from its construction on.
class open_watch {
public:
    explicit open_watch(const std::string& path) : fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC))
    {
        if (fd_ < 0 || ::inotify_add_watch(fd_, path.c_str(), IN_OPEN | IN_ACCESS) < 0)
            throw std::runtime_error("inotify failed: " + path);
    }
    open_watch(const open_watch&) = delete;
    open_watch& operator=(const open_watch&) = delete;
    ~open_watch() { ::close(fd_); }
    /// Whether anything opened or read the file since the watch began.
    [[nodiscard]] bool
    touched() const
    {
        alignas(inotify_event) char buf[4096];
        return ::read(fd_, buf, sizeof buf) > 0;
    }

private:
    int fd_;
};

/// A good Keras 3 file of OneDense, then `edit` changes it through HDF5.
template <class Edit>
std::string
edited_file(const scratch_dir& dir, const std::string& name, keras_h5_layout layout, Edit edit)
{
    std::vector<float> w(OneDense::param_buffer_size, 0.25f);
    const std::string path = dir / name;
    save_keras_weights<OneDense>(path, w.data(), layout);
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(f >= 0);
    edit(f);
    REQUIRE(H5Fclose(f) >= 0);
    return path;
}

/// Replaces the dataset `name` of `f` by one of float32 values of `dims` made with `dcpl`, written
/// from `values` unless that is null.
void
put_dataset(hid_t f, const char* name, std::vector<hsize_t> dims, hid_t dcpl, const float* values,
            hid_t file_type = H5T_IEEE_F32LE, hid_t mem_type = H5T_NATIVE_FLOAT)
{
    if (H5Lexists(f, name, H5P_DEFAULT) > 0)
        REQUIRE(H5Ldelete(f, name, H5P_DEFAULT) >= 0);
    const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    const hid_t ds = H5Dcreate2(f, name, file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    REQUIRE(ds >= 0);
    if (values != nullptr)
        REQUIRE(H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0);
    H5Dclose(ds);
    H5Sclose(space);
}

constexpr const char* kernel3 = "layers/dense/vars/0";   // OneDense's kernel in a Keras 3 file
constexpr const char* kernel2 = "dense/dense/kernel:0";  // ... and in a Keras 2 file

} // namespace

TEST_CASE("keras_h5 hostile: an external link is refused and the file it names is never opened")
{
    scratch_dir dir("keras_h5_elink");
    std::vector<float> params(OneDense::param_buffer_size, 7.0f);
    const auto before = params;
    const std::string fifo = dir / "fifo.h5";
    const fifo_watch watch(fifo);

    SECTION("in place of a dataset (Keras 3)")
    {
        const std::string path = edited_file(dir, "elink_dataset.weights.h5", keras_h5_layout::keras3, [&](hid_t f) {
            REQUIRE(H5Ldelete(f, kernel3, H5P_DEFAULT) >= 0);
            REQUIRE(H5Lcreate_external(fifo.c_str(), "/kernel", f, kernel3, H5P_DEFAULT, H5P_DEFAULT) >= 0);
        });
        const std::string msg = refusal([&] { load_keras_weights<OneDense>(path, params.data()); });
        CHECK(msg == "tpudsl::load_weights: '" + path + "' has an external link (to an object in another file) at '/" +
                         kernel3 + "'; a weights file that reaches outside itself is refused (Keras writes none)");
    }
    SECTION("in place of a layer's group (Keras 3)")
    {
        const std::string path = edited_file(dir, "elink_group.weights.h5", keras_h5_layout::keras3, [&](hid_t f) {
            REQUIRE(H5Ldelete(f, "layers/dense", H5P_DEFAULT) >= 0);
            REQUIRE(H5Lcreate_external(fifo.c_str(), "/dense", f, "layers/dense", H5P_DEFAULT, H5P_DEFAULT) >= 0);
        });
        const std::string msg = refusal([&] { load_keras_weights<OneDense>(path, params.data()); });
        CHECK(msg.find("has an external link (to an object in another file) at '/layers/dense'") != std::string::npos);
    }
    SECTION("in place of a layer that layer_names lists (Keras 2)")
    {
        const std::string path = edited_file(dir, "elink_layer.h5", keras_h5_layout::keras2, [&](hid_t f) {
            REQUIRE(H5Ldelete(f, "dense", H5P_DEFAULT) >= 0);
            REQUIRE(H5Lcreate_external(fifo.c_str(), "/dense", f, "dense", H5P_DEFAULT, H5P_DEFAULT) >= 0);
        });
        const std::string msg = refusal([&] { load_keras_weights<OneDense>(path, params.data()); });
        CHECK(msg.find("'" + path + "' has an external link (to an object in another file) at '/dense'") !=
              std::string::npos);
    }
    SECTION("in place of a dataset that weight_names lists (Keras 2)")
    {
        const std::string path = edited_file(dir, "elink_weight.h5", keras_h5_layout::keras2, [&](hid_t f) {
            REQUIRE(H5Ldelete(f, kernel2, H5P_DEFAULT) >= 0);
            REQUIRE(H5Lcreate_external(fifo.c_str(), "/k", f, kernel2, H5P_DEFAULT, H5P_DEFAULT) >= 0);
        });
        const std::string msg = refusal([&] { load_keras_weights<OneDense>(path, params.data()); });
        CHECK(msg.find("has an external link (to an object in another file) at '/dense/dense/kernel:0'") !=
              std::string::npos);
    }
    SECTION("a soft link, even inside the file, is refused as Keras writes none")
    {
        const std::string path = edited_file(dir, "soft.weights.h5", keras_h5_layout::keras3, [&](hid_t f) {
            REQUIRE(H5Lmove(f, kernel3, f, "/elsewhere", H5P_DEFAULT, H5P_DEFAULT) >= 0);
            REQUIRE(H5Lcreate_soft("/elsewhere", f, kernel3, H5P_DEFAULT, H5P_DEFAULT) >= 0);
        });
        const std::string msg = refusal([&] { load_keras_weights<OneDense>(path, params.data()); });
        CHECK(msg.find("has a soft link at '/layers/dense/vars/0'") != std::string::npos);
    }
    CHECK_FALSE(watch.opened());
    CHECK(params == before);
}

TEST_CASE("keras_h5 hostile: a dataset in external storage is refused, its files never opened")
{
    scratch_dir dir("keras_h5_external");
    std::vector<float> params(OneDense::param_buffer_size, 7.0f);
    const auto before = params;
    const std::string fifo = dir / "fifo.bin";
    const std::string secret = dir / "secret.txt";
    std::ofstream(secret) << "0123456789abcdef0123456789abcdef0123456789abcdef";   // 48 bytes: a (3, 4) kernel
    const fifo_watch fifo_readers(fifo);
    const open_watch secret_opens(secret);

    for (const std::string& target : {fifo, secret, std::string("secret.txt")}) {   // a FIFO, a file, a relative name
        for (const auto layout : {keras_h5_layout::keras3, keras_h5_layout::keras2}) {
            const bool k3 = layout == keras_h5_layout::keras3;
            INFO("target " << target << ", " << (k3 ? "Keras 3" : "Keras 2"));
            const std::string path =
                edited_file(dir, k3 ? "external.weights.h5" : "external.h5", layout, [&](hid_t f) {
                    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
                    REQUIRE(H5Pset_external(dcpl, target.c_str(), 0, 48) >= 0);
                    put_dataset(f, k3 ? kernel3 : kernel2, {3, 4}, dcpl, nullptr);
                    H5Pclose(dcpl);
                });
            const std::string msg = refusal([&] { load_keras_weights<OneDense>(path, params.data()); });
            CHECK(msg.find("tpudsl::load_weights: '" + path + "' holds ") == 0);
            CHECK(msg.find(" in external storage (its values in 1 other file(s)); a weights file that reaches outside "
                           "itself is refused") != std::string::npos);
        }
    }
    CHECK_FALSE(fifo_readers.opened());
    CHECK_FALSE(secret_opens.touched());
    CHECK(params == before);
}

TEST_CASE("keras_h5 hostile: a virtual dataset is refused, its source file never opened")
{
    scratch_dir dir("keras_h5_virtual");
    std::vector<float> params(OneDense::param_buffer_size, 7.0f);
    const auto before = params;
    // The source: a real HDF5 file with a (3, 4) dataset.
    const std::string source = dir / "source.h5";
    {
        const hid_t f = H5Fcreate(source.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        const float v[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        put_dataset(f, "k", {3, 4}, H5P_DEFAULT, v);
        H5Fclose(f);
    }
    const open_watch source_opens(source);
    const std::string path = edited_file(dir, "virtual.weights.h5", keras_h5_layout::keras3, [&](hid_t f) {
        const hsize_t dims[2] = {3, 4};
        const hid_t space = H5Screate_simple(2, dims, nullptr);
        const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        REQUIRE(H5Pset_virtual(dcpl, space, source.c_str(), "k", space) >= 0);
        put_dataset(f, kernel3, {3, 4}, dcpl, nullptr);
        H5Pclose(dcpl);
        H5Sclose(space);
    });
    const std::string msg = refusal([&] { load_keras_weights<OneDense>(path, params.data()); });
    CHECK(msg == "tpudsl::load_weights: '" + path +
                     "' holds 'layers/dense/vars/0', the kernel of layer 0 'dense' (Dense) as a virtual dataset, made "
                     "of datasets in other files; a weights file that reaches outside itself is refused (Keras "
                     "writes none)");
    CHECK_FALSE(source_opens.touched());
    CHECK(params == before);
}

TEST_CASE("keras_h5 hostile: a dataset created but never written is refused, not read as zeros")
{
    scratch_dir dir("keras_h5_unwritten");
    std::vector<float> params(OneDense::param_buffer_size, 7.0f);
    const auto before = params;
    const std::string path = edited_file(dir, "unwritten.weights.h5", keras_h5_layout::keras3,
                                         [&](hid_t f) { put_dataset(f, kernel3, {3, 4}, H5P_DEFAULT, nullptr); });
    const std::string msg = refusal([&] { load_keras_weights<OneDense>(path, params.data()); });
    CHECK(msg == "tpudsl::load_weights: '" + path +
                     "' holds 'layers/dense/vars/0', the kernel of layer 0 'dense' (Dense) in a dataset created but "
                     "never written; HDF5 would give its fill value (zeros) for weights");
    CHECK(params == before);

    SECTION("chunked, with only some chunks written")
    {
        const std::string part = edited_file(dir, "partly.weights.h5", keras_h5_layout::keras3, [&](hid_t f) {
            const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
            const hsize_t chunk[2] = {1, 4};
            REQUIRE(H5Pset_chunk(dcpl, 2, chunk) >= 0);
            put_dataset(f, kernel3, {3, 4}, dcpl, nullptr);
            H5Pclose(dcpl);
            const hid_t ds = H5Dopen2(f, kernel3, H5P_DEFAULT);
            const hid_t file_space = H5Dget_space(ds);
            const hsize_t start[2] = {0, 0}, count[2] = {1, 4};
            H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr);
            const hid_t mem = H5Screate_simple(2, count, nullptr);
            const float row[4] = {1, 2, 3, 4};
            REQUIRE(H5Dwrite(ds, H5T_NATIVE_FLOAT, mem, file_space, H5P_DEFAULT, row) >= 0);
            H5Sclose(mem);
            H5Sclose(file_space);
            H5Dclose(ds);
        });
        CHECK(refusal([&] { load_keras_weights<OneDense>(part, params.data()); })
                  .find("in a dataset only partly written") != std::string::npos);
        CHECK(params == before);
    }
}

namespace {

/// A stand-in for the LZF filter (HDF5 id 32000): registered while a file is written with it, then
/// removed, as on a machine without h5py's LZF plugin.
std::size_t
identity_filter(unsigned, std::size_t, const unsigned[], std::size_t nbytes, std::size_t*, void**)
{
    return nbytes;
}

} // namespace

TEST_CASE("keras_h5 hostile: a filter this HDF5 lacks is named")
{
    scratch_dir dir("keras_h5_filter");
    std::vector<float> params(OneDense::param_buffer_size, 7.0f);
    const auto before = params;
    constexpr H5Z_filter_t lzf = 32000;
    const H5Z_class2_t filter{H5Z_CLASS_T_VERS, lzf, 1, 1, "lzf", nullptr, nullptr, identity_filter};
    REQUIRE(H5Zregister(&filter) >= 0);
    const std::string path = edited_file(dir, "lzf.weights.h5", keras_h5_layout::keras3, [&](hid_t f) {
        const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        const hsize_t chunk[2] = {3, 4};
        REQUIRE(H5Pset_chunk(dcpl, 2, chunk) >= 0);
        REQUIRE(H5Pset_filter(dcpl, lzf, H5Z_FLAG_MANDATORY, 0, nullptr) >= 0);
        const float v[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        put_dataset(f, kernel3, {3, 4}, dcpl, v);
        H5Pclose(dcpl);
    });
    REQUIRE(H5Zunregister(lzf) >= 0);
    const std::string msg = refusal([&] { load_keras_weights<OneDense>(path, params.data()); });
    CHECK(msg == "tpudsl::load_weights: '" + path +
                     "' holds 'layers/dense/vars/0', the kernel of layer 0 'dense' (Dense) compressed with the HDF5 "
                     "filter 'lzf' (id 32000), which this HDF5 library does not have (install its plugin, or save "
                     "the weights without compression)");
    CHECK(params == before);
}

TEST_CASE("keras_h5 hostile: NaN and infinite weights are refused when read and never saved")
{
    scratch_dir dir("keras_h5_nonfinite");
    std::vector<float> params(OneDense::param_buffer_size, 7.0f);
    const auto before = params;
    using B = OneDense::layer<0>::weight<1>;

    SECTION("a float64 beyond float32's range reads as an infinity (Keras 3)")
    {
        const std::string path = edited_file(dir, "huge.weights.h5", keras_h5_layout::keras3, [&](hid_t f) {
            const double bias[4] = {0.5, 1e300, 0.25, 0.125};
            put_dataset(f, "layers/dense/vars/1", {4}, H5P_DEFAULT, nullptr, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
            const hid_t ds = H5Dopen2(f, "layers/dense/vars/1", H5P_DEFAULT);
            REQUIRE(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, bias) >= 0);
            H5Dclose(ds);
        });
        CHECK(refusal([&] { load_keras_weights<OneDense>(path, params.data()); }) ==
              "tpudsl::load_weights: '" + path +
                  "' holds inf at element 1 of 'layers/dense/vars/1', the bias of layer 0 'dense' (Dense) (a float64 "
                  "beyond float32's range reads as an infinity); weights must be finite");
    }
    SECTION("a NaN (Keras 2)")
    {
        const std::string path = edited_file(dir, "nan.h5", keras_h5_layout::keras2, [&](hid_t f) {
            float kernel[12] = {};
            kernel[11] = std::numeric_limits<float>::quiet_NaN();
            put_dataset(f, kernel2, {3, 4}, H5P_DEFAULT, kernel);
        });
        CHECK(refusal([&] { load_keras_weights<OneDense>(path, params.data()); })
                  .find("holds nan at element 11 of 'dense/kernel:0' of its layer 'dense', the kernel of layer 0") !=
              std::string::npos);
    }
    CHECK(params == before);

    SECTION("save_weights refuses them in every format and leaves the old file")
    {
        using K = OneDense::layer<0>::weight<0>;
        std::vector<float> good(OneDense::param_buffer_size, 0.0f);   // zeros in the padding, which no file holds
        std::fill_n(good.begin() + K::offset, K::size, 0.5f);
        std::fill_n(good.begin() + B::offset, B::size, -0.25f);
        std::vector<float> bad = good;
        bad[B::offset + 2] = -std::numeric_limits<float>::infinity();
        for (const char* name : {"w.weights.h5", "w.h5", "w.bin"}) {
            const std::string path = dir / name;
            save_weights_by_path<OneDense>(path, good.data());
            const auto size = std::filesystem::file_size(path);
            CHECK(refusal([&] { save_weights_by_path<OneDense>(path, bad.data()); }) ==
                  "tpudsl::save_weights: '" + path +
                      "' not written: the weights hold -inf at element 2 of the bias of layer 0 'dense' (Dense); "
                      "non-finite weights are never saved (TerminateOnNaN stops a run whose loss is no longer "
                      "finite)");
            std::vector<float> back(OneDense::param_buffer_size, 0.0f);
            load_weights_by_path<OneDense>(path, back.data());
            CHECK(back == good);
            CHECK(std::filesystem::file_size(path) == size);
        }
    }
}

TEST_CASE("keras_h5 hostile: names from the file are quoted as one line of plain text, in lists of either kind of "
          "string")
{
    scratch_dir dir("keras_h5_names");
    std::vector<float> params(OneDense::param_buffer_size, 7.0f);
    const auto before = params;

    const std::string path = edited_file(dir, "names.h5", keras_h5_layout::keras2, [&](hid_t f) {
        REQUIRE(H5Adelete(f, "layer_names") >= 0);
        const detail::h5::context ctx{"test", "edit"};
        detail::h5::write_string_list_attribute(ctx, f, "layer_names", {"dense", "evil\nline\x1b[31m"});
    });
    const std::string msg = refusal([&] { load_keras_weights<OneDense>(path, params.data()); });
    CHECK(msg == "tpudsl::load_weights: '" + path +
                     "' lists a layer 'evil\\x0aline\\x1b[31m' in 'layer_names' but has no group for it");
    CHECK(msg.find('\n') == std::string::npos);

    // layer_names as variable-length strings (as tf-keras writes them too), one of them a line break
    const std::string vlen = edited_file(dir, "vlen.h5", keras_h5_layout::keras2, [&](hid_t f) {
        REQUIRE(H5Adelete(f, "layer_names") >= 0);
        const hid_t type = H5Tcopy(H5T_C_S1);
        H5Tset_size(type, H5T_VARIABLE);
        const hsize_t n = 2;
        const hid_t space = H5Screate_simple(1, &n, nullptr);
        const hid_t attr = H5Acreate2(f, "layer_names", type, space, H5P_DEFAULT, H5P_DEFAULT);
        const char* names[2] = {"dense", "two\nlines"};
        REQUIRE(H5Awrite(attr, type, names) >= 0);
        H5Aclose(attr);
        H5Sclose(space);
        H5Tclose(type);
    });
    CHECK(refusal([&] { load_keras_weights<OneDense>(vlen, params.data()); }) ==
          "tpudsl::load_weights: '" + vlen + "' lists a layer 'two\\x0alines' in 'layer_names' but has no group for it");
    CHECK(params == before);
}
