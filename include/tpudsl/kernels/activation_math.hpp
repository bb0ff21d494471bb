/// @file Defines the activations' forward (in place) and backward (from the output) kernels.
#ifndef TPUDSL_KERNELS_ACTIVATION_MATH_HPP
#define TPUDSL_KERNELS_ACTIVATION_MATH_HPP

#include <tpudsl/core/activation_tags.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>

namespace tpudsl::kernels {

/// y <- act(y) in place over `rows` rows of `D` (Softmax normalises each row; the others are element-wise).
template <class Act, std::size_t D>
inline void
activation_forward(float* y, std::size_t rows) noexcept
{
    const std::size_t n = rows * D;
    if constexpr (std::is_same_v<Act, Relu>) {
        for (std::size_t i = 0; i < n; ++i)
            y[i] = y[i] > 0.0f ? y[i] : 0.0f;
    } else if constexpr (std::is_same_v<Act, Sigmoid>) {
        for (std::size_t i = 0; i < n; ++i)
            y[i] = 1.0f / (1.0f + std::exp(-y[i]));
    } else if constexpr (std::is_same_v<Act, Tanh>) {
        for (std::size_t i = 0; i < n; ++i)
            y[i] = std::tanh(y[i]);
    } else if constexpr (std::is_same_v<Act, Softmax>) {
        for (std::size_t r = 0; r < rows; ++r) {
            float* row = y + r * D;
            const float m = *std::max_element(row, row + D);
            float sum = 0.0f;
            for (std::size_t i = 0; i < D; ++i) {
                row[i] = std::exp(row[i] - m);
                sum += row[i];
            }
            const float inv = 1.0f / sum;
            for (std::size_t i = 0; i < D; ++i)
                row[i] *= inv;
        }
    }
}

/// dz <- dy * act'(z), computed from the output y = act(z) (dz may alias dy).
template <class Act, std::size_t D>
inline void
activation_backward(const float* y, const float* dy, float* dz, std::size_t rows) noexcept
{
    const std::size_t n = rows * D;
    if constexpr (std::is_same_v<Act, Linear>) {
        if (dz != dy)
            std::copy(dy, dy + n, dz);
    } else if constexpr (std::is_same_v<Act, Relu>) {
        // dy[i] is read whatever y[i] is. Read only where y[i] > 0, it became (GCC 12, AVX-512) a load
        // merge-masked into the previous vector's register, spilled and reloaded every iteration (a
        // store-forwarding chain); read unconditionally, it is a zero-masked load.
        for (std::size_t i = 0; i < n; ++i) {
            const float d = dy[i];
            dz[i] = y[i] > 0.0f ? d : 0.0f;
        }
    } else if constexpr (std::is_same_v<Act, Sigmoid>) {
        for (std::size_t i = 0; i < n; ++i)
            dz[i] = dy[i] * y[i] * (1.0f - y[i]);
    } else if constexpr (std::is_same_v<Act, Tanh>) {
        for (std::size_t i = 0; i < n; ++i)
            dz[i] = dy[i] * (1.0f - y[i] * y[i]);
    } else if constexpr (std::is_same_v<Act, Softmax>) {
        for (std::size_t r = 0; r < rows; ++r) {
            const float* yr = y + r * D;
            const float* dyr = dy + r * D;
            float dot = 0.0f;
            for (std::size_t i = 0; i < D; ++i)
                dot += dyr[i] * yr[i];
            for (std::size_t i = 0; i < D; ++i)
                dz[r * D + i] = yr[i] * (dyr[i] - dot);
        }
    }
}

} // namespace tpudsl::kernels

#endif // !TPUDSL_KERNELS_ACTIVATION_MATH_HPP
