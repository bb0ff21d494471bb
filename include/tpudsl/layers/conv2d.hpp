/// @file Defines tpudsl::Conv2D, Keras' spatial convolution (channels last).
#ifndef TPUDSL_LAYERS_CONV2D_HPP
#define TPUDSL_LAYERS_CONV2D_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/core/padding.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/layers/detail/window_spec.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

namespace detail {
template <class Spec>
struct conv2d_ops;   // layers/conv2d_ops.hpp
} // namespace detail

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
struct Conv2D
    : detail::window_spec<Pad, 2, detail::extents_2d<Kernel>, detail::extents_2d<Stride>, detail::conv_rules, Filters> {
    static constexpr std::string_view class_name = "Conv2D";
    static constexpr std::string_view base_name = "conv2d";
    static constexpr std::size_t filters = Filters;
    static constexpr std::size_t kernel_rows = detail::rows_of<Kernel>;
    static constexpr std::size_t kernel_cols = detail::cols_of<Kernel>;
    static constexpr std::size_t stride_rows = detail::rows_of<Stride>;
    static constexpr std::size_t stride_cols = detail::cols_of<Stride>;
    using activation = Act;
    using ops = detail::conv2d_ops<Conv2D>;
    /// Fused with a MaxPool2D right after it, unless its activation is not element-wise.
    static constexpr std::size_t convolution_rank = std::is_same_v<Act, Softmax> ? 0 : 2;

    template <class In>
    using weights =
        weight_list<weight<weight_role::kernel, Shape<kernel_rows, kernel_cols, In::shape::dims[2], Filters>>,
                    weight<weight_role::bias, Shape<Filters>>>;

    /// im2col rows of one sample, then the logits when the activation is Softmax: (out_rows * out_cols, kh * kw * in_channels).
    template <class In>
    static constexpr std::size_t scratch_size =
        Conv2D::window::template positions<typename In::shape> * Conv2D::window::window_size * In::shape::dims[2] +
        detail::logits_size<Act, Conv2D::template output<In>::shape::size>;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_CONV2D_HPP
