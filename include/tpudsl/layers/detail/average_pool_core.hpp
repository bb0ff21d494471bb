/// @file Defines average_pool_core, the forward and backward pass of an average pooling of a given
/// window geometry (AveragePooling1D, AveragePooling2D and the global average poolings are each one),
/// and average_pool_layer_ops, their ops once a binding names the core.
#ifndef TPUDSL_LAYERS_DETAIL_AVERAGE_POOL_CORE_HPP
#define TPUDSL_LAYERS_DETAIL_AVERAGE_POOL_CORE_HPP

#include <tpudsl/kernels/average_pooling.hpp>
#include <tpudsl/kernels/window_geometry.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <cstddef>

namespace tpudsl::detail {

template <kernels::window_geometry G>
struct average_pool_core {
    static constexpr kernels::window_geometry geometry = G;
    static constexpr std::size_t out = G.positions() * G.channels;

    static void
    forward(const float* x, float* y, std::size_t n) noexcept
    {
        for (std::size_t s = 0; s < n; ++s)
            kernels::average_pool_forward<G>(x + s * G.in_size(), y + s * out);
    }

    static void
    backward(const float* dy, float* dx, std::size_t n) noexcept
    {
        if (!dx)
            return;
        for (std::size_t s = 0; s < n; ++s)
            kernels::average_pool_backward<G>(dy + s * out, dx + s * G.in_size());
    }
};

/// The ops of an average pooling, once `Binding::core<B>` says which average_pool_core a bound layer B runs.
template <class Binding>
struct average_pool_layer_ops {
    template <class B>
    using core = typename Binding::template core<B>;

    template <class B>
    static void
    forward(const float*, const float* x, float* y, float*, std::size_t n, const step_context&) noexcept
    {
        core<B>::forward(x, y, n);
    }

    template <class B>
    static void
    backward(const float*, const float*, const float*, float* dy, float* dx, float*, float*, std::size_t n,
             bool) noexcept
    {
        core<B>::backward(dy, dx, n);
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_DETAIL_AVERAGE_POOL_CORE_HPP
