/// @file Defines pool_core, the forward and backward pass of a max pooling of a given window geometry
/// (MaxPool1D and MaxPool2D are both one), and pool_layer_ops, their ops once a binding names the core.
#ifndef TPUDSL_LAYERS_DETAIL_POOL_CORE_HPP
#define TPUDSL_LAYERS_DETAIL_POOL_CORE_HPP

#include <tpudsl/kernels/pooling.hpp>
#include <tpudsl/kernels/window_geometry.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <cstddef>

namespace tpudsl::detail {

template <kernels::window_geometry G>
struct pool_core {
    static constexpr kernels::window_geometry geometry = G;
    static constexpr std::size_t out = G.positions() * G.channels;

    static void
    forward(const float* x, float* y, float* argmax, std::size_t n) noexcept
    {
        for (std::size_t s = 0; s < n; ++s)
            kernels::max_pool_forward<G>(x + s * G.in_size(), y + s * out, argmax + s * out);
    }

    static void
    backward(const float* dy, float* dx, const float* argmax, std::size_t n) noexcept
    {
        if (!dx)
            return;
        for (std::size_t s = 0; s < n; ++s)
            kernels::max_pool_backward<G>(dy + s * out, argmax + s * out, dx + s * G.in_size());
    }
};


/// The ops of a max pooling, once `Binding::core<B>` says which pool_core a bound layer B runs.
template <class Binding>
struct pool_layer_ops {
    template <class B>
    using core = typename Binding::template core<B>;

    template <class B>
    static void
    forward(const float*, const float* x, float* y, float* scratch, std::size_t n, const step_context&) noexcept
    {
        core<B>::forward(x, y, scratch, n);
    }

    template <class B>
    static void
    backward(const float*, const float*, const float*, float* dy, float* dx, float*, float* scratch, std::size_t n,
             bool) noexcept
    {
        core<B>::backward(dy, dx, scratch, n);
    }
};
} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_DETAIL_POOL_CORE_HPP
