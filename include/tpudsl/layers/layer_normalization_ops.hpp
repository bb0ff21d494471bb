/// @file Defines the forward and backward pass of tpudsl::LayerNormalization on a batch.
#ifndef TPUDSL_LAYERS_LAYER_NORMALIZATION_OPS_HPP
#define TPUDSL_LAYERS_LAYER_NORMALIZATION_OPS_HPP

#include <tpudsl/layers/layer_normalization.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <array>
#include <cmath>
#include <cstddef>

namespace tpudsl::detail {

/// LayerNormalization's forward and backward (see layers/layer_normalization.hpp), on the input seen
/// as rows of C features: n samples of P rows each. The layer's scratch holds the normalised input
/// x^ (n, P, C), then each row's inverse standard deviation (n, P).
template <float Epsilon>
struct layer_normalization_ops {
    template <class B>
    static constexpr std::size_t C = B::input_shape::dims[B::input_shape::rank - 1];
    template <class B>
    static constexpr std::size_t P = B::input_shape::size / C<B>;

    /// y = gamma x^ + beta with x^ = (x - mean) / sqrt(var + epsilon), each row's mean and biased
    /// variance summed in double, in order.
    template <class B>
    static void
    forward(const float* params, const float* x, float* y, float* scratch, std::size_t n, const step_context&) noexcept
    {
        constexpr std::size_t c_n = C<B>;
        const std::size_t rows = n * P<B>;
        const float* gamma = params + B::template weight<0>::offset;
        const float* beta = params + B::template weight<1>::offset;
        float* xhat = scratch;
        float* inv = scratch + rows * c_n;
        for (std::size_t r = 0; r < rows; ++r) {
            const float* xr = x + r * c_n;
            double sum = 0.0;
            for (std::size_t c = 0; c < c_n; ++c)
                sum += xr[c];
            const auto mean = static_cast<float>(sum / static_cast<double>(c_n));
            double squares = 0.0;
            for (std::size_t c = 0; c < c_n; ++c) {
                const double d = static_cast<double>(xr[c]) - mean;
                squares += d * d;
            }
            const float variance = static_cast<float>(squares / static_cast<double>(c_n));
            const float s = 1.0f / std::sqrt(variance + Epsilon);
            inv[r] = s;
            float* hr = xhat + r * c_n;
            float* yr = y + r * c_n;
            for (std::size_t c = 0; c < c_n; ++c) {
                const float h = (xr[c] - mean) * s;
                hr[c] = h;
                yr[c] = gamma[c] * h + beta[c];
            }
        }
    }

    /// d(gamma) = sum dy x^, d(beta) = sum dy over every row; per row, with g = gamma dy,
    /// dx = s (g - mean(g) - x^ mean(g x^)). dx may be dy's memory: a row's dy is read before its dx
    /// is written.
    template <class B>
    static void
    backward(const float* params, const float*, const float*, float* dy, float* dx, float* grads, float* scratch,
             std::size_t n, bool) noexcept
    {
        constexpr std::size_t c_n = C<B>;
        const std::size_t rows = n * P<B>;
        const float* gamma = params + B::template weight<0>::offset;
        const float* xhat = scratch;
        const float* inv = scratch + rows * c_n;
        std::array<double, c_n> dgamma{}, dbeta{};
        for (std::size_t r = 0; r < rows; ++r) {
            const float* dyr = dy + r * c_n;
            const float* hr = xhat + r * c_n;
            double g_sum = 0.0, gh_sum = 0.0;
            for (std::size_t c = 0; c < c_n; ++c) {
                dbeta[c] += dyr[c];
                dgamma[c] += static_cast<double>(dyr[c]) * hr[c];
                const float g = gamma[c] * dyr[c];
                g_sum += g;
                gh_sum += static_cast<double>(g) * hr[c];
            }
            if (!dx)
                continue;
            const auto mean_g = static_cast<float>(g_sum / static_cast<double>(c_n));
            const auto mean_gh = static_cast<float>(gh_sum / static_cast<double>(c_n));
            float* dxr = dx + r * c_n;
            for (std::size_t c = 0; c < c_n; ++c)
                dxr[c] = inv[r] * (gamma[c] * dyr[c] - mean_g - hr[c] * mean_gh);
        }
        float* g_gamma = grads + B::template weight<0>::offset;
        float* g_beta = grads + B::template weight<1>::offset;
        for (std::size_t c = 0; c < c_n; ++c) {
            g_gamma[c] = static_cast<float>(dgamma[c]);
            g_beta[c] = static_cast<float>(dbeta[c]);
        }
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_LAYER_NORMALIZATION_OPS_HPP
