/// @file Defines the forward and backward pass of tpudsl::Embedding on a batch.
#ifndef TPUDSL_LAYERS_EMBEDDING_OPS_HPP
#define TPUDSL_LAYERS_EMBEDDING_OPS_HPP

#include <tpudsl/layers/embedding.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <cstddef>
#include <cstring>

namespace tpudsl::detail {

/// Embedding's forward (a gather of rows) and backward (a scatter-add into the table's gradient, whose
/// part of the arena the trainer clears: Embedding::accumulates_gradient).
template <std::size_t Vocab, std::size_t Dim>
struct embedding_ops {
    /// Token ids are checked against [0, Vocab) where the data enters the model, never here.
    template <class B, class Id>
    static void
    forward(const float* params, const Id* ids, float* y, float*, std::size_t n, const step_context&) noexcept
    {
        const float* table = params + B::template weight<0>::offset;
        for (std::size_t t = 0; t < n * B::input_shape::size; ++t)
            std::memcpy(y + t * Dim, table + static_cast<std::size_t>(ids[t]) * Dim, Dim * sizeof(float));
    }

    template <class B, class Id>
    static void
    backward(const float*, const Id* ids, const float*, float* dy, float*, float* grads, float*, std::size_t n,
             bool) noexcept
    {
        float* dtable = grads + B::template weight<0>::offset;
        for (std::size_t t = 0; t < n * B::input_shape::size; ++t) {
            float* row = dtable + static_cast<std::size_t>(ids[t]) * Dim;
            for (std::size_t d = 0; d < Dim; ++d)
                row[d] += dy[t * Dim + d];
        }
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_EMBEDDING_OPS_HPP
