/// @file Defines gemm_tn, C (+)= A^T . B with the reduction over the batch: blocked_tn (A and B packed,
/// a wide C), blocked_tn_in_place (B packed, A^T read where it is) and `blocked` for few rows.
///
/// From M >= 24, gemm_tn packs every panel of a block of K and runs each row tile under all of them
/// while its lines of A^T are in L1 (blocked_tn_in_place); with a wide C it packs A^T too, in
/// micro-panels of MR rows (blocked_tn).
#ifndef TPUDSL_KERNELS_GEMM_TN_HPP
#define TPUDSL_KERNELS_GEMM_TN_HPP

#include <tpudsl/kernels/gemm/nn.hpp>
#include <tpudsl/kernels/gemm/toolkit.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include <tpudsl/kernels/gemm/loops_begin.hpp>   // GCC's loop warning off, to loops_end.hpp

namespace tpudsl::kernels {

namespace detail {

/// gemm_tn for a wide C: C(M,N) (+)= A(K,M)^T . B(K,N), both operands packed, in blocks of kc steps of
/// K. Per block, every panel of B is packed once (kc x nv vectors, half an L1), one after the other;
/// per block of mc rows of C, A^T's rows are copied into micro-panels of MR rows, k-major, so that a
/// tile's broadcasts are one sequential stream and the block (144 KB) stays in L2 while every panel of
/// B passes over it; B is packed once per block of K, not once per block of rows. The chains are those
/// of `blocked` (k in order, C carried from block to block): the same bits.
/// blocked_tn's blocks and buffers: kc_max steps of K, mc rows of C, a micro-panel of MR rows (and
/// the lanes a vector store spills past it).
template <std::size_t N>
struct tn_blocking {
    using P = plan<N>;
    static constexpr std::size_t kc_max = std::max<std::size_t>(128, 16384 / (P::nv * W * sizeof(float)));
    static constexpr std::size_t mc = P::mr * 24;
    static constexpr std::size_t ps = P::mr * kc_max + W;
    static constexpr std::size_t packed_b = kc_max * P::vectors * W;
    static constexpr std::size_t packed_a = mc / P::mr * ps;
};

/// blocked_tn_in_place's smallest block of K: its blocks take 128 to 255 steps.
inline constexpr std::size_t tn_in_place_kc_min = 128;

template <std::size_t N>
inline void
blocked_tn(std::size_t M, std::size_t K, const float* a, const float* b, float* c, bool accumulate) noexcept
{
    using P = plan<N>;
    using T = tn_blocking<N>;
    constexpr std::size_t MR = P::mr, kc_max = T::kc_max, mc = T::mc, PS = T::ps;
    float* pb = scratch_buffer(T::packed_b, scratch::packed_b);
    float* pa = scratch_buffer(T::packed_a, scratch::packed_a);
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
                row_tiles<MR, latency_rows<V>>(m, [&]<std::size_t R>(std::size_t i, auto n) {
                    tile<R, V, Last, true>(n, kc, pa + i / MR * PS + i % MR, 1, MR, panel_b, V * W, cm + i * N + col, N,
                                           load_c, true, epilogue{}, col);
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
/// tile's lines of A and a panel of B in L1; a panel run over all rows before the next would fetch
/// A^T's block from L2 or L3 again for every panel. The chains are those of `blocked`: the same bits.
template <std::size_t N>
inline void
blocked_tn_in_place(std::size_t M, std::size_t K, const float* a, const float* b, float* c, bool accumulate) noexcept
{
    using P = plan<N>;
    constexpr std::size_t kc_min = tn_in_place_kc_min;
    float* pb = scratch_buffer(2 * kc_min * P::vectors * W, scratch::packed_b);
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
        row_tiles<P::mr, latency_rows<P::nv>>(M, [&]<std::size_t R>(std::size_t i, auto n) {
            // The first tile to reach a new line of A^T's rows two lines ahead asks for all kc of them:
            // the strided misses otherwise stall a tile when A^T is too big for L3.
            constexpr std::size_t line = 64 / sizeof(float), ahead = 2 * line;
            if (i + ahead < M && (i + ahead) / line != (i + ahead - R) / line)
                for (std::size_t k = 0; k < kc; ++k)
                    __builtin_prefetch(ak + k * M + i + ahead);
            for_panels<N>(kc, panels, [&]<std::size_t V, std::size_t Last>(const float* panel_b, std::size_t col) {
                tile<R, V, Last, true>(n, kc, ak + i, 1, M, panel_b, V * W, c + i * N + col, N, load_c, true, epilogue{},
                                       col);
            });
        });
    }
}

} // namespace detail

/// C(M,N) = A(K,M)^T . B(K,N), or C += when `accumulate`: the reduction runs over the batch (K, known
/// at run time).
template <std::size_t M, std::size_t N>
inline void
gemm_tn(std::size_t K, const float* a, const float* b, float* c, bool accumulate = true) noexcept
{
    // From four row tiles up, packing B per block of K repays its copy; under 24 rows (9 or 16) the few
    // tiles that read a packed panel save less than the copy costs, and `blocked` reads B in place (it
    // also handles K = 0).
    if (K > 0) {
        if constexpr (M >= 64 && detail::tn_packs_both<N>)
            return detail::blocked_tn<N>(M, K, a, b, c, accumulate);
        else if constexpr (M >= 24)
            return detail::blocked_tn_in_place<N>(M, K, a, b, c, accumulate);
    }
    detail::blocked<N>(M, K, a, 1, M, b, c, accumulate);
}

/// What gemm_tn<M, N> asks of the scratch, whatever K.
template <std::size_t M, std::size_t N>
[[nodiscard]] constexpr scratch_sizes
gemm_tn_scratch() noexcept
{
    using T = detail::tn_blocking<N>;
    if constexpr (M >= 64 && detail::tn_packs_both<N>)
        return scratch_sizes::of(detail::scratch::packed_b, T::packed_b) |
               scratch_sizes::of(detail::scratch::packed_a, T::packed_a);
    else if constexpr (M >= 24)
        return scratch_sizes::of(detail::scratch::packed_b,
                                 2 * detail::tn_in_place_kc_min * detail::plan<N>::vectors * detail::W);
    else
        return detail::blocked_scratch<N>(M);
}

} // namespace tpudsl::kernels

#include <tpudsl/kernels/gemm/loops_end.hpp>

#endif // !TPUDSL_KERNELS_GEMM_TN_HPP
