/// @file Defines conv_pool_pair: a convolution and the max pooling right after it, run together one
/// sample at a time (the graph fuses them where a convolution declares it and the pooling matches).
#ifndef TPUDSL_LAYERS_DETAIL_CONV_POOL_PAIR_HPP
#define TPUDSL_LAYERS_DETAIL_CONV_POOL_PAIR_HPP

#include <tpudsl/kernels/activation_math.hpp>
#include <tpudsl/kernels/direct_conv.hpp>
#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/kernels/im2col.hpp>
#include <tpudsl/kernels/pooling.hpp>
#include <tpudsl/kernels/window_geometry.hpp>
#include <tpudsl/layers/detail/conv_core.hpp>
#include <tpudsl/layers/detail/linear.hpp>
#include <tpudsl/layers/detail/pool_core.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace tpudsl::detail {

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
///             (a direct convolution under windows that tile it skips z1: see pooled_in_tiles; a padded
///             one keeps each sample's zero frame at the start of its cols instead: see `windows`)
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
    /// RG: the geometry the in-place kernels read the windows by (Conv::read_geometry): the
    /// convolution's, or its zero frame's.
    static constexpr kernels::window_geometry RG = Conv::read_geometry;
    static constexpr bool pooled_in_tiles = Conv::reads_in_place && Conv::epilogue_activation &&
                                            kernels::pools_in_tiles<RG, PG, F>;

    /// Where sample s's windows are read (Conv::reads_in_place): in x, or, for a padded convolution
    /// (Conv::framed), in its zero frame at the start of its cols, cols + s P K. Backward reads the
    /// frame for the kernel gradient, then writes that sample's dcols over it, and no other sample's.
    static const float*
    windows(const float* x, const float* cols, std::size_t s) noexcept
    {
        return Conv::framed ? cols + s * P * K : x + s * CG.in_size();
    }

    static void
    forward(const float* w, const float* b, const float* x, float* z1, float* cols, float* y, float* argmax,
            std::size_t n) noexcept
    {
        if constexpr (Conv::winograd) {   // the convolution into z1 from x itself, then the pooling
            float* ws = kernels::winograd_workspace<CG, F>();
            kernels::winograd_prepare_forward<CG, F>(w, ws);
            for (std::size_t s = 0; s < n; ++s) {
                kernels::winograd_forward<CG, F>(x + s * CG.in_size(), ws, z1, Conv::winograd_epilogue(b));
                kernels::max_pool_forward<PG>(z1, y + s * Pool::out, argmax + s * Pool::out);
            }
            return;
        }
        for (std::size_t s = 0; s < n; ++s) {
            const float* xs = x + s * CG.in_size();
            float* ys = y + s * Pool::out;
            float* as = argmax + s * Pool::out;
            if constexpr (Conv::framed)
                kernels::to_frame<CG>(xs, cols + s * P * K);
            if constexpr (pooled_in_tiles) {
                kernels::conv_pool_forward_in_place<RG, PG, F, typename Conv::epilogue>(windows(x, cols, s), w, b, ys,
                                                                                        as);
            } else {
                if constexpr (Conv::reads_in_place) {
                    Conv::forward_sample(windows(x, cols, s), w, b, z1);
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
    static constexpr std::size_t dx_scratch = Conv::winograd ? 0 : dx_as_conv ? kernels::dz_frame_size<CG, F> : P * K;
    /// Its scratch is one sample's (dx_scratch floats) rather than a block per sample.
    static constexpr bool one_sample_scratch = Conv::in_place || Conv::winograd;

    /// Without an input gradient to compute, backward writes dZ one band of pooling windows at a time and
    /// takes the kernel gradient of each band while it is in L1 (kernels::conv_pool_kernel_gradient).
    static constexpr bool in_bands = Conv::reads_in_place && kernels::pool_gradient_in_bands<RG, PG, F, Act>;

    /// Floats of one group's pooled gradients, (group, Q F).
    static constexpr std::size_t group_floats = group * Pool::out;

    /// The buffer for one group's pooled gradients: the region of the pair's layer (`layer`, its index
    /// in the model) in the thread's arena, or, with no arena bound, a buffer of the thread's own.
    static float*
    group_buffer(std::size_t layer)
    {
        if (kernels::scratch_arena* arena = kernels::detail::bound_arena())
            if (float* region = arena->layer(layer, group_floats))
                return region;
        thread_local std::vector<float> buffer(group_floats);
        return buffer.data();
    }

    /// What forward and backward ask of a thread's kernel scratch.
    static constexpr kernels::scratch_sizes
    kernel_scratch() noexcept
    {
        if constexpr (Conv::winograd)
            return kernels::winograd_scratch<CG, F>();
        kernels::scratch_sizes s = kernels::gemm_nn_scratch<F, K>(P);
        if constexpr (Conv::reads_in_place)
            s |= kernels::conv_in_place_scratch<RG, F>();
        else
            s |= kernels::gemm_nn_scratch<K, F>(P) | kernels::gemm_tn_scratch<K, F>();
        if constexpr (dx_as_conv)
            s |= kernels::conv_input_gradient_scratch<CG, F>();
        else
            s |= kernels::transposed_scratch_sizes<F, K>();
        return s;
    }

    /// Calls fn(i, s, dy) for the i-th sample backward takes, s, and its pooled gradient dy (in `reverse`
    /// order when the shapes ask), asking `pooled` for each group of `group` samples as the pass
    /// reaches it.
    template <class Pooled, class Fn>
    static void
    for_each_pooled(std::size_t n, const Pooled& pooled, Fn&& fn) noexcept
    {
        float* from = nullptr;   // sample s0's pooled gradient
        std::size_t s0 = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t s = reverse ? n - 1 - i : i;
            if (i % group == 0) {
                const std::size_t count = std::min(group, n - i);
                s0 = reverse ? n - i - count : i;
                from = pooled(s0, count);
            }
            fn(i, s, from + (s - s0) * Pool::out);
        }
    }

    /// While sample s's pooled gradient dys is in cache: act'(z) at each argmax (from the pooled value),
    /// the bias gradient (each pooled gradient lands on one z: the same sums; `accumulate`: a later
    /// sample), dZ (P, F).
    static void
    pooled_to_dz(const float* y, float* dys, const float* argmax, float* dz, float* db, std::size_t s,
                 bool accumulate) noexcept
    {
        if constexpr (kernels::pool_backward_through_act<PG, Act>) {
            kernels::max_pool_backward_through<PG, Act>(y + s * Pool::out, dys, argmax + s * Pool::out, dz, db,
                                                        accumulate);
        } else {
            constexpr std::size_t Q = Pool::out / F;   // pooled positions
            kernels::activation_backward<Act, F>(y + s * Pool::out, dys, dys, Q);
            column_sums<F>(dys, db, Q, accumulate);
            kernels::max_pool_backward<PG>(dys, argmax + s * Pool::out, dz);
        }
    }

    /// backward of a Winograd convolution (Conv::winograd): per sample, dZ from the pooled gradient
    /// into z1, then its share of dU and its input gradient from x and z1; dW from dU at the end.
    template <class Pooled>
    static void
    backward_winograd(const float* w, const float* x, const float* y, const Pooled& pooled, float* dx, float* dw,
                      float* db, float* z1, const float* argmax, std::size_t n) noexcept
    {
        float* ws = kernels::winograd_workspace<CG, F>();
        kernels::winograd_prepare_backward<CG, F>(w, ws, dx != nullptr);
        for_each_pooled(n, pooled, [&](std::size_t i, std::size_t s, float* dys) {
            pooled_to_dz(y, dys, argmax, z1, db, s, i > 0);
            kernels::winograd_backward<CG, F>(x + s * CG.in_size(), z1, ws, dx ? dx + s * CG.in_size() : nullptr, i == 0);
        });
        Conv::winograd_kernel_gradient(ws, dw, n);
    }

    template <class Pooled>
    static void
    backward(const float* w, const float* x, const float* y, const Pooled& pooled, float* dx, float* dw, float* db,
             float* cols, float* z1, const float* argmax, std::size_t n) noexcept
    {
        if constexpr (Conv::winograd) {
            backward_winograd(w, x, y, pooled, dx, dw, db, z1, argmax, n);
            return;
        }
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
        for_each_pooled(n, pooled, [&](std::size_t i, std::size_t s, float* dys) {
            float* cs = Conv::in_place ? cols : cols + s * P * K;   // in place: cols is dcols' buffer
            // No input gradient (a first layer): dZ one band of pooling windows at a time, in L1.
            if constexpr (in_bands)
                if (!dx) {
                    kernels::conv_pool_kernel_gradient<RG, PG, F, Act>(windows(x, cols, s), y + s * Pool::out, dys,
                                                                       argmax + s * Pool::out, z1, dw, db, i > 0);
                    return;
                }
            pooled_to_dz(y, dys, argmax, dz, db, s, i > 0);
            if constexpr (Conv::reads_in_place)
                kernels::conv_kernel_gradient_in_place<RG, F>(windows(x, cols, s), dz, dw, i > 0);
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
        });
    }
};


} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_DETAIL_CONV_POOL_PAIR_HPP
