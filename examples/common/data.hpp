/// @file What the seed examples share about data: the real set or an announced stand-in, and
/// images as float arrays in [0, 1].
#ifndef TPUDSL_EXAMPLES_COMMON_DATA_HPP
#define TPUDSL_EXAMPLES_COMMON_DATA_HPP

#include <tpudsl/data/fashion_mnist.hpp>
#include <tpudsl/data/sequences.hpp>

#include <xtensor/xtensor.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace seeds {

inline std::string
describe(const tpudsl::data::image_dataset& d)
{
    return std::to_string(d.train.count) + " training, " + std::to_string(d.test.count) + " test images";
}

inline std::string
describe(const tpudsl::data::sequence_dataset& d)
{
    return std::to_string(d.train.x.size()) + " training, " + std::to_string(d.test.x.size()) + " test sequences";
}

/// The real data set from `load()`, or, when it is missing or unreadable, `stand_in()`; either way the
/// first line printed says which.
template <class Load, class StandIn>
auto
load_or_stand_in(const std::string& name, Load&& load, StandIn&& stand_in) -> decltype(load())
{
    try {
        auto d = load();
        std::cout << "Data: " << name << " (" << describe(d) << ")\n";
        return d;
    } catch (const std::runtime_error& e) {
        auto d = stand_in();
        std::cout << "Data: SYNTHETIC stand-in for " << name << " (" << describe(d) << "): " << e.what() << '\n';
        return d;
    }
}

/// The first `limit` images of a split (all of them when 0), bytes / 255, shaped (n, Dims...).
template <std::size_t... Dims>
xt::xtensor<float, sizeof...(Dims) + 1>
images_as_floats(const tpudsl::data::image_split& s, std::size_t limit = 0)
{
    constexpr std::size_t size = (std::size_t{1} * ... * Dims);
    const std::size_t n = limit ? std::min(limit, s.count) : s.count;
    xt::xtensor<float, sizeof...(Dims) + 1> x(std::array<std::size_t, sizeof...(Dims) + 1>{n, Dims...});
    for (std::size_t i = 0; i < n * size; ++i)
        x.data()[i] = static_cast<float>(s.images[i]) / 255.0f;
    return x;
}

/// The first n labels of a split, as int32 class ids.
inline xt::xtensor<std::int32_t, 1>
labels_as_ids(const tpudsl::data::image_split& s, std::size_t n)
{
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{n});
    std::copy_n(s.labels.begin(), n, y.begin());
    return y;
}

} // namespace seeds

#endif
