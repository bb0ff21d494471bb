/// @file Scalar reference of a 2-D convolution (direct loops, double accumulation), forward and
/// backward, and of max and average pooling; a 1-D window is the case in_h = k_h = 1. The oracle of
/// the im2col + GEMM path and of the pooling kernels.
#ifndef TPUDSL_KERNELS_REFERENCE_SCALAR_CONV_HPP
#define TPUDSL_KERNELS_REFERENCE_SCALAR_CONV_HPP

#include <tpudsl/kernels/window_geometry.hpp>

#include <cstddef>
#include <vector>

namespace tpudsl::kernels::reference {

/// The input index under output (oh, ow) and window (kh, kw), or false when it falls in the padding.
inline bool
input_at(const window_geometry& g, std::size_t oh, std::size_t ow, std::size_t kh, std::size_t kw, std::size_t& ih,
         std::size_t& iw) noexcept
{
    const std::size_t ph = oh * g.s_h + kh, pw = ow * g.s_w + kw;
    if (ph < g.pad_top || pw < g.pad_left)
        return false;
    ih = ph - g.pad_top;
    iw = pw - g.pad_left;
    return ih < g.in_h && iw < g.in_w;
}

/// Calls f(ih, iw, kh, kw) for each input under output (oh, ow) that is not padding, kh then kw in
/// order.
template <class F>
inline void
for_window_inputs(const window_geometry& g, std::size_t oh, std::size_t ow, F&& f)
{
    for (std::size_t kh = 0; kh < g.k_h; ++kh)
        for (std::size_t kw = 0; kw < g.k_w; ++kw) {
            std::size_t ih, iw;
            if (input_at(g, oh, ow, kh, kw, ih, iw))
                f(ih, iw, kh, kw);
        }
}

/// y(out_h, out_w, F) = b + sum x(ih, iw, c) w(kh, kw, c, F) for one sample (no activation).
inline void
conv2d_forward(const window_geometry& g, std::size_t filters, const float* x, const float* w, const float* b, float* y)
{
    for (std::size_t oh = 0; oh < g.out_h; ++oh)
        for (std::size_t ow = 0; ow < g.out_w; ++ow)
            for (std::size_t f = 0; f < filters; ++f) {
                double s = b[f];
                for_window_inputs(g, oh, ow, [&](std::size_t ih, std::size_t iw, std::size_t kh, std::size_t kw) {
                    for (std::size_t c = 0; c < g.channels; ++c)
                        s += static_cast<double>(x[(ih * g.in_w + iw) * g.channels + c]) *
                             w[((kh * g.k_w + kw) * g.channels + c) * filters + f];
                });
                y[(oh * g.out_w + ow) * filters + f] = static_cast<float>(s);
            }
}

/// Gradients of one sample: dw += ..., db += ..., dx = ... (dx overwritten).
inline void
conv2d_backward(const window_geometry& g, std::size_t filters, const float* x, const float* w, const float* dy,
                float* dw, float* db, float* dx)
{
    std::vector<double> gx(g.in_size(), 0.0);
    for (std::size_t oh = 0; oh < g.out_h; ++oh)
        for (std::size_t ow = 0; ow < g.out_w; ++ow)
            for (std::size_t f = 0; f < filters; ++f) {
                const double d = dy[(oh * g.out_w + ow) * filters + f];
                db[f] += static_cast<float>(d);
                for_window_inputs(g, oh, ow, [&](std::size_t ih, std::size_t iw, std::size_t kh, std::size_t kw) {
                    for (std::size_t c = 0; c < g.channels; ++c) {
                        const std::size_t wi = ((kh * g.k_w + kw) * g.channels + c) * filters + f;
                        const std::size_t xi = (ih * g.in_w + iw) * g.channels + c;
                        dw[wi] += static_cast<float>(d * x[xi]);
                        gx[xi] += d * w[wi];
                    }
                });
            }
    for (std::size_t i = 0; i < gx.size(); ++i)
        dx[i] = static_cast<float>(gx[i]);
}

/// Max pooling of one sample: y and the gradient routed to the first maximum of each window.
inline void
max_pool(const window_geometry& g, const float* x, float* y, const float* dy, float* dx)
{
    for (std::size_t i = 0; i < g.in_size(); ++i)
        dx[i] = 0.0f;
    for (std::size_t oh = 0; oh < g.out_h; ++oh)
        for (std::size_t ow = 0; ow < g.out_w; ++ow)
            for (std::size_t c = 0; c < g.channels; ++c) {
                bool found = false;
                float best = 0.0f;
                std::size_t at = 0;
                for_window_inputs(g, oh, ow, [&](std::size_t ih, std::size_t iw, std::size_t, std::size_t) {
                    const std::size_t xi = (ih * g.in_w + iw) * g.channels + c;
                    if (!found || x[xi] > best) {
                        best = x[xi];
                        at = xi;
                        found = true;
                    }
                });
                const std::size_t yi = (oh * g.out_w + ow) * g.channels + c;
                y[yi] = best;
                dx[at] += dy[yi];
            }
}

/// Average pooling of one sample: y the mean of each window's real elements (padding not counted),
/// and the gradient dy / count spread over them (dx overwritten).
inline void
average_pool(const window_geometry& g, const float* x, float* y, const float* dy, float* dx)
{
    std::vector<double> gx(g.in_size(), 0.0);
    for (std::size_t oh = 0; oh < g.out_h; ++oh)
        for (std::size_t ow = 0; ow < g.out_w; ++ow)
            for (std::size_t c = 0; c < g.channels; ++c) {
                double sum = 0.0;
                std::size_t count = 0;
                for_window_inputs(g, oh, ow, [&](std::size_t ih, std::size_t iw, std::size_t, std::size_t) {
                    sum += x[(ih * g.in_w + iw) * g.channels + c];
                    ++count;
                });
                const std::size_t yi = (oh * g.out_w + ow) * g.channels + c;
                y[yi] = static_cast<float>(sum / static_cast<double>(count));
                for_window_inputs(g, oh, ow, [&](std::size_t ih, std::size_t iw, std::size_t, std::size_t) {
                    gx[(ih * g.in_w + iw) * g.channels + c] += dy[yi] / static_cast<double>(count);
                });
            }
    for (std::size_t i = 0; i < gx.size(); ++i)
        dx[i] = static_cast<float>(gx[i]);
}

} // namespace tpudsl::kernels::reference

#endif // !TPUDSL_KERNELS_REFERENCE_SCALAR_CONV_HPP
