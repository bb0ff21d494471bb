/// @file What the attention layers (MultiHeadAttention, Attention, AdditiveAttention) share: the check
/// that their inputs are float sequences, the masked softmax of a row of scores, and the dropout masks
/// on the probabilities.
#ifndef TPUDSL_LAYERS_DETAIL_ATTENTION_STEPS_HPP
#define TPUDSL_LAYERS_DETAIL_ATTENTION_STEPS_HPP

#include <tpudsl/detail/random.hpp>
#include <tpudsl/layers/merge.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace tpudsl::detail {

/// The first of an attention's inputs that is not a float sequence (timesteps, features): the rule it
/// breaks and its place; ok when none.
template <class... In>
[[nodiscard]] consteval merge_verdict
attention_input_verdict() noexcept
{
    constexpr std::array<bool, sizeof...(In)> floats{std::is_floating_point_v<typename In::value_type>...};
    constexpr std::array<std::size_t, sizeof...(In)> ranks{In::shape::rank...};
    for (std::size_t k = 0; k < floats.size(); ++k)
        if (!floats[k])
            return {merge_rule::needs_float_input, k};
    for (std::size_t k = 0; k < ranks.size(); ++k)
        if (ranks[k] != 2)
            return {merge_rule::attention_rank, k};
    return {};
}

/// Turns the scores p[0, visible) of a row of S (their maximum `top`) into their softmax, summed in
/// double, and sets p[visible, S) to 0: the masked positions, as Keras' -1e9 before its softmax leaves them.
inline void
masked_softmax(float* p, float top, std::size_t visible, std::size_t S) noexcept
{
    double sum = 0.0;
    for (std::size_t s = 0; s < visible; ++s) {
        p[s] = std::exp(p[s] - top);
        sum += p[s];
    }
    const auto inv = static_cast<float>(1.0 / sum);
    for (std::size_t s = 0; s < visible; ++s)
        p[s] *= inv;
    std::fill(p + visible, p + S, 0.0f);
}

/// Dropout of rate Rate on attention probabilities, its masks drawn as Dropout's: element e of sample s
/// kept when (hash >> 40) >= ceil(Rate 2^24), the hash a function of the seed, the layer's index, the
/// step and the sample's place in the global batch, so every strategy draws the same.
template <float Rate>
struct attention_dropout {
    static constexpr std::uint64_t threshold = [] {
        constexpr float scaled = Rate * 16777216.0f;
        constexpr auto whole = static_cast<std::uint64_t>(scaled);
        return whole + (static_cast<float>(whole) < scaled ? 1 : 0);
    }();

    /// The hash of sample s of the call (layer B).
    template <class B>
    [[nodiscard]] static std::uint64_t
    sample_hash(const step_context& ctx, std::size_t s) noexcept
    {
        const std::uint64_t layer = ctx.seed ^ (0xd1b54a32d192ed03ULL * (B::index + 1));
        return mix64(mix64(mix64(layer) ^ ctx.step) ^ (ctx.first_sample + s));
    }

    /// kept[0, S) = p times the mask of a sample's elements [first, first + S), scaled by 1 / (1 - Rate);
    /// p itself when not `drop` (outside training).
    static void
    keep(const float* p, std::uint64_t hash, std::size_t first, std::size_t S, bool drop, float* kept) noexcept
    {
        if (!drop) {
            std::copy_n(p, S, kept);
            return;
        }
        for (std::size_t s = 0; s < S; ++s)
            kept[s] = (mix64(hash ^ (first + s)) >> 40) >= threshold ? p[s] / (1.0f - Rate) : 0.0f;
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_DETAIL_ATTENTION_STEPS_HPP
