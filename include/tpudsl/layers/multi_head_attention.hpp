/// @file Defines tpudsl::MultiHeadAttention, Keras' multi-head scaled dot-product attention: a layer of
/// a Functional model that reads a query sequence and attends over a value sequence (itself, for
/// self-attention).
#ifndef TPUDSL_LAYERS_MULTI_HEAD_ATTENTION_HPP
#define TPUDSL_LAYERS_MULTI_HEAD_ATTENTION_HPP

#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/detail/type_list.hpp>
#include <tpudsl/layers/detail/attention_steps.hpp>
#include <tpudsl/layers/merge.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

/// What Keras gives MultiHeadAttention as arguments (`dropout`) or at its call (`use_causal_mask`).
struct attention_options {
    /// Dropout on the attention probabilities, in training (Keras' `dropout`).
    float dropout = 0.0f;
    /// Query position t attends to value positions s <= t only (Keras' `use_causal_mask=True`).
    bool use_causal_mask = false;
};

namespace detail {
template <std::size_t Heads, std::size_t KeyDim, std::size_t ValueDim, attention_options Options>
struct multi_head_attention_ops;   // layers/multi_head_attention_ops.hpp

/// The tensors a MultiHeadAttention reads: the query, the value (the query when not given) and the key
/// (the value when not given).
template <class Query, class... Rest>
struct attention_inputs {
    using query = Query;
    using value = type_at_t<0, type_list<Rest..., Query>>;
    using key = type_at_t<1, type_list<Rest..., value, value>>;
};
} // namespace detail

/// `MultiHeadAttention(num_heads, key_dim, value_dim, dropout)` called on (query, value, key) as Keras
/// calls it: each input projected per head (query and key to KeyDim, value to ValueDim), scores
/// q . k / sqrt(KeyDim), a softmax over the value's positions (the later ones masked when
/// `Options.use_causal_mask`), the heads' weighted sums of the values projected back to the query's
/// features. A node names 1 to 3 sources: the query (self-attention when it is the only one), the
/// value (it is also the key unless a third is named) and the key; each a sequence (timesteps,
/// features), the value and the key of one length. The output has the query's shape.
/// Weights, Keras' order and layouts: query kernel (query features, Heads, KeyDim) and bias (Heads,
/// KeyDim), key kernel and bias likewise, value kernel (value features, Heads, ValueDim) and bias
/// (Heads, ValueDim), output kernel (Heads, ValueDim, query features) and bias (query features).
/// @tparam Heads    the number of heads (Keras' num_heads)
/// @tparam KeyDim   each head's size for the query and the key
/// @tparam ValueDim each head's size for the value
/// @tparam Options  dropout on the probabilities and the causal mask (attention_options)
template <std::size_t Heads, std::size_t KeyDim, std::size_t ValueDim = KeyDim,
          attention_options Options = attention_options{}>
struct MultiHeadAttention : detail::merge_base {
    static constexpr std::string_view class_name = "MultiHeadAttention";
    static constexpr std::string_view base_name = "multi_head_attention";
    static constexpr std::size_t heads = Heads, key_dim = KeyDim, value_dim = ValueDim;
    static constexpr attention_options options = Options;
    /// Dropout masks are drawn per layer (its index), so two attentions of one shape bind apart.
    static constexpr bool position_independent = Options.dropout == 0.0f;
    static constexpr bool row_wise = false;
    using ops = detail::multi_head_attention_ops<Heads, KeyDim, ValueDim, Options>;
    /// Keras keeps the weights in four sublayers: named as the weights' prefixes in Keras 2 files
    /// ("query/kernel:0"), as these groups in Keras 3's ("query_dense/vars/0").
    static constexpr std::array<std::array<std::string_view, 2>, 4> keras_sublayers{
        {{"query", "query_dense"}, {"key", "key_dense"}, {"value", "value_dense"}, {"attention_output", "output_dense"}}};

    template <class... In>
    [[nodiscard]] static consteval detail::merge_verdict
    merge_check() noexcept
    {
        using detail::merge_rule;
        if constexpr (sizeof...(In) < 1 || sizeof...(In) > 3) {
            return {merge_rule::attention_inputs, sizeof...(In) > 3 ? 3 : 0};
        } else {
            constexpr detail::merge_verdict inputs = detail::attention_input_verdict<In...>();
            if (inputs.rule != merge_rule::ok)
                return inputs;
            if constexpr (sizeof...(In) == 3) {
                using in = detail::attention_inputs<In...>;
                if (in::value::shape::dims[0] != in::key::shape::dims[0])
                    return {merge_rule::attention_lengths, 2};
            }
            if (Heads == 0 || KeyDim == 0 || ValueDim == 0 || !(Options.dropout >= 0.0f && Options.dropout < 1.0f))
                return {merge_rule::attention_config, 0};
            return {};
        }
    }

    template <class Query, class... Rest>
    using merge_output = detail::tensor<typename Query::shape>;

    template <class... In>
    using merge_weights = typename decltype([] {
        using in = detail::attention_inputs<In...>;
        constexpr std::size_t dq = in::query::shape::dims[1], dk = in::key::shape::dims[1],
                              dv = in::value::shape::dims[1];
        using zeros = initializers::Zeros;
        return std::type_identity<weight_list<
            named_weight<"query/kernel", Shape<dq, Heads, KeyDim>>, named_weight<"query/bias", Shape<Heads, KeyDim>, zeros>,
            named_weight<"key/kernel", Shape<dk, Heads, KeyDim>>, named_weight<"key/bias", Shape<Heads, KeyDim>, zeros>,
            named_weight<"value/kernel", Shape<dv, Heads, ValueDim>>,
            named_weight<"value/bias", Shape<Heads, ValueDim>, zeros>,
            named_weight<"attention_output/kernel", Shape<Heads, ValueDim, dq>>,
            named_weight<"attention_output/bias", Shape<dq>, zeros>>>{};
    }())::type;

    /// Per sample, from forward to backward: the projected (and scaled) query, key and value, the
    /// heads' outputs and the dropout hash; then room for backward's gradients of the projections and an
    /// input's gradient (layers/multi_head_attention_ops.hpp's parts_of; one head's workspace is in the
    /// thread's scratch).
    template <class... In>
    static constexpr std::size_t merge_scratch_size = [] {
        using in = detail::attention_inputs<In...>;
        constexpr std::size_t t = in::query::shape::dims[0], s = in::value::shape::dims[0];
        constexpr std::size_t hk = Heads * KeyDim, hv = Heads * ValueDim;
        constexpr std::size_t widest = std::max({in::query::shape::size, in::key::shape::size, in::value::shape::size});
        constexpr std::size_t kept = t * hk + s * hk + s * hv + t * hv + 3;
        return kept + t * hk + s * hk + s * hv + widest;
    }();
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_MULTI_HEAD_ATTENTION_HPP
