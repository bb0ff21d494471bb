/// @file Defines tpudsl::layer_base, the defaults a layer spec inherits (no weights, no scratch, keeps
/// the shape, reads floats).
#ifndef TPUDSL_LAYERS_LAYER_BASE_HPP
#define TPUDSL_LAYERS_LAYER_BASE_HPP

#include <tpudsl/core/activations.hpp>
#include <tpudsl/core/weights.hpp>
#include <tpudsl/detail/diagnostics.hpp>

#include <cstddef>
#include <type_traits>

namespace tpudsl {

namespace detail {
/// A layer whose activation is Softmax keeps its logits (`N` floats per sample) for the loss, which
/// then works on logits exactly (log-sum-exp) as modern Keras does.
template <class Act, std::size_t N>
inline constexpr std::size_t logits_size = std::is_same_v<Act, Softmax> ? N : 0;
} // namespace detail

/// Defaults for a layer spec; a layer redefines what differs. A user-defined layer derives from it too.
struct layer_base {
    /// The first rule an input breaks: by default, only integer inputs (token ids) are refused.
    template <class In, std::size_t Index>
    [[nodiscard]] static consteval detail::rule
    check() noexcept
    {
        return std::is_floating_point_v<typename In::value_type> ? detail::rule::ok
                                                                 : detail::rule::needs_float_input;
    }

    template <class In>
    using expects = typename In::shape;

    template <class In>
    using output = detail::tensor<typename In::shape>;

    template <class In>
    using weights = weight_list<>;

    template <class In>
    static constexpr std::size_t scratch_size = 0;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_LAYER_BASE_HPP
