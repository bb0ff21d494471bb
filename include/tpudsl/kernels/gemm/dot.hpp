/// @file Defines gemm_nt_bias and gemm_nt_bias_rows: C = act(A . B^T + bias), each element one dot
/// product along K, every lane busy however narrow C is (prefers_dot_products says when).
#ifndef TPUDSL_KERNELS_GEMM_DOT_HPP
#define TPUDSL_KERNELS_GEMM_DOT_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/kernels/gemm/rows.hpp>
#include <tpudsl/kernels/gemm/toolkit.hpp>

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include <tpudsl/kernels/gemm/loops_begin.hpp>   // GCC's loop warning off, to loops_end.hpp

namespace tpudsl::kernels {

namespace detail {

/// The blocking of dot_rows (C = A . B^T, each element a dot product along K) for a C of N columns:
/// tiles of rb rows x up to max_jb columns, each element one vector of partial sums (lane l: the k = l
/// mod W), over kc floats of K per pass: B's N rows of a pass and a tile's rows of A (about 24 KiB)
/// stay in L1 while the row tiles go by. A tile's accumulators, a vector of A per row and one of B
/// fill the registers (3 x 4 + 3 + 1 = 16 on AVX2). The columns are split as evenly as they go
/// (Dense<10> on AVX2: 4 + 3 + 3).
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
/// are added (reduce_add) to the bias and the epilogue's activation, and C's element is written. K and
/// N are run-time values: every Dense layer with tiles of R x J shares the code. `n`: the tile's real
/// rows (row_tiles); the rows from n on repeat row n - 1's sums and are not stored.
template <std::size_t R, std::size_t J, bool Relu, class Count>
inline void
dot_tile(const row_ref* rows, std::size_t i, Count n, std::size_t j0, std::size_t k0, std::size_t kc,
         std::size_t K, std::size_t N, const float* b, const float* bias, float* sums) noexcept
{
    vfloat acc[R][J];
    const bool first = k0 == 0, last = k0 + kc == K;
#pragma GCC unroll 8
    for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (std::size_t j = 0; j < J; ++j)
            acc[r][j] = first || r >= n ? vfloat::broadcast(0.0f) : vfloat::load(sums + ((i + r) * N + j0 + j) * W);
    const float* a[R];
#pragma GCC unroll 8
    for (std::size_t r = 0; r < R; ++r)
        a[r] = rows[i + (r < n ? r : n - 1)].a + k0;
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
            if (r >= n)
                continue;
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
    float* sums = K > P::kc ? scratch_buffer(m * N * W, scratch::dot_sums) : nullptr;
    for (std::size_t k0 = 0; k0 < K; k0 += P::kc) {
        const std::size_t kc = std::min(P::kc, K - k0);
        // Two rows of 3 to 5 columns keep 6 to 10 chains going: a remainder of one row runs as two.
        row_tiles<P::rb, 2>(m, [&]<std::size_t R>(std::size_t i, auto n) {
            if constexpr (P::wide > 0)
                for (std::size_t g = 0; g < P::wide; ++g)
                    dot_tile<R, P::jb + 1, Relu>(rows, i, n, g * (P::jb + 1), k0, kc, K, N, b, bias, sums);
            for (std::size_t g = P::wide; g < P::groups; ++g)
                dot_tile<R, P::jb, Relu>(rows, i, n, P::wide + g * P::jb, k0, kc, K, N, b, bias, sums);
        });
    }
}

} // namespace detail

/// True when C = A (M, K) . B (K, N) + bias is better computed from B^T as dot products along K
/// (gemm_nt_bias on B^T): C's rows fill under 80% of their vectors' lanes (narrow_columns; Dense<10> on AVX2
/// or AVX-512: 10 of 16) and K spans at least 8 vectors.
template <std::size_t K, std::size_t N>
inline constexpr bool prefers_dot_products = detail::narrow_columns<N> && K >= 8 * detail::W;

/// C_p = act(A_p (m_p, K) . B(N, K)^T + bias) for each block of rows: each element one dot product
/// along K, every lane busy (detail::dot_rows). An element's bits depend only on its row of A and
/// its row of B: the same for a block alone or among others, and on any number of rows.
template <std::size_t K, std::size_t N, EpilogueActivation Act>
inline void
gemm_nt_bias_rows(const gemm_rows* blocks, std::size_t count, const float* b, const float* bias) noexcept
{
    const std::size_t m = detail::total_rows(blocks, count);
    if (m == 0)
        return;
    const detail::row_ref* rows = detail::block_rows(blocks, count, m, K, N);
    if constexpr (K == 0) {
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < N; ++j)
                rows[i].c[j] = std::is_same_v<Act, Relu> ? std::max(bias[j], 0.0f) : bias[j];
    } else {
        detail::dot_rows<K, N, std::is_same_v<Act, Relu>>(rows, m, b, bias);
    }
}

/// What gemm_nt_bias_rows<K, N, Act> and gemm_nt_bias ask of the scratch for up to m rows in all: the
/// row list, and the partial sums when K takes several passes.
template <std::size_t K, std::size_t N>
[[nodiscard]] constexpr scratch_sizes
gemm_nt_bias_rows_scratch(std::size_t m) noexcept
{
    return scratch_sizes::of_rows(m) |
           (K > detail::dot_plan<N>::kc ? scratch_sizes::of(detail::scratch::dot_sums, m * N * detail::W)
                                        : scratch_sizes{});
}

/// C(M, N) = act(A(M, K) . B(N, K)^T + bias): gemm_nt_bias_rows on one block.
template <std::size_t K, std::size_t N, class Act>
inline void
gemm_nt_bias(std::size_t M, const float* a, const float* b, const float* bias, float* c) noexcept
{
    const gemm_rows block{a, c, M};
    gemm_nt_bias_rows<K, N, Act>(&block, 1, b, bias);
}

} // namespace tpudsl::kernels

#include <tpudsl/kernels/gemm/loops_end.hpp>

#endif // !TPUDSL_KERNELS_GEMM_DOT_HPP
