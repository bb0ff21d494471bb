/// @file Defines tpudsl::Activation, Keras' stand-alone activation layer.
#ifndef TPUDSL_LAYERS_ACTIVATION_HPP
#define TPUDSL_LAYERS_ACTIVATION_HPP

#include <tpudsl/core/activations.hpp>
#include <tpudsl/core/weights.hpp>
#include <tpudsl/detail/diagnostics.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

/// `Activation(f)`: applies `Act` element-wise (Softmax: over the last axis); the shape is kept.
/// @tparam Act one of Linear, Relu, Softmax, Sigmoid, Tanh
template <ActivationType Act>
struct Activation {
    static constexpr std::string_view class_name = "Activation";
    static constexpr std::string_view base_name = "activation";
    using activation = Act;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval detail::rule
    check() noexcept
    {
        if (!std::is_floating_point_v<typename In::value_type>)
            return detail::rule::needs_float_input;
        return detail::rule::ok;
    }

    template <class In>
    using expects = typename In::shape;

    template <class In>
    using output = detail::tensor<typename In::shape>;

    template <class In>
    using weights = weight_list<>;

    template <class In>
    static constexpr std::size_t scratch_size = 0;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_ACTIVATION_HPP
