/// @file Defines tpudsl::Sequential, a model as a type: `Sequential<Input<...>, Layers...>`.
#ifndef TPUDSL_MODEL_SEQUENTIAL_HPP
#define TPUDSL_MODEL_SEQUENTIAL_HPP

#include <tpudsl/core/input.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/detail/diagnostics.hpp>
#include <tpudsl/detail/type_list.hpp>
#include <tpudsl/model/layout.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

namespace tpudsl {

namespace detail {

template <class InputArg>
struct input_check {
    static constexpr bool is_input_v = is_input<InputArg>::value;
    static_assert(is_input_v, "tpudsl::Sequential<Input, Layers...>: the first argument must be "
                              "tpudsl::Input<Shape<...>, T> [TPUDSL_SEQUENTIAL_NEEDS_INPUT]");
    static constexpr bool shape_ok = [] {
        if constexpr (is_input_v) {
            if constexpr (!nonempty_shape<typename InputArg::shape>())
                return sizeof(layer_error<model_rule::input_empty_shape, 0, InputArg, typename InputArg::shape,
                                          any_shape_of_rank<1>>) == 0;
            return true;
        } else {
            return false;
        }
    }();
    static constexpr bool valid = is_input_v && shape_ok;
};

/// The auto-name prefix of the layer a wrapper wraps (`dense` for TimeDistributed<Dense>), or empty.
template <class Spec>
[[nodiscard]] constexpr std::string_view
wrapped_base_name() noexcept
{
    if constexpr (requires { Spec::wrapped_base_name; })
        return Spec::wrapped_base_name;
    else
        return {};
}

/// Keras' auto-name of a layer from its class's base name and the layers of that name before it:
/// ("conv1d", 0) -> "conv1d", ("conv1d", 1) -> "conv1d_1".
[[nodiscard]] inline std::string
auto_layer_name(std::string_view base_name, std::size_t same_name_count)
{
    std::string name{base_name};
    if (same_name_count > 0) {
        name += '_';
        name += std::to_string(same_name_count);
    }
    return name;
}

template <class Layers>
struct layer_totals;
template <class... B>
struct layer_totals<type_list<B...>> {
    static constexpr std::size_t param_count = (std::size_t{0} + ... + B::param_count);
    static constexpr std::size_t trainable_param_count = (std::size_t{0} + ... + B::trainable_param_count);
};

} // namespace detail

/// A model as a type. `Sequential<Input<Shape<28, 28, 1>>, Conv2D<64, 3>, ..., Dense<10>>` binds each
/// layer to the shape coming in and checks it when the type is used; a layer that does not fit
/// fails to compile with one message naming the layer, its position and the shapes.
///
/// Every member is a constant of the type: shapes, parameter counts, Keras weight shapes, the offset
/// of each weight in one flat aligned parameter buffer, and the per-sample workspace.
/// @tparam In     `Input<Shape<...>, T>`
/// @tparam Layers the layers, in data-flow order
template <class In, class... Layers>
struct Sequential {
private:
    using in_check = detail::input_check<In>;
    static_assert(sizeof...(Layers) > 0 || !in_check::valid,
                  "tpudsl::Sequential<Input, Layers...>: requires at least one layer after the Input "
                  "[TPUDSL_SEQUENTIAL_EMPTY]");
    using chain = std::conditional_t<in_check::valid,
                                     detail::chain<true, 0, 0, detail::input_tensor_t<In>, Layers...>,
                                     detail::chain<true, 0, 0, detail::invalid_tensor>>;
    using totals = detail::layer_totals<typename chain::layers>;

    static constexpr std::array<std::string_view, sizeof...(Layers)> base_names_ = [] {
        if constexpr (chain::valid)
            return std::array<std::string_view, sizeof...(Layers)>{Layers::base_name...};
        else
            return std::array<std::string_view, sizeof...(Layers)>{};
    }();
    // What wrappers wrap: Keras names a wrapped layer too, so it counts among its class.
    static constexpr std::array<std::string_view, sizeof...(Layers)> wrapped_names_ = [] {
        if constexpr (chain::valid)
            return std::array<std::string_view, sizeof...(Layers)>{detail::wrapped_base_name<Layers>()...};
        else
            return std::array<std::string_view, sizeof...(Layers)>{};
    }();

public:
    /// True when every layer fits (false only while a diagnostic is being reported).
    static constexpr bool valid = chain::valid;

    using input = In;
    using input_shape = typename detail::input_tensor_t<In>::shape;
    using input_type = typename detail::input_tensor_t<In>::value_type;
    using output_shape = typename chain::output::shape;

    /// Layers after the Input (`len(model.layers)`).
    static constexpr std::size_t layer_count = sizeof...(Layers);

    /// The I-th layer, bound: `layer<I>::output_shape`, `::param_count`, `::weight<J>::offset`, ...
    template <std::size_t I>
    using layer = detail::type_at_t<I, typename chain::layers>;

    /// Every weight's floats; of them, those the optimizer updates and the rest (moving statistics),
    /// as the summary's "Trainable params" and "Non-trainable params" count them.
    static constexpr std::size_t param_count = totals::param_count;
    static constexpr std::size_t trainable_param_count = totals::trainable_param_count;
    static constexpr std::size_t non_trainable_param_count = param_count - trainable_param_count;

    /// Floats in the flat parameter buffer (and in each gradient arena): every weight starts on
    /// a `buffer_alignment`-byte boundary, so this is param_count plus alignment padding.
    static constexpr std::size_t param_buffer_size = chain::param_end;

    // A replica's workspace (each layer's output, scratch and the backward deltas) is planned by the
    // training graph, which knows which layers it fuses: ops::graph<Sequential>::plan and
    // ::workspace_floats(samples), constants of the type too.

    /// Keras' auto-name of the I-th layer, zero-based per class: `conv1d`, `conv1d_1`, ... (the Dense
    /// inside a TimeDistributed before it counts among the Dense layers, as Keras names it too).
    template <std::size_t I>
    [[nodiscard]] static std::string
    layer_name()
    {
        static_assert(I < sizeof...(Layers), "tpudsl::Sequential::layer_name<I>: I is past the last layer");
        return detail::auto_layer_name(base_names_[I], same_name_count<I>);
    }

    /// The layers before the I-th that Keras counts in its auto-name's class: 1 for `conv1d_1`.
    template <std::size_t I>
    static constexpr std::size_t same_name_count = [] {
        std::size_t same = 0;
        for (std::size_t j = 0; j < I; ++j)
            same += (base_names_[j] == base_names_[I]) + (wrapped_names_[j] == base_names_[I]);
        return same;
    }();
};

} // namespace tpudsl

#endif // !TPUDSL_MODEL_SEQUENTIAL_HPP
