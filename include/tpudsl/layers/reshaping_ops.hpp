/// @file Defines the forward and backward pass of the reshaping layers (Reshape, Identity, Permute,
/// RepeatVector) on a batch.
#ifndef TPUDSL_LAYERS_RESHAPING_OPS_HPP
#define TPUDSL_LAYERS_RESHAPING_OPS_HPP

#include <tpudsl/layers/flatten_ops.hpp>
#include <tpudsl/layers/reshaping.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <array>
#include <cstddef>
#include <cstring>

namespace tpudsl::detail {

/// Reshape and Identity: Flatten's copy (when the graph does not alias the output to the input).
struct copy_ops : flatten_ops {};

/// Permute: output element (i_0, ..., i_r) is the input's element whose axis Dims[k] - 1 is at i_k.
template <std::size_t... Dims>
struct permute_ops {
    /// For each output element of a sample, in order, the input element it copies.
    template <class B>
    static constexpr std::array<std::size_t, B::input_shape::size> source = [] {
        constexpr std::size_t R = sizeof...(Dims);
        constexpr std::array<std::size_t, R> perm{(Dims - 1)...};
        constexpr auto in = B::input_shape::dims;
        std::array<std::size_t, R> in_stride{};
        in_stride[R - 1] = 1;
        for (std::size_t k = R - 1; k-- > 0;)
            in_stride[k] = in_stride[k + 1] * in[k + 1];
        std::array<std::size_t, B::input_shape::size> from{};
        std::array<std::size_t, R> at{};   // the output index, odometer order
        for (std::size_t e = 0; e < from.size(); ++e) {
            std::size_t i = 0;
            for (std::size_t k = 0; k < R; ++k)
                i += at[k] * in_stride[perm[k]];
            from[e] = i;
            for (std::size_t k = R; k-- > 0;) {
                if (++at[k] < in[perm[k]])
                    break;
                at[k] = 0;
            }
        }
        return from;
    }();

    template <class B>
    static void
    forward(const float*, const float* x, float* y, float*, std::size_t n, const step_context&) noexcept
    {
        constexpr std::size_t S = B::input_shape::size;
        for (std::size_t s = 0; s < n; ++s)
            for (std::size_t e = 0; e < S; ++e)
                y[s * S + e] = x[s * S + source<B>[e]];
    }
    template <class B>
    static void
    backward(const float*, const float*, const float*, float* dy, float* dx, float*, float*, std::size_t n,
             bool) noexcept
    {
        constexpr std::size_t S = B::input_shape::size;
        if (dx)
            for (std::size_t s = 0; s < n; ++s)
                for (std::size_t e = 0; e < S; ++e)
                    dx[s * S + source<B>[e]] = dy[s * S + e];
    }
};

/// RepeatVector: the vector copied N times; its gradient the sum of the N copies', in order.
template <std::size_t N>
struct repeat_vector_ops {
    template <class B>
    static void
    forward(const float*, const float* x, float* y, float*, std::size_t n, const step_context&) noexcept
    {
        constexpr std::size_t D = B::input_shape::size;
        for (std::size_t s = 0; s < n; ++s)
            for (std::size_t r = 0; r < N; ++r)
                std::memcpy(y + (s * N + r) * D, x + s * D, D * sizeof(float));
    }
    template <class B>
    static void
    backward(const float*, const float*, const float*, float* dy, float* dx, float*, float*, std::size_t n,
             bool) noexcept
    {
        constexpr std::size_t D = B::input_shape::size;
        if (!dx)
            return;
        for (std::size_t s = 0; s < n; ++s) {
            float* d = dx + s * D;
            std::memcpy(d, dy + s * N * D, D * sizeof(float));
            for (std::size_t r = 1; r < N; ++r)
                for (std::size_t j = 0; j < D; ++j)
                    d[j] += dy[(s * N + r) * D + j];
        }
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_RESHAPING_OPS_HPP
