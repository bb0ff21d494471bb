/// @file Synthetic stand-ins for the seed data sets, used when the real data is not on the machine:
/// the same shapes, and a learnable signal (each class brightens its own band of rows, or draws its
/// tokens from its own range). The examples announce them on their first line.
#ifndef TPUDSL_EXAMPLES_COMMON_SYNTHETIC_HPP
#define TPUDSL_EXAMPLES_COMMON_SYNTHETIC_HPP

#include <tpudsl/data/fashion_mnist.hpp>
#include <tpudsl/data/sequences.hpp>

#include <cstddef>
#include <cstdint>
#include <random>

namespace seeds {

/// n images of (rows, cols, channels) bytes over 10 classes.
inline tpudsl::data::image_split
synthetic_images(std::size_t n, std::size_t rows, std::size_t cols, std::size_t channels, std::uint32_t seed)
{
    tpudsl::data::image_split s;
    s.count = n;
    s.rows = rows;
    s.cols = cols;
    s.images.resize(n * rows * cols * channels);
    s.labels.resize(n);
    std::mt19937 gen(seed);
    for (std::size_t i = 0; i < n; ++i) {
        const auto label = static_cast<std::uint8_t>(gen() % 10);
        s.labels[i] = label;
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < cols * channels; ++c) {
                const bool band = r * 10 / rows == label && (c % channels) == label % channels;
                s.images[(i * rows + r) * cols * channels + c] = static_cast<std::uint8_t>(gen() % 150 + (band ? 100 : 0));
            }
    }
    return s;
}

/// n token sequences over `classes` topics: a topic draws most tokens from its own range.
inline tpudsl::data::sequence_split
synthetic_sequences(std::size_t n, std::size_t classes, std::int32_t vocab, std::uint32_t seed)
{
    tpudsl::data::sequence_split s;
    std::mt19937 gen(seed);
    for (std::size_t i = 0; i < n; ++i) {
        const auto label = static_cast<std::int32_t>(gen() % classes);
        s.y.push_back(label);
        std::vector<std::int32_t> tokens{1};
        const std::size_t len = 20 + gen() % 280;
        for (std::size_t t = 0; t < len; ++t)
            tokens.push_back(gen() % 4 == 0 ? static_cast<std::int32_t>(4 + gen() % (vocab - 4))
                                            : static_cast<std::int32_t>(100 + label * 40 + gen() % 40));
        s.x.push_back(std::move(tokens));
    }
    return s;
}

} // namespace seeds

#endif
