/// @file Defines tpudsl::GRU, Keras' gated recurrent unit (reset_after=True, Keras 3's default).
#ifndef TPUDSL_LAYERS_GRU_HPP
#define TPUDSL_LAYERS_GRU_HPP

#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/layers/detail/recurrent_rules.hpp>

#include <cstddef>
#include <string_view>

namespace tpudsl {

namespace detail {
template <std::size_t Units>
struct gru_gates;   // layers/gru_ops.hpp
} // namespace detail

/// `GRU(units, return_sequences)` on (timesteps, features), Keras' defaults: tanh activation, sigmoid
/// recurrent activation, zero initial state, reset_after=True:
///   z = σ(x W_z + b_z + h R_z + rb_z),  r = σ(x W_r + b_r + h R_r + rb_r),
///   hh = tanh(x W_h + b_h + r ⊙ (h R_h + rb_h)),  h' = z ⊙ h + (1 − z) ⊙ hh.
/// Gives (Units), the last step's state, or (timesteps, Units) when ReturnSequences.
/// Weights: kernel (features, 3 Units), recurrent_kernel (Units, 3 Units), bias (2, 3 Units) (row 0
/// the input's, row 1 the recurrent one's), the gates' blocks in Keras' order z, r, h;
/// glorot_uniform, orthogonal, zeros.
/// @tparam Units           the state's width, > 0
/// @tparam ReturnSequences every step's state (true) or the last one's (false, Keras' default)
template <std::size_t Units, bool ReturnSequences = false>
struct GRU : detail::recurrent_spec<Units, ReturnSequences> {
    static constexpr std::string_view class_name = "GRU";
    static constexpr std::string_view base_name = "gru";
    static constexpr std::string_view keras_cell = "gru_cell";   // its weights are its cell's in Keras' files
    using ops = detail::recurrent_ops<detail::gru_gates<Units>, ReturnSequences>;

    template <detail::recurrent_rule R>
    using diagnostic = detail::gru_diagnostic<R>;

    template <class In>
    using weights = weight_list<weight<weight_role::kernel, Shape<In::shape::dims[1], 3 * Units>>,
                                weight<weight_role::recurrent_kernel, Shape<Units, 3 * Units>>,
                                weight<weight_role::bias, Shape<2, 3 * Units>>>;

    /// Kept from forward to backward, time-major: the input (timesteps, features), the gates after
    /// their activations and the recurrent products (timesteps, 3 Units) each, the hidden states
    /// (timesteps, Units); then backward's running gradient of the state (Units).
    template <class In>
    static constexpr std::size_t scratch_size = In::shape::dims[0] * (In::shape::dims[1] + 7 * Units) + Units;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_GRU_HPP
