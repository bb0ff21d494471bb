/// @file Defines the sliding-window arithmetic shared by Conv1D, Conv2D, MaxPool1D and MaxPool2D (private).
#ifndef TPUDSL_DETAIL_SLIDING_WINDOW_HPP
#define TPUDSL_DETAIL_SLIDING_WINDOW_HPP

#include <tpudsl/core/padding.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/detail/diagnostics.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>

namespace tpudsl::detail {

/// A window of `N` spatial dimensions (1: steps; 2: rows, cols) sliding over a channels-last input
/// of rank N + 1. Layers keep their own rules: `needs_rank` and `too_large` are the rules a wrong rank
/// or a window that does not fit break for that layer.
/// @tparam Pad       Valid or Same
/// @tparam N         spatial dimensions
/// @tparam Window    window extents
/// @tparam Stride    strides
template <class Pad, std::size_t N, std::array<std::size_t, N> Window, std::array<std::size_t, N> Stride>
struct sliding_window {
    static constexpr std::array<std::size_t, N> window = Window;
    static constexpr std::array<std::size_t, N> stride = Stride;
    static constexpr std::size_t window_size = [] {
        std::size_t n = 1;
        for (std::size_t k : Window)
            n *= k;
        return n;
    }();

    [[nodiscard]] static constexpr bool
    has_zero_window() noexcept
    {
        return std::ranges::find(Window, std::size_t{0}) != Window.end();
    }
    [[nodiscard]] static constexpr bool
    has_zero_stride() noexcept
    {
        return std::ranges::find(Stride, std::size_t{0}) != Stride.end();
    }

    /// The layer's `ok` (its rule enum's zero) when `S` is rank N + 1 and the window fits every
    /// spatial dimension; otherwise the layer's rule for a wrong rank or a window that does not fit.
    template <class S, class Rule>
    [[nodiscard]] static consteval Rule
    check_input(Rule needs_rank, Rule too_large) noexcept
    {
        if constexpr (S::rank != N + 1) {
            return needs_rank;
        } else {
            for (std::size_t d = 0; d < N; ++d)
                if (window_output<Pad>(S::dims[d], Window[d], Stride[d]) == 0)
                    return too_large;
            return Rule{};
        }
    }

    /// The output extents: spatial ones by Keras' arithmetic, then `channels`.
    template <class S, std::size_t Channels>
    static constexpr std::array<std::size_t, N + 1> output_dims = [] {
        std::array<std::size_t, N + 1> out{};
        for (std::size_t d = 0; d < N; ++d)
            out[d] = window_output<Pad>(S::dims[d], Window[d], Stride[d]);
        out[N] = Channels;
        return out;
    }();

    template <class S, std::size_t Channels>
    using output_shape = shape_from_array_t<output_dims<S, Channels>>;

    /// Positions of the window over one sample (the product of the spatial output extents).
    template <class S>
    static constexpr std::size_t positions = shape_from_array_t<output_dims<S, 1>>::size;

    /// The smallest input of the right rank the window fits, keeping S's channels; or any input of rank N + 1.
    template <class S>
    static consteval auto
    expects_impl() noexcept
    {
        if constexpr (S::rank == N + 1) {
            constexpr auto dims = [] {
                std::array<std::size_t, N + 1> e{};
                for (std::size_t d = 0; d < N; ++d)
                    e[d] = std::max(S::dims[d], Window[d]);
                e[N] = S::dims[N];
                return e;
            }();
            return std::type_identity<shape_from_array_t<dims>>{};
        } else {
            return std::type_identity<any_shape_of_rank<N + 1>>{};
        }
    }
    template <class S>
    using expects = typename decltype(expects_impl<S>())::type;
};

} // namespace tpudsl::detail

#endif // !TPUDSL_DETAIL_SLIDING_WINDOW_HPP
