/// @file Defines tpudsl::TimeDistributed, Keras' TimeDistributed wrapper, for a wrapped Dense.
#ifndef TPUDSL_LAYERS_TIME_DISTRIBUTED_HPP
#define TPUDSL_LAYERS_TIME_DISTRIBUTED_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/detail/diagnostics.hpp>
#include <tpudsl/layers/dense.hpp>
#include <tpudsl/layers/layer_base.hpp>
#include <tpudsl/layers/layer_concepts.hpp>

#include <cstddef>
#include <string_view>

namespace tpudsl {

namespace detail {
/// The rules of TimeDistributed, in the order they are checked.
enum class time_distributed_rule { ok, needs_dense, zero_units, needs_rank2 };
template <std::size_t Units, class Act>
struct time_distributed_ops;   // layers/time_distributed_ops.hpp

/// What every TimeDistributed shares: Keras' names and its rules' messages.
struct time_distributed_base : layer_base {
    static constexpr std::string_view class_name = "TimeDistributed";
    static constexpr std::string_view base_name = "time_distributed";

    using rule = time_distributed_rule;

    template <rule R>
    struct diagnostic {
        static_assert(R != rule::needs_dense,
                      "tpudsl::TimeDistributed<Layer>: supports a wrapped tpudsl::Dense<Units, Act> only "
                      "(Keras' TimeDistributed(Dense(...))) [TPUDSL_TIME_DISTRIBUTED_NEEDS_DENSE]");
        static_assert(R != rule::zero_units,
                      "tpudsl::TimeDistributed<Dense<Units>>: requires Units > 0 [TPUDSL_DENSE_ZERO_UNITS]");
        static_assert(R != rule::needs_rank2,
                      "tpudsl::TimeDistributed<Dense<Units>>: requires a rank-2 input (timesteps, features); on a "
                      "rank-1 input use tpudsl::Dense<Units> itself [TPUDSL_TIME_DISTRIBUTED_NEEDS_RANK2]");
    };
};
} // namespace detail

/// `TimeDistributed(layer)`: the wrapped layer applied to every timestep of a (timesteps, ...) input.
/// Only a wrapped Dense is supported (see the specialization); any other layer is refused where the
/// model is declared, with [TPUDSL_TIME_DISTRIBUTED_NEEDS_DENSE].
/// @tparam Layer the wrapped layer
template <class Layer>
struct TimeDistributed : detail::time_distributed_base {
    using ops = detail::unusable_ops;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval rule
    check() noexcept
    {
        return rule::needs_dense;
    }
};

/// `TimeDistributed(Dense(units, activation))` on (timesteps, features): `y[t] = act(x[t] W + b)` at
/// every timestep with the same weights, giving (timesteps, units); a Softmax is over each timestep's
/// units. Weights as the wrapped Dense's: kernel (features, units), bias (units).
/// @tparam Units output width per timestep, > 0
/// @tparam Act   activation fused into the layer, `Linear` by default
template <std::size_t Units, ActivationType Act>
struct TimeDistributed<Dense<Units, Act>> : detail::time_distributed_base {
    using wrapped = Dense<Units, Act>;
    static constexpr std::size_t units = Units;
    using activation = Act;
    using ops = detail::time_distributed_ops<Units, Act>;
    static constexpr bool row_wise = true;
    /// Keras 3 keeps the wrapped layer's weights in a group of their own (`<layer>/layer/vars`),
    /// named as the wrapped Dense is named.
    static constexpr std::string_view wrapped_base_name = wrapped::base_name;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval rule
    check() noexcept
    {
        return detail::units_and_rank_rule(Units, In::shape::rank, 2, rule::needs_rank2);
    }

    /// The input it would accept: (timesteps, features), any of them.
    template <class In>
    using expects = detail::any_shape_of_rank<2>;

    template <class In>
    using output = detail::tensor<Shape<In::shape::dims[0], Units>>;

    template <class In>
    using weights = weight_list<weight<weight_role::kernel, Shape<In::shape::dims[In::shape::rank - 1], Units>>,
                                weight<weight_role::bias, Shape<Units>>>;

    /// The logits of every timestep, when the activation is Softmax.
    template <class In>
    static constexpr std::size_t scratch_size = detail::logits_size<Act, In::shape::dims[0] * Units>;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_TIME_DISTRIBUTED_HPP
