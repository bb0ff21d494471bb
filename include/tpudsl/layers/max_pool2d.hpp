/// @file Defines tpudsl::MaxPool2D, Keras' MaxPooling2D.
#ifndef TPUDSL_LAYERS_MAX_POOL2D_HPP
#define TPUDSL_LAYERS_MAX_POOL2D_HPP

#include <tpudsl/core/padding.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weights.hpp>
#include <tpudsl/detail/diagnostics.hpp>

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

/// `MaxPooling2D(pool_size, strides, padding)` on (rows, cols, channels). `MaxPool2D<2>` is a 2x2
/// window with stride 2; `MaxPool2D<Size2{2, 3}>` a rectangular one.
/// @tparam Pool   window: an integer (square) or a `Size2{rows, cols}`, 2 by default
/// @tparam Stride step: an integer or a `Size2`, Pool by default
/// @tparam Pad    `Valid` (default) or `Same`
template <auto Pool = 2, auto Stride = Pool, PaddingType Pad = Valid>
    requires detail::WindowArg<Pool> && detail::WindowArg<Stride>
struct MaxPool2D {
    static constexpr std::string_view class_name = "MaxPooling2D";
    static constexpr std::string_view base_name = "max_pooling2d";
    static constexpr std::size_t pool_rows = detail::rows_of<Pool>;
    static constexpr std::size_t pool_cols = detail::cols_of<Pool>;
    static constexpr std::size_t stride_rows = detail::rows_of<Stride>;
    static constexpr std::size_t stride_cols = detail::cols_of<Stride>;
    using padding = Pad;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval detail::rule
    check() noexcept
    {
        using enum detail::rule;
        using S = typename In::shape;
        if (pool_rows == 0 || pool_cols == 0)
            return pool_zero_size;
        if (stride_rows == 0 || stride_cols == 0)
            return pool_zero_stride;
        if (!std::is_floating_point_v<typename In::value_type>)
            return needs_float_input;
        if constexpr (S::rank != 3)
            return pool2d_needs_rank3;
        else if (detail::window_output<Pad>(S::dims[0], pool_rows, stride_rows) == 0 ||
                 detail::window_output<Pad>(S::dims[1], pool_cols, stride_cols) == 0)
            return pool_window_too_large;
        return ok;
    }

    template <class In>
    static consteval auto
    expects_impl() noexcept
    {
        using S = typename In::shape;
        if constexpr (S::rank == 3)
            return std::type_identity<
                Shape<std::max(S::dims[0], pool_rows), std::max(S::dims[1], pool_cols), S::dims[2]>>{};
        else
            return std::type_identity<detail::any_shape_of_rank<3>>{};
    }
    template <class In>
    using expects = typename decltype(expects_impl<In>())::type;

    template <class In>
    using output = detail::tensor<Shape<detail::window_output<Pad>(In::shape::dims[0], pool_rows, stride_rows),
                                        detail::window_output<Pad>(In::shape::dims[1], pool_cols, stride_cols),
                                        In::shape::dims[2]>>;

    template <class In>
    using weights = weight_list<>;

    /// Index of each output's maximum, for the backward pass.
    template <class In>
    static constexpr std::size_t scratch_size = output<In>::shape::size;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_MAX_POOL2D_HPP
