/// @file Defines pooling_core, the forward and backward pass of a max or an average pooling of a given
/// window geometry (MaxPool1D, MaxPool2D, AveragePooling1D, AveragePooling2D and the global poolings
/// are each one), and pooling_ops, their ops once a binding names the core.
#ifndef TPUDSL_LAYERS_DETAIL_POOL_CORE_HPP
#define TPUDSL_LAYERS_DETAIL_POOL_CORE_HPP

#include <tpudsl/kernels/average_pooling.hpp>
#include <tpudsl/kernels/pooling.hpp>
#include <tpudsl/kernels/window_geometry.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <cstddef>

namespace tpudsl::detail {

/// A pooling of geometry G over n samples, one sample at a time: the maximum of each window (Max,
/// its argmax kept in `argmax` for backward) or its mean (`argmax` unused).
template <kernels::window_geometry G, bool Max>
struct pooling_core {
    static constexpr kernels::window_geometry geometry = G;
    static constexpr std::size_t out = G.positions() * G.channels;

    static void
    forward(const float* x, float* y, [[maybe_unused]] float* argmax, std::size_t n) noexcept
    {
        for (std::size_t s = 0; s < n; ++s) {
            if constexpr (Max)
                kernels::max_pool_forward<G>(x + s * G.in_size(), y + s * out, argmax + s * out);
            else
                kernels::average_pool_forward<G>(x + s * G.in_size(), y + s * out);
        }
    }

    static void
    backward(const float* dy, float* dx, [[maybe_unused]] const float* argmax, std::size_t n) noexcept
    {
        if (!dx)
            return;
        for (std::size_t s = 0; s < n; ++s) {
            if constexpr (Max)
                kernels::max_pool_backward<G>(dy + s * out, argmax + s * out, dx + s * G.in_size());
            else
                kernels::average_pool_backward<G>(dy + s * out, dx + s * G.in_size());
        }
    }
};

/// The ops of a max or an average pooling, once `Binding::core<B>` says which pooling_core a bound
/// layer B runs; a max pooling's scratch holds its argmax.
template <class Binding>
struct pooling_ops {
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
