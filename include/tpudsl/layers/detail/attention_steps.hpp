/// @file What the attention layers (MultiHeadAttention, Attention, AdditiveAttention) share: the check
/// that their inputs are float sequences, the masked softmax of a row of scores and its backward, and
/// the dropout masks on the probabilities.
#ifndef TPUDSL_LAYERS_DETAIL_ATTENTION_STEPS_HPP
#define TPUDSL_LAYERS_DETAIL_ATTENTION_STEPS_HPP

#include <tpudsl/detail/random.hpp>
#include <tpudsl/detail/simd.hpp>
#include <tpudsl/layers/merge.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
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

/// Turns the scores p[0, visible) of a row of S into their softmax and sets p[visible, S) to 0: the
/// masked positions, as Keras' -1e9 before its softmax leaves them. In SIMD lanes: the maximum, the
/// exponentials and their sum in lanes (in an order fixed by `visible`), then one scale.
inline void
masked_softmax(float* p, std::size_t visible, std::size_t S) noexcept
{
    using simd::vfloat;
    constexpr std::size_t W = vfloat::size;
    const std::size_t whole = visible / W * W;
    float top = -std::numeric_limits<float>::infinity();
    if (whole > 0) {
        vfloat m = vfloat::load(p);
        for (std::size_t s = W; s < whole; s += W)
            m = max(m, vfloat::load(p + s));
        alignas(64) float lanes[W];
        m.store(lanes);
        top = *std::max_element(lanes, lanes + W);
    }
    for (std::size_t s = whole; s < visible; ++s)
        top = std::max(top, p[s]);
    const vfloat shift = vfloat::broadcast(top);
    vfloat sums = vfloat::broadcast(0.0f);
    for (std::size_t s = 0; s < whole; s += W) {
        const vfloat e = exp(vfloat::load(p + s) - shift);
        e.store(p + s);
        sums = sums + e;
    }
    if (whole < visible) {
        const vfloat e = exp(vfloat::load_n(p + whole, visible - whole) - shift);
        e.store_n(p + whole, visible - whole);
        sums = sums + vfloat::load_n(p + whole, visible - whole);
    }
    const vfloat inv = vfloat::broadcast(1.0f / reduce_add(sums));
    for (std::size_t s = 0; s < whole; s += W)
        (vfloat::load(p + s) * inv).store(p + s);
    if (whole < visible)
        (vfloat::load_n(p + whole, visible - whole) * inv).store_n(p + whole, visible - whole);
    std::fill(p + visible, p + S, 0.0f);
}

/// The softmax's backward over a row of S: ds = p (ds - sum_s p_s ds_s), ds the gradient of the
/// probabilities p on entry, of the scores on return; the sum in SIMD lanes.
inline void
softmax_backward(const float* p, float* ds, std::size_t S) noexcept
{
    using simd::vfloat;
    constexpr std::size_t W = vfloat::size;
    const std::size_t whole = S / W * W;
    vfloat dots = vfloat::broadcast(0.0f);
    for (std::size_t s = 0; s < whole; s += W)
        dots = fma(vfloat::load(p + s), vfloat::load(ds + s), dots);
    if (whole < S)
        dots = fma(vfloat::load_n(p + whole, S - whole), vfloat::load_n(ds + whole, S - whole), dots);
    const vfloat mean = vfloat::broadcast(reduce_add(dots));
    for (std::size_t s = 0; s < whole; s += W)
        (vfloat::load(p + s) * (vfloat::load(ds + s) - mean)).store(ds + s);
    if (whole < S)
        (vfloat::load_n(p + whole, S - whole) * (vfloat::load_n(ds + whole, S - whole) - mean)).store_n(ds + whole, S - whole);
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
