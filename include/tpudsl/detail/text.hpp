/// @file Defines detail::concat, how tpudsl builds the text of its messages: one function, compiled
/// once, that joins the pieces it is given. A chain of `+` on std::string is expanded inline where it
/// stands (each `+` a temporary, its growth and its clean-up when an exception passes); with a
/// message on every error path of the checks and the files, those chains were a large part of what
/// a training program took to compile, for code that runs only when something is wrong.
#ifndef TPUDSL_DETAIL_TEXT_HPP
#define TPUDSL_DETAIL_TEXT_HPP

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

namespace tpudsl::detail {

/// The pieces, one after the other: `concat({"x has shape ", shape, ", but ..."})`. A piece may be a
/// temporary (`std::to_string(n)`): it lives until the end of the full expression.
[[nodiscard, gnu::noinline]] inline std::string
concat(std::initializer_list<std::string_view> pieces)
{
    std::size_t size = 0;
    for (const std::string_view p : pieces)
        size += p.size();
    std::string text;
    text.reserve(size);
    for (const std::string_view p : pieces)
        text.append(p);
    return text;
}

} // namespace tpudsl::detail

#endif // !TPUDSL_DETAIL_TEXT_HPP
