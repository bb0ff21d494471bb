/// @file Defines Keras' initializers as types a weight names (glorot_uniform, zeros, ones,
/// random_uniform, orthogonal): seeded and counter-based, each value a function of (seed, layer,
/// weight, element), so the same seed gives the same bits whatever the thread count.
#ifndef TPUDSL_CORE_INITIALIZERS_HPP
#define TPUDSL_CORE_INITIALIZERS_HPP

#include <tpudsl/detail/random.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

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

    /// A standard normal value for element k (Box-Muller on two uniform draws, 2k and 2k + 1).
    [[nodiscard]] double
    normal(std::size_t k) const noexcept
    {
        const double u1 = 1.0 - static_cast<double>(detail::unit_float(detail::hash4(seed, layer, weight, 2 * k)));
        const double u2 = detail::unit_float(detail::hash4(seed, layer, weight, 2 * k + 1));
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
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
/// (..., in, out), whose receptive field is the product of the leading dimensions, or of shape (n),
/// whose fans are both n (Keras' `_compute_fans`). Keras' default for kernels.
struct GlorotUniform {
    template <class Shape>
    [[nodiscard]] static double
    limit() noexcept
    {
        if constexpr (Shape::rank == 1) {
            return std::sqrt(6.0 / (2.0 * static_cast<double>(Shape::dims[0])));
        } else {
            std::size_t receptive = 1;
            for (std::size_t d = 0; d + 2 < Shape::rank; ++d)
                receptive *= Shape::dims[d];
            const double fan_in = static_cast<double>(receptive * Shape::dims[Shape::rank - 2]);
            const double fan_out = static_cast<double>(receptive * Shape::dims[Shape::rank - 1]);
            return std::sqrt(6.0 / (fan_in + fan_out));
        }
    }

    template <class Shape>
    static void
    fill(float* w, const draw& d) noexcept
    {
        static_assert(Shape::rank >= 1, "tpudsl::initializers::GlorotUniform: requires a weight of rank 1 or more");
        const double l = limit<Shape>();
        for (std::size_t k = 0; k < Shape::size; ++k)
            w[k] = d.symmetric(l, k);
    }
};

/// `orthogonal` (gain 1): for a weight seen as a (rows, cols) matrix (rows the product of the leading
/// dimensions), orthonormal rows when rows <= cols, orthonormal columns otherwise, as Keras' QR of a
/// normal matrix with the signs of R's diagonal taken out, which is what Gram-Schmidt on the normal
/// matrix gives. Keras' default for recurrent kernels. Two passes of modified Gram-Schmidt, in place.
struct Orthogonal {
    template <class Shape>
    static void
    fill(float* w, const draw& d) noexcept
    {
        static_assert(Shape::rank >= 2, "tpudsl::initializers::Orthogonal: requires a weight of rank 2 or more");
        constexpr std::size_t cols = Shape::dims[Shape::rank - 1], rows = Shape::size / cols;
        for (std::size_t k = 0; k < Shape::size; ++k)
            w[k] = static_cast<float>(d.normal(k));
        // The vectors to orthonormalise: rows (stride 1 along a vector) or columns.
        constexpr bool by_rows = rows <= cols;
        constexpr std::size_t count = by_rows ? rows : cols, length = by_rows ? cols : rows;
        constexpr std::size_t along = by_rows ? 1 : cols, apart = by_rows ? cols : 1;
        auto at = [&](std::size_t v, std::size_t e) -> float& { return w[v * apart + e * along]; };
        for (std::size_t v = 0; v < count; ++v) {
            for (int pass = 0; pass < 2; ++pass)
                for (std::size_t p = 0; p < v; ++p) {
                    double dot = 0.0;
                    for (std::size_t e = 0; e < length; ++e)
                        dot += static_cast<double>(at(v, e)) * at(p, e);
                    for (std::size_t e = 0; e < length; ++e)
                        at(v, e) = static_cast<float>(at(v, e) - dot * at(p, e));
                }
            double norm = 0.0;
            for (std::size_t e = 0; e < length; ++e)
                norm += static_cast<double>(at(v, e)) * at(v, e);
            const double inv = norm > 0.0 ? 1.0 / std::sqrt(norm) : 0.0;
            for (std::size_t e = 0; e < length; ++e)
                at(v, e) = static_cast<float>(at(v, e) * inv);
        }
    }
};

/// Keras' LSTM bias with `unit_forget_bias=True`: zeros, but ones on the forget gate's block, the
/// second quarter of a (4 units) bias.
struct UnitForgetBias {
    template <class Shape>
    static void
    fill(float* w, const draw&) noexcept
    {
        static_assert(Shape::rank == 1 && Shape::size % 4 == 0,
                      "tpudsl::initializers::UnitForgetBias: requires a bias of shape (4 units)");
        constexpr std::size_t units = Shape::size / 4;
        for (std::size_t k = 0; k < Shape::size; ++k)
            w[k] = k >= units && k < 2 * units ? 1.0f : 0.0f;
    }
};

/// `RandomUniform(-Limit, Limit)`; the Embedding's default is RandomUniform<0.05>.
/// @tparam Limit the half-width of the interval: finite and > 0 (checked at compile time)
template <double Limit>
struct RandomUniform {
    static_assert(Limit > 0.0 && Limit <= std::numeric_limits<double>::max(),
                  "tpudsl::initializers::RandomUniform<Limit>: requires a finite Limit > 0 (its values are drawn "
                  "from [-Limit, Limit)) [TPUDSL_RANDOM_UNIFORM_LIMIT]");
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
