/// @file Defines tpudsl::name_literal: a name written as a string literal in a template argument, as a
/// Functional model's nodes (`Node<"conv", ...>`) and a layer's named weights
/// (`named_weight<"factors", ...>`) take theirs.
#ifndef TPUDSL_CORE_NAME_LITERAL_HPP
#define TPUDSL_CORE_NAME_LITERAL_HPP

#include <cstddef>
#include <string_view>

namespace tpudsl {

/// A name, written as a string literal in a template argument: `Node<"conv", ...>`.
template <std::size_t N>
struct name_literal {
    char chars[N]{};
    consteval name_literal(const char (&s)[N]) noexcept
    {
        for (std::size_t i = 0; i < N; ++i)
            chars[i] = s[i];
    }
    constexpr name_literal() noexcept = default;
    [[nodiscard]] constexpr std::string_view
    view() const noexcept
    {
        return {chars, N - 1};
    }
};

} // namespace tpudsl

#endif // !TPUDSL_CORE_NAME_LITERAL_HPP
