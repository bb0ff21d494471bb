/// @file Defines the GEMM micro-kernel toolkit (private): the plan, the epilogues, the row sources, the
/// register tile and its steps, the row tiling of a panel, the packing of B.
///
/// One micro-kernel computes an MR x (NV vectors) tile of C in registers over a block of KC steps of the
/// reduction: per step it loads NV vectors of a row of B and multiplies them by MR broadcast elements of
/// A (an FMA with a memory operand). The plan (MR, NV, KC, MC) is chosen at compile time from N and the
/// instruction set: with AVX-512's 32 registers, 6 x 4 vectors (64 columns) when N allows, 8 x 3 or 14 x 2
/// otherwise; with 16 registers, 6 x 2. The last vector of a row that N does not fill is read and written
/// with masked loads and stores. B stays in place (its rows are the contiguous panels the kernel reads);
/// KC keeps a panel of B in L1 across every row tile of an MC-row block of A, which stays in L2.
#ifndef TPUDSL_KERNELS_GEMM_TOOLKIT_HPP
#define TPUDSL_KERNELS_GEMM_TOOLKIT_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/detail/simd.hpp>
#include <tpudsl/kernels/scratch.hpp>

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>

#include <tpudsl/kernels/gemm/loops_begin.hpp>   // GCC's loop warning off, to loops_end.hpp

namespace tpudsl::kernels {

namespace detail {

using tpudsl::detail::simd::vfloat;
inline constexpr std::size_t W = vfloat::size;

/// The register and cache blocking of a GEMM whose C has N columns.
template <std::size_t N>
struct plan {
    static constexpr std::size_t vectors = (N + W - 1) / W;   // vectors per row of C
    static constexpr std::size_t regs = tpudsl::detail::simd::registers;
    static constexpr std::size_t max_nv = regs >= 32 ? 4 : 2;
    /// Vectors per tile: as wide as the budget allows, but 3 rather than 4 when that leaves no
    /// narrower remainder panel (48 columns in one pass instead of 32 + 16).
    static constexpr std::size_t nv = vectors >= max_nv ? (max_nv == 4 && vectors % 4 != 0 && vectors % 3 == 0 ? 3 : max_nv)
                                                        : vectors;
    /// Rows per tile: the accumulators, the B vectors of one step and one broadcast fill the registers.
    /// One vector on 16 registers: 12 rows, not 14 (14 accumulators leave the compiler no register to
    /// spare, and its spills land in the innermost loop of every GEMM with N <= 8).
    static constexpr std::size_t rows_for(std::size_t v) noexcept
    {
        const std::size_t r = (regs - v - 1) / v;
        return v == 1 && regs < 32 ? 12 : r > 14 ? 14 : (v == 4 && regs >= 32 ? 6 : r);
    }
    static constexpr std::size_t mr = rows_for(nv);
    static constexpr std::size_t panels = vectors / nv;             // full panels of nv vectors
    static constexpr std::size_t rest = vectors - panels * nv;      // vectors of the last, narrower panel
    static constexpr std::size_t rest_mr = rest ? rows_for(rest) : 1;
    static constexpr std::size_t last_lanes = N - (vectors - 1) * W;   // lanes used in a row's last vector
    /// A panel of B (kc x nv vectors) takes about 32 KiB: it stays in L1 while the row tiles pass.
    static constexpr std::size_t kc = std::max<std::size_t>(64, 32768 / (nv * W * sizeof(float)));
    /// B's rows in place already are a packed panel: one panel of whole vectors (N = 64, or 32 with
    /// AVX-512), its rows contiguous, so a copy would cost its time and save nothing.
    static constexpr bool in_place_packed = panels == 1 && rest == 0 && N == nv * W;
};

/// True when gemm_tn packs A too (blocked_tn): C at least 6 panels of B wide. Below that the packed A
/// would serve too few panels of B to repay its copy, and blocked_tn_in_place reads A^T where it is.
template <std::size_t N>
inline constexpr bool tn_packs_both = plan<N>::vectors >= 6 * plan<N>::nv;

/// True when a row of C fills under 80% of the lanes of its vectors (Dense<10>: 10 of 16): gemm_tn_micro_batches
/// then runs down C's columns instead (narrow_micro_batches), vectors along the rows of C.
template <std::size_t N>
inline constexpr bool narrow_columns = plan<N>::vectors * W * 4 > N * 5;

/// What a tile's store does as C's last block of K leaves the registers: z + bias by column when
/// `bias` is set, then max(., 0) when `relu`; nothing when it is not. One type for the three cases,
/// so that a tile is compiled once for all of them: the case is two values that stay the same through
/// a GEMM, and its branches are taken the same way at every store.
struct epilogue {
    const float* bias = nullptr;
    bool relu = false;
    void
    apply(vfloat& acc, std::size_t col, std::size_t lanes) const noexcept
    {
        if (bias == nullptr)
            return;
        acc = acc + (lanes == W ? vfloat::load(bias + col) : vfloat::load_n(bias + col, lanes));
        if (relu)
            acc = max(acc, vfloat::broadcast(0.0f));
    }
};

/// The epilogue that adds `bias` and applies Act (Linear or Relu).
template <EpilogueActivation Act>
[[nodiscard]] constexpr epilogue
bias_epilogue_for(const float* bias) noexcept
{
    return {bias, std::is_same_v<Act, Relu>};
}

/// A tile's rows of A and C at fixed strides: A(r, k) = a[r rs + k cs], C's row r at c + r ldc.
///
/// The strides of A, B and C are run-time values throughout the toolkit (only a tile's shape, its last
/// vector's lanes and whether B is packed are template arguments): the code of a tile does not depend on
/// the GEMM's N, so the layers of a model (and of every model in a program) share its instances.
struct strided_rows {
    static constexpr bool repeats_rows = false;   // a short tile's rows from n on are clamped by tile_steps
    const float* a;
    std::size_t rs, cs;
    float* c;
    std::size_t ldc;
    float at(std::size_t r, std::size_t k) const noexcept { return a[k * cs + r * rs]; }
    float* c_row(std::size_t r) const noexcept { return c + r * ldc; }
};

/// A tile's R rows anywhere (gemm_nn_rows' rows from several blocks): A(r, k) = a[r][k], C's row r at c[r].
/// Its callers fill all R rows, a short tile's from n on with its last real row: tile_steps reads them
/// as they are, with constant indices that keep the pointers in registers.
template <std::size_t R>
struct pointer_rows {
    static constexpr bool repeats_rows = true;
    const float* a[R];
    float* c[R];
    float at(std::size_t r, std::size_t k) const noexcept { return a[r][k]; }
    float* c_row(std::size_t r) const noexcept { return c[r]; }
};

/// A tile's R x V accumulators: zero, or C's rows (`rows.c_row`, the last vector's `Last` lanes).
/// `n`: the tile's real rows (row_tiles' remainder); the rows from n on start from zero.
template <std::size_t R, std::size_t V, std::size_t Last, class Rows>
[[gnu::always_inline]] inline void
tile_start(vfloat (&acc)[R][V], const Rows& rows, bool load_c, std::size_t n = R) noexcept
{
#pragma GCC unroll 16
    for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (std::size_t v = 0; v < V; ++v) {
            if (!load_c || r >= n)
                acc[r][v] = vfloat::broadcast(0.0f);
            else if (v + 1 < V || Last == W)
                acc[r][v] = vfloat::load(rows.c_row(r) + v * W);
            else
                acc[r][v] = vfloat::load_n(rows.c_row(r) + v * W, Last);
        }
}

/// kc steps of a tile's chains: acc(r, .) = fma(A(r, k), B's row k, acc(r, .)), A from `rows` (.at),
/// B's rows ldb floats apart (N in place; V W when `Padded`: packed, its last vector padded with zeros
/// and read whole, where a masked load would cost a step of the innermost loop).
/// `n`: the tile's real rows; the rows from n on repeat row n - 1's chains (A is read only where it is).
template <std::size_t R, std::size_t V, std::size_t Last, bool Padded, class Rows>
[[gnu::always_inline]] inline void
tile_steps(vfloat (&acc)[R][V], std::size_t kc, const Rows& rows, const float* b, std::size_t ldb,
           std::size_t n = R) noexcept
{
    for (std::size_t k = 0; k < kc; ++k) {
        vfloat bv[V];
#pragma GCC unroll 4
        for (std::size_t v = 0; v < V; ++v)
            bv[v] = v + 1 < V || Last == W || Padded ? vfloat::load(b + k * ldb + v * W)
                                                      : vfloat::load_n(b + k * ldb + v * W, Last);
#pragma GCC unroll 16
        for (std::size_t r = 0; r < R; ++r) {
            const vfloat av = vfloat::broadcast(rows.at(Rows::repeats_rows || r < n ? r : n - 1, k));
#pragma GCC unroll 4
            for (std::size_t v = 0; v < V; ++v)
                acc[r][v] = fma(av, bv[v], acc[r][v]);
        }
    }
}

/// Stores a tile's accumulators to C's rows: C + acc when `add_c`, the epilogue when `finish`. Only
/// the real rows (`n`) are stored.
template <std::size_t R, std::size_t V, std::size_t Last, class Epi, class Rows>
[[gnu::always_inline]] inline void
tile_store(vfloat (&acc)[R][V], const Rows& rows, bool finish, const Epi& epi, std::size_t col, bool add_c,
           std::size_t n = R) noexcept
{
#pragma GCC unroll 16
    for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (std::size_t v = 0; v < V; ++v) {
            if (r >= n)   // in the loop's body: bounds in the loop's test would keep it from unrolling
                continue;
            const std::size_t lanes = v + 1 < V ? W : Last;
            float* c = rows.c_row(r) + v * W;
            if (add_c)
                acc[r][v] = acc[r][v] + (lanes == W ? vfloat::load(c) : vfloat::load_n(c, lanes));
            if (finish)
                epi.apply(acc[r][v], col + v * W, lanes);
            if (lanes == W)
                acc[r][v].store(c);
            else
                acc[r][v].store_n(c, lanes);
        }
}

/// Whether a tile reads B's last vector whole (`Padded`: packed, padded with zeros) or only its `Last`
/// lanes: the same code when the last vector is full, so such tiles take `false` and a program
/// compiles one tile for B packed and B in place.
template <std::size_t Last, bool Padded>
inline constexpr bool padded_b = Padded && Last != W;

/// C tile (R rows x V vectors, the last with `Last` lanes) over kc steps, its rows of A and C given by
/// `rows` (strided_rows or pointer_rows), B's rows ldb floats apart (N in place; V W, `Padded`, when
/// packed).
/// `load_c`: the chains go on from C; `finish`: this is the last block of K; `add_c`: the chains
/// start from zero and C + chain is stored. `n`: the real rows, R but in row_tiles' remainder.
template <std::size_t R, std::size_t V, std::size_t Last, bool Padded, class Epi, class Rows, class Count>
inline void
tile_on(Count n, std::size_t kc, const Rows& rows, const float* b, std::size_t ldb, bool load_c, bool finish,
        const Epi& epi, std::size_t col, bool add_c = false) noexcept
{
    vfloat acc[R][V];
    tile_start<R, V, Last>(acc, rows, load_c, n);
    tile_steps<R, V, Last, Padded>(acc, kc, rows, b, ldb, n);
    tile_store<R, V, Last>(acc, rows, finish, epi, col, add_c, n);
}

/// tile_on with A(i, k) = a[i rs + k cs] and C's rows ldc floats apart from c.
template <std::size_t R, std::size_t V, std::size_t Last, bool Padded, class Epi, class Count>
inline void
tile(Count n, std::size_t kc, const float* a, std::size_t rs, std::size_t cs, const float* b, std::size_t ldb,
     float* c, std::size_t ldc, bool load_c, bool finish, const Epi& epi, std::size_t col, bool add_c = false) noexcept
{
    tile_on<R, V, Last, padded_b<Last, Padded>>(n, kc, strided_rows{a, rs, cs, c, ldc}, b, ldb, load_c, finish, epi, col,
                                                 add_c);
}

/// The fewest rows of a tile of V vectors whose chains (rows x V) keep both FMA pipes busy through the
/// FMA's latency (4 cycles x 2 pipes on the cores tpudsl targets: 8 chains; 6 for three vectors): a
/// tile of fewer rows takes as many cycles per step of k.
template <std::size_t V>
inline constexpr std::size_t latency_rows = V == 1 ? 8 : V == 2 ? 4 : 2;

/// row_tiles' remainder: the `left` rows from i (fewer than MR) as one tile of height H if they fit,
/// else of the next height (2 H, or MR).
template <std::size_t H, std::size_t MR, class F>
inline void
remainder_tile(std::size_t i, std::size_t left, F& f)
{
    if constexpr (H >= MR)
        f.template operator()<MR>(i, left);
    else if (left <= H)
        f.template operator()<H>(i, left);
    else
        remainder_tile<2 * H, MR>(i, left, f);
}

/// Calls f.template operator()<R>(i, n) for tiles covering rows [0, m), n of the R rows from i real:
/// R = n = MR while MR rows are left (n a std::integral_constant, so that a full tile's code is that of
/// its height alone), then the remainder (1 to MR - 1 rows, n a std::size_t) as one tile of the least
/// height that holds it among Hmin, 2 Hmin, 4 Hmin, ... and MR. A tile's rows from n on repeat its last
/// real row (tile_start, tile_steps and tile_store take n): the same bits for the real rows, since a
/// row's chains do not depend on the rows beside it. With Hmin = latency_rows<V> the short tile takes
/// no longer than one of the remainder's own height (6 x 2 vectors with 16 registers: 1 to 4 rows left
/// run as a tile of 4, 5 as a tile of 6, one cycle a step more), and a program compiles two or three
/// tile heights per panel kind instead of MR.
template <std::size_t MR, std::size_t Hmin, class F>
inline void
row_tiles(std::size_t m, F&& f)
{
    static_assert(Hmin >= 1, "row_tiles: the least tile height is at least one row");
    std::size_t i = 0;
    for (; i + MR <= m; i += MR)
        f.template operator()<MR>(i, std::integral_constant<std::size_t, MR>{});
    if (i < m)
        remainder_tile<Hmin, MR>(i, m - i, f);
}

/// Rows [0, m) of one column panel, in tiles of MR rows (row_tiles); C's rows ldc floats apart.
template <std::size_t MR, std::size_t V, std::size_t Last, bool Padded, class Epi>
inline void
panel(std::size_t m, std::size_t kc, const float* a, std::size_t rs, std::size_t cs, const float* b, std::size_t ldb,
      float* c, std::size_t ldc, bool load_c, bool finish, const Epi& epi, std::size_t col) noexcept
{
    row_tiles<MR, latency_rows<V>>(m, [&]<std::size_t R>(std::size_t i, auto n) {
        tile<R, V, Last, Padded>(n, kc, a + i * rs, rs, cs, b, ldb, c + i * ldc, ldc, load_c, finish, epi, col);
    });
}

/// Copies the kc x (V vectors) panel at column col of B (rows n floats long) into `to` (leading
/// dimension V W), the columns beyond n as zeros.
template <std::size_t V>
inline void
pack_panel(std::size_t kc, const float* b, std::size_t n, std::size_t col, float* to) noexcept
{
    constexpr std::size_t LD = V * W;
    const std::size_t width = std::min(LD, n - col);
    if (width == LD) {   // vector copies, not a memcpy call per row (which GCC left in where not inlined)
        for (std::size_t k = 0; k < kc; ++k)
#pragma GCC unroll 4
            for (std::size_t v = 0; v < V; ++v)
                vfloat::load(b + k * n + col + v * W).store(to + k * LD + v * W);
        return;
    }
    for (std::size_t k = 0; k < kc; ++k)
        for (std::size_t v = 0; v < V; ++v) {
            const std::size_t c0 = v * W, lanes = width > c0 ? std::min(W, width - c0) : 0;
            const float* from = b + k * n + col + c0;
            (lanes == W ? vfloat::load(from) : vfloat::load_n(from, lanes)).store(to + k * LD + c0);
        }
}

/// Packs every column panel of B's rows [0, kc) (bk: B's row k0), one after the other: panel p (nv
/// vectors, the last panel `rest`) at to + p kc nv W.
template <std::size_t N>
inline void
pack_panels(std::size_t kc, const float* bk, float* to) noexcept
{
    using P = plan<N>;
    constexpr std::size_t NVW = P::nv * W;
    for (std::size_t p = 0; p < P::panels; ++p)
        pack_panel<P::nv>(kc, bk, N, p * NVW, to + p * kc * NVW);
    if constexpr (P::rest > 0)
        pack_panel<P::rest>(kc, bk, N, P::panels * NVW, to + P::panels * kc * NVW);
}

/// Calls f.template operator()<V, Last>(col) for each column panel of plan<N> in order: V vectors at
/// column col, the last vector `Last` lanes wide (the remainder panel, if any, last).
template <std::size_t N, class F>
inline void
for_each_panel(F&& f)
{
    using P = plan<N>;
    constexpr std::size_t NVW = P::nv * W;
    for (std::size_t p = 0; p < P::panels; ++p) {
        if (P::rest == 0 && p + 1 == P::panels)
            f.template operator()<P::nv, P::last_lanes>(p * NVW);
        else
            f.template operator()<P::nv, W>(p * NVW);
    }
    if constexpr (P::rest > 0)
        f.template operator()<P::rest, P::last_lanes>(P::panels * NVW);
}

/// Calls f.template operator()<V, Last>(panel, col) for every column panel of C: V vectors from column
/// col, the last `Last` lanes wide, B's packed panel at `panel` (as pack_panels lays them out).
template <std::size_t N, class F>
inline void
for_panels(std::size_t kc, const float* packed, F&& f)
{
    for_each_panel<N>([&]<std::size_t V, std::size_t Last>(std::size_t col) {
        f.template operator()<V, Last>(packed + col * kc, col);   // panel p starts p kc NVW floats in
    });
}

} // namespace detail

} // namespace tpudsl::kernels

#include <tpudsl/kernels/gemm/loops_end.hpp>

#endif // !TPUDSL_KERNELS_GEMM_TOOLKIT_HPP
