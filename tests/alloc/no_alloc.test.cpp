// A training step allocates nothing: a counting global operator new around steady-state steps of
// the seed models, and a whole fit whose allocations do not grow with its number of steps.
#include "fashion_mnist_cnn/model.hpp"
#include "mnist_mlp/model.hpp"
#include "reuters_conv1d/model.hpp"
#include "text_and_metadata/model.hpp"

#include <tpudsl/functional.hpp>
#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <xtensor/xtensor.hpp>

#include <atomic>
#include <cstdlib>
#include <new>
#include <sstream>

namespace {
std::atomic<std::size_t> allocations{0};

void*
counted(std::size_t n, std::size_t align = alignof(std::max_align_t))
{
    ++allocations;
    const std::size_t size = (n + align - 1) / align * align;
    if (void* p = std::aligned_alloc(align, size ? size : align))
        return p;
    throw std::bad_alloc();
}
} // namespace

void* operator new(std::size_t n) { return counted(n); }
void* operator new[](std::size_t n) { return counted(n); }
void* operator new(std::size_t n, std::align_val_t a) { return counted(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted(n, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {
/// Allocations in `steps` training steps (full and partial batches) from the first one on: the
/// workspaces and each thread's kernel scratch are sized before it, by the model's plan. Every request
/// a kernel made must have fit its thread's arena.
template <class M, class Strategy = tpudsl::OneDeviceStrategy, class Opt>
std::size_t
allocations_in_steps(Opt opt, std::size_t batch, std::size_t steps)
{
    Strategy strategy;
    auto model = strategy.template scope<M>(1);
    if constexpr (requires { requires M::packed_outputs; })   // a class and a score (text_and_metadata)
        model.compile(opt,
                      tpudsl::PerOutput{tpudsl::losses::SparseCategoricalCrossentropy{}, tpudsl::losses::MeanSquaredError{}}
                          .loss_weights({1.0, 0.5}),
                      tpudsl::OnOutput<0, tpudsl::metrics::SparseCategoricalAccuracy>{});
    else
        model.compile(opt, tpudsl::losses::SparseCategoricalCrossentropy{},
                      tpudsl::metrics::SparseCategoricalAccuracy{},
                      tpudsl::metrics::SparseTopKCategoricalAccuracy<5>{});
    model.ensure_capacity(batch);
    const std::size_t before = allocations.load();
    for (std::size_t s = 0; s < steps; ++s)
        model.train_step(batch - s % 3);   // full and partial batches
    const std::size_t made = allocations.load() - before;
    CHECK(model.scratch_arenas().size() == strategy.threads());
    for (const auto& arena : model.scratch_arenas())
        CHECK(arena.overflows() == 0);
    return made;
}

/// Convolutions read from zero frames (Same padding), one of them fused with its pooling, and a
/// Valid one fused with its pooling, at 8 x 8 x 3.
using SameConv = tpudsl::Sequential<tpudsl::Input<tpudsl::Shape<8, 8, 3>>, tpudsl::Conv2D<16, 3, tpudsl::Relu, tpudsl::Same>,
                                    tpudsl::Conv2D<16, 3, tpudsl::Relu>, tpudsl::MaxPool2D<2>,
                                    tpudsl::Conv2D<16, 3, tpudsl::Relu, tpudsl::Same>, tpudsl::MaxPool2D<2>, tpudsl::Flatten,
                                    tpudsl::Dense<10, tpudsl::Softmax>>;

/// Input gradients as convolutions of dZ's zero frame (conv_core::dx_as_conv), not fused with a
/// pooling: a Same convolution (its windows in zero frames) and a Valid one.
using ConvInputGradients =
    tpudsl::Sequential<tpudsl::Input<tpudsl::Shape<20, 20, 3>>, tpudsl::Conv2D<16, 1, tpudsl::Relu>,
                       tpudsl::Conv2D<16, 3, tpudsl::Relu, tpudsl::Same>, tpudsl::Conv2D<8, 3, tpudsl::Relu>,
                       tpudsl::Flatten, tpudsl::Dense<10, tpudsl::Softmax>>;
static_assert(tpudsl::detail::conv_core<tpudsl::kernels::window_geometry{20, 20, 16, 3, 3, 1, 1, 20, 20, 1, 1}, 16,
                                        tpudsl::Relu>::dx_as_conv);
static_assert(tpudsl::detail::conv_core<tpudsl::kernels::window_geometry{20, 20, 16, 3, 3, 1, 1, 18, 18, 0, 0}, 8,
                                        tpudsl::Relu>::dx_as_conv);

/// The average and global poolings, 2-D and 1-D (Same windows included).
using Pools2D = tpudsl::Sequential<tpudsl::Input<tpudsl::Shape<12, 12, 3>>, tpudsl::Conv2D<8, 3, tpudsl::Relu, tpudsl::Same>,
                                   tpudsl::AveragePooling2D<2>, tpudsl::AveragePooling2D<3, 2, tpudsl::Same>,
                                   tpudsl::Conv2D<16, 1, tpudsl::Tanh>, tpudsl::GlobalMaxPooling2D,
                                   tpudsl::Dense<10, tpudsl::Softmax>>;
using Pools1D = tpudsl::Sequential<tpudsl::Input<tpudsl::Shape<20, 4>>, tpudsl::Conv1D<8, 3, tpudsl::Relu>,
                                   tpudsl::AveragePooling1D<3, 2, tpudsl::Same>, tpudsl::GlobalAveragePooling1D,
                                   tpudsl::Dense<10, tpudsl::Softmax>>;
using PoolsGlobal = tpudsl::Sequential<tpudsl::Input<tpudsl::Shape<20, 4>>, tpudsl::Conv1D<8, 3, tpudsl::Relu>,
                                       tpudsl::GlobalMaxPooling1D, tpudsl::Dense<10, tpudsl::Softmax>>;
using PoolsAverage2D = tpudsl::Sequential<tpudsl::Input<tpudsl::Shape<6, 6, 2>>, tpudsl::Conv2D<8, 3, tpudsl::Relu>,
                                          tpudsl::GlobalAveragePooling2D, tpudsl::Dense<10, tpudsl::Softmax>>;

/// BatchNormalization after a convolution and after a Dense: statistics in the layer's scratch.
using Normalized = tpudsl::Sequential<tpudsl::Input<tpudsl::Shape<8, 8, 3>>, tpudsl::Conv2D<8, 3>,
                                      tpudsl::BatchNormalization<>, tpudsl::Activation<tpudsl::Relu>,
                                      tpudsl::GlobalAveragePooling2D, tpudsl::Dense<16>, tpudsl::BatchNormalization<0.9f>,
                                      tpudsl::Dense<10, tpudsl::Softmax>>;
/// A per-timestep classifier: TimeDistributed Dense layers (the last a Softmax whose logits the loss
/// reads) after a Conv1D, and as the first layer.
using Tagger = tpudsl::Sequential<tpudsl::Input<tpudsl::Shape<20, 4>>, tpudsl::Conv1D<8, 3, tpudsl::Relu, tpudsl::Same>,
                                  tpudsl::TimeDistributed<tpudsl::Dense<16, tpudsl::Relu>>,
                                  tpudsl::TimeDistributed<tpudsl::Dense<5, tpudsl::Softmax>>>;
using TaggerFirst = tpudsl::Sequential<tpudsl::Input<tpudsl::Shape<20, 4>>,
                                       tpudsl::TimeDistributed<tpudsl::Dense<10, tpudsl::Softmax>>>;
/// The recurrent layers, their last state and every state, behind an Embedding and stacked.
using Recurrent = tpudsl::Sequential<tpudsl::Input<tpudsl::Shape<30>, std::int32_t>, tpudsl::Embedding<1000, 7>,
                                     tpudsl::LSTM<16, true>, tpudsl::GRU<12>, tpudsl::Dense<10, tpudsl::Softmax>>;
using RecurrentFloat = tpudsl::Sequential<tpudsl::Input<tpudsl::Shape<10, 4>>, tpudsl::Conv1D<8, 3, tpudsl::Relu>,
                                          tpudsl::GRU<8, true>, tpudsl::LSTM<12>, tpudsl::Dense<10, tpudsl::Softmax>>;

/// A functional model: a residual block with BatchNormalization (the stem read twice), a side branch
/// concatenated on the channels.
using tpudsl::Node;
using Graph = tpudsl::Functional<
    Node<"image", tpudsl::Input<tpudsl::Shape<8, 8, 3>>>, Node<"stem", tpudsl::Conv2D<8, 3, tpudsl::Relu, tpudsl::Same>>,
    Node<"conv", tpudsl::Conv2D<8, 3, tpudsl::Linear, tpudsl::Same>>, Node<"bn", tpudsl::BatchNormalization<>>,
    Node<"add", tpudsl::Add, "bn", "stem">, Node<"side", tpudsl::Conv2D<4, 1, tpudsl::Relu>, "image">,
    Node<"cat", tpudsl::Concatenate<>, "add", "side">, Node<"pool", tpudsl::MaxPool2D<2>>, Node<"flat", tpudsl::Flatten>,
    Node<"head", tpudsl::Dense<10, tpudsl::Softmax>>>;

/// A Transformer block's attention half: self-attention (dropout on its probabilities), its residual
/// and LayerNormalization; and cross-attention of a query over a value of another length.
using Attention = tpudsl::Functional<
    Node<"x", tpudsl::Input<tpudsl::Shape<12, 16>>>,
    Node<"att", tpudsl::MultiHeadAttention<2, 8, 8, tpudsl::attention_options{.dropout = 0.1f}>, "x", "x">,
    Node<"add", tpudsl::Add, "att", "x">, Node<"norm", tpudsl::LayerNormalization<>>,
    Node<"mean", tpudsl::GlobalAveragePooling1D, "x">, Node<"repeat", tpudsl::RepeatVector<3>>,
    Node<"cross", tpudsl::MultiHeadAttention<4, 4, 6, tpudsl::attention_options{.use_causal_mask = true}>, "repeat",
         "norm">,
    Node<"flat", tpudsl::Flatten>, Node<"head", tpudsl::Dense<10, tpudsl::Softmax>>>;

} // namespace

TEST_CASE("a training step allocates nothing, the first one included, the plan sized every kernel's scratch",
          "[alloc]")
{
    CHECK(allocations_in_steps<seeds::FashionCnn>(tpudsl::optimizers::Adam{}, 16, 5) == 0);
    CHECK(allocations_in_steps<seeds::Reuters>(tpudsl::optimizers::Nadam{}, 8, 5) == 0);
    CHECK(allocations_in_steps<seeds::MnistMlp>(tpudsl::optimizers::RMSprop{}, 8, 5) == 0);
    CHECK(allocations_in_steps<seeds::MnistMlp>(tpudsl::optimizers::SGD{.momentum = 0.9f}, 8, 5) == 0);
    CHECK(allocations_in_steps<SameConv>(tpudsl::optimizers::Adam{}, 48, 4) == 0);
    CHECK(allocations_in_steps<ConvInputGradients>(tpudsl::optimizers::Adam{}, 16, 3) == 0);
    CHECK(allocations_in_steps<ConvInputGradients, tpudsl::TpuStrategy<2>>(tpudsl::optimizers::Adam{}, 32, 3) == 0);
    CHECK(allocations_in_steps<Pools2D>(tpudsl::optimizers::Adam{}, 16, 4) == 0);
    CHECK(allocations_in_steps<Pools1D>(tpudsl::optimizers::SGD{}, 16, 4) == 0);
    CHECK(allocations_in_steps<PoolsGlobal>(tpudsl::optimizers::Adam{}, 16, 4) == 0);
    CHECK(allocations_in_steps<PoolsAverage2D>(tpudsl::optimizers::Adam{}, 16, 4) == 0);
    CHECK(allocations_in_steps<Normalized>(tpudsl::optimizers::Nadam{}, 16, 4) == 0);
    CHECK(allocations_in_steps<Normalized, tpudsl::TpuStrategy<2>>(tpudsl::optimizers::Adam{}, 32, 3) == 0);
    CHECK(allocations_in_steps<Tagger>(tpudsl::optimizers::Adam{}, 16, 4) == 0);
    CHECK(allocations_in_steps<TaggerFirst>(tpudsl::optimizers::SGD{}, 16, 4) == 0);
    CHECK(allocations_in_steps<Tagger, tpudsl::TpuStrategy<2>>(tpudsl::optimizers::Adam{}, 64, 3) == 0);
    CHECK(allocations_in_steps<Recurrent>(tpudsl::optimizers::Adam{}, 16, 4) == 0);
    CHECK(allocations_in_steps<RecurrentFloat>(tpudsl::optimizers::SGD{}, 16, 4) == 0);
    CHECK(allocations_in_steps<Recurrent, tpudsl::TpuStrategy<2>>(tpudsl::optimizers::Adam{}, 256, 3) == 0);
    CHECK(allocations_in_steps<Graph>(tpudsl::optimizers::Adam{}, 16, 4) == 0);
    CHECK(allocations_in_steps<Graph, tpudsl::TpuStrategy<2>>(tpudsl::optimizers::Nadam{}, 64, 3) == 0);
    CHECK(allocations_in_steps<Attention>(tpudsl::optimizers::Adam{}, 16, 4) == 0);
    CHECK(allocations_in_steps<Attention, tpudsl::TpuStrategy<2>>(tpudsl::optimizers::Adam{}, 32, 3) == 0);
    // Two inputs unpacked from their rows, two outputs each scored by its own loss.
    CHECK(allocations_in_steps<seeds::TextAndMetadata>(tpudsl::optimizers::Adam{}, 16, 4) == 0);
    CHECK(allocations_in_steps<seeds::TextAndMetadata, tpudsl::TpuStrategy<2>>(tpudsl::optimizers::Adam{}, 64, 3) == 0);
    // Each of two threads with its own arena; large batches take the packed kernels.
    CHECK(allocations_in_steps<seeds::FashionCnn, tpudsl::TpuStrategy<2>>(tpudsl::optimizers::Adam{}, 256, 3) == 0);
    CHECK(allocations_in_steps<seeds::MnistMlp, tpudsl::TpuStrategy<2>>(tpudsl::optimizers::Adam{}, 256, 3) == 0);
    CHECK(allocations_in_steps<seeds::Reuters, tpudsl::TpuStrategy<2>>(tpudsl::optimizers::Adam{}, 128, 3) == 0);
    // a schedule, clipping, decay and a moving average of the weights around the update
    const tpudsl::optimizers::Scheduled scheduled{
        tpudsl::optimizers::Adam{.options = {.clipvalue = 0.5f, .weight_decay = 0.01f, .use_ema = true}},
        tpudsl::optimizers::schedules::CosineDecay{.initial_learning_rate = 0.0f, .decay_steps = 10,
                                                   .warmup_target = 1e-3f, .warmup_steps = 2}};
    CHECK(allocations_in_steps<seeds::MnistMlp>(scheduled, 8, 5) == 0);
    CHECK(allocations_in_steps<seeds::FashionCnn, tpudsl::TpuStrategy<2>>(scheduled, 32, 3) == 0);
    CHECK(allocations_in_steps<seeds::MnistMlp, tpudsl::TpuStrategy<2>>(
              tpudsl::optimizers::Adam{.options = {.global_clipnorm = 1.0f}}, 16, 3) == 0);
    CHECK(allocations_in_steps<Graph>(tpudsl::optimizers::SGD{.options = {.clipnorm = 1.0f}}, 16, 3) == 0);
}

TEST_CASE("fit's allocations do not grow with its number of steps", "[alloc]")
{
    using M = tpudsl::Sequential<tpudsl::Input<tpudsl::Shape<6>>, tpudsl::Dense<8, tpudsl::Relu>,
                                 tpudsl::Dense<3, tpudsl::Softmax>>;
    xt::xtensor<float, 2> x(std::array<std::size_t, 2>{64, 6}, 0.5f);
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{64}, 1);
    auto count = [&](std::size_t steps, bool weighted) {
        tpudsl::Trainable<M> model;
        if (weighted)   // sample weights, a schedule, clipping and stateful metrics on
            model.compile(tpudsl::optimizers::Scheduled{tpudsl::optimizers::SGD{.options = {.clipvalue = 1.0f}},
                                                        tpudsl::optimizers::schedules::ExponentialDecay{
                                                            .initial_learning_rate = 0.1f, .decay_steps = 4,
                                                            .decay_rate = 0.9f}},
                          tpudsl::losses::SparseCategoricalCrossentropy{}, tpudsl::metrics::SparseCategoricalAccuracy{});
        else
            model.compile(tpudsl::optimizers::Adam{}, tpudsl::losses::SparseCategoricalCrossentropy{},
                          tpudsl::metrics::SparseCategoricalAccuracy{});
        std::ostringstream out;
        tpudsl::FitOptions options{.batch_size = 4, .epochs = 1, .steps_per_epoch = steps, .out = &out};
        if (weighted)
            options.sample_weight.assign(64, 0.5f);
        const std::size_t before = allocations.load();
        model.fit(x, y, options);
        return allocations.load() - before;
    };
    CHECK(count(40, false) == count(10, false));
    CHECK(count(40, true) == count(10, true));
}
