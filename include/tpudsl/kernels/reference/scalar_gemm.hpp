/// @file Scalar reference of the GEMM kernels (double accumulation), the oracle of their tests.
#ifndef TPUDSL_KERNELS_REFERENCE_SCALAR_GEMM_HPP
#define TPUDSL_KERNELS_REFERENCE_SCALAR_GEMM_HPP

#include <cstddef>

namespace tpudsl::kernels::reference {

/// C(M,N) (+)= op(A) . op(B), where op(X) is X or X^T: A is (M,K) or, transposed, (K,M); B is (K,N)
/// or, transposed, (N,K). Returns nothing; `abs_sum`, when given, receives sum_k |a_ik b_kj| per
/// element (the scale against which rounding is judged).
inline void
gemm(std::size_t M, std::size_t N, std::size_t K, const float* a, bool trans_a, const float* b, bool trans_b,
     float* c, bool accumulate, double* abs_sum = nullptr) noexcept
{
    for (std::size_t i = 0; i < M; ++i)
        for (std::size_t j = 0; j < N; ++j) {
            double s = accumulate ? c[i * N + j] : 0.0;
            double m = accumulate ? (c[i * N + j] < 0 ? -c[i * N + j] : c[i * N + j]) : 0.0;
            for (std::size_t k = 0; k < K; ++k) {
                const double x = trans_a ? a[k * M + i] : a[i * K + k];
                const double y = trans_b ? b[j * K + k] : b[k * N + j];
                s += x * y;
                m += (x * y < 0 ? -x * y : x * y);
            }
            c[i * N + j] = static_cast<float>(s);
            if (abs_sum)
                abs_sum[i * N + j] = m;
        }
}

} // namespace tpudsl::kernels::reference

#endif // !TPUDSL_KERNELS_REFERENCE_SCALAR_GEMM_HPP
