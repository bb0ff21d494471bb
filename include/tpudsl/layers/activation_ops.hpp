/// @file Defines the forward and backward pass of tpudsl::Activation on a batch.
#ifndef TPUDSL_LAYERS_ACTIVATION_OPS_HPP
#define TPUDSL_LAYERS_ACTIVATION_OPS_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/kernels/activation_math.hpp>
#include <tpudsl/layers/activation.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <cstddef>
#include <cstring>
#include <type_traits>

namespace tpudsl::detail {

/// Activation's forward and backward, element-wise (Softmax: over the last axis).
template <class Act>
struct activation_ops {
    template <class B>
    static void
    forward(const float*, const float* x, float* y, float* scratch, std::size_t n, const step_context&) noexcept
    {
        constexpr std::size_t S = B::input_shape::size;
        constexpr std::size_t D = B::input_shape::dims[B::input_shape::rank - 1];   // softmax: the last axis
        if constexpr (std::is_same_v<Act, Relu>) {
            for (std::size_t i = 0; i < n * S; ++i)   // one pass, no copy first
                y[i] = x[i] > 0.0f ? x[i] : 0.0f;
            return;
        }
        std::memcpy(y, x, n * S * sizeof(float));
        if constexpr (std::is_same_v<Act, Softmax>)
            std::memcpy(scratch, x, n * S * sizeof(float));
        kernels::activation_forward<Act, D>(y, n * (S / D));
    }

    template <class B>
    static void
    backward(const float*, const float*, const float* y, float* dy, float* dx, float*, float*, std::size_t n,
             bool dy_is_logit_grad) noexcept
    {
        constexpr std::size_t S = B::input_shape::size;
        constexpr std::size_t D = B::input_shape::dims[B::input_shape::rank - 1];
        if (!dx)
            return;
        if (dy_is_logit_grad) {
            if (dx != dy)   // the graph computes an Activation's gradient in place
                std::memcpy(dx, dy, n * S * sizeof(float));
        } else
            kernels::activation_backward<Act, D>(y, dy, dx, n * (S / D));
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_ACTIVATION_OPS_HPP
