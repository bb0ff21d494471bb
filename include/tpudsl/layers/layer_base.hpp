/// @file Defines tpudsl::layer_base, the defaults a layer spec inherits (no weights, no scratch, keeps
/// the shape, reads floats).
#ifndef TPUDSL_LAYERS_LAYER_BASE_HPP
#define TPUDSL_LAYERS_LAYER_BASE_HPP

#include <tpudsl/core/activation_tags.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/detail/diagnostics.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace tpudsl {

namespace detail {
/// A layer whose activation is Softmax keeps its logits (`N` floats per sample) for the loss, which
/// then works on logits exactly (log-sum-exp) as modern Keras does.
template <class Act, std::size_t N>
inline constexpr std::size_t logits_size = std::is_same_v<Act, Softmax> ? N : 0;
} // namespace detail

/// Defaults for a layer spec; a layer redefines what differs. A user-defined layer derives from it too.
struct layer_base {
    /// The rules of the layer's own: an enum whose zero value is `ok`. A layer with rules redefines
    /// it, `check` and `diagnostic` together (see Dense).
    enum class rule { ok };

    /// The first rule an input breaks (Sequential has already refused integer inputs to a layer that
    /// does not declare reads_integers).
    template <class In, std::size_t Index>
    [[nodiscard]] static consteval rule
    check() noexcept
    {
        return rule::ok;
    }

    /// The messages of the layer's rules: one static_assert per rule, of which the broken one fires.
    template <rule R>
    struct diagnostic {};

    /// It reads integers (token ids), not floats: Sequential then lets integer inputs reach it.
    static constexpr bool reads_integers = false;

    template <class In>
    using expects = typename In::shape;

    template <class In>
    using output = detail::tensor<typename In::shape>;

    template <class In>
    using weights = weight_list<>;

    template <class In>
    static constexpr std::size_t scratch_size = 0;

    /// The name of the cell that holds the layer's weights in Keras' files (a recurrent layer's
    /// `lstm_cell`: `layers/lstm/cell/vars/0`, `lstm/lstm_cell/kernel:0`); empty: the layer's own.
    static constexpr std::string_view keras_cell = "";

    // What the graph and the trainer may assume of the layer's ops: they read these traits, never
    // the layer's type. A layer declares what differs (docs/layers.md).

    /// Its output is its input's memory, unchanged (Flatten): after the first layer it has no pass.
    static constexpr bool aliases_input = false;
    /// Its backward may write dL/d(input) over dL/d(output) (dx == dy): element-wise layers.
    static constexpr bool gradient_in_place = false;
    /// It maps each sample's row to a row, nothing across samples or positions (Dense, Dropout,
    /// Activation, Flatten): a model of such layers runs its micro-batches layer by layer.
    static constexpr bool row_wise = false;
    /// Its backward adds into its weights' gradient instead of writing it (a scatter-add of rows):
    /// the trainer clears that part of each gradient arena between steps.
    static constexpr bool accumulates_gradient = false;
    /// Integer inputs must lie in [0, input_bound) (an Embedding's vocabulary); 0: no bound.
    static constexpr std::size_t input_bound = 0;
    /// Its ops read neither `B::index` nor where its weights lie in the whole buffer: only
    /// `B::weight<J>::offset` from the `params` and `grads` they are handed. A graph then binds it from
    /// index 0 and offset 0 and hands it its weights' place, so that its nodes on one shape share one
    /// copy of the ops' code (a ResNet's repeated blocks compile once).
    static constexpr bool position_independent = false;
    /// Its ops offer the deferred kernel gradient (backward_keeping, forward_rows,
    /// input_gradient_rows, transposed_kernel): weight 0 an (in, out) kernel whose gradient X^T . dZ
    /// the all-reduce may compute over every micro-batch of a step at once (Dense).
    static constexpr bool defers_kernel_gradient = false;
    /// A convolution over this many spatial axes whose ops offer `core<B>` (detail::conv_core): it runs
    /// fused with a max pooling of the same rank right after it (0: never fused).
    static constexpr std::size_t convolution_rank = 0;
    /// A max pooling over this many spatial axes whose ops offer `core<B>` (detail::pooling_core).
    static constexpr std::size_t max_pooling_rank = 0;
    /// Its non-trainable weights are moving statistics (BatchNormalization's mean and variance):
    /// training backward writes the micro-batch's statistic in their place of the gradient arena, and
    /// the fused reduce sets `moving = moving * moving_momentum + (mean over the step's micro-batches) *
    /// (1 - moving_momentum)`. 1 (the default): they stay as they are (frozen weights).
    static constexpr float moving_momentum = 1.0f;
    /// The element-wise, non-decreasing activation a fused Linear convolution may apply in this
    /// layer's place (Activation<Relu>: Relu); void when none.
    using absorbable_activation = void;
};

namespace detail {

/// The first rule that a layer of `units` outputs on an input of rank `rank` breaks, the layer wanting
/// rank `want`: its `zero_units`, then `needs_rank`; or its `ok` (TimeDistributed<Dense>, LSTM, GRU).
template <class Rule>
[[nodiscard]] consteval Rule
units_and_rank_rule(std::size_t units, std::size_t rank, std::size_t want, Rule needs_rank) noexcept
{
    if (units == 0)
        return Rule::zero_units;
    if (rank != want)
        return needs_rank;
    return Rule::ok;
}

} // namespace detail

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_LAYER_BASE_HPP
