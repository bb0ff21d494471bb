/// @file Defines the forward and backward pass of tpudsl::MultiHeadAttention on a batch.
#ifndef TPUDSL_LAYERS_MULTI_HEAD_ATTENTION_OPS_HPP
#define TPUDSL_LAYERS_MULTI_HEAD_ATTENTION_OPS_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/kernels/scratch.hpp>
#include <tpudsl/layers/detail/attention_steps.hpp>
#include <tpudsl/layers/multi_head_attention.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tpudsl::detail {

/// MultiHeadAttention's forward and backward (see layers/multi_head_attention.hpp). The projections
/// and the output are GEMMs over every timestep of the micro-batch. The attention itself runs per
/// sample and head in blocks of `block` query positions, each block two GEMMs over the value's
/// positions (the scores, then the weighted sum) with the softmax between them, so that no (heads, T,
/// S) tensor is kept: backward computes each block's probabilities again, bit for bit, and the dropout
/// masks from the hash kept per sample. The layer's scratch holds, over the micro-batch, the scaled
/// query, the key and value projections (n, steps, heads, dim), the heads' outputs (n, T, heads,
/// ValueDim) and the dropout hashes, then backward's gradients of the projections and an input's
/// gradient; one head's workspace (its key and value, contiguous and transposed, a query block, blocks
/// of scores) is the thread's layer_workspace.
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
        /// query positions per block: a block of scores (block, S) stays in the first-level cache
        static constexpr std::size_t block = std::min<std::size_t>(T, 32);
    };

    /// Where each part of the scratch begins, for n samples, and of the head's workspace.
    struct parts {
        float *q, *k, *v, *o, *hashes, *dq, *dk, *dv, *dx;
        // one head's workspace: its key (S, KeyDim) and transposed key, value and transposed value, a
        // query block, a block of scores and of the probabilities kept by dropout, a block of the
        // output's (or of its gradient), the gradients of the block's query, of the key and the value
        float *kh, *kt, *vh, *vt, *qb, *sb, *ub, *ob, *dsb, *dqb, *dkh, *dvh;
    };
    template <class B>
    static constexpr std::size_t workspace_floats = [] {
        using d = dims<B>;
        constexpr std::size_t S = d::S, Q = d::block;
        return 3 * S * KeyDim + 3 * S * ValueDim + 2 * Q * KeyDim + (dropout ? 3 : 2) * Q * S + Q * ValueDim;
    }();
    template <class B>
    [[nodiscard]] static parts
    parts_of(float* scratch, std::size_t n) noexcept
    {
        using d = dims<B>;
        constexpr std::size_t T = d::T, S = d::S, Q = d::block;
        parts r{};
        r.q = scratch;
        r.k = r.q + n * T * HK;
        r.v = r.k + n * S * HK;
        r.o = r.v + n * S * HV;
        r.hashes = r.o + n * T * HV;
        r.dq = r.hashes + n * 3;
        r.dk = r.dq + n * T * HK;
        r.dv = r.dk + n * S * HK;
        r.dx = r.dv + n * S * HV;
        r.kh = kernels::layer_workspace(workspace_floats<B>);
        r.kt = r.kh + S * KeyDim;
        r.vh = r.kt + S * KeyDim;
        r.vt = r.vh + S * ValueDim;
        r.qb = r.vt + S * ValueDim;
        r.sb = r.qb + Q * KeyDim;
        r.ub = r.sb + Q * S;
        r.ob = r.ub + (dropout ? Q * S : 0);
        r.dsb = r.ob + Q * ValueDim;
        r.dqb = r.dsb + Q * S;
        r.dkh = r.dqb + Q * KeyDim;
        r.dvh = r.dkh + S * KeyDim;
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

    /// What the layer asks of a thread's kernel scratch: its GEMMs' needs (the projections over the
    /// timesteps of a micro-batch, forward's four and backward's weight and input gradients, and a head's
    /// blocks) and the head's workspace.
    template <class B>
    static constexpr kernels::scratch_sizes
    scratch(const kernels::scratch_rows& rows) noexcept
    {
        using d = dims<B>;
        constexpr std::size_t S = d::S, Q = d::block;
        const std::size_t t = rows.micro_batch * d::T, s = rows.micro_batch * d::S;
        return kernels::gemm_nn_scratch<d::DQ, HK>(t) | kernels::gemm_nn_scratch<d::DK, HK>(s) |
               kernels::gemm_nn_scratch<d::DV, HV>(s) | kernels::gemm_nn_scratch<HV, d::DQ>(t) |
               kernels::gemm_tn_scratch<HV, d::DQ>() | kernels::gemm_tn_scratch<d::DQ, HK>() |
               kernels::gemm_tn_scratch<d::DK, HK>() | kernels::gemm_tn_scratch<d::DV, HV>() |
               kernels::gemm_nt_scratch<d::DQ, HV>(t, false) | kernels::gemm_nt_scratch<HK, d::DQ>(t, false) |
               kernels::gemm_nt_scratch<HK, d::DK>(s, false) | kernels::gemm_nt_scratch<HV, d::DV>(s, false) |
               kernels::gemm_nn_scratch<KeyDim, S>(Q) | kernels::gemm_nn_scratch<S, ValueDim>(Q) |
               kernels::gemm_nn_scratch<ValueDim, S>(Q) | kernels::gemm_nn_scratch<S, KeyDim>(Q) |
               kernels::gemm_tn_scratch<S, ValueDim>() | kernels::gemm_tn_scratch<S, KeyDim>() |
               kernels::layer_workspace_sizes(workspace_floats<B>);
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
            keep_hash(r.hashes + 3 * b, hash, drop);
            for (std::size_t h = 0; h < Heads; ++h) {
                head_operands<B>(r, b, h, false);
                for (std::size_t t0 = 0; t0 < T; t0 += d::block) {
                    const std::size_t rows = std::min(d::block, T - t0);
                    const float* used = probabilities<B>(r, b, h, t0, rows, hash, drop);
                    kernels::gemm_nn<S, ValueDim>(rows, used, r.vh, r.ob);   // (rows, ValueDim)
                    strided_copy<ValueDim>(r.ob, ValueDim, rows, r.o + (b * T + t0) * HV + h * ValueDim, HV);
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
        const float scale = query_scale();
        for (std::size_t b = 0; b < n; ++b) {
            bool drop = false;
            const std::uint64_t hash = kept_hash(r.hashes + 3 * b, drop);
            for (std::size_t h = 0; h < Heads; ++h) {
                head_operands<B>(r, b, h, true);
                for (std::size_t t0 = 0; t0 < T; t0 += d::block) {
                    const std::size_t rows = std::min(d::block, T - t0);
                    const float* used = probabilities<B>(r, b, h, t0, rows, hash, drop);
                    strided_copy<ValueDim>(d_o + (b * T + t0) * HV + h * ValueDim, HV, rows, r.ob, ValueDim);
                    // the value's gradient: used^T . d(out), summed over the blocks in order
                    kernels::gemm_tn<S, ValueDim>(rows, used, r.ob, r.dvh, t0 > 0);
                    // d(used) = d(out) . value^T; through dropout, d(p)_s = d(used)_s times the mask's
                    // scale; through the softmax, d(score)_s = p_s (d(p)_s - sum_s' p_s' d(p)_s')
                    kernels::gemm_nn<ValueDim, S>(rows, r.ob, r.vt, r.dsb);
                    for (std::size_t i = 0; i < rows; ++i) {
                        const float* p = r.sb + i * S;
                        float* ds = r.dsb + i * S;
                        if (dropout && drop) {
                            const float* u = used + i * S;
                            for (std::size_t s = 0; s < S; ++s)
                                ds[s] = u[s] != 0.0f ? ds[s] / (1.0f - Options.dropout) : 0.0f;
                        }
                        softmax_backward(p, ds, S);
                    }
                    // score = q' . k_s with q' = scale q: the query's gradient d(score) . key, scaled;
                    // the key's d(score)^T . q', summed over the blocks in order
                    kernels::gemm_nn<S, KeyDim>(rows, r.dsb, r.kh, r.dqb);
                    for (std::size_t i = 0; i < rows * KeyDim; ++i)
                        r.dqb[i] *= scale;
                    strided_copy<KeyDim>(r.dqb, KeyDim, rows, r.dq + (b * T + t0) * HK + h * KeyDim, HK);
                    kernels::gemm_tn<S, KeyDim>(rows, r.dsb, r.qb, r.dkh, t0 > 0);
                }
                strided_copy<KeyDim>(r.dkh, KeyDim, S, r.dk + b * S * HK + h * KeyDim, HK);
                strided_copy<ValueDim>(r.dvh, ValueDim, S, r.dv + b * S * HV + h * ValueDim, HV);
            }
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
    /// rows x Cols floats from `from` (rows `from_stride` apart) to `to` (rows `to_stride` apart): a
    /// head's slice of the projections (a copy of a size the compiler knows: moves in registers).
    template <std::size_t Cols>
    static void
    strided_copy(const float* from, std::size_t from_stride, std::size_t rows, float* to, std::size_t to_stride) noexcept
    {
        for (std::size_t i = 0; i < rows; ++i)
            std::memcpy(to + i * to_stride, from + i * from_stride, Cols * sizeof(float));
    }

    /// Head h of sample b's key and value, contiguous (kh, vh) and transposed (kt, vt): forward reads
    /// kt and vh, backward all four.
    template <class B>
    static void
    head_operands(const parts& r, std::size_t b, std::size_t h, bool for_backward) noexcept
    {
        constexpr std::size_t S = dims<B>::S;
        const float* k = r.k + b * S * HK + h * KeyDim;
        const float* v = r.v + b * S * HV + h * ValueDim;
        kernels::transpose(k, S, KeyDim, HK, r.kt, S);
        strided_copy<ValueDim>(v, HV, S, r.vh, ValueDim);
        if (for_backward) {
            strided_copy<KeyDim>(k, HK, S, r.kh, KeyDim);
            kernels::transpose(v, S, ValueDim, HV, r.vt, S);
        }
    }

    /// The probabilities of query rows [t0, t0 + rows) of head h of sample b over the value's
    /// positions, in the block of scores (sb; causal: positions after the row's get 0, as Keras' -1e9
    /// before its softmax leaves them), and those dropout keeps (ub; the scores' block itself without
    /// dropout): what both passes read, the same bits in both. Leaves the scaled query block in qb.
    template <class B>
    static const float*
    probabilities(const parts& r, std::size_t b, std::size_t h, std::size_t t0, std::size_t rows,
                  std::uint64_t hash, bool drop) noexcept
    {
        constexpr std::size_t T = dims<B>::T, S = dims<B>::S;
        strided_copy<KeyDim>(r.q + (b * T + t0) * HK + h * KeyDim, HK, rows, r.qb, KeyDim);
        kernels::gemm_nn<KeyDim, S>(rows, r.qb, r.kt, r.sb);   // (rows, S) scores
        for (std::size_t i = 0; i < rows; ++i) {
            const std::size_t t = t0 + i;
            float* p = r.sb + i * S;
            const std::size_t visible = Options.use_causal_mask ? std::min(t + 1, S) : S;
            masked_softmax(p, visible, S);
            if constexpr (dropout)
                masks::keep(p, hash, (h * T + t) * S, S, drop, r.ub + i * S);
        }
        return dropout ? r.ub : r.sb;
    }

    /// A sample's dropout hash and whether it drops, kept in three floats of the scratch for backward.
    static void
    keep_hash(float* at, std::uint64_t hash, bool drop) noexcept
    {
        static_assert(sizeof(std::uint64_t) == 2 * sizeof(float));
        std::memcpy(at, &hash, sizeof hash);
        at[2] = drop ? 1.0f : 0.0f;
    }
    static std::uint64_t
    kept_hash(const float* at, bool& drop) noexcept
    {
        std::uint64_t hash = 0;
        std::memcpy(&hash, at, sizeof hash);
        drop = at[2] != 0.0f;
        return hash;
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
