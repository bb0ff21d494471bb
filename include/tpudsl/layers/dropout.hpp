/// @file Defines tpudsl::Dropout, Keras' inverted dropout.
#ifndef TPUDSL_LAYERS_DROPOUT_HPP
#define TPUDSL_LAYERS_DROPOUT_HPP

#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/detail/diagnostics.hpp>
#include <tpudsl/layers/layer_base.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

namespace detail {
/// The rules of Dropout, in the order they are checked.
enum class dropout_rule { ok, rate };
template <float Rate>
struct dropout_ops;   // layers/dropout_ops.hpp
} // namespace detail

/// `Dropout(rate)`: in training each element is zeroed with probability Rate and the others are
/// scaled by 1 / (1 - Rate); outside training it is the identity. The shape is kept.
/// @tparam Rate the drop probability, in [0, 1)
template <float Rate>
struct Dropout : layer_base {
    static constexpr std::string_view class_name = "Dropout";
    static constexpr std::string_view base_name = "dropout";
    static constexpr float rate = Rate;
    using ops = detail::dropout_ops<Rate>;
    static constexpr bool gradient_in_place = true;
    static constexpr bool row_wise = true;

    using rule = detail::dropout_rule;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval rule
    check() noexcept
    {
        // Written so that NaN fails too.
        if (!(Rate >= 0.0f && Rate < 1.0f))
            return rule::rate;
        return rule::ok;
    }

    template <rule R>
    struct diagnostic {
        static_assert(R != rule::rate, "tpudsl::Dropout<Rate>: requires 0 <= Rate < 1 [TPUDSL_DROPOUT_RATE]");
    };

    /// The keep mask of one sample.
    template <class In>
    static constexpr std::size_t scratch_size = In::shape::size;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_DROPOUT_HPP
