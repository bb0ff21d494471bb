/// @file Defines detail::concat, how tpudsl builds the text of its messages: one function, compiled
/// once, that joins the pieces it is given. A chain of `+` on std::string is expanded inline where it
/// stands (each `+` a temporary, its growth and its clean-up when an exception passes); with a
/// message on every error path of the checks and the files, those chains were a large part of what
/// a training program took to compile, for code that runs only when something is wrong.
#ifndef TPUDSL_DETAIL_TEXT_HPP
#define TPUDSL_DETAIL_TEXT_HPP

#include <cstddef>
#include <initializer_list>
#include <stdexcept>
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

/// Throws std::invalid_argument "tpudsl: <what>": how the checks at the library's edges (arrays,
/// datasets, arguments) refuse what they are given.
[[noreturn]] inline void
bad_input(const std::string& what)
{
    throw std::invalid_argument(concat({"tpudsl: ", what}));
}

/// `s` as one line of plain text, for a message that quotes what a file says: every byte outside
/// printable ASCII (a line break, a terminal's escape sequence, UTF-8) as \xHH.
[[nodiscard]] inline std::string
printable(std::string_view s)
{
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(s.size());
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 0x20 && c < 0x7f) {
            out += ch;
        } else {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

} // namespace tpudsl::detail

#endif // !TPUDSL_DETAIL_TEXT_HPP
