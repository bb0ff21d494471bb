/// @file Defines tpudsl::Attention (Luong's dot-product attention) and tpudsl::AdditiveAttention
/// (Bahdanau's), Keras' attention layers without projections: a node of a Functional model that reads
/// a query sequence and attends over a value sequence.
#ifndef TPUDSL_LAYERS_DOT_ATTENTION_HPP
#define TPUDSL_LAYERS_DOT_ATTENTION_HPP

#include <tpudsl/core/initializers.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/layers/detail/attention_steps.hpp>
#include <tpudsl/layers/merge.hpp>
#include <tpudsl/layers/multi_head_attention.hpp>

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

namespace detail {
template <bool Additive, bool UseScale, attention_options Options>
struct dot_attention_ops;   // layers/dot_attention_ops.hpp

/// What Attention and AdditiveAttention share: 2 or 3 sequences (query, value, key), the key of the
/// query's features and of the value's length; the output (query length, value features).
template <bool Additive, bool UseScale, attention_options Options>
struct scored_attention : merge_base {
    static constexpr bool additive = Additive, use_scale = UseScale;
    static constexpr attention_options options = Options;
    static constexpr bool position_independent = Options.dropout == 0.0f;
    static constexpr bool row_wise = false;
    using ops = dot_attention_ops<Additive, UseScale, Options>;

    template <class... In>
    [[nodiscard]] static consteval merge_verdict
    merge_check() noexcept
    {
        if constexpr (sizeof...(In) < 2 || sizeof...(In) > 3) {
            return {merge_rule::attention_inputs, sizeof...(In) > 3 ? 3 : 0};
        } else {
            constexpr merge_verdict inputs = attention_input_verdict<In...>();
            if (inputs.rule != merge_rule::ok)
                return inputs;
            using in = attention_inputs<In...>;
            if (in::value::shape::dims[0] != in::key::shape::dims[0])
                return {merge_rule::attention_lengths, sizeof...(In) - 1};
            if (in::query::shape::dims[1] != in::key::shape::dims[1])
                return {merge_rule::attention_features, sizeof...(In) - 1};
            if (!(Options.dropout >= 0.0f && Options.dropout < 1.0f))
                return {merge_rule::attention_config, 0};
            return {};
        }
    }

    template <class Query, class Value, class... Key>
    using merge_output = tensor<Shape<Query::shape::dims[0], Value::shape::dims[1]>>;

    /// Attention's scale is a scalar (Keras' shape ()), kept as (1); AdditiveAttention's one per feature.
    template <class Query, class... Rest>
    using merge_weights = std::conditional_t<
        !UseScale, weight_list<>,
        std::conditional_t<Additive, weight_list<named_weight<"scale", Shape<Query::shape::dims[1]>>>,
                           weight_list<named_weight<"scale", Shape<1>, initializers::Ones>>>>;

    /// Per sample: the probabilities (and, with dropout, those dropped out).
    template <class Query, class Value, class... Key>
    static constexpr std::size_t merge_scratch_size =
        (Options.dropout > 0.0f ? 2 : 1) * Query::shape::dims[0] * Value::shape::dims[0];
};
} // namespace detail

/// `Attention(use_scale=False, score_mode="dot", dropout)` called on `[query, value]` or `[query, value,
/// key]` (Luong's attention): scores q . k (times a learned scalar `scale` when UseScale), a softmax over
/// the value's positions (the later ones masked when `Options.use_causal_mask`), their weighted sum of
/// the values: (query length, value features). The key (the value unless a third source is named) has
/// the query's features and the value's length.
template <bool UseScale = false, attention_options Options = attention_options{}>
struct Attention : detail::scored_attention<false, UseScale, Options> {
    static constexpr std::string_view class_name = "Attention";
    static constexpr std::string_view base_name = "attention";
};

/// `AdditiveAttention(use_scale=True, dropout)` called on `[query, value]` or `[query, value, key]`
/// (Bahdanau's attention): scores sum_j scale_j tanh(q_j + k_j) (scale: one learned weight per feature,
/// glorot_uniform; 1 when not UseScale), then as Attention.
template <bool UseScale = true, attention_options Options = attention_options{}>
struct AdditiveAttention : detail::scored_attention<true, UseScale, Options> {
    static constexpr std::string_view class_name = "AdditiveAttention";
    static constexpr std::string_view base_name = "additive_attention";
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_DOT_ATTENTION_HPP
