/// @file Defines tpudsl::PositionEmbedding, keras-hub's learned position embedding.
#ifndef TPUDSL_LAYERS_POSITION_EMBEDDING_HPP
#define TPUDSL_LAYERS_POSITION_EMBEDDING_HPP

#include <tpudsl/core/initializers.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/detail/diagnostics.hpp>
#include <tpudsl/layers/layer_base.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

namespace detail {
/// The rules of PositionEmbedding, in the order they are checked.
enum class position_embedding_rule { ok, zero_length, needs_rank2, too_long };
template <std::size_t SequenceLength>
struct position_embedding_ops;   // layers/position_embedding_ops.hpp
} // namespace detail

/// keras-hub's `PositionEmbedding(sequence_length)`: on a sequence (timesteps, features), the first
/// `timesteps` rows of a learned (SequenceLength, features) table, whatever the input's values (its
/// shape only is read). A token-and-position embedding is an Embedding, this on its output, and an
/// Add of the two. Weights: embeddings (SequenceLength, features), glorot_uniform as keras-hub's.
/// @tparam SequenceLength the longest sequence it embeds, > 0
template <std::size_t SequenceLength>
struct PositionEmbedding : layer_base {
    static constexpr bool position_independent = true;
    static constexpr bool row_wise = true;
    static constexpr std::string_view class_name = "PositionEmbedding";
    static constexpr std::string_view base_name = "position_embedding";
    static constexpr std::size_t sequence_length = SequenceLength;
    using ops = detail::position_embedding_ops<SequenceLength>;

    using rule = detail::position_embedding_rule;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval rule
    check() noexcept
    {
        if (SequenceLength == 0)
            return rule::zero_length;
        if (In::shape::rank != 2)
            return rule::needs_rank2;
        if (In::shape::dims[0] > SequenceLength)
            return rule::too_long;
        return rule::ok;
    }

    template <rule R>
    struct diagnostic {
        static_assert(R != rule::zero_length, "tpudsl::PositionEmbedding<SequenceLength>: requires SequenceLength > 0 "
                                              "[TPUDSL_POSITION_EMBEDDING_LENGTH]");
        static_assert(R != rule::needs_rank2, "tpudsl::PositionEmbedding<SequenceLength>: requires a sequence "
                                              "(timesteps, features), an Embedding's output [TPUDSL_POSITION_EMBEDDING_RANK]");
        static_assert(R != rule::too_long, "tpudsl::PositionEmbedding<SequenceLength>: the sequence is longer than "
                                           "SequenceLength [TPUDSL_POSITION_EMBEDDING_LENGTH]");
    };

    template <class In>
    using expects = std::conditional_t<In::shape::rank == 2, typename In::shape, detail::any_shape_of_rank<2>>;

    template <class In>
    using weights = weight_list<weight<weight_role::embeddings, Shape<SequenceLength, In::shape::dims[In::shape::rank - 1]>,
                                       initializers::GlorotUniform>>;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_POSITION_EMBEDDING_HPP
