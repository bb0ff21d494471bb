/// @file Defines tpudsl::Conv2D, Keras' spatial convolution (channels last).
#ifndef TPUDSL_LAYERS_CONV2D_HPP
#define TPUDSL_LAYERS_CONV2D_HPP

#include <tpudsl/core/activations.hpp>
#include <tpudsl/core/padding.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weights.hpp>
#include <tpudsl/detail/diagnostics.hpp>

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

/// `Conv2D(filters, kernel_size, strides, padding, activation)` on (rows, cols, channels): gives
/// (out_rows, out_cols, Filters). `Conv2D<64, 3>` is a square 3x3 kernel; `Conv2D<64, Size2{3, 5}>`
/// a rectangular one; strides likewise.
/// Weights: kernel (kh, kw, in_channels, Filters), bias (Filters).
/// @tparam Filters output channels, > 0
/// @tparam Kernel  window: an integer (square) or a `Size2{rows, cols}`
/// @tparam Act     activation fused into the layer
/// @tparam Pad     `Valid` (default) or `Same`
/// @tparam Stride  step: an integer or a `Size2{rows, cols}`
template <std::size_t Filters, auto Kernel, ActivationType Act = Linear, PaddingType Pad = Valid, auto Stride = 1>
    requires detail::WindowArg<Kernel> && detail::WindowArg<Stride>
struct Conv2D {
    static constexpr std::string_view class_name = "Conv2D";
    static constexpr std::string_view base_name = "conv2d";
    static constexpr std::size_t filters = Filters;
    static constexpr std::size_t kernel_rows = detail::rows_of<Kernel>;
    static constexpr std::size_t kernel_cols = detail::cols_of<Kernel>;
    static constexpr std::size_t stride_rows = detail::rows_of<Stride>;
    static constexpr std::size_t stride_cols = detail::cols_of<Stride>;
    using activation = Act;
    using padding = Pad;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval detail::rule
    check() noexcept
    {
        using enum detail::rule;
        using S = typename In::shape;
        if (Filters == 0)
            return conv_zero_filters;
        if (kernel_rows == 0 || kernel_cols == 0)
            return conv_zero_kernel;
        if (stride_rows == 0 || stride_cols == 0)
            return conv_zero_stride;
        if (!std::is_floating_point_v<typename In::value_type>)
            return needs_float_input;
        if constexpr (S::rank != 3)
            return conv2d_needs_rank3;
        else if (detail::window_output<Pad>(S::dims[0], kernel_rows, stride_rows) == 0 ||
                 detail::window_output<Pad>(S::dims[1], kernel_cols, stride_cols) == 0)
            return conv_kernel_too_large;
        return ok;
    }

    template <class In>
    static consteval auto
    expects_impl() noexcept
    {
        using S = typename In::shape;
        if constexpr (S::rank == 3)
            return std::type_identity<
                Shape<std::max(S::dims[0], kernel_rows), std::max(S::dims[1], kernel_cols), S::dims[2]>>{};
        else
            return std::type_identity<detail::any_shape_of_rank<3>>{};
    }
    template <class In>
    using expects = typename decltype(expects_impl<In>())::type;

    template <class In>
    using output = detail::tensor<Shape<detail::window_output<Pad>(In::shape::dims[0], kernel_rows, stride_rows),
                                        detail::window_output<Pad>(In::shape::dims[1], kernel_cols, stride_cols),
                                        Filters>>;

    template <class In>
    using weights =
        weight_list<weight<weight_role::kernel, Shape<kernel_rows, kernel_cols, In::shape::dims[2], Filters>>,
                    weight<weight_role::bias, Shape<Filters>>>;

    /// im2col rows of one sample: (out_rows * out_cols, kh * kw * in_channels).
    template <class In>
    static constexpr std::size_t scratch_size = output<In>::shape::size / Filters * kernel_rows * kernel_cols *
                                                In::shape::dims[2];
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_CONV2D_HPP
