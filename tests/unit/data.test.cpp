// Loaders on small files the tests write, valid and broken; preprocessing against Keras' documented
// behaviour.
#include <tpudsl/data/cifar10.hpp>
#include <tpudsl/data/fashion_mnist.hpp>
#include <tpudsl/data/idx.hpp>
#include <tpudsl/data/preprocessing.hpp>
#include <tpudsl/data/sequences.hpp>

#include <catch2/catch.hpp>

#include <unistd.h>
#include <zlib.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace tpudsl;
namespace fs = std::filesystem;

namespace {

struct temp_dir {
    fs::path path = fs::temp_directory_path() / ("tpudsl_data_test_" + std::to_string(::getpid()));
    temp_dir() { fs::create_directories(path); }
    ~temp_dir() { fs::remove_all(path); }
    [[nodiscard]] std::string operator/(const std::string& name) const { return (path / name).string(); }
};

void
put_be32(std::vector<unsigned char>& out, std::uint32_t v)
{
    for (int s = 24; s >= 0; s -= 8)
        out.push_back(static_cast<unsigned char>(v >> s));
}

/// An IDX file of bytes: magic 0x0800 | rank, the dims, the data; gzip-compressed.
void
write_idx_gz(const std::string& path, std::uint32_t magic, const std::vector<std::uint32_t>& dims,
             const std::vector<unsigned char>& data)
{
    std::vector<unsigned char> bytes;
    put_be32(bytes, magic);
    for (auto d : dims)
        put_be32(bytes, d);
    bytes.insert(bytes.end(), data.begin(), data.end());
    gzFile f = gzopen(path.c_str(), "wb");
    REQUIRE(f);
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
}

void
write_text(const std::string& path, const std::string& text)
{
    std::ofstream(path) << text;
}

} // namespace

TEST_CASE("image splits give the arrays fit accepts: floats shaped as the Input, int32 labels", "[data]")
{
    tpudsl::data::image_split split;
    split.count = 3;
    split.rows = split.cols = 2;
    split.images = {0, 51, 102, 255, 1, 2, 3, 4, 5, 6, 7, 8};
    split.labels = {9, 0, 4};
    // [image_arrays]
    const auto x = split.x<2, 2, 1>();                           // (3, 2, 2, 1), bytes / 255
    const auto raw = split.x<4>({.divide_by = 1, .limit = 2});   // (2, 4), the raw 0-255 pixels
    const auto y = split.y();                                    // (3), int32 class ids
    // [image_arrays]
    CHECK(x.shape() == std::array<std::size_t, 4>{3, 2, 2, 1});
    CHECK(x(0, 0, 1, 0) == 51.0f / 255.0f);
    CHECK(x(0, 1, 1, 0) == 1.0f);
    CHECK(raw.shape() == std::array<std::size_t, 2>{2, 4});
    CHECK(raw(1, 3) == 4.0f);
    CHECK(y.shape() == std::array<std::size_t, 1>{3});
    CHECK(y(0) == 9);
    CHECK(split.y(2).shape() == std::array<std::size_t, 1>{2});
    CHECK_THROWS_WITH((split.x<28, 28, 1>()), Catch::Contains("the images hold 4 bytes each, the requested shape 784"));
}

TEST_CASE("pad_sequences follows Keras' documented examples", "[data][preprocessing]")
{
    const std::vector<std::vector<std::int32_t>> seqs = {{1}, {2, 3}, {4, 5, 6}, {}};
    auto rows = [](const xt::xtensor<std::int32_t, 2>& a) {
        std::vector<std::vector<std::int32_t>> r(a.shape()[0]);
        for (std::size_t i = 0; i < a.shape()[0]; ++i)
            for (std::size_t j = 0; j < a.shape()[1]; ++j)
                r[i].push_back(a(i, j));
        return r;
    };
    using V = std::vector<std::vector<std::int32_t>>;
    // [pad_sequences]
    CHECK(rows(pad_sequences<3>(seqs)) == V{{0, 0, 1}, {0, 2, 3}, {4, 5, 6}, {0, 0, 0}});
    CHECK(rows(pad_sequences<3>(seqs, {.value = -1})) == V{{-1, -1, 1}, {-1, 2, 3}, {4, 5, 6}, {-1, -1, -1}});
    CHECK(rows(pad_sequences<3>(seqs, {.padding = sequence_side::post})) == V{{1, 0, 0}, {2, 3, 0}, {4, 5, 6}, {0, 0, 0}});
    CHECK(rows(pad_sequences<2>(seqs)) == V{{0, 1}, {2, 3}, {5, 6}, {0, 0}});   // truncating "pre" keeps the end
    CHECK(rows(pad_sequences<2>(seqs, {.truncating = sequence_side::post})) == V{{0, 1}, {2, 3}, {4, 5}, {0, 0}});
    // [pad_sequences]
}

TEST_CASE("to_categorical: one-hot rows, a label out of range is an error", "[data][preprocessing]")
{
    const std::vector<int> y = {0, 2, 1};
    const auto c = to_categorical<3>(y);
    CHECK(c(0, 0) == 1.0f);
    CHECK(c(1, 2) == 1.0f);
    CHECK(c(2, 1) == 1.0f);
    CHECK(xt::sum(c)() == 3.0f);
    CHECK_THROWS_WITH(to_categorical<2>(y), Catch::Contains("label 2 at sample 1 is outside [0, 2)"));
    CHECK(scale_pixels({0, 255, 51})[2] == Approx(0.2f));
}

TEST_CASE("IDX .gz files: valid, wrong magic, truncated, too long, missing", "[data][idx]")
{
    temp_dir dir;
    write_idx_gz(dir / "labels.gz", 0x801, {4}, {1, 2, 3, 9});
    const auto labels = data::read_idx(dir / "labels.gz", 1);
    CHECK(labels.dims == std::vector<std::size_t>{4});
    CHECK(labels.bytes == std::vector<std::uint8_t>{1, 2, 3, 9});
    write_idx_gz(dir / "images.gz", 0x803, {2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    const auto images = data::read_idx(dir / "images.gz", 3);
    CHECK(images.dims == std::vector<std::size_t>{2, 2, 3});
    CHECK(images.bytes[11] == 12);

    CHECK_THROWS_WITH(data::read_idx(dir / "labels.gz", 3),
                      Catch::Contains("bad magic number 0x00000801, expected 0x00000803"));
    write_idx_gz(dir / "short.gz", 0x801, {5}, {1, 2, 3});
    CHECK_THROWS_WITH(data::read_idx(dir / "short.gz", 1),
                      Catch::Contains("is truncated: 5 records needs 5 bytes, found 3"));
    write_idx_gz(dir / "long.gz", 0x801, {2}, {1, 2, 3});
    CHECK_THROWS_WITH(data::read_idx(dir / "long.gz", 1), Catch::Contains("holds more data than its header's 2 records"));
    CHECK_THROWS_WITH(data::read_idx(dir / "nothing.gz", 1), Catch::Contains("cannot open"));
}

TEST_CASE("Fashion-MNIST loader: counts must agree, labels must be classes, a missing set says where",
          "[data][idx]")
{
    temp_dir dir;
    std::vector<unsigned char> pixels(2 * 28 * 28, 7);
    for (const char* split : {"train", "t10k"}) {
        write_idx_gz(dir / (std::string(split) + "-images-idx3-ubyte.gz"), 0x803, {2, 28, 28}, pixels);
        write_idx_gz(dir / (std::string(split) + "-labels-idx1-ubyte.gz"), 0x801, {2}, {3, 9});
    }
    const auto d = data::fashion_mnist::load_data(dir.path.string());
    CHECK(d.train.count == 2);
    CHECK(d.test.labels == std::vector<std::uint8_t>{3, 9});
    CHECK(d.train.images.size() == 2 * 784);

    write_idx_gz(dir / "t10k-labels-idx1-ubyte.gz", 0x801, {2}, {3, 10});
    CHECK_THROWS_WITH(data::fashion_mnist::load_data(dir.path.string()),
                      Catch::Contains("label 10 at record 1 is outside [0, 10)"));
    write_idx_gz(dir / "t10k-labels-idx1-ubyte.gz", 0x801, {3}, {3, 1, 2});
    CHECK_THROWS_WITH(data::fashion_mnist::load_data(dir.path.string()),
                      Catch::Contains("holds 2 images but"));
    CHECK_THROWS_WITH(data::fashion_mnist::load_data((dir.path / "absent").string()),
                      Catch::Contains("no data set in") && Catch::Contains("dataset-fashion-mnist"));
}

TEST_CASE("CIFAR-10 binary batches: planar RGB to channels-last, broken files refused", "[data][cifar10]")
{
    temp_dir dir;
    auto record = [](unsigned char label, unsigned char r, unsigned char g, unsigned char b) {
        std::vector<unsigned char> rec(3073);
        rec[0] = label;
        std::fill(rec.begin() + 1, rec.begin() + 1025, r);
        std::fill(rec.begin() + 1025, rec.begin() + 2049, g);
        std::fill(rec.begin() + 2049, rec.end(), b);
        return rec;
    };
    auto write_bin = [&](const std::string& name, const std::vector<std::vector<unsigned char>>& recs) {
        std::ofstream f(dir / name, std::ios::binary);
        for (const auto& r : recs)
            f.write(reinterpret_cast<const char*>(r.data()), static_cast<std::streamsize>(r.size()));
    };
    for (int b = 1; b <= 5; ++b)
        write_bin("data_batch_" + std::to_string(b) + ".bin", {record(1, 10, 20, 30), record(9, 1, 2, 3)});
    write_bin("test_batch.bin", {record(4, 5, 6, 7)});
    const auto d = data::cifar10::load_data(dir.path.string());
    CHECK(d.train.count == 10);
    CHECK(d.test.count == 1);
    CHECK(d.train.labels[1] == 9);
    // pixel (0, 0) then pixel (0, 1), channels last
    CHECK(std::vector<std::uint8_t>(d.train.images.begin(), d.train.images.begin() + 6) ==
          std::vector<std::uint8_t>{10, 20, 30, 10, 20, 30});
    CHECK(d.test.images[3071] == 7);

    write_bin("test_batch.bin", {record(11, 0, 0, 0)});
    CHECK_THROWS_WITH(data::cifar10::load_data(dir.path.string()),
                      Catch::Contains("label 11 at record 0 is outside [0, 10)"));
    {
        std::ofstream f(dir / "test_batch.bin", std::ios::binary);
        f << std::string(3073 + 100, '\1');
    }
    CHECK_THROWS_WITH(data::cifar10::load_data(dir.path.string()),
                      Catch::Contains("not a whole number of 3,073-byte records"));
    CHECK_THROWS_WITH(data::cifar10::load_data((dir.path / "absent").string()),
                      Catch::Contains("CIFAR-10 binary version"));
}

TEST_CASE("token sequences: the plain-text format, and every way a line can be wrong", "[data][sequences]")
{
    temp_dir dir;
    write_text(dir / "ok.txt", "tpudsl-sequences 1\ncount 3\n3\t1 2 45\n0\t\n45\t7\n");
    const auto s = data::read_sequences(dir / "ok.txt");
    CHECK(s.y == std::vector<std::int32_t>{3, 0, 45});
    CHECK(s.x[0] == std::vector<std::int32_t>{1, 2, 45});
    CHECK(s.x[1].empty());

    write_text(dir / "h.txt", "sequences\ncount 1\n1\t2\n");
    CHECK_THROWS_WITH(data::read_sequences(dir / "h.txt"), Catch::Contains("line 1: expected the header"));
    write_text(dir / "t.txt", "tpudsl-sequences 1\ncount 2\n1\t2 x3\n1\t2\n");
    CHECK_THROWS_WITH(data::read_sequences(dir / "t.txt"), Catch::Contains("line 3: expected a token id, found 'x3'"));
    write_text(dir / "n.txt", "tpudsl-sequences 1\ncount 2\n1\t2 -4\n");
    CHECK_THROWS_WITH(data::read_sequences(dir / "n.txt"), Catch::Contains("line 3: token id -4 is outside"));
    write_text(dir / "c.txt", "tpudsl-sequences 1\ncount 3\n1\t2 3 4 5 6 7 8\n");
    CHECK_THROWS_WITH(data::read_sequences(dir / "c.txt"), Catch::Contains("announces 3 samples but holds 1"));
    write_text(dir / "tab.txt", "tpudsl-sequences 1\ncount 1\n1 2 3\n");
    CHECK_THROWS_WITH(data::read_sequences(dir / "tab.txt"), Catch::Contains("line 3: expected 'label<TAB>tokens'"));
    CHECK_THROWS_WITH(data::reuters::load_data((dir.path / "absent").string()),
                      Catch::Contains("tools/export_keras_dataset.py"));
}
