/// @file Defines the SGEMM kernels every Dense and convolution layer runs on (xsimd, register- and
/// cache-blocked from the compile-time dimensions).
///
///   gemm_nn:  C(M,N) (+)= A(M,K) . B(K,N)      forward:   Z = X . W
///   gemm_tn:  C(M,N) (+)= A(K,M)^T . B(K,N)    gradient:  dW = X^T . dZ
///   gemm_nt:  C(M,N) =    A(M,K) . B(N,K)^T    input grad: dX = dZ . W^T
/// All matrices are row-major and dense. The dimensions that come from the model are template
/// parameters; the one that comes from the batch is an argument.
///
/// One micro-kernel computes an MR x (NV vectors) tile of C in registers over a block of KC steps of the
/// reduction: per step it loads NV vectors of a row of B and multiplies them by MR broadcast elements of
/// A (an FMA with a memory operand). The plan (MR, NV, KC, MC) is chosen at compile time from N and the
/// instruction set: with AVX-512's 32 registers, 6 x 4 vectors (64 columns) when N allows, 8 x 3 or 14 x 2
/// otherwise; with 16 registers, 6 x 2. The last vector of a row that N does not fill is read and written
/// with masked loads and stores. B stays in place (its rows are the contiguous panels the kernel reads);
/// KC keeps a panel of B in L1 across every row tile of an MC-row block of A, which stays in L2. gemm_tn
/// (M >= 24) packs every panel of a block of K and runs each row tile under all of them while its lines
/// of A^T are in L1 (blocked_tn_in_place); with a wide C it packs A^T too, in micro-panels of MR rows
/// (blocked_tn).
///
/// gemm_nn_bias adds the bias (and applies Relu) while the tile is still in registers: no second pass.
#ifndef TPUDSL_KERNELS_GEMM_HPP
#define TPUDSL_KERNELS_GEMM_HPP

#include <tpudsl/core/activations.hpp>
#include <tpudsl/detail/simd.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

// GCC 12 at -O3 reports "iteration N invokes undefined behavior" inside these loops once it has
// propagated a constant batch size into them. The loops stay in bounds: the kernel tests also run under
// AddressSanitizer and UBSan.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waggressive-loop-optimizations"
#endif

namespace tpudsl::kernels {

/// A part of a batch for gemm_tn_parts: A_p(i, k) = a[k lda + i] and B_p (k, N) row-major, k rows.
struct gemm_part {
    const float* a;
    const float* b;
    std::size_t k;
};

/// A block of rows for gemm_nn_rows: A_p (m, K) row-major, C_p (m, N) row-major, m rows.
struct gemm_rows {
    const float* a;
    float* c;
    std::size_t m;
};

namespace detail_gemm {

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
    /// One vector on 16 registers: 12 rows, not 14 (14 accumulators left GCC none to spare, and the
    /// spills made a GEMM with N <= 8 run at half the speed: 9.9 -> 4.7 us for 296 x 64 x 7).
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
    /// AVX-512), so a copy would only cost (3600 x 64 x 288 and 120 x 64 x 512 forward on one AVX-512
    /// core measured 3-10% faster without it).
    static constexpr bool in_place_packed = panels == 1 && rest == 0 && N == nv * W;
};

/// No epilogue: the tile is stored as computed.
struct plain {
    static constexpr bool active = false;
    void apply(vfloat&, std::size_t, std::size_t) const noexcept {}
};

/// z + bias (then max(., 0) when Relu), by column.
template <bool Relu>
struct bias_epilogue {
    static constexpr bool active = true;
    const float* bias;
    void
    apply(vfloat& acc, std::size_t col, std::size_t lanes) const noexcept
    {
        acc = acc + (lanes == W ? vfloat::load(bias + col) : vfloat::load_n(bias + col, lanes));
        if constexpr (Relu)
            acc = max(acc, vfloat::broadcast(0.0f));
    }
};

/// A tile's rows of A and C at fixed strides: A(r, k) = a[r rs + k cs], C's row r at c + r N.
template <std::size_t N>
struct strided_rows {
    const float* a;
    std::size_t rs, cs;
    float* c;
    float at(std::size_t r, std::size_t k) const noexcept { return a[k * cs + r * rs]; }
    float* c_row(std::size_t r) const noexcept { return c + r * N; }
};

/// A tile's R rows anywhere (gemm_nn_rows' rows from several blocks): A(r, k) = a[r][k], C's row r at c[r].
template <std::size_t R>
struct pointer_rows {
    const float* a[R];
    float* c[R];
    float at(std::size_t r, std::size_t k) const noexcept { return a[r][k]; }
    float* c_row(std::size_t r) const noexcept { return c[r]; }
};

/// A tile's R x V accumulators: zero, or C's rows (`rows.c_row`, the last vector's `Last` lanes).
template <std::size_t R, std::size_t V, std::size_t Last, class Rows>
[[gnu::always_inline]] inline void
tile_start(vfloat (&acc)[R][V], const Rows& rows, bool load_c) noexcept
{
#pragma GCC unroll 16
    for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (std::size_t v = 0; v < V; ++v) {
            if (!load_c)
                acc[r][v] = vfloat::broadcast(0.0f);
            else if (v + 1 < V || Last == W)
                acc[r][v] = vfloat::load(rows.c_row(r) + v * W);
            else
                acc[r][v] = vfloat::load_n(rows.c_row(r) + v * W, Last);
        }
}

/// kc steps of a tile's chains: acc(r, .) = fma(A(r, k), B's row k, acc(r, .)), A from `rows` (.at),
/// B with leading dimension LDB (N in place, V W when packed: its last vector padded with zeros).
template <std::size_t R, std::size_t V, std::size_t Last, std::size_t N, std::size_t LDB, class Rows>
[[gnu::always_inline]] inline void
tile_steps(vfloat (&acc)[R][V], std::size_t kc, const Rows& rows, const float* b) noexcept
{
    constexpr bool b_padded = LDB != N;
    for (std::size_t k = 0; k < kc; ++k) {
        vfloat bv[V];
#pragma GCC unroll 4
        for (std::size_t v = 0; v < V; ++v)
            bv[v] = v + 1 < V || Last == W || b_padded ? vfloat::load(b + k * LDB + v * W)
                                                        : vfloat::load_n(b + k * LDB + v * W, Last);
#pragma GCC unroll 16
        for (std::size_t r = 0; r < R; ++r) {
            const vfloat av = vfloat::broadcast(rows.at(r, k));
#pragma GCC unroll 4
            for (std::size_t v = 0; v < V; ++v)
                acc[r][v] = fma(av, bv[v], acc[r][v]);
        }
    }
}

/// Stores a tile's accumulators to C's rows: C + acc when `add_c`, the epilogue when `finish`.
template <std::size_t R, std::size_t V, std::size_t Last, class Epi, class Rows>
[[gnu::always_inline]] inline void
tile_store(vfloat (&acc)[R][V], const Rows& rows, bool finish, const Epi& epi, std::size_t col, bool add_c) noexcept
{
#pragma GCC unroll 16
    for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (std::size_t v = 0; v < V; ++v) {
            const std::size_t lanes = v + 1 < V ? W : Last;
            float* c = rows.c_row(r) + v * W;
            if (add_c)
                acc[r][v] = acc[r][v] + (lanes == W ? vfloat::load(c) : vfloat::load_n(c, lanes));
            if constexpr (Epi::active)
                if (finish)
                    epi.apply(acc[r][v], col + v * W, lanes);
            if (lanes == W)
                acc[r][v].store(c);
            else
                acc[r][v].store_n(c, lanes);
        }
}

/// C tile (R rows x V vectors, the last with `Last` lanes) over kc steps, its rows of A and C given by
/// `rows` (strided_rows or pointer_rows), B with leading dimension LDB (N in place, V W when packed).
/// `load_c`: the chains go on from C; `finish`: this is the last block of K; `add_c`: the chains start
/// from zero and C + chain is stored.
template <std::size_t R, std::size_t V, std::size_t Last, std::size_t N, std::size_t LDB, class Epi, class Rows>
inline void
tile_on(std::size_t kc, const Rows& rows, const float* b, bool load_c, bool finish, const Epi& epi, std::size_t col,
        bool add_c = false) noexcept
{
    vfloat acc[R][V];
    tile_start<R, V, Last>(acc, rows, load_c);
    tile_steps<R, V, Last, N, LDB>(acc, kc, rows, b);
    tile_store<R, V, Last>(acc, rows, finish, epi, col, add_c);
}

/// tile_on with A(i, k) = a[i rs + k cs] and C's rows N floats apart from c.
template <std::size_t R, std::size_t V, std::size_t Last, std::size_t N, std::size_t LDB, class Epi>
inline void
tile(std::size_t kc, const float* a, std::size_t rs, std::size_t cs, const float* b, float* c, bool load_c,
     bool finish, const Epi& epi, std::size_t col, bool add_c = false) noexcept
{
    tile_on<R, V, Last, N, LDB>(kc, strided_rows<N>{a, rs, cs, c}, b, load_c, finish, epi, col, add_c);
}

/// Calls f.template operator()<R>(i) for tiles covering rows [0, m): R = MR, then the remainder in one
/// tile of its own height when MR <= 8 (in 8, 4, 2 and 1 rows otherwise). A one-row tile's chains
/// wait on the FMA's latency (2 chains of 4 cycles where 6 x 2 keep both pipes busy): 35 rows as
/// 5 x 6 + 5 instead of 5 x 6 + 4 + 1 took the Reuters model's 35 x 64 x 4736 gemm_tn from 69.5 to 77
/// GFLOP/s on one AVX2 core, 9 x 64 x 10816 (6 + 3, was 6 + 2 + 1) from 60 to 76.
template <std::size_t MR, class F>
inline void
row_tiles(std::size_t m, F&& f)
{
    std::size_t i = 0;
    for (; i + MR <= m; i += MR)
        f.template operator()<MR>(i);
    if (i == m)
        return;
    if constexpr (MR <= 8) {
        [&]<std::size_t... R>(std::index_sequence<R...>) {   // R + 1 = the rows left, 1 to MR - 1
            ((m - i == R + 1 ? (f.template operator()<R + 1>(i), 0) : 0), ...);
        }(std::make_index_sequence<MR - 1>{});
    } else {   // 8, 4, 2 and 1 rows
        if (i + 8 <= m) {
            f.template operator()<8>(i);
            i += 8;
        }
        if (i + 4 <= m) {
            f.template operator()<4>(i);
            i += 4;
        }
        if (i + 2 <= m) {
            f.template operator()<2>(i);
            i += 2;
        }
        if (i < m)
            f.template operator()<1>(i);
    }
}

/// Rows [0, m) of one column panel, in tiles of MR rows (row_tiles).
template <std::size_t MR, std::size_t V, std::size_t Last, std::size_t N, std::size_t LDB, class Epi>
inline void
panel(std::size_t m, std::size_t kc, const float* a, std::size_t rs, std::size_t cs, const float* b, float* c,
      bool load_c, bool finish, const Epi& epi, std::size_t col) noexcept
{
    row_tiles<MR>(m, [&]<std::size_t R>(std::size_t i) {
        tile<R, V, Last, N, LDB>(kc, a + i * rs, rs, cs, b, c + i * N, load_c, finish, epi, col);
    });
}

/// This thread's buffer of at least n floats, 64-byte aligned (a packed panel's vectors never straddle a
/// cache line): grows once, then is reused (no allocation in a steady step).
/// 0: a packed panel of B (every panel of a K block in blocked_tn*); 1: a transposed B (gemm_nt); 2: a
/// block of A in micro-panels (blocked_tn); 3: one row
/// of C (gemm_tn_parts_columns); 4: a block of C^T (narrow_parts); 5: the partial sums of dot_rows.
inline float*
scratch_buffer(std::size_t n, int which)
{
    thread_local std::vector<float> buffers[6];
    std::vector<float>& buffer = buffers[which];
    constexpr std::size_t pad = 64 / sizeof(float);   // the start is moved to a 64-byte boundary
    if (buffer.size() < n + pad)
        buffer.resize(n + pad);
    const auto offset = reinterpret_cast<std::uintptr_t>(buffer.data()) % 64;
    return buffer.data() + (offset ? (64 - offset) / sizeof(float) : 0);
}

/// Copies the kc x (V vectors) panel of B at column col into `to` (leading dimension V W), the
/// columns beyond N as zeros.
template <std::size_t V, std::size_t N>
inline void
pack_panel(std::size_t kc, const float* b, std::size_t col, float* to) noexcept
{
    constexpr std::size_t LD = V * W;
    const std::size_t width = std::min(LD, N - col);
    if (width == LD) {   // vector copies, not a memcpy call per row (which GCC left in where not inlined)
        for (std::size_t k = 0; k < kc; ++k)
#pragma GCC unroll 4
            for (std::size_t v = 0; v < V; ++v)
                vfloat::load(b + k * N + col + v * W).store(to + k * LD + v * W);
        return;
    }
    for (std::size_t k = 0; k < kc; ++k)
        for (std::size_t v = 0; v < V; ++v) {
            const std::size_t c0 = v * W, lanes = width > c0 ? std::min(W, width - c0) : 0;
            const float* from = b + k * N + col + c0;
            (lanes == W ? vfloat::load(from) : vfloat::load_n(from, lanes)).store(to + k * LD + c0);
        }
}

/// One column panel (V vectors at col) over all M rows for one block of K.
template <std::size_t MR, std::size_t V, std::size_t Last, std::size_t N, class Epi>
inline void
column_panel(std::size_t M, std::size_t kc, const float* a, std::size_t rs, std::size_t cs, const float* bk,
             float* c, bool load_c, bool finish, const Epi& epi, std::size_t col, bool pack) noexcept
{
    if (pack) {
        float* packed = scratch_buffer(plan<N>::kc * V * W, 0);
        pack_panel<V, N>(kc, bk, col, packed);
        panel<MR, V, Last, N, V * W>(M, kc, a, rs, cs, packed, c + col, load_c, finish, epi, col);
    } else {
        panel<MR, V, Last, N, N>(M, kc, a, rs, cs, bk + col, c + col, load_c, finish, epi, col);
    }
}

/// out(c, r) = in(r, c) for r in [r0, r1), c in [c0, c1), element by element, in 8 x 8 blocks.
inline void
transpose_scalar(const float* in, std::size_t r0, std::size_t r1, std::size_t c0, std::size_t c1, std::size_t in_ld,
                 float* out, std::size_t out_ld) noexcept
{
    constexpr std::size_t T = 8;
    for (std::size_t rb = r0; rb < r1; rb += T)
        for (std::size_t cb = c0; cb < c1; cb += T) {
            const std::size_t re = std::min(r1, rb + T), ce = std::min(c1, cb + T);
            for (std::size_t r = rb; r < re; ++r)
                for (std::size_t c = cb; c < ce; ++c)
                    out[c * out_ld + r] = in[r * in_ld + c];
        }
}

#if defined(__AVX2__)
/// The 8 x 8 block at `in` (rows in_ld apart) transposed into the one at `out` (rows out_ld apart),
/// in registers: eight row loads, three rounds of shuffles, eight row stores.
[[gnu::always_inline]] inline void
transpose_8x8(const float* in, std::size_t in_ld, float* out, std::size_t out_ld) noexcept
{
    __m256 r[8], t[8];
#pragma GCC unroll 8
    for (std::size_t i = 0; i < 8; ++i)
        r[i] = _mm256_loadu_ps(in + i * in_ld);
#pragma GCC unroll 4
    for (std::size_t i = 0; i < 8; i += 2) {   // (r0 r1) -> a0 b0 a1 b1 | a4 b4 a5 b5 and the high halves
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
#pragma GCC unroll 2
    for (std::size_t i = 0; i < 8; i += 4) {   // four rows' elements 0 1 (and 2 3) per 128-bit lane
        r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
#pragma GCC unroll 4
    for (std::size_t i = 0; i < 4; ++i) {   // rows 0-3 from the low lanes, 4-7 from the high ones
        _mm256_storeu_ps(out + i * out_ld, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
        _mm256_storeu_ps(out + (i + 4) * out_ld, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
    }
}
#endif

/// out(c, r) = in(r, c) for r < rows, c < cols, rows `in_ld` and `out_ld` floats apart. With AVX2,
/// 8 x 8 blocks in registers, two blocks of rows per block of columns, so that each row of `out`
/// receives 16 consecutive floats (a whole line when aligned) before the walk moves on: the MNIST
/// MLP's 512 x 512 kernel, transposed once a step for its input gradient, 250 -> 90 us on one core
/// (its rows 2 KB apart fall into a few L1 sets; element by element, each line was fetched twice).
inline void
transpose_strided(const float* in, std::size_t rows, std::size_t cols, std::size_t in_ld, float* out,
                  std::size_t out_ld) noexcept
{
    std::size_t r0 = 0;
#if defined(__AVX2__)
    constexpr std::size_t T = 8;
    const std::size_t full_cols = cols / T * T;
    for (; r0 + 2 * T <= rows; r0 += 2 * T) {
        for (std::size_t c0 = 0; c0 < full_cols; c0 += T) {
            transpose_8x8(in + r0 * in_ld + c0, in_ld, out + c0 * out_ld + r0, out_ld);
            transpose_8x8(in + (r0 + T) * in_ld + c0, in_ld, out + c0 * out_ld + r0 + T, out_ld);
        }
        transpose_scalar(in, r0, r0 + 2 * T, full_cols, cols, in_ld, out, out_ld);
    }
#endif
    transpose_scalar(in, r0, rows, 0, cols, in_ld, out, out_ld);
}

/// C(M,N) (+)= A . B with A(i, k) = a[i * rs + k * cs] and B (K, N) row-major.
///
/// B's rows are N floats apart: a kc-row panel read in place maps onto few L1 sets (every row at the same
/// offset in a page when N W is a multiple of 1024) and is served from L2. When enough rows of A share a
/// panel (M >= pack_rows), the panel is first copied to a contiguous buffer that stays in L1; below that,
/// the copy would cost more than it saves.
template <std::size_t N, class Epi = plain>
inline void
blocked(std::size_t M, std::size_t K, const float* a, std::size_t rs, std::size_t cs, const float* b, float* c,
        bool accumulate, const Epi& epi = {}) noexcept
{
    using P = plan<N>;
    // Packing B from fewer rows (16, a micro-batch of a Dense<512>) looked 10% faster in a lone GEMM
    // but made the MLP's step 20% slower (the same weights serve eight micro-batches a step).
    constexpr std::size_t pack_rows = 64;
    if (K == 0) {
        if (!accumulate)
            std::memset(c, 0, M * N * sizeof(float));
        return;
    }
    const bool pack = M >= pack_rows && !P::in_place_packed;
    for (std::size_t k0 = 0; k0 < K; k0 += P::kc) {
        const std::size_t kc = std::min(P::kc, K - k0);
        const bool load_c = accumulate || k0 > 0;
        const bool finish = k0 + kc == K;
        const float* ak = a + k0 * cs;
        const float* bk = b + k0 * N;
        for (std::size_t p = 0; p < P::panels; ++p) {
            const std::size_t col = p * P::nv * W;
            if (P::rest == 0 && p + 1 == P::panels)
                column_panel<P::mr, P::nv, P::last_lanes, N>(M, kc, ak, rs, cs, bk, c, load_c, finish, epi, col, pack);
            else
                column_panel<P::mr, P::nv, W, N>(M, kc, ak, rs, cs, bk, c, load_c, finish, epi, col, pack);
        }
        if constexpr (P::rest > 0)
            column_panel<P::rest_mr, P::rest, P::last_lanes, N>(M, kc, ak, rs, cs, bk, c, load_c, finish, epi,
                                                                P::panels * P::nv * W, pack);
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
        pack_panel<P::nv, N>(kc, bk, p * NVW, to + p * kc * NVW);
    if constexpr (P::rest > 0)
        pack_panel<P::rest, N>(kc, bk, P::panels * NVW, to + P::panels * kc * NVW);
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

/// True when gemm_tn packs A too (blocked_tn): C at least 6 panels of B wide. Below that the packed A
/// would serve too few panels to repay its copy (288 x 64 x 3600, 4 panels: 0.90x reading it in place;
/// 288 x 32 x 14400: 0.70x), and blocked_tn_in_place reads A^T where it is.
template <std::size_t N>
inline constexpr bool tn_packs_both = plan<N>::vectors >= 6 * plan<N>::nv;

/// gemm_tn for a wide C: C(M,N) (+)= A(K,M)^T . B(K,N), both operands packed, in blocks of kc steps of
/// K. Per block, every panel of B is packed once (kc x nv vectors, half an L1), one after the other;
/// per block of mc rows of C, A^T's rows are copied into micro-panels of MR rows, k-major, so that a
/// tile's broadcasts are one sequential stream and the block (144 KB) stays in L2 while every panel of
/// B passes over it. Before, A^T was laid out by rows per block of mc rows and each panel of B packed
/// once per block: 512^3 85 -> 92 GFLOP/s on one AVX2 core (OpenBLAS 0.3.21: 91). The chains are those
/// of `blocked` (k in order, C carried from block to block): the same bits.
template <std::size_t N>
inline void
blocked_tn(std::size_t M, std::size_t K, const float* a, const float* b, float* c, bool accumulate) noexcept
{
    using P = plan<N>;
    constexpr std::size_t MR = P::mr;
    constexpr std::size_t kc_max = std::max<std::size_t>(128, 16384 / (P::nv * W * sizeof(float))), mc = MR * 24;
    constexpr std::size_t PS = MR * kc_max + W;   // a micro-panel, and the lanes a vector store spills past it
    float* pb = scratch_buffer(kc_max * P::vectors * W, 0);
    float* pa = scratch_buffer(mc / MR * PS, 2);
    for (std::size_t k0 = 0; k0 < K; k0 += kc_max) {
        const std::size_t kc = std::min(kc_max, K - k0);
        const bool load_c = accumulate || k0 > 0;
        pack_panels<N>(kc, b + k0 * N, pb);
        for (std::size_t m0 = 0; m0 < M; m0 += mc) {
            const std::size_t m = std::min(mc, M - m0);
            // Micro-panel t holds rows [t MR, t MR + MR) of the block: element (r, k) at t PS + k MR + r.
            // A row of A^T is read in order; each MR-row piece is one vector store (its spill lands on
            // the next k, written after it, or on the pad) unless the vector would read past A's row.
            const float* ak = a + k0 * M + m0;
            for (std::size_t k = 0; k < kc; ++k) {
                const float* src = ak + k * M;
                std::size_t i = 0;
                for (; i + MR <= m; i += MR) {
                    float* to = pa + i / MR * PS + k * MR;
                    if constexpr (MR <= W)
                        if (m0 + i + W <= M) {
                            vfloat::load(src + i).store(to);
                            continue;
                        }
                    std::memcpy(to, src + i, MR * sizeof(float));
                }
                if (i < m)
                    std::memcpy(pa + i / MR * PS + k * MR, src + i, (m - i) * sizeof(float));
            }
            float* cm = c + m0 * N;
            for_panels<N>(kc, pb, [&]<std::size_t V, std::size_t Last>(const float* panel_b, std::size_t col) {
                row_tiles<MR>(m, [&]<std::size_t R>(std::size_t i) {
                    tile<R, V, Last, N, V * W>(kc, pa + i / MR * PS + i % MR, 1, MR, panel_b, cm + i * N + col, load_c,
                                               true, plain{}, col);
                });
            });
        }
    }
}

/// gemm_tn from 24 rows up, C narrower than blocked_tn's or M < 64: A^T read in place (a tile's rows
/// of A^T are M floats apart), B's panels packed per block of K, and each row tile passing under
/// every panel before the next tile, so that the lines of A^T it reads (one per step of k) are still
/// in L1 for the next panel.
/// Blocks of K between 128 and 256 steps (balanced: 146 in one block, 300 in two of 150) keep a
/// tile's lines of A and a panel of B in L1. Before, each panel ran over all rows, A^T's block came
/// from L2 or L3 for every panel, and when M was a multiple of 128 it was first transposed: measured
/// on one AVX2 core, 288 x 64 x 3600 85 -> 95 GFLOP/s, 512 x 64 x 4096 54 -> 85, 384 x 64 x 600
/// 57 -> 93 (OpenBLAS: 87, 85, 86). The chains are those of `blocked`: the same bits.
template <std::size_t N>
inline void
blocked_tn_in_place(std::size_t M, std::size_t K, const float* a, const float* b, float* c, bool accumulate) noexcept
{
    using P = plan<N>;
    constexpr std::size_t kc_min = 128;
    float* pb = scratch_buffer(2 * kc_min * P::vectors * W, 0);
    const std::size_t blocks = std::max<std::size_t>(1, K / kc_min), kc_block = (K + blocks - 1) / blocks;
    for (std::size_t k0 = 0; k0 < K; k0 += kc_block) {
        const std::size_t kc = std::min(kc_block, K - k0);
        const bool load_c = accumulate || k0 > 0;
        const float* panels = b + k0 * N;
        if constexpr (!P::in_place_packed) {
            pack_panels<N>(kc, panels, pb);
            panels = pb;
        }
        const float* ak = a + k0 * M;
        row_tiles<P::mr>(M, [&]<std::size_t R>(std::size_t i) {
            // The first tile to reach a new line of A^T's rows two lines ahead asks for all kc of them:
            // the strided misses otherwise stall a tile when A^T is too big for L3 (288 x 32 x 14400,
            // 16.6 MB: 64 -> 69-75 GFLOP/s; others within 1%).
            constexpr std::size_t line = 64 / sizeof(float), ahead = 2 * line;
            if (i + ahead < M && (i + ahead) / line != (i + ahead - R) / line)
                for (std::size_t k = 0; k < kc; ++k)
                    __builtin_prefetch(ak + k * M + i + ahead);
            for_panels<N>(kc, panels, [&]<std::size_t V, std::size_t Last>(const float* panel_b, std::size_t col) {
                tile<R, V, Last, N, V * W>(kc, ak + i, 1, M, panel_b, c + i * N + col, load_c, true, plain{}, col);
            });
        });
    }
}

/// One row of a gemm_nn_rows call: where its row of A and its row of C are.
struct row_ref {
    const float* a;
    float* c;
};

/// This thread's list of at least n row_refs: grows once, then is reused.
inline row_ref*
row_buffer(std::size_t n)
{
    thread_local std::vector<row_ref> rows;
    if (rows.size() < n)
        rows.resize(n);
    return rows.data();
}

/// The rows of all the blocks together (rows of A K floats long, of C N floats), in this thread's row
/// buffer, block after block.
inline row_ref*
block_rows(const gemm_rows* blocks, std::size_t count, std::size_t m, std::size_t K, std::size_t N)
{
    row_ref* rows = row_buffer(m);
    for (std::size_t p = 0, i = 0; p < count; ++p)
        for (std::size_t r = 0; r < blocks[p].m; ++r, ++i)
            rows[i] = {blocks[p].a + r * K, blocks[p].c + r * N};
    return rows;
}

/// The rows of all the blocks.
inline std::size_t
total_rows(const gemm_rows* blocks, std::size_t count) noexcept
{
    std::size_t m = 0;
    for (std::size_t p = 0; p < count; ++p)
        m += blocks[p].m;
    return m;
}

/// Rows [0, m) of `rows` under one column panel of B, in tiles of MR rows (row_tiles), each tile's
/// rows wherever they are: A from column k0, C from column col.
template <std::size_t MR, std::size_t V, std::size_t Last, std::size_t N, std::size_t LDB, class Epi>
inline void
pointer_panel(const row_ref* rows, std::size_t m, std::size_t kc, std::size_t k0, const float* b, bool load_c,
              bool finish, const Epi& epi, std::size_t col) noexcept
{
    row_tiles<MR>(m, [&]<std::size_t R>(std::size_t i) {
        pointer_rows<R> t;
#pragma GCC unroll 16
        for (std::size_t r = 0; r < R; ++r) {
            t.a[r] = rows[i + r].a + k0;
            t.c[r] = rows[i + r].c + col;
        }
        tile_on<R, V, Last, N, LDB>(kc, t, b, load_c, finish, epi, col);
    });
}

/// C_p = A_p . B (then the epilogue) for every block of rows p < count, B (K, N) row-major: the
/// blocking of `blocked`, over the blocks' rows taken together. A row's chains and K blocks do not
/// depend on the rows beside it, so each C_p has the bits of `blocked` on that block alone; but a
/// panel of B is read (and packed, when the blocks hold pack_rows rows together) once for all of them
/// (a Dense layer's kernel once per replica and step instead of once per micro-batch), and a tile's
/// rows may come from two blocks: eight blocks of 16 rows run as 21 tiles of 6 and one of 2 on AVX2,
/// not as 8 x (6 + 6 + 4) (128 x 512 x 784: 82 -> 90 GFLOP/s on one core).
template <std::size_t N, class Epi = plain>
inline void
blocked_rows(const gemm_rows* blocks, std::size_t count, std::size_t K, const float* b, const Epi& epi = {}) noexcept
{
    using P = plan<N>;
    constexpr std::size_t pack_rows = 64;
    const std::size_t m = total_rows(blocks, count);
    if (m == 0)
        return;
    if (K == 0) {
        for (std::size_t p = 0; p < count; ++p)
            std::memset(blocks[p].c, 0, blocks[p].m * N * sizeof(float));
        return;
    }
    if (count == 1) {   // one block: its rows at one stride
        blocked<N>(m, K, blocks[0].a, K, 1, b, blocks[0].c, false, epi);
        return;
    }
    const row_ref* rows = block_rows(blocks, count, m, K, N);
    const bool pack = m >= pack_rows && !P::in_place_packed;
    auto column = [&]<std::size_t MR, std::size_t V, std::size_t Last>(std::size_t kc, std::size_t k0, bool load_c,
                                                                       bool finish, std::size_t col) {
        const float* bk = b + k0 * N;
        if (pack) {
            float* packed = scratch_buffer(P::kc * V * W, 0);
            pack_panel<V, N>(kc, bk, col, packed);
            pointer_panel<MR, V, Last, N, V * W>(rows, m, kc, k0, packed, load_c, finish, epi, col);
        } else {
            pointer_panel<MR, V, Last, N, N>(rows, m, kc, k0, bk + col, load_c, finish, epi, col);
        }
    };
    for (std::size_t k0 = 0; k0 < K; k0 += P::kc) {
        const std::size_t kc = std::min(P::kc, K - k0);
        const bool load_c = k0 > 0, finish = k0 + kc == K;
        for (std::size_t p = 0; p < P::panels; ++p) {
            const std::size_t col = p * P::nv * W;
            if (P::rest == 0 && p + 1 == P::panels)
                column.template operator()<P::mr, P::nv, P::last_lanes>(kc, k0, load_c, finish, col);
            else
                column.template operator()<P::mr, P::nv, W>(kc, k0, load_c, finish, col);
        }
        if constexpr (P::rest > 0)
            column.template operator()<P::rest_mr, P::rest, P::last_lanes>(kc, k0, load_c, finish, P::panels * P::nv * W);
    }
}

/// A C tile (R rows from i, V vectors at col) of gemm_tn_parts: one chain per element over every part's
/// rows in order, from zero, in registers. B's panels are read packed one after another (LDB = V W:
/// `packed` holds each part's panel in turn) or in place (LDB = N).
template <std::size_t R, std::size_t V, std::size_t Last, std::size_t N, std::size_t LDB, class Parts>
inline void
parts_tile(std::size_t i, std::size_t lda, const Parts& parts, std::size_t count, const float* packed, float* c,
           std::size_t col) noexcept
{
    vfloat acc[R][V];
    const strided_rows<N> out{nullptr, 0, 0, c};
    tile_start<R, V, Last>(acc, out, false);
    const float* b = packed;
    for (std::size_t p = 0; p < count; ++p) {
        const gemm_part part = parts(p);
        if constexpr (LDB == N)
            b = part.b + col;
        tile_steps<R, V, Last, N, LDB>(acc, part.k, strided_rows<N>{part.a + i, 1, lda, nullptr}, b);
        if constexpr (LDB != N)
            b += part.k * LDB;
    }
    tile_store<R, V, Last>(acc, out, false, plain{}, col, false);
}

/// Rows [0, m) of one column panel of gemm_tn_parts' C (parts_tile), `rows` the parts' rows in all. Each
/// part's panel of B is copied first when at least 48 rows of C share it (its rows N floats apart share
/// few L1 sets, and a partial last vector would take masked loads): measured 1.3x on the Reuters
/// model's Dense<46> in blocks of 84 rows, no change for Dense<10> in blocks of 408.
template <std::size_t MR, std::size_t V, std::size_t Last, std::size_t N, class Parts>
inline void
parts_panel(std::size_t m, std::size_t lda, const Parts& parts, std::size_t count, std::size_t rows, float* c,
            std::size_t col) noexcept
{
    constexpr std::size_t LD = V * W;
    if (m >= 48 && !plan<N>::in_place_packed) {
        float* packed = scratch_buffer(rows * LD, 0);
        float* to = packed;
        for (std::size_t p = 0; p < count; ++p) {
            const gemm_part part = parts(p);
            pack_panel<V, N>(part.k, part.b, col, to);
            to += part.k * LD;
        }
        row_tiles<MR>(m, [&]<std::size_t R>(std::size_t i) {
            parts_tile<R, V, Last, N, LD>(i, lda, parts, count, packed, c + i * N + col, col);
        });
    } else {
        row_tiles<MR>(m, [&]<std::size_t R>(std::size_t i) {
            parts_tile<R, V, Last, N, N>(i, lda, parts, count, nullptr, c + i * N + col, col);
        });
    }
}

/// gemm_tn_parts for a wide C (tn_packs_both) and at least 48 rows: rows of C in blocks of mc, each
/// block's rows of every part's A copied into micro-panels of MR rows (element (r, k) of micro-panel t
/// at t PS + k MR + r, k over the parts' rows in order), then for each column panel every part's panel
/// of B packed one after another and each row tile one chain over all of them (tile). A^T's rows in
/// place are lda floats apart: at lda = 512 a part's 16 rows fall in two L1 sets and a tile's lines
/// are evicted before the next tile reads them (512 x 512 over eight parts of 16 in blocks of 192 rows: 80 -> 93 GFLOP/s, OpenBLAS 83).
template <std::size_t N, class Parts>
inline void
packed_parts(std::size_t m, std::size_t lda, const Parts& parts, std::size_t count, std::size_t rows, float* c) noexcept
{
    constexpr std::size_t MR = plan<N>::mr, mc_max = MR * 32;
    const std::size_t blocks = (m + mc_max - 1) / mc_max, mc = ((m + blocks - 1) / blocks + MR - 1) / MR * MR;
    const std::size_t ps = MR * rows + W;   // a micro-panel, and the lanes a vector store spills past it
    float* pa = scratch_buffer(mc / MR * ps, 2);
    float* pb = scratch_buffer(rows * plan<N>::nv * W, 0);
    for (std::size_t m0 = 0; m0 < m; m0 += mc) {
        const std::size_t mb = std::min(mc, m - m0);
        // Each MR-row piece of a row of A^T is a masked load and one vector store: its spill lands on
        // the next k, written after it, or on the pad.
        std::size_t k0 = 0;
        for (std::size_t p = 0; p < count; ++p) {
            const gemm_part part = parts(p);
            for (std::size_t k = 0; k < part.k; ++k) {
                const float* src = part.a + k * lda + m0;
                for (std::size_t i = 0; i < mb; i += MR) {
                    const std::size_t lanes = std::min(MR, mb - i);
                    float* to = pa + i / MR * ps + (k0 + k) * MR;
                    if constexpr (MR <= W)
                        (lanes == W ? vfloat::load(src + i) : vfloat::load_n(src + i, lanes)).store(to);
                    else
                        std::copy_n(src + i, lanes, to);
                }
            }
            k0 += part.k;
        }
        float* cm = c + m0 * N;
        auto panel = [&]<std::size_t V, std::size_t Last>(std::size_t col) {
            float* to = pb;
            for (std::size_t p = 0; p < count; ++p) {
                const gemm_part part = parts(p);
                pack_panel<V, N>(part.k, part.b, col, to);
                to += part.k * V * W;
            }
            row_tiles<MR>(mb, [&]<std::size_t R>(std::size_t i) {
                tile<R, V, Last, N, V * W>(rows, pa + i / MR * ps + i % MR, 1, MR, pb, cm + i * N + col, false, true,
                                           plain{}, col);
            });
        };
        for_each_panel<N>(panel);
    }
}

/// True when a row of C fills under 80% of the lanes of its vectors (Dense<10>: 10 of 16): gemm_tn_parts
/// then runs down C's columns instead (narrow_parts), vectors along the rows of C.
template <std::size_t N>
inline constexpr bool narrow_columns = plan<N>::vectors * W * 4 > N * 5;

/// C^T's tile (R columns of C from j, V vectors of rows of C from i) over one part's k rows, in `sum`
/// (laid out (R, V W)): each element's chain goes on from `sum`, or from zero when `first` (so that
/// over the parts in order it is one chain over all their rows). A_p's rows give the vectors, B_p's
/// elements the broadcasts: per element the scalar operations of parts_tile (fma(a, b, acc) =
/// fma(b, a, acc)). `span` rows of C are valid (only the vectors below it are read when !Full).
template <std::size_t R, std::size_t V, bool Full, std::size_t N>
inline void
narrow_tile(const float* a, std::size_t lda, const float* b, std::size_t k, std::size_t span, float* sum,
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
        const float* bk = b + kk * N;
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

/// gemm_tn_parts for narrow C: rows of C in blocks of `rows_block`, each block's C^T computed part by
/// part (each pass reads one part's rows of A, a few sequential streams the prefetcher follows; one
/// pass per tile over every part's rows measured 8% slower on the Fashion model's step, its A beyond
/// L2) in this thread's buffer of (rows_block / (V W)) tiles x N columns x V W, then written to C by rows.
template <std::size_t N, class Parts>
inline void
narrow_parts(std::size_t m, std::size_t lda, const Parts& parts, std::size_t count, float* c) noexcept
{
    // Columns per tile: as many as the registers hold (plan's rows for V vectors), spread evenly over
    // the tiles N needs (Dense<10>: 5 + 5, 1.2x faster than 6 + 4).
    constexpr std::size_t V = plan<N>::max_nv, max_r = plan<N>::rows_for(V), tiles = (N + max_r - 1) / max_r;
    constexpr std::size_t R = (N + tiles - 1) / tiles, VW = V * W, Rest = N % R;
    constexpr std::size_t rows_block = 32 * VW;
    float* sums = scratch_buffer(rows_block * N, 4);
    for (std::size_t i0 = 0; i0 < m; i0 += rows_block) {
        const std::size_t rows = std::min(rows_block, m - i0);
        bool first = true;
        for (std::size_t p = 0; p < count; ++p) {
            const gemm_part part = parts(p);
            if (part.k == 0)
                continue;
            for (std::size_t t = 0; t * VW < rows; ++t) {
                const float* a = part.a + i0 + t * VW;
                const std::size_t span = rows - t * VW;
                float* s = sums + t * N * VW;
                const bool full = span >= VW;
                std::size_t j = 0;
                for (; j + R <= N; j += R)
                    (full ? narrow_tile<R, V, true, N> : narrow_tile<R, V, false, N>)(a, lda, part.b + j, part.k, span,
                                                                                      s + j * VW, first);
                if constexpr (Rest > 0)
                    (full ? narrow_tile<Rest, V, true, N> : narrow_tile<Rest, V, false, N>)(a, lda, part.b + j, part.k,
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

/// The blocking of dot_rows (C = A . B^T, each element a dot product along K) for a C of N columns:
/// tiles of rb rows x up to max_jb columns, each element one vector of partial sums (lane l: the k = l
/// mod W), over kc floats of K per pass: B's N rows of a pass and a tile's rows of A (about 24 KiB)
/// stay in L1 while the row tiles go by. The columns are split as evenly as they go (Dense<10> on
/// AVX2: 4 + 3 + 3). Measured on one AVX2 core, 16 x 10 x 10816: 3 x 4 tiles 1.15x faster than 2 x 5,
/// 1.25x than 4 x 2.
template <std::size_t N>
struct dot_plan {
    static constexpr bool wide_file = tpudsl::detail::simd::registers >= 32;
    static constexpr std::size_t rb = wide_file ? 4 : 3;
    static constexpr std::size_t max_jb = wide_file ? 5 : 4;
    static constexpr std::size_t groups = (N + max_jb - 1) / max_jb;
    static constexpr std::size_t jb = N / groups;     // columns of the narrower groups
    static constexpr std::size_t wide = N % groups;   // groups of jb + 1 columns, first
    static constexpr std::size_t kc = std::max<std::size_t>(4 * W, 6144 / (N + rb) / W * W);
};

/// A tile of dot_rows: J columns of C from j0 for the R rows from `rows`, over K's [k0, k0 + kc) (kc a
/// multiple of W but at K's end). Each element's vector of partial sums goes on from `sums` (laid out
/// (row, column) over all of C's rows, W floats each), or from zero when k0 = 0; at K's end the lanes
/// are added (reduce_add) to the bias and the epilogue's activation, and C's element is written.
template <std::size_t R, std::size_t J, std::size_t K, std::size_t N, bool Relu>
inline void
dot_tile(const row_ref* rows, std::size_t i, std::size_t j0, std::size_t k0, std::size_t kc, const float* b,
         const float* bias, float* sums) noexcept
{
    vfloat acc[R][J];
    const bool first = k0 == 0, last = k0 + kc == K;
#pragma GCC unroll 8
    for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (std::size_t j = 0; j < J; ++j)
            acc[r][j] = first ? vfloat::broadcast(0.0f) : vfloat::load(sums + ((i + r) * N + j0 + j) * W);
    const float* a[R];
#pragma GCC unroll 8
    for (std::size_t r = 0; r < R; ++r)
        a[r] = rows[i + r].a + k0;
    b += j0 * K + k0;
    const std::size_t full = kc / W * W;
    for (std::size_t k = 0; k < full; k += W) {
        vfloat av[R];
#pragma GCC unroll 8
        for (std::size_t r = 0; r < R; ++r)
            av[r] = vfloat::load(a[r] + k);
#pragma GCC unroll 8
        for (std::size_t j = 0; j < J; ++j) {
            const vfloat bv = vfloat::load(b + j * K + k);
#pragma GCC unroll 8
            for (std::size_t r = 0; r < R; ++r)
                acc[r][j] = fma(av[r], bv, acc[r][j]);
        }
    }
    if (full < kc) {   // K's last partial vector: the lanes beyond K are zero on both sides
        const std::size_t lanes = kc - full;
        vfloat av[R];
#pragma GCC unroll 8
        for (std::size_t r = 0; r < R; ++r)
            av[r] = vfloat::load_n(a[r] + full, lanes);
#pragma GCC unroll 8
        for (std::size_t j = 0; j < J; ++j) {
            const vfloat bv = vfloat::load_n(b + j * K + full, lanes);
#pragma GCC unroll 8
            for (std::size_t r = 0; r < R; ++r)
                acc[r][j] = fma(av[r], bv, acc[r][j]);
        }
    }
#pragma GCC unroll 8
    for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (std::size_t j = 0; j < J; ++j) {
            if (!last) {
                acc[r][j].store(sums + ((i + r) * N + j0 + j) * W);
                continue;
            }
            const float z = reduce_add(acc[r][j]) + bias[j0 + j];
            rows[i + r].c[j0 + j] = Relu ? (z > 0.0f ? z : 0.0f) : z;
        }
}

/// C = act(A . B^T + bias) over `rows` (m of them, each a row of A of K floats and a row of C of N
/// floats), B (N, K) row-major: each element a dot product along K, every lane busy however narrow C
/// is (gemm_nn's tiles fill N of a row's vectors' lanes: 10 of 16 for Dense<10>). K in passes of kc
/// (dot_plan); per pass every row tile under every group of jb columns. An element's bits depend
/// only on its row of A and its row of B: not on m, the tiles or the rows beside it.
template <std::size_t K, std::size_t N, bool Relu>
inline void
dot_rows(const row_ref* rows, std::size_t m, const float* b, const float* bias) noexcept
{
    using P = dot_plan<N>;
    float* sums = K > P::kc ? scratch_buffer(m * N * W, 5) : nullptr;
    for (std::size_t k0 = 0; k0 < K; k0 += P::kc) {
        const std::size_t kc = std::min(P::kc, K - k0);
        row_tiles<P::rb>(m, [&]<std::size_t R>(std::size_t i) {
            if constexpr (P::wide > 0)
                for (std::size_t g = 0; g < P::wide; ++g)
                    dot_tile<R, P::jb + 1, K, N, Relu>(rows, i, g * (P::jb + 1), k0, kc, b, bias, sums);
            for (std::size_t g = P::wide; g < P::groups; ++g)
                dot_tile<R, P::jb, K, N, Relu>(rows, i, P::wide + g * P::jb, k0, kc, b, bias, sums);
        });
    }
}

} // namespace detail_gemm

/// C(m, N) = A^T B over the parts' rows, parts(p) giving part p (a gemm_part) for p < count: each
/// element one chain over k from zero, part after part in order (the bits of gemm_tn on the parts' rows
/// stacked, without stacking them: a layer's kernel gradient over every micro-batch of a step). C is
/// zero when no part has rows. A narrow C (narrow_columns) is computed down its columns, every lane
/// busy: measured 2.0x faster on the Fashion model's Dense<10> kernel (10816 x 10 over eight parts of 16).
template <std::size_t N, class Parts>
inline void
gemm_tn_parts(std::size_t m, std::size_t lda, const Parts& parts, std::size_t count, float* c) noexcept
{
    using P = detail_gemm::plan<N>;
    constexpr std::size_t W = detail_gemm::W;
    std::size_t rows = 0;
    for (std::size_t p = 0; p < count; ++p)
        rows += parts(p).k;
    if (rows == 0) {
        std::memset(c, 0, m * N * sizeof(float));
        return;
    }
    if constexpr (detail_gemm::narrow_columns<N>) {
        detail_gemm::narrow_parts<N>(m, lda, parts, count, c);
        return;
    }
    if constexpr (detail_gemm::tn_packs_both<N>)
        if (m >= 48) {
            detail_gemm::packed_parts<N>(m, lda, parts, count, rows, c);
            return;
        }
    for (std::size_t p = 0; p < P::panels; ++p) {
        const std::size_t col = p * P::nv * W;
        if (P::rest == 0 && p + 1 == P::panels)
            detail_gemm::parts_panel<P::mr, P::nv, P::last_lanes, N>(m, lda, parts, count, rows, c, col);
        else
            detail_gemm::parts_panel<P::mr, P::nv, W, N>(m, lda, parts, count, rows, c, col);
    }
    if constexpr (P::rest > 0)
        detail_gemm::parts_panel<P::rest_mr, P::rest, P::last_lanes, N>(m, lda, parts, count, rows, c,
                                                                        P::panels * P::nv * W);
}

/// Columns [j0, j1) of row `row` of gemm_tn_parts' C, written to c[j0, j1): the whole row is computed
/// by the same kernel in this thread's row buffer (the same bits), then the columns are copied.
template <std::size_t N, class Parts>
inline void
gemm_tn_parts_columns(std::size_t row, std::size_t j0, std::size_t j1, std::size_t lda, const Parts& parts,
                      std::size_t count, float* c) noexcept
{
    float* whole = detail_gemm::scratch_buffer(N, 3);
    gemm_tn_parts<N>(
        1, lda,
        [&](std::size_t p) {
            const gemm_part part = parts(p);
            return gemm_part{part.a + row, part.b, part.k};
        },
        count, whole);
    std::copy(whole + j0, whole + j1, c + j0);
}

/// out(cols, rows) = in(rows, cols)^T, in 8 x 8 blocks so that both sides are read and written by lines.
inline void
transpose(const float* in, std::size_t rows, std::size_t cols, float* out) noexcept
{
    detail_gemm::transpose_strided(in, rows, cols, cols, out, rows);
}

/// C(M,N) = A(M,K) . B(K,N), or C += A . B when `accumulate`.
template <std::size_t K, std::size_t N>
inline void
gemm_nn(std::size_t M, const float* a, const float* b, float* c, bool accumulate = false) noexcept
{
    detail_gemm::blocked<N>(M, K, a, K, 1, b, c, accumulate);
}

/// C(M,N) = act(A(M,K) . B(K,N) + bias), the bias and the activation (Linear or Relu) applied in
/// registers as each tile finishes.
template <std::size_t K, std::size_t N, class Act>
inline void
gemm_nn_bias(std::size_t M, const float* a, const float* b, const float* bias, float* c) noexcept
{
    static_assert(std::is_same_v<Act, Linear> || std::is_same_v<Act, Relu>, "fused epilogue: Linear or Relu");
    detail_gemm::blocked<N>(M, K, a, K, 1, b, c, false, detail_gemm::bias_epilogue<std::is_same_v<Act, Relu>>{bias});
}

/// C_p = A_p (m_p, K) . B (K, N) for each block of rows: each C_p the bits of gemm_nn on its block
/// alone, B's panels read once for all the blocks (the micro-batches of a replica through one Dense).
template <std::size_t K, std::size_t N>
inline void
gemm_nn_rows(const gemm_rows* blocks, std::size_t count, const float* b) noexcept
{
    detail_gemm::blocked_rows<N>(blocks, count, K, b);
}

/// gemm_nn_bias over blocks of rows, as gemm_nn_rows: each C_p = act(A_p . B + bias), the bits of
/// gemm_nn_bias on its block alone.
template <std::size_t K, std::size_t N, class Act>
inline void
gemm_nn_bias_rows(const gemm_rows* blocks, std::size_t count, const float* b, const float* bias) noexcept
{
    static_assert(std::is_same_v<Act, Linear> || std::is_same_v<Act, Relu>, "fused epilogue: Linear or Relu");
    detail_gemm::blocked_rows<N>(blocks, count, K, b, detail_gemm::bias_epilogue<std::is_same_v<Act, Relu>>{bias});
}

/// True when C = A (M, K) . B (K, N) + bias is better computed from B^T as dot products along K
/// (gemm_nt_bias on B^T): C's rows fill under 80% of their vectors' lanes (narrow_columns; Dense<10> on AVX2
/// or AVX-512: 10 of 16) and K spans at least 8 vectors.
template <std::size_t K, std::size_t N>
inline constexpr bool prefers_dot_products = detail_gemm::narrow_columns<N> && K >= 8 * detail_gemm::W;

/// C_p = act(A_p (m_p, K) . B(N, K)^T + bias) for each block of rows: each element one dot product
/// along K, every lane busy (detail_gemm::dot_rows). An element's bits depend only on its row of A and
/// its row of B: the same for a block alone or among others, and on any number of rows.
template <std::size_t K, std::size_t N, class Act>
inline void
gemm_nt_bias_rows(const gemm_rows* blocks, std::size_t count, const float* b, const float* bias) noexcept
{
    static_assert(std::is_same_v<Act, Linear> || std::is_same_v<Act, Relu>, "fused epilogue: Linear or Relu");
    const std::size_t m = detail_gemm::total_rows(blocks, count);
    if (m == 0)
        return;
    const detail_gemm::row_ref* rows = detail_gemm::block_rows(blocks, count, m, K, N);
    if constexpr (K == 0) {
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < N; ++j)
                rows[i].c[j] = std::is_same_v<Act, Relu> ? std::max(bias[j], 0.0f) : bias[j];
    } else {
        detail_gemm::dot_rows<K, N, std::is_same_v<Act, Relu>>(rows, m, b, bias);
    }
}

/// C(M, N) = act(A(M, K) . B(N, K)^T + bias): gemm_nt_bias_rows on one block.
template <std::size_t K, std::size_t N, class Act>
inline void
gemm_nt_bias(std::size_t M, const float* a, const float* b, const float* bias, float* c) noexcept
{
    const gemm_rows block{a, c, M};
    gemm_nt_bias_rows<K, N, Act>(&block, 1, b, bias);
}

/// C(M,N) = A(K,M)^T . B(K,N), or C += when `accumulate`: the reduction runs over the batch (K, known
/// at run time).
template <std::size_t M, std::size_t N>
inline void
gemm_tn(std::size_t K, const float* a, const float* b, float* c, bool accumulate = true) noexcept
{
    // From four row tiles up, packing B per block of K repays its copy: 35 x 64 x 4736 77 -> 82
    // GFLOP/s, 27 x 32 x 16384 77 -> 79; at 9 or 16 rows it costs more than it saves (76 -> 57 at
    // 9 x 64 x 10816), and `blocked` reads B in place (it also handles K = 0).
    if (K > 0) {
        if constexpr (M >= 64 && detail_gemm::tn_packs_both<N>)
            return detail_gemm::blocked_tn<N>(M, K, a, b, c, accumulate);
        else if constexpr (M >= 24)
            return detail_gemm::blocked_tn_in_place<N>(M, K, a, b, c, accumulate);
    }
    detail_gemm::blocked<N>(M, K, a, 1, M, b, c, accumulate);
}

/// B^T (K, N) of B (N, K), in this thread's transpose buffer: valid until the thread's next call of
/// transposed_scratch or gemm_nt without a `bt`.
template <std::size_t K, std::size_t N>
[[nodiscard]] inline const float*
transposed_scratch(const float* b)
{
    float* t = detail_gemm::scratch_buffer(K * N, 1);
    transpose(b, N, K, t);
    return t;
}

/// C(M,N) = A(M,K) . B(N,K)^T, with `bt` = B^T (K, N) when the caller keeps one (a layer's transposed
/// kernel, made once per weights update); otherwise B is transposed into this thread's buffer first.
template <std::size_t K, std::size_t N>
inline void
gemm_nt(std::size_t M, const float* a, const float* b, float* c, const float* bt = nullptr) noexcept
{
    if (!bt)
        bt = transposed_scratch<K, N>(b);
    detail_gemm::blocked<N>(M, K, a, K, 1, bt, c, false);
}

} // namespace tpudsl::kernels

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif // !TPUDSL_KERNELS_GEMM_HPP
