/// @file Defines tpudsl::Shape, a per-sample tensor shape known at compile time.
#ifndef TPUDSL_CORE_SHAPE_HPP
#define TPUDSL_CORE_SHAPE_HPP

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

namespace tpudsl {

/// The shape of one sample, channels last as in Keras: `Shape<300>` for 300 token ids,
/// `Shape<28, 28, 1>` for a grey image. The batch dimension is never part of a Shape.
/// @tparam D the extents, outermost first
template <std::size_t... D>
struct Shape {
    static constexpr std::size_t rank = sizeof...(D);
    static constexpr std::size_t size = (std::size_t{1} * ... * D);
    static constexpr std::array<std::size_t, sizeof...(D)> dims{D...};

    /// Keras' printed form with the batch axis first: `(None, 300, 7)`.
    [[nodiscard]] static std::string
    keras_string()
    {
        std::string s = "(None";
        ((s += ", ", s += std::to_string(D)), ...);
        return s + ")";
    }
};

namespace detail {
template <class T>
struct is_shape : std::false_type {};
template <std::size_t... D>
struct is_shape<Shape<D...>> : std::true_type {};

/// `Shape` from a std::array of extents (the bridge from value-level shape arithmetic back to types).
template <auto Dims, class Seq = std::make_index_sequence<Dims.size()>>
struct shape_from_array;
template <auto Dims, std::size_t... I>
struct shape_from_array<Dims, std::index_sequence<I...>> {
    using type = Shape<Dims[I]...>;
};
} // namespace detail

/// True for every `tpudsl::Shape<...>`.
template <class T>
concept ShapeType = detail::is_shape<T>::value;

/// `Shape<a, b, c>` from `std::array{a, b, c}`.
template <auto Dims>
using shape_from_array_t = typename detail::shape_from_array<Dims>::type;

} // namespace tpudsl

#endif // !TPUDSL_CORE_SHAPE_HPP
