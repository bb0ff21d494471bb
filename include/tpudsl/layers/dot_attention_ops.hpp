/// @file Defines the forward and backward pass of tpudsl::Attention and tpudsl::AdditiveAttention.
#ifndef TPUDSL_LAYERS_DOT_ATTENTION_OPS_HPP
#define TPUDSL_LAYERS_DOT_ATTENTION_OPS_HPP

#include <tpudsl/layers/detail/attention_steps.hpp>
#include <tpudsl/layers/dot_attention.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace tpudsl::detail {

/// Attention's and AdditiveAttention's forward and backward (layers/dot_attention.hpp), per sample and
/// query position over the value's positions. The layer's scratch holds the probabilities (n, Tq, Tv)
/// and, with dropout, those kept.
template <bool Additive, bool UseScale, attention_options Options>
struct dot_attention_ops {
    static constexpr bool dropout = Options.dropout > 0.0f;
    using masks = attention_dropout<Options.dropout>;

    /// T query positions, S value positions, D query (and key) features, DV value features, and which
    /// input is the key.
    template <class B>
    struct dims {
        static constexpr std::size_t T = B::first_input::shape::dims[0], D = B::first_input::shape::dims[1];
        static constexpr std::size_t key_input = B::input_count > 2 ? 2 : 1;
        static constexpr std::size_t S = type_at_t<1, typename B::inputs>::shape::dims[0];
        static constexpr std::size_t DV = type_at_t<1, typename B::inputs>::shape::dims[1];
    };

    template <class B>
    static void
    forward(const float* params, const float* const* xs, float* y, float* scratch, std::size_t n,
            const step_context& ctx) noexcept
    {
        using d = dims<B>;
        const bool drop = dropout && ctx.training;
        for (std::size_t b = 0; b < n; ++b) {
            const float* q = xs[0] + b * d::T * d::D;
            const float* k = xs[d::key_input] + b * d::S * d::D;
            const float* v = xs[1] + b * d::S * d::DV;
            const std::uint64_t hash = drop ? masks::template sample_hash<B>(ctx, b) : 0;
            for (std::size_t t = 0; t < d::T; ++t) {
                float* p = scratch + (b * d::T + t) * d::S;
                probabilities<B>(params, q + t * d::D, k, t, p);
                const float* used = p;
                if constexpr (dropout) {
                    float* kept = scratch + n * d::T * d::S + (b * d::T + t) * d::S;
                    masks::keep(p, hash, t * d::S, d::S, drop, kept);
                    used = kept;
                }
                float* out = y + (b * d::T + t) * d::DV;
                std::fill_n(out, d::DV, 0.0f);
                for (std::size_t s = 0; s < d::S; ++s)
                    for (std::size_t j = 0; j < d::DV; ++j)
                        out[j] += used[s] * v[s * d::DV + j];
            }
        }
    }

    template <class B>
    static void
    backward(const float* params, const float* const* xs, const float*, float* dy, float* const* dxs, float* grads,
             float* scratch, std::size_t n) noexcept
    {
        using d = dims<B>;
        // Every input gradient is a sum (the key may be the value): cleared, then added to.
        for (std::size_t i = 0; i < B::input_count; ++i)
            if (dxs[i])
                std::fill_n(dxs[i], n * B::input_sizes[i], 0.0f);
        double dscale[UseScale ? (Additive ? d::D : 1) : 1] = {};
        float dp[d::S];
        for (std::size_t b = 0; b < n; ++b) {
            const float* q = xs[0] + b * d::T * d::D;
            const float* k = xs[d::key_input] + b * d::S * d::D;
            const float* v = xs[1] + b * d::S * d::DV;
            float* dq = dxs[0] ? dxs[0] + b * d::T * d::D : nullptr;
            float* dk = dxs[d::key_input] ? dxs[d::key_input] + b * d::S * d::D : nullptr;
            float* dv = dxs[1] ? dxs[1] + b * d::S * d::DV : nullptr;
            for (std::size_t t = 0; t < d::T; ++t) {
                const float* p = scratch + (b * d::T + t) * d::S;
                const float* used = dropout ? scratch + n * d::T * d::S + (b * d::T + t) * d::S : p;
                const float* go = dy + (b * d::T + t) * d::DV;
                double p_dot = 0.0;
                for (std::size_t s = 0; s < d::S; ++s) {
                    float sum = 0.0f;
                    for (std::size_t j = 0; j < d::DV; ++j) {
                        sum += go[j] * v[s * d::DV + j];
                        if (dv)
                            dv[s * d::DV + j] += used[s] * go[j];
                    }
                    if constexpr (dropout)
                        sum = used[s] != 0.0f ? sum / (1.0f - Options.dropout) : 0.0f;
                    dp[s] = sum;
                    p_dot += static_cast<double>(p[s]) * sum;
                }
                const auto mean = static_cast<float>(p_dot);
                const float* qt = q + t * d::D;
                for (std::size_t s = 0; s < d::S; ++s) {
                    const float ds = p[s] * (dp[s] - mean);
                    if (ds == 0.0f)
                        continue;
                    const float* ks = k + s * d::D;
                    if constexpr (Additive) {
                        // score = sum_j scale_j tanh(q_j + k_j)
                        for (std::size_t j = 0; j < d::D; ++j) {
                            const float th = std::tanh(qt[j] + ks[j]);
                            const float scale = scale_of<B>(params, j);
                            const float g = ds * scale * (1.0f - th * th);
                            if (dq)
                                dq[t * d::D + j] += g;
                            if (dk)
                                dk[s * d::D + j] += g;
                            if constexpr (UseScale)
                                dscale[j] += static_cast<double>(ds) * th;
                        }
                    } else {
                        // score = scale q . k
                        const float scale = scale_of<B>(params, 0);
                        if constexpr (UseScale) {
                            float dot = 0.0f;
                            for (std::size_t j = 0; j < d::D; ++j)
                                dot += qt[j] * ks[j];
                            dscale[0] += static_cast<double>(ds) * dot;
                        }
                        for (std::size_t j = 0; j < d::D; ++j) {
                            if (dq)
                                dq[t * d::D + j] += ds * scale * ks[j];
                            if (dk)
                                dk[s * d::D + j] += ds * scale * qt[j];
                        }
                    }
                }
            }
        }
        if constexpr (UseScale)
            for (std::size_t j = 0; j < std::size(dscale); ++j)
                grads[B::template weight<0>::offset + j] = static_cast<float>(dscale[j]);
    }

private:
    /// The learned scale's element j (Attention's one, AdditiveAttention's per feature), 1 without one.
    template <class B>
    [[nodiscard]] static float
    scale_of(const float* params, std::size_t j) noexcept
    {
        if constexpr (UseScale)
            return params[B::template weight<0>::offset + j];
        else
            return 1.0f;
    }

    /// p (S) = the softmax of query position t's scores over the key's positions (later ones masked
    /// when causal).
    template <class B>
    static void
    probabilities(const float* params, const float* q, const float* k, std::size_t t, float* p) noexcept
    {
        using d = dims<B>;
        const std::size_t visible = Options.use_causal_mask ? std::min(t + 1, d::S) : d::S;
        for (std::size_t s = 0; s < visible; ++s) {
            const float* ks = k + s * d::D;
            float score = 0.0f;
            if constexpr (Additive) {
                for (std::size_t j = 0; j < d::D; ++j)
                    score += scale_of<B>(params, j) * std::tanh(q[j] + ks[j]);
            } else {
                for (std::size_t j = 0; j < d::D; ++j)
                    score += q[j] * ks[j];
                score *= scale_of<B>(params, 0);
            }
            p[s] = score;
        }
        masked_softmax(p, visible, d::S);
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_DOT_ATTENTION_OPS_HPP
