/// @file Defines conv_core, the forward and backward pass of a convolution of a given window geometry
/// (Conv1D and Conv2D are both one), and conv_layer_ops, their ops once a binding names the core.
#ifndef TPUDSL_LAYERS_DETAIL_CONV_CORE_HPP
#define TPUDSL_LAYERS_DETAIL_CONV_CORE_HPP

#include <tpudsl/config.hpp>
#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/core/padding.hpp>
#include <tpudsl/kernels/activation_math.hpp>
#include <tpudsl/kernels/direct_conv.hpp>
#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/kernels/im2col.hpp>
#include <tpudsl/kernels/window_geometry.hpp>
#include <tpudsl/kernels/winograd.hpp>
#include <tpudsl/layers/detail/linear.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <algorithm>
#include <cstddef>
#include <type_traits>

namespace tpudsl::detail {

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
    /// A padded convolution's windows in its zero frame (kernels::to_frame): a frame per sample in the
    /// scratch, read in place by the path of the frame's geometry (the same values as im2col's rows, a
    /// copy of the input instead of k_h k_w copies).
    static constexpr kernels::window_geometry frame = kernels::frame_geometry<G>;
    static constexpr bool framed = !softmax && !in_place && frame.in_size() <= P * K;
    /// The in-place kernels read the windows (of x itself, or of its frame) by this geometry.
    static constexpr bool reads_in_place = in_place || framed;
    static constexpr kernels::window_geometry read_geometry = framed ? frame : G;
    /// The input gradient as a convolution of each sample's dZ in a frame of zeros under the flipped
    /// kernel (kernels::input_gradient_as_conv: stride 1, read in place by strided or window rows), the
    /// frame at the start of the scratch once the kernel gradient has read the windows. It writes no
    /// window gradients (dcols: P K floats a sample, 1 MB for CIFAR-10's second convolution, written
    /// and read back by col2im), but it multiplies dZ's zero border too: in_h in_w window sums where
    /// dcols holds out_h out_w. Taken where that is at most a quarter more (a Same convolution: none;
    /// 32 x 32 from 30 x 30: 14%; 15 x 15 from 13 x 13, 33%, is past the bound), with at least 16
    /// channels (a narrower C wastes its vectors); otherwise dcols = dZ . W^T, then col2im.
    static constexpr bool dx_as_conv = reads_in_place && kernels::input_gradient_as_conv<G> && G.channels >= 16 &&
                                       4 * G.in_h * G.in_w <= 5 * G.out_h * G.out_w &&
                                       kernels::dz_frame_size<G, F> <= P * K;
    /// The activation applied in the GEMM's epilogue (the others run as a pass after it).
    static constexpr bool epilogue_activation = EpilogueActivation<Act>;
    using epilogue = std::conditional_t<epilogue_activation, Act, Linear>;
    /// A 3 x 3 convolution of stride 1 over at least 16 channels runs as Winograd F(m x m, 3 x 3)
    /// (kernels::winograd_fits, kernels::winograd_tile): 36 products per 4 x 4 outputs and channel
    /// (or 16 per 2 x 2) where the other paths take 144 (36), padding read as zeros where a tile
    /// passes the input's edge (no frame, no im2col). Its bits are not im2col's: within a few float
    /// roundings of the direct sum (TPUDSL_WINOGRAD=0 turns it off: config.hpp).
    static constexpr bool winograd = TPUDSL_WINOGRAD && !softmax && epilogue_activation && kernels::winograd_fits<G, F>;
    static kernels::detail::epilogue
    winograd_epilogue(const float* b) noexcept
    {
        return kernels::detail::bias_epilogue_for<epilogue>(b);
    }

    /// Where sample s's windows are read (reads_in_place): in x, or in the frame forward left in the
    /// scratch.
    static const float*
    windows(const float* x, const float* scratch, std::size_t s) noexcept
    {
        return framed ? scratch + s * frame.in_size() : x + s * G.in_size();
    }

    static float*
    logits(float* scratch, std::size_t n) noexcept
    {
        return scratch + n * P * K;
    }

    /// What forward and backward on up to `samples` samples ask of a thread's kernel scratch.
    static constexpr kernels::scratch_sizes
    kernel_scratch(std::size_t samples) noexcept
    {
        if constexpr (winograd)
            return kernels::winograd_scratch<G, F>();
        else if constexpr (dx_as_conv)
            return kernels::conv_in_place_scratch<read_geometry, F>() | kernels::conv_input_gradient_scratch<G, F>();
        else if constexpr (in_place)
            return kernels::conv_in_place_scratch<G, F>() | kernels::gemm_nt_scratch<F, K>(samples * P, false);
        else if constexpr (framed)
            return kernels::conv_in_place_scratch<frame, F>() | kernels::gemm_nt_scratch<F, K>(samples * P, false);
        else
            return kernels::gemm_nn_scratch<K, F>(samples * P) | kernels::gemm_tn_scratch<K, F>() |
                   kernels::gemm_nt_scratch<F, K>(samples * P, false);
    }

    /// z(P, F) = act(conv(x) + b) for one sample, read in place (reads_in_place): `windows` is the
    /// sample itself, or its frame (framed).
    static void
    forward_sample(const float* windows, const float* w, const float* b, float* z) noexcept
    {
        kernels::conv_forward_in_place<read_geometry, F, epilogue>(windows, w, b, z);
        if constexpr (!epilogue_activation)
            kernels::activation_forward<Act, F>(z, P);
    }

    static void
    forward(const float* w, const float* b, const float* x, float* y, float* scratch, std::size_t n) noexcept
    {
        if constexpr (winograd) {
            float* ws = kernels::winograd_workspace<G, F>();
            kernels::winograd_prepare_forward<G, F>(w, ws);
            for (std::size_t s = 0; s < n; ++s)
                kernels::winograd_forward<G, F>(x + s * G.in_size(), ws, y + s * P * F, winograd_epilogue(b));
        } else if constexpr (reads_in_place) {
            for (std::size_t s = 0; s < n; ++s) {
                if constexpr (framed)
                    kernels::to_frame<G>(x + s * G.in_size(), scratch + s * frame.in_size());
                forward_sample(windows(x, scratch, s), w, b, y + s * P * F);
            }
        } else {
            for (std::size_t s = 0; s < n; ++s)
                kernels::im2col<G>(x + s * G.in_size(), scratch + s * P * K);
            linear_forward<K, F, Act>(n * P, scratch, w, b, y, logits(scratch, n));   // (n P, F) = (n P, K) . (K, F)
        }
    }

    /// dW of the n samples winograd_backward took in the workspace ws (zeros when n is 0).
    static void
    winograd_kernel_gradient(const float* ws, float* dw, std::size_t n) noexcept
    {
        if (n > 0)
            kernels::winograd_kernel_gradient<G, F>(ws, dw, false);
        else
            std::fill_n(dw, K * F, 0.0f);
    }

    static void
    backward(const float* w, const float* x, const float* y, float* dy, float* dx, float* dw, float* db,
             float* scratch, std::size_t n, bool dy_is_logit_grad) noexcept
    {
        if constexpr (winograd) {   // dx and dy are the graph's two deltas: never the same memory
            // Relu's derivative and the bias gradient as the tiles read dy (Linear's is 1).
            const float* relu = std::is_same_v<Act, Relu> && !dy_is_logit_grad ? y : nullptr;
            float* ws = kernels::winograd_workspace<G, F>();
            kernels::winograd_prepare_backward<G, F>(w, ws, dx != nullptr);
            std::fill_n(db, F, 0.0f);
            for (std::size_t s = 0; s < n; ++s)
                kernels::winograd_backward<G, F>(x + s * G.in_size(), dy + s * P * F, ws,
                                                 dx ? dx + s * G.in_size() : nullptr, s == 0,
                                                 relu ? relu + s * P * F : nullptr, db);
            winograd_kernel_gradient(ws, dw, n);
            return;
        }
        if (!dy_is_logit_grad)
            kernels::activation_backward<Act, F>(y, dy, dy, n * P);
        if constexpr (reads_in_place) {
            for (std::size_t s = 0; s < n; ++s)   // dW (K, F) += windows^T . dZ, sample by sample
                kernels::conv_kernel_gradient_in_place<read_geometry, F>(windows(x, scratch, s), dy + s * P * F, dw,
                                                                         s > 0);
        } else {
            kernels::gemm_tn<K, F>(n * P, scratch, dy, dw, false);   // dW (K, F) = cols^T . dZ
        }
        column_sums<F>(dy, db, n * P);
        if (!dx)
            return;
        if constexpr (dx_as_conv) {   // one sample's dZ at a time in the frame, its border zero
            std::fill_n(scratch, kernels::dz_frame_size<G, F>, 0.0f);
            const float* wf = kernels::flipped_kernel_scratch<G, F>(w);
            for (std::size_t s = 0; s < n; ++s) {
                kernels::frame_dz<G, F>(dy + s * P * F, scratch);
                kernels::conv_input_gradient_in_place<G, F>(scratch, wf, dx + s * G.in_size());
            }
        } else {
            kernels::gemm_nt<F, K>(n * P, dy, w, scratch);   // dcols (n P, K) = dZ . W^T, over the cols
            for (std::size_t s = 0; s < n; ++s)
                kernels::col2im<G>(scratch + s * P * K, dx + s * G.in_size());
        }
    }
};


/// The geometry of a 1-D window over (L, C) as a 2-D one over (1, L, C).
template <class Pad, class InShape, class OutShape, std::size_t K, std::size_t S>
inline constexpr kernels::window_geometry geometry_1d{
    1, InShape::dims[0], InShape::dims[1], 1, K, 1, S, 1, OutShape::dims[0], 0,
    pad_before<Pad>(InShape::dims[0], K, S)};

/// The geometry of a 2-D window over (H, W, C).
template <class Pad, class InShape, class OutShape, std::size_t KH, std::size_t KW, std::size_t SH, std::size_t SW>
inline constexpr kernels::window_geometry geometry_2d{
    InShape::dims[0], InShape::dims[1], InShape::dims[2], KH, KW, SH, SW, OutShape::dims[0], OutShape::dims[1],
    pad_before<Pad>(InShape::dims[0], KH, SH), pad_before<Pad>(InShape::dims[1], KW, SW)};


/// The ops of a convolution, once `Binding::core<B>` says which conv_core a bound layer B runs.
template <class Binding>
struct conv_layer_ops {
    template <class B>
    using core = typename Binding::template core<B>;

    template <class B>
    static float*
    logits(float* scratch, std::size_t n) noexcept
    {
        return core<B>::logits(scratch, n);
    }

    template <class B>
    static constexpr kernels::scratch_sizes
    scratch(const kernels::scratch_rows& rows) noexcept
    {
        return core<B>::kernel_scratch(rows.micro_batch);
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


} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_DETAIL_CONV_CORE_HPP
