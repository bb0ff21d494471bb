/// @file Defines the convolutions that read their input in place, without im2col's copy.
///
/// im2col writes every window of a sample out as a row of `patch` floats, and the GEMM reads them back:
/// for a thin layer (a 3 x 3 patch of one channel: 9 floats) the copy costs as much as the arithmetic. Two layouts need no copy when every window lies inside the
/// input (no padding):
///
///   strided: a 1-D convolution. Window p starts at x + p s C and its patch is k C contiguous floats,
///            so A(p, k) = x[p s C + k] is a matrix with row stride s C: the blocked GEMM reads it as
///            it stands, for any patch length.
///   direct:  a 2-D convolution with a thin patch (at most `direct_patch_limit` floats). Window p starts
///            at x + (oh s_h in_w + ow s_w) C and patch element k at a constant offset from there
///            (kh in_w C + kw C + c); the tiles below take a base pointer per row and the offsets as
///            compile-time displacements, the whole patch unrolled.
///   rows:    a 2-D convolution with a wider patch. Row kh of a window is k_w C contiguous floats, so
///            a window is k_h runs of them, in_w C apart (window_runs). A register tile of output
///            positions (running on from one output row into the next) reads its windows run by
///            run, kernel rows kh k_w C onwards, its chains in registers through a block of runs;
///            the kernel gradient by strided GEMMs over groups of output rows.
///
/// Both add in the same order as im2col + GEMM (the patch in order, from zero, then the bias; the
/// kernel gradient position by position, sample by sample): the same bits.
#ifndef TPUDSL_KERNELS_DIRECT_CONV_HPP
#define TPUDSL_KERNELS_DIRECT_CONV_HPP

#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/kernels/im2col.hpp>
#include <tpudsl/kernels/pooling.hpp>
#include <tpudsl/kernels/window_geometry.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace tpudsl::kernels {

/// How a convolution reads its windows.
enum class conv_path {
    im2col,    ///< copies the windows out (padding, or a 2-D patch too wide to unroll)
    strided,   ///< a 1-D convolution read in place as a matrix of row stride s C
    direct,    ///< a 2-D convolution with a thin patch, read in place by unrolled tiles
    rows,      ///< a 2-D convolution with a wide patch, read in place one window row at a time
};

/// The widest 2-D patch the direct tiles unroll.
inline constexpr std::size_t direct_patch_limit = 32;

/// The path a convolution of geometry G takes, fixed by its shapes at compile time.
template <window_geometry G>
inline constexpr conv_path conv_path_for = !G.windows_inside()               ? conv_path::im2col
                                           : G.in_h == 1 && G.k_h == 1         ? conv_path::strided
                                           : G.patch() <= direct_patch_limit   ? conv_path::direct
                                                                               : conv_path::rows;

namespace detail {

/// Offset of patch element k = (kh, kw, c) from the window's first input element.
template <window_geometry G>
inline constexpr auto patch_offsets = [] {
    std::array<std::size_t, G.patch()> off{};
    for (std::size_t kh = 0; kh < G.k_h; ++kh)
        for (std::size_t kw = 0; kw < G.k_w; ++kw)
            for (std::size_t c = 0; c < G.channels; ++c)
                off[(kh * G.k_w + kw) * G.channels + c] = (kh * G.in_w + kw) * G.channels + c;
    return off;
}();

/// Offset of window p's first input element.
template <window_geometry G>
[[nodiscard]] inline std::size_t
window_start(std::size_t p) noexcept
{
    return ((p / G.out_w) * G.s_h * G.in_w + (p % G.out_w) * G.s_w) * G.channels;
}

/// acc[r][.] = sum over the patch of x(window r, k) W(k, col + .), from zero, k in order: the windows
/// start at base[r], V vectors of W at column `col`. Fully unrolled, each offset a constant; always
/// inlined, so that the accumulators stay in registers (a captured or escaping array would not).
template <window_geometry G, std::size_t F, std::size_t R, std::size_t V, std::size_t Last>
[[gnu::always_inline]] inline void
patch_products(const float* const (&base)[R], const float* w, std::size_t col, vfloat (&acc)[R][V]) noexcept
{
    static constexpr auto off = patch_offsets<G>;
#pragma GCC unroll 16
    for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (std::size_t v = 0; v < V; ++v)
            acc[r][v] = vfloat::broadcast(0.0f);
    constexpr std::size_t K = G.patch();
#pragma GCC unroll 64
    for (std::size_t k = 0; k < K; ++k) {
        vfloat bv[V];
#pragma GCC unroll 4
        for (std::size_t v = 0; v < V; ++v)
            bv[v] = v + 1 < V || Last == W ? vfloat::load(w + k * F + col + v * W)
                                           : vfloat::load_n(w + k * F + col + v * W, Last);
#pragma GCC unroll 16
        for (std::size_t r = 0; r < R; ++r) {
            const vfloat av = vfloat::broadcast(base[r][off[k]]);
#pragma GCC unroll 4
            for (std::size_t v = 0; v < V; ++v)
                acc[r][v] = fma(av, bv[v], acc[r][v]);
        }
    }
}

/// Z rows [p0, p0 + n), n <= R, V vectors at column `col`: act(sum_k x(window, k) W(k, .) + b), the
/// patch unrolled with compile-time offsets. A short tile (the positions left after the last full
/// one) repeats its last real row's chains in the others and stores only the real rows: the same
/// bits, and one instance for the full tiles and the last.
template <window_geometry G, std::size_t F, std::size_t R, std::size_t V, std::size_t Last, class Epi>
inline void
forward_tile(const float* x, std::size_t p0, const float* w, float* z, const Epi& epi, std::size_t col,
             std::size_t n = R) noexcept
{
    const float* base[R];
#pragma GCC unroll 16
    for (std::size_t r = 0; r < R; ++r)
        base[r] = x + window_start<G>(p0 + (r < n ? r : n - 1));
    vfloat acc[R][V];
    patch_products<G, F, R, V, Last>(base, w, col, acc);
#pragma GCC unroll 16
    for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (std::size_t v = 0; v < V; ++v) {
            if (r >= n)   // in the loop's body: bounds in the loop's test would keep it from unrolling
                continue;
            const std::size_t lanes = v + 1 < V ? W : Last;
            epi.apply(acc[r][v], col + v * W, lanes);
            float* out = z + (p0 + r) * F + col + v * W;
            if (lanes == W)
                acc[r][v].store(out);
            else
                acc[r][v].store_n(out, lanes);
        }
}

/// Vectors of channels per pool_tile over windows of E positions: the E V accumulators, V kernel
/// vectors and one broadcast in the registers (at most 4 vectors); 0 when even one does not fit.
template <std::size_t E>
inline constexpr std::size_t pool_panel_vectors =
    std::min<std::size_t>(4, (tpudsl::detail::simd::registers - 1) / (E + 1));

/// One pooling window of PG over the convolution's output, V vectors at column `col`: its k_h k_w
/// positions computed as forward_tile computes them (the same chains, then the epilogue), and their
/// maximum and argmax taken in registers as max_pool_forward takes them (window order, the first
/// maximum on ties, the argmax the flat index into the convolution's (P, F) output). Nothing of the
/// convolution's output is stored.
template <window_geometry G, window_geometry PG, std::size_t F, std::size_t V, std::size_t Last, class Epi>
inline void
pool_tile(const float* x, std::size_t window, const float* w, float* y, float* argmax, const Epi& epi,
          std::size_t col) noexcept
{
    constexpr std::size_t E = PG.k_h * PG.k_w;
    const std::size_t first = (window / PG.out_w) * PG.s_h * PG.in_w + (window % PG.out_w) * PG.s_w;
    const float* base[E];
#pragma GCC unroll 16
    for (std::size_t e = 0; e < E; ++e)
        base[e] = x + window_start<G>(first + (e / PG.k_w) * PG.in_w + e % PG.k_w);
    vfloat acc[E][V];
    patch_products<G, F, E, V, Last>(base, w, col, acc);
    // Window element e's argmax index is (first + step_e) F + channel: exact integers in a float
    // (under 2^24), one conversion per tile and constant vectors for the rest.
    const vfloat at = vfloat::broadcast(static_cast<float>(static_cast<std::int32_t>(first * F + col)));
#pragma GCC unroll 4
    for (std::size_t v = 0; v < V; ++v) {
        const std::size_t lanes = v + 1 < V ? W : Last, c = col + v * W;
#pragma GCC unroll 16
        for (std::size_t e = 0; e < E; ++e)
            epi.apply(acc[e][v], c, lanes);
        vfloat m = acc[0][v], am = at + vfloat::ramp(static_cast<float>(v * W));
#pragma GCC unroll 16
        for (std::size_t e = 1; e < E; ++e) {
            const std::size_t step = (e / PG.k_w) * PG.in_w + e % PG.k_w;
            take_if_greater(acc[e][v], m, at + vfloat::ramp(static_cast<float>(step * F + v * W)), am);
        }
        float* yo = y + window * F + c;
        float* ao = argmax + window * F + c;
        if (lanes == W) {
            m.store(yo);
            am.store(ao);
        } else {
            m.store_n(yo, lanes);
            am.store_n(ao, lanes);
        }
    }
}

/// dW rows [K0, K0 + R) (patch elements), V vectors at column `col`, (+)= sum over the windows p of
/// output rows [oh0, oh1) of x(window p, k) dZ(p, .), p in order; dz holds those rows from its start.
template <window_geometry G, std::size_t F, std::size_t K0, std::size_t R, std::size_t V, std::size_t Last>
inline void
gradient_tile(const float* x, const float* dz, float* dw, bool accumulate, std::size_t col, std::size_t oh0,
              std::size_t oh1) noexcept
{
    static constexpr auto off = patch_offsets<G>;
    vfloat acc[R][V];
#pragma GCC unroll 16
    for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (std::size_t v = 0; v < V; ++v) {
            float* c = dw + (K0 + r) * F + col + v * W;
            if (!accumulate)
                acc[r][v] = vfloat::broadcast(0.0f);
            else if (v + 1 < V || Last == W)
                acc[r][v] = vfloat::load(c);
            else
                acc[r][v] = vfloat::load_n(c, Last);
        }
    for (std::size_t oh = oh0; oh < oh1; ++oh) {
        const float* xrow = x + oh * G.s_h * G.in_w * G.channels;
        const float* dzrow = dz + (oh - oh0) * G.out_w * F + col;
        for (std::size_t ow = 0; ow < G.out_w; ++ow) {
            const float* xp = xrow + ow * G.s_w * G.channels;
            vfloat bv[V];
#pragma GCC unroll 4
            for (std::size_t v = 0; v < V; ++v)
                bv[v] = v + 1 < V || Last == W ? vfloat::load(dzrow + ow * F + v * W)
                                               : vfloat::load_n(dzrow + ow * F + v * W, Last);
#pragma GCC unroll 16
            for (std::size_t r = 0; r < R; ++r) {
                const vfloat av = vfloat::broadcast(xp[off[K0 + r]]);
#pragma GCC unroll 4
                for (std::size_t v = 0; v < V; ++v)
                    acc[r][v] = fma(av, bv[v], acc[r][v]);
            }
        }
    }
#pragma GCC unroll 16
    for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (std::size_t v = 0; v < V; ++v) {
            float* c = dw + (K0 + r) * F + col + v * W;
            if (v + 1 < V || Last == W)
                acc[r][v].store(c);
            else
                acc[r][v].store_n(c, Last);
        }
}

/// The rows of A that a window-runs GEMM reads: row p (a position; per_row of them to an output row) is
/// `runs` runs of `run` contiguous floats, the first at x + (p / per_row) row_stride + (p % per_row)
/// col_stride, each next one run_step floats further. B's rows follow the same order, run after run.
struct window_runs {
    std::size_t per_row, row_stride, col_stride, run, run_step, runs;

    [[nodiscard]] const float*
    start(const float* x, std::size_t p) const noexcept
    {
        return x + (p / per_row) * row_stride + (p % per_row) * col_stride;
    }
};

/// C rows [p0, p0 + T), V vectors (the last `Last` lanes wide), over runs [i0, i1) of A's rows
/// (window_runs): each element's chain goes on from C (`load_c`) or starts from zero, in registers
/// through those runs; then C is stored, through the epilogue when `finish`. b and c start at the
/// panel's column `col`; B's and C's rows ldb and ldc floats apart.
template <std::size_t T, std::size_t V, std::size_t Last, class Epi, class Count>
inline void
window_runs_tile(const window_runs& g, std::size_t i0, std::size_t i1, const float* x, std::size_t p0, Count n,
                 const float* b, std::size_t ldb, float* c, std::size_t ldc, bool load_c, bool finish, const Epi& epi,
                 std::size_t col) noexcept
{
    pointer_rows<T> t;
#pragma GCC unroll 16
    for (std::size_t r = 0; r < T; ++r) {
        const std::size_t p = p0 + (r < n ? r : n - 1);
        t.a[r] = g.start(x, p) + i0 * g.run_step;
        t.c[r] = c + p * ldc;
    }
    vfloat acc[T][V];
    tile_start<T, V, Last>(acc, t, load_c, n);
    for (std::size_t i = i0; i < i1; ++i) {
        tile_steps<T, V, Last, false>(acc, g.run, t, b + i * g.run * ldb, ldb, n);
#pragma GCC unroll 16
        for (std::size_t r = 0; r < T; ++r)
            t.a[r] += g.run_step;
    }
    tile_store<T, V, Last>(acc, t, finish, epi, col, false, n);
}

/// True when window_runs_gemm reads a B of N columns well in place: its rows at most four column
/// panels wide. Rows further apart (AVX2's 16-column panel of a 128-filter kernel: 64 bytes used of
/// every 512) map onto few L1 sets and pages; there one GEMM per window row, which packs B, is as
/// fast, and stays the better choice for wide outputs.
template <std::size_t N>
inline constexpr bool runs_read_in_place = N <= 4 * plan<N>::nv * W;

/// C (m, N) = epi(A . B), A's m rows as `g` lays them out, B (runs run, N) row-major: every column
/// panel of plan<N>, its rows in tiles of the plan's height (row_tiles), a tile's rows taken as the
/// positions come, across output rows. One GEMM per output row and window row would leave a short
/// tile at the end of each output row (13 positions: 6 + 6 + 1, the last one latency-bound) and
/// read and write C once per window row. The runs go in blocks whose rows of B's panel take at most
/// 16 KB, every tile through one block before the next, so that the block stays in L1 across the
/// tiles (CIFAR-10's second convolution with AVX-512: a panel of 288 rows of 128 bytes, 36 KB, in
/// blocks of one window row); C is carried from block to block. The chains are those of the per-row
/// GEMMs (a float stored and read back is the same float): the same bits.
template <std::size_t N, class Epi>
inline void
window_runs_gemm(const window_runs& g, std::size_t m, const float* x, const float* b, float* c, const Epi& epi) noexcept
{
    using P = plan<N>;
    for_each_panel<N>([&]<std::size_t V, std::size_t Last>(std::size_t col) {
        constexpr std::size_t mr = V == P::nv ? P::mr : P::rest_mr;
        const std::size_t block = std::max<std::size_t>(1, 16384 / (g.run * V * W * sizeof(float)));
        for (std::size_t i0 = 0; i0 < g.runs; i0 += block) {
            const std::size_t i1 = std::min(g.runs, i0 + block);
            row_tiles<mr, latency_rows<V>>(m, [&]<std::size_t T>(std::size_t p, auto n) {
                window_runs_tile<T, V, Last>(g, i0, i1, x, p, n, b + col, N, c + col, N, i0 > 0, i1 == g.runs, epi,
                                             col);
            });
        }
    });
}

/// Calls f.template operator()<V, Last>(col) for each column panel of a C with N columns, the
/// panels of gemm's plan, unrolled: unlike the toolkit's for_each_panel, which loops over the full
/// panels, each call here has its column as a constant.
template <std::size_t N, class Fn>
inline void
for_each_panel_unrolled(Fn&& f) noexcept
{
    using P = plan<N>;
    [&]<std::size_t... p>(std::index_sequence<p...>) {
        (f.template operator()<P::nv, (P::rest == 0 && p + 1 == P::panels) ? P::last_lanes : W>(p * P::nv * W), ...);
    }(std::make_index_sequence<P::panels>{});
    if constexpr (P::rest > 0)
        f.template operator()<P::rest, P::last_lanes>(P::panels * P::nv * W);
}

/// dW (patch, F) (+)= sum over the windows p of output rows [oh0, oh1) of x(window p)^T dZ(p, .), p in
/// order; dz holds those rows from its start. Every tile of dW in turn.
template <window_geometry G, std::size_t F>
inline void
gradient_rows(const float* x, const float* dz, float* dw, bool accumulate, std::size_t oh0, std::size_t oh1) noexcept
{
    using P = plan<F>;
    constexpr std::size_t K = G.patch();
    for_each_panel_unrolled<F>([&]<std::size_t V, std::size_t Last>(std::size_t col) {
        constexpr std::size_t mr = V == P::nv ? P::mr : P::rest_mr;
        [&]<std::size_t... t>(std::index_sequence<t...>) {
            (gradient_tile<G, F, t * mr, mr, V, Last>(x, dz, dw, accumulate, col, oh0, oh1), ...);
        }(std::make_index_sequence<K / mr>{});
        if constexpr (K % mr != 0)
            gradient_tile<G, F, K / mr * mr, K % mr, V, Last>(x, dz, dw, accumulate, col, oh0, oh1);
    });
}

/// The rows path's kernel gradient: dW's rows [kh R, kh R + R) (R = k_w C) (+)= sum over the windows
/// p of window row kh of x(p)^T dZ(p, .), p in order. Output rows in groups of about 128 positions:
/// for each group and each kh, every tile of dW keeps its chains in registers across the group's
/// rows (one strided GEMM step run per output row, C read and written once per group), and the
/// group's rows of x (a 3 x 3 window over 15 x 15 x 64: 10 rows of 15 x 64 floats) stay in L1 across
/// the tiles. One GEMM per output row and kh would read and write C's tiles every out_w steps (13
/// there). The chains are the same: positions in order, carried through dW.
template <window_geometry G, std::size_t F>
inline void
rows_kernel_gradient(const float* x, const float* dz, float* dw, bool accumulate) noexcept
{
    using P = plan<F>;
    constexpr std::size_t R = G.k_w * G.channels, group = (128 + G.out_w - 1) / G.out_w;
    for (std::size_t oh0 = 0; oh0 < G.out_h; oh0 += group) {
        const std::size_t oh1 = std::min(G.out_h, oh0 + group);
        for (std::size_t kh = 0; kh < G.k_h; ++kh)
            for_each_panel_unrolled<F>([&]<std::size_t V, std::size_t Last>(std::size_t col) {
                constexpr std::size_t mr = V == P::nv ? P::mr : P::rest_mr;
                row_tiles<mr, latency_rows<V>>(R, [&]<std::size_t T>(std::size_t i, auto n) {
                    vfloat acc[T][V];
                    const strided_rows out{nullptr, 0, 0, dw + (kh * R + i) * F + col, F};
                    tile_start<T, V, Last>(acc, out, accumulate || oh0 > 0, n);
                    for (std::size_t oh = oh0; oh < oh1; ++oh) {
                        const float* xrow = x + (oh * G.s_h + kh) * G.in_w * G.channels + i;
                        tile_steps<T, V, Last, false>(acc, G.out_w,
                                                      strided_rows{xrow, 1, G.s_w * G.channels, nullptr, 0},
                                                      dz + oh * G.out_w * F + col, F, n);
                    }
                    tile_store<T, V, Last>(acc, out, false, epilogue{}, col, false, n);
                });
            });
    }
}

} // namespace detail

/// z(P, F) = act(conv(x) + b) for one sample x of geometry G, read in place (conv_path_for<G> is
/// strided or direct); Act is Linear or Relu (applied as each tile leaves the registers).
template <window_geometry G, std::size_t F, EpilogueActivation Act>
inline void
conv_forward_in_place(const float* x, const float* w, const float* b, float* z) noexcept
{
    constexpr conv_path path = conv_path_for<G>;
    static_assert(path != conv_path::im2col, "conv_forward_in_place: this geometry needs im2col");
    const detail::epilogue epi = detail::bias_epilogue_for<Act>(b);
    if constexpr (path == conv_path::strided) {
        detail::blocked<F>(G.out_w, G.patch(), x, G.s_w * G.channels, 1, w, z, false, epi);
    } else if constexpr (path == conv_path::rows) {   // window rows of k_w C floats, in_w C apart
        constexpr std::size_t C = G.channels, R = G.k_w * C;
        if constexpr (detail::runs_read_in_place<F>) {
            constexpr detail::window_runs runs{G.out_w, G.s_h * G.in_w * C, G.s_w * C, R, G.in_w * C, G.k_h};
            detail::window_runs_gemm<F>(runs, G.positions(), x, w, z, epi);
        } else {   // output row oh: one strided GEMM per window row kh, added up
            for (std::size_t oh = 0; oh < G.out_h; ++oh) {
                float* zr = z + oh * G.out_w * F;
                for (std::size_t kh = 0; kh < G.k_h; ++kh) {
                    const float* xr = x + (oh * G.s_h + kh) * G.in_w * C;
                    if (kh + 1 < G.k_h)
                        detail::blocked<F>(G.out_w, R, xr, G.s_w * C, 1, w + kh * R * F, zr, kh > 0);
                    else   // the bias and the activation once the last window row is in
                        detail::blocked<F>(G.out_w, R, xr, G.s_w * C, 1, w + kh * R * F, zr, kh > 0, epi);
                }
            }
        }
    } else {
        using P = detail::plan<F>;
        constexpr std::size_t positions = G.positions();
        detail::for_each_panel_unrolled<F>([&]<std::size_t V, std::size_t Last>(std::size_t col) {
            constexpr std::size_t mr = V == P::nv ? P::mr : P::rest_mr;
            std::size_t p = 0;
            for (; p + mr <= positions; p += mr)
                detail::forward_tile<G, F, mr, V, Last>(x, p, w, z, epi, col);
            if constexpr (positions % mr != 0)
                detail::forward_tile<G, F, mr, V, Last>(x, p, w, z, epi, col, positions % mr);
        });
    }
}

/// True when a direct convolution of geometry G with F filters and the max pooling PG over its output
/// run as one pass (conv_pool_forward_in_place): windows that tile the output without padding, each
/// window's positions few enough to stay in registers as the rows of one tile.
template <window_geometry G, window_geometry PG, std::size_t F>
inline constexpr bool pools_in_tiles = conv_path_for<G> == conv_path::direct && windows_tile<PG> &&
                                       PG.channels == F && PG.in_h == G.out_h && PG.in_w == G.out_w &&
                                       detail::pool_panel_vectors<PG.k_h * PG.k_w> > 0;

/// y(PG's output), argmax <- max_pool_forward<PG> of conv_forward_in_place<G, F, Act>(x), the same
/// bits, without writing the convolution's output: each pooling window's positions are one register
/// tile (pools_in_tiles<G, PG, F>). Act is Linear or Relu.
template <window_geometry G, window_geometry PG, std::size_t F, EpilogueActivation Act>
inline void
conv_pool_forward_in_place(const float* x, const float* w, const float* b, float* y, float* argmax) noexcept
{
    static_assert(pools_in_tiles<G, PG, F>, "conv_pool_forward_in_place: these windows do not tile in registers");
    const detail::epilogue epi = detail::bias_epilogue_for<Act>(b);
    constexpr std::size_t W = detail::W, vectors = (F + W - 1) / W;
    constexpr std::size_t nv = std::min(vectors, detail::pool_panel_vectors<PG.k_h * PG.k_w>);
    constexpr std::size_t panels = vectors / nv, rest = vectors % nv, last_lanes = F - (vectors - 1) * W;
    auto panel = [&]<std::size_t V, std::size_t Last>(std::size_t col) {
        for (std::size_t window = 0; window < PG.positions(); ++window)
            detail::pool_tile<G, PG, F, V, Last>(x, window, w, y, argmax, epi, col);
    };
    [&]<std::size_t... p>(std::index_sequence<p...>) {
        (panel.template operator()<nv, (rest == 0 && p + 1 == panels) ? last_lanes : W>(p * nv * W), ...);
    }(std::make_index_sequence<panels>{});
    if constexpr (rest > 0)
        panel.template operator()<rest, last_lanes>(panels * nv * W);
}

/// dW(patch, F) (+)= conv's kernel gradient over one sample: sum over windows p of x(window p)^T dz(p, .),
/// x read in place (conv_path_for<G> is strided or direct). `accumulate`: add to dW (a later sample).
template <window_geometry G, std::size_t F>
inline void
conv_kernel_gradient_in_place(const float* x, const float* dz, float* dw, bool accumulate) noexcept
{
    constexpr conv_path path = conv_path_for<G>;
    static_assert(path != conv_path::im2col, "conv_kernel_gradient_in_place: this geometry needs im2col");
    if constexpr (path == conv_path::strided) {
        detail::blocked<F>(G.patch(), G.out_w, x, 1, G.s_w * G.channels, dz, dw, accumulate);
    } else if constexpr (path == conv_path::rows) {
        detail::rows_kernel_gradient<G, F>(x, dz, dw, accumulate);   // positions in order, as im2col's GEMM
    } else {
        detail::gradient_rows<G, F>(x, dz, dw, accumulate, 0, G.out_h);
    }
}

/// True when conv_pool_kernel_gradient can run: a direct convolution of geometry G with F filters, an
/// activation Act and a max pooling PG over its output whose windows tile it (max_pool_backward_through).
template <window_geometry G, window_geometry PG, std::size_t F, class Act>
inline constexpr bool pool_gradient_in_bands = conv_path_for<G> == conv_path::direct && pool_backward_through_act<PG, Act> &&
                                               PG.channels == F && PG.in_h == G.out_h && PG.in_w == G.out_w;

/// The kernel and bias gradients of a direct convolution G (F filters, then Act, then the max pooling
/// PG) over one sample, from the pooled gradient dy: max_pool_backward_through<PG, Act> writing dZ,
/// then conv_kernel_gradient_in_place<G, F> reading it, the same bits, one band of PG.k_h output rows
/// at a time, in `dz` (PG.k_h G.out_w F floats at least: the caller's one-sample buffer). A whole dZ
/// (26 x 26 x 64: 173 KB) would go through L2, written once and read once per tile of dW; a band
/// (2 x 26 x 64: 13 KB) stays in L1. Each element of dW is still one chain over the positions in order, carried
/// from band to band through dw.
template <window_geometry G, window_geometry PG, std::size_t F, class Act>
inline void
conv_pool_kernel_gradient(const float* x, const float* y, const float* dy, const float* argmax, float* dz, float* dw,
                          float* db, bool accumulate) noexcept
{
    static_assert(pool_gradient_in_bands<G, PG, F, Act>, "conv_pool_kernel_gradient: not a direct convolution under tiling windows");
    constexpr std::size_t covered_h = PG.out_h * PG.k_h;
    alignas(64) float sums[2][F] = {};
    for (std::size_t r = 0; r < PG.out_h; ++r) {
        detail::backward_through_rows<PG, Act>(y, dy, argmax, dz, sums, r, r + 1);
        detail::gradient_rows<G, F>(x, dz, dw, accumulate || r > 0, r * PG.k_h, (r + 1) * PG.k_h);
    }
    if constexpr (covered_h < G.out_h) {   // rows no window reads: dZ = 0 there, added as the whole pass adds it
        std::fill_n(dz, (G.out_h - covered_h) * G.out_w * F, 0.0f);
        detail::gradient_rows<G, F>(x, dz, dw, accumulate || PG.out_h > 0, covered_h, G.out_h);
    }
    detail::finish_sums<F>(sums, db, accumulate);
}

/// True when the input gradient of a convolution of geometry G is itself a convolution that reads its
/// operand in place: stride 1, and a 1-D convolution (the strided path) or a 2-D one read by window
/// rows (the rows path), of x itself or of its zero frame (a `Same` padding: frame_geometry). Then
///
///   dX(h, t, c) = sum over i < k_h, j < k_w, f < F of dZp(h + pad_top + i, t + pad_left + j, f)
///                                                       Wf((i k_w + j) F + f, c),
///
/// dZp being dZ (out_h, out_w, F) in a frame of zeros, k_h - 1 rows above and below, k_w - 1 columns
/// left and right (dz_frame_size), and Wf (k_h k_w F, C) the kernel flipped along both window axes,
/// each tap transposed: Wf(q F + f, c) = W((k_h k_w - 1 - q) C + c, f). Row t of output row h's GEMM
/// for window row i reads the k_w F contiguous floats of dZp's row h + i from column t on, rows F
/// floats apart: the layout the forward reads x in. Against dcols = dZ . W^T, then col2im adding each
/// window's row back into dX, it writes no window gradients and reads none back, and its C is dX
/// itself. Each element of dX is one chain over its taps and filters in a window row, the window rows
/// then added in order (col2im: a chain per window, the windows then added): the same sums in another
/// order.
template <window_geometry G>
inline constexpr bool input_gradient_as_conv = [] {
    constexpr window_geometry RG = G.windows_inside() ? G : frame_geometry<G>;
    constexpr conv_path path = conv_path_for<RG>;
    // dZp reaches every input position: in_h + pad_top <= out_h + k_h - 1 (equal without padding).
    return G.s_w == 1 && (path == conv_path::strided || (path == conv_path::rows && G.s_h == 1)) &&
           G.in_h + G.pad_top + 1 <= G.out_h + G.k_h && G.in_w + G.pad_left + 1 <= G.out_w + G.k_w;
}();

/// Floats of the zero frame around dZ that conv_input_gradient_in_place reads.
template <window_geometry G, std::size_t F>
inline constexpr std::size_t dz_frame_size = (G.out_h + 2 * (G.k_h - 1)) * (G.out_w + 2 * (G.k_w - 1)) * F;

/// Copies dZ (out_h, out_w, F) into the inside of its frame (dz_frame_size floats); the border is left
/// as it is (zeros, written once).
template <window_geometry G, std::size_t F>
inline void
frame_dz(const float* dz, float* frame) noexcept
{
    constexpr std::size_t FW = G.out_w + 2 * (G.k_w - 1);
    for (std::size_t oh = 0; oh < G.out_h; ++oh)
        std::copy_n(dz + oh * G.out_w * F, G.out_w * F, frame + ((oh + G.k_h - 1) * FW + G.k_w - 1) * F);
}

/// Wf (k_h k_w F, C) of a kernel W (k_h k_w C, F), as input_gradient_as_conv defines it.
template <window_geometry G, std::size_t F>
inline void
flip_kernel(const float* w, float* wf) noexcept
{
    constexpr std::size_t C = G.channels, taps = G.k_h * G.k_w;
    for (std::size_t j = 0; j < taps; ++j)
        detail::transpose_strided(w + (taps - 1 - j) * C * F, C, F, F, wf + j * F * C, C);
}

/// Wf of W in this thread's transpose buffer (scratch::transposed_b, the one transposed_scratch uses):
/// valid until the thread's next call of either, or of gemm_nt without a `bt`.
template <window_geometry G, std::size_t F>
[[nodiscard]] inline const float*
flipped_kernel_scratch(const float* w)
{
    float* wf = detail::scratch_buffer(G.patch() * F, detail::scratch::transposed_b);
    flip_kernel<G, F>(w, wf);
    return wf;
}

/// What flipped_kernel_scratch<G, F> asks of the scratch.
template <window_geometry G, std::size_t F>
[[nodiscard]] constexpr scratch_sizes
flipped_kernel_scratch_sizes() noexcept
{
    return scratch_sizes::of(detail::scratch::transposed_b, G.patch() * F);
}

/// True when conv_input_gradient_in_place runs a 1-D convolution's input gradient with positions
/// along the vectors: where C channels fill under 80% of one vector's lanes (up to 12 with AVX-512's
/// 16, 6 with AVX2's 8, 3 with SSE2's 4), such as the Reuters model's embedding of 7 channels. dX^T
/// (C, in_w) is then a GEMM of C rows whose B rows are dZ^T's rows, each shifted by a tap: C x NV
/// vector tiles of full lanes (detail::position_vectors: 2 to 4) instead of 14 x 1 tiles of C lanes.
/// Wider channel counts keep the GEMM by positions' rows: their C rows of accumulators would not fit
/// the registers.
template <window_geometry G>
inline constexpr bool input_gradient_by_positions = G.in_h == 1 && G.k_h == 1 && 5 * G.channels < 4 * detail::W;

namespace detail {

/// Position vectors a tile of the by-positions input gradient holds: C accumulators for each, its
/// vector of dZ^T and the broadcast of Wf's element within the instruction set's registers; at most 4.
template <std::size_t C>
inline constexpr std::size_t position_vectors = [] {
    for (std::size_t v = 4; v > 1; --v)
        if (C * v + v + 1 <= tpudsl::detail::simd::registers)
            return v;
    return std::size_t{1};
}();

/// The by-positions layout of one sample's framed dZ: its transpose dZ^T (F rows of `ld` floats), each
/// row the frame's columns, then zeros as far as the last tile's windows read (a row holds both: a
/// Same padding's frame reaches past the windows by its right padding).
template <window_geometry G, std::size_t F>
struct positions_frame {
    static constexpr std::size_t columns = G.out_w + 2 * (G.k_w - 1);   // the frame's
    static constexpr std::size_t vectors = (G.in_w + W - 1) / W;         // dX's positions, in vectors
    static constexpr std::size_t read = vectors * W + G.pad_left + G.k_w - 1;   // the tiles' reach
    static constexpr std::size_t ld = (std::max(columns, read) + W - 1) / W * W;
    static constexpr std::size_t floats = F * ld;
    static_assert(ld >= columns && ld >= read);
};

/// Rows [0, C) x NV vectors of dX^T from position t0 (a multiple of W), into `out` (C rows of NV W
/// floats): out(c, t) = sum over taps q, then filters f, of Wf(q F + f, c) dZ^T(f, t0 + t + pad_left + q),
/// one chain per element in the order of Wf's rows (the per-position GEMM's order: the same bits). For
/// each tap the toolkit's register tile runs over the F filters: A(c, f) = Wf(q F + f, c), broadcast;
/// B's row f is dZ^T's row f from the tap's column on, `ld` floats from the next.
template <std::size_t C, std::size_t NV>
inline void
positions_tile(const float* dzt, std::size_t ld, std::size_t F, std::size_t taps, const float* wf,
               float* out) noexcept
{
    vfloat acc[C][NV];
    const strided_rows into{wf, 1, C, out, NV * W};
    tile_start<C, NV, W>(acc, into, false);
    for (std::size_t q = 0; q < taps; ++q)
        tile_steps<C, NV, W, false>(acc, F, strided_rows{wf + q * F * C, 1, C, out, NV * W}, dzt + q, ld);
    tile_store<C, NV, W>(acc, into, false, epilogue{}, 0, false);
}

/// dX (in_w, C) of a 1-D convolution by positions (input_gradient_by_positions): dZ^T in the scratch
/// (scratch::packed_b), then tiles of position_vectors<C> vectors, the last one narrower, each tile's
/// C x NV W block transposed into dX's rows.
template <window_geometry G, std::size_t F>
inline void
conv_input_gradient_by_positions(const float* dzp, const float* wf, float* dx) noexcept
{
    constexpr std::size_t C = G.channels, NV = position_vectors<C>;
    using frame = positions_frame<G, F>;
    float* dzt = scratch_buffer(frame::floats, scratch::packed_b);
    transpose_strided(dzp, frame::columns, F, F, dzt, frame::ld);
    for (std::size_t f = 0; f < F; ++f)
        std::fill(dzt + f * frame::ld + frame::columns, dzt + (f + 1) * frame::ld, 0.0f);
    const float* from = dzt + G.pad_left;   // dZ^T's column of input position 0's first tap
    alignas(64) float tile[C * NV * W];
    auto put = [&](std::size_t t0, std::size_t width) {   // the tile's positions before in_w into dX
        transpose_strided(tile, C, std::min(width, G.in_w - t0), width, dx + t0 * C, C);
    };
    constexpr std::size_t full = frame::vectors / NV, rest = frame::vectors % NV;
    for (std::size_t i = 0; i < full; ++i) {
        positions_tile<C, NV>(from + i * NV * W, frame::ld, F, G.k_w, wf, tile);
        put(i * NV * W, NV * W);
    }
    if constexpr (rest > 0) {
        positions_tile<C, rest>(from + full * NV * W, frame::ld, F, G.k_w, wf, tile);
        put(full * NV * W, rest * W);
    }
}

} // namespace detail

/// What the in-place convolution kernels of G and F (forward, kernel gradient, input gradient, each
/// a few `blocked` GEMMs) ask of the scratch.
template <window_geometry G, std::size_t F>
[[nodiscard]] constexpr scratch_sizes
conv_in_place_scratch() noexcept
{
    return detail::blocked_scratch<F>(G.out_w) | detail::blocked_scratch<F>(G.patch()) |
           detail::blocked_scratch<G.channels>(G.in_w);
}

/// What conv_input_gradient_in_place<G, F> asks of the scratch besides conv_in_place_scratch's
/// blocked GEMMs: the flipped kernel (flipped_kernel_scratch), and dZ^T where it runs by positions.
template <window_geometry G, std::size_t F>
[[nodiscard]] constexpr scratch_sizes
conv_input_gradient_scratch() noexcept
{
    scratch_sizes s = flipped_kernel_scratch_sizes<G, F>();
    if constexpr (input_gradient_by_positions<G>)
        s |= scratch_sizes::of(detail::scratch::packed_b, detail::positions_frame<G, F>::floats);
    return s;
}

/// dX (in_h, in_w, C) of one sample = conv(dZp, Wf) (input_gradient_as_conv): `dzp` is dZ in its zero
/// frame (frame_dz), `wf` from flip_kernel. A 2-D one reads each position's window in dZp run by run
/// (window_runs_gemm, where it reads Wf well in place); otherwise output row h is one strided GEMM per
/// window row (a 1-D one: one GEMM, B's panels packed and kept in L1 across its rows). Either way each
/// element is one chain over its taps and filters, window row after window row.
template <window_geometry G, std::size_t F>
inline void
conv_input_gradient_in_place(const float* dzp, const float* wf, float* dx) noexcept
{
    static_assert(input_gradient_as_conv<G>, "conv_input_gradient_in_place: a convolution of stride 1 read in place");
    constexpr std::size_t C = G.channels, FW = G.out_w + 2 * (G.k_w - 1), R = G.k_w * F;
    const float* at = dzp + (G.pad_top * FW + G.pad_left) * F;   // the window of input position (0, 0)
    if constexpr (input_gradient_by_positions<G>) {
        detail::conv_input_gradient_by_positions<G, F>(dzp, wf, dx);
    } else if constexpr (G.in_h > 1 && detail::runs_read_in_place<C>) {
        constexpr detail::window_runs runs{G.in_w, FW * F, F, R, FW * F, G.k_h};
        detail::window_runs_gemm<C>(runs, G.in_h * G.in_w, at, wf, dx, detail::epilogue{});
    } else {   // output row h: one strided GEMM per window row i, added up
        for (std::size_t h = 0; h < G.in_h; ++h)
            for (std::size_t i = 0; i < G.k_h; ++i)
                detail::blocked<C>(G.in_w, R, at + (h + i) * FW * F, F, 1, wf + i * R * C, dx + h * G.in_w * C, i > 0);
    }
}

} // namespace tpudsl::kernels

#endif // !TPUDSL_KERNELS_DIRECT_CONV_HPP
