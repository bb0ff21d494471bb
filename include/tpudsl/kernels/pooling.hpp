/// @file Defines max pooling over a compile-time window geometry, forward (with argmax) and backward.
#ifndef TPUDSL_KERNELS_POOLING_HPP
#define TPUDSL_KERNELS_POOLING_HPP

#include <tpudsl/kernels/window_geometry.hpp>

#include <cstddef>
#include <cstring>

namespace tpudsl::kernels {

/// y(out_h, out_w, channels) <- the maximum of each window of x, per channel; padded positions are
/// ignored (TensorFlow's "same" max pooling). `argmax` receives the flat input index of each maximum
/// (exact in a float up to 2^24), the first one on ties.
template <window_geometry G>
inline void
max_pool_forward(const float* x, float* y, float* argmax) noexcept
{
    constexpr std::size_t C = G.channels;
    for (std::size_t oh = 0; oh < G.out_h; ++oh)
        for (std::size_t ow = 0; ow < G.out_w; ++ow) {
            float* yo = y + (oh * G.out_w + ow) * C;
            float* ao = argmax + (oh * G.out_w + ow) * C;
            bool first = true;   // the first real element seeds each maximum, so NaN cannot leave it unset
            for (std::size_t kh = 0; kh < G.k_h; ++kh) {
                const std::size_t ih = oh * G.s_h + kh;
                if (ih < G.pad_top || ih - G.pad_top >= G.in_h)
                    continue;
                for (std::size_t kw = 0; kw < G.k_w; ++kw) {
                    const std::size_t iw = ow * G.s_w + kw;
                    if (iw < G.pad_left || iw - G.pad_left >= G.in_w)
                        continue;
                    const std::size_t base = ((ih - G.pad_top) * G.in_w + (iw - G.pad_left)) * C;
                    const float* xi = x + base;
                    if (first) {
                        for (std::size_t c = 0; c < C; ++c) {
                            yo[c] = xi[c];
                            ao[c] = static_cast<float>(base + c);
                        }
                    } else {
                        // Selects, not branches: real images make the comparison unpredictable.
                        for (std::size_t c = 0; c < C; ++c) {
                            const bool greater = xi[c] > yo[c];
                            yo[c] = greater ? xi[c] : yo[c];
                            ao[c] = greater ? static_cast<float>(base + c) : ao[c];
                        }
                    }
                    first = false;
                }
            }
        }
}

/// dx <- dy routed to the argmax of each window (summed where windows overlap).
template <window_geometry G>
inline void
max_pool_backward(const float* dy, const float* argmax, float* dx) noexcept
{
    std::memset(dx, 0, G.in_size() * sizeof(float));
    for (std::size_t i = 0; i < G.positions() * G.channels; ++i)
        dx[static_cast<std::size_t>(argmax[i])] += dy[i];
}

} // namespace tpudsl::kernels

#endif // !TPUDSL_KERNELS_POOLING_HPP
