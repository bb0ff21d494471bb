/// @file Defines the SGEMM kernels every Dense and convolution layer runs on (xsimd, register-blocked).
///
///   gemm_nn:  C(M,N) (+)= A(M,K) . B(K,N)      forward:   Z = X . W
///   gemm_tn:  C(M,N) (+)= A(K,M)^T . B(K,N)    gradient:  dW = X^T . dZ
///   gemm_nt:  C(M,N) =    A(M,K) . B(N,K)^T    input grad: dX = dZ . W^T
/// All matrices are row-major and dense. The dimensions that come from the model are template
/// parameters; the one that comes from the batch is an argument.
#ifndef TPUDSL_KERNELS_GEMM_HPP
#define TPUDSL_KERNELS_GEMM_HPP

#include <tpudsl/detail/simd.hpp>

#include <cstddef>

// GCC 12 at -O3 reports "iteration N invokes undefined behavior" inside these loops once it has
// propagated a constant batch size into them (the row loops that follow a blocked loop). The loops
// stay in bounds: the kernel tests also run under AddressSanitizer and UBSan.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waggressive-loop-optimizations"
#endif

namespace tpudsl::kernels {

namespace detail_gemm {

using tpudsl::detail::simd::vfloat;
inline constexpr std::size_t W = vfloat::size;

/// R rows x V vectors of C accumulated over K, with A read through strides (row rs, column cs).
template <std::size_t R, std::size_t V, std::size_t N>
inline void
block(std::size_t K, const float* a, std::size_t rs, std::size_t cs, const float* b, float* c,
      bool accumulate) noexcept
{
    vfloat acc[R][V];
    for (std::size_t r = 0; r < R; ++r)
        for (std::size_t v = 0; v < V; ++v)
            acc[r][v] = accumulate ? vfloat::load(c + r * N + v * W) : vfloat::broadcast(0.0f);
    for (std::size_t k = 0; k < K; ++k) {
        vfloat bv[V];
        for (std::size_t v = 0; v < V; ++v)
            bv[v] = vfloat::load(b + k * N + v * W);
        for (std::size_t r = 0; r < R; ++r) {
            const vfloat av = vfloat::broadcast(a[r * rs + k * cs]);
            for (std::size_t v = 0; v < V; ++v)
                acc[r][v] = fma(av, bv[v], acc[r][v]);
        }
    }
    for (std::size_t r = 0; r < R; ++r)
        for (std::size_t v = 0; v < V; ++v)
            acc[r][v].store(c + r * N + v * W);
}

/// R rows of C over the columns [J0, N) that do not fill a vector.
template <std::size_t R, std::size_t N, std::size_t J0>
inline void
tail(std::size_t K, const float* a, std::size_t rs, std::size_t cs, const float* b, float* c,
     bool accumulate) noexcept
{
    for (std::size_t r = 0; r < R; ++r)
        for (std::size_t j = J0; j < N; ++j) {
            float s = accumulate ? c[r * N + j] : 0.0f;
            for (std::size_t k = 0; k < K; ++k)
                s += a[r * rs + k * cs] * b[k * N + j];
            c[r * N + j] = s;
        }
}

template <std::size_t R, std::size_t N>
inline void
row_block(std::size_t K, const float* a, std::size_t rs, std::size_t cs, const float* b, float* c,
          bool accumulate) noexcept
{
    constexpr std::size_t V = 4;   // 4 vectors x R rows of accumulators stay in registers
    constexpr std::size_t wide_end = N / (V * W) * (V * W);
    constexpr std::size_t vector_end = N / W * W;
    for (std::size_t j = 0; j < wide_end; j += V * W)
        block<R, V, N>(K, a, rs, cs, b + j, c + j, accumulate);
    for (std::size_t j = wide_end; j < vector_end; j += W)
        block<R, 1, N>(K, a, rs, cs, b + j, c + j, accumulate);
    if constexpr (vector_end < N)
        tail<R, N, vector_end>(K, a, rs, cs, b, c, accumulate);
}

/// C(M,N) (+)= A . B with A(i, k) = a[i * rs + k * cs].
template <std::size_t N>
inline void
strided(std::size_t M, std::size_t K, const float* a, std::size_t rs, std::size_t cs, const float* b, float* c,
        bool accumulate) noexcept
{
    constexpr std::size_t R = 4;
    std::size_t i = 0;
    for (; i + R <= M; i += R)
        row_block<R, N>(K, a + i * rs, rs, cs, b, c + i * N, accumulate);
    for (; i < M; ++i)
        row_block<1, N>(K, a + i * rs, rs, cs, b, c + i * N, accumulate);
}

} // namespace detail_gemm

/// C(M,N) = A(M,K) . B(K,N), or C += A . B when `accumulate`.
template <std::size_t K, std::size_t N>
inline void
gemm_nn(std::size_t M, const float* a, const float* b, float* c, bool accumulate = false) noexcept
{
    detail_gemm::strided<N>(M, K, a, K, 1, b, c, accumulate);
}

/// C(M,N) = A(K,M)^T . B(K,N), or C += when `accumulate`: the reduction runs over the batch (K, known
/// at run time).
template <std::size_t M, std::size_t N>
inline void
gemm_tn(std::size_t K, const float* a, const float* b, float* c, bool accumulate = true) noexcept
{
    detail_gemm::strided<N>(M, K, a, 1, M, b, c, accumulate);
}

/// C(M,N) = A(M,K) . B(N,K)^T: dot products of rows of A with rows of B.
template <std::size_t K, std::size_t N>
inline void
gemm_nt(std::size_t M, const float* a, const float* b, float* c) noexcept
{
    using detail_gemm::vfloat;
    constexpr std::size_t W = vfloat::size;
    constexpr std::size_t KV = K / W * W;
    for (std::size_t i = 0; i < M; ++i) {
        const float* ai = a + i * K;
        std::size_t j = 0;
        for (; j + 4 <= N; j += 4) {
            vfloat s0 = vfloat::broadcast(0.0f), s1 = s0, s2 = s0, s3 = s0;
            for (std::size_t k = 0; k < KV; k += W) {
                const vfloat x = vfloat::load(ai + k);
                s0 = fma(x, vfloat::load(b + (j + 0) * K + k), s0);
                s1 = fma(x, vfloat::load(b + (j + 1) * K + k), s1);
                s2 = fma(x, vfloat::load(b + (j + 2) * K + k), s2);
                s3 = fma(x, vfloat::load(b + (j + 3) * K + k), s3);
            }
            float r[4] = {reduce_add(s0), reduce_add(s1), reduce_add(s2), reduce_add(s3)};
            for (std::size_t k = KV; k < K; ++k)
                for (std::size_t q = 0; q < 4; ++q)
                    r[q] += ai[k] * b[(j + q) * K + k];
            for (std::size_t q = 0; q < 4; ++q)
                c[i * N + j + q] = r[q];
        }
        for (; j < N; ++j) {
            vfloat s = vfloat::broadcast(0.0f);
            for (std::size_t k = 0; k < KV; k += W)
                s = fma(vfloat::load(ai + k), vfloat::load(b + j * K + k), s);
            float r = reduce_add(s);
            for (std::size_t k = KV; k < K; ++k)
                r += ai[k] * b[j * K + k];
            c[i * N + j] = r;
        }
    }
}

} // namespace tpudsl::kernels

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif // !TPUDSL_KERNELS_GEMM_HPP
