/// @file Defines the padding tags Valid and Same, Size2, and Keras' output-length arithmetic.
#ifndef TPUDSL_CORE_PADDING_HPP
#define TPUDSL_CORE_PADDING_HPP

#include <array>
#include <concepts>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

/// `padding="valid"`: no padding; the window must fit inside the input.
struct Valid {
    static constexpr std::string_view name = "valid";
};
/// `padding="same"`: output length `ceil(L / stride)`, zero padding split with the extra on the end.
struct Same {
    static constexpr std::string_view name = "same";
};

template <class P>
concept PaddingType = std::is_same_v<P, Valid> || std::is_same_v<P, Same>;

/// A rectangular window or stride, `(rows, cols)`: `Conv2D<32, Size2{3, 5}>`. A plain integer
/// means a square one, as Keras' `kernel_size=3`.
struct Size2 {
    std::size_t rows;
    std::size_t cols;
};

namespace detail {

/// A 2-D window (or stride) given as an integer (square) or a Size2: {rows, cols}.
template <auto K>
inline constexpr std::array<std::size_t, 2> extents_2d = [] {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(K)>, Size2>) {
        return std::array<std::size_t, 2>{K.rows, K.cols};
    } else {
        const auto k = static_cast<std::size_t>(K > 0 ? K : 0);
        return std::array<std::size_t, 2>{k, k};
    }
}();

/// Rows of a 2-D window given as an integer or a Size2.
template <auto K>
inline constexpr std::size_t rows_of = extents_2d<K>[0];

/// Columns of a 2-D window given as an integer or a Size2.
template <auto K>
inline constexpr std::size_t cols_of = extents_2d<K>[1];

/// An integer or a Size2 with both sides non-zero.
template <auto K>
concept WindowArg = std::is_same_v<std::remove_cvref_t<decltype(K)>, Size2> || std::integral<std::remove_cvref_t<decltype(K)>>;

/// Output length of a window of `k` sliding with `stride` over `len` (keras-semantics §1.1):
/// valid `floor((len - k) / stride) + 1` (0 when the window does not fit), same `ceil(len / stride)`.
template <class Pad>
[[nodiscard]] constexpr std::size_t
window_output(std::size_t len, std::size_t k, std::size_t stride) noexcept
{
    if (stride == 0)
        return 0;
    if constexpr (std::is_same_v<Pad, Same>)
        return (len + stride - 1) / stride;
    else
        return len < k ? 0 : (len - k) / stride + 1;
}

/// Zero padding before the first element under "same" (the extra one goes to the end, as in TF).
template <class Pad>
[[nodiscard]] constexpr std::size_t
pad_before(std::size_t len, std::size_t k, std::size_t stride) noexcept
{
    if constexpr (std::is_same_v<Pad, Same>) {
        const std::size_t out = window_output<Same>(len, k, stride);
        const std::size_t need = (out - 1) * stride + k;
        return need > len ? (need - len) / 2 : 0;
    } else {
        return 0;
    }
}

} // namespace detail
} // namespace tpudsl

#endif // !TPUDSL_CORE_PADDING_HPP
