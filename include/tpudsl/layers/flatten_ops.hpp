/// @file Defines the forward and backward pass of tpudsl::Flatten on a batch.
#ifndef TPUDSL_LAYERS_FLATTEN_OPS_HPP
#define TPUDSL_LAYERS_FLATTEN_OPS_HPP

#include <tpudsl/layers/flatten.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <cstddef>
#include <cstring>

namespace tpudsl::detail {

/// Flatten's forward and backward: a copy, when the graph does not alias it (as the first layer).
struct flatten_ops {
    template <class B>
    static void
    forward(const float*, const float* x, float* y, float*, std::size_t n, const step_context&) noexcept
    {
        std::memcpy(y, x, n * B::input_shape::size * sizeof(float));
    }

    template <class B>
    static void
    backward(const float*, const float*, const float*, float* dy, float* dx, float*, float*, std::size_t n,
             bool) noexcept
    {
        if (dx)
            std::memcpy(dx, dy, n * B::input_shape::size * sizeof(float));
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_FLATTEN_OPS_HPP
