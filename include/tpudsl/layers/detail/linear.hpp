/// @file Defines what Dense and the convolutions share: the bias gradient as column sums, and
/// z = x . w + b with the activation fused into the GEMM's epilogue where it can be.
#ifndef TPUDSL_LAYERS_DETAIL_LINEAR_HPP
#define TPUDSL_LAYERS_DETAIL_LINEAR_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/detail/simd.hpp>
#include <tpudsl/kernels/activation_math.hpp>
#include <tpudsl/kernels/gemm.hpp>

#include <cstddef>
#include <cstring>
#include <type_traits>

namespace tpudsl::detail {

/// db(Cols) = column sums of dz(rows, Cols), a vector of columns at a time; `accumulate`: db += them.
template <std::size_t Cols>
inline void
column_sums(const float* dz, float* db, std::size_t rows, bool accumulate = false) noexcept
{
    using tpudsl::detail::simd::vfloat;
    constexpr std::size_t W = vfloat::size;
    constexpr std::size_t full = Cols / W * W;
    for (std::size_t c = 0; c < full; c += W) {
        vfloat s0 = vfloat::broadcast(0.0f), s1 = s0;
        std::size_t r = 0;
        for (; r + 2 <= rows; r += 2) {
            s0 = s0 + vfloat::load(dz + r * Cols + c);
            s1 = s1 + vfloat::load(dz + (r + 1) * Cols + c);
        }
        if (r < rows)
            s0 = s0 + vfloat::load(dz + r * Cols + c);
        const vfloat sum = s0 + s1;
        (accumulate ? vfloat::load(db + c) + sum : sum).store(db + c);
    }
    if constexpr (full < Cols) {
        vfloat s = vfloat::broadcast(0.0f);
        for (std::size_t r = 0; r < rows; ++r)
            s = s + vfloat::load_n(dz + r * Cols + full, Cols - full);
        (accumulate ? vfloat::load_n(db + full, Cols - full) + s : s).store_n(db + full, Cols - full);
    }
}

/// z = x . w + b, y = act(z) over M rows: the bias and a Relu are applied inside the GEMM as each tile
/// of y leaves the registers; a softmax layer keeps its logits z in `logits`.
template <std::size_t K, std::size_t N, class Act>
inline void
linear_forward(std::size_t M, const float* x, const float* w, const float* b, float* y, float* logits) noexcept
{
    if constexpr (EpilogueActivation<Act>) {
        kernels::gemm_nn_bias<K, N, Act>(M, x, w, b, y);
    } else {
        kernels::gemm_nn_bias<K, N, Linear>(M, x, w, b, y);
        if constexpr (std::is_same_v<Act, Softmax>)
            std::memcpy(logits, y, M * N * sizeof(float));
        kernels::activation_forward<Act, N>(y, M);
    }
}


} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_DETAIL_LINEAR_HPP
