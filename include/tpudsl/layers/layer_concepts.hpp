/// @file Defines the LayerSpec and LayerOps concepts: what Sequential asks of a layer type, and what
/// a model's graph calls on its forward and backward pass.
#ifndef TPUDSL_LAYERS_LAYER_CONCEPTS_HPP
#define TPUDSL_LAYERS_LAYER_CONCEPTS_HPP

#include <tpudsl/layers/step_context.hpp>

#include <concepts>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

/// A layer spec holds hyperparameters only and binds to the shape coming in through member
/// templates: `check<In, Index>()` (the first rule `In` breaks), `output<In>`, `weights<In>`,
/// `expects<In>` and `scratch_size<In>`; `class_name` and `base_name` are Keras' class name and
/// auto-name prefix; `ops` names its forward and backward (LayerOps). Deriving from
/// tpudsl::layer_base gives the defaults and the traits the graph reads.
template <class L>
concept LayerSpec = requires {
    { L::class_name } -> std::convertible_to<std::string_view>;
    { L::base_name } -> std::convertible_to<std::string_view>;
};

/// The forward and backward pass of a layer bound as `B` (`Sequential::layer<I>`), static functions
/// over a batch of n samples on the model's flat buffers:
///
///   forward <B>(params, x, y, scratch, n, ctx)                       x (n, in...) -> y (n, out...)
///   backward<B>(params, x, y, dy, dx, grads, scratch, n, logit_grad)  dy (n, out...) -> dx (n, in...)
///
/// `params` and `grads` are the bases of the flat parameter buffer and of a gradient arena (same
/// layout: a weight J lies at `B::weight<J>::offset` in both); backward writes its weights' gradients
/// (or adds them, when the spec declares accumulates_gradient). `scratch` is the layer's
/// (n, scratch_size) block, kept from forward to backward. `dy` may be overwritten; `dx` is null when
/// nothing needs the input's gradient, and equals `dy` when the spec declares gradient_in_place.
/// `logit_grad`: dy already is dL/d(logits) of a Softmax output (the loss took the fused path). Neither
/// allocates nor throws.
template <class O, class B>
concept LayerOps = requires(const float* params, const typename B::input_type* x, float* y, float* dy, float* dx,
                            float* grads, float* scratch, std::size_t n, const step_context& ctx, bool logit_grad) {
    O::template forward<B>(params, x, y, scratch, n, ctx);
    O::template backward<B>(params, x, y, dy, dx, grads, scratch, n, logit_grad);
};

namespace detail {
/// Stands for the ops of a layer whose own failed their check, so that one mistake gives one error.
struct unusable_ops {
    template <class B, class... A>
    static void
    forward(A&&...) noexcept
    {
    }
    template <class B, class... A>
    static void
    backward(A&&...) noexcept
    {
    }
};

/// Checks, with a short message, that the layer at Index names complete ops; instantiated by the graph.
template <std::size_t Index, class Layer, class Bound>
struct ops_check {
    static constexpr bool has_ops = requires { typename Layer::ops; };
    static_assert(has_ops, "tpudsl layer: a layer spec must name its forward and backward pass as `using ops = ...;` "
                           "(see docs/layers.md) [TPUDSL_LAYER_WITHOUT_OPS]");
    static constexpr bool value = [] {
        if constexpr (has_ops) {
            static_assert(LayerOps<typename Layer::ops, Bound>,
                          "tpudsl layer: its `ops` must define static forward<B>(params, x, y, scratch, n, ctx) and "
                          "backward<B>(params, x, y, dy, dx, grads, scratch, n, logit_grad); is its header included? "
                          "(see docs/layers.md) [TPUDSL_LAYER_OPS_INCOMPLETE]");
            return LayerOps<typename Layer::ops, Bound>;
        } else {
            return false;
        }
    }();
};

template <bool Ok, class Layer>
struct ops_or_unusable {
    using type = unusable_ops;
};
template <class Layer>
struct ops_or_unusable<true, Layer> {
    using type = typename Layer::ops;
};
} // namespace detail

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_LAYER_CONCEPTS_HPP
