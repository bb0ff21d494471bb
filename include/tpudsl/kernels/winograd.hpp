/// @file Defines the Winograd convolutions F(2 x 2, 3 x 3): a 3 x 3 convolution of stride 1 as 16
/// products per 2 x 2 block of outputs where the direct sum takes 36, its forward pass and both of its
/// gradients.
///
/// The output is cut into tiles of 2 x 2 positions; tile (i, j) reads the 4 x 4 window of input rows
/// 2i - pad_top onwards (zeros where it falls outside the input). With the transforms of Lavin and
/// Gray (2016), for each channel c and filter f,
///
///   V = B^T d B  (4 x 4, from the window d of channel c)     B^T = | 1  0 -1  0 |
///   U = G g G^T  (4 x 4, from the kernel g of (c, f))               | 0  1  1  0 |
///   M = sum over c of U (.) V  (element by element)                 | 0 -1  1  0 |
///   y = A^T M A  (the tile's 2 x 2 outputs of filter f)             | 0  1  0 -1 |
///
///   G = | 1    0    0  |    A^T = | 1  1  1  0 |
///       | 1/2  1/2  1/2|          | 0  1 -1 -1 |
///       | 1/2 -1/2  1/2|
///       | 0    0    1  |
///
/// For each of the 16 elements e of the tiles, M_e (tiles, F) = V_e (tiles, C) . U_e (C, F): 16 GEMMs
/// of 16/36 of the direct convolution's products, each the strided GEMM of the in-place convolutions
/// (`blocked`), whose tiles a program already has. Backward is this function's own gradient, exactly:
///
///   dM = A dY A^T                     (4 x 4 from a tile's 2 x 2 output gradients)
///   dU_e (C, F) += V_e^T . dM_e       over the tiles of every sample, then dW = G^T dU G
///   dV_e (tiles, C) = dM_e . U_e^T    then dX += B dV B^T over each tile's window (windows overlap)
///
/// Each transform is additions and halvings of 4 x 4 values, a vector of channels at a time. The
/// products differ from the direct sum's (not the same bits as im2col: within float rounding, the
/// kernel tests compare with the double-precision reference).
///
/// Tiles run in blocks (`winograd_plan::block`) whose transforms (16 x block x (2 C + F) floats) stay
/// in L2 between the transform that writes them and the GEMMs that read them. A layer's pass asks for
/// one workspace (winograd_workspace) and transforms its kernel into it once (winograd_prepare_forward,
/// winograd_prepare_backward), then runs each sample through it.
#ifndef TPUDSL_KERNELS_WINOGRAD_HPP
#define TPUDSL_KERNELS_WINOGRAD_HPP

#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/kernels/scratch.hpp>
#include <tpudsl/kernels/window_geometry.hpp>

#include <algorithm>
#include <cstddef>

namespace tpudsl::kernels {

/// True when a convolution of geometry G with F filters runs as Winograd F(2 x 2, 3 x 3): a 3 x 3
/// window of stride 1 with any padding (a tile's window reads zeros where it passes the input's
/// edge), channels and filters in whole vectors of 16 floats (every instruction set then takes the
/// same path) and at least 16 channels (a thinner input leaves the 16 GEMMs too short a K to repay
/// the transforms).
template <window_geometry G, std::size_t F>
inline constexpr bool winograd_fits = G.k_h == 3 && G.k_w == 3 && G.s_h == 1 && G.s_w == 1 && G.channels >= 16 &&
                                      G.channels % 16 == 0 && F % 16 == 0;

/// The tiles of a Winograd convolution of geometry G with F filters, and how they are blocked.
template <window_geometry G, std::size_t F>
struct winograd_plan {
    static constexpr std::size_t C = G.channels;
    static constexpr std::size_t tiles_h = (G.out_h + 1) / 2, tiles_w = (G.out_w + 1) / 2;
    static constexpr std::size_t tiles = tiles_h * tiles_w;
    /// Rows of a register tile of the GEMMs (tiles in the forward and input gradient's GEMMs).
    static constexpr std::size_t mr = std::max(detail::plan<F>::mr, detail::plan<C>::mr);
    /// Tiles per block: as many as keep the block's transforms (16 x block x (2 C + F) floats) near
    /// 384 KB, in equal blocks, rounded up to whole register tiles.
    static constexpr std::size_t most = std::max<std::size_t>(mr, 98304 / (16 * (2 * C + F)));
    static constexpr std::size_t blocks = (tiles + most - 1) / most;
    static constexpr std::size_t block = ((tiles + blocks - 1) / blocks + mr - 1) / mr * mr;
    /// The workspace: the transformed kernel (U, or U^T for the input gradient), dU, the block's V, M
    /// (or dM) and dV, and a vector of zeros and a sink of max(C, F) floats each.
    static constexpr std::size_t kernel_floats = 16 * C * F;
    static constexpr std::size_t edge = std::max(C, F);
    static constexpr std::size_t u_at = 0, du_at = kernel_floats, v_at = 2 * kernel_floats,
                                 m_at = v_at + 16 * block * C, dv_at = m_at + 16 * block * F,
                                 zeros_at = dv_at + 16 * block * C, sink_at = zeros_at + edge;
    static constexpr std::size_t floats = sink_at + edge;
};

/// What a Winograd convolution's passes ask of the thread's scratch.
template <window_geometry G, std::size_t F>
[[nodiscard]] constexpr scratch_sizes
winograd_scratch() noexcept
{
    using WP = winograd_plan<G, F>;
    return scratch_sizes::of(detail::scratch::winograd, WP::floats) | detail::blocked_scratch<F>(WP::block) |
           detail::blocked_scratch<G.channels>(WP::block) | detail::blocked_scratch<F>(G.channels);
}

namespace detail {

/// Where the 4 x 4 input window of tile t lies: 16 pointers into one sample x (in_h, in_w, C), or to
/// `outside` (C floats: zeros to read, a sink to write) where the window passes the input's edge.
template <window_geometry G, class T>
inline void
tile_window(std::size_t t, std::size_t tiles_w, T* x, T* outside, T* (&at)[4][4]) noexcept
{
    const std::size_t h0 = 2 * (t / tiles_w), w0 = 2 * (t % tiles_w);   // in padded coordinates
#pragma GCC unroll 4
    for (std::size_t i = 0; i < 4; ++i)
#pragma GCC unroll 4
        for (std::size_t j = 0; j < 4; ++j) {
            const std::size_t h = h0 + i, w = w0 + j;
            const bool inside = h >= G.pad_top && h - G.pad_top < G.in_h && w >= G.pad_left && w - G.pad_left < G.in_w;
            at[i][j] = inside ? x + ((h - G.pad_top) * G.in_w + (w - G.pad_left)) * G.channels : outside;
        }
}

/// Where the 2 x 2 outputs of tile t lie in one sample z (out_h, out_w, F), or `outside` past its edge.
template <window_geometry G, std::size_t F, class T>
inline void
tile_outputs(std::size_t t, std::size_t tiles_w, T* z, T* outside, T* (&at)[2][2]) noexcept
{
    const std::size_t h0 = 2 * (t / tiles_w), w0 = 2 * (t % tiles_w);
#pragma GCC unroll 2
    for (std::size_t i = 0; i < 2; ++i)
#pragma GCC unroll 2
        for (std::size_t j = 0; j < 2; ++j)
            at[i][j] = h0 + i < G.out_h && w0 + j < G.out_w ? z + ((h0 + i) * G.out_w + w0 + j) * F : outside;
}

/// V (16, block, C) for tiles [t0, t0 + count) of one sample: B^T d B of each window, C/W vectors at a time.
template <window_geometry G, std::size_t F>
inline void
winograd_input_transform(const float* x, std::size_t t0, std::size_t count, float* v, const float* zeros) noexcept
{
    using WP = winograd_plan<G, F>;
    constexpr std::size_t C = G.channels, stride = WP::block * C;
    for (std::size_t n = 0; n < count; ++n) {
        const float* at[4][4];
        tile_window<G>(t0 + n, WP::tiles_w, x, zeros, at);
        float* out = v + n * C;
        for (std::size_t c = 0; c < C; c += W) {
            vfloat t[4][4];
#pragma GCC unroll 4
            for (std::size_t j = 0; j < 4; ++j) {   // B^T d: along the window's rows
                const vfloat d0 = vfloat::load(at[0][j] + c), d1 = vfloat::load(at[1][j] + c),
                             d2 = vfloat::load(at[2][j] + c), d3 = vfloat::load(at[3][j] + c);
                t[0][j] = d0 - d2;
                t[1][j] = d1 + d2;
                t[2][j] = d2 - d1;
                t[3][j] = d1 - d3;
            }
#pragma GCC unroll 4
            for (std::size_t i = 0; i < 4; ++i) {   // (B^T d) B: along its columns
                (t[i][0] - t[i][2]).store(out + (i * 4 + 0) * stride + c);
                (t[i][1] + t[i][2]).store(out + (i * 4 + 1) * stride + c);
                (t[i][2] - t[i][1]).store(out + (i * 4 + 2) * stride + c);
                (t[i][1] - t[i][3]).store(out + (i * 4 + 3) * stride + c);
            }
        }
    }
}

/// One sample's outputs of tiles [t0, t0 + count): epi(A^T M A) from M (16, block, F).
template <window_geometry G, std::size_t F, class Epi>
inline void
winograd_output_transform(const float* m, std::size_t t0, std::size_t count, float* z, float* sink,
                          const Epi& epi) noexcept
{
    using WP = winograd_plan<G, F>;
    constexpr std::size_t stride = WP::block * F;
    for (std::size_t n = 0; n < count; ++n) {
        float* at[2][2];
        tile_outputs<G, F>(t0 + n, WP::tiles_w, z, sink, at);
        const float* in = m + n * F;
        for (std::size_t f = 0; f < F; f += W) {
            vfloat s[2][4];
#pragma GCC unroll 4
            for (std::size_t j = 0; j < 4; ++j) {   // A^T M
                const vfloat m0 = vfloat::load(in + (0 * 4 + j) * stride + f), m1 = vfloat::load(in + (1 * 4 + j) * stride + f),
                             m2 = vfloat::load(in + (2 * 4 + j) * stride + f), m3 = vfloat::load(in + (3 * 4 + j) * stride + f);
                s[0][j] = m0 + m1 + m2;
                s[1][j] = m1 - m2 - m3;
            }
#pragma GCC unroll 2
            for (std::size_t i = 0; i < 2; ++i) {   // (A^T M) A, the bias and the activation
                vfloat y0 = s[i][0] + s[i][1] + s[i][2], y1 = s[i][1] - s[i][2] - s[i][3];
                epi.apply(y0, f, W);
                epi.apply(y1, f, W);
                y0.store(at[i][0] + f);
                y1.store(at[i][1] + f);
            }
        }
    }
}

/// dM (16, block, F) = A dY A^T for tiles [t0, t0 + count) of one sample's output gradient dz.
template <window_geometry G, std::size_t F>
inline void
winograd_gradient_transform(const float* dz, std::size_t t0, std::size_t count, float* dm, const float* zeros) noexcept
{
    using WP = winograd_plan<G, F>;
    constexpr std::size_t stride = WP::block * F;
    for (std::size_t n = 0; n < count; ++n) {
        const float* at[2][2];
        tile_outputs<G, F>(t0 + n, WP::tiles_w, dz, zeros, at);
        float* out = dm + n * F;
        for (std::size_t f = 0; f < F; f += W) {
            vfloat r[4][2];
#pragma GCC unroll 2
            for (std::size_t j = 0; j < 2; ++j) {   // A dY: along the rows
                const vfloat d0 = vfloat::load(at[0][j] + f), d1 = vfloat::load(at[1][j] + f);
                r[0][j] = d0;
                r[1][j] = d0 + d1;
                r[2][j] = d0 - d1;
                r[3][j] = vfloat::broadcast(0.0f) - d1;
            }
#pragma GCC unroll 4
            for (std::size_t i = 0; i < 4; ++i) {   // (A dY) A^T: along the columns
                r[i][0].store(out + (i * 4 + 0) * stride + f);
                (r[i][0] + r[i][1]).store(out + (i * 4 + 1) * stride + f);
                (r[i][0] - r[i][1]).store(out + (i * 4 + 2) * stride + f);
                (vfloat::broadcast(0.0f) - r[i][1]).store(out + (i * 4 + 3) * stride + f);
            }
        }
    }
}

/// dX += B dV B^T over the windows of tiles [t0, t0 + count) of one sample, dV (16, block, C); what
/// falls in the padding goes to the sink.
template <window_geometry G, std::size_t F>
inline void
winograd_input_gradient_transform(const float* dv, std::size_t t0, std::size_t count, float* dx, float* sink) noexcept
{
    using WP = winograd_plan<G, F>;
    constexpr std::size_t C = G.channels, stride = WP::block * C;
    for (std::size_t n = 0; n < count; ++n) {
        float* at[4][4];
        tile_window<G>(t0 + n, WP::tiles_w, dx, sink, at);
        const float* in = dv + n * C;
        for (std::size_t c = 0; c < C; c += W) {
            vfloat t[4][4];
#pragma GCC unroll 4
            for (std::size_t j = 0; j < 4; ++j) {   // B dV: along the rows
                const vfloat v0 = vfloat::load(in + (0 * 4 + j) * stride + c), v1 = vfloat::load(in + (1 * 4 + j) * stride + c),
                             v2 = vfloat::load(in + (2 * 4 + j) * stride + c), v3 = vfloat::load(in + (3 * 4 + j) * stride + c);
                t[0][j] = v0;
                t[1][j] = v1 - v2 + v3;
                t[2][j] = v1 + v2 - v0;
                t[3][j] = vfloat::broadcast(0.0f) - v3;
            }
#pragma GCC unroll 4
            for (std::size_t i = 0; i < 4; ++i) {   // (B dV) B^T: along the columns, added into dX
                const vfloat g[4] = {t[i][0], t[i][1] - t[i][2] + t[i][3], t[i][1] + t[i][2] - t[i][0],
                                     vfloat::broadcast(0.0f) - t[i][3]};
#pragma GCC unroll 4
                for (std::size_t j = 0; j < 4; ++j)
                    (vfloat::load(at[i][j] + c) + g[j]).store(at[i][j] + c);
            }
        }
    }
}

} // namespace detail

/// This thread's workspace for the Winograd passes of G and F (winograd_plan<G, F>::floats, in
/// scratch::winograd), its vector of zeros and its sink cleared (a pass adds into the sink what
/// falls in the padding; cleared, it never grows past one pass's sums). Valid until the thread's
/// next call.
template <window_geometry G, std::size_t F>
[[nodiscard]] inline float*
winograd_workspace()
{
    using WP = winograd_plan<G, F>;
    float* ws = detail::scratch_buffer(WP::floats, detail::scratch::winograd);
    std::fill_n(ws + WP::zeros_at, 2 * WP::edge, 0.0f);   // zeros, then the sink
    return ws;
}

/// U (16, C, F) = G g G^T of a kernel w (3, 3, C, F) (Keras' layout), into `u`.
template <window_geometry G, std::size_t F>
inline void
winograd_kernel_transform(const float* w, float* u) noexcept
{
    using detail::vfloat;
    constexpr std::size_t C = G.channels, CF = C * F;
    const vfloat half = vfloat::broadcast(0.5f);
    for (std::size_t c = 0; c < C; ++c)
        for (std::size_t f = 0; f < F; f += detail::W) {
            const float* g = w + c * F + f;   // tap (kh, kw) at g + (kh 3 + kw) C F
            vfloat t[4][3];
#pragma GCC unroll 3
            for (std::size_t kw = 0; kw < 3; ++kw) {   // G g: along the kernel's rows
                const vfloat g0 = vfloat::load(g + (0 * 3 + kw) * CF), g1 = vfloat::load(g + (1 * 3 + kw) * CF),
                             g2 = vfloat::load(g + (2 * 3 + kw) * CF);
                t[0][kw] = g0;
                t[1][kw] = (g0 + g1 + g2) * half;
                t[2][kw] = (g0 - g1 + g2) * half;
                t[3][kw] = g2;
            }
            float* out = u + c * F + f;
#pragma GCC unroll 4
            for (std::size_t a = 0; a < 4; ++a) {   // (G g) G^T: along its columns
                t[a][0].store(out + (a * 4 + 0) * CF);
                ((t[a][0] + t[a][1] + t[a][2]) * half).store(out + (a * 4 + 1) * CF);
                ((t[a][0] - t[a][1] + t[a][2]) * half).store(out + (a * 4 + 2) * CF);
                t[a][2].store(out + (a * 4 + 3) * CF);
            }
        }
}

/// Readies the workspace for forward passes: U of the kernel w.
template <window_geometry G, std::size_t F>
inline void
winograd_prepare_forward(const float* w, float* ws) noexcept
{
    winograd_kernel_transform<G, F>(w, ws + winograd_plan<G, F>::u_at);
}

/// Readies the workspace for backward passes: U^T (16, F, C) of the kernel w when an input gradient
/// is wanted, and dU's sums (empty: the first sample writes them).
template <window_geometry G, std::size_t F>
inline void
winograd_prepare_backward(const float* w, float* ws, bool with_dx) noexcept
{
    using WP = winograd_plan<G, F>;
    constexpr std::size_t C = G.channels;
    if (!with_dx)
        return;
    float* u = ws + WP::du_at;   // U, in dU's room until dU's first sums overwrite it
    winograd_kernel_transform<G, F>(w, u);
    for (std::size_t e = 0; e < 16; ++e)
        detail::transpose_strided(u + e * C * F, C, F, F, ws + WP::u_at + e * F * C, C);
}

/// z (out_h, out_w, F) = epi(conv(x) + b) for one sample x (in_h, in_w, C), after
/// winograd_prepare_forward. Epi: the GEMMs' bias epilogue (the bias, then Relu or nothing).
template <window_geometry G, std::size_t F, class Epi>
inline void
winograd_forward(const float* x, float* ws, float* z, const Epi& epi) noexcept
{
    using WP = winograd_plan<G, F>;
    constexpr std::size_t C = G.channels;
    for (std::size_t t0 = 0; t0 < WP::tiles; t0 += WP::block) {
        const std::size_t count = std::min(WP::block, WP::tiles - t0);
        detail::winograd_input_transform<G, F>(x, t0, count, ws + WP::v_at, ws + WP::zeros_at);
        for (std::size_t e = 0; e < 16; ++e)   // M_e (count, F) = V_e (count, C) . U_e (C, F)
            detail::blocked<F>(count, C, ws + WP::v_at + e * WP::block * C, C, 1, ws + WP::u_at + e * C * F,
                               ws + WP::m_at + e * WP::block * F, false);
        detail::winograd_output_transform<G, F>(ws + WP::m_at, t0, count, z, ws + WP::sink_at, epi);
    }
}

/// One sample's share of the gradients, after winograd_prepare_backward: dU (+)= its sums over the
/// tiles (`first`: the pass's first sample writes them), and, when dx is not null, dx (in_h, in_w, C)
/// = the input gradient, from x and the output gradient dz (out_h, out_w, F). dz is read before dx
/// is written only tile block by tile block: they must not share memory.
template <window_geometry G, std::size_t F>
inline void
winograd_backward(const float* x, const float* dz, float* ws, float* dx, bool first) noexcept
{
    using WP = winograd_plan<G, F>;
    constexpr std::size_t C = G.channels;
    if (dx)
        std::fill_n(dx, G.in_size(), 0.0f);
    for (std::size_t t0 = 0; t0 < WP::tiles; t0 += WP::block) {
        const std::size_t count = std::min(WP::block, WP::tiles - t0);
        detail::winograd_input_transform<G, F>(x, t0, count, ws + WP::v_at, ws + WP::zeros_at);
        detail::winograd_gradient_transform<G, F>(dz, t0, count, ws + WP::m_at, ws + WP::zeros_at);
        for (std::size_t e = 0; e < 16; ++e)   // dU_e (C, F) (+)= V_e^T (C, count) . dM_e (count, F)
            detail::blocked<F>(C, count, ws + WP::v_at + e * WP::block * C, 1, C, ws + WP::m_at + e * WP::block * F,
                               ws + WP::du_at + e * C * F, !first || t0 > 0);
        if (!dx)
            continue;
        for (std::size_t e = 0; e < 16; ++e)   // dV_e (count, C) = dM_e (count, F) . U_e^T (F, C)
            detail::blocked<C>(count, F, ws + WP::m_at + e * WP::block * F, F, 1, ws + WP::u_at + e * F * C,
                               ws + WP::dv_at + e * WP::block * C, false);
        detail::winograd_input_gradient_transform<G, F>(ws + WP::dv_at, t0, count, dx, ws + WP::sink_at);
    }
}

/// dW (3, 3, C, F) (+)= G^T dU G: the kernel gradient of the samples winograd_backward took.
template <window_geometry G, std::size_t F>
inline void
winograd_kernel_gradient(const float* ws, float* dw, bool accumulate) noexcept
{
    using WP = winograd_plan<G, F>;
    constexpr std::size_t C = G.channels, CF = C * F;
    using detail::vfloat;
    const float* du = ws + WP::du_at;
    const vfloat half = vfloat::broadcast(0.5f);
    for (std::size_t c = 0; c < C; ++c)
        for (std::size_t f = 0; f < F; f += detail::W) {
            const float* in = du + c * F + f;
            vfloat t[3][4];
#pragma GCC unroll 4
            for (std::size_t b = 0; b < 4; ++b) {   // G^T dU: along its rows
                const vfloat u0 = vfloat::load(in + (0 * 4 + b) * CF), u1 = vfloat::load(in + (1 * 4 + b) * CF),
                             u2 = vfloat::load(in + (2 * 4 + b) * CF), u3 = vfloat::load(in + (3 * 4 + b) * CF);
                t[0][b] = u0 + (u1 + u2) * half;
                t[1][b] = (u1 - u2) * half;
                t[2][b] = (u1 + u2) * half + u3;
            }
            float* g = dw + c * F + f;
#pragma GCC unroll 3
            for (std::size_t k = 0; k < 3; ++k) {   // (G^T dU) G: along its columns
                const vfloat r[3] = {t[k][0] + (t[k][1] + t[k][2]) * half, (t[k][1] - t[k][2]) * half,
                                     (t[k][1] + t[k][2]) * half + t[k][3]};
#pragma GCC unroll 3
                for (std::size_t j = 0; j < 3; ++j) {
                    float* p = g + (k * 3 + j) * CF;
                    (accumulate ? vfloat::load(p) + r[j] : r[j]).store(p);
                }
            }
        }
}

} // namespace tpudsl::kernels

#endif // !TPUDSL_KERNELS_WINOGRAD_HPP
