/// @file Defines the transposes (8 x 8 blocks, in registers where the instruction set allows) and
/// gemm_nt, C = A . B^T as gemm_nn's blocking on B transposed.
#ifndef TPUDSL_KERNELS_GEMM_TRANSPOSE_HPP
#define TPUDSL_KERNELS_GEMM_TRANSPOSE_HPP

#include <tpudsl/detail/simd.hpp>
#include <tpudsl/kernels/gemm/nn.hpp>
#include <tpudsl/kernels/gemm/toolkit.hpp>

#include <algorithm>
#include <cstddef>

#include <tpudsl/kernels/gemm/loops_begin.hpp>   // GCC's loop warning off, to loops_end.hpp

namespace tpudsl::kernels {

namespace detail {

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

/// out(c, r) = in(r, c) for r < rows, c < cols, rows `in_ld` and `out_ld` floats apart. With AVX2,
/// 8 x 8 blocks in registers, walked down the rows for each strip of 16 columns: each line of `in`
/// (16 floats when aligned) is read once, and each of the strip's 16 rows of `out` is written from
/// start to end, a stream the hardware prefetches. The fused pass writes the shared transposed kernels
/// this way into lines that the rest of the step has evicted; walked across the columns instead, each
/// 8 x 8 block stored into 8 lines 2 KB apart (a 512-wide kernel) that had to be fetched first, and
/// the transpose was several times slower.
inline void
transpose_strided(const float* in, std::size_t rows, std::size_t cols, std::size_t in_ld, float* out,
                  std::size_t out_ld) noexcept
{
    using tpudsl::detail::simd::transpose_8x8;
    std::size_t full_rows = 0, c0 = 0;
    if constexpr (tpudsl::detail::simd::transposes_8x8_in_registers) {
        constexpr std::size_t T = 8;
        full_rows = rows / T * T;
        for (; c0 + 2 * T <= cols; c0 += 2 * T)
            for (std::size_t r0 = 0; r0 < full_rows; r0 += T) {
                transpose_8x8(in + r0 * in_ld + c0, in_ld, out + c0 * out_ld + r0, out_ld);
                transpose_8x8(in + r0 * in_ld + c0 + T, in_ld, out + (c0 + T) * out_ld + r0, out_ld);
            }
        for (; c0 + T <= cols; c0 += T)
            for (std::size_t r0 = 0; r0 < full_rows; r0 += T)
                transpose_8x8(in + r0 * in_ld + c0, in_ld, out + c0 * out_ld + r0, out_ld);
        transpose_scalar(in, 0, full_rows, c0, cols, in_ld, out, out_ld);
    }
    transpose_scalar(in, full_rows, rows, 0, cols, in_ld, out, out_ld);
}

} // namespace detail

/// out(cols, rows) = in(rows, cols)^T, in 8 x 8 blocks so that both sides are read and written by lines.
inline void
transpose(const float* in, std::size_t rows, std::size_t cols, float* out) noexcept
{
    detail::transpose_strided(in, rows, cols, cols, out, rows);
}

/// The same of a matrix whose rows are `in_ld` floats apart, into rows `out_ld` apart (a head's slice of
/// an attention's projections).
inline void
transpose(const float* in, std::size_t rows, std::size_t cols, std::size_t in_ld, float* out, std::size_t out_ld) noexcept
{
    detail::transpose_strided(in, rows, cols, in_ld, out, out_ld);
}

/// The part of out(cols, rows) = in(rows, cols)^T that copies in's elements [b, e) (in row-major
/// order; the range may start and end inside a row): transposes of the ranges that cover `in` make
/// the whole of `transpose(in, rows, cols, out)`.
inline void
transpose_range(const float* in, std::size_t rows, std::size_t cols, std::size_t b, std::size_t e, float* out) noexcept
{
    std::size_t r = b / cols;
    if (const std::size_t c = b % cols; c != 0 && b < e) {   // the end of a row
        const std::size_t ce = std::min(cols, c + (e - b));
        detail::transpose_scalar(in, r, r + 1, c, ce, cols, out, rows);
        b += ce - c;
        ++r;
    }
    if (b >= e)
        return;
    const std::size_t whole = (e - b) / cols;
    detail::transpose_strided(in + r * cols, whole, cols, cols, out + r, rows);
    r += whole;
    b += whole * cols;
    if (b < e)   // the start of a row
        detail::transpose_scalar(in, r, r + 1, 0, e - b, cols, out, rows);
}

/// B^T (K, N) of B (N, K), in this thread's transpose buffer (scratch::transposed_b): valid until the
/// thread's next call of transposed_scratch, flipped_kernel_scratch or gemm_nt without a `bt`.
template <std::size_t K, std::size_t N>
[[nodiscard]] inline const float*
transposed_scratch(const float* b)
{
    float* t = detail::scratch_buffer(K * N, detail::scratch::transposed_b);
    transpose(b, N, K, t);
    return t;
}

/// What transposed_scratch<K, N> asks of the scratch.
template <std::size_t K, std::size_t N>
[[nodiscard]] constexpr scratch_sizes
transposed_scratch_sizes() noexcept
{
    return scratch_sizes::of(detail::scratch::transposed_b, K * N);
}

/// What gemm_nt<K, N> asks of the scratch for up to M rows (with_bt: its caller keeps B^T).
template <std::size_t K, std::size_t N>
[[nodiscard]] constexpr scratch_sizes
gemm_nt_scratch(std::size_t M, bool with_bt) noexcept
{
    return (with_bt ? scratch_sizes{} : transposed_scratch_sizes<K, N>()) | detail::blocked_scratch<N>(M);
}

/// C(M,N) = A(M,K) . B(N,K)^T, with `bt` = B^T (K, N) when the caller keeps one (a layer's transposed
/// kernel, made once per weights update); otherwise B is transposed into this thread's buffer first.
template <std::size_t K, std::size_t N>
inline void
gemm_nt(std::size_t M, const float* a, const float* b, float* c, const float* bt = nullptr) noexcept
{
    if (!bt)
        bt = transposed_scratch<K, N>(b);
    detail::blocked<N>(M, K, a, K, 1, bt, c, false);
}

} // namespace tpudsl::kernels

#include <tpudsl/kernels/gemm/loops_end.hpp>

#endif // !TPUDSL_KERNELS_GEMM_TRANSPOSE_HPP
