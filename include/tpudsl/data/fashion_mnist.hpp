/// @file Loads Fashion-MNIST and MNIST (the same IDX format) from its IDX .gz files, as Keras'
/// `fashion_mnist.load_data()`: uint8 images (N, 28, 28) and labels (N).
#ifndef TPUDSL_DATA_FASHION_MNIST_HPP
#define TPUDSL_DATA_FASHION_MNIST_HPP

#include <tpudsl/data/idx.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace tpudsl::data {

/// One split: images (count x 28 x 28 bytes) and labels (count bytes).
struct image_split {
    std::size_t count = 0, rows = 0, cols = 0;
    std::vector<std::uint8_t> images;
    std::vector<std::uint8_t> labels;
};

struct image_dataset {
    image_split train, test;
};

namespace detail {
inline image_split
load_split(const std::string& images_path, const std::string& labels_path)
{
    idx_array images = read_idx(images_path, 3);
    idx_array labels = read_idx(labels_path, 1);
    if (images.dims[0] != labels.dims[0])
        throw std::runtime_error("tpudsl: '" + images_path + "' holds " + std::to_string(images.dims[0]) +
                                 " images but '" + labels_path + "' holds " + std::to_string(labels.dims[0]) +
                                 " labels");
    for (std::size_t i = 0; i < labels.bytes.size(); ++i)
        if (labels.bytes[i] > 9)
            throw std::runtime_error("tpudsl: '" + labels_path + "': label " + std::to_string(labels.bytes[i]) +
                                     " at record " + std::to_string(i) + " is outside [0, 10)");
    return {images.dims[0], images.dims[1], images.dims[2], std::move(images.bytes), std::move(labels.bytes)};
}
} // namespace detail

namespace detail {
/// The four IDX files of an MNIST-format data set in `dir`, plain or .gz.
inline image_dataset
load_idx_dataset(const std::string& dir, const std::string& how_to_get)
{
    auto file = [&](const char* base) {
        const std::string gz = std::string(base) + ".gz";
        return find_file(dir, {gz.c_str(), base}, how_to_get);
    };
    image_dataset d;
    d.train = load_split(file("train-images-idx3-ubyte"), file("train-labels-idx1-ubyte"));
    d.test = load_split(file("t10k-images-idx3-ubyte"), file("t10k-labels-idx1-ubyte"));
    return d;
}
} // namespace detail

namespace fashion_mnist {

/// Where the data is looked for: $TPUDSL_FASHION_MNIST_DIR, else Debian's `dataset-fashion-mnist`.
inline std::string
default_directory()
{
    if (const char* env = std::getenv("TPUDSL_FASHION_MNIST_DIR"); env && *env)
        return env;
    return "/usr/share/datasets/fashion-mnist";
}

/// Reads train-images-idx3-ubyte(.gz), train-labels-idx1-ubyte(.gz), t10k-images-idx3-ubyte(.gz),
/// t10k-labels-idx1-ubyte(.gz) from `dir`.
inline image_dataset
load_data(const std::string& dir = default_directory())
{
    return detail::load_idx_dataset(dir, "install the Debian package dataset-fashion-mnist, or point "
                                         "TPUDSL_FASHION_MNIST_DIR (or --data) at a directory with the four IDX files");
}

} // namespace fashion_mnist

namespace mnist {

/// Where the data is looked for: $TPUDSL_MNIST_DIR, else ./mnist.
inline std::string
default_directory()
{
    if (const char* env = std::getenv("TPUDSL_MNIST_DIR"); env && *env)
        return env;
    return "mnist";
}

/// `mnist.load_data()` from the four IDX files (the same names as Fashion-MNIST's) in `dir`.
inline image_dataset
load_data(const std::string& dir = default_directory())
{
    return detail::load_idx_dataset(dir, "download the four MNIST IDX files (train-images-idx3-ubyte.gz, ...) and point "
                                         "TPUDSL_MNIST_DIR (or --data) at their directory");
}

} // namespace mnist

} // namespace tpudsl::data

#endif // !TPUDSL_DATA_FASHION_MNIST_HPP
