/// @file Defines Keras' initializers as types a weight names (glorot_uniform, zeros, ones,
/// random_uniform): seeded and counter-based, each value a function of (seed, layer, weight, element),
/// so the same seed gives the same bits whatever the thread count.
#ifndef TPUDSL_CORE_INITIALIZERS_HPP
#define TPUDSL_CORE_INITIALIZERS_HPP

#include <tpudsl/detail/random.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace tpudsl::initializers {

/// Where an initializer's values come from: the model's seed, the layer's index and the weight's
/// index in its layer (element k draws hash4(seed, layer, weight, k)).
struct draw {
    std::uint64_t seed;
    std::size_t layer, weight;

    /// A uniform value in [-limit, limit) for element k.
    [[nodiscard]] float
    symmetric(double limit, std::size_t k) const noexcept
    {
        const double u = detail::unit_float(detail::hash4(seed, layer, weight, k));
        return static_cast<float>((2.0 * u - 1.0) * limit);
    }
};

/// `zeros`: Keras' default for biases.
struct Zeros {
    template <class Shape>
    static void
    fill(float* w, const draw&) noexcept
    {
        for (std::size_t k = 0; k < Shape::size; ++k)
            w[k] = 0.0f;
    }
};

/// `ones`.
struct Ones {
    template <class Shape>
    static void
    fill(float* w, const draw&) noexcept
    {
        for (std::size_t k = 0; k < Shape::size; ++k)
            w[k] = 1.0f;
    }
};

/// `glorot_uniform`: uniform in [-l, l), l = sqrt(6 / (fan_in + fan_out)) for a kernel of shape
/// (..., in, out), whose receptive field is the product of the leading dimensions (Keras'
/// `_compute_fans`). Keras' default for kernels.
struct GlorotUniform {
    template <class Shape>
    [[nodiscard]] static double
    limit() noexcept
    {
        std::size_t receptive = 1;
        for (std::size_t d = 0; d + 2 < Shape::rank; ++d)
            receptive *= Shape::dims[d];
        const double fan_in = static_cast<double>(receptive * Shape::dims[Shape::rank - 2]);
        const double fan_out = static_cast<double>(receptive * Shape::dims[Shape::rank - 1]);
        return std::sqrt(6.0 / (fan_in + fan_out));
    }

    template <class Shape>
    static void
    fill(float* w, const draw& d) noexcept
    {
        static_assert(Shape::rank >= 2, "tpudsl::initializers::GlorotUniform: requires a weight of rank 2 or more");
        const double l = limit<Shape>();
        for (std::size_t k = 0; k < Shape::size; ++k)
            w[k] = d.symmetric(l, k);
    }
};

/// `RandomUniform(-Limit, Limit)`; the Embedding's default is RandomUniform<0.05>.
/// @tparam Limit the half-width of the interval, > 0
template <double Limit>
struct RandomUniform {
    template <class Shape>
    static void
    fill(float* w, const draw& d) noexcept
    {
        for (std::size_t k = 0; k < Shape::size; ++k)
            w[k] = d.symmetric(Limit, k);
    }
};

} // namespace tpudsl::initializers

#endif // !TPUDSL_CORE_INITIALIZERS_HPP
