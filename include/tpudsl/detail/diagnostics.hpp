/// @file Defines the model checks: one rule per mistake, one message per rule.
///
/// Every rule a model can break is a value of `rule`. A layer's `check<In, Index>()` returns the
/// first rule its input breaks (or `rule::ok`); `valid_model` reads that value, and `Sequential`
/// instantiates `layer_error` with it, whose matching static_assert prints our message. The
/// template arguments of `layer_error` carry what C++20 cannot format into a message: the layer's
/// position (0-based, as `model.layers[i]` and the summary rows), the layer, the shape it was
/// given and the shape it wants. docs/errors.md explains each message under its tag.
#ifndef TPUDSL_DETAIL_DIAGNOSTICS_HPP
#define TPUDSL_DETAIL_DIAGNOSTICS_HPP

#include <cstddef>

namespace tpudsl {

namespace detail {

enum class rule {
    ok,
    // the model as a whole
    not_a_layer,
    input_empty_shape,
    // a layer's own hyperparameters
    embedding_zero_vocab,
    embedding_zero_dim,
    dense_zero_units,
    conv_zero_filters,
    conv_zero_kernel,
    conv_zero_stride,
    pool_zero_size,
    pool_zero_stride,
    dropout_rate,
    // what a layer accepts
    embedding_not_first,
    embedding_needs_integer_input,
    needs_float_input,
    dense_needs_rank1,
    conv1d_needs_rank2,
    conv2d_needs_rank3,
    pool1d_needs_rank2,
    pool2d_needs_rank3,
    conv_kernel_too_large,
    pool_window_too_large,
};

/// The shape a layer wants where a `Shape` cannot say it: any input of this rank.
template <std::size_t R>
struct any_shape_of_rank {};

/// A stand-in for the output of a layer that failed its check: the layers after it accept it
/// silently, so one mistake gives one error, not a cascade.
struct invalid_tensor {
    template <std::size_t... D>
    struct no_shape {
        static constexpr std::size_t rank = 0;
        static constexpr std::size_t size = 0;
    };
    using shape = no_shape<>;
    using value_type = float;
    static constexpr bool valid = false;
};

} // namespace detail

/// Instantiated by `Sequential` for a layer that breaks a rule; its arguments are what the
/// compiler prints beside our message.
/// @tparam R       the rule broken
/// @tparam Index   the layer's 0-based position after the Input (as in `model.summary()`)
/// @tparam Layer   the layer as the user wrote it
/// @tparam Got     the shape the layer receives
/// @tparam Want    the shape (or `any_shape_of_rank<R>`) it accepts
template <detail::rule R, std::size_t Index, class Layer, class Got, class Want>
struct layer_error {
    // One assertion per rule, so that exactly one fires; each message is "what; fix [TAG]".
    static_assert(R != detail::rule::not_a_layer,
                  "tpudsl::Sequential<Input, Layers...>: this argument is not a tpudsl layer; a bare activation "
                  "is written tpudsl::Activation<Relu> [TPUDSL_NOT_A_LAYER]");
    static_assert(R != detail::rule::input_empty_shape,
                  "tpudsl::Input<Shape<D...>, T>: requires at least one dimension and every extent > 0 "
                  "[TPUDSL_INPUT_EMPTY_SHAPE]");
    static_assert(R != detail::rule::embedding_zero_vocab,
                  "tpudsl::Embedding<Vocab, Dim>: requires Vocab > 0 [TPUDSL_EMBEDDING_ZERO_VOCAB]");
    static_assert(R != detail::rule::embedding_zero_dim,
                  "tpudsl::Embedding<Vocab, Dim>: requires Dim > 0 [TPUDSL_EMBEDDING_ZERO_DIM]");
    static_assert(R != detail::rule::dense_zero_units,
                  "tpudsl::Dense<Units>: requires Units > 0 [TPUDSL_DENSE_ZERO_UNITS]");
    static_assert(R != detail::rule::conv_zero_filters,
                  "tpudsl::Conv1D/Conv2D<Filters, Kernel>: requires Filters > 0 [TPUDSL_CONV_ZERO_FILTERS]");
    static_assert(R != detail::rule::conv_zero_kernel,
                  "tpudsl::Conv1D/Conv2D<Filters, Kernel>: requires a kernel of at least 1 in every direction "
                  "[TPUDSL_CONV_ZERO_KERNEL]");
    static_assert(R != detail::rule::conv_zero_stride,
                  "tpudsl::Conv1D/Conv2D: requires Stride >= 1 in every direction [TPUDSL_CONV_ZERO_STRIDE]");
    static_assert(R != detail::rule::pool_zero_size,
                  "tpudsl::MaxPool1D/MaxPool2D<Pool>: requires a pool of at least 1 in every direction "
                  "[TPUDSL_POOL_ZERO_SIZE]");
    static_assert(R != detail::rule::pool_zero_stride,
                  "tpudsl::MaxPool1D/MaxPool2D: requires Stride >= 1 in every direction [TPUDSL_POOL_ZERO_STRIDE]");
    static_assert(R != detail::rule::dropout_rate,
                  "tpudsl::Dropout<Rate>: requires 0 <= Rate < 1 [TPUDSL_DROPOUT_RATE]");
    static_assert(R != detail::rule::embedding_not_first,
                  "tpudsl::Embedding<Vocab, Dim>: must be the first layer after tpudsl::Input "
                  "[TPUDSL_EMBEDDING_NOT_FIRST]");
    static_assert(R != detail::rule::embedding_needs_integer_input,
                  "tpudsl::Embedding<Vocab, Dim>: requires integer token ids; declare the input as "
                  "tpudsl::Input<Shape<...>, std::int32_t> [TPUDSL_EMBEDDING_NEEDS_INTEGER_INPUT]");
    static_assert(R != detail::rule::needs_float_input,
                  "tpudsl layer: requires a floating-point input; integer inputs (token ids) must go "
                  "through tpudsl::Embedding first [TPUDSL_NEEDS_FLOAT_INPUT]");
    static_assert(R != detail::rule::dense_needs_rank1,
                  "tpudsl::Dense<Units>: requires a rank-1 input; insert tpudsl::Flatten before it "
                  "[TPUDSL_DENSE_NEEDS_RANK1]");
    static_assert(R != detail::rule::conv1d_needs_rank2,
                  "tpudsl::Conv1D<Filters, Kernel>: requires a rank-2 input (steps, channels) "
                  "[TPUDSL_CONV1D_NEEDS_RANK2]");
    static_assert(R != detail::rule::conv2d_needs_rank3,
                  "tpudsl::Conv2D<Filters, Kernel>: requires a rank-3 input (rows, cols, channels); declare "
                  "images as Input<Shape<H, W, C>> [TPUDSL_CONV2D_NEEDS_RANK3]");
    static_assert(R != detail::rule::pool1d_needs_rank2,
                  "tpudsl::MaxPool1D<Pool>: requires a rank-2 input (steps, channels) [TPUDSL_POOL1D_NEEDS_RANK2]");
    static_assert(R != detail::rule::pool2d_needs_rank3,
                  "tpudsl::MaxPool2D<Pool>: requires a rank-3 input (rows, cols, channels) "
                  "[TPUDSL_POOL2D_NEEDS_RANK3]");
    static_assert(R != detail::rule::conv_kernel_too_large,
                  "tpudsl::Conv1D/Conv2D: the kernel is larger than its input under Valid padding; use a "
                  "smaller kernel, tpudsl::Same padding, or less pooling before it [TPUDSL_CONV_KERNEL_TOO_LARGE]");
    static_assert(R != detail::rule::pool_window_too_large,
                  "tpudsl::MaxPool1D/MaxPool2D: the pool window is larger than its input under Valid padding; "
                  "use a smaller pool or tpudsl::Same padding [TPUDSL_POOL_WINDOW_TOO_LARGE]");
    static constexpr bool value = R == detail::rule::ok;
};

} // namespace tpudsl

#endif // !TPUDSL_DETAIL_DIAGNOSTICS_HPP
