/// @file Defines the forward and backward pass of the merge layers on a batch.
///
/// A merge's ops take arrays of pointers, one per input in the order its node names them:
///
///   forward <B>(params, xs, y, scratch, n, ctx)                   xs[k] (n, in_k...) -> y (n, out...)
///   backward<B>(params, xs, y, dy, dxs, grads, scratch, n)        dy (n, out...) -> dxs[k] (n, in_k...)
///
/// backward writes each dxs[k] that is not null (the graph gives every input its own buffer, even when
/// a node reads one tensor twice) and may overwrite dy.
#ifndef TPUDSL_LAYERS_MERGE_OPS_HPP
#define TPUDSL_LAYERS_MERGE_OPS_HPP

#include <tpudsl/layers/merge.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <cstddef>
#include <cstring>

namespace tpudsl::detail {

/// The element-wise merges, folded left to right as Keras folds them: ((x0 op x1) op x2) ...
template <merge_op Op>
struct elementwise_merge_ops {
    template <class B>
    static void
    forward(const float*, const float* const* xs, float* y, float*, std::size_t n, const step_context&) noexcept
    {
        constexpr std::size_t K = B::input_count;
        const std::size_t count = n * B::output_shape::size;
        std::memcpy(y, xs[0], count * sizeof(float));
        for (std::size_t k = 1; k < K; ++k) {
            const float* __restrict x = xs[k];
            float* __restrict out = y;
            for (std::size_t i = 0; i < count; ++i) {
                if constexpr (Op == merge_op::add || Op == merge_op::average)
                    out[i] += x[i];
                else if constexpr (Op == merge_op::subtract)
                    out[i] -= x[i];
                else if constexpr (Op == merge_op::multiply)
                    out[i] *= x[i];
                else if constexpr (Op == merge_op::maximum)
                    out[i] = out[i] >= x[i] ? out[i] : x[i];
                else
                    out[i] = out[i] <= x[i] ? out[i] : x[i];
            }
        }
        if constexpr (Op == merge_op::average) {
            constexpr auto k = static_cast<float>(K);
            for (std::size_t i = 0; i < count; ++i)
                y[i] /= k;
        }
    }

    template <class B>
    static void
    backward(const float*, const float* const* xs, const float*, float* dy, float* const* dxs, float*, float*,
             std::size_t n) noexcept
    {
        constexpr std::size_t K = B::input_count;
        const std::size_t count = n * B::output_shape::size;
        if constexpr (Op == merge_op::add) {
            for (std::size_t k = 0; k < K; ++k)
                if (dxs[k])
                    std::memcpy(dxs[k], dy, count * sizeof(float));
        } else if constexpr (Op == merge_op::subtract) {
            if (dxs[0])
                std::memcpy(dxs[0], dy, count * sizeof(float));
            if (float* d = dxs[1])
                for (std::size_t i = 0; i < count; ++i)
                    d[i] = -dy[i];
        } else if constexpr (Op == merge_op::average) {
            constexpr auto k = static_cast<float>(K);
            for (std::size_t j = 0; j < K; ++j)
                if (float* d = dxs[j])
                    for (std::size_t i = 0; i < count; ++i)
                        d[i] = dy[i] / k;
        } else if constexpr (Op == merge_op::multiply) {
            // d/dx_k of x0 x1 ... = the product of the others, each taken in the forward's order.
            for (std::size_t k = 0; k < K; ++k) {
                float* d = dxs[k];
                if (!d)
                    continue;
                for (std::size_t i = 0; i < count; ++i) {
                    float p = dy[i];
                    for (std::size_t j = 0; j < K; ++j)
                        if (j != k)
                            p *= xs[j][i];
                    d[i] = p;
                }
            }
        } else {
            // The gradient goes to the input the fold kept: the first that holds the extremum (TensorFlow's
            // maximum keeps its left operand on a tie, and so does the fold).
            for (std::size_t k = 0; k < K; ++k)
                if (dxs[k])
                    std::memset(dxs[k], 0, count * sizeof(float));
            for (std::size_t i = 0; i < count; ++i) {
                std::size_t best = 0;
                float m = xs[0][i];
                for (std::size_t k = 1; k < K; ++k) {
                    const float v = xs[k][i];
                    if (Op == merge_op::maximum ? !(m >= v) : !(m <= v)) {
                        m = v;
                        best = k;
                    }
                }
                if (dxs[best])
                    dxs[best][i] = dy[i];
            }
        }
    }
};

/// Concatenate: per sample, for each index of the axes before Axis, the inputs' blocks one after the other.
struct concatenate_ops {
    template <class B>
    static void
    forward(const float*, const float* const* xs, float* y, float*, std::size_t n, const step_context&) noexcept
    {
        each_block<B>(n, [&](std::size_t k, std::size_t in_at, std::size_t out_at, std::size_t len) {
            std::memcpy(y + out_at, xs[k] + in_at, len * sizeof(float));
        });
    }

    template <class B>
    static void
    backward(const float*, const float* const*, const float*, float* dy, float* const* dxs, float*, float*,
             std::size_t n) noexcept
    {
        each_block<B>(n, [&](std::size_t k, std::size_t in_at, std::size_t out_at, std::size_t len) {
            if (dxs[k])
                std::memcpy(dxs[k] + in_at, dy + out_at, len * sizeof(float));
        });
    }

private:
    /// Calls f(input, offset in it, offset in the output, floats) for every contiguous block.
    template <class B, class F>
    static void
    each_block(std::size_t n, F&& f) noexcept
    {
        using Out = typename B::output_shape;
        constexpr std::size_t a = B::spec::template axis_of<typename B::first_input>;
        constexpr std::size_t outer = [] {
            std::size_t o = 1;
            for (std::size_t d = 0; d < a; ++d)
                o *= Out::dims[d];
            return o;
        }();
        const std::size_t rows = n * outer;
        std::size_t out_at = 0;
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t k = 0; k < B::input_count; ++k) {
                const std::size_t len = B::input_sizes[k] / outer;   // the input's axis extent times inner
                f(k, r * len, out_at, len);
                out_at += len;
            }
    }
};

/// Dot: per sample, Y (m, nb) = A' (m, k) . B' (k, nb) (Dot::geometry), summed in order along k; its
/// gradients dA' = dY . B'^T and dB' = A'^T . dY, written where A and B hold those elements.
struct dot_ops {
    template <class B>
    using geometry = typename B::spec::template geometry<typename B::first_input,
                                                         type_at_t<1, typename B::inputs>>;

    template <class B>
    static void
    forward(const float*, const float* const* xs, float* y, float*, std::size_t n, const step_context&) noexcept
    {
        using G = geometry<B>;
        for (std::size_t s = 0; s < n; ++s) {
            const float* a = xs[0] + s * B::input_sizes[0];
            const float* b = xs[1] + s * B::input_sizes[1];
            float* out = y + s * G::m * G::nb;
            for (std::size_t i = 0; i < G::m; ++i)
                for (std::size_t j = 0; j < G::nb; ++j) {
                    float sum = 0.0f;
                    for (std::size_t k = 0; k < G::k; ++k)
                        sum += a[at_a<G>(i, k)] * b[at_b<G>(k, j)];
                    out[i * G::nb + j] = sum;
                }
        }
    }

    template <class B>
    static void
    backward(const float*, const float* const* xs, const float*, float* dy, float* const* dxs, float*, float*,
             std::size_t n) noexcept
    {
        using G = geometry<B>;
        for (std::size_t s = 0; s < n; ++s) {
            const float* a = xs[0] + s * B::input_sizes[0];
            const float* b = xs[1] + s * B::input_sizes[1];
            const float* g = dy + s * G::m * G::nb;
            if (dxs[0]) {
                float* da = dxs[0] + s * B::input_sizes[0];
                for (std::size_t i = 0; i < G::m; ++i)
                    for (std::size_t k = 0; k < G::k; ++k) {
                        float sum = 0.0f;
                        for (std::size_t j = 0; j < G::nb; ++j)
                            sum += g[i * G::nb + j] * b[at_b<G>(k, j)];
                        da[at_a<G>(i, k)] = sum;
                    }
            }
            if (dxs[1]) {
                float* db = dxs[1] + s * B::input_sizes[1];
                for (std::size_t k = 0; k < G::k; ++k)
                    for (std::size_t j = 0; j < G::nb; ++j) {
                        float sum = 0.0f;
                        for (std::size_t i = 0; i < G::m; ++i)
                            sum += a[at_a<G>(i, k)] * g[i * G::nb + j];
                        db[at_b<G>(k, j)] = sum;
                    }
            }
        }
    }

private:
    /// Where A'(i, k) and B'(k, j) are in a sample of the inputs.
    template <class G>
    [[nodiscard]] static constexpr std::size_t
    at_a(std::size_t i, std::size_t k) noexcept
    {
        return G::a_transposed ? k * G::m + i : i * G::k + k;
    }
    template <class G>
    [[nodiscard]] static constexpr std::size_t
    at_b(std::size_t k, std::size_t j) noexcept
    {
        return G::b_transposed ? j * G::k + k : k * G::nb + j;
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_MERGE_OPS_HPP
