/// @file Defines gemm_tn_micro_batches, the micro-batch kernel gradient: C = A^T . B over the micro-batches of a batch,
/// each element one chain over every micro-batch's rows in order (the bits of gemm_tn on the micro-batches stacked).
#ifndef TPUDSL_KERNELS_GEMM_MICRO_BATCHES_HPP
#define TPUDSL_KERNELS_GEMM_MICRO_BATCHES_HPP

#include <tpudsl/config.hpp>
#include <tpudsl/kernels/gemm/toolkit.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include <tpudsl/kernels/gemm/loops_begin.hpp>   // GCC's loop warning off, to loops_end.hpp

namespace tpudsl::kernels {

/// A micro-batch of a batch for gemm_tn_micro_batches: A_p(i, k) = a[k lda + i] and B_p (k, N) row-major, k rows.
struct gemm_micro_batch {
    const float* a;
    const float* b;
    std::size_t k;
};

namespace detail {

/// A C tile (R rows from i, V vectors at col) of gemm_tn_micro_batches: one chain per element over every micro-batch's
/// rows in order, from zero (from C when `load_c`), in registers. B's panels are read packed one after another (`Packed`:
/// `packed` holds each micro-batch's panel in turn, rows V W floats apart) or in place (rows n floats apart). C's rows
/// are n floats apart. `real`: the tile's real rows (row_tiles).
template <std::size_t R, std::size_t V, std::size_t Last, bool Packed, class Count>
inline void
micro_batches_tile(std::size_t i, Count real, std::size_t lda, const gemm_micro_batch* batches, std::size_t count,
                   const float* packed, std::size_t n, float* c, std::size_t col, bool load_c) noexcept
{
    vfloat acc[R][V];
    const strided_rows out{nullptr, 0, 0, c, n};
    tile_start<R, V, Last>(acc, out, load_c, real);
    const float* b = packed;
    for (std::size_t p = 0; p < count; ++p) {
        const gemm_micro_batch mb = batches[p];
        if constexpr (!Packed)
            b = mb.b + col;
        tile_steps<R, V, Last, Packed>(acc, mb.k, strided_rows{mb.a + i, 1, lda, nullptr, 0}, b, Packed ? V * W : n,
                                       real);
        if constexpr (Packed)
            b += mb.k * V * W;
    }
    tile_store<R, V, Last>(acc, out, false, epilogue{}, col, false, real);
}

/// Rows [0, m) of one column panel of gemm_tn_micro_batches' C (micro_batches_tile), `rows` the micro-batches' rows in all. Each
/// micro-batch's panel of B is copied first when at least 48 rows of C share it (its rows N floats apart share
/// few L1 sets, and a partial last vector would take masked loads).
/// `pack`: m >= 48 and B's rows in place are not already one packed panel (the caller's plan); C's and B's rows n
/// floats apart.
template <std::size_t MR, std::size_t V, std::size_t Last>
inline void
micro_batches_panel(std::size_t m, std::size_t lda, const gemm_micro_batch* batches, std::size_t count, std::size_t rows,
                    std::size_t n, float* c, std::size_t col, bool load_c, bool pack) noexcept
{
    constexpr std::size_t LD = V * W;
    if (pack) {
        float* packed = scratch_buffer(rows * LD, scratch::packed_b);
        float* to = packed;
        for (std::size_t p = 0; p < count; ++p) {
            const gemm_micro_batch mb = batches[p];
            pack_panel<V>(mb.k, mb.b, n, col, to);
            to += mb.k * LD;
        }
        row_tiles<MR, latency_rows<V>>(m, [&]<std::size_t R>(std::size_t i, auto real) {
            micro_batches_tile<R, V, Last, true>(i, real, lda, batches, count, packed, n, c + i * n + col, col,
                                                 load_c);
        });
    } else {
        row_tiles<MR, latency_rows<V>>(m, [&]<std::size_t R>(std::size_t i, auto real) {
            micro_batches_tile<R, V, Last, false>(i, real, lda, batches, count, nullptr, n, c + i * n + col, col,
                                                  load_c);
        });
    }
}

/// gemm_tn_micro_batches for a wide C (tn_packs_both) and at least 48 rows: rows of C in blocks of mc, each
/// block's rows of every micro-batch's A copied into micro-panels of MR rows (element (r, k) of micro-panel t
/// at t PS + k MR + r, k over the micro-batches' rows in order), then for each column panel every micro-batch's panel
/// of B packed one after another and each row tile one chain over all of them (tile). A^T's rows in
/// place are lda floats apart: at lda = 512 a micro-batch's 16 rows fall in two L1 sets and a tile's lines
/// are evicted before the next tile reads them.
/// packed_micro_batches' largest block of rows of C.
template <std::size_t N>
inline constexpr std::size_t packed_micro_batches_rows = plan<N>::mr * 32;

template <std::size_t N>
inline void
packed_micro_batches(std::size_t m, std::size_t lda, const gemm_micro_batch* batches, std::size_t count, std::size_t rows, float* c,
                     bool load_c) noexcept
{
    constexpr std::size_t MR = plan<N>::mr, mc_max = packed_micro_batches_rows<N>;
    const std::size_t blocks = (m + mc_max - 1) / mc_max, mc = ((m + blocks - 1) / blocks + MR - 1) / MR * MR;
    const std::size_t ps = MR * rows + W;   // a micro-panel, and the lanes a vector store spills past it
    float* pa = scratch_buffer(mc / MR * ps, scratch::packed_a);
    float* pb = scratch_buffer(rows * plan<N>::nv * W, scratch::packed_b);
    for (std::size_t m0 = 0; m0 < m; m0 += mc) {
        const std::size_t block = std::min(mc, m - m0);
        // Each MR-row piece of a row of A^T is a masked load and one vector store: its spill lands on
        // the next k, written after it, or on the pad.
        std::size_t k0 = 0;
        for (std::size_t p = 0; p < count; ++p) {
            const gemm_micro_batch mb = batches[p];
            for (std::size_t k = 0; k < mb.k; ++k) {
                const float* src = mb.a + k * lda + m0;
                for (std::size_t i = 0; i < block; i += MR) {
                    const std::size_t lanes = std::min(MR, block - i);
                    float* to = pa + i / MR * ps + (k0 + k) * MR;
                    if constexpr (MR <= W)
                        (lanes == W ? vfloat::load(src + i) : vfloat::load_n(src + i, lanes)).store(to);
                    else
                        std::copy_n(src + i, lanes, to);
                }
            }
            k0 += mb.k;
        }
        float* cm = c + m0 * N;
        auto panel = [&]<std::size_t V, std::size_t Last>(std::size_t col) {
            float* to = pb;
            for (std::size_t p = 0; p < count; ++p) {
                const gemm_micro_batch mb = batches[p];
                pack_panel<V>(mb.k, mb.b, N, col, to);
                to += mb.k * V * W;
            }
            row_tiles<MR, latency_rows<V>>(block, [&]<std::size_t R>(std::size_t i, auto real) {
                tile<R, V, Last, true>(real, rows, pa + i / MR * ps + i % MR, 1, MR, pb, V * W, cm + i * N + col, N,
                                       load_c, true, epilogue{}, col);
            });
        };
        for_each_panel<N>(panel);
    }
}

/// C^T's tile (R columns of C from j, V vectors of rows of C from i) over one micro-batch's k rows, in `sum`
/// (laid out (R, V W)): each element's chain goes on from `sum`, or from zero when `first` (so that
/// over the micro-batches in order it is one chain over all their rows). A_p's rows give the vectors, B_p's
/// elements the broadcasts: per element the scalar operations of micro_batches_tile (fma(a, b, acc) =
/// fma(b, a, acc)). `span` rows of C are valid (only the vectors below it are read when !Full).
template <std::size_t R, std::size_t V, bool Full>
inline void
narrow_tile(const float* a, std::size_t lda, const float* b, std::size_t ldb, std::size_t k, std::size_t span, float* sum,
            bool first) noexcept
{
    vfloat acc[R][V];
#pragma GCC unroll 16
    for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (std::size_t v = 0; v < V; ++v)
            acc[r][v] = first ? vfloat::broadcast(0.0f) : vfloat::load(sum + r * V * W + v * W);
    for (std::size_t kk = 0; kk < k; ++kk) {
        vfloat av[V];
#pragma GCC unroll 4
        for (std::size_t v = 0; v < V; ++v) {
            if constexpr (Full)
                av[v] = vfloat::load(a + kk * lda + v * W);
            else
                av[v] = vfloat::load_n(a + kk * lda + v * W, std::min(W, span > v * W ? span - v * W : 0));
        }
        const float* bk = b + kk * ldb;
#pragma GCC unroll 16
        for (std::size_t r = 0; r < R; ++r) {
            const vfloat bv = vfloat::broadcast(bk[r]);
#pragma GCC unroll 4
            for (std::size_t v = 0; v < V; ++v)
                acc[r][v] = fma(bv, av[v], acc[r][v]);
        }
    }
#pragma GCC unroll 16
    for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (std::size_t v = 0; v < V; ++v)
            acc[r][v].store(sum + r * V * W + v * W);
}

/// gemm_tn_micro_batches for narrow C: rows of C in blocks of `rows_block`, each block's C^T computed micro-batch by
/// micro-batch (each pass reads one micro-batch's rows of A, a few sequential streams the prefetcher follows, where
/// one pass per tile over every micro-batch's rows would hop between micro-batches for every tile of an A beyond
/// L2) in this thread's buffer of (rows_block / (V W)) tiles x N columns x V W, then written to C by rows.
/// narrow_micro_batches' block of rows of C: 32 tiles of max_nv vectors.
template <std::size_t N>
inline constexpr std::size_t narrow_rows_block = 32 * plan<N>::max_nv * W;

template <std::size_t N>
inline void
narrow_micro_batches(std::size_t m, std::size_t lda, const gemm_micro_batch* batches, std::size_t count, float* c, bool load_c) noexcept
{
    // Columns per tile: as many as the registers hold (plan's rows for V vectors), spread evenly over
    // the tiles N needs (Dense<10>: 5 + 5, not 6 + 4).
    constexpr std::size_t V = plan<N>::max_nv, max_r = plan<N>::rows_for(V), tiles = (N + max_r - 1) / max_r;
    constexpr std::size_t R = (N + tiles - 1) / tiles, VW = V * W, Rest = N % R;
    constexpr std::size_t rows_block = narrow_rows_block<N>;
    float* sums = scratch_buffer(rows_block * N, scratch::narrow_sums);
    for (std::size_t i0 = 0; i0 < m; i0 += rows_block) {
        const std::size_t rows = std::min(rows_block, m - i0);
        bool first = !load_c;
        if (load_c)   // the chains go on from C: its rows into the sums' layout (the lanes past `rows` unused)
            for (std::size_t i = 0; i < rows; ++i)
                for (std::size_t j = 0; j < N; ++j)
                    sums[i / VW * N * VW + j * VW + i % VW] = c[(i0 + i) * N + j];
        for (std::size_t p = 0; p < count; ++p) {
            const gemm_micro_batch mb = batches[p];
            if (mb.k == 0)
                continue;
            for (std::size_t t = 0; t * VW < rows; ++t) {
                const float* a = mb.a + i0 + t * VW;
                const std::size_t span = rows - t * VW;
                float* s = sums + t * N * VW;
                const bool full = span >= VW;
                std::size_t j = 0;
                for (; j + R <= N; j += R)
                    (full ? narrow_tile<R, V, true> : narrow_tile<R, V, false>)(a, lda, mb.b + j, N, mb.k, span,
                                                                                      s + j * VW, first);
                if constexpr (Rest > 0)
                    (full ? narrow_tile<Rest, V, true> : narrow_tile<Rest, V, false>)(a, lda, mb.b + j, N, mb.k,
                                                                                            span, s + j * VW, first);
            }
            first = false;
        }
        for (std::size_t i = 0; i < rows; ++i) {
            const float* s = sums + i / VW * N * VW + i % VW;
            float* ci = c + (i0 + i) * N;
            for (std::size_t j = 0; j < N; ++j)
                ci[j] = s[j * VW];
        }
    }
}

} // namespace detail

/// C(m, N) = A^T B over the micro-batches' rows, batches[p] micro-batch p for p < count (<= max_micro_batches; an array, not a callable of the
/// caller's type, so that every layer with the same N shares one instance): each
/// element one chain over k from zero, micro-batch after micro-batch in order (the bits of gemm_tn on the micro-batches' rows
/// stacked, without stacking them: a layer's kernel gradient over every micro-batch of a step). C is
/// zero when no micro-batch has rows. `load_c`: each chain goes on from C's element instead of zero, so
/// that a chain over a step's micro-batches may be cut between them (one process's micro-batches, then
/// the next's: distribute/multi_worker.hpp) and give the bits of one chain. A narrow C (narrow_columns) is computed down its columns, every lane
/// busy, where its rows would fill 10 of 16 lanes (Dense<10>).
template <std::size_t N>
inline void
gemm_tn_micro_batches(std::size_t m, std::size_t lda, const gemm_micro_batch* batches, std::size_t count, float* c,
                      bool load_c = false) noexcept
{
    using P = detail::plan<N>;
    constexpr std::size_t W = detail::W;
    std::size_t rows = 0;
    for (std::size_t p = 0; p < count; ++p)
        rows += batches[p].k;
    if (rows == 0) {
        if (!load_c)
            std::memset(c, 0, m * N * sizeof(float));
        return;
    }
    if constexpr (detail::narrow_columns<N>) {
        detail::narrow_micro_batches<N>(m, lda, batches, count, c, load_c);
        return;
    }
    if constexpr (detail::tn_packs_both<N>)
        if (m >= 48) {
            detail::packed_micro_batches<N>(m, lda, batches, count, rows, c, load_c);
            return;
        }
    const bool pack = m >= 48 && !P::in_place_packed;
    for (std::size_t p = 0; p < P::panels; ++p) {
        const std::size_t col = p * P::nv * W;
        if (P::rest == 0 && p + 1 == P::panels)
            detail::micro_batches_panel<P::mr, P::nv, P::last_lanes>(m, lda, batches, count, rows, N, c, col, load_c, pack);
        else
            detail::micro_batches_panel<P::mr, P::nv, W>(m, lda, batches, count, rows, N, c, col, load_c, pack);
    }
    if constexpr (P::rest > 0)
        detail::micro_batches_panel<P::rest_mr, P::rest, P::last_lanes>(m, lda, batches, count, rows, N, c,
                                                                        P::panels * P::nv * W, load_c, pack);
}

/// What gemm_tn_micro_batches<N> asks of the scratch for up to m rows of C over `rows` rows of the
/// micro-batches in all (a packed panel of every micro-batch, and the packed rows of A).
template <std::size_t N>
[[nodiscard]] constexpr scratch_sizes
gemm_tn_micro_batches_scratch(std::size_t m, std::size_t rows) noexcept
{
    using P = detail::plan<N>;
    using detail::scratch;
    constexpr std::size_t W = detail::W;
    if constexpr (detail::narrow_columns<N>) {
        return scratch_sizes::of(scratch::narrow_sums, detail::narrow_rows_block<N> * N);
    } else {
        scratch_sizes s;
        if (m >= 48 && !P::in_place_packed)
            s |= scratch_sizes::of(scratch::packed_b, rows * P::nv * W);
        if constexpr (detail::tn_packs_both<N>)
            if (m >= 48) {
                const std::size_t block = std::min(m, detail::packed_micro_batches_rows<N>);
                s |= scratch_sizes::of(scratch::packed_b, rows * P::nv * W) |
                     scratch_sizes::of(scratch::packed_a, (block + P::mr - 1) / P::mr * (P::mr * rows + W));
            }
        return s;
    }
}

/// What gemm_tn_micro_batches_columns<N> asks of the scratch over `rows` rows of the micro-batches.
template <std::size_t N>
[[nodiscard]] constexpr scratch_sizes
gemm_tn_micro_batches_columns_scratch(std::size_t rows) noexcept
{
    return scratch_sizes::of(detail::scratch::micro_batches_row, N) | gemm_tn_micro_batches_scratch<N>(1, rows);
}

/// Columns [j0, j1) of row `row` of gemm_tn_micro_batches' C, written to c[j0, j1): the whole row is computed
/// by the same kernel in this thread's row buffer (the same bits), then the columns are copied. `load_c`:
/// the chains of those columns go on from c[j0, j1) (the row's other columns are computed and dropped).
template <std::size_t N>
inline void
gemm_tn_micro_batches_columns(std::size_t row, std::size_t j0, std::size_t j1, std::size_t lda, const gemm_micro_batch* batches,
                      std::size_t count, float* c, bool load_c = false) noexcept
{
    float* whole = detail::scratch_buffer(N, detail::scratch::micro_batches_row);
    if (load_c) {
        std::fill(whole, whole + N, 0.0f);
        std::copy(c + j0, c + j1, whole + j0);
    }
    // Row `row` of A^T: A_p's column `row`. Value-initialised: where GCC 12 inlines this into a
    // layer it cannot see that count <= max_micro_batches and warns (-Wmaybe-uninitialized).
    gemm_micro_batch rows[max_micro_batches]{};
    for (std::size_t p = 0; p < count; ++p)
        rows[p] = {batches[p].a + row, batches[p].b, batches[p].k};
    gemm_tn_micro_batches<N>(1, lda, rows, count, whole, load_c);
    std::copy(whole + j0, whole + j1, c + j0);
}

} // namespace tpudsl::kernels

#include <tpudsl/kernels/gemm/loops_end.hpp>

#endif // !TPUDSL_KERNELS_GEMM_MICRO_BATCHES_HPP
