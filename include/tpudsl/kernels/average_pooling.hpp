/// @file Defines average pooling over a compile-time window geometry, forward and backward.
#ifndef TPUDSL_KERNELS_AVERAGE_POOLING_HPP
#define TPUDSL_KERNELS_AVERAGE_POOLING_HPP

#include <tpudsl/detail/simd.hpp>
#include <tpudsl/kernels/window_geometry.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace tpudsl::kernels {

namespace detail {

/// The input range [lo, hi) that output `o` of a window `k` with stride `s` reads along an axis of
/// length `in` padded with `pad` before it: the real elements only.
struct window_span {
    std::size_t lo, hi;
};

[[nodiscard]] constexpr window_span
real_span(std::size_t o, std::size_t s, std::size_t k, std::size_t pad, std::size_t in) noexcept
{
    const std::size_t start = o * s;   // in padded coordinates
    const std::size_t lo = std::max(start, pad), hi = std::min(start + k, pad + in);
    return hi > lo ? window_span{lo - pad, hi - pad} : window_span{0, 0};
}

/// to[c] = from[c] (add: to[c] += from[c]) over C channels.
template <std::size_t C, bool Add>
inline void
copy_or_add(const float* from, float* to) noexcept
{
    using tpudsl::detail::simd::vfloat;
    constexpr std::size_t W = vfloat::size;
    constexpr std::size_t vector_end = C / W * W;
    for (std::size_t c = 0; c < vector_end; c += W) {
        if constexpr (Add)
            (vfloat::load(to + c) + vfloat::load(from + c)).store(to + c);
        else
            vfloat::load(from + c).store(to + c);
    }
    if constexpr (vector_end < C) {
        for (std::size_t c = vector_end; c < C; ++c) {
            if constexpr (Add)
                to[c] += from[c];
            else
                to[c] = from[c];
        }
    }
}

/// to[c] = from[c] / n (add: to[c] += from[c] / n) over C channels.
template <std::size_t C, bool Add>
inline void
divided(const float* from, float n, float* to) noexcept
{
    using tpudsl::detail::simd::vfloat;
    constexpr std::size_t W = vfloat::size;
    constexpr std::size_t vector_end = C / W * W;
    const vfloat nv = vfloat::broadcast(n);
    for (std::size_t c = 0; c < vector_end; c += W) {
        const vfloat q = vfloat::load(from + c) / nv;
        (Add ? vfloat::load(to + c) + q : q).store(to + c);
    }
    if constexpr (vector_end < C) {
        for (std::size_t c = vector_end; c < C; ++c)
            to[c] = Add ? to[c] + from[c] / n : from[c] / n;
    }
}

} // namespace detail

/// y(out_h, out_w, channels) <- the mean of each window of x, per channel, over the window's real
/// elements only: under "same" padding the padded positions are not counted (Keras' average pooling).
template <window_geometry G>
inline void
average_pool_forward(const float* x, float* y) noexcept
{
    constexpr std::size_t C = G.channels;
    for (std::size_t oh = 0; oh < G.out_h; ++oh) {
        const auto rows = detail::real_span(oh, G.s_h, G.k_h, G.pad_top, G.in_h);
        for (std::size_t ow = 0; ow < G.out_w; ++ow) {
            const auto cols = detail::real_span(ow, G.s_w, G.k_w, G.pad_left, G.in_w);
            float* yo = y + (oh * G.out_w + ow) * C;   // (C) <- the window's sum, then its mean
            std::memset(yo, 0, C * sizeof(float));
            for (std::size_t ih = rows.lo; ih < rows.hi; ++ih)
                for (std::size_t iw = cols.lo; iw < cols.hi; ++iw)
                    detail::copy_or_add<C, true>(x + (ih * G.in_w + iw) * C, yo);
            const auto n = static_cast<float>((rows.hi - rows.lo) * (cols.hi - cols.lo));
            detail::divided<C, false>(yo, n, yo);
        }
    }
}

/// dx <- dy / n spread over the n real elements of each window (summed where windows overlap).
/// Windows that tile the input each own their elements: every element of dx is written once, and the
/// rows and columns past the last window are cleared. Other windows clear dx and add.
template <window_geometry G>
inline void
average_pool_backward(const float* dy, float* dx) noexcept
{
    constexpr std::size_t C = G.channels;
    constexpr bool tile = windows_tile<G>;
    if constexpr (tile) {
        constexpr std::size_t covered_h = G.out_h * G.k_h, covered_w = G.out_w * G.k_w;
        if constexpr (covered_w < G.in_w)
            for (std::size_t ih = 0; ih < covered_h; ++ih)
                std::memset(dx + (ih * G.in_w + covered_w) * C, 0, (G.in_w - covered_w) * C * sizeof(float));
        if constexpr (covered_h < G.in_h)
            std::memset(dx + covered_h * G.in_w * C, 0, (G.in_h - covered_h) * G.in_w * C * sizeof(float));
    } else {
        std::memset(dx, 0, G.in_size() * sizeof(float));
    }
    for (std::size_t oh = 0; oh < G.out_h; ++oh) {
        const auto rows = detail::real_span(oh, G.s_h, G.k_h, G.pad_top, G.in_h);
        for (std::size_t ow = 0; ow < G.out_w; ++ow) {
            const auto cols = detail::real_span(ow, G.s_w, G.k_w, G.pad_left, G.in_w);
            const float* g = dy + (oh * G.out_w + ow) * C;   // (C)
            const auto n = static_cast<float>((rows.hi - rows.lo) * (cols.hi - cols.lo));
            for (std::size_t ih = rows.lo; ih < rows.hi; ++ih)
                for (std::size_t iw = cols.lo; iw < cols.hi; ++iw)
                    detail::divided<C, !tile>(g, n, dx + (ih * G.in_w + iw) * C);
        }
    }
}

} // namespace tpudsl::kernels

#endif // !TPUDSL_KERNELS_AVERAGE_POOLING_HPP
