/// @file Defines im2col and col2im over a compile-time window geometry: a convolution becomes a GEMM
/// of (positions, patch) rows by the (patch, filters) kernel.
#ifndef TPUDSL_KERNELS_IM2COL_HPP
#define TPUDSL_KERNELS_IM2COL_HPP

#include <tpudsl/detail/simd.hpp>
#include <tpudsl/kernels/window_geometry.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace tpudsl::kernels {

/// cols(positions, patch) <- the windows of one sample x(in_h, in_w, channels); padding reads as 0.
template <window_geometry G>
inline void
im2col(const float* x, float* cols) noexcept
{
    constexpr std::size_t C = G.channels;
    for (std::size_t oh = 0; oh < G.out_h; ++oh)
        for (std::size_t ow = 0; ow < G.out_w; ++ow) {
            float* row = cols + (oh * G.out_w + ow) * G.patch();
            for (std::size_t kh = 0; kh < G.k_h; ++kh) {
                const std::size_t ih = oh * G.s_h + kh;   // in padded coordinates
                const std::size_t iw0 = ow * G.s_w;
                if (ih >= G.pad_top && ih - G.pad_top < G.in_h && iw0 >= G.pad_left &&
                    iw0 - G.pad_left + G.k_w <= G.in_w) {
                    // The window's row lies inside: k_w C contiguous floats, a copy of constant length.
                    const float* src = x + ((ih - G.pad_top) * G.in_w + (iw0 - G.pad_left)) * C;
                    float* dst = row + kh * G.k_w * C;
                    for (std::size_t q = 0; q < G.k_w * C; ++q)
                        dst[q] = src[q];
                    continue;
                }
                for (std::size_t kw = 0; kw < G.k_w; ++kw) {
                    const std::size_t iw = ow * G.s_w + kw;
                    float* dst = row + (kh * G.k_w + kw) * C;
                    if (ih < G.pad_top || ih - G.pad_top >= G.in_h || iw < G.pad_left || iw - G.pad_left >= G.in_w)
                        std::memset(dst, 0, C * sizeof(float));
                    else
                        std::memcpy(dst, x + ((ih - G.pad_top) * G.in_w + (iw - G.pad_left)) * C, C * sizeof(float));
                }
            }
        }
}

/// The windows of G without their padding: the geometry of G's zero frame (to_frame), which holds
/// every row and column a window reads (rows and columns past the last window left out).
template <window_geometry G>
inline constexpr window_geometry frame_geometry{(G.out_h - 1) * G.s_h + G.k_h, (G.out_w - 1) * G.s_w + G.k_w,
                                                G.channels, G.k_h, G.k_w, G.s_h, G.s_w, G.out_h, G.out_w, 0, 0};

/// frame(frame_geometry<G>) <- one sample x(in_h, in_w, channels) with its padding written out as
/// zeros: element (r, c) of the frame is x(r - pad_top, c - pad_left), or 0 outside x. A convolution
/// of G reads the same values from its frame as from im2col's rows, without the k_h k_w copies.
template <window_geometry G>
inline void
to_frame(const float* x, float* frame) noexcept
{
    constexpr window_geometry FG = frame_geometry<G>;
    constexpr std::size_t C = G.channels, row = FG.in_w * C;
    // Columns of a frame row: [0, left) zeros, [left, left + inside) from x, the rest zeros.
    constexpr std::size_t left = std::min(G.pad_left, FG.in_w);
    constexpr std::size_t inside = G.pad_left >= FG.in_w ? 0 : std::min(G.in_w, FG.in_w - G.pad_left);
    for (std::size_t r = 0; r < FG.in_h; ++r) {
        float* f = frame + r * row;
        if (r < G.pad_top || r - G.pad_top >= G.in_h) {
            std::fill_n(f, row, 0.0f);
            continue;
        }
        std::fill_n(f, left * C, 0.0f);
        std::copy_n(x + (r - G.pad_top) * G.in_w * C, inside * C, f + left * C);
        std::fill_n(f + (left + inside) * C, row - (left + inside) * C, 0.0f);
    }
}

/// dx(in_h, in_w, channels) <- the sum of every window's gradient in dcols(positions, patch).
template <window_geometry G>
inline void
col2im(const float* dcols, float* dx) noexcept
{
    constexpr std::size_t C = G.channels;
    using tpudsl::detail::simd::vfloat;
    if constexpr (G.in_h == 1 && G.k_h == 1 && G.windows_inside() && G.k_w >= G.s_w &&
                  G.s_w * C % vfloat::size != 0) {
        // 1-D windows inside the input (overlapping or touching), each starting at another alignment.
        // Window p covers dx[p s C, p s C + k C), where it reads row p of dcols, so a vector of dx
        // sums, in registers, the few windows that meet it, each a masked load of contiguous floats:
        // no clearing pass, and no add that reads what the window before has just stored at another
        // alignment (C = 7 stalled every load on store forwarding). Each
        // element gets +0 plus its windows' values in increasing p, as below: the same bits (a
        // window's masked lanes add +0, which leaves every sum that starts from +0 as it is).
        constexpr std::size_t W = vfloat::size, step = G.s_w * C, span = G.k_w * C, n = G.in_size();
        constexpr std::size_t P = G.out_w;
        for (std::size_t i0 = 0; i0 < n; i0 += W) {
            const std::size_t p_lo = i0 < span ? 0 : (i0 - span) / step + 1;   // first window ending after i0
            const std::size_t p_hi = std::min(P, (i0 + W - 1) / step + 1);      // past the last starting before i0 + W
            vfloat sum = vfloat::broadcast(0.0f);
            for (std::size_t p = p_lo; p < p_hi; ++p) {
                const std::size_t start = p * step;   // window p's first element of dx
                const std::size_t lo = start > i0 ? start - i0 : 0, hi = std::min(W, start + span - i0);
                const float* src = dcols + p * span + i0 - start;
                sum = sum + (lo == 0 && hi == W ? vfloat::load(src) : vfloat::load_lanes(src, lo, hi));
            }
            if (i0 + W <= n)
                sum.store(dx + i0);
            else
                sum.store_n(dx + i0, n - i0);
        }
        return;
    }
    std::memset(dx, 0, G.in_size() * sizeof(float));
    for (std::size_t oh = 0; oh < G.out_h; ++oh)
        for (std::size_t ow = 0; ow < G.out_w; ++ow) {
            const float* row = dcols + (oh * G.out_w + ow) * G.patch();
            for (std::size_t kh = 0; kh < G.k_h; ++kh) {
                const std::size_t ih = oh * G.s_h + kh;
                if (ih < G.pad_top || ih - G.pad_top >= G.in_h)
                    continue;
                const std::size_t iw0 = ow * G.s_w;
                if (iw0 >= G.pad_left && iw0 - G.pad_left + G.k_w <= G.in_w) {
                    // The window's row lies inside: k_w C contiguous floats, one add of constant length.
                    float* dst = dx + ((ih - G.pad_top) * G.in_w + (iw0 - G.pad_left)) * C;
                    const float* src = row + kh * G.k_w * C;
                    for (std::size_t q = 0; q < G.k_w * C; ++q)
                        dst[q] += src[q];
                    continue;
                }
                for (std::size_t kw = 0; kw < G.k_w; ++kw) {
                    const std::size_t iw = ow * G.s_w + kw;
                    if (iw < G.pad_left || iw - G.pad_left >= G.in_w)
                        continue;
                    float* dst = dx + ((ih - G.pad_top) * G.in_w + (iw - G.pad_left)) * C;
                    const float* src = row + (kh * G.k_w + kw) * C;
                    for (std::size_t c = 0; c < C; ++c)
                        dst[c] += src[c];
                }
            }
        }
}

} // namespace tpudsl::kernels

#endif // !TPUDSL_KERNELS_IM2COL_HPP
