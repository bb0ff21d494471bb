/// @file Defines window_geometry: a 2-D sliding window over a channels-last sample, as a constant
/// (a 1-D window is the case in_h = k_h = 1).
#ifndef TPUDSL_KERNELS_WINDOW_GEOMETRY_HPP
#define TPUDSL_KERNELS_WINDOW_GEOMETRY_HPP

#include <cstddef>

namespace tpudsl::kernels {

struct window_geometry {
    std::size_t in_h, in_w, channels;   // input (in_h, in_w, channels)
    std::size_t k_h, k_w;               // window
    std::size_t s_h, s_w;               // strides
    std::size_t out_h, out_w;           // output positions
    std::size_t pad_top, pad_left;      // zero padding before the first row / column ("same")

    [[nodiscard]] constexpr std::size_t in_size() const noexcept { return in_h * in_w * channels; }
    [[nodiscard]] constexpr std::size_t positions() const noexcept { return out_h * out_w; }
    /// Length of one im2col row: (k_h, k_w, channels), the layout of a Keras conv kernel's rows.
    [[nodiscard]] constexpr std::size_t patch() const noexcept { return k_h * k_w * channels; }
    /// True when every window lies inside the input: nothing is read as padding (a "same" window with
    /// no padding before can still pass the last row or column).
    [[nodiscard]] constexpr bool
    windows_inside() const noexcept
    {
        return pad_top == 0 && pad_left == 0 && (out_h - 1) * s_h + k_h <= in_h && (out_w - 1) * s_w + k_w <= in_w;
    }
};

/// True when the windows of G tile its input: stride = window, every window inside it (rows and
/// columns past the last window are read by none). Each window then owns its elements.
template <window_geometry G>
inline constexpr bool windows_tile = G.s_h == G.k_h && G.s_w == G.k_w && G.windows_inside();

} // namespace tpudsl::kernels

#endif // !TPUDSL_KERNELS_WINDOW_GEOMETRY_HPP
