// Helpers of the kernel tests: random inputs and a closeness check scaled by the magnitude of the sum.
#ifndef TPUDSL_TESTS_UNIT_KERNEL_CHECKS_HPP
#define TPUDSL_TESTS_UNIT_KERNEL_CHECKS_HPP

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace kernel_checks {

inline std::vector<float>
random_vector(std::size_t n, std::uint32_t seed)
{
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v)
        x = u(gen);
    return v;
}

inline void
check_close(const std::vector<float>& got, const std::vector<float>& want, const std::vector<double>& scale)
{
    REQUIRE(got.size() == want.size());
    std::size_t bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (std::abs(got[i] - want[i]) > 1e-5 * (scale[i] + 1e-6))
            ++bad;
    CHECK(bad == 0);
}

} // namespace kernel_checks

#endif // !TPUDSL_TESTS_UNIT_KERNEL_CHECKS_HPP
