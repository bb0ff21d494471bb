/// @file Counter-based random numbers (private): a value is a pure function of (seed, counters), so
/// a sample's dropout mask or a weight's initial value does not depend on threads, replicas or order.
#ifndef TPUDSL_DETAIL_RANDOM_HPP
#define TPUDSL_DETAIL_RANDOM_HPP

#include <cstdint>

namespace tpudsl::detail {

/// SplitMix64's finaliser: a bijective mix of 64 bits.
[[nodiscard]] constexpr std::uint64_t
mix64(std::uint64_t z) noexcept
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/// 64 random bits for (seed, a, b, c).
[[nodiscard]] constexpr std::uint64_t
hash4(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) noexcept
{
    return mix64(mix64(mix64(mix64(seed) ^ a) ^ b) ^ c);
}

/// A float uniform in [0, 1) from 64 random bits (24 of them: every value is exact).
[[nodiscard]] constexpr float
unit_float(std::uint64_t bits) noexcept
{
    return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);
}

} // namespace tpudsl::detail

#endif // !TPUDSL_DETAIL_RANDOM_HPP
