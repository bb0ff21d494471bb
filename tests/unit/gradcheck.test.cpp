// Gradient checks: every layer, activation, padding and stride against central finite differences.
// The scalar function is L = sum_i r_i y_i over a batch (r fixed and random), so dL/dy = r.
#include <tpudsl/ops/graph.hpp>
#include <tpudsl/functional.hpp>
#include <tpudsl/testing/gradient_check.hpp>
#include <tpudsl/tpudsl.hpp>

#include "custom_layer/scale.hpp"
#include "fashion_mnist_cnn/model.hpp"
#include "reuters_conv1d/model.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace tpudsl;

namespace {

/// Weights and the loss's factors r drawn from U(-1, 1), in that order.
void
draw_uniform(std::mt19937& gen, std::vector<float>& params, std::vector<float>& r)
{
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (auto& p : params)
        p = u(gen);
    for (auto& v : r)
        v = u(gen);
}

/// A model's forward and backward for L = sum_i r_i y_i (tpudsl::testing's harness).
template <class M, std::size_t N = 3>
using harness = testing::detail::model_harness<M, N>;

/// d(h.loss())/d(value), centrally.
template <class H, class T>
double
central_difference(H& h, T& value, double step)
{
    return testing::detail::central_difference([&] { return h.loss(); }, value, step);
}

// Which elements a central difference checks: every one, but under the sanitizers
// (TPUDSL_GRADCHECK_SAMPLED): there each check is two more forward passes like the analytic one's, which
// the sanitizers already watch, at 30-50 times the optimized build's time. Of a weight or an input of
// more than 64 elements, those a stride apart (at most 65), the stride prime to the innermost
// dimension (every filter or channel met) and the last element, keep their memory checks and cut the
// run from minutes to seconds. The optimized builds check every element.
#ifdef TPUDSL_GRADCHECK_SAMPLED
constexpr std::size_t difference_budget = 64;
#else
constexpr std::size_t difference_budget = static_cast<std::size_t>(-1);
#endif

bool
differenced(std::size_t k, std::size_t size, std::size_t innermost)
{
    return testing::detail::differenced(k, size, innermost, difference_budget);
}

// |analytic - numeric| <= rel * max(|analytic|, |numeric|) + abs.
bool
close(double analytic, double numeric, double rel = 1e-2, double abs = 2e-3)
{
    return testing::detail::close(analytic, numeric, {.rel = rel, .abs = abs});
}

template <class H, std::size_t I, std::size_t J>
std::size_t
check_weight(H& h, const std::vector<float>& grads, double step)
{
    using W = typename H::model::template layer<I>::template weight<J>;
    if constexpr (!W::trainable) {
        // A moving statistic: the training loss does not read it (its arena place holds the statistic).
        for (std::size_t k = 0; k < W::size; ++k) {
            if (!differenced(k, W::size, W::shape::dims.back()))
                continue;
            INFO("layer " << I << " non-trainable weight " << J << " element " << k);
            CHECK(central_difference(h, h.params[W::offset + k], step) == 0.0);
        }
        return 0;
    }
    std::size_t checked = 0;
    for (std::size_t k = 0; k < W::size; ++k) {
        if (!differenced(k, W::size, W::shape::dims.back()))
            continue;
        ++checked;
        const std::size_t at = W::offset + k;
        const double numeric = central_difference(h, h.params[at], step);
        INFO("layer " << I << " weight " << J << " element " << k);
        CHECK(close(grads[at], numeric));
    }
    return checked;
}

template <class H, std::size_t I>
std::size_t
check_layer(H& h, const std::vector<float>& grads, double step)
{
    using B = typename H::model::template layer<I>;
    return [&]<std::size_t... J>(std::index_sequence<J...>) {
        return (std::size_t{0} + ... + check_weight<H, I, J>(h, grads, step));
    }(std::make_index_sequence<B::weight_count>{});
}

/// Every weight's and the input's gradient against central differences, over a batch of N samples
/// (tpudsl::testing::check_gradients, under the sanitizers' budget).
template <class M, std::size_t N = 3>
void
check_model(double step = 1e-2, std::uint32_t seed = 1)
{
    const testing::gradient_report report =
        testing::check_gradients<M, N>({.step = step, .seed = seed, .budget = difference_budget});
    INFO(report.describe());
    CHECK(report.ok());
}

} // namespace

TEST_CASE("gradients: a user-written layer (docs/layers.md), its factors and its input", "[gradcheck][user_layer]")
{
    check_model<Sequential<Input<Shape<5, 3>>, mylayers::Scale, Conv1D<2, 2, Tanh>, Flatten, Dense<2>>>();
    check_model<Sequential<Input<Shape<6>>, Dense<4, Tanh>, mylayers::Scale, Dense<3, Softmax>>>();
}

TEST_CASE("gradients: Dense with every activation", "[gradcheck]")
{
    check_model<Sequential<Input<Shape<7>>, Dense<5, Tanh>, Dense<4, Sigmoid>, Dense<4>, Dense<3, Softmax>>>();
}

TEST_CASE("gradients: Relu away from its kink", "[gradcheck]")
{
    check_model<Sequential<Input<Shape<6>>, Dense<5, Relu>, Dense<2>>>(1e-3);
}

TEST_CASE("gradients: Conv2D valid, stride 1", "[gradcheck]")
{
    check_model<Sequential<Input<Shape<6, 5, 2>>, Conv2D<3, 3, Tanh>, Flatten, Dense<2>>>();
}

TEST_CASE("gradients: Winograd convolutions, Same and Valid, both tile sizes", "[gradcheck][winograd]")
{
    // 16 channels in, over odd outputs (tiles past the input's edge): a Same first layer (its tiles
    // read the padding as zeros) with its input gradient, F(2 x 2, 3 x 3), then a Valid one,
    // F(4 x 4, 3 x 3). All linear, the head too (a Tanh there would saturate: unit weights over 144
    // products give it inputs near +-100, and every gradient below it would be 0 on both sides), so
    // a central difference is exact at any step but for the float loss's rounding: a step of 0.5
    // keeps that small. The pair's backward and Relu's are checked against the double-precision
    // reference in kernels_conv.test.cpp.
    using M = Sequential<Input<Shape<5, 6, 16>>, Conv2D<16, 3, Linear, Same>, Conv2D<16, 3>, Flatten, Dense<2>>;
    using G = ops::graph<M>;
    STATIC_REQUIRE(G::ops<0>::core<G::layer<0>>::winograd);
    STATIC_REQUIRE(G::ops<1>::core<G::layer<1>>::winograd);
    STATIC_REQUIRE(kernels::winograd_tile<G::ops<0>::core<G::layer<0>>::geometry> == 2);
    STATIC_REQUIRE(kernels::winograd_tile<G::ops<1>::core<G::layer<1>>::geometry> == 4);
    check_model<M>(0.5);
    using One = Sequential<Input<Shape<7, 5, 16>>, Conv2D<32, 3>, Flatten, Dense<2>>;   // 5 x 3: F(2 x 2)
    STATIC_REQUIRE(kernels::winograd_tile<ops::graph<One>::ops<0>::core<ops::graph<One>::layer<0>>::geometry> == 2);
    check_model<One>(0.5);
    // It keeps no per-sample block (its workspace is the thread's scratch): the next layer's starts
    // where its own would.
    STATIC_REQUIRE(ops::graph<One>::plan.nodes[1].scratch == ops::graph<One>::plan.nodes[0].scratch);
}

TEST_CASE("gradients: a convolution's input gradient as the convolution of dZ's zero frame, Valid and Same", "[gradcheck]")
{
    // 16 channels into a 3 x 3 (a 1-D 3) convolution of stride 1: its input gradient runs over dZ in a
    // frame of zeros under the flipped kernel (conv_core::dx_as_conv), reading x itself (Valid: an input
    // at most a quarter larger than the output) or its zero frame (Same).
    STATIC_REQUIRE(tpudsl::detail::conv_core<kernels::window_geometry{22, 20, 16, 3, 3, 1, 1, 20, 18, 0, 0}, 3,
                                             Tanh>::dx_as_conv);
    STATIC_REQUIRE(tpudsl::detail::conv_core<kernels::window_geometry{5, 4, 16, 3, 3, 1, 1, 5, 4, 1, 1}, 3,
                                             Tanh>::dx_as_conv);
    STATIC_REQUIRE(tpudsl::detail::conv_core<kernels::window_geometry{1, 6, 16, 1, 3, 1, 1, 1, 6, 0, 1}, 3,
                                             Tanh>::dx_as_conv);
    check_model<Sequential<Input<Shape<22, 20, 2>>, Conv2D<16, 1, Tanh>, Conv2D<3, 3, Tanh>, GlobalAveragePooling2D,
                           Dense<2>>>();
    check_model<Sequential<Input<Shape<5, 4, 2>>, Conv2D<16, 1, Tanh>, Conv2D<3, 3, Tanh, Same>, Flatten, Dense<2>>>();
    check_model<Sequential<Input<Shape<6, 2>>, Conv1D<16, 1, Tanh>, Conv1D<3, 3, Tanh, Same>, Flatten, Dense<2>>>();
}

TEST_CASE("gradients: Conv2D same, rectangular kernel and strides", "[gradcheck]")
{
    check_model<Sequential<Input<Shape<7, 6, 2>>, Conv2D<3, Size2{3, 2}, Sigmoid, Same, Size2{2, 1}>, Flatten,
                           Dense<2>>>();
}

TEST_CASE("gradients: Conv1D valid with stride 2, then same", "[gradcheck]")
{
    check_model<Sequential<Input<Shape<9, 3>>, Conv1D<4, 3, Tanh, Valid, 2>, Conv1D<2, 2, Linear, Same>, Flatten,
                           Dense<2>>>();
}

TEST_CASE("gradients: MaxPool2D valid and same", "[gradcheck]")
{
    check_model<Sequential<Input<Shape<6, 6, 2>>, Conv2D<2, 3, Tanh, Same>, MaxPool2D<2>, MaxPool2D<2, 1, Same>,
                           Flatten, Dense<3>>>(1e-3);
}

TEST_CASE("gradients: AveragePooling2D valid, overlapping and same (padding not counted)", "[gradcheck]")
{
    check_model<Sequential<Input<Shape<7, 6, 2>>, Conv2D<3, 2, Tanh, Same>, AveragePooling2D<2>,
                           AveragePooling2D<2, 1, Same>, AveragePooling2D<Size2{2, 1}, Size2{1, 1}>, Flatten,
                           Dense<3>>>();
}

TEST_CASE("gradients: AveragePooling1D valid and same with strides", "[gradcheck]")
{
    check_model<Sequential<Input<Shape<11, 2>>, Conv1D<3, 2, Tanh>, AveragePooling1D<3, 2, Same>,
                           AveragePooling1D<2>, Flatten, Dense<2>>>();
}

TEST_CASE("gradients: global average and max pooling, 1D and 2D", "[gradcheck]")
{
    check_model<Sequential<Input<Shape<5, 4, 2>>, Conv2D<3, 2, Tanh>, GlobalAveragePooling2D, Dense<2>>>();
    check_model<Sequential<Input<Shape<5, 4, 2>>, Conv2D<3, 2, Tanh>, GlobalMaxPooling2D, Dense<2>>>(1e-3);
    check_model<Sequential<Input<Shape<9, 3>>, Conv1D<4, 3, Tanh>, GlobalAveragePooling1D, Dense<2>>>();
    check_model<Sequential<Input<Shape<9, 3>>, Conv1D<4, 3, Tanh>, GlobalMaxPooling1D, Dense<2>>>(1e-3);
    // As the first layer: no input gradient to spread, only the input's own.
    check_model<Sequential<Input<Shape<3, 3, 2>>, GlobalAveragePooling2D, Dense<2, Tanh>>>();
}

TEST_CASE("gradients: TimeDistributed Dense, after a Conv1D and first, softmax per timestep", "[gradcheck]")
{
    check_model<Sequential<Input<Shape<6, 3>>, Conv1D<4, 3, Tanh, Same>, TimeDistributed<Dense<5, Tanh>>,
                           TimeDistributed<Dense<3, Softmax>>>>();
    // As the first layer (its input's gradient), and feeding a Flatten and a Dense.
    check_model<Sequential<Input<Shape<4, 7>>, TimeDistributed<Dense<2, Sigmoid>>, Flatten, Dense<3>>>();
    check_model<Sequential<Input<Shape<5, 2>>, TimeDistributed<Dense<3>>>>();
}

TEST_CASE("gradients: LSTM, the last state and every state, through time", "[gradcheck][recurrent]")
{
    // Units not a multiple of the vector width (the gates' partial vectors), then a full one.
    check_model<Sequential<Input<Shape<4, 3>>, LSTM<5>, Dense<2>>>();
    check_model<Sequential<Input<Shape<5, 2>>, LSTM<3, true>, Flatten, Dense<2>>>();
    check_model<Sequential<Input<Shape<3, 4>>, LSTM<8, true>, LSTM<4>, Dense<2, Tanh>>>();
    // One step only, and after a convolution (the input gradient goes back into it).
    check_model<Sequential<Input<Shape<1, 3>>, LSTM<4>, Dense<2>>>();
    check_model<Sequential<Input<Shape<6, 2>>, Conv1D<3, 2, Tanh>, LSTM<4, true>, GlobalAveragePooling1D, Dense<2>>>();
}

TEST_CASE("gradients: GRU (reset_after), the last state and every state, through time", "[gradcheck][recurrent]")
{
    check_model<Sequential<Input<Shape<4, 3>>, GRU<5>, Dense<2>>>();
    check_model<Sequential<Input<Shape<5, 2>>, GRU<3, true>, Flatten, Dense<2>>>();
    check_model<Sequential<Input<Shape<3, 4>>, GRU<8, true>, GRU<4>, Dense<2, Tanh>>>();
    check_model<Sequential<Input<Shape<1, 3>>, GRU<4>, Dense<2>>>();
    check_model<Sequential<Input<Shape<6, 2>>, Conv1D<3, 2, Tanh>, GRU<4, true>, LSTM<3>, Dense<2>>>();
}

TEST_CASE("gradients: an LSTM after an Embedding, and before a per-timestep classifier", "[gradcheck][recurrent]")
{
    // The input gradient scattered into the Embedding's rows.
    check_model<Sequential<Input<Shape<5>, std::int32_t>, Embedding<6, 3>, LSTM<4>, Dense<3, Softmax>>>();
    // Every state into a TimeDistributed softmax.
    check_model<Sequential<Input<Shape<4, 3>>, LSTM<5, true>, TimeDistributed<Dense<3, Softmax>>>>();
}

TEST_CASE("gradients: Conv1D fused with MaxPool1D, input gradient sharing the pooled gradient's buffer", "[gradcheck]")
{
    // The second convolution's input (8 x 3) is larger than its pooled output (3 x 4): samples run last to first.
    using M = Sequential<Input<Shape<9, 2>>, Conv1D<3, 2, Tanh>, Conv1D<4, 3, Sigmoid>, MaxPool1D<2>, Flatten, Dense<2>>;
    STATIC_REQUIRE(ops::graph<M>::fused_conv<1>());
    STATIC_REQUIRE(tpudsl::detail::conv_pool_pair<ops::graph<M>::ops<1>::core<M::layer<1>>,
                                               ops::graph<M>::ops<2>::core<M::layer<2>>>::reverse);
    check_model<M>(1e-3);
}

TEST_CASE("gradients: Conv2D fused with an overlapping MaxPool2D, samples first to last", "[gradcheck]")
{
    // The second convolution's input (4 x 4 x 1) is smaller than its pooled output (2 x 2 x 6).
    using M = Sequential<Input<Shape<4, 4, 1>>, Conv2D<1, 1, Tanh>, Conv2D<6, 3, Sigmoid, Same>, MaxPool2D<3, 1>,
                         Flatten, Dense<2>>;
    STATIC_REQUIRE(ops::graph<M>::fused_conv<1>());
    STATIC_REQUIRE(!tpudsl::detail::conv_pool_pair<ops::graph<M>::ops<1>::core<M::layer<1>>,
                                                ops::graph<M>::ops<2>::core<M::layer<2>>>::reverse);
    check_model<M>(1e-3);
}

TEST_CASE("gradients: a thin Conv2D read in place, fused with its pooling, absorbing the Activation after it", "[gradcheck]")
{
    // The second convolution (patch 3 x 3 x 2, no padding) reads its input in place and has an input
    // gradient; the Tanh after its pooling runs inside the pair.
    using M = Sequential<Input<Shape<7, 7, 1>>, Conv2D<2, 1, Sigmoid>, Conv2D<5, 3>, MaxPool2D<2>, Activation<Tanh>,
                         Flatten, Dense<2>>;
    using G = ops::graph<M>;
    STATIC_REQUIRE(G::fused_conv<1>());
    STATIC_REQUIRE(G::plan.nodes[3].absorbed);
    STATIC_REQUIRE(G::conv_pool<1>::conv_type::in_place);
    STATIC_REQUIRE(std::is_same_v<G::conv_pool<1>::Act, Tanh>);
    check_model<M>(1e-3);
}

TEST_CASE("gradients: a wide Conv2D read in place one window row at a time, fused with its pooling", "[gradcheck]")
{
    using M = Sequential<Input<Shape<7, 7, 4>>, Conv2D<4, 1, Tanh>, Conv2D<3, 3, Sigmoid>, MaxPool2D<2>, Flatten,
                         Dense<2>>;
    using Core = ops::graph<M>::conv_pool<1>::conv_type;
    STATIC_REQUIRE(kernels::conv_path_for<Core::geometry> == kernels::conv_path::rows);
    check_model<M>(1e-3);
}

TEST_CASE("gradients: the Fashion-MNIST pattern, Conv2D then MaxPool2D then Activation<Relu>", "[gradcheck]")
{
    using M = Sequential<Input<Shape<8, 8, 1>>, Conv2D<4, 3>, MaxPool2D<2>, Activation<Relu>, Flatten, Dense<3>,
                         Activation<Softmax>>;
    STATIC_REQUIRE(ops::graph<M>::plan.nodes[2].absorbed);
    STATIC_REQUIRE(!ops::graph<M>::plan.nodes[5].absorbed);   // a softmax is not element-wise
    check_model<M>(1e-3);
}

/// A batch of N samples against each sample alone: the input gradients agree and the weights' gradients
/// are the sums of the samples' (to rounding).
template <class M, std::size_t N>
void
check_batch_against_samples(std::uint32_t seed = 1)
{
    harness<M, N> batch(seed);
    const auto [grads, dx] = batch.gradients();
    std::vector<double> sum(grads.size(), 0.0);
    for (std::size_t s = 0; s < N; ++s) {
        harness<M, 1> one(seed);
        one.params = batch.params;
        std::copy_n(batch.x.begin() + s * M::input_shape::size, M::input_shape::size, one.x.begin());
        std::copy_n(batch.r.begin() + s * M::output_shape::size, M::output_shape::size, one.r.begin());
        const auto [g, d] = one.gradients();
        for (std::size_t k = 0; k < g.size(); ++k)
            sum[k] += g[k];
        for (std::size_t k = 0; k < d.size(); ++k) {
            INFO("sample " << s << " input element " << k);
            CHECK(close(dx[s * M::input_shape::size + k], d[k], 1e-5, 1e-6));
        }
    }
    for (std::size_t k = 0; k < grads.size(); ++k) {
        INFO("parameter " << k);
        CHECK(close(grads[k], sum[k], 1e-4, 1e-5));
    }
}

TEST_CASE("gradients: a Dense's input gradient made by the fused pair below it, a group of samples at a time",
          "[gradcheck]")
{
    // Taken last to first (the pair's input gradient shares the pooled gradient's buffer and is larger),
    // first to last, and for the first layer (the Fashion pattern): against finite differences over a
    // batch in one group, and a batch of two groups and one sample more against each sample alone
    // (many samples put a kink of some maximum inside any finite-difference step).
    using Reverse = Sequential<Input<Shape<9, 2>>, Conv1D<3, 2, Tanh>, Conv1D<4, 3, Sigmoid>, MaxPool1D<2>, Flatten,
                               Dense<2>>;
    using Forward = Sequential<Input<Shape<4, 4, 1>>, Conv2D<1, 1, Tanh>, Conv2D<6, 3, Sigmoid, Same>, MaxPool2D<3, 1>,
                               Flatten, Dense<2>>;
    using First = Sequential<Input<Shape<8, 8, 1>>, Conv2D<4, 3>, MaxPool2D<2>, Activation<Relu>, Flatten, Dense<3>,
                             Activation<Softmax>>;
    STATIC_REQUIRE(ops::graph<Reverse>::plan.nodes[1].dense_above == 4);
    STATIC_REQUIRE(ops::graph<Reverse>::plan.nodes[4].dx_left_to_pair);
    STATIC_REQUIRE(ops::graph<Reverse>::conv_pool<1>::reverse);
    STATIC_REQUIRE(ops::graph<Forward>::plan.nodes[1].dense_above == 4);
    STATIC_REQUIRE(!ops::graph<Forward>::conv_pool<1>::reverse);
    STATIC_REQUIRE(ops::graph<First>::plan.nodes[0].dense_above == 4);
    // Groups as large as keep their buffer near 160 KB, 4 to 16 samples: these small models 16, the
    // Fashion model's pair (10816 pooled floats a sample) 4, the Reuters model's (2336) 16.
    STATIC_REQUIRE(ops::graph<First>::conv_pool<0>::group == 16);
    STATIC_REQUIRE(ops::graph<seeds::FashionCnn>::conv_pool<0>::group == 4);
    STATIC_REQUIRE(ops::graph<seeds::Reuters>::conv_pool<3>::group == 16);
    check_model<Reverse>(1e-3);
    check_model<Forward>(1e-3);
    check_model<First>(1e-3);
    check_batch_against_samples<Reverse, 2 * ops::graph<Reverse>::conv_pool<1>::group + 1>();
    check_batch_against_samples<Forward, 2 * ops::graph<Forward>::conv_pool<1>::group + 1>();
    check_batch_against_samples<First, 2 * ops::graph<First>::conv_pool<0>::group + 1>();
    // A Dense over a Dense (no pair below it) keeps computing its own input gradient.
    STATIC_REQUIRE(!ops::graph<Sequential<Input<Shape<4>>, Dense<3>, Dense<2>>>::plan.nodes[1].dx_left_to_pair);
}

TEST_CASE("gradients: MaxPool1D overlapping and same", "[gradcheck]")
{
    check_model<Sequential<Input<Shape<10, 2>>, MaxPool1D<3, 2>, MaxPool1D<2, 2, Same>, Flatten, Dense<2>>>(1e-3);
}

TEST_CASE("gradients: Embedding (repeated ids) into Conv1D", "[gradcheck]")
{
    check_model<Sequential<Input<Shape<5>, std::int32_t>, Embedding<11, 3>, Conv1D<2, 2, Tanh>, Flatten,
                           Dense<2, Softmax>>>();
}

TEST_CASE("gradients: Activation layers, softmax over the last axis", "[gradcheck]")
{
    check_model<Sequential<Input<Shape<4, 3>>, Activation<Tanh>, Activation<Sigmoid>, Activation<Softmax>,
                           Activation<Relu>, Flatten, Dense<2>>>();
}

TEST_CASE("gradients: BatchNormalization in training, through the micro-batch's statistics", "[gradcheck]")
{
    // Over positions and samples (rank 2), over samples only (rank 1), and as the first layer.
    check_model<Sequential<Input<Shape<5, 3>>, Conv1D<4, 2, Tanh>, BatchNormalization<>, Flatten, Dense<2>>, 4>();
    check_model<Sequential<Input<Shape<6>>, Dense<5, Tanh>, BatchNormalization<0.9f, 1e-2f>, Dense<3, Softmax>>, 6>();
    check_model<Sequential<Input<Shape<3, 2, 3>>, BatchNormalization<>, Conv2D<2, 2, Tanh>, Flatten, Dense<2>>, 3>();
}

TEST_CASE("gradients: LayerNormalization over each row (a sample's features, a timestep's)", "[gradcheck]")
{
    check_model<Sequential<Input<Shape<6>>, Dense<5, Tanh>, LayerNormalization<>, Dense<3, Softmax>>>();
    check_model<Sequential<Input<Shape<4, 3>>, LayerNormalization<1e-2f>, Conv1D<2, 2, Tanh>, Flatten, Dense<2>>>();
}

TEST_CASE("gradients: Dropout in training (a fixed mask)", "[gradcheck]")
{
    check_model<Sequential<Input<Shape<8>>, Dense<6, Tanh>, Dropout<0.5f>, Dense<2>>>();
}

namespace {

/// The vectorised Dropout forward against the mask's definition, one hash4 and one float compare per
/// element: every mask value and output bit, and the share kept close to 1 - Rate.
template <float Rate>
void
check_dropout_mask()
{
    using M = Sequential<Input<Shape<37>>, Dense<37>, Dropout<Rate>, Dense<2>>;   // 37: a loop remainder
    using B = typename M::template layer<1>;
    using Ops = typename B::spec::ops;
    constexpr std::size_t S = 37, n = 40;
    std::mt19937 gen(3);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> x(n * S), y(n * S), mask(n * S);
    for (auto& v : x)
        v = u(gen);
    const step_context ctx{.training = true, .seed = 0x1234567u, .step = 17, .first_sample = 1000};
    Ops::template forward<B>(nullptr, x.data(), y.data(), mask.data(), n, ctx);
    std::size_t kept = 0, wrong = 0;
    for (std::size_t s = 0; s < n; ++s)
        for (std::size_t e = 0; e < S; ++e) {
            const std::uint64_t bits = tpudsl::detail::hash4(ctx.seed ^ (0xd1b54a32d192ed03ULL * (B::index + 1)),
                                                             ctx.step, ctx.first_sample + s, e);
            const float m = tpudsl::detail::unit_float(bits) >= Rate ? 1.0f / (1.0f - Rate) : 0.0f;
            kept += m != 0.0f ? 1 : 0;
            const std::size_t i = s * S + e;
            wrong += mask[i] != m || y[i] != x[i] * m ? 1 : 0;
        }
    CHECK(wrong == 0);
    const double share = static_cast<double>(kept) / static_cast<double>(n * S);
    CHECK(std::abs(share - (1.0 - static_cast<double>(Rate))) < 0.05);
}

} // namespace

TEST_CASE("Dropout: each element's mask is its hash of (seed, layer, step, sample, element)", "[dropout]")
{
    check_dropout_mask<0.2f>();
    check_dropout_mask<0.5f>();
    check_dropout_mask<0.1f>();
    check_dropout_mask<0.3f>();   // 0.3f x 2^24 is a whole number (0.2f and 0.1f x 2^24 round up)
}

namespace {

/// A model's parameters and, for each of `parts` micro-batches of capacity cap, its inputs x and
/// output gradients dy: uniform in [-1, 1) from the seed, drawn in that order.
template <class M>
struct random_parts
{
    std::vector<float> params;
    std::vector<std::vector<float>> x, dy;

    random_parts(unsigned seed, std::size_t parts, std::size_t cap, float param_scale = 1.0f)
        : params(M::param_buffer_size), x(parts), dy(parts)
    {
        std::mt19937 gen(seed);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (auto& p : params)
            p = param_scale * u(gen);
        for (std::size_t p = 0; p < parts; ++p) {
            x[p].resize(cap * M::input_shape::size);
            dy[p].resize(cap * M::output_shape::size);
            for (auto& v : x[p])
                v = u(gen);
            for (auto& v : dy[p])
                v = u(gen);
        }
    }
};

/// Micro-batches of sizes `sizes` (capacity cap): backward with the kernels deferred and the deferred
/// kernels' functions (graph::deferred_kernels) over the parts' kept operands, whole and cut at odd
/// offsets, against backward on each into its own arena, the arenas added in order (what the trainer
/// does for every other parameter), and in the deferred ranges against backward on all the parts'
/// samples as one micro-batch (each element of a deferred kernel one chain over the step's samples in
/// order). Bits.
template <class M>
void
check_deferred(const std::vector<std::size_t>& sizes, bool logit_grad)
{
    using G = ops::graph<M>;
    constexpr std::size_t P = M::param_buffer_size;
    const std::size_t cap = *std::max_element(sizes.begin(), sizes.end());
    const std::size_t parts = sizes.size();
    random_parts<M> drawn(5, parts, cap);
    auto& params = drawn.params;
    auto& x = drawn.x;
    auto& dy = drawn.dy;
    std::vector<std::vector<float>> ws(parts), arena(parts), kept(parts);
    for (std::size_t p = 0; p < parts; ++p)
        ws[p].resize(G::workspace_floats(cap));
    const step_context ctx{};
    auto run = [&](std::size_t p, std::vector<float>& grads, bool defer) {
        grads.assign(P, 42.0f);   // what backward writes replaces it; deferred ranges keep it
        if (sizes[p] == 0)
            return;
        G::forward(params.data(), x[p].data(), ws[p].data(), cap, sizes[p], ctx);
        std::copy_n(dy[p].data(), sizes[p] * M::output_shape::size, G::loss_gradient(ws[p].data(), cap));
        G::backward(params.data(), x[p].data(), ws[p].data(), cap, sizes[p], grads.data(), logit_grad, nullptr, defer);
    };
    auto sum_in_order = [&](std::vector<std::vector<float>>& a) {
        std::vector<float> g = a[0];
        for (std::size_t p = 1; p < parts; ++p)
            if (sizes[p] > 0)
                for (std::size_t i = 0; i < P; ++i)
                    g[i] = g[i] + a[p][i];
        return g;
    };
    for (std::size_t p = 0; p < parts; ++p)
        run(p, arena[p], false);
    std::vector<float> want = sum_in_order(arena);
    {
        const std::size_t total = std::accumulate(sizes.begin(), sizes.end(), std::size_t{0});
        std::vector<float> x_all, dy_all, ws_all(G::workspace_floats(total)), g_all(P, 42.0f);
        for (std::size_t p = 0; p < parts; ++p) {
            x_all.insert(x_all.end(), x[p].begin(), x[p].begin() + sizes[p] * M::input_shape::size);
            dy_all.insert(dy_all.end(), dy[p].begin(), dy[p].begin() + sizes[p] * M::output_shape::size);
        }
        G::forward(params.data(), x_all.data(), ws_all.data(), total, total, ctx);
        std::copy(dy_all.begin(), dy_all.end(), G::loss_gradient(ws_all.data(), total));
        G::backward(params.data(), x_all.data(), ws_all.data(), total, total, g_all.data(), logit_grad);
        for (const auto& r : G::deferred_ranges)
            std::copy(g_all.begin() + r.begin, g_all.begin() + r.end, want.begin() + r.begin);
    }

    for (std::size_t p = 0; p < parts; ++p)
        run(p, kept[p], true);
    std::size_t deferred = 0;
    for (const auto& r : G::deferred_ranges) {
        deferred += r.end - r.begin;
        CHECK(std::all_of(kept[0].begin() + r.begin, kept[0].begin() + r.end, [](float v) { return v == 42.0f; }));
    }
    CHECK(deferred > 0);
    // What the trainer keeps of each micro-batch after its backward, then hands to the fused pass.
    constexpr std::size_t D = G::deferred_kernels.size();
    std::vector<deferred_operands> operands(D * parts, deferred_operands{nullptr, nullptr, 0});
    for (std::size_t p = 0; p < parts; ++p)
        if (sizes[p] > 0)
            G::deferred_operands_of(x[p].data(), ws[p].data(), cap, sizes[p], operands.data() + p, parts);
    auto fused_pass = [&](std::size_t lo, std::size_t hi, float* g) {
        for (std::size_t d = 0; d < D; ++d)
            G::deferred_kernels[d].gradient(operands.data() + d * parts, parts, lo, hi, g, false);
    };
    std::vector<float> whole = sum_in_order(kept);   // right outside the deferred ranges
    fused_pass(0, P, whole.data());
    CHECK(whole == want);

    std::vector<float> cut = sum_in_order(kept);
    for (std::size_t lo = 0; lo < P; lo += 37)   // 37 floats: blocks that begin and end inside rows
        fused_pass(lo, std::min(P, lo + 37), cut.data());
    CHECK(cut == want);
}

} // namespace

TEST_CASE("deferred Dense kernels: over every micro-batch at once, the bits of one micro-batch of them all",
          "[gradcheck][deferred]")
{
    // Dense<20> and Dense<5> are deferred; Dense<7> feeds Dense<5> directly, so it is not.
    using Chain = Sequential<Input<Shape<13>>, Dense<20, Relu>, Dense<7, Tanh>, Dense<5, Softmax>>;
    STATIC_REQUIRE(ops::graph<Chain>::deferred_ranges.size() == 2);
    check_deferred<Chain>({5, 0, 3, 4, 5}, true);
    check_deferred<Chain>({2, 2}, false);
    // The Fashion-MNIST pattern: the Dense reads the fused pair's pooled block through a Flatten.
    using Conv = Sequential<Input<Shape<8, 8, 1>>, Conv2D<4, 3>, MaxPool2D<2>, Activation<Relu>, Flatten, Dense<6>,
                            Activation<Softmax>>;
    check_deferred<Conv>({3, 1, 0, 2}, false);
    // In a graph, the same rule across a fan-out and a merge: Dense<6> defers (an Add reads it), Dense<8>
    // feeds it and does not; Dense<3> defers.
    using Residual = Functional<Node<"x", Input<Shape<6>>>, Node<"hidden", Dense<8, Relu>>, Node<"mix", Dense<6>>,
                                Node<"skip", Add, "mix", "x">, Node<"classes", Dense<3, Softmax>>>;
    STATIC_REQUIRE(ops::graph<Residual>::deferred_ranges.size() == 2);
    check_deferred<Residual>({3, 0, 4, 2}, true);
    // Two Dense reading the input itself, both deferred, and the one over their sum.
    using Branches = Functional<Node<"x", Input<Shape<7>>>, Node<"a", Dense<5, Relu>, "x">, Node<"b", Dense<5>, "x">,
                                Node<"sum", Add, "a", "b">, Node<"out", Dense<3>>>;
    STATIC_REQUIRE(ops::graph<Branches>::deferred_ranges.size() == 3);
    check_deferred<Branches>({2, 5, 1}, false);
    // A layer used twice keeps its kernel gradient (its uses' gradients add up; they are not one chain).
    using Tied = Functional<Node<"x", Input<Shape<8>>>, Node<"tied", Dense<8, Relu>>, Node<"again", Shared<"tied">>,
                            Node<"sum", Add, "tied", "again">, Node<"classes", Dense<3, Softmax>>>;
    STATIC_REQUIRE(ops::graph<Tied>::deferred_ranges.size() == 1);
    check_deferred<Tied>({2, 3}, false);
}

namespace {

/// A model's micro-batches of sizes `sizes` (capacity cap) through forward_micro_batches, their losses'
/// gradients, and backward_micro_batches (a dense network layer by layer; a model with row layers on
/// top, graph::rows_from, those layer by layer and the others micro-batch by micro-batch), against
/// forward and backward on each part alone: every output, every workspace float backward leaves for the
/// deferred kernels and every arena, bit for bit.
template <class M>
void
check_rows(const std::vector<std::size_t>& sizes, bool logit_grad, bool defer, float param_scale = 1.0f)
{
    using G = ops::graph<M>;
    STATIC_REQUIRE(G::rows_from < G::layers);
    constexpr std::size_t P = M::param_buffer_size;
    const std::size_t cap = *std::max_element(sizes.begin(), sizes.end());
    const std::size_t parts = sizes.size();
    random_parts<M> drawn(9, parts, cap, param_scale);
    auto& params = drawn.params;
    auto& x = drawn.x;
    auto& dy = drawn.dy;
    std::vector<std::vector<float>> ws_one(parts), ws_rows(parts), g_one(parts), g_rows(parts);
    std::vector<std::vector<float>> y_one(parts);   // each part's output, before backward takes its block
    std::vector<std::size_t> first(parts);
    for (std::size_t p = 0, offset = 0; p < parts; offset += sizes[p], ++p) {
        ws_one[p].assign(G::workspace_floats(cap), 0.0f);
        ws_rows[p] = ws_one[p];
        g_one[p].assign(P, 42.0f);
        g_rows[p].assign(P, 42.0f);
        first[p] = 1000 + offset;   // the Dropout masks depend on each sample's place in the step
    }
    const step_context ctx{.training = true, .seed = 11, .step = 4, .first_sample = 0, .weights_version = 3};
    for (std::size_t p = 0; p < parts; ++p) {
        if (sizes[p] == 0)
            continue;
        step_context c = ctx;
        c.first_sample = first[p];
        G::forward(params.data(), x[p].data(), ws_one[p].data(), cap, sizes[p], c);
        const float* y = G::output(ws_one[p].data(), cap);
        y_one[p].assign(y, y + sizes[p] * M::output_shape::size);
        std::copy_n(dy[p].data(), sizes[p] * M::output_shape::size, G::loss_gradient(ws_one[p].data(), cap));
        G::backward(params.data(), x[p].data(), ws_one[p].data(), cap, sizes[p], g_one[p].data(), logit_grad, nullptr,
                    defer);
    }
    std::vector<typename G::micro_batch> views;
    for (std::size_t p = 0; p < parts; ++p)
        views.push_back({x[p].data(), ws_rows[p].data(), sizes[p], first[p], g_rows[p].data()});
    G::forward_micro_batches(params.data(), views.data(), parts, cap, ctx);
    for (std::size_t p = 0; p < parts; ++p)
        if (sizes[p] > 0) {
            const std::size_t out = sizes[p] * M::output_shape::size;
            CHECK(std::equal(y_one[p].begin(), y_one[p].end(), G::output(ws_rows[p].data(), cap)));
            std::copy_n(dy[p].data(), out, G::loss_gradient(ws_rows[p].data(), cap));
        }
    G::backward_micro_batches(params.data(), views.data(), parts, cap, logit_grad, defer);
    for (std::size_t p = 0; p < parts; ++p) {
        CHECK(g_rows[p] == g_one[p]);
        CHECK(ws_rows[p] == ws_one[p]);   // dZ kept for the deferred kernels, the deltas, the masks
    }
    // Bits of zeros would prove nothing: the lowest layer's kernel gradient, at the bottom of every
    // path, must be mostly nonzero and not vanishingly small (a saturated softmax fails), where
    // backward writes it (not a kernel deferred to the all-reduce).
    constexpr std::size_t lowest = [] {
        std::size_t i = 0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (void)((M::template layer<I>::weight_count > 0 ? (i = I, true) : false) || ...);
        }(std::make_index_sequence<M::layer_count>{});
        return i;
    }();
    static_assert(M::template layer<lowest>::weight_count > 0, "check_rows: a model with weights");
    using K = typename M::template layer<lowest>::template weight<0>;
    for (std::size_t p = 0; p < parts; ++p)
        if (sizes[p] > 0 && !(defer && G::template deferred_kernel<lowest>())) {
            const auto nonzero = std::count_if(g_one[p].begin() + K::offset, g_one[p].begin() + K::offset + K::size,
                                               [](float g) { return std::abs(g) > 1e-6f && g != 42.0f; });
            INFO("part " << p << ": " << nonzero << " of layer " << lowest << "'s " << K::size
                          << " kernel gradients above 1e-6");
            CHECK(static_cast<std::size_t>(nonzero) * 2 > K::size);
        }
}

} // namespace

TEST_CASE("a dense network's micro-batches layer by layer: the bits of each one alone", "[gradcheck][rows]")
{
    // The MNIST MLP's layers, smaller: Dropout masks keyed by each part's first sample.
    using Mlp = Sequential<Input<Shape<70>>, Dense<40, Relu>, Dropout<0.2f>, Dense<33, Relu>, Dropout<0.5f>,
                           Dense<10, Softmax>>;
    check_rows<Mlp>({16, 16, 16, 16, 16, 16, 16, 16}, true, true);
    check_rows<Mlp>({5, 0, 3, 4}, false, true);
    check_rows<Mlp>({7, 2}, true, false);
    // A Dense feeding a Dense (its kernel not deferred), a Flatten first, element-wise activations.
    using Chain = Sequential<Input<Shape<4, 6>>, Flatten, Dense<20, Tanh>, Dense<17>, Activation<Sigmoid>,
                             Dense<5, Softmax>>;
    check_rows<Chain>({3, 3, 1}, false, true);
    check_rows<Chain>({2, 9}, true, false);
    STATIC_REQUIRE_FALSE(ops::graph<seeds::FashionCnn>::rows_only);
}

TEST_CASE("a wide Dense on top of convolutions runs its micro-batches layer by layer: the bits of each one alone",
          "[gradcheck][rows]")
{
    // The CIFAR-10 pattern, smaller: a Same convolution, a convolution fused with its pooling, Dropout,
    // Flatten, a Dense whose kernel (256 x 1024) is rows_kernel_floats, Dropout, Dense<10>. The layers
    // from the first Dropout up run layer by layer, the convolutions micro-batch by micro-batch.
    using Wide = Sequential<Input<Shape<10, 10, 1>>, Conv2D<4, 3, Relu, Same>, Conv2D<16, 3, Relu>, MaxPool2D<2>,
                            Dropout<0.25f>, Flatten, Dense<1024, Relu>, Dropout<0.5f>, Dense<10, Softmax>>;
    using G = ops::graph<Wide>;
    STATIC_REQUIRE(G::rows_from == 3);
    STATIC_REQUIRE(G::plan.nodes[1].kind == ops::node_kind::fused_conv);
    check_rows<Wide>({16, 16, 16, 16}, true, true);
    // Through the softmax's own derivative: weights drawn from [-0.3, 0.3], where [-1, 1] gives logits
    // of ~850 that saturate it (a part's gradients all 0, on both sides).
    check_rows<Wide>({5, 0, 3, 4}, false, true, 0.3f);
    check_rows<Wide>({7, 2}, true, false);
    // A narrower kernel, or one whose input gradient the fused pair below computes (Fashion-MNIST's
    // Dense<10> through a Flatten): every micro-batch through the whole model in turn.
    using Narrow = Sequential<Input<Shape<10, 10, 1>>, Conv2D<4, 3, Relu, Same>, Conv2D<16, 3, Relu>, MaxPool2D<2>,
                              Dropout<0.25f>, Flatten, Dense<1023, Relu>, Dropout<0.5f>, Dense<10, Softmax>>;
    STATIC_REQUIRE(ops::graph<Narrow>::rows_from == ops::graph<Narrow>::layers);
    STATIC_REQUIRE(ops::graph<seeds::FashionCnn>::rows_from == ops::graph<seeds::FashionCnn>::layers);
}

TEST_CASE("layers below a wide Dense keep nothing between a micro-batch's forward and its backward but its workspace",
          "[gradcheck][rows]")
{
    // Below rows_from every micro-batch's forward runs before any backward: recurrent layers, batch
    // statistics and a fused pair must find what their backward needs in the micro-batch's workspace.
    using Lstm = Sequential<Input<Shape<5, 6>>, LSTM<16>, Dense<16384, Relu>, Dense<10, Softmax>>;
    STATIC_REQUIRE(ops::graph<Lstm>::rows_from == 1);
    check_rows<Lstm>({4, 3, 0, 4}, true, true);
    using Gru = Sequential<Input<Shape<5, 6>>, GRU<16>, Dense<16384, Relu>, Dense<10, Softmax>>;
    STATIC_REQUIRE(ops::graph<Gru>::rows_from == 1);
    check_rows<Gru>({4, 3, 4}, false, true);
    using Bn = Sequential<Input<Shape<6, 6, 2>>, Conv2D<8, 3>, BatchNormalization<>, Activation<Relu>, Flatten,
                          Dense<2048, Relu>, Dense<10, Softmax>>;
    STATIC_REQUIRE(ops::graph<Bn>::rows_from == 2);
    check_rows<Bn>({5, 2, 5}, true, true);
}

// ---- functional models (Functional: model/graph_model.hpp, ops/node_graph.hpp) ----

namespace {
using tpudsl::Node;
using tpudsl::Outputs;

// x -> Dense -> Dense, + x: the residual block of a dense network, the input read twice (fan-out).
using DenseResidual = Functional<Node<"x", Input<Shape<6>>>, Node<"d1", Dense<6, Tanh>, "x">, Node<"d2", Dense<6>>,
                            Node<"sum", Add, "d2", "x">, Node<"head", Dense<3, Softmax>>>;
// Convolutions with a projection shortcut, then an activation, a pooling and a head (an average
// pooling: a max pooling has kinks within a central difference's step of random inputs).
using ConvResidual =
    Functional<Node<"image", Input<Shape<5, 4, 2>>>, Node<"conv_a", Conv2D<3, 3, Tanh, Same>, "image">,
          Node<"conv_b", Conv2D<3, 3, Linear, Same>>, Node<"shortcut", Conv2D<3, 1>, "image">,
          Node<"add", Add, "conv_b", "shortcut">, Node<"act", Activation<Tanh>>, Node<"pool", AveragePooling2D<2>>,
          Node<"flat", Flatten>, Node<"out", Dense<2>>, Outputs<"out">>;
// Inception-style: three branches of one input, concatenated on the channels, and a merge of each kind.
using Branches =
    Functional<Node<"in", Input<Shape<4, 3>>>, Node<"a", Conv1D<2, 1, Tanh>, "in">, Node<"b", Conv1D<3, 3, Tanh, Same>, "in">,
          Node<"c", MaxPool1D<3, 1, Same>, "in">, Node<"cat", Concatenate<>, "a", "b", "c">,
          Node<"p", Conv1D<2, 1>, "cat">, Node<"q", Conv1D<2, 1, Tanh>, "cat">, Node<"diff", Subtract, "p", "q">,
          Node<"prod", Multiply, "p", "q", "diff">, Node<"avg", Average, "prod", "p">, Node<"hi", Maximum, "avg", "q">,
          Node<"lo", Minimum, "hi", "diff">, Node<"cat1", Concatenate<1>, "lo", "p">, Node<"flat", Flatten>,
          Node<"out", Dense<2>>>;
} // namespace

TEST_CASE("gradients: functional models, a residual Add with fan-out, Concatenate and every merge", "[gradcheck][graph]")
{
    check_model<DenseResidual>();
    check_model<ConvResidual>();
    check_model<Branches>(1e-3);   // max pooling, Maximum and Minimum: kinks within a larger step
    // The reshaping layers: a transpose, a reshape, a repeated vector, an identity, in a graph and a chain.
    check_model<Functional<Node<"x", Input<Shape<3, 4>>>, Node<"t", Permute<2, 1>>, Node<"c", Conv1D<2, 1, Tanh>>,
                           Node<"r", Reshape<8>>, Node<"d", Dense<5, Tanh>>, Node<"rep", RepeatVector<3>>,
                           Node<"id", Identity>, Node<"back", Permute<2, 1>>, Node<"sum", Add, "back", "back">,
                           Node<"flat", Flatten>, Node<"out", Dense<2>>>>();
    check_model<Sequential<Input<Shape<2, 3, 2>>, Permute<3, 1, 2>, Reshape<4, 3>, Conv1D<2, 1, Tanh>, Identity,
                           Flatten, RepeatVector<2>, Flatten, Dense<2>>>();
    // A node reading one tensor twice: each edge its own gradient, summed.
    check_model<Functional<Node<"x", Input<Shape<5>>>, Node<"d", Dense<5, Tanh>>, Node<"sq", Multiply, "d", "d">,
                      Node<"out", Dense<2>>>>();
}

TEST_CASE("gradients: in a graph, a convolution runs fused with the max pooling that alone reads it", "[gradcheck][graph]")
{
    // conv_a's one reader is its pooling: fused. conv_b is read by its pooling and by a global pooling: not.
    using Image = Functional<Node<"image", Input<Shape<6, 6, 2>>>, Node<"conv_a", Conv2D<3, 3, Tanh, Same>, "image">,
                             Node<"pool_a", MaxPool2D<2>>, Node<"conv_b", Conv2D<3, 3, Sigmoid, Same>, "image">,
                             Node<"pool_b", MaxPool2D<2>, "conv_b">, Node<"gap", GlobalAveragePooling2D, "conv_b">,
                             Node<"sum", Add, "pool_a", "pool_b">, Node<"flat", Flatten>,
                             Node<"cat", Concatenate<>, "flat", "gap">, Node<"out", Dense<2>>>;
    using GI = ops::graph<Image>;
    STATIC_REQUIRE(std::ranges::count_if(GI::pooled_by, [](std::size_t b) { return b < GI::layers; }) == 1);
    check_model<Image>(1e-3);
    // A fused pair whose input gradient goes to the layer below (its input larger than its pooled output,
    // and the two in separate blocks), then a Dense that defers its kernel over the pooled output.
    using Sequence = Functional<Node<"in", Input<Shape<9, 2>>>, Node<"c1", Conv1D<3, 2, Tanh>>,
                                Node<"c2", Conv1D<4, 3, Sigmoid>>, Node<"p2", MaxPool1D<2>>, Node<"flat", Flatten>,
                                Node<"out", Dense<2>>>;
    using GS = ops::graph<Sequence>;
    STATIC_REQUIRE(std::ranges::count_if(GS::pooled_by, [](std::size_t b) { return b < GS::layers; }) == 1);
    STATIC_REQUIRE(GS::deferred_ranges.size() == 1);
    check_model<Sequence>(1e-3);
    check_deferred<Sequence>({3, 2, 0, 4}, false);
    // The Fashion-MNIST pattern in a graph: a Linear convolution, its pooling and the Tanh after it run
    // as one pair, the activation's output the pooling's block, read twice.
    using Absorbed = Functional<Node<"image", Input<Shape<8, 8, 1>>>, Node<"conv", Conv2D<4, 3>>,
                                Node<"pool", MaxPool2D<2>>, Node<"act", Activation<Tanh>>, Node<"flat", Flatten>,
                                Node<"gap", GlobalAveragePooling2D, "act">, Node<"cat", Concatenate<>, "flat", "gap">,
                                Node<"out", Dense<3>>>;
    using GA = ops::graph<Absorbed>;
    STATIC_REQUIRE(std::ranges::count_if(GA::absorbs, [](std::size_t a) { return a < GA::layers; }) == 1);
    STATIC_REQUIRE(std::is_same_v<GA::conv_pool<0>::Act, Tanh>);
    check_model<Absorbed>(1e-3);
    check_deferred<Absorbed>({2, 3, 1}, false);
}

TEST_CASE("gradients: a layer shared by two nodes (Keras' layer reuse) sums both uses' gradients", "[gradcheck][graph]")
{
    using tpudsl::Shared;
    // The same Dense applied twice in a row, and to the input again beside it: three uses of one kernel.
    check_model<Functional<Node<"x", Input<Shape<4>>>, Node<"tied", Dense<4, Tanh>, "x">,
                           Node<"again", Shared<"tied">, "tied">, Node<"beside", Shared<"tied">, "x">,
                           Node<"sum", Add, "again", "beside">, Node<"out", Dense<2>>>>();
    // A shared convolution on two branches of different lengths (same channels: same weights).
    check_model<Functional<Node<"x", Input<Shape<6, 2>>>, Node<"conv", Conv1D<2, 3, Tanh, Same>, "x">,
                           Node<"pool", AveragePooling1D<2>, "conv">, Node<"conv_pooled", Shared<"conv">, "pool">,
                           Node<"flat_a", Flatten, "conv">, Node<"flat_b", Flatten, "conv_pooled">,
                           Node<"cat", Concatenate<>, "flat_a", "flat_b">, Node<"out", Dense<2>>>>();
}

TEST_CASE("gradients: Dot over rank-1 and rank-2 inputs, each pair of axes", "[gradcheck][graph]")
{
    using tpudsl::Dot;
    // rank 1 with rank 1: (1), the dot product of two projections
    check_model<Functional<Node<"x", Input<Shape<5>>>, Node<"a", Dense<4, Tanh>, "x">, Node<"b", Dense<4, Tanh>, "x">,
                           Node<"dot", Dot<1>, "a", "b">, Node<"out", Dense<2>>>>();
    // rank 2 with rank 2: scores on the last axes (3, 3), and on the first (4, 4)
    check_model<Functional<Node<"x", Input<Shape<3, 4>>>, Node<"q", Conv1D<4, 1, Tanh>, "x">,
                           Node<"k", Conv1D<4, 1>, "x">, Node<"scores", Dot<2, 2>, "q", "k">,
                           Node<"gram", Dot<1, 1>, "q", "k">, Node<"fs", Flatten, "scores">, Node<"fg", Flatten, "gram">,
                           Node<"cat", Concatenate<>, "fs", "fg">, Node<"out", Dense<2>>>>();
    // rank 2 with rank 1 (4), and a matrix product (3, 4) . (4, 3)
    check_model<Functional<Node<"x", Input<Shape<3, 4>>>, Node<"v", Conv1D<1, 1, Tanh>, "x">,
                           Node<"flat_v", Flatten, "v">, Node<"w", Dot<1, 1>, "x", "flat_v">,
                           Node<"t", Permute<2, 1>, "x">, Node<"m", Dot<2, 1>, "x", "t">, Node<"fm", Flatten, "m">,
                           Node<"cat", Concatenate<>, "w", "fm">, Node<"out", Dense<2>>>>();
    STATIC_REQUIRE(std::is_same_v<Functional<Node<"x", Input<Shape<3, 4>>>,
                                             Node<"d", Dot<-1, -1>, "x", "x">>::layer<0>::output_shape,
                                  Shape<3, 3>>);
}

namespace {

/// A graph of several inputs and outputs: packed rows in (token ids as floats), and the scalar
/// L = sum_h w_h sum_i r_h,i y_h,i over its heads (w_h: loss weights), so head h's gradient is w_h r_h.
template <class M, std::size_t N = 3>
struct heads_harness {
    using model = M;
    using G = ops::graph<M>;
    static constexpr std::size_t n = N;

    std::vector<float> params = std::vector<float>(M::param_buffer_size);
    std::vector<float> x = std::vector<float>(n * M::input_shape::size);
    std::vector<float> r = std::vector<float>(n * M::output_shape::size);   // each head's at its output_offsets
    std::array<float, M::output_count> w{};
    std::vector<float> ws = std::vector<float>(G::workspace_floats(n));
    step_context ctx{.training = true, .seed = 7, .step = 3, .first_sample = 0};

    explicit heads_harness(std::uint32_t seed)
    {
        std::mt19937 gen(seed);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        draw_uniform(gen, params, r);
        for (std::size_t h = 0; h < w.size(); ++h)
            w[h] = 0.5f + static_cast<float>(h);
        for (std::size_t s = 0; s < n; ++s)
            for (std::size_t k = 0; k < M::input_count; ++k)
                for (std::size_t j = 0; j < M::input_sizes[k]; ++j)
                    x[s * M::input_shape::size + M::input_offsets[k] + j] =
                        M::input_integral[k] ? static_cast<float>(gen() % 5) : u(gen);   // ids repeat: a scatter-add
    }

    double
    loss()
    {
        G::forward(params.data(), x.data(), ws.data(), n, n, ctx);
        double l = 0.0;
        [&]<std::size_t... H>(std::index_sequence<H...>) {
            ([&] {
                const float* y = G::template head_output<H>(ws.data(), n);
                for (std::size_t i = 0; i < n * M::output_sizes[H]; ++i)
                    l += static_cast<double>(w[H]) * r[n * M::output_offsets[H] + i] * y[i];
            }(),
             ...);
        }(std::make_index_sequence<M::output_count>{});
        return l;
    }

    std::vector<float>
    gradients()
    {
        std::vector<float> grads(M::param_buffer_size, 0.0f);
        loss();
        [&]<std::size_t... H>(std::index_sequence<H...>) {
            ([&] {
                float* g = G::template head_gradient<H>(ws.data(), n);
                for (std::size_t i = 0; i < n * M::output_sizes[H]; ++i)
                    g[i] = w[H] * r[n * M::output_offsets[H] + i];
            }(),
             ...);
        }(std::make_index_sequence<M::output_count>{});
        G::backward(params.data(), x.data(), ws.data(), n, n, grads.data(), 0u);
        return grads;
    }
};

// Two heads on one trunk, one of them also read by a layer below the other (an output that fans out).
using HeadsFanOut = Functional<Node<"x", Input<Shape<4>>>, Node<"trunk", Dense<5, Tanh>>, Node<"first", Dense<3, Tanh>>,
                               Node<"more", Dense<5, Tanh>, "first">, Node<"second", Add, "more", "trunk", "trunk">,
                               Outputs<"second", "first">>;

} // namespace

TEST_CASE("gradients: several inputs (packed rows, token ids among them) and several weighted outputs", "[gradcheck][graph]")
{
    const auto check = []<class M>(std::type_identity<M>) {
        heads_harness<M> h(3);
        const std::vector<float> grads = h.gradients();
        const std::size_t checked = [&]<std::size_t... I>(std::index_sequence<I...>) {
            return (std::size_t{0} + ... + check_layer<heads_harness<M>, I>(h, grads, 1e-2));
        }(std::make_index_sequence<M::layer_count>{});
        CHECK(checked > 0);
    };
    // Keras' two-input, two-output model (examples/text_and_metadata, smaller): an Embedding of ids and a
    // float input concatenated, a softmax head and a linear one (tanh trunk: no kink within the step).
    check(std::type_identity<Functional<Node<"words", Input<Shape<6>, std::int32_t>>, Node<"numbers", Input<Shape<3>>>,
                                        Node<"embedding", Embedding<5, 4>, "words">, Node<"average", GlobalAveragePooling1D>,
                                        Node<"joined", Concatenate<>, "average", "numbers">, Node<"hidden", Dense<6, Tanh>>,
                                        Node<"topic", Dense<3, Softmax>, "hidden">, Node<"score", Dense<1>, "hidden">,
                                        Outputs<"topic", "score">>>{});
    check(std::type_identity<HeadsFanOut>{});
    // Two texts, each through an Embedding of its own (the second a graph's later layer), and numbers.
    check(std::type_identity<Functional<Node<"question", Input<Shape<5>, std::int32_t>>,
                                        Node<"answer", Input<Shape<4>, std::int32_t>>, Node<"numbers", Input<Shape<2>>>,
                                        Node<"q_embed", Embedding<5, 3>, "question">, Node<"q_avg", GlobalAveragePooling1D>,
                                        Node<"a_embed", Embedding<6, 3>, "answer">, Node<"a_flat", Flatten>,
                                        Node<"joined", Concatenate<>, "q_avg", "a_flat", "numbers">,
                                        Node<"out", Dense<2, Tanh>>>>{});
    // Two float inputs of different shapes, one output: the packed row alone.
    check(std::type_identity<Functional<Node<"a", Input<Shape<2, 3>>>, Node<"b", Input<Shape<4>>>, Node<"fa", Flatten, "a">,
                                        Node<"cat", Concatenate<>, "fa", "b">, Node<"out", Dense<2, Tanh>>>>{});
    // One Embedding called on both texts (Keras' layer reuse): its rows' gradients from both calls add up.
    check(std::type_identity<Functional<Node<"q", Input<Shape<5>, std::int32_t>>, Node<"a", Input<Shape<5>, std::int32_t>>,
                                        Node<"embed", Embedding<5, 3>, "q">, Node<"embed_1", tpudsl::Shared<"embed">, "a">,
                                        Node<"diff", Subtract, "embed", "embed_1">, Node<"flat", Flatten>,
                                        Node<"out", Dense<2, Tanh>>>>{});
    // ... and on texts of different lengths (an Embedding's weights do not depend on the length).
    check(std::type_identity<Functional<Node<"q", Input<Shape<5>, std::int32_t>>, Node<"t", Input<Shape<3>, std::int32_t>>,
                                        Node<"embed", Embedding<5, 3>, "q">, Node<"embed_1", tpudsl::Shared<"embed">, "t">,
                                        Node<"fq", Flatten, "embed">, Node<"ft", Flatten, "embed_1">,
                                        Node<"cat", Concatenate<>, "fq", "ft">, Node<"out", Dense<2, Tanh>>>>{});
}
