/// @file Defines tpudsl::LayerNormalization, Keras' layer normalization over the last axis.
#ifndef TPUDSL_LAYERS_LAYER_NORMALIZATION_HPP
#define TPUDSL_LAYERS_LAYER_NORMALIZATION_HPP

#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/layers/layer_base.hpp>

#include <cstddef>
#include <string_view>

namespace tpudsl {

namespace detail {
/// The rules of LayerNormalization, in the order they are checked.
enum class layer_normalization_rule { ok, epsilon };
template <float Epsilon>
struct layer_normalization_ops;   // layers/layer_normalization_ops.hpp
} // namespace detail

/// `LayerNormalization(axis=-1, epsilon)`: each row over the last axis (a sample's features, or one
/// timestep's of a sequence) is normalised by its own mean and (biased) variance,
/// `y = gamma * (x - mean) / sqrt(var + epsilon) + beta`, the same in training and inference, nothing
/// shared across samples. Weights, in Keras' order: gamma, beta (ones and zeros), each (last axis,).
/// @tparam Epsilon added to the variance, > 0 (Keras' default 1e-3)
template <float Epsilon = 1e-3f>
struct LayerNormalization : layer_base {
    static constexpr bool position_independent = true;
    static constexpr bool row_wise = true;
    static constexpr bool gradient_in_place = true;
    static constexpr std::string_view class_name = "LayerNormalization";
    static constexpr std::string_view base_name = "layer_normalization";
    static constexpr float epsilon = Epsilon;
    using ops = detail::layer_normalization_ops<Epsilon>;

    using rule = detail::layer_normalization_rule;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval rule
    check() noexcept
    {
        return Epsilon > 0.0f ? rule::ok : rule::epsilon;   // NaN fails too
    }

    template <rule R>
    struct diagnostic {
        static_assert(R != rule::epsilon, "tpudsl::LayerNormalization<Epsilon>: requires Epsilon > 0 "
                                          "[TPUDSL_LAYERNORM_EPSILON]");
    };

    template <class In>
    static constexpr std::size_t features = In::shape::dims[In::shape::rank - 1];

    template <class In>
    using weights = weight_list<weight<weight_role::gamma, Shape<features<In>>>, weight<weight_role::beta, Shape<features<In>>>>;

    /// The normalised input, and each row's 1 / sqrt(var + epsilon).
    template <class In>
    static constexpr std::size_t scratch_size = In::shape::size + In::shape::size / features<In>;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_LAYER_NORMALIZATION_HPP
