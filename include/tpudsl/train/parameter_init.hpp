/// @file Fills a model's flat parameter buffer with each weight's initializer (core/initializers.hpp):
/// Keras' defaults unless a layer names another. Each value is a function of (seed, layer, weight,
/// element), so the same seed gives the same bits whatever the thread count.
#ifndef TPUDSL_TRAIN_PARAMETER_INIT_HPP
#define TPUDSL_TRAIN_PARAMETER_INIT_HPP

#include <tpudsl/core/initializers.hpp>
#include <tpudsl/core/weight_spec.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

namespace tpudsl {

namespace detail {
template <class Model, std::size_t I>
inline void
initialize_layer(float* params, std::uint64_t seed) noexcept
{
    using B = typename Model::template layer<I>;
    [&]<std::size_t... J>(std::index_sequence<J...>) {
        (B::template weight<J>::initializer::template fill<typename B::template weight<J>::shape>(
             params + B::template weight<J>::offset, initializers::draw{seed, I, J}),
         ...);
    }(std::make_index_sequence<B::weight_count>{});
}
} // namespace detail

/// Fills the flat parameter buffer of `Model` (padding included) with its weights' initial values.
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

#endif // !TPUDSL_TRAIN_PARAMETER_INIT_HPP
