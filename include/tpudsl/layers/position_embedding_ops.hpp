/// @file Defines the forward and backward pass of tpudsl::PositionEmbedding on a batch.
#ifndef TPUDSL_LAYERS_POSITION_EMBEDDING_OPS_HPP
#define TPUDSL_LAYERS_POSITION_EMBEDDING_OPS_HPP

#include <tpudsl/layers/position_embedding.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <algorithm>
#include <cstddef>

namespace tpudsl::detail {

/// PositionEmbedding's forward (the table's first T rows for every sample) and backward (their
/// gradient, summed over the samples; none reaches the input).
template <std::size_t SequenceLength>
struct position_embedding_ops {
    template <class B>
    static void
    forward(const float* params, const float*, float* y, float*, std::size_t n, const step_context&) noexcept
    {
        constexpr std::size_t size = B::output_shape::size;
        const float* table = params + B::template weight<0>::offset;
        for (std::size_t s = 0; s < n; ++s)
            std::copy_n(table, size, y + s * size);
    }

    template <class B>
    static void
    backward(const float*, const float*, const float*, float* dy, float* dx, float* grads, float*, std::size_t n,
             bool) noexcept
    {
        constexpr std::size_t size = B::output_shape::size;
        float* g = grads + B::template weight<0>::offset;
        for (std::size_t i = 0; i < size; ++i) {
            double sum = 0.0;
            for (std::size_t s = 0; s < n; ++s)
                sum += dy[s * size + i];
            g[i] = static_cast<float>(sum);
        }
        std::fill(g + size, g + B::template weight<0>::size, 0.0f);   // the positions past this sequence
        if (dx)
            std::fill_n(dx, n * B::input_shape::size, 0.0f);
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_POSITION_EMBEDDING_OPS_HPP
