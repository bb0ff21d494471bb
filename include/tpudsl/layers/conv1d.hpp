/// @file Defines tpudsl::Conv1D, Keras' temporal convolution (channels last).
#ifndef TPUDSL_LAYERS_CONV1D_HPP
#define TPUDSL_LAYERS_CONV1D_HPP

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
template <std::size_t Filters, std::size_t Kernel, class Act, class Pad, std::size_t Stride>
struct conv1d_ops;   // layers/conv1d_ops.hpp
} // namespace detail

/// `Conv1D(filters, kernel_size, strides, padding, activation)` on (steps, channels): gives
/// (out_steps, Filters) with out_steps by Keras' arithmetic for Pad.
/// Weights: kernel (Kernel, in_channels, Filters), bias (Filters).
/// @tparam Filters output channels, > 0
/// @tparam Kernel  window length, > 0
/// @tparam Act     activation fused into the layer
/// @tparam Pad     `Valid` (default) or `Same`
/// @tparam Stride  step of the window, > 0
template <std::size_t Filters, std::size_t Kernel, ActivationType Act = Linear, PaddingType Pad = Valid,
          std::size_t Stride = 1>
struct Conv1D
    : detail::window_spec<Pad, 1, detail::extents_1d<Kernel>, detail::extents_1d<Stride>, detail::conv_rules, Filters> {
    static constexpr std::string_view class_name = "Conv1D";
    static constexpr std::string_view base_name = "conv1d";
    static constexpr std::size_t filters = Filters;
    static constexpr std::size_t kernel_size = Kernel;
    static constexpr std::size_t stride = Stride;
    using activation = Act;
    using ops = detail::conv1d_ops<Filters, Kernel, Act, Pad, Stride>;
    /// Fused with a MaxPool1D right after it, unless its activation is not element-wise.
    static constexpr std::size_t convolution_rank = std::is_same_v<Act, Softmax> ? 0 : 1;

    template <class In>
    using weights = weight_list<weight<weight_role::kernel, Shape<Kernel, In::shape::dims[1], Filters>>,
                                weight<weight_role::bias, Shape<Filters>>>;

    /// im2col rows of one sample, then the logits when the activation is Softmax: (out_steps, Kernel * in_channels).
    template <class In>
    static constexpr std::size_t scratch_size =
        Conv1D::window::template positions<typename In::shape> * Kernel * In::shape::dims[1] +
        detail::logits_size<Act, Conv1D::template output<In>::shape::size>;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_CONV1D_HPP
