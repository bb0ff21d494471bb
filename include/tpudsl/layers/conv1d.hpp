/// @file Defines tpudsl::Conv1D, Keras' temporal convolution (channels last).
#ifndef TPUDSL_LAYERS_CONV1D_HPP
#define TPUDSL_LAYERS_CONV1D_HPP

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
struct Conv1D {
    static constexpr std::string_view class_name = "Conv1D";
    static constexpr std::string_view base_name = "conv1d";
    static constexpr std::size_t filters = Filters;
    static constexpr std::size_t kernel_size = Kernel;
    static constexpr std::size_t stride = Stride;
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
        if (Kernel == 0)
            return conv_zero_kernel;
        if (Stride == 0)
            return conv_zero_stride;
        if (!std::is_floating_point_v<typename In::value_type>)
            return needs_float_input;
        if constexpr (S::rank != 2)
            return conv1d_needs_rank2;
        else if (detail::window_output<Pad>(S::dims[0], Kernel, Stride) == 0)
            return conv_kernel_too_large;
        return ok;
    }

    template <class In>
    static consteval auto
    expects_impl() noexcept
    {
        using S = typename In::shape;
        if constexpr (S::rank == 2)
            return std::type_identity<Shape<std::max(S::dims[0], Kernel), S::dims[1]>>{};
        else
            return std::type_identity<detail::any_shape_of_rank<2>>{};
    }
    template <class In>
    using expects = typename decltype(expects_impl<In>())::type;

    template <class In>
    using output =
        detail::tensor<Shape<detail::window_output<Pad>(In::shape::dims[0], Kernel, Stride), Filters>>;

    template <class In>
    using weights = weight_list<weight<weight_role::kernel, Shape<Kernel, In::shape::dims[1], Filters>>,
                                weight<weight_role::bias, Shape<Filters>>>;

    /// im2col rows of one sample: (out_steps, Kernel * in_channels).
    template <class In>
    static constexpr std::size_t scratch_size =
        detail::window_output<Pad>(In::shape::dims[0], Kernel, Stride) * Kernel * In::shape::dims[1];
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_CONV1D_HPP
