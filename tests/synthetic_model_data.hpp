// Synthetic data of a seed model's shapes with a learnable signal, for the tests that compare
// strategies (threads, processes) bit for bit.
#ifndef TPUDSL_TESTS_SYNTHETIC_MODEL_DATA_HPP
#define TPUDSL_TESTS_SYNTHETIC_MODEL_DATA_HPP

#include <xtensor/xtensor.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <type_traits>

namespace tpudsl_tests {

/// Synthetic data of a model's shapes with a learnable signal: the label is a function of the input.
template <class M>
struct synthetic {
    static constexpr std::size_t rank = M::input_shape::rank;
    xt::xtensor<typename M::input_type, rank + 1> x;   // (samples, the Input's dims...)
    xt::xtensor<std::int32_t, 1> y;

    static std::array<std::size_t, rank + 1>
    shape(std::size_t n)
    {
        std::array<std::size_t, rank + 1> s{n};
        std::copy(M::input_shape::dims.begin(), M::input_shape::dims.end(), s.begin() + 1);
        return s;
    }

    synthetic(std::size_t n, std::uint32_t seed) : x(shape(n)), y(std::array<std::size_t, 1>{n})
    {
        std::mt19937 gen(seed);
        constexpr std::size_t classes = M::output_shape::size;
        for (std::size_t i = 0; i < n; ++i) {
            const auto label = static_cast<std::int32_t>(gen() % classes);
            y(i) = label;
            for (std::size_t j = 0; j < M::input_shape::size; ++j) {
                if constexpr (std::is_integral_v<typename M::input_type>)
                    x.data()[i * M::input_shape::size + j] =
                        static_cast<std::int32_t>((gen() % 50) * 37 % 1000 + (j % 7 == 0 ? label : 0));
                else
                    x.data()[i * M::input_shape::size + j] =
                        static_cast<float>(gen() % 256) / 255.0f * 0.5f + (j % 10 == std::size_t(label)) * 0.5f;
            }
        }
    }
};

} // namespace tpudsl_tests

#endif // !TPUDSL_TESTS_SYNTHETIC_MODEL_DATA_HPP
