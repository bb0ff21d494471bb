/// @file Defines window_spec, the spec Conv1D, Conv2D and the max and average poolings share: one
/// window sliding over a channels-last input, its rules, expected input and output.
#ifndef TPUDSL_LAYERS_DETAIL_WINDOW_SPEC_HPP
#define TPUDSL_LAYERS_DETAIL_WINDOW_SPEC_HPP

#include <tpudsl/core/padding.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/detail/sliding_window.hpp>
#include <tpudsl/layers/detail/window_rules.hpp>
#include <tpudsl/layers/layer_base.hpp>

#include <array>
#include <cstddef>

namespace tpudsl::detail {

/// A window layer's rules for window_spec: its enum (conv_rule or pool_rule), which of them a window
/// of no extent and a window that does not fit break, and its messages.
template <class Rule, Rule ZeroWindow, Rule TooLarge, template <Rule> class Diagnostic>
struct window_rule_set {
    using rule = Rule;
    static constexpr Rule zero_window = ZeroWindow;
    static constexpr Rule too_large = TooLarge;
    template <Rule R>
    using diagnostic = Diagnostic<R>;
};

using conv_rules = window_rule_set<conv_rule, conv_rule::zero_kernel, conv_rule::kernel_too_large, conv_diagnostic>;
using pool_rules = window_rule_set<pool_rule, pool_rule::zero_size, pool_rule::window_too_large, pool_diagnostic>;

/// A 1-D window (or stride) as window_spec takes it (a 2-D one: extents_2d, core/padding.hpp).
template <std::size_t K>
inline constexpr std::array<std::size_t, 1> extents_1d{K};

/// What a layer sliding one window of N spatial dimensions over a channels-last input of rank N + 1
/// shares: its padding and window, its rules (checked in this order: no filters, a window or a stride
/// of no extent, the input's rank, a window that does not fit), the input it expects and its output,
/// the window's positions by `Filters` channels (a convolution) or by the input's own (a pooling,
/// which gives no Filters).
/// @tparam Pad     Valid or Same
/// @tparam N       spatial dimensions (1: steps; 2: rows, cols)
/// @tparam Window  window extents
/// @tparam Stride  strides
/// @tparam Rules   the layer's rules: conv_rules or pool_rules
/// @tparam Filters a convolution's output channels
template <class Pad, std::size_t N, std::array<std::size_t, N> Window, std::array<std::size_t, N> Stride, class Rules,
          std::size_t... Filters>
struct window_spec : layer_base {
    static constexpr bool position_independent = true;
    using padding = Pad;
    using window = sliding_window<Pad, N, Window, Stride>;
    using rule = typename Rules::rule;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval rule
    check() noexcept
    {
        if constexpr (sizeof...(Filters) != 0) {
            if (((Filters == 0) || ...))
                return rule::zero_filters;
        }
        if (window::has_zero_window())
            return Rules::zero_window;
        if (window::has_zero_stride())
            return rule::zero_stride;
        return window::template check_input<typename In::shape>(N == 1 ? rule::needs_rank2 : rule::needs_rank3,
                                                                Rules::too_large);
    }

    template <rule R>
    using diagnostic = typename Rules::template diagnostic<R>;

    template <class In>
    using expects = typename window::template expects<typename In::shape>;

    template <class In>
    using output = tensor<typename window::template output_shape<
        typename In::shape, sizeof...(Filters) != 0 ? (Filters + ... + 0) : In::shape::dims[N]>>;
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_DETAIL_WINDOW_SPEC_HPP
