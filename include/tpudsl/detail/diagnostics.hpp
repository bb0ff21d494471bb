/// @file Defines how a model reports the first rule it breaks: one message per rule, one error per
/// mistake.
///
/// A layer declares its own rules where it is defined: an enum `rule` whose zero value `ok` means the
/// input fits, `check<In, Index>()` returning the first rule `In` breaks, and `diagnostic<R>`, a class
/// with one static_assert per rule (see layers/dense.hpp). The rules of the model as a whole (an
/// argument that is no layer, an empty Input, an integer input reaching a layer that reads floats) are
/// `model_rule`'s. `valid_model` reads the verdicts; `Sequential` instantiates `layer_error` with the
/// first broken one, whose template arguments carry what C++20 cannot format into a message: the
/// layer's position (0-based, as `model.layers[i]` and the summary rows), the layer, the shape it was
/// given and the shape it wants. docs/errors.md explains each message under its tag.
#ifndef TPUDSL_DETAIL_DIAGNOSTICS_HPP
#define TPUDSL_DETAIL_DIAGNOSTICS_HPP

#include <cstddef>

namespace tpudsl {

namespace detail {

/// The rules of the model as a whole, checked by Sequential before a layer's own.
enum class model_rule {
    ok,
    not_a_layer,
    input_empty_shape,
    needs_float_input,
};

/// True when a rule value (of any layer's rule enum) is its `ok`.
template <class Rule>
[[nodiscard]] constexpr bool
rule_ok(Rule r) noexcept
{
    return r == Rule{};
}

/// The shape a layer wants where a `Shape` cannot say it: any input of this rank.
template <std::size_t R>
struct any_shape_of_rank {};

/// A stand-in for the output of a layer that failed its check: the layers after it accept it
/// silently, so one mistake gives one error, not a cascade.
struct invalid_tensor {
    template <std::size_t... D>
    struct no_shape {
        static constexpr std::size_t rank = 0;
        static constexpr std::size_t size = 0;
    };
    using shape = no_shape<>;
    using value_type = float;
    static constexpr bool valid = false;
};

/// The model-wide messages.
template <model_rule R>
struct model_diagnostic {
    // One assertion per rule, so that exactly one fires; each message is "what; fix [TAG]".
    static_assert(R != model_rule::not_a_layer,
                  "tpudsl::Sequential<Input, Layers...>: this argument is not a tpudsl layer; a bare activation "
                  "is written tpudsl::Activation<Relu> [TPUDSL_NOT_A_LAYER]");
    static_assert(R != model_rule::input_empty_shape,
                  "tpudsl::Input<Shape<D...>, T>: requires at least one dimension and every extent > 0 "
                  "[TPUDSL_INPUT_EMPTY_SHAPE]");
    static_assert(R != model_rule::needs_float_input,
                  "tpudsl layer: requires a floating-point input; integer inputs (token ids) must go "
                  "through tpudsl::Embedding first [TPUDSL_NEEDS_FLOAT_INPUT]");
};

/// The class whose static_asserts explain rule R of Layer (or of the model).
template <auto R, class Layer>
struct diagnostic_of {
    using type = typename Layer::template diagnostic<R>;
};
template <model_rule R, class Layer>
struct diagnostic_of<R, Layer> {
    using type = model_diagnostic<R>;
};

} // namespace detail

/// Instantiated by `Sequential` for a layer that breaks a rule; its arguments are what the
/// compiler prints beside our message, which the layer's `diagnostic<R>` (or the model's) gives.
/// @tparam R       the rule broken: a value of the layer's `rule` enum, or a detail::model_rule
/// @tparam Index   the layer's 0-based position after the Input (as in `model.summary()`)
/// @tparam Layer   the layer as the user wrote it
/// @tparam Got     the shape the layer receives
/// @tparam Want    the shape (or `any_shape_of_rank<R>`) it accepts
template <auto R, std::size_t Index, class Layer, class Got, class Want>
struct layer_error : detail::diagnostic_of<R, Layer>::type {
    static constexpr bool value = detail::rule_ok(R);
};

} // namespace tpudsl

#endif // !TPUDSL_DETAIL_DIAGNOSTICS_HPP
