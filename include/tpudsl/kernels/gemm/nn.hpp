/// @file Defines gemm_nn, C (+)= A . B, and gemm_nn_bias: the blocked GEMM (`blocked`) that every other
/// family falls back on. gemm_nn_bias adds the bias (and applies Relu) while the tile is still in
/// registers: no second pass.
#ifndef TPUDSL_KERNELS_GEMM_NN_HPP
#define TPUDSL_KERNELS_GEMM_NN_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/kernels/gemm/toolkit.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include <tpudsl/kernels/gemm/loops_begin.hpp>   // GCC's loop warning off, to loops_end.hpp

namespace tpudsl::kernels {

namespace detail {

/// One column panel (V vectors at col) over all M rows for one block of K; B's and C's rows n floats long.
/// `kc_max`: the plan's block of K, the packed panel's size (the same buffer for every block).
template <std::size_t MR, std::size_t V, std::size_t Last, class Epi>
inline void
column_panel(std::size_t M, std::size_t kc, std::size_t kc_max, const float* a, std::size_t rs, std::size_t cs,
             const float* bk, std::size_t n, float* c, bool load_c, bool finish, const Epi& epi, std::size_t col,
             bool pack) noexcept
{
    if (pack) {
        float* packed = scratch_buffer(kc_max * V * W, scratch::packed_b);
        pack_panel<V>(kc, bk, n, col, packed);
        panel<MR, V, Last, padded_b<Last, true>>(M, kc, a, rs, cs, packed, V * W, c + col, n, load_c, finish, epi, col);
    } else {
        panel<MR, V, Last, false>(M, kc, a, rs, cs, bk + col, n, c + col, n, load_c, finish, epi, col);
    }
}

/// C(M,N) (+)= A . B with A(i, k) = a[i * rs + k * cs] and B (K, N) row-major.
///
/// B's rows are N floats apart: a kc-row panel read in place maps onto few L1 sets (every row at the same
/// offset in a page when N W is a multiple of 1024) and is served from L2. When enough rows of A share a
/// panel (M >= pack_rows), the panel is first copied to a contiguous buffer that stays in L1; below that,
/// the copy would cost more than it saves.
/// Rows of A from which `blocked` packs B's panels (below it reads them in place). Not from fewer: a
/// micro-batch (16 rows) would pack the same weights again for each of a step's micro-batches, and its
/// few tiles do not repay the copy.
inline constexpr std::size_t pack_rows = 64;

/// What `blocked` (gemm_nn, gemm_nn_bias) asks of the scratch for up to M rows: one packed panel.
template <std::size_t N>
[[nodiscard]] constexpr scratch_sizes
blocked_scratch(std::size_t M) noexcept
{
    using P = plan<N>;
    return M >= pack_rows && !P::in_place_packed ? scratch_sizes::of(scratch::packed_b, P::kc * P::nv * W)
                                                 : scratch_sizes{};
}

template <std::size_t N, class Epi = epilogue>
inline void
blocked(std::size_t M, std::size_t K, const float* a, std::size_t rs, std::size_t cs, const float* b, float* c,
        bool accumulate, const Epi& epi = {}) noexcept
{
    using P = plan<N>;
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
                column_panel<P::mr, P::nv, P::last_lanes>(M, kc, P::kc, ak, rs, cs, bk, N, c, load_c, finish, epi, col,
                                                          pack);
            else
                column_panel<P::mr, P::nv, W>(M, kc, P::kc, ak, rs, cs, bk, N, c, load_c, finish, epi, col, pack);
        }
        if constexpr (P::rest > 0)
            column_panel<P::rest_mr, P::rest, P::last_lanes>(M, kc, P::kc, ak, rs, cs, bk, N, c, load_c, finish, epi,
                                                             P::panels * P::nv * W, pack);
    }
}

} // namespace detail

/// C(M,N) = A(M,K) . B(K,N), or C += A . B when `accumulate`.
template <std::size_t K, std::size_t N>
inline void
gemm_nn(std::size_t M, const float* a, const float* b, float* c, bool accumulate = false) noexcept
{
    detail::blocked<N>(M, K, a, K, 1, b, c, accumulate);
}

/// What gemm_nn<K, N> and gemm_nn_bias<K, N, Act> ask of the scratch for up to M rows.
template <std::size_t K, std::size_t N>
[[nodiscard]] constexpr scratch_sizes
gemm_nn_scratch(std::size_t M) noexcept
{
    return detail::blocked_scratch<N>(M);
}

/// C(M,N) = act(A(M,K) . B(K,N) + bias), the bias and the activation (Linear or Relu) applied in
/// registers as each tile finishes.
template <std::size_t K, std::size_t N, EpilogueActivation Act>
inline void
gemm_nn_bias(std::size_t M, const float* a, const float* b, const float* bias, float* c) noexcept
{
    detail::blocked<N>(M, K, a, K, 1, b, c, false, detail::bias_epilogue_for<Act>(bias));
}

} // namespace tpudsl::kernels

#include <tpudsl/kernels/gemm/loops_end.hpp>

#endif // !TPUDSL_KERNELS_GEMM_NN_HPP
