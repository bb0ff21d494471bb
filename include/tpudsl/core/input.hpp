/// @file Defines tpudsl::Input, the first entry of every Sequential model.
#ifndef TPUDSL_CORE_INPUT_HPP
#define TPUDSL_CORE_INPUT_HPP

#include <tpudsl/core/shape.hpp>

#include <type_traits>

namespace tpudsl {

/// The model's input: the shape of one sample and its element type (Keras' `Input(shape, dtype)`).
/// Integer inputs carry token ids and feed an Embedding; everything else reads floats.
/// @tparam S the per-sample shape, a `tpudsl::Shape<...>`
/// @tparam T the element type, `float` by default
template <class S, class T = float>
struct Input {
    using shape = S;
    using value_type = T;
};

namespace detail {
template <class T>
struct is_input : std::false_type {};
template <class S, class T>
struct is_input<Input<S, T>> : std::true_type {};
} // namespace detail

} // namespace tpudsl

#endif // !TPUDSL_CORE_INPUT_HPP
