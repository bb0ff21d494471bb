/// @file Defines gemm_nn_rows and gemm_nn_bias_rows: gemm_nn over several blocks of rows at once (the
/// micro-batches of a replica), B's panels read once for all of them, each block the bits of gemm_nn.
#ifndef TPUDSL_KERNELS_GEMM_ROWS_HPP
#define TPUDSL_KERNELS_GEMM_ROWS_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/kernels/gemm/nn.hpp>
#include <tpudsl/kernels/gemm/toolkit.hpp>

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include <tpudsl/kernels/gemm/loops_begin.hpp>   // GCC's loop warning off, to loops_end.hpp

namespace tpudsl::kernels {

/// A block of rows for gemm_nn_rows: A_p (m, K) row-major, C_p (m, N) row-major, m rows.
struct gemm_rows {
    const float* a;
    float* c;
    std::size_t m;
};

namespace detail {

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
template <std::size_t MR, std::size_t V, std::size_t Last, bool Padded, class Epi>
inline void
pointer_panel(const row_ref* rows, std::size_t m, std::size_t kc, std::size_t k0, const float* b, std::size_t ldb,
              bool load_c, bool finish, const Epi& epi, std::size_t col) noexcept
{
    row_tiles<MR, latency_rows<V>>(m, [&]<std::size_t R>(std::size_t i, auto n) {
        pointer_rows<R> t;
#pragma GCC unroll 16
        for (std::size_t r = 0; r < R; ++r) {
            const row_ref& row = rows[i + (r < n ? r : n - 1)];
            t.a[r] = row.a + k0;
            t.c[r] = row.c + col;
        }
        tile_on<R, V, Last, Padded>(n, kc, t, b, ldb, load_c, finish, epi, col);
    });
}

/// C_p = A_p . B (then the epilogue) for every block of rows p < count, B (K, N) row-major: the
/// blocking of `blocked`, over the blocks' rows taken together. A row's chains and K blocks do not
/// depend on the rows beside it, so each C_p has the bits of `blocked` on that block alone; but a
/// panel of B is read (and packed, when the blocks hold pack_rows rows together) once for all of them
/// (a Dense layer's kernel once per replica and step instead of once per micro-batch), and a tile's
/// rows may come from two blocks: eight blocks of 16 rows run as 21 tiles of 6 and one of 2 on AVX2,
/// not as 8 x (6 + 6 + 4).
template <std::size_t N, class Epi = epilogue>
inline void
blocked_rows(const gemm_rows* blocks, std::size_t count, std::size_t K, const float* b, const Epi& epi = {}) noexcept
{
    using P = plan<N>;
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
            float* packed = scratch_buffer(P::kc * V * W, scratch::packed_b);
            pack_panel<V>(kc, bk, N, col, packed);
            pointer_panel<MR, V, Last, padded_b<Last, true>>(rows, m, kc, k0, packed, V * W, load_c, finish, epi, col);
        } else {
            pointer_panel<MR, V, Last, false>(rows, m, kc, k0, bk + col, N, load_c, finish, epi, col);
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

} // namespace detail

/// C_p = A_p (m_p, K) . B (K, N) for each block of rows: each C_p the bits of gemm_nn on its block
/// alone, B's panels read once for all the blocks (the micro-batches of a replica through one Dense).
template <std::size_t K, std::size_t N>
inline void
gemm_nn_rows(const gemm_rows* blocks, std::size_t count, const float* b) noexcept
{
    detail::blocked_rows<N>(blocks, count, K, b);
}

/// What gemm_nn_rows<K, N> and gemm_nn_bias_rows<K, N, Act> ask of the scratch for up to m rows in
/// all: the row list and a packed panel.
template <std::size_t K, std::size_t N>
[[nodiscard]] constexpr scratch_sizes
gemm_nn_rows_scratch(std::size_t m) noexcept
{
    return scratch_sizes::of_rows(m) | detail::blocked_scratch<N>(m);
}

/// gemm_nn_bias over blocks of rows, as gemm_nn_rows: each C_p = act(A_p . B + bias), the bits of
/// gemm_nn_bias on its block alone.
template <std::size_t K, std::size_t N, EpilogueActivation Act>
inline void
gemm_nn_bias_rows(const gemm_rows* blocks, std::size_t count, const float* b, const float* bias) noexcept
{
    detail::blocked_rows<N>(blocks, count, K, b, detail::bias_epilogue_for<Act>(bias));
}

} // namespace tpudsl::kernels

#include <tpudsl/kernels/gemm/loops_end.hpp>

#endif // !TPUDSL_KERNELS_GEMM_ROWS_HPP
