/// @file Binds layer specs to their input shapes and lays out the model at compile time (private
/// machinery of Sequential and valid_model).
#ifndef TPUDSL_MODEL_LAYOUT_HPP
#define TPUDSL_MODEL_LAYOUT_HPP

#include <tpudsl/core/input.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/detail/diagnostics.hpp>
#include <tpudsl/detail/type_list.hpp>
#include <tpudsl/layers/layer_concepts.hpp>

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

namespace tpudsl {

/// A weight of a bound layer: its role, Keras shape and offset (in floats) in the model's flat
/// parameter buffer, which is also its offset in every gradient arena. Offsets are multiples of
/// `buffer_alignment_floats`.
template <class W, std::size_t Offset>
struct bound_weight {
    static constexpr weight_role role = W::role;
    static constexpr std::string_view name = W::name;
    using shape = typename W::shape;
    using initializer = typename W::initializer;
    static constexpr bool trainable = W::trainable;
    static constexpr std::size_t size = W::size;
    static constexpr std::size_t offset = Offset;
};

/// A layer spec bound to the tensor it receives: its place in the model and every constant the
/// training engine needs.
template <std::size_t Index, class Spec, class In, std::size_t ParamOffset>
struct bound_layer;

namespace detail {

/// {0, a0, a0 + a1, ...}: where each of a row's parts begins, and the row's size last.
template <std::size_t N>
[[nodiscard]] constexpr std::array<std::size_t, N + 1>
prefix_sums(const std::array<std::size_t, N>& a) noexcept
{
    std::array<std::size_t, N + 1> p{};
    for (std::size_t i = 0; i < N; ++i)
        p[i + 1] = p[i] + a[i];
    return p;
}

template <std::size_t Start, class WeightList, class Seq = std::make_index_sequence<WeightList::count>>
struct bind_weights;
template <std::size_t Start, class... W, std::size_t... I>
struct bind_weights<Start, weight_list<W...>, std::index_sequence<I...>> {
    static constexpr std::array<std::size_t, sizeof...(W) + 1> offsets = [] {
        std::array<std::size_t, sizeof...(W) + 1> o{};
        o[0] = Start;
        std::size_t k = 0;
        ((o[k + 1] = o[k] + aligned_floats(W::size), ++k), ...);
        return o;
    }();
    using type = type_list<bound_weight<W, offsets[I]>...>;
    static constexpr std::size_t end = offsets[sizeof...(W)];
};

/// The first rule a layer breaks on `In` at `Index`: one of the model's (a layer that reads floats
/// given integers), else the layer's own `check`; its `ok` if none. No diagnostic is emitted.
template <class L, class In, std::size_t Index>
[[nodiscard]] consteval auto
verdict() noexcept
{
    if constexpr (!LayerSpec<L>)
        return model_rule::not_a_layer;
    else if constexpr (!L::reads_integers && !std::is_floating_point_v<typename In::value_type>)
        return model_rule::needs_float_input;
    else
        return L::template check<In, Index>();
}

template <class L, class In, auto R>
[[nodiscard]] consteval auto
output_of() noexcept
{
    if constexpr (rule_ok(R))
        return std::type_identity<typename L::template output<In>>{};
    else
        return std::type_identity<invalid_tensor>{};
}

template <class L, class In>
[[nodiscard]] consteval auto
expects_of() noexcept
{
    if constexpr (LayerSpec<L>)
        return std::type_identity<typename L::template expects<In>>{};
    else
        return std::type_identity<typename In::shape>{};
}

/// Emits the diagnostic for a broken rule (only when Report), then stands for the layer's output.
template <bool Report, std::size_t Index, class L, class In>
struct checked_step {
    static constexpr auto verdict_v = verdict<L, In, Index>();
    static constexpr bool ok = rule_ok(verdict_v);
    static constexpr bool reported = [] {
        if constexpr (Report && !ok)
            // Completing the type runs its static_asserts: that is the diagnostic.
            return sizeof(layer_error<verdict_v, Index, L, typename In::shape,
                                      typename decltype(expects_of<L, In>())::type>) > 0;
        else
            return true;
    }();
    using output = typename decltype(output_of<L, In, verdict_v>())::type;
};

/// Folds the layer list left to right: binds each spec to the tensor coming in, checks it and lays
/// out its weights after the previous layer's. After a failed check the rest is skipped, so one
/// mistake gives one diagnostic.
template <bool Report, std::size_t Index, std::size_t Offset, class In, class... Ls>
struct chain {
    using layers = type_list<>;
    using output = In;
    static constexpr std::size_t param_end = Offset;
    static constexpr bool valid = In::valid;
};

template <bool Report, std::size_t Index, std::size_t Offset, class In, class L, class... Rest>
    requires(In::valid)
struct chain<Report, Index, Offset, In, L, Rest...> {
private:
    using step = checked_step<Report, Index, L, In>;
    static_assert(step::reported);
    using here = std::conditional_t<step::ok, bound_layer<Index, L, In, Offset>, void>;
    static constexpr std::size_t here_end = [] {
        if constexpr (step::ok)
            return here::param_end;
        else
            return Offset;
    }();
    using next = chain<Report, Index + 1, here_end, typename step::output, Rest...>;

public:
    using layers = std::conditional_t<step::ok, typename prepend<here, typename next::layers>::type,
                                      type_list<>>;
    using output = typename next::output;
    static constexpr std::size_t param_end = next::param_end;
    static constexpr bool valid = next::valid;
};

template <bool Report, std::size_t Index, std::size_t Offset, class L, class... Rest>
struct chain<Report, Index, Offset, invalid_tensor, L, Rest...> {
    using layers = type_list<>;
    using output = invalid_tensor;
    static constexpr std::size_t param_end = Offset;
    static constexpr bool valid = false;
};

template <class S>
[[nodiscard]] consteval bool
nonempty_shape() noexcept
{
    if constexpr (!is_shape<S>::value)
        return false;
    else {
        if (S::rank == 0)
            return false;
        for (std::size_t d : S::dims)
            if (d == 0)
                return false;
        return true;
    }
}

/// The tensor an Input starts the chain with, or invalid_tensor for a bad Input.
template <class I>
[[nodiscard]] consteval auto
input_tensor_of() noexcept
{
    if constexpr (is_input<I>::value) {
        if constexpr (nonempty_shape<typename I::shape>())
            return std::type_identity<tensor<typename I::shape, typename I::value_type>>{};
        else
            return std::type_identity<invalid_tensor>{};
    } else {
        return std::type_identity<invalid_tensor>{};
    }
}
template <class I>
using input_tensor_t = typename decltype(input_tensor_of<I>())::type;

} // namespace detail

namespace detail {
/// The two parts of the I-th layer's Keras name, "dense" and 1 for "dense_1": a Sequential's
/// auto-name (its class's prefix, the layers of that class before it); a Functional model's node
/// name, as written.
template <class Model, std::size_t I>
[[nodiscard]] consteval std::string_view
layer_base_name() noexcept
{
    if constexpr (requires { Model::node_names; })
        return Model::node_names[Model::layer_node[I]];
    else
        return Model::template layer<I>::spec::base_name;
}
template <class Model, std::size_t I>
[[nodiscard]] consteval std::size_t
layer_same_name_count() noexcept
{
    if constexpr (requires { Model::node_names; })
        return 0;
    else
        return Model::template same_name_count<I>;
}
} // namespace detail

template <std::size_t Index, class Spec, class In, std::size_t ParamOffset>
struct bound_layer {
private:
    using weight_binding = detail::bind_weights<ParamOffset, typename Spec::template weights<In>>;

public:
    /// The layer as the user wrote it.
    using spec = Spec;
    /// 0-based position after the Input, as `model.layers[index]`.
    static constexpr std::size_t index = Index;
    using input_shape = typename In::shape;
    using input_type = typename In::value_type;
    using output_shape = typename Spec::template output<In>::shape;
    /// The layer's weights in Keras' order, each a `bound_weight` with its shape and offset.
    using weights = typename weight_binding::type;
    static constexpr std::size_t weight_count = weights::size;
    static constexpr std::size_t param_count = Spec::template weights<In>::param_count;
    /// Of which the optimizer updates (the rest are non-trainable, such as moving statistics).
    static constexpr std::size_t trainable_param_count = Spec::template weights<In>::trainable_param_count;
    /// Where this layer's weights begin and end in the flat parameter buffer (floats, aligned).
    static constexpr std::size_t param_offset = ParamOffset;
    static constexpr std::size_t param_end = weight_binding::end;
    /// Per-sample floats of scratch the layer keeps between forward and backward.
    static constexpr std::size_t scratch_size = Spec::template scratch_size<In>;

    /// The J-th weight (`bound_weight`).
    template <std::size_t J>
    using weight = detail::type_at_t<J, weights>;
};

} // namespace tpudsl

#endif // !TPUDSL_MODEL_LAYOUT_HPP
