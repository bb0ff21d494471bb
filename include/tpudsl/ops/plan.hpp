/// @file Defines a model's graph plan: which layers run fused, where each layer's gradient lies, which
/// kernel gradients wait for the all-reduce, and where every block of a replica's workspace lies. All
/// of it is data, computed at compile time from what each layer declares (layer_facts), so tests read
/// it as data (`ops::graph<Model>::plan.nodes[i]`) and the runner (ops/graph.hpp) only follows it.
///
/// A replica of capacity `cap` samples owns `cap * per_sample + one_sample` floats, laid out as
///   [ activations: one (cap, out_l) block per layer that has its own ][ scratch: one (cap, scratch_l) block per layer ]
///   [ delta 0: (cap, widest) ][ delta 1: (cap, widest) ][ one-sample blocks of the fused convolutions ]
/// every block 64-byte aligned.
#ifndef TPUDSL_OPS_PLAN_HPP
#define TPUDSL_OPS_PLAN_HPP

#include <tpudsl/core/weight_spec.hpp>

#include <algorithm>
#include <array>
#include <cstddef>

namespace tpudsl::ops {

/// What the plan reads of a layer: its traits (layers/layer_base.hpp) and sizes.
struct layer_facts {
    bool aliases_input = false;
    bool gradient_in_place = false;
    bool row_wise = false;
    bool accumulates = false;        ///< it has weights and declares accumulates_gradient
    bool defers_kernel = false;      ///< defers_kernel_gradient
    std::size_t convolution_rank = 0;
    std::size_t max_pooling_rank = 0;
    bool linear_activation = false;  ///< its activation is Linear
    bool absorbable = false;         ///< it declares an absorbable_activation
    std::size_t output_size = 0;     ///< floats per sample
    std::size_t scratch_size = 0;    ///< floats per sample
    /// A convolution the plan fuses with its pooling (conv_pool_pair): whether it reads its input in
    /// place (its scratch is then one sample's), and the one-sample scratch its input gradient needs.
    bool pair_in_place = false;
    std::size_t pair_dx_scratch = 0;
};

/// How a layer runs.
enum class node_kind {
    pass,         ///< its own forward and backward
    fused_conv,   ///< a convolution that runs with the max pooling after it, one sample at a time
    fused_pool,   ///< that pooling: no pass of its own
    alias,        ///< its output is its input's block (a layer that aliases its input, an absorbed activation): no pass
};

/// One layer of the plan.
struct plan_node {
    node_kind kind = node_kind::pass;
    /// An alias whose activation the fused convolution two layers below applies in its place.
    bool absorbed = false;
    /// Its backward leaves dL/d(input) in the delta that held dL/d(output).
    bool gradient_in_place = false;
    /// Which of the two deltas holds dL/d(output): the loss writes delta 0, each layer below flips to
    /// the other one unless the layer above computes its gradient in place.
    std::size_t gradient_buffer = 0;
    /// Its kernel gradient X^T . dZ is left to the fused pass (graph::deferred_kernels), its dZ kept in
    /// its output block until then.
    bool deferred_kernel = false;
    /// It leaves its input gradient to the fused pair below it, which computes it as it needs it.
    bool dx_left_to_pair = false;
    /// A fused convolution: the deferred layer whose input gradient is its pooled gradient (through
    /// aliases), or the layer count when none.
    std::size_t dense_above = 0;
    /// Its gradient is added into, not written: cleared between steps.
    bool accumulates = false;
    /// Where its activation and scratch blocks lie: a per-sample offset (times the capacity), or an
    /// offset among the one-sample blocks after them.
    std::size_t activation = 0, scratch = 0;
    bool activation_one_sample = false, scratch_one_sample = false;
};

/// A model's plan: its nodes and the sizes of a replica's workspace.
template <std::size_t L>
struct graph_plan {
    std::array<plan_node, L> nodes{};
    /// Floats per sample of capacity, and of the one-sample blocks.
    std::size_t per_sample = 0, one_sample = 0;
    /// Floats after the one-sample blocks that a first layer fused with its pooling needs only when the
    /// model's input gradient is asked for (graph::backward's input_grad; training never does).
    std::size_t input_gradient_scratch = 0;
    /// Where the two deltas start (per sample) and how wide each is (the widest tensor they hold).
    std::size_t delta_offset = 0, delta_stride = 0;
    /// Every layer maps rows to rows, on float inputs: a replica runs its micro-batches layer by layer.
    bool rows_only = false;
};

/// The fusion decisions (kind, absorbed, gradient buffers, deferred kernels) from the layers' facts;
/// the memory fields are left to plan_memory, which needs the fused pairs' facts.
template <std::size_t L>
[[nodiscard]] constexpr graph_plan<L>
plan_fusion(const std::array<layer_facts, L>& f, bool float_input) noexcept
{
    graph_plan<L> p;
    auto& n = p.nodes;
    auto fused = [&](std::size_t i) { return n[i].kind == node_kind::fused_conv; };
    for (std::size_t i = 0; i < L; ++i)
        if (i + 1 < L && f[i].convolution_rank != 0 && f[i].convolution_rank == f[i + 1].max_pooling_rank &&
            n[i].kind == node_kind::pass) {
            n[i].kind = node_kind::fused_conv;
            n[i + 1].kind = node_kind::fused_pool;
        }
    for (std::size_t i = 0; i < L; ++i) {
        // A Linear convolution, its pooling, then an element-wise activation: act(max z) = max act(z).
        n[i].absorbed = i >= 2 && fused(i - 2) && f[i - 2].linear_activation && f[i].absorbable;
        if ((i > 0 && f[i].aliases_input) || n[i].absorbed)
            n[i].kind = node_kind::alias;
        n[i].gradient_in_place = n[i].kind != node_kind::pass || f[i].gradient_in_place;
        n[i].accumulates = f[i].accumulates;
    }
    n[L - 1].gradient_buffer = 0;
    for (std::size_t j = L - 1; j > 0; --j)
        n[j - 1].gradient_buffer = n[j].gradient_in_place ? n[j].gradient_buffer : 1 - n[j].gradient_buffer;
    // A layer that feeds a deferred one directly (its output is that one's X, through aliases) keeps its
    // own kernel gradient: its dZ would overwrite that X.
    std::array<bool, L> feeds_deferred{};
    for (std::size_t i = L; i-- > 0;) {
        if (i + 1 < L)
            feeds_deferred[i] = n[i + 1].kind == node_kind::alias ? feeds_deferred[i + 1] : n[i + 1].deferred_kernel;
        n[i].deferred_kernel = f[i].defers_kernel && (i > 0 || float_input) && !feeds_deferred[i];
    }
    for (std::size_t j = 0; j < L; ++j) {
        n[j].dense_above = L;
        if (!fused(j))
            continue;
        std::size_t d = j + 2;
        while (d < L && n[d].kind == node_kind::alias)
            ++d;
        if (d < L && n[d].deferred_kernel) {
            n[j].dense_above = d;
            n[d].dx_left_to_pair = true;
        }
    }
    bool rows = float_input;
    for (std::size_t i = 0; i < L; ++i)
        rows = rows && f[i].row_wise;
    p.rows_only = rows;
    return p;
}

/// Lays out a replica's workspace after plan_fusion: a layer's activation block has cap samples, but a
/// fused convolution's has one (its pair computes and pools a sample at a time) and an alias shares
/// its input's; a scratch block has cap samples, but a fused convolution read in place keeps one
/// sample's window gradients or framed dZ, for its input gradient. At layer 0 that is the model's input
/// gradient, which training never asks for: its block lies last, outside one_sample
/// (input_gradient_scratch).
template <std::size_t L>
[[nodiscard]] constexpr graph_plan<L>
plan_memory(graph_plan<L> p, const std::array<layer_facts, L>& f) noexcept
{
    auto& n = p.nodes;
    std::size_t a = 0, one = 0, widest = 0;
    for (std::size_t i = 0; i < L; ++i) {
        const std::size_t out = aligned_floats(f[i].output_size);
        if (n[i].kind == node_kind::alias) {
            n[i].activation = n[i - 1].activation;
            n[i].activation_one_sample = n[i - 1].activation_one_sample;
        } else if (n[i].kind == node_kind::fused_conv) {
            n[i].activation = one;
            n[i].activation_one_sample = true;
            one += out;
        } else {
            n[i].activation = a;
            a += out;
        }
        // The deltas hold every output gradient but a fused convolution's (its pair keeps that one
        // sample at a time in the activation block).
        if (n[i].kind != node_kind::fused_conv)
            widest = std::max(widest, out);
    }
    for (std::size_t i = 0; i < L; ++i) {
        if (n[i].kind == node_kind::fused_conv && f[i].pair_in_place) {
            n[i].scratch_one_sample = true;
            if (i == 0) {
                p.input_gradient_scratch = aligned_floats(f[i].pair_dx_scratch);
                continue;   // placed after the loop
            }
            n[i].scratch = one;
            one += aligned_floats(f[i].pair_dx_scratch);
        } else {
            n[i].scratch = a;
            a += aligned_floats(f[i].scratch_size);
        }
    }
    if (n[0].kind == node_kind::fused_conv && f[0].pair_in_place)
        n[0].scratch = one;
    p.delta_offset = a;
    p.delta_stride = widest;
    p.per_sample = a + 2 * widest;
    p.one_sample = one;
    return p;
}

} // namespace tpudsl::ops

#endif // !TPUDSL_OPS_PLAN_HPP
