/// @file Defines the forward and backward pass of tpudsl::BatchNormalization on a batch.
#ifndef TPUDSL_LAYERS_BATCH_NORMALIZATION_OPS_HPP
#define TPUDSL_LAYERS_BATCH_NORMALIZATION_OPS_HPP

#include <tpudsl/layers/batch_normalization.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <array>
#include <cmath>
#include <cstddef>

namespace tpudsl::detail {

/// BatchNormalization's forward and backward (see layers/batch_normalization.hpp), on the input seen as
/// rows of C channels: n samples of P positions each. The layer's scratch holds the normalised input
/// x^ (n, P, C), then the micro-batch's mean and variance (C each) that backward hands to the reduce.
template <float Momentum, float Epsilon>
struct batch_normalization_ops {
    template <class B>
    static constexpr std::size_t C = B::input_shape::dims[B::input_shape::rank - 1];
    template <class B>
    static constexpr std::size_t P = B::input_shape::size / C<B>;

    /// 1 / sqrt(variance + epsilon), as forward and backward both compute it.
    [[nodiscard]] static float
    inverse_std(float variance) noexcept
    {
        return 1.0f / std::sqrt(variance + Epsilon);
    }

    template <class B>
    static void
    forward(const float* params, const float* x, float* y, float* scratch, std::size_t n, const step_context& ctx) noexcept
    {
        constexpr std::size_t c_n = C<B>;
        const std::size_t rows = n * P<B>;
        const float* gamma = params + B::template weight<0>::offset;
        const float* beta = params + B::template weight<1>::offset;
        std::array<float, c_n> mean, inv;
        if (ctx.training) {
            // The micro-batch's statistics: the mean, then the biased variance around it, each summed in
            // double over the rows in order.
            std::array<double, c_n> sum{};
            for (std::size_t r = 0; r < rows; ++r)
                for (std::size_t c = 0; c < c_n; ++c)
                    sum[c] += x[r * c_n + c];
            for (std::size_t c = 0; c < c_n; ++c) {
                mean[c] = static_cast<float>(sum[c] / static_cast<double>(rows));
                sum[c] = 0.0;
            }
            for (std::size_t r = 0; r < rows; ++r)
                for (std::size_t c = 0; c < c_n; ++c) {
                    const double d = static_cast<double>(x[r * c_n + c]) - mean[c];
                    sum[c] += d * d;
                }
            float* stats = scratch + rows * c_n;
            for (std::size_t c = 0; c < c_n; ++c) {
                const auto variance = static_cast<float>(sum[c] / static_cast<double>(rows));
                stats[c] = mean[c];
                stats[c_n + c] = variance;
                inv[c] = inverse_std(variance);
            }
            float* xhat = scratch;
            for (std::size_t r = 0; r < rows; ++r)
                for (std::size_t c = 0; c < c_n; ++c) {
                    const float h = (x[r * c_n + c] - mean[c]) * inv[c];
                    xhat[r * c_n + c] = h;
                    y[r * c_n + c] = gamma[c] * h + beta[c];
                }
        } else {
            const float* moving_mean = params + B::template weight<2>::offset;
            const float* moving_variance = params + B::template weight<3>::offset;
            for (std::size_t c = 0; c < c_n; ++c) {
                mean[c] = moving_mean[c];
                inv[c] = inverse_std(moving_variance[c]);
            }
            for (std::size_t r = 0; r < rows; ++r)
                for (std::size_t c = 0; c < c_n; ++c)
                    y[r * c_n + c] = gamma[c] * ((x[r * c_n + c] - mean[c]) * inv[c]) + beta[c];
        }
    }

    /// Training's backward: d(gamma) = sum dy x^, d(beta) = sum dy, and through the micro-batch's
    /// statistics dx = gamma / sqrt(var + eps) * (dy - (d(beta) + x^ d(gamma)) / N), N = n P. Writes the
    /// micro-batch's mean and variance in the moving statistics' place of the arena, for the reduce.
    template <class B>
    static void
    backward(const float* params, const float*, const float*, float* dy, float* dx, float* grads, float* scratch,
             std::size_t n, bool) noexcept
    {
        constexpr std::size_t c_n = C<B>;
        const std::size_t rows = n * P<B>;
        const float* gamma = params + B::template weight<0>::offset;
        const float* xhat = scratch;
        const float* stats = scratch + rows * c_n;
        std::array<double, c_n> dgamma{}, dbeta{};
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < c_n; ++c) {
                const double g = dy[r * c_n + c];
                dbeta[c] += g;
                dgamma[c] += g * xhat[r * c_n + c];
            }
        float* g_gamma = grads + B::template weight<0>::offset;
        float* g_beta = grads + B::template weight<1>::offset;
        float* g_mean = grads + B::template weight<2>::offset;
        float* g_variance = grads + B::template weight<3>::offset;
        std::array<float, c_n> scale, mean_dy, mean_dgamma;
        for (std::size_t c = 0; c < c_n; ++c) {
            g_gamma[c] = static_cast<float>(dgamma[c]);
            g_beta[c] = static_cast<float>(dbeta[c]);
            g_mean[c] = stats[c];
            g_variance[c] = stats[c_n + c];
            scale[c] = gamma[c] * inverse_std(stats[c_n + c]);
            mean_dy[c] = static_cast<float>(dbeta[c] / static_cast<double>(rows));
            mean_dgamma[c] = static_cast<float>(dgamma[c] / static_cast<double>(rows));
        }
        if (!dx)
            return;
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < c_n; ++c)
                dx[r * c_n + c] = scale[c] * (dy[r * c_n + c] - mean_dy[c] - xhat[r * c_n + c] * mean_dgamma[c]);
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_BATCH_NORMALIZATION_OPS_HPP
