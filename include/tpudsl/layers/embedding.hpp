/// @file Defines tpudsl::Embedding, Keras' lookup table from token ids to vectors.
#ifndef TPUDSL_LAYERS_EMBEDDING_HPP
#define TPUDSL_LAYERS_EMBEDDING_HPP

#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/layers/layer_base.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

namespace detail {
/// The rules of Embedding, in the order they are checked.
enum class embedding_rule { ok, zero_vocab, zero_dim, not_first, needs_integer_input };
template <std::size_t Vocab, std::size_t Dim>
struct embedding_ops;   // layers/embedding_ops.hpp
} // namespace detail

namespace detail {
template <class S, std::size_t Dim>
struct append_dim;
template <std::size_t... D, std::size_t Dim>
struct append_dim<Shape<D...>, Dim> {
    using type = Shape<D..., Dim>;
};
} // namespace detail

/// `Embedding(input_dim, output_dim)`: each integer id in `[0, Vocab)` becomes row `id` of a
/// (Vocab, Dim) table; an input of shape (L) gives (L, Dim). It must come first, on integer input.
/// Weights: embeddings (Vocab, Dim), uniform(-0.05, 0.05).
/// @tparam Vocab number of token ids, > 0
/// @tparam Dim   width of each vector, > 0
template <std::size_t Vocab, std::size_t Dim>
struct Embedding : layer_base {
    static constexpr bool position_independent = true;
    static constexpr std::string_view class_name = "Embedding";
    static constexpr std::string_view base_name = "embedding";
    static constexpr std::size_t input_dim = Vocab;
    static constexpr std::size_t output_dim = Dim;
    using ops = detail::embedding_ops<Vocab, Dim>;
    /// Token ids must lie in [0, Vocab); its gradient is a scatter-add of the ids' rows.
    static constexpr std::size_t input_bound = Vocab;
    static constexpr bool accumulates_gradient = true;

    static constexpr bool reads_integers = true;

    using rule = detail::embedding_rule;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval rule
    check() noexcept
    {
        if (Vocab == 0)
            return rule::zero_vocab;
        if (Dim == 0)
            return rule::zero_dim;
        // Token ids are a model's Input: the first layer of a Sequential, any layer of a graph that
        // reads an integer Input.
        if (Index != 0 && !std::is_integral_v<typename In::value_type>)
            return rule::not_first;
        if (!std::is_integral_v<typename In::value_type>)
            return rule::needs_integer_input;
        return rule::ok;
    }

    template <rule R>
    struct diagnostic {
        static_assert(R != rule::zero_vocab,
                      "tpudsl::Embedding<Vocab, Dim>: requires Vocab > 0 [TPUDSL_EMBEDDING_ZERO_VOCAB]");
        static_assert(R != rule::zero_dim, "tpudsl::Embedding<Vocab, Dim>: requires Dim > 0 [TPUDSL_EMBEDDING_ZERO_DIM]");
        static_assert(R != rule::not_first, "tpudsl::Embedding<Vocab, Dim>: must be the first layer after tpudsl::Input "
                                            "(in a Functional: a node that reads an integer Input) "
                                            "[TPUDSL_EMBEDDING_NOT_FIRST]");
        static_assert(R != rule::needs_integer_input,
                      "tpudsl::Embedding<Vocab, Dim>: requires integer token ids; declare the input as "
                      "tpudsl::Input<Shape<...>, std::int32_t> [TPUDSL_EMBEDDING_NEEDS_INTEGER_INPUT]");
    };

    template <class In>
    using output = detail::tensor<typename detail::append_dim<typename In::shape, Dim>::type>;

    template <class In>
    using weights = weight_list<weight<weight_role::embeddings, Shape<Vocab, Dim>>>;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_EMBEDDING_HPP
