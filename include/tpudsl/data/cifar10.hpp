/// @file Loads CIFAR-10's binary version: data_batch_1..5.bin and test_batch.bin, each record 3,073
/// bytes: 1 label byte (0-9), then 1,024 red, 1,024 green and 1,024 blue bytes of a 32x32 image in
/// row-major order. Images come out channels-last, (N, 32, 32, 3), as Keras gives them.
#ifndef TPUDSL_DATA_CIFAR10_HPP
#define TPUDSL_DATA_CIFAR10_HPP

#include <tpudsl/data/fashion_mnist.hpp>
#include <tpudsl/data/idx.hpp>
#include <tpudsl/detail/text.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tpudsl::data::cifar10 {

inline constexpr std::size_t record_bytes = 3073;
inline constexpr std::size_t records_per_file = 10000;

/// Where the data is looked for: $TPUDSL_CIFAR10_DIR, else ./cifar-10-batches-bin.
inline std::string
default_directory()
{
    if (const char* env = std::getenv("TPUDSL_CIFAR10_DIR"); env && *env)
        return env;
    return "cifar-10-batches-bin";
}

/// Reads one batch file; appends its images (channels-last) and labels to `split`. Refuses a file
/// whose size is not a whole number of records, or a label above 9, naming the file and record, and
/// a directory or device where the file should be; `split` is left as it was on any error.
[[gnu::cold]] inline void
read_batch(const std::string& path, image_split& split)
{
    const auto size = static_cast<std::size_t>(detail::regular_file_size(path));
    if (split.count > 0 && (split.rows != 32 || split.cols != 32))
        throw std::invalid_argument(tpudsl::detail::concat({"tpudsl::data::cifar10::read_batch: the split holds ",
                                                            std::to_string(split.rows), " x ",
                                                            std::to_string(split.cols),
                                                            " images, not CIFAR-10's 32 x 32"}));
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: cannot open '", path, "'"}));
    if (size == 0 || size % record_bytes != 0)
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path, "' holds ", std::to_string(size),
                                                         " bytes, not a whole number of 3,073-byte records (expected ",
                                                         std::to_string(records_per_file * record_bytes), ")"}));
    const std::size_t n = size / record_bytes;
    std::vector<unsigned char> record(record_bytes);
    std::vector<std::uint8_t> images(n * 3072), labels(n);   // appended only once all of it is read
    for (std::size_t r = 0; r < n; ++r) {
        if (!in.read(reinterpret_cast<char*>(record.data()), record_bytes))
            throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path, "' is truncated at record ",
                                                             std::to_string(r)}));
        if (record[0] > 9)
            throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path, "': label ",
                                                             std::to_string(record[0]), " at record ",
                                                             std::to_string(r), " is outside [0, 10)"}));
        labels[r] = record[0];
        std::uint8_t* img = images.data() + r * 3072;
        for (std::size_t p = 0; p < 1024; ++p)       // planar RGB -> (32, 32, 3)
            for (std::size_t c = 0; c < 3; ++c)
                img[p * 3 + c] = record[1 + c * 1024 + p];
    }
    split.images.reserve(split.images.size() + images.size());
    split.labels.reserve(split.labels.size() + labels.size());
    split.images.insert(split.images.end(), images.begin(), images.end());
    split.labels.insert(split.labels.end(), labels.begin(), labels.end());
    split.rows = split.cols = 32;
    split.count += n;
}

/// `cifar10.load_data()`: 50,000 training images from data_batch_1..5.bin, 10,000 test images
/// from test_batch.bin.
[[gnu::cold]] inline image_dataset
load_data(const std::string& dir = default_directory())
{
    const std::string how = "download the CIFAR-10 binary version (cifar-10-binary.tar.gz), unpack it, and point "
                            "TPUDSL_CIFAR10_DIR (or --data) at its cifar-10-batches-bin directory";
    image_dataset d;
    for (int b = 1; b <= 5; ++b) {
        const std::string name = "data_batch_" + std::to_string(b) + ".bin";
        read_batch(find_file(dir, {name.c_str()}, how), d.train);
    }
    read_batch(find_file(dir, {"test_batch.bin"}, how), d.test);
    return d;
}

} // namespace tpudsl::data::cifar10

#endif // !TPUDSL_DATA_CIFAR10_HPP
