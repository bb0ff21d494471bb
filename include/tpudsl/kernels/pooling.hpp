/// @file Defines max pooling over a compile-time window geometry, forward (with argmax) and backward.
#ifndef TPUDSL_KERNELS_POOLING_HPP
#define TPUDSL_KERNELS_POOLING_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/detail/simd.hpp>
#include <tpudsl/kernels/window_geometry.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tpudsl::kernels {

namespace detail {
/// y, argmax <- the window element at `base` where it is larger: xsimd selects over the channels
/// (real images make a branch here unpredictable).
template <std::size_t C>
inline void
take_larger(const float* x, float* y, float* argmax, std::size_t base) noexcept
{
    using tpudsl::detail::simd::vfloat;
    constexpr std::size_t W = vfloat::size;
    constexpr std::size_t vector_end = C / W * W;   // compile-time bounds: no dead tail loop to warn about
    for (std::size_t c = 0; c < vector_end; c += W) {
        vfloat yv = vfloat::load(y + c), av = vfloat::load(argmax + c);
        take_if_greater(vfloat::load(x + c), yv, vfloat::ramp(static_cast<float>(base + c)), av);
        yv.store(y + c);
        av.store(argmax + c);
    }
    if constexpr (vector_end < C) {
        for (std::size_t c = vector_end; c < C; ++c) {
            const bool greater = x[c] > y[c];
            y[c] = greater ? x[c] : y[c];
            argmax[c] = greater ? static_cast<float>(base + c) : argmax[c];
        }
    }
}

/// y, argmax <- the window element at `base` (the first real one of a window).
template <std::size_t C>
inline void
take_first(const float* x, float* y, float* argmax, std::size_t base) noexcept
{
    using tpudsl::detail::simd::vfloat;
    constexpr std::size_t W = vfloat::size;
    constexpr std::size_t vector_end = C / W * W;
    for (std::size_t c = 0; c < vector_end; c += W) {
        vfloat::load(x + c).store(y + c);
        vfloat::ramp(static_cast<float>(base + c)).store(argmax + c);
    }
    if constexpr (vector_end < C) {
        for (std::size_t c = vector_end; c < C; ++c) {
            y[c] = x[c];
            argmax[c] = static_cast<float>(base + c);
        }
    }
}

/// dx <- 0 on the columns that no window of G reads, in `rows` input rows from dx on.
template <window_geometry G>
inline void
clear_uncovered_columns(float* dx, std::size_t rows) noexcept
{
    constexpr std::size_t C = G.channels, covered_w = G.out_w * G.k_w;
    if constexpr (covered_w < G.in_w)
        for (std::size_t ih = 0; ih < rows; ++ih)
            std::memset(dx + (ih * G.in_w + covered_w) * C, 0, (G.in_w - covered_w) * C * sizeof(float));
}

/// dx <- 0 on the rows below the last row of windows of G.
template <window_geometry G>
inline void
clear_uncovered_rows(float* dx) noexcept
{
    constexpr std::size_t covered_h = G.out_h * G.k_h;
    if constexpr (covered_h < G.in_h)
        std::memset(dx + covered_h * G.in_w * G.channels, 0, (G.in_h - covered_h) * G.in_w * G.channels * sizeof(float));
}

/// dx <- 0 on the rows and columns that no window of G reads (windows_tile<G>: the others are written
/// once each by the backward passes).
template <window_geometry G>
inline void
clear_uncovered(float* dx) noexcept
{
    clear_uncovered_columns<G>(dx, G.out_h * G.k_h);
    clear_uncovered_rows<G>(dx);
}

} // namespace detail

/// y(out_h, out_w, channels) <- the maximum of each window of x, per channel; padded positions are
/// ignored (TensorFlow's "same" max pooling). `argmax` receives the flat input index of each maximum
/// (exact in a float up to 2^24), the first one on ties.
template <window_geometry G>
inline void
max_pool_forward(const float* x, float* y, float* argmax) noexcept
{
    constexpr std::size_t C = G.channels;
    using tpudsl::detail::simd::vfloat;
    constexpr std::size_t W = vfloat::size;
    if constexpr (G.windows_inside() && C % W == 0 && G.k_h * G.k_w <= 16) {
        // Every window inside the input (no padding): each vector of channels keeps its maximum and
        // argmax in registers over the window (the same comparisons in the same order as below).
        const vfloat lanes = vfloat::ramp(0.0f);
        for (std::size_t oh = 0; oh < G.out_h; ++oh)
            for (std::size_t ow = 0; ow < G.out_w; ++ow) {
                const std::size_t start = (oh * G.s_h * G.in_w + ow * G.s_w) * C;
                const std::size_t o = (oh * G.out_w + ow) * C;
                for (std::size_t c = 0; c < C; c += W) {
                    const vfloat first = vfloat::broadcast(static_cast<float>(start + c)) + lanes;
                    vfloat m = vfloat::load(x + start + c), am = first;
#pragma GCC unroll 16
                    for (std::size_t e = 1; e < G.k_h * G.k_w; ++e) {
                        const std::size_t off = ((e / G.k_w) * G.in_w + e % G.k_w) * C;
                        take_if_greater(vfloat::load(x + start + off + c), m,
                                        first + vfloat::broadcast(static_cast<float>(off)), am);
                    }
                    m.store(y + o + c);
                    am.store(argmax + o + c);
                }
            }
        return;
    }
    for (std::size_t oh = 0; oh < G.out_h; ++oh)
        for (std::size_t ow = 0; ow < G.out_w; ++ow) {
            float* yo = y + (oh * G.out_w + ow) * C;
            float* ao = argmax + (oh * G.out_w + ow) * C;
            bool first = true;   // the first real element seeds each maximum, so NaN cannot leave it unset
            for (std::size_t kh = 0; kh < G.k_h; ++kh) {
                const std::size_t ih = oh * G.s_h + kh;
                if (ih < G.pad_top || ih - G.pad_top >= G.in_h)
                    continue;
                for (std::size_t kw = 0; kw < G.k_w; ++kw) {
                    const std::size_t iw = ow * G.s_w + kw;
                    if (iw < G.pad_left || iw - G.pad_left >= G.in_w)
                        continue;
                    const std::size_t base = ((ih - G.pad_top) * G.in_w + (iw - G.pad_left)) * C;
                    if (first) {
                        detail::take_first<C>(x + base, yo, ao, base);
                        first = false;
                    } else {
                        detail::take_larger<C>(x + base, yo, ao, base);
                    }
                }
            }
        }
}

/// dx <- dy routed to the argmax of each window (summed where windows overlap).
///
/// Windows that tile the input (stride = window, all inside it) each own their elements: every element
/// of dx is written once, dy or 0 by a vector compare with the argmax, with no clearing pass and no
/// scatter; rows and columns past the last window are cleared. Other windows clear dx and add.
template <window_geometry G>
inline void
max_pool_backward(const float* dy, const float* argmax, float* dx) noexcept
{
    constexpr std::size_t C = G.channels;
    if constexpr (windows_tile<G>) {
        using tpudsl::detail::simd::vfloat;
        constexpr std::size_t W = vfloat::size;
        constexpr std::size_t vector_end = C / W * W;
        constexpr std::size_t covered_w = G.out_w * G.k_w;   // columns that some window reads
        for (std::size_t oh = 0; oh < G.out_h; ++oh) {
            for (std::size_t kh = 0; kh < G.k_h; ++kh) {
                const std::size_t ih = oh * G.k_h + kh;
                for (std::size_t iw = 0; iw < covered_w; ++iw) {
                    const std::size_t o = (oh * G.out_w + iw / G.k_w) * C;
                    const std::size_t base = (ih * G.in_w + iw) * C;
                    for (std::size_t c = 0; c < vector_end; c += W)
                        where_equal(vfloat::load(argmax + o + c), vfloat::ramp(static_cast<float>(base + c)),
                                    vfloat::load(dy + o + c))
                            .store(dx + base + c);
                    for (std::size_t c = vector_end; c < C; ++c)
                        dx[base + c] = argmax[o + c] == static_cast<float>(base + c) ? dy[o + c] : 0.0f;
                }
            }
        }
        detail::clear_uncovered<G>(dx);
    } else {
        std::memset(dx, 0, G.in_size() * sizeof(float));
        for (std::size_t i = 0; i < G.positions() * C; ++i)
            dx[static_cast<std::size_t>(argmax[i])] += dy[i];
    }
}

/// True when max_pool_backward_through can run: windows that tile, whole vectors of channels, and an
/// activation whose derivative is a select (Relu) or nothing (Linear).
template <window_geometry G, class Act>
inline constexpr bool pool_backward_through_act =
    windows_tile<G> && G.channels % tpudsl::detail::simd::vfloat::size == 0 &&
    EpilogueActivation<Act>;

namespace detail {
/// Window rows [oh0, oh1) of max_pool_backward_through: g = act'(y) dy added to the running sums
/// (even windows in sums[0], odd in sums[1]) and routed to each window's argmax, dx holding input
/// rows [oh0 k_h, oh1 k_h) from its start (the columns past the last window cleared too).
template <window_geometry G, class Act>
inline void
backward_through_rows(const float* y, const float* dy, const float* argmax, float* dx, float (&sums)[2][G.channels],
                      std::size_t oh0, std::size_t oh1) noexcept
{
    using tpudsl::detail::simd::vfloat;
    constexpr std::size_t C = G.channels, W = vfloat::size, E = G.k_h * G.k_w;
    const vfloat zero = vfloat::broadcast(0.0f), ramp = vfloat::ramp(0.0f);
    for (std::size_t oh = oh0; oh < oh1; ++oh) {
        for (std::size_t ow = 0; ow < G.out_w; ++ow) {
            const std::size_t q = oh * G.out_w + ow;
            const std::size_t start = (oh * G.k_h * G.in_w + ow * G.k_w) * C;   // in the whole input
            const vfloat at = vfloat::broadcast(static_cast<float>(static_cast<std::int32_t>(start))) + ramp;
            float* to = dx + (start - oh0 * G.k_h * G.in_w * C);
            float* sum = sums[q % 2];
            for (std::size_t c = 0; c < C; c += W) {
                vfloat g = vfloat::load(dy + q * C + c);
                if constexpr (std::is_same_v<Act, Relu>)
                    g = where_greater(vfloat::load(y + q * C + c), zero, g);
                (vfloat::load(sum + c) + g).store(sum + c);
                const vfloat am = vfloat::load(argmax + q * C + c);
#pragma GCC unroll 16
                for (std::size_t e = 0; e < E; ++e) {
                    const std::size_t off = ((e / G.k_w) * G.in_w + e % G.k_w) * C + c;
                    where_equal(am, at + vfloat::broadcast(static_cast<float>(static_cast<std::int32_t>(off))), g)
                        .store(to + off);
                }
            }
        }
        clear_uncovered_columns<G>(dx + (oh - oh0) * G.k_h * G.in_w * C, G.k_h);
    }
}

/// db (+)= sums[0] + sums[1].
template <std::size_t C>
inline void
finish_sums(const float (&sums)[2][C], float* db, bool accumulate) noexcept
{
    using tpudsl::detail::simd::vfloat;
    for (std::size_t c = 0; c < C; c += vfloat::size) {
        const vfloat sum = vfloat::load(sums[0] + c) + vfloat::load(sums[1] + c);
        (accumulate ? vfloat::load(db + c) + sum : sum).store(db + c);
    }
}
} // namespace detail

/// One pass for the three steps after an activation applied to a max pooling's output y:
///   g = act'(y) dy                        (as activation_backward<Act> computes it; dy is not written)
///   db (+)= the column sums of g          (as ops::detail::column_sums adds them: even rows and odd
///                                          rows apart, the two added, then added to db)
///   dx = g routed to each window's argmax (as max_pool_backward<G> writes it)
/// window by window, each g used while in registers: the same bits as the three passes.
template <window_geometry G, class Act>
inline void
max_pool_backward_through(const float* y, const float* dy, const float* argmax, float* dx, float* db,
                          bool accumulate) noexcept
{
    static_assert(pool_backward_through_act<G, Act>);
    alignas(64) float sums[2][G.channels] = {};
    detail::backward_through_rows<G, Act>(y, dy, argmax, dx, sums, 0, G.out_h);
    detail::clear_uncovered_rows<G>(dx);
    detail::finish_sums<G.channels>(sums, db, accumulate);
}

} // namespace tpudsl::kernels

#endif // !TPUDSL_KERNELS_POOLING_HPP
