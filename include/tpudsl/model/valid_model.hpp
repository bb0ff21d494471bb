/// @file Defines tpudsl::valid_model, the yes/no twin of Sequential's checks.
#ifndef TPUDSL_MODEL_VALID_MODEL_HPP
#define TPUDSL_MODEL_VALID_MODEL_HPP

#include <tpudsl/core/input.hpp>
#include <tpudsl/model/layout.hpp>

namespace tpudsl {

namespace detail {
template <class In, class... Layers>
[[nodiscard]] consteval bool
valid_model_impl() noexcept
{
    if constexpr (sizeof...(Layers) == 0 || !is_input<In>::value)
        return false;
    else
        return chain<false, 0, 0, input_tensor_t<In>, Layers...>::valid;
}
} // namespace detail

/// True when `Sequential<In, Layers...>` compiles: the same per-layer rules, read without any
/// diagnostic, for `if constexpr`, `requires` clauses and static tests.
template <class In, class... Layers>
inline constexpr bool valid_model = detail::valid_model_impl<In, Layers...>();

} // namespace tpudsl

#endif // !TPUDSL_MODEL_VALID_MODEL_HPP
