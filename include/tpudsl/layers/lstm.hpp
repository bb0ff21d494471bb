/// @file Defines tpudsl::LSTM, Keras' long short-term memory layer.
#ifndef TPUDSL_LAYERS_LSTM_HPP
#define TPUDSL_LAYERS_LSTM_HPP

#include <tpudsl/core/initializers.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/layers/detail/recurrent_rules.hpp>

#include <cstddef>
#include <string_view>

namespace tpudsl {

namespace detail {
template <std::size_t Units>
struct lstm_gates;   // layers/lstm_ops.hpp
} // namespace detail

/// `LSTM(units, return_sequences)` on (timesteps, features), Keras' defaults: tanh activation, sigmoid
/// recurrent activation, zero initial state, unit_forget_bias. Gives (Units), the last step's state,
/// or (timesteps, Units) when ReturnSequences.
/// Weights: kernel (features, 4 Units), recurrent_kernel (Units, 4 Units), bias (4 Units), the gates'
/// blocks in Keras' order i, f, c, o; glorot_uniform, orthogonal, zeros with ones for the forget gate.
/// @tparam Units           the state's width, > 0
/// @tparam ReturnSequences every step's state (true) or the last one's (false, Keras' default)
template <std::size_t Units, bool ReturnSequences = false>
struct LSTM : detail::recurrent_spec<Units, ReturnSequences> {
    static constexpr std::string_view class_name = "LSTM";
    static constexpr std::string_view base_name = "lstm";
    static constexpr std::string_view keras_cell = "lstm_cell";   // its weights are its cell's in Keras' files
    using ops = detail::recurrent_ops<detail::lstm_gates<Units>, ReturnSequences>;

    template <detail::recurrent_rule R>
    using diagnostic = detail::lstm_diagnostic<R>;

    template <class In>
    using weights = weight_list<weight<weight_role::kernel, Shape<In::shape::dims[1], 4 * Units>>,
                                weight<weight_role::recurrent_kernel, Shape<Units, 4 * Units>>,
                                weight<weight_role::bias, Shape<4 * Units>, initializers::UnitForgetBias>>;

    /// Kept from forward to backward, time-major: the input (timesteps, features), the gates after
    /// their activations (timesteps, 4 Units), the cell and hidden states (timesteps, Units) each;
    /// then backward's running gradients of the state and the cell (Units) each.
    template <class In>
    static constexpr std::size_t scratch_size =
        In::shape::dims[0] * (In::shape::dims[1] + 6 * Units) + 2 * Units;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_LSTM_HPP
