/// @file Synthetic stand-ins for the seed data sets, used when the real data is not on the machine:
/// the same shapes, and a learnable signal (each class brightens its own band of rows, or draws its
/// tokens from its own range). The examples announce them on their first line. And the Reuters
/// examples' data and labels, loaded or stood in.
#ifndef TPUDSL_EXAMPLES_COMMON_SYNTHETIC_HPP
#define TPUDSL_EXAMPLES_COMMON_SYNTHETIC_HPP

#include "common/data.hpp"

#include <tpudsl/data/fashion_mnist.hpp>
#include <tpudsl/data/sequences.hpp>

#include <xtensor/xtensor.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>

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

/// Keras' Reuters newswires from `dir` (tools/export_keras_dataset.py's files), or, where they are
/// absent, the stand-in of the same sizes (8,982 training and 2,246 test sequences over 46 topics and
/// 30,982 token ids); the first line printed says which.
inline tpudsl::data::sequence_dataset
reuters_or_stand_in(const std::string& dir)
{
    return load_or_stand_in(
        "Keras' Reuters newswires", [&] { return tpudsl::data::reuters::load_data(dir); },
        [] { return tpudsl::data::sequence_dataset{synthetic_sequences(8982, 46, 30982, 1),
                                                   synthetic_sequences(2246, 46, 30982, 2)}; });
}

/// A split's topics as the (n) array fit takes.
inline xt::xtensor<std::int32_t, 1>
topic_labels(const tpudsl::data::sequence_split& s)
{
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{s.y.size()});
    std::copy(s.y.begin(), s.y.end(), y.begin());
    return y;
}

} // namespace seeds

#endif
