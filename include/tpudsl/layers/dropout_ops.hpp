/// @file Defines the forward and backward pass of tpudsl::Dropout on a batch.
#ifndef TPUDSL_LAYERS_DROPOUT_OPS_HPP
#define TPUDSL_LAYERS_DROPOUT_OPS_HPP

#include <tpudsl/detail/random.hpp>
#include <tpudsl/layers/dropout.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tpudsl::detail {

/// Dropout's forward (counter-based masks, a function of seed, step, sample and element) and backward.
template <float Rate>
struct dropout_ops {
    template <class B>
    static void
    forward(const float*, const float* x, float* y, float* mask, std::size_t n, const step_context& ctx) noexcept
    {
        constexpr std::size_t S = B::input_shape::size;
        if (!ctx.training || Rate == 0.0f) {
            std::memcpy(y, x, n * S * sizeof(float));
            for (std::size_t i = 0; i < n * S; ++i)
                mask[i] = 1.0f;
            return;
        }
        // Element e of sample s is kept when unit_float(hash4(layer_seed(seed), step, first_sample + s, e))
        // >= Rate. The first three rounds of hash4 are taken out of the loop over the elements, and the
        // test is made on the integer that unit_float scales: (bits >> 40) >= ceil(Rate 2^24) holds
        // exactly when unit_float(bits) >= Rate (both sides are exact). Branch-free, the loop is
        // vectorised: the same masks as one hash4 and a float compare per element, without their cost.
        constexpr float scale = 1.0f / (1.0f - Rate);
        constexpr float scaled = Rate * 16777216.0f;   // exact: a power of two
        constexpr auto whole = static_cast<std::uint64_t>(scaled);
        constexpr std::uint64_t threshold = whole + (static_cast<float>(whole) < scaled ? 1 : 0);   // ceil
        const std::uint64_t per_step = mix64(mix64(layer_seed<B>(ctx.seed)) ^ ctx.step);
        for (std::size_t s = 0; s < n; ++s) {
            const std::uint64_t h = mix64(per_step ^ (ctx.first_sample + s));
            const float* __restrict xs = x + s * S;
            float* __restrict ys = y + s * S;
            float* __restrict ms = mask + s * S;
            for (std::size_t e = 0; e < S; ++e) {
                const float m = (mix64(h ^ e) >> 40) >= threshold ? scale : 0.0f;
                ms[e] = m;
                ys[e] = xs[e] * m;
            }
        }
    }

    /// The seed of layer B's masks: the model's seed, keyed by the layer's index.
    template <class B>
    [[nodiscard]] static constexpr std::uint64_t
    layer_seed(std::uint64_t seed) noexcept
    {
        return seed ^ (0xd1b54a32d192ed03ULL * (B::index + 1));
    }

    template <class B>
    static void
    backward(const float*, const float*, const float*, float* dy, float* dx, float*, float* mask, std::size_t n,
             bool) noexcept
    {
        if (!dx)
            return;
        for (std::size_t i = 0; i < n * B::input_shape::size; ++i)
            dx[i] = dy[i] * mask[i];
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_DROPOUT_OPS_HPP
