/// @file A layer written outside the library, as a user writes one (docs/layers.md): Scale multiplies
/// each channel (the last axis) by a trainable factor that starts at one.
#ifndef TPUDSL_EXAMPLES_CUSTOM_LAYER_SCALE_HPP
#define TPUDSL_EXAMPLES_CUSTOM_LAYER_SCALE_HPP

#include <tpudsl/model.hpp>
#include <tpudsl/layers/step_context.hpp>

#include <cstddef>
#include <string_view>

namespace mylayers {

// [scale_layer]
struct ScaleOps;

/// `Scale()`: y = x * scale, one trainable factor per channel (the last axis), starting at one.
struct Scale : tpudsl::layer_base {   // the defaults: float input, same shape, no scratch, traits off
    static constexpr std::string_view class_name = "Scale";   // the summary's "(Scale)"
    static constexpr std::string_view base_name = "scale";    // auto-names: scale, scale_1, ...
    using ops = ScaleOps;                                     // its forward and backward

    /// One weight in Keras' layout: (channels,), starting at one.
    template <class In>
    using weights = tpudsl::weight_list<tpudsl::weight<tpudsl::weight_role::kernel,
                                                      tpudsl::Shape<In::shape::dims[In::shape::rank - 1]>,
                                                      tpudsl::initializers::Ones>>;
};

struct ScaleOps {
    /// x, y: (n, in...), where in... ends in C channels.
    template <class B>
    static void
    forward(const float* params, const float* x, float* y, float*, std::size_t n, const tpudsl::step_context&) noexcept
    {
        constexpr std::size_t C = B::template weight<0>::size, S = B::input_shape::size;
        const float* scale = params + B::template weight<0>::offset;
        for (std::size_t i = 0; i < n * S; ++i)
            y[i] = x[i] * scale[i % C];
    }

    /// Writes d(scale) = sum over samples and positions of x * dy; dx = dy * scale when asked for.
    template <class B>
    static void
    backward(const float* params, const float* x, const float*, float* dy, float* dx, float* grads, float*,
             std::size_t n, bool) noexcept
    {
        constexpr std::size_t C = B::template weight<0>::size, S = B::input_shape::size;
        const float* scale = params + B::template weight<0>::offset;
        float* dscale = grads + B::template weight<0>::offset;
        for (std::size_t c = 0; c < C; ++c)
            dscale[c] = 0.0f;
        for (std::size_t i = 0; i < n * S; ++i)
            dscale[i % C] += x[i] * dy[i];
        if (dx)
            for (std::size_t i = 0; i < n * S; ++i)
                dx[i] = dy[i] * scale[i % C];
    }
};
// [scale_layer]

} // namespace mylayers

#endif // !TPUDSL_EXAMPLES_CUSTOM_LAYER_SCALE_HPP
