/// @file Defines tpudsl::Activation, Keras' stand-alone activation layer.
#ifndef TPUDSL_LAYERS_ACTIVATION_HPP
#define TPUDSL_LAYERS_ACTIVATION_HPP

#include <tpudsl/core/activations.hpp>
#include <tpudsl/core/weights.hpp>
#include <tpudsl/layers/layer_base.hpp>

#include <cstddef>
#include <string_view>

namespace tpudsl {

/// `Activation(f)`: applies `Act` element-wise (Softmax: over the last axis); the shape is kept.
/// @tparam Act one of Linear, Relu, Softmax, Sigmoid, Tanh
template <ActivationType Act>
struct Activation : layer_base {
    static constexpr std::string_view class_name = "Activation";
    static constexpr std::string_view base_name = "activation";
    using activation = Act;

    /// The logits, when the activation is Softmax.
    template <class In>
    static constexpr std::size_t scratch_size = detail::logits_size<Act, In::shape::size>;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_ACTIVATION_HPP
