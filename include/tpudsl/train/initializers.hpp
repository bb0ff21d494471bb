/// @file Keras' default initializers, seeded and counter-based: glorot_uniform kernels, zero biases,
/// uniform(-0.05, 0.05) embeddings. Each value is a function of (seed, layer, weight, element), so the
/// same seed gives the same bits whatever the thread count.
#ifndef TPUDSL_TRAIN_INITIALIZERS_HPP
#define TPUDSL_TRAIN_INITIALIZERS_HPP

#include <tpudsl/core/weights.hpp>
#include <tpudsl/detail/random.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

namespace tpudsl {

namespace detail {

/// Glorot's limit sqrt(6 / (fan_in + fan_out)) for a kernel of shape (..., in, out): the receptive
/// field is the product of the leading dimensions (keras `_compute_fans`).
template <class S>
[[nodiscard]] inline double
glorot_limit() noexcept
{
    std::size_t receptive = 1;
    for (std::size_t d = 0; d + 2 < S::rank; ++d)
        receptive *= S::dims[d];
    const double fan_in = static_cast<double>(receptive * S::dims[S::rank - 2]);
    const double fan_out = static_cast<double>(receptive * S::dims[S::rank - 1]);
    return std::sqrt(6.0 / (fan_in + fan_out));
}

template <class W>
inline void
initialize_weight(float* params, std::uint64_t seed, std::size_t layer, std::size_t index) noexcept
{
    float* w = params + W::offset;
    if constexpr (W::role == weight_role::bias) {
        std::memset(w, 0, W::size * sizeof(float));
    } else {
        const double limit = W::role == weight_role::embeddings ? 0.05 : glorot_limit<typename W::shape>();
        for (std::size_t k = 0; k < W::size; ++k) {
            const double u = unit_float(hash4(seed, layer, index, k));
            w[k] = static_cast<float>((2.0 * u - 1.0) * limit);
        }
    }
}

} // namespace detail

namespace detail {
template <class Model, std::size_t I>
inline void
initialize_layer(float* params, std::uint64_t seed) noexcept
{
    using B = typename Model::template layer<I>;
    [&]<std::size_t... J>(std::index_sequence<J...>) {
        (initialize_weight<typename B::template weight<J>>(params, seed, I, J), ...);
    }(std::make_index_sequence<B::weight_count>{});
}
} // namespace detail

/// Fills the flat parameter buffer of `Model` (padding included) with Keras' default initial values.
template <class Model>
void
initialize_parameters(float* params, std::uint64_t seed) noexcept
{
    std::memset(params, 0, Model::param_buffer_size * sizeof(float));
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (detail::initialize_layer<Model, I>(params, seed), ...);
    }(std::make_index_sequence<Model::layer_count>{});
}

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_INITIALIZERS_HPP
