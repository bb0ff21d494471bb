/// @file Defines global_pooling, the spec of the global poolings (their names, rules, expected input,
/// output and ops), and the whole-input window they run.
#ifndef TPUDSL_LAYERS_DETAIL_GLOBAL_POOL_HPP
#define TPUDSL_LAYERS_DETAIL_GLOBAL_POOL_HPP

#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/detail/diagnostics.hpp>
#include <tpudsl/kernels/window_geometry.hpp>
#include <tpudsl/layers/detail/window_rules.hpp>
#include <tpudsl/layers/layer_base.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl::detail {

template <kernels::window_geometry G, bool Max>
struct pooling_core;   // layers/detail/pool_core.hpp
template <class Binding>
struct pooling_ops;   // layers/detail/pool_core.hpp
template <bool Max>
struct global_binding;

/// Keras' class names of the global poolings and their auto-names' prefixes, by [Max][N - 1].
inline constexpr std::string_view global_pool_class_names[2][2] = {
    {"GlobalAveragePooling1D", "GlobalAveragePooling2D"}, {"GlobalMaxPooling1D", "GlobalMaxPooling2D"}};
inline constexpr std::string_view global_pool_base_names[2][2] = {
    {"global_average_pooling1d", "global_average_pooling2d"}, {"global_max_pooling1d", "global_max_pooling2d"}};

/// A pooling of every position of a channels-last input of rank N + 1 (N = 1: steps; N = 2: rows,
/// cols) down to one value per channel: (..., C) -> (C), as Keras' global poolings with
/// keepdims=False; its ops are a max pooling's (Max) or an average pooling's over one window, the
/// whole input (global_binding).
template <std::size_t N, bool Max>
struct global_pooling : layer_base {
    static constexpr bool position_independent = true;
    static constexpr std::string_view class_name = global_pool_class_names[Max][N - 1];
    static constexpr std::string_view base_name = global_pool_base_names[Max][N - 1];
    using ops = pooling_ops<global_binding<Max>>;
    using rule = global_pool_rule;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval rule
    check() noexcept
    {
        if constexpr (In::shape::rank != N + 1)
            return N == 1 ? rule::needs_rank2 : rule::needs_rank3;
        else
            return rule::ok;
    }

    template <rule R>
    using diagnostic = global_pool_diagnostic<R>;

    template <class In>
    using expects = std::conditional_t<In::shape::rank == N + 1, typename In::shape, any_shape_of_rank<N + 1>>;

    template <class In>
    using output = tensor<Shape<In::shape::dims[N]>>;

    /// A max pooling's index of each channel's maximum, for the backward pass.
    template <class In>
    static constexpr std::size_t scratch_size = Max ? In::shape::dims[N] : 0;
};

/// The one window of a global pooling over a sample of shape S, (steps, C) or (rows, cols, C): the
/// whole input, a 1-D input being one row.
template <class S>
inline constexpr kernels::window_geometry global_geometry = [] {
    constexpr bool one_d = S::rank == 2;
    constexpr std::size_t h = one_d ? 1 : S::dims[0], w = S::dims[one_d ? 0 : 1], c = S::dims[S::rank - 1];
    return kernels::window_geometry{h, w, c, h, w, h, w, 1, 1, 0, 0};
}();

/// Which core a bound global pooling runs: a max (Max) or an average pooling over the whole input.
template <bool Max>
struct global_binding {
    template <class B>
    using core = pooling_core<global_geometry<typename B::input_shape>, Max>;
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_DETAIL_GLOBAL_POOL_HPP
