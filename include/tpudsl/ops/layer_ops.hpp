/// @file Defines the forward and backward pass of every layer over a batch, on the model's flat buffers.
///
/// Each `layer_ops<Spec>` has two static functions templated on the bound layer `B`
/// (`Sequential::layer<I>`), which carries every dimension as a constant:
///
///   forward (params, x, y, scratch, n, ctx)        x: (n, in...)  -> y: (n, out...)
///   backward(params, x, y, dy, dx, grads, scratch, n, dy_is_logit_grad)
///
/// `params` and `grads` are the bases of the flat parameter buffer and of a gradient arena (same
/// layout). Dense and the convolutions *write* their weights' gradients (one GEMM per weight covers
/// it whole), so their part of the arena needs no clearing between steps; the Embedding adds rows
/// into its part (`accumulates_gradients`), which the caller clears. `scratch` is the layer's (n, scratch_size) block. `dy` is
/// overwritten (it becomes dL/dz); `dx` may be null when no one needs the input's gradient. When
/// `dy_is_logit_grad`, `dy` already is dL/dz for a softmax layer (the loss took the fused path).
/// Nothing here allocates or throws.
#ifndef TPUDSL_OPS_LAYER_OPS_HPP
#define TPUDSL_OPS_LAYER_OPS_HPP

#include <tpudsl/core/activations.hpp>
#include <tpudsl/core/padding.hpp>
#include <tpudsl/detail/random.hpp>
#include <tpudsl/detail/simd.hpp>
#include <tpudsl/kernels/activation.hpp>
#include <tpudsl/kernels/direct_conv.hpp>
#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/kernels/im2col.hpp>
#include <tpudsl/kernels/pooling.hpp>
#include <tpudsl/kernels/window_geometry.hpp>
#include <tpudsl/layers/activation.hpp>
#include <tpudsl/layers/conv1d.hpp>
#include <tpudsl/layers/conv2d.hpp>
#include <tpudsl/layers/dense.hpp>
#include <tpudsl/layers/dropout.hpp>
#include <tpudsl/layers/embedding.hpp>
#include <tpudsl/layers/flatten.hpp>
#include <tpudsl/layers/max_pool1d.hpp>
#include <tpudsl/layers/max_pool2d.hpp>
#include <tpudsl/ops/step_context.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace tpudsl::ops {

template <class Spec>
struct layer_ops;

namespace detail {

/// db(Cols) = column sums of dz(rows, Cols), a vector of columns at a time; `accumulate`: db += them.
template <std::size_t Cols>
inline void
column_sums(const float* dz, float* db, std::size_t rows, bool accumulate = false) noexcept
{
    using tpudsl::detail::simd::vfloat;
    constexpr std::size_t W = vfloat::size;
    constexpr std::size_t full = Cols / W * W;
    for (std::size_t c = 0; c < full; c += W) {
        vfloat s0 = vfloat::broadcast(0.0f), s1 = s0;
        std::size_t r = 0;
        for (; r + 2 <= rows; r += 2) {
            s0 = s0 + vfloat::load(dz + r * Cols + c);
            s1 = s1 + vfloat::load(dz + (r + 1) * Cols + c);
        }
        if (r < rows)
            s0 = s0 + vfloat::load(dz + r * Cols + c);
        const vfloat sum = s0 + s1;
        (accumulate ? vfloat::load(db + c) + sum : sum).store(db + c);
    }
    if constexpr (full < Cols) {
        vfloat s = vfloat::broadcast(0.0f);
        for (std::size_t r = 0; r < rows; ++r)
            s = s + vfloat::load_n(dz + r * Cols + full, Cols - full);
        (accumulate ? vfloat::load_n(db + full, Cols - full) + s : s).store_n(db + full, Cols - full);
    }
}

/// z = x . w + b, y = act(z) over M rows: the bias and a Relu are applied inside the GEMM as each tile
/// of y leaves the registers; a softmax layer keeps its logits z in `logits`.
template <std::size_t K, std::size_t N, class Act>
inline void
linear_forward(std::size_t M, const float* x, const float* w, const float* b, float* y, float* logits) noexcept
{
    if constexpr (std::is_same_v<Act, Relu> || std::is_same_v<Act, Linear>) {
        kernels::gemm_nn_bias<K, N, Act>(M, x, w, b, y);
    } else {
        kernels::gemm_nn_bias<K, N, Linear>(M, x, w, b, y);
        if constexpr (std::is_same_v<Act, Softmax>)
            std::memcpy(logits, y, M * N * sizeof(float));
        kernels::activation_forward<Act, N>(y, M);
    }
}

/// A convolution: im2col + GEMM, or read in place (kernels::conv_path_for: a 1-D convolution, or a thin
/// 2-D patch, with every window inside the input). The kernel (patch, F) is Keras' (kh, kw, in, F)
/// read row-major.
template <kernels::window_geometry G, std::size_t F, class Act>
struct conv_core {
    static constexpr kernels::window_geometry geometry = G;
    static constexpr std::size_t P = G.positions();
    static constexpr std::size_t K = G.patch();
    static constexpr std::size_t filters = F;
    using activation = Act;
    static constexpr bool softmax = std::is_same_v<Act, Softmax>;
    /// Read in place (no im2col): chosen from the shapes at compile time.
    static constexpr bool in_place = !softmax && kernels::conv_path_for<G> != kernels::conv_path::im2col;
    /// The activation applied in the GEMM's epilogue (the others run as a pass after it).
    static constexpr bool epilogue_activation = std::is_same_v<Act, Relu> || std::is_same_v<Act, Linear>;
    using epilogue = std::conditional_t<epilogue_activation, Act, Linear>;

    static float*
    logits(float* scratch, std::size_t n) noexcept
    {
        return scratch + n * P * K;
    }

    /// z(P, F) = act(conv(x) + b) for one sample, in place (the in_place path only).
    static void
    forward_sample(const float* x, const float* w, const float* b, float* z) noexcept
    {
        kernels::conv_forward_in_place<G, F, epilogue>(x, w, b, z);
        if constexpr (!epilogue_activation)
            kernels::activation_forward<Act, F>(z, P);
    }

    static void
    forward(const float* w, const float* b, const float* x, float* y, float* scratch, std::size_t n) noexcept
    {
        if constexpr (in_place) {
            for (std::size_t s = 0; s < n; ++s)
                forward_sample(x + s * G.in_size(), w, b, y + s * P * F);
        } else {
            for (std::size_t s = 0; s < n; ++s)
                kernels::im2col<G>(x + s * G.in_size(), scratch + s * P * K);
            linear_forward<K, F, Act>(n * P, scratch, w, b, y, logits(scratch, n));   // (n P, F) = (n P, K) . (K, F)
        }
    }

    static void
    backward(const float* w, const float* x, const float* y, float* dy, float* dx, float* dw, float* db,
             float* scratch, std::size_t n, bool dy_is_logit_grad) noexcept
    {
        if (!dy_is_logit_grad)
            kernels::activation_backward<Act, F>(y, dy, dy, n * P);
        if constexpr (in_place) {
            for (std::size_t s = 0; s < n; ++s)   // dW (K, F) += windows^T . dZ, sample by sample
                kernels::conv_kernel_gradient_in_place<G, F>(x + s * G.in_size(), dy + s * P * F, dw, s > 0);
        } else {
            kernels::gemm_tn<K, F>(n * P, scratch, dy, dw, false);   // dW (K, F) = cols^T . dZ
        }
        column_sums<F>(dy, db, n * P);
        if (dx) {
            kernels::gemm_nt<F, K>(n * P, dy, w, scratch);   // dcols (n P, K) = dZ . W^T, over the cols
            for (std::size_t s = 0; s < n; ++s)
                kernels::col2im<G>(scratch + s * P * K, dx + s * G.in_size());
        }
    }
};

/// conv_pool_pair::backward's default source of the pooled gradient: it is already in dy, (n, stride).
struct dy_in_place {
    float* dy;
    std::size_t stride;
    float* operator()(std::size_t s0, std::size_t) const noexcept { return dy + s0 * stride; }
};

/// A convolution and the max pooling right after it, one sample at a time. The convolution's output
/// and its gradient live only in a one-sample buffer (`z1`) that stays in cache between the two
/// layers, instead of a (n, positions, F) block that the pooling reads back from memory and that
/// backward clears, scatters into and reads twice more. Backward needs no stored convolution output:
/// an element-wise activation commutes with the maximum (it is non-decreasing), so act'(z) at a
/// window's argmax is computed from the pooled value itself.
///
///   forward:  x (n, in) -> cols (n, P, K) kept for backward, z1 (P, F) per sample -> y (n, Q, F), argmax
///             (a direct convolution under windows that tile it skips z1: see pooled_in_tiles)
///   backward: dy (n, Q, F) -> dW, db; dx (n, in) may share dy's buffer (see `reverse`); dy may instead
///             come a group of samples at a time from the layer above (see `backward`).
template <class Conv, class Pool>
struct conv_pool_pair {
    using conv_type = Conv;
    using Act = typename Conv::activation;
    static constexpr std::size_t F = Conv::filters, P = Conv::P, K = Conv::K;
    static constexpr kernels::window_geometry CG = Conv::geometry, PG = Pool::geometry;
    static_assert(!Conv::softmax, "a softmax convolution is not element-wise: it is not fused with its pooling");
    static_assert(PG.in_size() == P * F && PG.channels == F);

    /// The graph hands backward dy and dx in one buffer (the delta that held the pooling's gradient
    /// receives the convolution's input gradient). Sample s reads dy[s Q F, ...) before it writes
    /// dx[s in, ...): in increasing order that never overwrites an unread dy when in <= Q F, in
    /// decreasing order when in >= Q F. The order is fixed by the shapes: the same bits every run.
    static constexpr bool reverse = CG.in_size() >= Pool::out;

    /// Forward pools each window as its positions leave the registers, never writing z1: a direct
    /// convolution whose activation runs in the epilogue, under windows that tile its output.
    static constexpr bool pooled_in_tiles = Conv::in_place && Conv::epilogue_activation &&
                                            kernels::pools_in_tiles<CG, PG, F>;

    static void
    forward(const float* w, const float* b, const float* x, float* z1, float* cols, float* y, float* argmax,
            std::size_t n) noexcept
    {
        for (std::size_t s = 0; s < n; ++s) {
            const float* xs = x + s * CG.in_size();
            float* ys = y + s * Pool::out;
            float* as = argmax + s * Pool::out;
            if constexpr (pooled_in_tiles) {
                kernels::conv_pool_forward_in_place<CG, PG, F, typename Conv::epilogue>(xs, w, b, ys, as);
            } else {
                if constexpr (Conv::in_place) {
                    Conv::forward_sample(xs, w, b, z1);
                } else {
                    kernels::im2col<CG>(xs, cols + s * P * K);
                    linear_forward<K, F, Act>(P, cols + s * P * K, w, b, z1, nullptr);   // (P, F) = (P, K) . (K, F)
                }
                kernels::max_pool_forward<PG>(z1, ys, as);
            }
        }
    }

    /// `pooled(s0, count)` gives where the pooled gradients of samples [s0, s0 + count) lie, (count, Q F):
    /// dy itself (dy_in_place), or a buffer that the layer above fills only now (a Dense's input
    /// gradient, written while this pass needs it and still in cache). Called for groups of `group`
    /// samples, each before its samples are read, in the order they are taken; the pass overwrites them.
    /// As many samples as keep the group's buffer near 160 KB (well inside L2 beside the pass's other
    /// data), 4 to 16: each group reads the Dense's whole W^T once (the Fashion model's 10816 x 10:
    /// 4; the Reuters model's 2336 x 46: 16, a quarter of the reads and taller GEMM tiles).
    static constexpr std::size_t group = std::clamp<std::size_t>(40960 / Pool::out, 4, 16);

    /// The input gradient as a convolution of dZ in a frame of zeros (kernels::input_gradient_as_conv:
    /// stride 1, read in place), the frame in the one-sample scratch; otherwise dcols = dZ . W^T and
    /// col2im, dcols in that scratch. A 1-D frame is dZ itself between zero rows: dZ is written there
    /// (dz_in_frame); a 2-D frame's rows have borders, and dZ is copied in (kernels::frame_dz).
    static constexpr bool dx_as_conv = Conv::in_place && kernels::input_gradient_as_conv<CG>;
    static constexpr bool dz_in_frame = dx_as_conv && CG.out_h == 1 && CG.k_h == 1;
    /// Floats of the one-sample scratch backward needs when it computes dx (an in-place convolution).
    static constexpr std::size_t dx_scratch = dx_as_conv ? kernels::dz_frame_size<CG, F> : P * K;

    /// Without an input gradient to compute, backward writes dZ one band of pooling windows at a time and
    /// takes the kernel gradient of each band while it is in L1 (kernels::conv_pool_kernel_gradient).
    static constexpr bool in_bands = Conv::in_place && kernels::pool_gradient_in_bands<CG, PG, F, Act>;

    /// This thread's buffer for one group's pooled gradients, (group, Q F): made once, then reused.
    static float*
    group_buffer()
    {
        thread_local std::vector<float> buffer(group * Pool::out);
        return buffer.data();
    }

    template <class Pooled>
    static void
    backward(const float* w, const float* x, const float* y, const Pooled& pooled, float* dx, float* dw, float* db,
             float* cols, float* z1, const float* argmax, std::size_t n) noexcept
    {
        constexpr std::size_t Q = Pool::out / F;   // pooled positions
        // W^T (F, K), or the flipped kernel (k_w F, C), once per pass.
        const float* wt = !dx          ? nullptr
                          : dx_as_conv ? kernels::flipped_kernel_scratch<CG, F>(w)
                                       : kernels::transposed_scratch<F, K>(w);
        float* dz = z1;   // a sample's dZ (P, F)
        if constexpr (dx_as_conv)
            if (dx) {   // the frame's zeros, once per pass (each sample writes only its inside)
                std::fill_n(cols, dx_scratch, 0.0f);
                if constexpr (dz_in_frame)
                    dz = cols + (CG.k_w - 1) * F;
            }
        float* from = nullptr;                     // sample s0's pooled gradient
        std::size_t s0 = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t s = reverse ? n - 1 - i : i;
            if (i % group == 0) {
                const std::size_t count = std::min(group, n - i);
                s0 = reverse ? n - i - count : i;
                from = pooled(s0, count);
            }
            float* cs = Conv::in_place ? cols : cols + s * P * K;   // in place: cols is dcols' buffer
            float* dys = from + (s - s0) * Pool::out;
            // No input gradient (a first layer): dZ one band of pooling windows at a time, in L1.
            if constexpr (in_bands)
                if (!dx) {
                    kernels::conv_pool_kernel_gradient<CG, PG, F, Act>(x + s * CG.in_size(), y + s * Pool::out, dys,
                                                                       argmax + s * Pool::out, z1, dw, db, i > 0);
                    continue;
                }
            // While the sample's pooled gradient is in cache: act'(z) at each argmax (from the pooled
            // value), the bias gradient (each pooled gradient lands on one z: the same sums), dZ (P, F).
            if constexpr (kernels::pool_backward_through_act<PG, Act>) {
                kernels::max_pool_backward_through<PG, Act>(y + s * Pool::out, dys, argmax + s * Pool::out, dz, db,
                                                            i > 0);
            } else {
                kernels::activation_backward<Act, F>(y + s * Pool::out, dys, dys, Q);
                column_sums<F>(dys, db, Q, i > 0);
                kernels::max_pool_backward<PG>(dys, argmax + s * Pool::out, dz);
            }
            if constexpr (Conv::in_place)
                kernels::conv_kernel_gradient_in_place<CG, F>(x + s * CG.in_size(), dz, dw, i > 0);
            else
                kernels::gemm_tn<K, F>(P, cs, dz, dw, i > 0);   // dW (K, F) += cols^T . dZ
            if (dx) {
                if constexpr (dx_as_conv) {
                    if constexpr (!dz_in_frame)
                        kernels::frame_dz<CG, F>(dz, cols);
                    kernels::conv_input_gradient_in_place<CG, F>(cols, wt, dx + s * CG.in_size());
                } else {
                    kernels::gemm_nn<F, K>(P, dz, wt, cs);   // dcols (P, K) = dZ . W^T, over this sample's cols
                    kernels::col2im<CG>(cs, dx + s * CG.in_size());
                }
            }
        }
    }
};

template <kernels::window_geometry G>
struct pool_core {
    static constexpr kernels::window_geometry geometry = G;
    static constexpr std::size_t out = G.positions() * G.channels;

    static void
    forward(const float* x, float* y, float* argmax, std::size_t n) noexcept
    {
        for (std::size_t s = 0; s < n; ++s)
            kernels::max_pool_forward<G>(x + s * G.in_size(), y + s * out, argmax + s * out);
    }

    static void
    backward(const float* dy, float* dx, const float* argmax, std::size_t n) noexcept
    {
        if (!dx)
            return;
        for (std::size_t s = 0; s < n; ++s)
            kernels::max_pool_backward<G>(dy + s * out, argmax + s * out, dx + s * G.in_size());
    }
};

/// The geometry of a 1-D window over (L, C) as a 2-D one over (1, L, C).
template <class Pad, class InShape, class OutShape, std::size_t K, std::size_t S>
inline constexpr kernels::window_geometry geometry_1d{
    1, InShape::dims[0], InShape::dims[1], 1, K, 1, S, 1, OutShape::dims[0], 0,
    tpudsl::detail::pad_before<Pad>(InShape::dims[0], K, S)};

/// The geometry of a 2-D window over (H, W, C).
template <class Pad, class InShape, class OutShape, std::size_t KH, std::size_t KW, std::size_t SH, std::size_t SW>
inline constexpr kernels::window_geometry geometry_2d{
    InShape::dims[0], InShape::dims[1], InShape::dims[2], KH, KW, SH, SW, OutShape::dims[0], OutShape::dims[1],
    tpudsl::detail::pad_before<Pad>(InShape::dims[0], KH, SH), tpudsl::detail::pad_before<Pad>(InShape::dims[1], KW, SW)};

} // namespace detail

template <std::size_t Units, class Act>
struct layer_ops<Dense<Units, Act>> {
    static constexpr bool accumulates_gradients = false;

    template <class B>
    static float*
    logits(float* scratch, std::size_t) noexcept
    {
        return scratch;
    }

    /// This thread's transposed copy of the kernel (Units, I) of the bound layer B, for the input
    /// gradient dX = dZ . W^T. A training forward makes it again only when the weights (or their
    /// version) changed: once per step, not per micro-batch. Backward uses the copy that the same
    /// thread's forward made for the same micro-batch (no update happens between the two).
    template <class B>
    struct kernel_copy {
        std::vector<float> wt;
        const float* from = nullptr;
        std::uint64_t version = 0;
    };

    template <class B>
    static const float*
    transposed_kernel(const float* w, std::uint64_t version, bool for_backward) noexcept
    {
        constexpr std::size_t I = B::input_shape::size;
        thread_local kernel_copy<B> copy;
        const bool fresh = copy.from == w && copy.version != 0 && (for_backward || copy.version == version);
        if (copy.wt.size() < Units * I)
            copy.wt.resize(Units * I);
        else if (fresh)
            return copy.wt.data();
        kernels::transpose(w, I, Units, copy.wt.data());
        copy.from = w;
        copy.version = version;
        return copy.wt.data();
    }

    /// A narrow layer (kernels::prefers_dot_products: Dense<10> on AVX2) computes Z = X . W from its
    /// transposed kernel, each unit one dot product along I with every lane busy.
    template <class B>
    static constexpr bool dot_products = kernels::prefers_dot_products<B::input_shape::size, Units>;

    /// True when backward reads the transposed copy that the thread's training forward made. The first
    /// layer's input gradient is rarely asked for: unless its forward needs the copy anyway
    /// (dot_products), it makes none and backward transposes afresh (version 0).
    template <class B>
    static constexpr bool keeps_transpose = B::index > 0 || dot_products<B>;

    template <class B>
    static void
    forward(const float* params, const float* x, float* y, float* scratch, std::size_t n, const step_context& ctx) noexcept
    {
        if constexpr (dot_products<B>) {
            const kernels::gemm_rows block{x, y, n};
            forward_rows<B>(params, &block, &scratch, 1, ctx);
        } else {
            constexpr std::size_t I = B::input_shape::size;
            const float* w = params + B::template weight<0>::offset;
            detail::linear_forward<I, Units, Act>(n, x, w, params + B::template weight<1>::offset, y, scratch);
            if constexpr (keeps_transpose<B>)
                if (ctx.training)
                    transposed_kernel<B>(w, ctx.weights_version, false);
        }
    }

    template <class B>
    static void
    backward(const float* params, const float* x, const float* y, float* dy, float* dx, float* grads, float*,
             std::size_t n, bool dy_is_logit_grad) noexcept
    {
        backward_keeping<B>(params, x, y, dy, dy, dx, grads, n, dy_is_logit_grad, true);
    }

    /// `forward` over several micro-batches at once (block p: x -> y, its rows; scratch[p] its logits
    /// when Softmax): each block the bits of `forward` on it alone, the kernel read once for all.
    template <class B>
    static void
    forward_rows(const float* params, const kernels::gemm_rows* blocks, float* const* scratch, std::size_t count,
                 const step_context& ctx) noexcept
    {
        constexpr std::size_t I = B::input_shape::size;
        const float* w = params + B::template weight<0>::offset;
        const float* bias = params + B::template weight<1>::offset;
        constexpr bool fused = std::is_same_v<Act, Relu> || std::is_same_v<Act, Linear>;
        using Epi = std::conditional_t<fused, Act, Linear>;
        if constexpr (dot_products<B>)
            kernels::gemm_nt_bias_rows<I, Units, Epi>(blocks, count, transposed_kernel<B>(w, ctx.weights_version, false),
                                                      bias);
        else
            kernels::gemm_nn_bias_rows<I, Units, Epi>(blocks, count, w, bias);
        if constexpr (!fused) {
            for (std::size_t p = 0; p < count; ++p) {
                if constexpr (std::is_same_v<Act, Softmax>)
                    std::memcpy(scratch[p], blocks[p].c, blocks[p].m * Units * sizeof(float));
                kernels::activation_forward<Act, Units>(blocks[p].c, blocks[p].m);
            }
        }
        if constexpr (keeps_transpose<B>)
            if (ctx.training)
                transposed_kernel<B>(w, ctx.weights_version, false);
    }

    /// dX = dZ . W^T over several micro-batches at once (block p: dZ -> dX), after backward_keeping
    /// without dx on each: the bits of backward_keeping's dX, the transposed kernel read once for all.
    template <class B>
    static void
    input_gradient_rows(const float* params, const kernels::gemm_rows* blocks, std::size_t count) noexcept
    {
        constexpr std::size_t I = B::input_shape::size;
        const float* wt = transposed_kernel<B>(params + B::template weight<0>::offset, 0, keeps_transpose<B>);
        kernels::gemm_nn_rows<Units, I>(blocks, count, wt);
    }

    /// Backward with dZ = act'(y) dy written to `dz` (which may be dy) and left there; the kernel's
    /// gradient X^T . dZ only when `kernel` (otherwise graph::deferred_gradient computes it later,
    /// over every micro-batch at once). The bias gradient and dX as in `backward`.
    template <class B>
    static void
    backward_keeping(const float* params, const float* x, const float* y, const float* dy, float* dz, float* dx,
                     float* grads, std::size_t n, bool dy_is_logit_grad, bool kernel) noexcept
    {
        constexpr std::size_t I = B::input_shape::size;
        const float* w = params + B::template weight<0>::offset;
        if (!dy_is_logit_grad)
            kernels::activation_backward<Act, Units>(y, dy, dz, n);
        else if (dz != dy)
            std::copy(dy, dy + n * Units, dz);
        detail::column_sums<Units>(dz, grads + B::template weight<1>::offset, n);
        if (kernel)
            kernels::gemm_tn<I, Units>(n, x, dz, grads + B::template weight<0>::offset, false);   // dW = X^T . dZ
        if (dx) {
            // dX (n, I) = dZ (n, U) . W^T, with W^T (U, I) as the thread keeps it since this step's forward.
            const float* wt = transposed_kernel<B>(w, 0, keeps_transpose<B>);
            kernels::gemm_nn<Units, I>(n, dz, wt, dx);
        }
    }
};

namespace detail {

/// The ops of a convolution, once `Binding::core<B>` says which conv_core a bound layer B runs.
template <class Binding>
struct conv_layer_ops {
    static constexpr bool accumulates_gradients = false;

    template <class B>
    using core = typename Binding::template core<B>;

    template <class B>
    static float*
    logits(float* scratch, std::size_t n) noexcept
    {
        return core<B>::logits(scratch, n);
    }

    template <class B>
    static void
    forward(const float* params, const float* x, float* y, float* scratch, std::size_t n, const step_context&) noexcept
    {
        core<B>::forward(params + B::template weight<0>::offset, params + B::template weight<1>::offset, x, y,
                         scratch, n);
    }

    template <class B>
    static void
    backward(const float* params, const float* x, const float* y, float* dy, float* dx, float* grads, float* scratch,
             std::size_t n, bool dy_is_logit_grad) noexcept
    {
        core<B>::backward(params + B::template weight<0>::offset, x, y, dy, dx, grads + B::template weight<0>::offset,
                          grads + B::template weight<1>::offset, scratch, n, dy_is_logit_grad);
    }
};

/// The ops of a max pooling, once `Binding::core<B>` says which pool_core a bound layer B runs.
template <class Binding>
struct pool_layer_ops {
    template <class B>
    using core = typename Binding::template core<B>;

    template <class B>
    static void
    forward(const float*, const float* x, float* y, float* scratch, std::size_t n, const step_context&) noexcept
    {
        core<B>::forward(x, y, scratch, n);
    }

    template <class B>
    static void
    backward(const float*, const float*, const float*, float* dy, float* dx, float*, float* scratch, std::size_t n,
             bool) noexcept
    {
        core<B>::backward(dy, dx, scratch, n);
    }
};

template <std::size_t Filters, std::size_t Kernel, class Act, class Pad, std::size_t Stride>
struct conv1d_binding {
    template <class B>
    using core = conv_core<geometry_1d<Pad, typename B::input_shape, typename B::output_shape, Kernel, Stride>,
                           Filters, Act>;
};

template <class Spec>
struct conv2d_binding {
    template <class B>
    using core = conv_core<geometry_2d<typename Spec::padding, typename B::input_shape, typename B::output_shape,
                                       Spec::kernel_rows, Spec::kernel_cols, Spec::stride_rows, Spec::stride_cols>,
                           Spec::filters, typename Spec::activation>;
};

template <std::size_t Pool, std::size_t Stride, class Pad>
struct pool1d_binding {
    template <class B>
    using core = pool_core<geometry_1d<Pad, typename B::input_shape, typename B::output_shape, Pool, Stride>>;
};

template <class Spec>
struct pool2d_binding {
    template <class B>
    using core = pool_core<geometry_2d<typename Spec::padding, typename B::input_shape, typename B::output_shape,
                                       Spec::pool_rows, Spec::pool_cols, Spec::stride_rows, Spec::stride_cols>>;
};

template <class Spec>
inline constexpr bool is_activation_layer = false;
template <class Act>
inline constexpr bool is_activation_layer<Activation<Act>> = true;
template <class Spec>
inline constexpr bool is_dense_layer = false;
template <std::size_t Units, class Act>
inline constexpr bool is_dense_layer<Dense<Units, Act>> = true;
template <class Spec>
inline constexpr bool is_dropout_layer = false;
template <float Rate>
inline constexpr bool is_dropout_layer<Dropout<Rate>> = true;

/// True when a layer of spec A followed by one of spec B run as a conv_pool_pair: a convolution with an
/// element-wise activation, then a max pooling of the same rank.
template <class A, class B>
inline constexpr bool fuses_with_pool = false;

template <std::size_t F, std::size_t K, class Act, class Pad, std::size_t S, std::size_t PP, std::size_t PS, class PPad>
inline constexpr bool fuses_with_pool<Conv1D<F, K, Act, Pad, S>, MaxPool1D<PP, PS, PPad>> = !std::is_same_v<Act, Softmax>;

template <std::size_t F, auto K, class Act, class Pad, auto S, auto PP, auto PS, class PPad>
inline constexpr bool fuses_with_pool<Conv2D<F, K, Act, Pad, S>, MaxPool2D<PP, PS, PPad>> = !std::is_same_v<Act, Softmax>;

/// True when a convolution of spec A, fused with its pooling, applies the activation of a layer of
/// spec B right after the pooling instead of it: A is Linear, B an element-wise Activation.
template <class A, class B>
inline constexpr bool absorbs_activation = false;

template <class A, class Act>
inline constexpr bool absorbs_activation<A, Activation<Act>> =
    std::is_same_v<typename A::activation, Linear> && !std::is_same_v<Act, Softmax> && !std::is_same_v<Act, Linear>;

} // namespace detail

template <std::size_t Filters, std::size_t Kernel, class Act, class Pad, std::size_t Stride>
struct layer_ops<Conv1D<Filters, Kernel, Act, Pad, Stride>>
    : detail::conv_layer_ops<detail::conv1d_binding<Filters, Kernel, Act, Pad, Stride>> {};

template <std::size_t Filters, auto Kernel, class Act, class Pad, auto Stride>
struct layer_ops<Conv2D<Filters, Kernel, Act, Pad, Stride>>
    : detail::conv_layer_ops<detail::conv2d_binding<Conv2D<Filters, Kernel, Act, Pad, Stride>>> {};

template <std::size_t Pool, std::size_t Stride, class Pad>
struct layer_ops<MaxPool1D<Pool, Stride, Pad>> : detail::pool_layer_ops<detail::pool1d_binding<Pool, Stride, Pad>> {};

template <auto Pool, auto Stride, class Pad>
struct layer_ops<MaxPool2D<Pool, Stride, Pad>> : detail::pool_layer_ops<detail::pool2d_binding<MaxPool2D<Pool, Stride, Pad>>> {};

template <std::size_t Vocab, std::size_t Dim>
struct layer_ops<Embedding<Vocab, Dim>> {
    /// The gradient is a scatter-add of rows: its part of the arena must start at zero.
    static constexpr bool accumulates_gradients = true;

    /// Token ids are checked against [0, Vocab) where the data enters the model, never here.
    template <class B, class Id>
    static void
    forward(const float* params, const Id* ids, float* y, float*, std::size_t n, const step_context&) noexcept
    {
        const float* table = params + B::template weight<0>::offset;
        for (std::size_t t = 0; t < n * B::input_shape::size; ++t)
            std::memcpy(y + t * Dim, table + static_cast<std::size_t>(ids[t]) * Dim, Dim * sizeof(float));
    }

    template <class B, class Id>
    static void
    backward(const float*, const Id* ids, const float*, float* dy, float*, float* grads, float*, std::size_t n,
             bool) noexcept
    {
        float* dtable = grads + B::template weight<0>::offset;
        for (std::size_t t = 0; t < n * B::input_shape::size; ++t) {
            float* row = dtable + static_cast<std::size_t>(ids[t]) * Dim;
            for (std::size_t d = 0; d < Dim; ++d)
                row[d] += dy[t * Dim + d];
        }
    }
};

template <>
struct layer_ops<Flatten> {
    template <class B>
    static void
    forward(const float*, const float* x, float* y, float*, std::size_t n, const step_context&) noexcept
    {
        std::memcpy(y, x, n * B::input_shape::size * sizeof(float));
    }

    template <class B>
    static void
    backward(const float*, const float*, const float*, float* dy, float* dx, float*, float*, std::size_t n,
             bool) noexcept
    {
        if (dx)
            std::memcpy(dx, dy, n * B::input_shape::size * sizeof(float));
    }
};

template <class Act>
struct layer_ops<Activation<Act>> {
    template <class B>
    static float*
    logits(float* scratch, std::size_t) noexcept
    {
        return scratch;
    }

    template <class B>
    static void
    forward(const float*, const float* x, float* y, float* scratch, std::size_t n, const step_context&) noexcept
    {
        constexpr std::size_t S = B::input_shape::size;
        constexpr std::size_t D = B::input_shape::dims[B::input_shape::rank - 1];   // softmax: the last axis
        if constexpr (std::is_same_v<Act, Relu>) {
            for (std::size_t i = 0; i < n * S; ++i)   // one pass, no copy first
                y[i] = x[i] > 0.0f ? x[i] : 0.0f;
            return;
        }
        std::memcpy(y, x, n * S * sizeof(float));
        if constexpr (std::is_same_v<Act, Softmax>)
            std::memcpy(scratch, x, n * S * sizeof(float));
        kernels::activation_forward<Act, D>(y, n * (S / D));
    }

    template <class B>
    static void
    backward(const float*, const float*, const float* y, float* dy, float* dx, float*, float*, std::size_t n,
             bool dy_is_logit_grad) noexcept
    {
        constexpr std::size_t S = B::input_shape::size;
        constexpr std::size_t D = B::input_shape::dims[B::input_shape::rank - 1];
        if (!dx)
            return;
        if (dy_is_logit_grad) {
            if (dx != dy)   // the graph computes an Activation's gradient in place
                std::memcpy(dx, dy, n * S * sizeof(float));
        } else
            kernels::activation_backward<Act, D>(y, dy, dx, n * (S / D));
    }
};

template <float Rate>
struct layer_ops<Dropout<Rate>> {
    template <class B>
    static void
    forward(const float*, const float* x, float* y, float* mask, std::size_t n, const step_context& ctx) noexcept
    {
        constexpr std::size_t S = B::input_shape::size;
        if (!ctx.training || Rate == 0.0f) {
            std::memcpy(y, x, n * S * sizeof(float));
            for (std::size_t i = 0; i < n * S; ++i)
                mask[i] = 1.0f;
            return;
        }
        // Element e of sample s is kept when unit_float(hash4(layer_seed(seed), step, first_sample + s, e))
        // >= Rate. The first three rounds of hash4 are taken out of the loop over the elements, and the
        // test is made on the integer that unit_float scales: (bits >> 40) >= ceil(Rate 2^24) holds
        // exactly when unit_float(bits) >= Rate (both sides are exact). Branch-free, the loop is
        // vectorised: the same masks, 6x faster than one hash4 and a float compare per element.
        constexpr float scale = 1.0f / (1.0f - Rate);
        constexpr float scaled = Rate * 16777216.0f;   // exact: a power of two
        constexpr auto whole = static_cast<std::uint64_t>(scaled);
        constexpr std::uint64_t threshold = whole + (static_cast<float>(whole) < scaled ? 1 : 0);   // ceil
        using tpudsl::detail::mix64;
        const std::uint64_t per_step = mix64(mix64(layer_seed<B>(ctx.seed)) ^ ctx.step);
        for (std::size_t s = 0; s < n; ++s) {
            const std::uint64_t h = mix64(per_step ^ (ctx.first_sample + s));
            const float* __restrict xs = x + s * S;
            float* __restrict ys = y + s * S;
            float* __restrict ms = mask + s * S;
            for (std::size_t e = 0; e < S; ++e) {
                const float m = (mix64(h ^ e) >> 40) >= threshold ? scale : 0.0f;
                ms[e] = m;
                ys[e] = xs[e] * m;
            }
        }
    }

    /// The seed of layer B's masks: the model's seed, keyed by the layer's index.
    template <class B>
    [[nodiscard]] static constexpr std::uint64_t
    layer_seed(std::uint64_t seed) noexcept
    {
        return seed ^ (0xd1b54a32d192ed03ULL * (B::index + 1));
    }

    template <class B>
    static void
    backward(const float*, const float*, const float*, float* dy, float* dx, float*, float* mask, std::size_t n,
             bool) noexcept
    {
        if (!dx)
            return;
        for (std::size_t i = 0; i < n * B::input_shape::size; ++i)
            dx[i] = dy[i] * mask[i];
    }
};

} // namespace tpudsl::ops

#endif // !TPUDSL_OPS_LAYER_OPS_HPP
