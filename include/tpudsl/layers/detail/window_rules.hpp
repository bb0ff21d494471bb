/// @file Defines the rules Conv1D and Conv2D share, those the max and average poolings share, and
/// those of the global poolings, with their messages.
#ifndef TPUDSL_LAYERS_DETAIL_WINDOW_RULES_HPP
#define TPUDSL_LAYERS_DETAIL_WINDOW_RULES_HPP

namespace tpudsl::detail {

/// The rules of a convolution (its `rule`), checked in this order.
enum class conv_rule { ok, zero_filters, zero_kernel, zero_stride, needs_rank2, needs_rank3, kernel_too_large };

/// The messages of a convolution's rules (its `diagnostic<R>`).
template <conv_rule R>
struct conv_diagnostic {
    static_assert(R != conv_rule::zero_filters,
                  "tpudsl::Conv1D/Conv2D<Filters, Kernel>: requires Filters > 0 [TPUDSL_CONV_ZERO_FILTERS]");
    static_assert(R != conv_rule::zero_kernel,
                  "tpudsl::Conv1D/Conv2D<Filters, Kernel>: requires a kernel of at least 1 in every direction "
                  "[TPUDSL_CONV_ZERO_KERNEL]");
    static_assert(R != conv_rule::zero_stride,
                  "tpudsl::Conv1D/Conv2D: requires Stride >= 1 in every direction [TPUDSL_CONV_ZERO_STRIDE]");
    static_assert(R != conv_rule::needs_rank2,
                  "tpudsl::Conv1D<Filters, Kernel>: requires a rank-2 input (steps, channels) "
                  "[TPUDSL_CONV1D_NEEDS_RANK2]");
    static_assert(R != conv_rule::needs_rank3,
                  "tpudsl::Conv2D<Filters, Kernel>: requires a rank-3 input (rows, cols, channels); declare "
                  "images as Input<Shape<H, W, C>> [TPUDSL_CONV2D_NEEDS_RANK3]");
    static_assert(R != conv_rule::kernel_too_large,
                  "tpudsl::Conv1D/Conv2D: the kernel is larger than its input under Valid padding; use a "
                  "smaller kernel, tpudsl::Same padding, or less pooling before it [TPUDSL_CONV_KERNEL_TOO_LARGE]");
};

/// The rules of a max or average pooling (its `rule`), checked in this order.
enum class pool_rule { ok, zero_size, zero_stride, needs_rank2, needs_rank3, window_too_large };

/// The messages of a max or average pooling's rules (its `diagnostic<R>`).
template <pool_rule R>
struct pool_diagnostic {
    static_assert(R != pool_rule::zero_size,
                  "tpudsl::MaxPool1D/MaxPool2D/AveragePooling1D/AveragePooling2D<Pool>: requires a pool of at "
                  "least 1 in every direction [TPUDSL_POOL_ZERO_SIZE]");
    static_assert(R != pool_rule::zero_stride,
                  "tpudsl::MaxPool1D/MaxPool2D/AveragePooling1D/AveragePooling2D: requires Stride >= 1 in every "
                  "direction [TPUDSL_POOL_ZERO_STRIDE]");
    static_assert(R != pool_rule::needs_rank2,
                  "tpudsl::MaxPool1D/AveragePooling1D<Pool>: requires a rank-2 input (steps, channels) "
                  "[TPUDSL_POOL1D_NEEDS_RANK2]");
    static_assert(R != pool_rule::needs_rank3,
                  "tpudsl::MaxPool2D/AveragePooling2D<Pool>: requires a rank-3 input (rows, cols, channels) "
                  "[TPUDSL_POOL2D_NEEDS_RANK3]");
    static_assert(R != pool_rule::window_too_large,
                  "tpudsl::MaxPool1D/MaxPool2D/AveragePooling1D/AveragePooling2D: the pool window is larger than "
                  "its input under Valid padding; use a smaller pool or tpudsl::Same padding "
                  "[TPUDSL_POOL_WINDOW_TOO_LARGE]");
};

/// The rules of a global pooling (its `rule`).
enum class global_pool_rule { ok, needs_rank2, needs_rank3 };

/// The messages of a global pooling's rules (its `diagnostic<R>`).
template <global_pool_rule R>
struct global_pool_diagnostic {
    static_assert(R != global_pool_rule::needs_rank2,
                  "tpudsl::GlobalAveragePooling1D/GlobalMaxPooling1D: requires a rank-2 input (steps, channels); "
                  "for images use the 2D layer [TPUDSL_GLOBAL_POOL1D_NEEDS_RANK2]");
    static_assert(R != global_pool_rule::needs_rank3,
                  "tpudsl::GlobalAveragePooling2D/GlobalMaxPooling2D: requires a rank-3 input (rows, cols, "
                  "channels); for sequences use the 1D layer [TPUDSL_GLOBAL_POOL2D_NEEDS_RANK3]");
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_DETAIL_WINDOW_RULES_HPP
