/// @file Keras' preprocessing helpers: pad_sequences<MaxLen>, to_categorical<N>, scale_pixels
/// (keras-semantics §5).
#ifndef TPUDSL_DATA_PREPROCESSING_HPP
#define TPUDSL_DATA_PREPROCESSING_HPP

#include <tpudsl/detail/text.hpp>

#include <xtensor/xtensor.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tpudsl {

/// Where pad_sequences pads or cuts: before the sequence (Keras' default) or after it.
enum class sequence_side { pre, post };

struct PadOptions {
    sequence_side padding = sequence_side::pre;
    sequence_side truncating = sequence_side::pre;
    std::int32_t value = 0;
};

/// `pad_sequences(sequences, maxlen=MaxLen)`: an (n, MaxLen) int32 array. Longer sequences lose
/// their first tokens ("pre", keeping the last MaxLen) or their last ("post"); shorter ones are
/// filled with `value` before ("pre": right-aligned) or after ("post"). Empty stays all padding.
template <std::size_t MaxLen>
[[nodiscard]] xt::xtensor<std::int32_t, 2>
pad_sequences(const std::vector<std::vector<std::int32_t>>& sequences, PadOptions options = {})
{
    static_assert(MaxLen > 0, "tpudsl::pad_sequences<MaxLen>: requires MaxLen > 0");
    xt::xtensor<std::int32_t, 2> out(std::array<std::size_t, 2>{sequences.size(), MaxLen}, options.value);
    for (std::size_t i = 0; i < sequences.size(); ++i) {
        const auto& s = sequences[i];
        const std::size_t keep = std::min(s.size(), MaxLen);
        const std::size_t from = options.truncating == sequence_side::pre ? s.size() - keep : 0;
        const std::size_t to = options.padding == sequence_side::pre ? MaxLen - keep : 0;
        for (std::size_t k = 0; k < keep; ++k)
            out(i, to + k) = s[from + k];
    }
    return out;
}

/// `to_categorical(y, num_classes=N)`: one float row per label with a 1 at the label. Labels of any
/// integer type are compared as they are (an unsigned 2^64 - 1 is not -1); floating-point labels must
/// be whole numbers.
template <std::size_t N, class Labels>
[[nodiscard]] xt::xtensor<float, 2>
to_categorical(const Labels& labels)
{
    static_assert(N > 0, "tpudsl::to_categorical<N>: requires N > 0");
    const std::size_t n = labels.size();
    xt::xtensor<float, 2> out(std::array<std::size_t, 2>{n, N}, 0.0f);
    auto it = labels.begin();
    for (std::size_t i = 0; i < n; ++i, ++it) {
        const auto y = *it;
        using T = std::remove_cvref_t<decltype(y)>;
        bool inside;
        std::string text;
        if constexpr (std::is_integral_v<T>) {
            inside = std::cmp_greater_equal(y, 0) && std::cmp_less(y, N);
            text = std::to_string(y);
        } else {
            const auto d = static_cast<double>(y);
            inside = d >= 0 && d < static_cast<double>(N) && d == std::floor(d);
            std::ostringstream os;
            os << d;
            text = os.str();
        }
        if (!inside)
            throw std::invalid_argument(tpudsl::detail::concat({"tpudsl::to_categorical<", std::to_string(N),
                                                                ">: label ", text, " at sample ", std::to_string(i),
                                                                " is outside [0, ", std::to_string(N), ")",
                                                                (std::is_integral_v<T> ? "" : " or not a whole number")}));
        out(i, static_cast<std::size_t>(y)) = 1.0f;
    }
    return out;
}

/// Bytes 0..255 to floats in [0, 1], as `x / 255.0`.
[[nodiscard]] inline std::vector<float>
scale_pixels(const std::vector<std::uint8_t>& bytes)
{
    std::vector<float> out(bytes.size());
    for (std::size_t i = 0; i < bytes.size(); ++i)
        out[i] = static_cast<float>(bytes[i]) / 255.0f;
    return out;
}

} // namespace tpudsl

#endif // !TPUDSL_DATA_PREPROCESSING_HPP
