/// @file Defines what the recurrent layers' ops share: the moves between a batch's sample-major and
/// time-major layouts, and the gates' element-wise loops on vectors.
#ifndef TPUDSL_LAYERS_DETAIL_RECURRENT_HPP
#define TPUDSL_LAYERS_DETAIL_RECURRENT_HPP

#include <tpudsl/detail/simd.hpp>

#include <cstddef>
#include <cstring>

namespace tpudsl::detail::recurrent {

using simd::vfloat;

/// Moves n samples of T rows of D floats between the sample-major layout (s, t, :) and the
/// time-major one (t, s, :): to time-major when ToTimeMajor, back to sample-major otherwise.
template <std::size_t T, std::size_t D, bool ToTimeMajor>
inline void
relayout(const float* from, float* to, std::size_t n) noexcept
{
    for (std::size_t s = 0; s < n; ++s)
        for (std::size_t t = 0; t < T; ++t) {
            const std::size_t sample_major = (s * T + t) * D, time_major = (t * n + s) * D;
            std::memcpy(to + (ToTimeMajor ? time_major : sample_major), from + (ToTimeMajor ? sample_major : time_major),
                        D * sizeof(float));
        }
}

/// `count` lanes from p (all of a vector, or the first count < size of them, the others 0).
[[gnu::always_inline]] inline vfloat
load(const float* p, std::size_t count) noexcept
{
    return count == vfloat::size ? vfloat::load(p) : vfloat::load_n(p, count);
}

[[gnu::always_inline]] inline void
store(vfloat v, float* p, std::size_t count) noexcept
{
    if (count == vfloat::size)
        v.store(p);
    else
        v.store_n(p, count);
}

[[gnu::always_inline]] inline vfloat
sigmoid(vfloat x) noexcept
{
    const vfloat one = vfloat::broadcast(1.0f);
    return one / (one + exp(vfloat::broadcast(0.0f) - x));
}

/// Calls f(u, lanes) over [0, U) a vector at a time, the last one partial when U is not a multiple
/// of the width.
template <std::size_t U, class F>
[[gnu::always_inline]] inline void
for_units(F&& f) noexcept
{
    constexpr std::size_t W = vfloat::size;
    for (std::size_t u = 0; u + W <= U; u += W)
        f(u, W);
    if constexpr (U % W != 0)
        f(U / W * W, U % W);
}

} // namespace tpudsl::detail::recurrent

#endif // !TPUDSL_LAYERS_DETAIL_RECURRENT_HPP
