/// @file Defines the rules LSTM and GRU share, their messages, and the spec both derive from.
#ifndef TPUDSL_LAYERS_DETAIL_RECURRENT_RULES_HPP
#define TPUDSL_LAYERS_DETAIL_RECURRENT_RULES_HPP

#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/detail/diagnostics.hpp>
#include <tpudsl/layers/layer_base.hpp>

#include <cstddef>
#include <type_traits>

namespace tpudsl::detail {

template <class Gates, bool ReturnSequences>
struct recurrent_ops;   // layers/detail/recurrent_ops.hpp, LSTM's and GRU's ops filled with their gates

/// The rules of a recurrent layer (its `rule`), checked in this order.
enum class recurrent_rule { ok, zero_units, needs_rank2 };

/// The messages of LSTM's rules.
template <recurrent_rule R>
struct lstm_diagnostic {
    static_assert(R != recurrent_rule::zero_units, "tpudsl::LSTM<Units>: requires Units > 0 [TPUDSL_LSTM_ZERO_UNITS]");
    static_assert(R != recurrent_rule::needs_rank2,
                  "tpudsl::LSTM<Units>: requires a (timesteps, features) input; put an Embedding or a Conv1D "
                  "before it, or declare sequences as Input<Shape<T, F>> [TPUDSL_LSTM_NEEDS_RANK2]");
};

/// The messages of GRU's rules.
template <recurrent_rule R>
struct gru_diagnostic {
    static_assert(R != recurrent_rule::zero_units, "tpudsl::GRU<Units>: requires Units > 0 [TPUDSL_GRU_ZERO_UNITS]");
    static_assert(R != recurrent_rule::needs_rank2,
                  "tpudsl::GRU<Units>: requires a (timesteps, features) input; put an Embedding or a Conv1D "
                  "before it, or declare sequences as Input<Shape<T, F>> [TPUDSL_GRU_NEEDS_RANK2]");
};

/// What LSTM and GRU share: a (timesteps, features) input, read step by step from the first, giving
/// the last step's state (Units) or every step's (timesteps, Units) when ReturnSequences.
template <std::size_t Units, bool ReturnSequences>
struct recurrent_spec : layer_base {
    static constexpr bool position_independent = true;
    static constexpr std::size_t units = Units;
    static constexpr bool return_sequences = ReturnSequences;

    using rule = recurrent_rule;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval rule
    check() noexcept
    {
        return units_and_rank_rule(Units, In::shape::rank, 2, rule::needs_rank2);
    }

    template <class In>
    using expects = std::conditional_t<In::shape::rank == 2, typename In::shape, any_shape_of_rank<2>>;

    template <class In>
    using output = tensor<std::conditional_t<ReturnSequences, Shape<In::shape::dims[0], Units>, Shape<Units>>>;
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_DETAIL_RECURRENT_RULES_HPP
