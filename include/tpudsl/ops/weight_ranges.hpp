/// @file Defines weight_ranges<Model>: the parts of the parameter buffer that the all-reduce treats
/// apart, as constants of the model type (either runner, chain or graph, hands them to the reduce).
#ifndef TPUDSL_OPS_WEIGHT_RANGES_HPP
#define TPUDSL_OPS_WEIGHT_RANGES_HPP

#include <tpudsl/core/gradient_layout.hpp>

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace tpudsl::ops {

template <class Model>
struct weight_ranges {
private:
    template <std::size_t I>
    using layer = typename Model::template layer<I>;
    static constexpr std::size_t layers = Model::layer_count;

    template <std::size_t I>
    static constexpr bool accumulates = layer<I>::weight_count > 0 && layer<I>::spec::accumulates_gradient;

    /// How many of layer I's weights are non-trainable.
    template <std::size_t I>
    static consteval std::size_t
    moving_weights() noexcept
    {
        return []<std::size_t... J>(std::index_sequence<J...>) {
            return (std::size_t{0} + ... + (layer<I>::template weight<J>::trainable ? 0 : 1));
        }(std::make_index_sequence<layer<I>::weight_count>{});
    }

    /// Appends layer I's non-trainable weights to `out` (at k).
    template <std::size_t I, std::size_t... J>
    static constexpr void
    add_moving_ranges([[maybe_unused]] moving_range* out, [[maybe_unused]] std::size_t& k,
                      std::index_sequence<J...>) noexcept
    {
        [[maybe_unused]] const auto add = [&]<class W>(std::type_identity<W>) {
            if constexpr (!W::trainable)
                out[k++] = moving_range{W::offset, W::offset + W::size, layer<I>::spec::moving_momentum};
        };
        (add(std::type_identity<typename layer<I>::template weight<J>>{}), ...);
    }

    /// Appends layer I's trainable weights' ranges to `out` (at k).
    template <std::size_t I, std::size_t... J>
    static constexpr void
    add_trainable_ranges([[maybe_unused]] std::pair<std::size_t, std::size_t>* out, [[maybe_unused]] std::size_t& k,
                         std::index_sequence<J...>) noexcept
    {
        [[maybe_unused]] const auto add = [&]<class W>(std::type_identity<W>) {
            if constexpr (W::trainable)
                out[k++] = {W::offset, W::offset + W::size};
        };
        (add(std::type_identity<typename layer<I>::template weight<J>>{}), ...);
    }

public:
    /// The parameter ranges [begin, end) whose gradients layers add into (rather than write): the
    /// arena must be cleared there between steps.
    static constexpr auto accumulating = [] {
        constexpr std::size_t count = []<std::size_t... I>(std::index_sequence<I...>) {
            return (std::size_t{0} + ... + (accumulates<I> ? 1 : 0));
        }(std::make_index_sequence<layers>{});
        std::array<std::pair<std::size_t, std::size_t>, count> ranges{};
        std::size_t k = 0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((accumulates<I> ? (ranges[k++] = {layer<I>::param_offset, layer<I>::param_end}, 0) : 0), ...);
        }(std::make_index_sequence<layers>{});
        return ranges;
    }();

    /// Each trainable weight's [begin, end) (a Keras variable), in layer order: what clipnorm clips one
    /// by one.
    static constexpr auto trainable = [] {
        constexpr std::size_t count = []<std::size_t... I>(std::index_sequence<I...>) {
            return (std::size_t{0} + ... + (layer<I>::weight_count - moving_weights<I>()));
        }(std::make_index_sequence<layers>{});
        std::array<std::pair<std::size_t, std::size_t>, count> ranges{};
        std::size_t k = 0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (add_trainable_ranges<I>(ranges.data(), k, std::make_index_sequence<layer<I>::weight_count>{}), ...);
        }(std::make_index_sequence<layers>{});
        return ranges;
    }();

    /// The non-trainable weights, in layer order, with their layer's moving_momentum: the optimizer
    /// skips them, the reduce moves them as moving statistics (momentum 1: not at all).
    static constexpr auto moving = [] {
        constexpr std::size_t count = [] {
            std::size_t c = 0;
            [&]<std::size_t... I>(std::index_sequence<I...>) { ((c += moving_weights<I>()), ...); }(
                std::make_index_sequence<layers>{});
            return c;
        }();
        std::array<moving_range, count> ranges{};
        std::size_t k = 0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (add_moving_ranges<I>(ranges.data(), k, std::make_index_sequence<layer<I>::weight_count>{}), ...);
        }(std::make_index_sequence<layers>{});
        return ranges;
    }();
};

} // namespace tpudsl::ops

#endif // !TPUDSL_OPS_WEIGHT_RANGES_HPP
