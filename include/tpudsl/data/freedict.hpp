/// @file Reads FreeDict's bilingual dictionaries in dictd's format (Debian's dict-freedict-* packages,
/// /usr/share/dictd): parallel words and phrases for translation models.
///
///   freedict-eng-spa.index     one line per entry: headword TAB offset TAB length, the two numbers in
///                              dictd's base 64 (A-Z a-z 0-9 + /, most significant digit first)
///   freedict-eng-spa.dict.dz   the entries' text (dictzip: gzip, read through zlib; a plain .dict too)
///
/// An entry's text is its headword line (the headword, then its pronunciation between slashes) and its
/// senses, one a line, numbered ("1. calmarse, sosegarse") or, for one sense, not ("abandonar"); each
/// sense lists translations separated by commas. The dictionary's own 00-database-* entries (its
/// name, licence, changelog) are not words and are skipped. An index line without its three fields, a
/// number that is not base 64 or does not fit, an entry that reaches past the text's end, an entry
/// with no translation: an exception naming the file, the line and what was expected.
#ifndef TPUDSL_DATA_FREEDICT_HPP
#define TPUDSL_DATA_FREEDICT_HPP

#include <tpudsl/data/idx.hpp>
#include <tpudsl/data/sequences.hpp>
#include <tpudsl/detail/text.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tpudsl::data {

/// One headword and its translations, in the dictionary's order (every sense's, first sense first).
struct dictionary_entry {
    std::string headword;
    std::vector<std::string> translations;
};

namespace freedict {

/// Where the dictionaries are looked for: $TPUDSL_FREEDICT_DIR, else Debian's /usr/share/dictd.
[[nodiscard]] inline std::string
default_directory()
{
    if (const char* env = std::getenv("TPUDSL_FREEDICT_DIR"); env && *env)
        return env;
    return "/usr/share/dictd";
}

namespace detail {

/// dictd's base-64 number, or an error naming the index line.
inline std::uint64_t
base64_number(std::string_view digits, const std::string& path, std::size_t line, const char* what)
{
    if (digits.empty() || digits.size() > 10)   // 10 digits: 60 bits
        data::detail::bad_line(path, line, tpudsl::detail::concat({"expected ", what, " in dictd's base 64 (1 to 10 "
                                                                   "digits), found '", data::detail::shown(digits), "'"}));
    std::uint64_t v = 0;
    for (const char c : digits) {
        std::uint64_t d = 0;
        if (c >= 'A' && c <= 'Z')
            d = static_cast<std::uint64_t>(c - 'A');
        else if (c >= 'a' && c <= 'z')
            d = static_cast<std::uint64_t>(c - 'a') + 26;
        else if (c >= '0' && c <= '9')
            d = static_cast<std::uint64_t>(c - '0') + 52;
        else if (c == '+')
            d = 62;
        else if (c == '/')
            d = 63;
        else
            data::detail::bad_line(path, line, tpudsl::detail::concat({"expected ", what, " in dictd's base 64 (A-Z a-z "
                                                                       "0-9 + /), found '", data::detail::shown(digits), "'"}));
        v = v * 64 + d;
    }
    return v;
}

/// `s` without the spaces and tabs at its ends.
[[nodiscard]] inline std::string_view
trimmed(std::string_view s) noexcept
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

/// Parses one entry's text into `e`; false when it has no translation.
inline bool
parse_entry(std::string_view text, dictionary_entry& e)
{
    std::size_t end = text.find('\n');
    std::string_view head = text.substr(0, end);
    if (const std::size_t slash = head.find(" /"); slash != std::string_view::npos)
        head = head.substr(0, slash);   // the pronunciation
    e.headword = std::string(trimmed(head));
    while (end != std::string_view::npos) {
        const std::size_t from = end + 1;
        end = text.find('\n', from);
        std::string_view sense = text.substr(from, end == std::string_view::npos ? std::string_view::npos : end - from);
        std::size_t digits = 0;
        while (digits < sense.size() && sense[digits] >= '0' && sense[digits] <= '9')
            ++digits;
        if (digits > 0 && digits + 1 < sense.size() && sense[digits] == '.' && sense[digits + 1] == ' ')
            sense.remove_prefix(digits + 2);   // "2. amainar"
        while (!sense.empty()) {
            const std::size_t comma = sense.find(',');
            const std::string_view word = trimmed(sense.substr(0, comma));
            if (!word.empty())
                e.translations.emplace_back(word);
            sense = comma == std::string_view::npos ? std::string_view{} : sense.substr(comma + 1);
        }
    }
    return !e.headword.empty() && !e.translations.empty();
}

/// Every byte of a file, plain or gzip-compressed (dictzip is gzip).
inline std::string
whole_file(const std::string& path)
{
    data::detail::byte_reader in(path);
    std::string bytes;
    char chunk[1 << 16];
    while (const std::size_t got = in.read_some(chunk, sizeof chunk))
        bytes.append(chunk, got);
    in.expect_end("the whole text");
    return bytes;
}

} // namespace detail

/// The entries of a dictionary from its index and its text (`.dict.dz` or `.dict`), in the index's order.
inline std::vector<dictionary_entry>
read(const std::string& index_path, const std::string& dict_path)
{
    const std::string text = detail::whole_file(dict_path);
    (void)data::detail::regular_file_size(index_path);
    std::ifstream in(index_path, std::ios::binary);
    if (!in)
        throw std::runtime_error(tpudsl::detail::concat({"tpudsl: cannot open '", index_path, "'"}));
    std::vector<dictionary_entry> entries;
    std::string line;
    for (std::size_t number = 1; data::detail::next_line(in, line); ++number) {
        const std::size_t tab1 = line.find('\t');
        const std::size_t tab2 = tab1 == std::string::npos ? tab1 : line.find('\t', tab1 + 1);
        if (tab2 == std::string::npos || line.find('\t', tab2 + 1) != std::string::npos)
            data::detail::bad_line(index_path, number, tpudsl::detail::concat({"expected 'headword<TAB>offset<TAB>length', "
                                                                               "found '", data::detail::shown(line), "'"}));
        const std::string_view view(line);
        const std::string_view headword = view.substr(0, tab1);
        const std::uint64_t offset =
            detail::base64_number(view.substr(tab1 + 1, tab2 - tab1 - 1), index_path, number, "the offset");
        const std::uint64_t length = detail::base64_number(view.substr(tab2 + 1), index_path, number, "the length");
        if (offset > text.size() || length > text.size() - offset)
            data::detail::bad_line(index_path, number,
                                   tpudsl::detail::concat({"entry '", data::detail::shown(headword), "' spans bytes ",
                                                           std::to_string(offset), " to ", std::to_string(offset + length),
                                                           ", past the end of '", dict_path, "' (",
                                                           std::to_string(text.size()), " bytes)"}));
        if (headword.starts_with("00database") || headword.starts_with("00-database"))
            continue;
        dictionary_entry e;
        if (!detail::parse_entry(std::string_view(text).substr(offset, length), e))
            data::detail::bad_line(index_path, number, tpudsl::detail::concat({"entry '", data::detail::shown(headword),
                                                                               "' has no headword line and translation"}));
        entries.push_back(std::move(e));
    }
    return entries;
}

/// FreeDict's `pair` dictionary (eng-spa, eng-deu, ...) from `dir`: freedict-<pair>.index and
/// freedict-<pair>.dict.dz (or .dict). Absent files throw missing_data_set, saying how to get them.
inline std::vector<dictionary_entry>
load_data(const std::string& pair = "eng-spa", const std::string& dir = default_directory())
{
    const std::string how = tpudsl::detail::concat({"install Debian's dict-freedict-", pair,
                                                    " (apt-get install dict-freedict-", pair,
                                                    "), or point TPUDSL_FREEDICT_DIR at its files"});
    const std::string stem = "freedict-" + pair;
    const std::string index = data::find_file(dir, {(stem + ".index").c_str()}, how);
    const std::string dict = data::find_file(dir, {(stem + ".dict.dz").c_str(), (stem + ".dict").c_str()}, how);
    return read(index, dict);
}

} // namespace freedict

} // namespace tpudsl::data

#endif // !TPUDSL_DATA_FREEDICT_HPP
