/// @file Defines Keras' reshaping layers that a graph needs between its branches: Reshape, Permute,
/// RepeatVector and Identity.
#ifndef TPUDSL_LAYERS_RESHAPING_HPP
#define TPUDSL_LAYERS_RESHAPING_HPP

#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/detail/diagnostics.hpp>
#include <tpudsl/layers/layer_base.hpp>

#include <array>
#include <cstddef>
#include <string_view>

namespace tpudsl {

namespace detail {
/// The rules of the reshaping layers, in the order they are checked.
enum class reshaping_rule { ok, reshape_size, permute_dims, repeat_needs_rank1, repeat_zero };

template <reshaping_rule R>
struct reshaping_diagnostic {
    static_assert(R != reshaping_rule::reshape_size,
                  "tpudsl::Reshape<D...>: the target shape holds as many elements as the input (Keras' "
                  "target_shape, without the batch axis; write every extent) [TPUDSL_RESHAPE_SIZE]");
    static_assert(R != reshaping_rule::permute_dims,
                  "tpudsl::Permute<Dims...>: Dims is a permutation of 1..rank of the input (Keras' dims, which "
                  "count from 1 and leave out the batch axis) [TPUDSL_PERMUTE_DIMS]");
    static_assert(R != reshaping_rule::repeat_needs_rank1,
                  "tpudsl::RepeatVector<N>: requires a rank-1 input (features); Flatten first [TPUDSL_REPEAT_NEEDS_RANK1]");
    static_assert(R != reshaping_rule::repeat_zero, "tpudsl::RepeatVector<N>: requires N > 0 [TPUDSL_REPEAT_ZERO]");
};

struct copy_ops;                 // layers/reshaping_ops.hpp
template <std::size_t... Dims>
struct permute_ops;              // layers/reshaping_ops.hpp
template <std::size_t N>
struct repeat_vector_ops;        // layers/reshaping_ops.hpp

/// What every reshaping layer shares: no weights, a pass per sample, its own rules.
struct reshaping_base : layer_base {
    static constexpr bool position_independent = true;
    using rule = reshaping_rule;
    template <rule R>
    using diagnostic = reshaping_diagnostic<R>;
    static constexpr bool row_wise = true;
};
} // namespace detail

/// `Reshape(target_shape)`: the same elements in row-major order, as the shape `Shape<D...>`.
template <std::size_t... D>
struct Reshape : detail::reshaping_base {
    static constexpr std::string_view class_name = "Reshape";
    static constexpr std::string_view base_name = "reshape";
    using ops = detail::copy_ops;
    /// Its output is its input's memory, unchanged.
    static constexpr bool aliases_input = true;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval rule
    check() noexcept
    {
        return Shape<D...>::size == In::shape::size && sizeof...(D) > 0 ? rule::ok : rule::reshape_size;
    }
    template <class In>
    using output = detail::tensor<Shape<D...>>;
};

/// `Identity()`: its input, unchanged (a named point of a graph).
struct Identity : detail::reshaping_base {
    static constexpr std::string_view class_name = "Identity";
    static constexpr std::string_view base_name = "identity";
    using ops = detail::copy_ops;
    static constexpr bool aliases_input = true;
};

/// `Permute(dims)`: the per-sample axes reordered; Dims counts them from 1 as Keras does, so
/// `Permute<2, 1>` transposes a (steps, features) input.
template <std::size_t... Dims>
struct Permute : detail::reshaping_base {
    static constexpr std::string_view class_name = "Permute";
    static constexpr std::string_view base_name = "permute";
    using ops = detail::permute_ops<Dims...>;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval rule
    check() noexcept
    {
        if (sizeof...(Dims) != In::shape::rank)
            return rule::permute_dims;
        std::array<bool, sizeof...(Dims)> seen{};
        for (const std::size_t d : {Dims...}) {
            if (d == 0 || d > sizeof...(Dims) || seen[d - 1])
                return rule::permute_dims;
            seen[d - 1] = true;
        }
        return rule::ok;
    }
    template <class In>
    using output = detail::tensor<Shape<In::shape::dims[(Dims - 1) % In::shape::rank]...>>;
};

/// `RepeatVector(n)`: (features) becomes (N, features), the vector N times.
template <std::size_t N>
struct RepeatVector : detail::reshaping_base {
    static constexpr std::string_view class_name = "RepeatVector";
    static constexpr std::string_view base_name = "repeat_vector";
    using ops = detail::repeat_vector_ops<N>;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval rule
    check() noexcept
    {
        if (N == 0)
            return rule::repeat_zero;
        return In::shape::rank == 1 ? rule::ok : rule::repeat_needs_rank1;
    }
    template <class In>
    using expects = Shape<In::shape::size>;
    template <class In>
    using output = detail::tensor<Shape<N, In::shape::size>>;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_RESHAPING_HPP
