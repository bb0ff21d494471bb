/// @file Defines the Winograd convolutions F(m x m, 3 x 3), m = 2 or 4: a 3 x 3 convolution of stride 1
/// as (m + 2)^2 products per m x m block of outputs where the direct sum takes 9 m^2 (16 for 4
/// outputs, 36 for 16), its forward pass and both of its gradients.
///
/// The output is cut into tiles of m x m positions; tile (i, j) reads the a x a window (a = m + 2) of
/// input rows m i - pad_top onwards (zeros where it falls outside the input). With the transforms of
/// Lavin and Gray (2016), for each channel c and filter f,
///
///   V = B^T d B  (a x a, from the window d of channel c)
///   U = G g G^T  (a x a, from the kernel g of (c, f))
///   M = sum over c of U (.) V  (element by element)
///   y = A^T M A  (the tile's m x m outputs of filter f)
///
/// F(2 x 2, 3 x 3), interpolating at 0, 1, -1 and infinity:
///
///   B^T = | 1  0 -1  0 |    G = | 1    0    0  |    A^T = | 1  1  1  0 |
///         | 0  1  1  0 |        | 1/2  1/2  1/2|          | 0  1 -1 -1 |
///         | 0 -1  1  0 |        | 1/2 -1/2  1/2|
///         | 0  1  0 -1 |        | 0    0    1  |
///
/// F(4 x 4, 3 x 3), at 0, 1, -1, 2, -2 and infinity:
///
///   B^T = | 4  0 -5  0  1  0 |    G = |  1/4     0     0  |    A^T = | 1  1  1  1  1  0 |
///         | 0 -4 -4  1  1  0 |        | -1/6  -1/6  -1/6  |          | 0  1 -1  2 -2  0 |
///         | 0  4 -4 -1  1  0 |        | -1/6   1/6  -1/6  |          | 0  1  1  4  4  0 |
///         | 0 -2 -1  2  1  0 |        |  1/24  1/12  1/6  |          | 0  1 -1  8 -8  1 |
///         | 0  2 -1 -2  1  0 |        |  1/24 -1/12  1/6  |
///         | 0  4  0 -5  0  1 |        |  0     0     1    |
///
/// For each of the a^2 elements e of the tiles, M_e (tiles, F) = V_e (tiles, C) . U_e (C, F): a^2
/// GEMMs of a^2 / (9 m^2) of the direct convolution's products (16/36 and 36/144), each the strided
/// GEMM of the in-place convolutions (`blocked`), whose tiles a program already has. Backward is this
/// function's own gradient, exactly:
///
///   dM = A dY A^T                     (a x a from a tile's m x m output gradients)
///   dU_e (C, F) += V_e^T . dM_e       over the tiles of every sample, then dW = G^T dU G
///   dV_e (tiles, C) = dM_e . U_e^T    then dX += B dV B^T over each tile's window (windows overlap)
///
/// Each transform is a matrix product along a tile's columns, then along its rows, written out with
/// its common terms (winograd_transforms), a vector of channels at a time. The products differ from
/// the direct sum's (not the same bits as im2col: within float rounding, the kernel tests compare with
/// the double-precision reference); F(4 x 4) rounds a little more than F(2 x 2) (its transforms
/// multiply by up to 8).
///
/// A layer takes m = 4 where that saves at least 30% of the products, counting the positions a last
/// tile computes past the output's edge (winograd_tile: CIFAR-10's 30 x 30 and 15 x 15 outputs, and
/// 3 x 3, 4 x 4, 7 x 7 or 8 x 8 ones), m = 2 otherwise (its 13 x 13 output, where 4 x 4 tiles
/// compute 16 x 16 positions, or 5 x 5, 6 x 6, 9 x 9 and 10 x 10 ones). Tiles run in blocks
/// (`winograd_plan::block`) whose transforms (a^2 x block x (2 C + F) floats) stay in L2 between
/// the transform that writes them and the GEMMs that read them. A layer's pass asks for one
/// workspace (winograd_workspace) and transforms its kernel into it once (winograd_prepare_forward,
/// winograd_prepare_backward), then runs each sample through it.
#ifndef TPUDSL_KERNELS_WINOGRAD_HPP
#define TPUDSL_KERNELS_WINOGRAD_HPP

#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/kernels/scratch.hpp>
#include <tpudsl/kernels/window_geometry.hpp>

#include <algorithm>
#include <cstddef>

namespace tpudsl::kernels {

/// True when a convolution of geometry G with F filters runs as Winograd F(m x m, 3 x 3): a 3 x 3
/// window of stride 1 with any padding (a tile's window reads zeros where it passes the input's
/// edge), channels and filters in whole vectors of 16 floats (every instruction set then takes the
/// same path) and at least 16 channels (a thinner input leaves the GEMMs too short a K to repay the
/// transforms).
template <window_geometry G, std::size_t F>
inline constexpr bool winograd_fits = G.k_h == 3 && G.k_w == 3 && G.s_h == 1 && G.s_w == 1 && G.channels >= 16 &&
                                      G.channels % 16 == 0 && F % 16 == 0;

/// The side m of a Winograd convolution's output tiles for geometry G: 4 where 4 x 4 tiles take at
/// most 70% of the products 2 x 2 tiles would (36 per tile against 16, counting the positions past
/// the output's edge that a last tile computes), else 2. A 4 x 4 tile's transforms cost more per
/// product saved and its transformed kernel is 2.25 times larger, so a layer just above the bound
/// (CIFAR-10's 13 x 13 x 64, at 73%) is faster with 2 x 2 tiles.
template <window_geometry G>
inline constexpr std::size_t winograd_tile =
    10 * 36 * ((G.out_h + 3) / 4) * ((G.out_w + 3) / 4) <= 7 * 16 * ((G.out_h + 1) / 2) * ((G.out_w + 1) / 2) ? 4 : 2;

/// The tiles of a Winograd convolution of geometry G with F filters, and how they are blocked.
template <window_geometry G, std::size_t F>
struct winograd_plan {
    static constexpr std::size_t C = G.channels;
    /// The tiles' side (outputs), their windows' side (a = m + 2) and the a^2 points of a transform.
    static constexpr std::size_t m = winograd_tile<G>, a = m + 2, points = a * a;
    static constexpr std::size_t tiles_h = (G.out_h + m - 1) / m, tiles_w = (G.out_w + m - 1) / m;
    static constexpr std::size_t tiles = tiles_h * tiles_w;
    /// Rows of a register tile of the GEMMs (tiles in the forward and input gradient's GEMMs).
    static constexpr std::size_t mr = std::max(detail::plan<F>::mr, detail::plan<C>::mr);
    /// Tiles per block: as many as keep the block's transforms (a^2 x block x (2 C + F) floats) near
    /// 384 KB, in equal blocks, rounded up to whole register tiles.
    static constexpr std::size_t most = std::max<std::size_t>(mr, 98304 / (points * (2 * C + F)));
    static constexpr std::size_t blocks = (tiles + most - 1) / most;
    static constexpr std::size_t block = ((tiles + blocks - 1) / blocks + mr - 1) / mr * mr;
    /// The workspace: the transformed kernel (U, or U^T for the input gradient), dU, the block's V, M
    /// (or dM) and dV, and a vector of zeros and a sink of max(C, F) floats each.
    static constexpr std::size_t kernel_floats = points * C * F;
    static constexpr std::size_t edge = std::max(C, F);
    static constexpr std::size_t u_at = 0, du_at = kernel_floats, v_at = 2 * kernel_floats,
                                 m_at = v_at + points * block * C, dv_at = m_at + points * block * F,
                                 zeros_at = dv_at + points * block * C, sink_at = zeros_at + edge;
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

/// The one-dimensional transforms of F(m, 3), each a matrix times a vector of a (or m, or 3) values:
/// input (B^T d), output (A^T M), gradient (A dY), input_gradient (B dV), kernel (G g) and
/// kernel_gradient (G^T dU).
template <std::size_t M>
struct winograd_transforms;

template <>
struct winograd_transforms<2> {
    static void
    input(const vfloat (&d)[4], vfloat (&o)[4]) noexcept
    {
        o[0] = d[0] - d[2];
        o[1] = d[1] + d[2];
        o[2] = d[2] - d[1];
        o[3] = d[1] - d[3];
    }
    static void
    output(const vfloat (&v)[4], vfloat (&o)[2]) noexcept
    {
        o[0] = v[0] + v[1] + v[2];
        o[1] = v[1] - v[2] - v[3];
    }
    static void
    gradient(const vfloat (&d)[2], vfloat (&o)[4]) noexcept
    {
        o[0] = d[0];
        o[1] = d[0] + d[1];
        o[2] = d[0] - d[1];
        o[3] = vfloat::broadcast(0.0f) - d[1];
    }
    static void
    input_gradient(const vfloat (&v)[4], vfloat (&o)[4]) noexcept
    {
        o[0] = v[0];
        o[1] = v[1] - v[2] + v[3];
        o[2] = v[1] + v[2] - v[0];
        o[3] = vfloat::broadcast(0.0f) - v[3];
    }
    static void
    kernel(const vfloat (&g)[3], vfloat (&o)[4]) noexcept
    {
        const vfloat half = vfloat::broadcast(0.5f);
        o[0] = g[0];
        o[1] = (g[0] + g[1] + g[2]) * half;
        o[2] = (g[0] - g[1] + g[2]) * half;
        o[3] = g[2];
    }
    static void
    kernel_gradient(const vfloat (&u)[4], vfloat (&o)[3]) noexcept
    {
        const vfloat half = vfloat::broadcast(0.5f);
        o[0] = u[0] + (u[1] + u[2]) * half;
        o[1] = (u[1] - u[2]) * half;
        o[2] = (u[1] + u[2]) * half + u[3];
    }
};

template <>
struct winograd_transforms<4> {
    static vfloat
    c(float x) noexcept
    {
        return vfloat::broadcast(x);
    }
    static void
    input(const vfloat (&d)[6], vfloat (&o)[6]) noexcept
    {
        const vfloat t1 = fma(d[2], c(-4.0f), d[4]), t2 = fma(d[1], c(-4.0f), d[3]);
        const vfloat t3 = d[4] - d[2], t4 = (d[3] - d[1]) * c(2.0f);
        o[0] = fma(d[0], c(4.0f), fma(d[2], c(-5.0f), d[4]));
        o[1] = t1 + t2;
        o[2] = t1 - t2;
        o[3] = t3 + t4;
        o[4] = t3 - t4;
        o[5] = fma(d[1], c(4.0f), fma(d[3], c(-5.0f), d[5]));
    }
    static void
    output(const vfloat (&v)[6], vfloat (&o)[4]) noexcept
    {
        const vfloat p = v[1] + v[2], q = v[1] - v[2], r = v[3] + v[4], s = v[3] - v[4];
        o[0] = v[0] + p + r;
        o[1] = fma(s, c(2.0f), q);
        o[2] = fma(r, c(4.0f), p);
        o[3] = fma(s, c(8.0f), q) + v[5];
    }
    static void
    gradient(const vfloat (&d)[4], vfloat (&o)[6]) noexcept
    {
        const vfloat e = d[0] + d[2], od = d[1] + d[3];
        const vfloat e4 = fma(d[2], c(4.0f), d[0]), od4 = fma(d[3], c(4.0f), d[1]) * c(2.0f);
        o[0] = d[0];
        o[1] = e + od;
        o[2] = e - od;
        o[3] = e4 + od4;
        o[4] = e4 - od4;
        o[5] = d[3];
    }
    static void
    input_gradient(const vfloat (&v)[6], vfloat (&o)[6]) noexcept
    {
        const vfloat p = v[1] + v[2], q = v[2] - v[1], r = v[3] + v[4], s = v[4] - v[3];
        o[0] = v[0] * c(4.0f);
        o[1] = fma(q, c(4.0f), fma(s, c(2.0f), v[5] * c(4.0f)));
        o[2] = fma(p, c(-4.0f), fma(v[0], c(-5.0f), c(0.0f) - r));
        o[3] = c(0.0f) - (q + fma(s, c(2.0f), v[5] * c(5.0f)));
        o[4] = v[0] + p + r;
        o[5] = v[5];
    }
    static void
    kernel(const vfloat (&g)[3], vfloat (&o)[6]) noexcept
    {
        const vfloat s = g[0] + g[2], t = fma(g[0], c(1.0f / 24), g[2] * c(1.0f / 6)), u = g[1] * c(1.0f / 12);
        o[0] = g[0] * c(0.25f);
        o[1] = (s + g[1]) * c(-1.0f / 6);
        o[2] = (s - g[1]) * c(-1.0f / 6);
        o[3] = t + u;
        o[4] = t - u;
        o[5] = g[2];
    }
    static void
    kernel_gradient(const vfloat (&u)[6], vfloat (&o)[3]) noexcept
    {
        const vfloat p = u[1] + u[2], q = u[2] - u[1], r = u[3] + u[4], s = u[3] - u[4];
        o[0] = fma(r, c(1.0f / 24), fma(p, c(-1.0f / 6), u[0] * c(0.25f)));
        o[1] = fma(s, c(1.0f / 12), q * c(1.0f / 6));
        o[2] = fma(r - p, c(1.0f / 6), u[5]);
    }
};

/// A two-dimensional transform of an In x In grid of vectors into an Out x Out one: f (a
/// one-dimensional transform, In values to Out) along each column of load(i, j), then along each row
/// of what that gives; put(i, j, v) takes each result.
template <std::size_t In, std::size_t Out, class Load, class Fn, class Put>
inline void
transform_2d(const Load& load, const Fn& f, const Put& put) noexcept
{
    vfloat t[Out][In];
#pragma GCC unroll 6
    for (std::size_t j = 0; j < In; ++j) {   // along the columns
        vfloat v[In], o[Out];
#pragma GCC unroll 6
        for (std::size_t i = 0; i < In; ++i)
            v[i] = load(i, j);
        f(v, o);
#pragma GCC unroll 6
        for (std::size_t i = 0; i < Out; ++i)
            t[i][j] = o[i];
    }
#pragma GCC unroll 6
    for (std::size_t i = 0; i < Out; ++i) {   // then along the rows
        vfloat o[Out];
        f(t[i], o);
#pragma GCC unroll 6
        for (std::size_t j = 0; j < Out; ++j)
            put(i, j, o[j]);
    }
}

/// What the transforms of a Winograd pass read of its geometry, as run-time values: they are compiled
/// once per tile side m, and the layers of a program that share m share them (a tile's transform does
/// a^2 vector loads and stores per vector of channels; its bounds cost nothing beside them).
struct winograd_shape {
    std::size_t in_h, in_w, channels, filters, pad_top, pad_left, out_h, out_w, tiles_w, block;
};

template <window_geometry G, std::size_t F>
inline constexpr winograd_shape winograd_shape_of{G.in_h,    G.in_w,     G.channels,
                                                  F,         G.pad_top,  G.pad_left,
                                                  G.out_h,   G.out_w,    winograd_plan<G, F>::tiles_w,
                                                  winograd_plan<G, F>::block};

/// Where the a x a input window of tile t lies: pointers into one sample x (in_h, in_w, C), or to
/// `outside` (C floats: zeros to read, a sink to write) where the window passes the input's edge.
template <std::size_t M, class T>
inline void
tile_window(const winograd_shape& g, std::size_t t, T* x, T* outside, T* (&at)[M + 2][M + 2]) noexcept
{
    const std::size_t h0 = M * (t / g.tiles_w), w0 = M * (t % g.tiles_w);   // in padded coordinates
#pragma GCC unroll 6
    for (std::size_t i = 0; i < M + 2; ++i)
#pragma GCC unroll 6
        for (std::size_t j = 0; j < M + 2; ++j) {
            const std::size_t h = h0 + i, w = w0 + j;
            const bool inside = h >= g.pad_top && h - g.pad_top < g.in_h && w >= g.pad_left && w - g.pad_left < g.in_w;
            at[i][j] = inside ? x + ((h - g.pad_top) * g.in_w + (w - g.pad_left)) * g.channels : outside;
        }
}

/// Where the m x m outputs of tile t lie in one sample z (out_h, out_w, F), or `outside` past its edge.
template <std::size_t M, class T>
inline void
tile_outputs(const winograd_shape& g, std::size_t t, T* z, T* outside, T* (&at)[M][M]) noexcept
{
    const std::size_t h0 = M * (t / g.tiles_w), w0 = M * (t % g.tiles_w);
#pragma GCC unroll 4
    for (std::size_t i = 0; i < M; ++i)
#pragma GCC unroll 4
        for (std::size_t j = 0; j < M; ++j)
            at[i][j] = h0 + i < g.out_h && w0 + j < g.out_w ? z + ((h0 + i) * g.out_w + w0 + j) * g.filters : outside;
}

/// V (a^2, block, C) for tiles [t0, t0 + count) of one sample: B^T d B of each window, C/W vectors at a time.
template <std::size_t M>
inline void
winograd_input_transform(const winograd_shape& g, const float* x, std::size_t t0, std::size_t count, float* v,
                         const float* zeros) noexcept
{
    using T = winograd_transforms<M>;
    constexpr std::size_t a = M + 2;
    const std::size_t C = g.channels, stride = g.block * C;
    for (std::size_t n = 0; n < count; ++n) {
        const float* at[a][a];
        tile_window<M>(g, t0 + n, x, zeros, at);
        float* out = v + n * C;
        for (std::size_t c = 0; c < C; c += W)
            transform_2d<a, a>(
                [&](std::size_t i, std::size_t j) { return vfloat::load(at[i][j] + c); },
                [](const vfloat(&d)[a], vfloat(&o)[a]) { T::input(d, o); },
                [&](std::size_t i, std::size_t j, vfloat y) { y.store(out + (i * a + j) * stride + c); });
    }
}

/// One sample's outputs of tiles [t0, t0 + count): epi(A^T M A) from M (a^2, block, F).
template <std::size_t M>
inline void
winograd_output_transform(const winograd_shape& g, const float* m, std::size_t t0, std::size_t count, float* z,
                          float* sink, const epilogue& epi) noexcept
{
    using T = winograd_transforms<M>;
    constexpr std::size_t a = M + 2, r = M;
    const std::size_t F = g.filters, stride = g.block * F;
    for (std::size_t n = 0; n < count; ++n) {
        float* at[r][r];
        tile_outputs<r>(g, t0 + n, z, sink, at);
        const float* in = m + n * F;
        for (std::size_t f = 0; f < F; f += W)
            transform_2d<a, r>(
                [&](std::size_t i, std::size_t j) { return vfloat::load(in + (i * a + j) * stride + f); },
                [](const vfloat(&v)[a], vfloat(&o)[r]) { T::output(v, o); },
                [&](std::size_t i, std::size_t j, vfloat y) {   // the bias and the activation
                    epi.apply(y, f, W);
                    y.store(at[i][j] + f);
                });
    }
}

/// dM (a^2, block, F) = A dY A^T for tiles [t0, t0 + count) of one sample's output gradient dz.
/// Where z (the layer's output) is not null, dY is Relu's: dz where z > 0, else 0; where db is not
/// null, the tiles' dY are added into it (F: the bias gradient).
template <std::size_t M>
inline void
winograd_gradient_transform(const winograd_shape& g, const float* dz, const float* z, float* db, std::size_t t0,
                            std::size_t count, float* dm, const float* zeros) noexcept
{
    using T = winograd_transforms<M>;
    constexpr std::size_t a = M + 2, r = M;
    const std::size_t F = g.filters, stride = g.block * F;
    const vfloat zero = vfloat::broadcast(0.0f);
    for (std::size_t n = 0; n < count; ++n) {
        const float *at[r][r], *zat[r][r];
        tile_outputs<r>(g, t0 + n, dz, zeros, at);
        if (z)
            tile_outputs<r>(g, t0 + n, z, zeros, zat);
        float* out = dm + n * F;
        for (std::size_t f = 0; f < F; f += W) {
            vfloat dy[r][r];
#pragma GCC unroll 4
            for (std::size_t i = 0; i < r; ++i)
#pragma GCC unroll 4
                for (std::size_t j = 0; j < r; ++j)
                    dy[i][j] = z ? where_greater(vfloat::load(zat[i][j] + f), zero, vfloat::load(at[i][j] + f))
                                 : vfloat::load(at[i][j] + f);
            if (db) {
                vfloat sum = vfloat::load(db + f);
#pragma GCC unroll 4
                for (std::size_t i = 0; i < r; ++i)
#pragma GCC unroll 4
                    for (std::size_t j = 0; j < r; ++j)
                        sum = sum + dy[i][j];
                sum.store(db + f);
            }
            transform_2d<r, a>(
                [&](std::size_t i, std::size_t j) { return dy[i][j]; },
                [](const vfloat(&d)[r], vfloat(&o)[a]) { T::gradient(d, o); },
                [&](std::size_t i, std::size_t j, vfloat g) { g.store(out + (i * a + j) * stride + f); });
        }
    }
}

/// dX += B dV B^T over the windows of tiles [t0, t0 + count) of one sample, dV (a^2, block, C); what
/// falls in the padding goes to the sink.
template <std::size_t M>
inline void
winograd_input_gradient_transform(const winograd_shape& g, const float* dv, std::size_t t0, std::size_t count,
                                  float* dx, float* sink) noexcept
{
    using T = winograd_transforms<M>;
    constexpr std::size_t a = M + 2;
    const std::size_t C = g.channels, stride = g.block * C;
    for (std::size_t n = 0; n < count; ++n) {
        float* at[a][a];
        tile_window<M>(g, t0 + n, dx, sink, at);
        const float* in = dv + n * C;
        for (std::size_t c = 0; c < C; c += W)
            transform_2d<a, a>(
                [&](std::size_t i, std::size_t j) { return vfloat::load(in + (i * a + j) * stride + c); },
                [](const vfloat(&v)[a], vfloat(&o)[a]) { T::input_gradient(v, o); },
                [&](std::size_t i, std::size_t j, vfloat g) {   // added into dX
                    (vfloat::load(at[i][j] + c) + g).store(at[i][j] + c);
                });
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

/// U (a^2, C, F) = G g G^T of a kernel w (3, 3, C, F) (Keras' layout), into `u`.
template <window_geometry G, std::size_t F>
inline void
winograd_kernel_transform(const float* w, float* u) noexcept
{
    using detail::vfloat;
    using WP = winograd_plan<G, F>;
    using T = detail::winograd_transforms<WP::m>;
    constexpr std::size_t C = G.channels, CF = C * F, a = WP::a;
    for (std::size_t c = 0; c < C; ++c)
        for (std::size_t f = 0; f < F; f += detail::W) {
            const float* g = w + c * F + f;   // tap (kh, kw) at g + (kh 3 + kw) C F
            float* out = u + c * F + f;
            detail::transform_2d<3, a>(
                [&](std::size_t kh, std::size_t kw) { return vfloat::load(g + (kh * 3 + kw) * CF); },
                [](const vfloat(&k)[3], vfloat(&o)[a]) { T::kernel(k, o); },
                [&](std::size_t i, std::size_t j, vfloat v) { v.store(out + (i * a + j) * CF); });
        }
}

/// Readies the workspace for forward passes: U of the kernel w.
template <window_geometry G, std::size_t F>
inline void
winograd_prepare_forward(const float* w, float* ws) noexcept
{
    winograd_kernel_transform<G, F>(w, ws + winograd_plan<G, F>::u_at);
}

/// Readies the workspace for backward passes: U^T (a^2, F, C) of the kernel w when an input gradient
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
    for (std::size_t e = 0; e < WP::points; ++e)
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
    constexpr const detail::winograd_shape& g = detail::winograd_shape_of<G, F>;
    for (std::size_t t0 = 0; t0 < WP::tiles; t0 += WP::block) {
        const std::size_t count = std::min(WP::block, WP::tiles - t0);
        detail::winograd_input_transform<WP::m>(g, x, t0, count, ws + WP::v_at, ws + WP::zeros_at);
        for (std::size_t e = 0; e < WP::points; ++e)   // M_e (count, F) = V_e (count, C) . U_e (C, F)
            detail::blocked<F>(count, C, ws + WP::v_at + e * WP::block * C, C, 1, ws + WP::u_at + e * C * F,
                               ws + WP::m_at + e * WP::block * F, false);
        detail::winograd_output_transform<WP::m>(g, ws + WP::m_at, t0, count, z, ws + WP::sink_at, epi);
    }
}

/// One sample's share of the gradients, after winograd_prepare_backward: dU (+)= its sums over the
/// tiles (`first`: the pass's first sample writes them), and, when dx is not null, dx (in_h, in_w, C)
/// = the input gradient, from x and the output gradient dz (out_h, out_w, F). With z, the layer's
/// output (out_h, out_w, F), dz is taken through Relu first (dz where z > 0, else 0); with db, the
/// sums of dz's columns (after Relu's) are added into it: the bias gradient. dz is read before dx is
/// written only tile block by tile block: they must not share memory.
template <window_geometry G, std::size_t F>
inline void
winograd_backward(const float* x, const float* dz, float* ws, float* dx, bool first, const float* z = nullptr,
                  float* db = nullptr) noexcept
{
    using WP = winograd_plan<G, F>;
    constexpr std::size_t C = G.channels;
    constexpr const detail::winograd_shape& g = detail::winograd_shape_of<G, F>;
    if (dx)
        std::fill_n(dx, G.in_size(), 0.0f);
    for (std::size_t t0 = 0; t0 < WP::tiles; t0 += WP::block) {
        const std::size_t count = std::min(WP::block, WP::tiles - t0);
        detail::winograd_input_transform<WP::m>(g, x, t0, count, ws + WP::v_at, ws + WP::zeros_at);
        detail::winograd_gradient_transform<WP::m>(g, dz, z, db, t0, count, ws + WP::m_at, ws + WP::zeros_at);
        for (std::size_t e = 0; e < WP::points; ++e)   // dU_e (C, F) (+)= V_e^T (C, count) . dM_e (count, F)
            detail::blocked<F>(C, count, ws + WP::v_at + e * WP::block * C, 1, C, ws + WP::m_at + e * WP::block * F,
                               ws + WP::du_at + e * C * F, !first || t0 > 0);
        if (!dx)
            continue;
        for (std::size_t e = 0; e < WP::points; ++e)   // dV_e (count, C) = dM_e (count, F) . U_e^T (F, C)
            detail::blocked<C>(count, F, ws + WP::m_at + e * WP::block * F, F, 1, ws + WP::u_at + e * F * C,
                               ws + WP::dv_at + e * WP::block * C, false);
        detail::winograd_input_gradient_transform<WP::m>(g, ws + WP::dv_at, t0, count, dx, ws + WP::sink_at);
    }
}

/// dW (3, 3, C, F) (+)= G^T dU G: the kernel gradient of the samples winograd_backward took.
template <window_geometry G, std::size_t F>
inline void
winograd_kernel_gradient(const float* ws, float* dw, bool accumulate) noexcept
{
    using WP = winograd_plan<G, F>;
    using T = detail::winograd_transforms<WP::m>;
    constexpr std::size_t C = G.channels, CF = C * F, a = WP::a;
    using detail::vfloat;
    const float* du = ws + WP::du_at;
    for (std::size_t c = 0; c < C; ++c)
        for (std::size_t f = 0; f < F; f += detail::W) {
            const float* in = du + c * F + f;
            float* g = dw + c * F + f;
            detail::transform_2d<a, 3>(
                [&](std::size_t i, std::size_t j) { return vfloat::load(in + (i * a + j) * CF); },
                [](const vfloat(&v)[a], vfloat(&o)[3]) { T::kernel_gradient(v, o); },
                [&](std::size_t kh, std::size_t kw, vfloat r) {
                    float* p = g + (kh * 3 + kw) * CF;
                    (accumulate ? vfloat::load(p) + r : r).store(p);
                });
        }
}

} // namespace tpudsl::kernels

#endif // !TPUDSL_KERNELS_WINOGRAD_HPP
