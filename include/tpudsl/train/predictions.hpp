/// @file Defines tpudsl::Predictions<Shape>: what predict returns for an output of `Shape`, Keras' array
/// of shape (samples, output dims...): the values row-major, indexed as `p(sample, i, j...)`, with
/// `shape()` and `data()` (so it is itself an array fit, evaluate and xt::adapt take) and, for code
/// that reads the values flat, `p[k]`, `size()`, iteration and a conversion to `std::vector<float>`.
#ifndef TPUDSL_TRAIN_PREDICTIONS_HPP
#define TPUDSL_TRAIN_PREDICTIONS_HPP

#include <array>
#include <concepts>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace tpudsl {

template <class OutputShape>
class Predictions {
public:
    /// The output's shape after the samples.
    using output_shape = OutputShape;
    static constexpr std::size_t rank = OutputShape::rank + 1;

    Predictions() = default;
    /// `samples` rows of OutputShape::size values each.
    Predictions(std::size_t samples, std::vector<float> values) : samples_(samples), values_(std::move(values)) {}

    /// (samples, output dims...), as Keras' array's shape.
    [[nodiscard]] std::array<std::size_t, rank>
    shape() const noexcept
    {
        std::array<std::size_t, rank> s{samples_};
        for (std::size_t d = 0; d < OutputShape::rank; ++d)
            s[d + 1] = OutputShape::dims[d];
        return s;
    }
    [[nodiscard]] std::size_t samples() const noexcept { return samples_; }

    /// The value at (sample, i, j...): one index per axis.
    template <std::integral... I>
        requires(sizeof...(I) == rank)
    [[nodiscard]] float
    operator()(I... index) const noexcept
    {
        const std::array<std::size_t, rank> at{static_cast<std::size_t>(index)...};
        const auto dims = shape();
        std::size_t flat = 0;
        for (std::size_t d = 0; d < rank; ++d)
            flat = flat * dims[d] + at[d];
        return values_[flat];
    }
    /// Sample s's outputs, row-major.
    [[nodiscard]] std::span<const float>
    row(std::size_t s) const noexcept
    {
        return {values_.data() + s * OutputShape::size, OutputShape::size};
    }

    /// The values flat, row-major.
    [[nodiscard]] const float* data() const noexcept { return values_.data(); }
    [[nodiscard]] std::size_t size() const noexcept { return values_.size(); }
    [[nodiscard]] float operator[](std::size_t k) const noexcept { return values_[k]; }
    [[nodiscard]] auto begin() const noexcept { return values_.begin(); }
    [[nodiscard]] auto end() const noexcept { return values_.end(); }
    [[nodiscard]] const std::vector<float>& values() const& noexcept { return values_; }
    [[nodiscard]] std::vector<float> values() && noexcept { return std::move(values_); }
    operator const std::vector<float>&() const& noexcept { return values_; }

    friend bool operator==(const Predictions&, const Predictions&) = default;

private:
    std::size_t samples_ = 0;
    std::vector<float> values_;
};

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_PREDICTIONS_HPP
