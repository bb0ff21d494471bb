/// @file Defines tpudsl::Activation, Keras' stand-alone activation layer.
#ifndef TPUDSL_LAYERS_ACTIVATION_HPP
#define TPUDSL_LAYERS_ACTIVATION_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/layers/layer_base.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

namespace detail {
template <class Act>
struct activation_ops;   // layers/activation_ops.hpp
} // namespace detail

/// `Activation(f)`: applies `Act` element-wise (Softmax: over the last axis); the shape is kept.
/// @tparam Act one of Linear, Relu, Softmax, Sigmoid, Tanh
template <ActivationType Act>
struct Activation : layer_base {
    static constexpr bool position_independent = true;
    static constexpr std::string_view class_name = "Activation";
    static constexpr std::string_view base_name = "activation";
    using activation = Act;
    using ops = detail::activation_ops<Act>;
    static constexpr bool gradient_in_place = true;
    static constexpr bool row_wise = true;
    /// Softmax reads its whole row and Linear needs no pass: neither is applied in a convolution's place.
    using absorbable_activation =
        std::conditional_t<std::is_same_v<Act, Softmax> || std::is_same_v<Act, Linear>, void, Act>;

    /// The logits, when the activation is Softmax.
    template <class In>
    static constexpr std::size_t scratch_size = detail::logits_size<Act, In::shape::size>;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_ACTIVATION_HPP
