/// @file Defines the forward and backward pass of tpudsl::MultiHeadAttention on a batch.
#ifndef TPUDSL_LAYERS_MULTI_HEAD_ATTENTION_OPS_HPP
#define TPUDSL_LAYERS_MULTI_HEAD_ATTENTION_OPS_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/layers/detail/attention_steps.hpp>
#include <tpudsl/layers/multi_head_attention.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace tpudsl::detail {

/// MultiHeadAttention's forward and backward (see layers/multi_head_attention.hpp). The projections
/// and the output are GEMMs over every timestep of the micro-batch; the attention itself runs per
/// sample, head and query position over the value's positions. The layer's scratch holds, over the
/// micro-batch, the scaled query, the key and value projections (n, steps, heads, dim), the
/// probabilities (n, heads, T, S) (and those kept by dropout), the heads' outputs (n, T, heads,
/// ValueDim), then backward's gradients of the projections and an input's gradient.
template <std::size_t Heads, std::size_t KeyDim, std::size_t ValueDim, attention_options Options>
struct multi_head_attention_ops {
    static constexpr std::size_t HK = Heads * KeyDim, HV = Heads * ValueDim;
    static constexpr bool dropout = Options.dropout > 0.0f;
    using masks = attention_dropout<Options.dropout>;

    /// The shapes of layer B: T query positions of DQ features, S value (and key) positions of DV
    /// (DK) features, and which of the layer's inputs is the value and the key.
    template <class B>
    struct dims {
        static constexpr std::size_t T = B::input_sizes[0] / B::first_input::shape::dims[1];
        static constexpr std::size_t DQ = B::first_input::shape::dims[1];
        static constexpr std::size_t value_input = B::input_count > 1 ? 1 : 0;
        static constexpr std::size_t key_input = B::input_count > 2 ? 2 : value_input;
        static constexpr std::size_t S = B::input_sizes[value_input] /
                                         type_at_t<value_input, typename B::inputs>::shape::dims[1];
        static constexpr std::size_t DV = type_at_t<value_input, typename B::inputs>::shape::dims[1];
        static constexpr std::size_t DK = type_at_t<key_input, typename B::inputs>::shape::dims[1];
        static constexpr std::size_t widest = std::max({T * DQ, S * DV, S * DK});
    };

    /// Where each part of the scratch begins, for n samples.
    struct parts {
        float *q, *k, *v, *p, *kept, *o, *dq, *dk, *dv, *dx;
    };
    template <class B>
    [[nodiscard]] static parts
    parts_of(float* scratch, std::size_t n) noexcept
    {
        using d = dims<B>;
        parts r{};
        r.q = scratch;
        r.k = r.q + n * d::T * HK;
        r.v = r.k + n * d::S * HK;
        r.p = r.v + n * d::S * HV;
        r.kept = r.p + (dropout ? n * Heads * d::T * d::S : 0);
        r.o = r.kept + n * Heads * d::T * d::S;
        r.dq = r.o + n * d::T * HV;
        r.dk = r.dq + n * d::T * HK;
        r.dv = r.dk + n * d::S * HK;
        r.dx = r.dv + n * d::S * HV;
        return r;
    }

    /// Keras' 1 / sqrt(key_dim), rounded to float as Keras casts it.
    [[nodiscard]] static float
    query_scale() noexcept
    {
        return static_cast<float>(1.0 / std::sqrt(static_cast<double>(KeyDim)));
    }

    /// Weight J of layer B (query kernel, query bias, key..., value..., output kernel, output bias) in
    /// `base` (the parameters or the gradients).
    template <class B, std::size_t J, class F>
    [[nodiscard]] static F*
    at(F* base) noexcept
    {
        return base + B::template weight<J>::offset;
    }

    /// What the projections' GEMMs ask of a thread's kernel scratch, over the timesteps of a
    /// micro-batch: forward's four, backward's weight gradients and input gradients.
    template <class B>
    static constexpr kernels::scratch_sizes
    scratch(const kernels::scratch_rows& rows) noexcept
    {
        using d = dims<B>;
        const std::size_t t = rows.micro_batch * d::T, s = rows.micro_batch * d::S;
        return kernels::gemm_nn_scratch<d::DQ, HK>(t) | kernels::gemm_nn_scratch<d::DK, HK>(s) |
               kernels::gemm_nn_scratch<d::DV, HV>(s) | kernels::gemm_nn_scratch<HV, d::DQ>(t) |
               kernels::gemm_tn_scratch<HV, d::DQ>() | kernels::gemm_tn_scratch<d::DQ, HK>() |
               kernels::gemm_tn_scratch<d::DK, HK>() | kernels::gemm_tn_scratch<d::DV, HV>() |
               kernels::gemm_nt_scratch<d::DQ, HV>(t, false) | kernels::gemm_nt_scratch<HK, d::DQ>(t, false) |
               kernels::gemm_nt_scratch<HK, d::DK>(s, false) | kernels::gemm_nt_scratch<HV, d::DV>(s, false);
    }

    template <class B>
    static void
    forward(const float* params, const float* const* xs, float* y, float* scratch, std::size_t n,
            const step_context& ctx) noexcept
    {
        using d = dims<B>;
        constexpr std::size_t T = d::T, S = d::S;
        const parts r = parts_of<B>(scratch, n);
        kernels::gemm_nn_bias<d::DQ, HK, Linear>(n * T, xs[0], at<B, 0>(params), at<B, 1>(params), r.q);
        const float scale = query_scale();
        for (std::size_t i = 0; i < n * T * HK; ++i)
            r.q[i] *= scale;
        kernels::gemm_nn_bias<d::DK, HK, Linear>(n * S, xs[d::key_input], at<B, 2>(params),
                                                 at<B, 3>(params), r.k);
        kernels::gemm_nn_bias<d::DV, HV, Linear>(n * S, xs[d::value_input], at<B, 4>(params),
                                                 at<B, 5>(params), r.v);
        const bool drop = dropout && ctx.training;
        for (std::size_t b = 0; b < n; ++b) {
            const std::uint64_t hash = drop ? masks::template sample_hash<B>(ctx, b) : 0;
            for (std::size_t h = 0; h < Heads; ++h)
                for (std::size_t t = 0; t < T; ++t) {
                    const std::size_t row = (b * Heads + h) * T + t;
                    float* p = r.p + row * S;
                    softmax_scores<B>(r.q + (b * T + t) * HK + h * KeyDim, r.k + b * S * HK + h * KeyDim, t, p);
                    const float* used = p;
                    if constexpr (dropout) {
                        float* kept = r.kept + row * S;
                        masks::keep(p, hash, (h * T + t) * S, S, drop, kept);
                        used = kept;
                    }
                    float* o = r.o + (b * T + t) * HV + h * ValueDim;
                    std::fill_n(o, ValueDim, 0.0f);
                    for (std::size_t s = 0; s < S; ++s) {
                        const float ps = used[s];
                        const float* v = r.v + (b * S + s) * HV + h * ValueDim;
                        for (std::size_t j = 0; j < ValueDim; ++j)
                            o[j] += ps * v[j];
                    }
                }
        }
        kernels::gemm_nn_bias<HV, d::DQ, Linear>(n * T, r.o, at<B, 6>(params), at<B, 7>(params), y);
    }

    template <class B>
    static void
    backward(const float* params, const float* const* xs, const float*, float* dy, float* const* dxs, float* grads,
             float* scratch, std::size_t n) noexcept
    {
        using d = dims<B>;
        constexpr std::size_t T = d::T, S = d::S;
        const parts r = parts_of<B>(scratch, n);
        // The output projection: its gradients, then the heads' outputs' gradient over their place.
        kernels::gemm_tn<HV, d::DQ>(n * T, r.o, dy, at<B, 6>(grads), false);
        column_sums<d::DQ>(dy, n * T, at<B, 7>(grads));
        float* d_o = r.o;
        kernels::gemm_nt<d::DQ, HV>(n * T, dy, at<B, 6>(params), d_o);
        std::fill_n(r.dk, n * S * HK, 0.0f);
        std::fill_n(r.dv, n * S * HV, 0.0f);
        float dp[S];
        const float scale = query_scale();
        for (std::size_t b = 0; b < n; ++b)
            for (std::size_t h = 0; h < Heads; ++h)
                for (std::size_t t = 0; t < T; ++t) {
                    const std::size_t row = (b * Heads + h) * T + t;
                    const float* p = r.p + row * S;
                    const float* used = dropout ? r.kept + row * S : p;
                    const float* go = d_o + (b * T + t) * HV + h * ValueDim;
                    // d(used)_s = go . v_s; through dropout, d(p)_s = d(used)_s times the mask's scale
                    double p_dot = 0.0;
                    for (std::size_t s = 0; s < S; ++s) {
                        float* dv = r.dv + (b * S + s) * HV + h * ValueDim;
                        const float* v = r.v + (b * S + s) * HV + h * ValueDim;
                        float sum = 0.0f;
                        for (std::size_t j = 0; j < ValueDim; ++j) {
                            sum += go[j] * v[j];
                            dv[j] += used[s] * go[j];
                        }
                        if constexpr (dropout)
                            sum = used[s] != 0.0f ? sum / (1.0f - Options.dropout) : 0.0f;
                        dp[s] = sum;
                        p_dot += static_cast<double>(p[s]) * sum;
                    }
                    // the softmax: d(score)_s = p_s (dp_s - sum_s' p_s' dp_s'); score = q' . k_s
                    const auto mean = static_cast<float>(p_dot);
                    const float* qt = r.q + (b * T + t) * HK + h * KeyDim;
                    float* dqt = r.dq + (b * T + t) * HK + h * KeyDim;
                    std::fill_n(dqt, KeyDim, 0.0f);
                    for (std::size_t s = 0; s < S; ++s) {
                        const float ds = p[s] * (dp[s] - mean);
                        const float* ks = r.k + (b * S + s) * HK + h * KeyDim;
                        float* dks = r.dk + (b * S + s) * HK + h * KeyDim;
                        for (std::size_t j = 0; j < KeyDim; ++j) {
                            dqt[j] += ds * ks[j];
                            dks[j] += ds * qt[j];
                        }
                    }
                    for (std::size_t j = 0; j < KeyDim; ++j)
                        dqt[j] *= scale;   // q' = scale q
                }
        // The three projections: their weights' gradients, then the inputs' (a tensor read as two of
        // them gets the sum: the first writes, the others add).
        kernels::gemm_tn<d::DQ, HK>(n * T, xs[0], r.dq, at<B, 0>(grads), false);
        column_sums<HK>(r.dq, n * T, at<B, 1>(grads));
        kernels::gemm_tn<d::DK, HK>(n * S, xs[d::key_input], r.dk, at<B, 2>(grads), false);
        column_sums<HK>(r.dk, n * S, at<B, 3>(grads));
        kernels::gemm_tn<d::DV, HV>(n * S, xs[d::value_input], r.dv, at<B, 4>(grads), false);
        column_sums<HV>(r.dv, n * S, at<B, 5>(grads));
        if (dxs[0])
            kernels::gemm_nt<HK, d::DQ>(n * T, r.dq, at<B, 0>(params), dxs[0]);
        input_gradient<HK, d::DK>(n * S, r.dk, at<B, 2>(params), dxs[d::key_input], d::key_input == 0, r.dx);
        input_gradient<HV, d::DV>(n * S, r.dv, at<B, 4>(params), dxs[d::value_input],
                                  d::value_input == 0 || d::value_input == d::key_input, r.dx);
    }

private:
    /// Sets p (S) to the softmax over the value's positions of the scores q . k_s (positions after t
    /// masked when causal).
    template <class B>
    static void
    softmax_scores(const float* q, const float* k, std::size_t t, float* p) noexcept
    {
        constexpr std::size_t S = dims<B>::S;
        const std::size_t visible = Options.use_causal_mask ? std::min(t + 1, S) : S;
        float top = -std::numeric_limits<float>::infinity();
        for (std::size_t s = 0; s < visible; ++s) {
            const float* ks = k + s * HK;
            float score = 0.0f;
            for (std::size_t j = 0; j < KeyDim; ++j)
                score += q[j] * ks[j];
            p[s] = score;
            top = std::max(top, score);
        }
        masked_softmax(p, top, visible, S);
    }

    /// out[j] = the sum over the rows of m (rows, N), in double, in order.
    template <std::size_t N>
    static void
    column_sums(const float* m, std::size_t rows, float* out) noexcept
    {
        double sums[N] = {};
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < N; ++j)
                sums[j] += m[i * N + j];
        for (std::size_t j = 0; j < N; ++j)
            out[j] = static_cast<float>(sums[j]);
    }

    /// dx (rows, D) = (or += when `adds`) g (rows, K) . W^T for a projection's kernel W (D, K).
    template <std::size_t K, std::size_t D>
    static void
    input_gradient(std::size_t rows, const float* g, const float* w, float* dx, bool adds, float* temp) noexcept
    {
        if (!dx)
            return;
        if (!adds)
            return kernels::gemm_nt<K, D>(rows, g, w, dx);
        kernels::gemm_nt<K, D>(rows, g, w, temp);
        for (std::size_t i = 0; i < rows * D; ++i)
            dx[i] += temp[i];
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_MULTI_HEAD_ATTENTION_OPS_HPP
