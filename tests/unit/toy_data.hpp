// A learnable toy problem for the training tests: 4 features, the class is the index of the largest of
// the first three.
#ifndef TPUDSL_TESTS_UNIT_TOY_DATA_HPP
#define TPUDSL_TESTS_UNIT_TOY_DATA_HPP

#include <xtensor/xtensor.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <random>

namespace tpudsl_tests {

struct toy_data {
    xt::xtensor<float, 2> x;
    xt::xtensor<std::int32_t, 1> y;
};

/// n samples drawn from `seed`: features uniform in [-1, 1), or with `whole_numbers` whole numbers in
/// [0, 255] (which uint8 arrays hold exactly).
inline toy_data
make_toy(std::size_t n, std::uint32_t seed, bool whole_numbers = false)
{
    toy_data d{xt::xtensor<float, 2>(std::array<std::size_t, 2>{n, 4}),
               xt::xtensor<std::int32_t, 1>(std::array<std::size_t, 1>{n})};
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::uniform_int_distribution<int> w(0, 255);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < 4; ++j)
            d.x(i, j) = whole_numbers ? static_cast<float>(w(gen)) : u(gen);
        d.y(i) = static_cast<std::int32_t>(std::max_element(&d.x(i, 0), &d.x(i, 0) + 3) - &d.x(i, 0));
    }
    return d;
}

} // namespace tpudsl_tests

#endif
