/// @file Defines gradient_layout: how a model's flat gradient buffer looks to the fused
/// reduce-and-update, as constants of the model type. The graph runners (ops/) describe their model
/// in it and the reduce (distribute/) reads it, so neither includes the other.
#ifndef TPUDSL_CORE_GRADIENT_LAYOUT_HPP
#define TPUDSL_CORE_GRADIENT_LAYOUT_HPP

#include <cstddef>
#include <span>
#include <utility>

namespace tpudsl {

/// A range of the parameter buffer whose gradient the reduce does not sum but receives from the
/// `deferred` callable: [begin, end), rows of `columns` floats (a kernel whose gradient X^T . dZ is
/// computed over every micro-batch at once).
struct deferred_range {
    std::size_t begin, end, columns;
};

/// Where a table lies in the parameter buffer: [begin, begin + rows * width), rows of `width` floats.
struct table_span {
    std::size_t begin, rows, width;
};

/// A non-trainable weight in the parameter buffer, [begin, end): the optimizer skips it. A moving
/// statistic (momentum below 1): its place in each arena holds a micro-batch's statistic
/// (BatchNormalization's mean or variance), not a gradient; the reduce sums them in micro-batch order
/// like the gradients and sets `p = p * momentum + (sum / micro-batches) * (1 - momentum)`. Momentum 1:
/// a frozen weight, left as it is.
struct moving_range {
    std::size_t begin, end;
    float momentum;
};

/// What the reduce needs to know of the flat gradient buffer; constants of the model type.
struct gradient_layout {
    /// Floats in the buffer (the parameter buffer's size).
    std::size_t size = 0;
    /// Ranges the `deferred` callable fills, in increasing order.
    std::span<const deferred_range> deferred;
    /// Ranges that backward adds into rather than writes: cleared in every arena after the update.
    std::span<const std::pair<std::size_t, std::size_t>> accumulating;
    /// When `marked`, the one accumulating range is this table, and each micro-batch marks the rows it
    /// touched (marks: one bit a row, row r bit r % 64 of word r / 64): only those rows are summed and
    /// cleared (an Embedding: a few thousand of its rows instead of the whole table each step).
    bool marked = false;
    table_span table{0, 0, 1};
    /// The moving statistics, in increasing order.
    std::span<const moving_range> moving;
};

} // namespace tpudsl

#endif // !TPUDSL_CORE_GRADIENT_LAYOUT_HPP
