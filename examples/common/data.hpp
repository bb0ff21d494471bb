/// @file What the seed examples share about data: the real set or an announced stand-in.
#ifndef TPUDSL_EXAMPLES_COMMON_DATA_HPP
#define TPUDSL_EXAMPLES_COMMON_DATA_HPP

#include <tpudsl/data/fashion_mnist.hpp>
#include <tpudsl/data/idx.hpp>
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

/// The real data set from `load()`, or, only when it is absent (no file of it where it is looked
/// for), `stand_in()`; either way the first line printed says which. A data set that is there but
/// cannot be read (corrupt, truncated, the wrong shape) is an error, never replaced silently.
template <class Load, class StandIn>
auto
load_or_stand_in(const std::string& name, Load&& load, StandIn&& stand_in) -> decltype(load())
{
    try {
        auto d = load();
        std::cout << "Data: " << name << " (" << describe(d) << ")\n";
        return d;
    } catch (const tpudsl::data::missing_data_set& e) {
        auto d = stand_in();
        std::cout << "Data: SYNTHETIC stand-in for " << name << " (" << describe(d) << "): " << e.what() << '\n';
        return d;
    }
}

} // namespace seeds

#endif
