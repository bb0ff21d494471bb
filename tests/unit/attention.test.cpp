// MultiHeadAttention, Attention and AdditiveAttention in graphs: gradients against finite differences (self-attention read as query and
// value, one input, three inputs of their own, the causal mask, dropout in training), the causal mask's
// promise (no position sees a later one), dropout's (inference is the attention without it; the same
// bits on one core and two replicas), and Keras' summary and weights. Against Keras 3 itself:
// tests/keras (keras.attention_*).
#include <tpudsl/functional.hpp>
#include <tpudsl/testing/gradient_check.hpp>
#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <xtensor/xtensor.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

using namespace tpudsl;

namespace {

// [self_attention]
// att = MultiHeadAttention(num_heads=2, key_dim=3, value_dim=4)(x, x); Add()([att, x])
using SelfAttention = Functional<Node<"x", Input<Shape<5, 6>>>,
                                 Node<"att", MultiHeadAttention<2, 3, 4>, "x", "x">,
                                 Node<"sum", Add, "att", "x">,
                                 Node<"flat", Flatten>,
                                 Node<"classes", Dense<3, Softmax>>>;
// [self_attention]

// One source: the query is the value and the key; positions see only those before them.
using Causal = Functional<Node<"x", Input<Shape<5, 6>>>,
                          Node<"att", MultiHeadAttention<2, 3, 3, attention_options{.use_causal_mask = true}>, "x">,
                          Node<"flat", Flatten>,
                          Node<"classes", Dense<3, Softmax>>>;

// Query, value and key from layers of their own, of three widths: the input's gradient sums three paths.
using ThreeSources = Functional<Node<"x", Input<Shape<4, 5>>>,
                                Node<"q", TimeDistributed<Dense<6, Tanh>>, "x">,
                                Node<"k", TimeDistributed<Dense<2>>, "x">,
                                Node<"att", MultiHeadAttention<3, 2, 4>, "q", "x", "k">,
                                Node<"flat", Flatten>,
                                Node<"classes", Dense<3, Softmax>>>;

using Dropped = Functional<Node<"x", Input<Shape<6, 4>>>,
                           Node<"att", MultiHeadAttention<2, 4, 4, attention_options{.dropout = 0.3f}>, "x", "x">,
                           Node<"flat", Flatten>,
                           Node<"classes", Dense<3, Softmax>>>;
using Undropped = Functional<Node<"x", Input<Shape<6, 4>>>,
                             Node<"att", MultiHeadAttention<2, 4, 4>, "x", "x">,
                             Node<"flat", Flatten>,
                             Node<"classes", Dense<3, Softmax>>>;

// A query of 35 positions (two blocks: 32 and 3) over a value of 11, causal, with dropout: every path of
// the blocked attention at once.
using LongQuery = Functional<Node<"x", Input<Shape<35, 3>>>,
                             Node<"pool", AveragePooling1D<3>, "x">,
                             Node<"att", MultiHeadAttention<2, 3, 2, attention_options{.dropout = 0.2f, .use_causal_mask = true}>,
                                  "x", "pool">,
                             Node<"flat", Flatten>,
                             Node<"classes", Dense<3, Softmax>>>;

// The attention itself as the output, to read each position.
using CausalOnly = Functional<Node<"x", Input<Shape<5, 6>>>,
                              Node<"att", MultiHeadAttention<2, 3, 3, attention_options{.use_causal_mask = true}>, "x">>;

template <class M>
void
check()
{
    const testing::gradient_report report = testing::check_gradients<M, 3>({});
    INFO(report.describe());
    CHECK(report.checked > 0);
    CHECK(report.ok());
}

xt::xtensor<float, 3>
sequences(std::size_t n, std::size_t t, std::size_t f, std::uint32_t seed)
{
    xt::xtensor<float, 3> x = xt::xtensor<float, 3>::from_shape({n, t, f});
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& v : x)
        v = u(gen);
    return x;
}

} // namespace

// Keras: 2 heads of key_dim 3 and value_dim 4 on (5, 6): query and key kernels (6, 2, 3) and biases
// (2, 3), value kernel (6, 2, 4) and bias (2, 4), output kernel (2, 4, 6) and bias (6).
static_assert(SelfAttention::layer<0>::param_count == 2 * (6 * 6 + 6) + (6 * 8 + 8) + (8 * 6 + 6));
static_assert(std::is_same_v<SelfAttention::layer<0>::weight<0>::shape, Shape<6, 2, 3>>);
static_assert(std::is_same_v<SelfAttention::layer<0>::weight<5>::shape, Shape<2, 4>>);
static_assert(std::is_same_v<SelfAttention::layer<0>::weight<6>::shape, Shape<2, 4, 6>>);
static_assert(SelfAttention::layer<0>::weight<6>::name == "attention_output/kernel");
static_assert(std::is_same_v<SelfAttention::layer<0>::output_shape, Shape<5, 6>>);
static_assert(std::is_same_v<ThreeSources::layer<2>::weight<2>::shape, Shape<2, 3, 2>>);   // key kernel (2, heads, key_dim)
static_assert(std::is_same_v<ThreeSources::layer<2>::weight<4>::shape, Shape<5, 3, 4>>);   // value kernel
static_assert(std::is_same_v<ThreeSources::layer<2>::output_shape, Shape<4, 6>>);           // the query's shape

// A token-and-position embedding: the Embedding's output plus PositionEmbedding's rows.
using TokenAndPosition = Functional<Node<"tokens", Input<Shape<5>, std::int32_t>>,
                                    Node<"token_emb", Embedding<20, 4>>,
                                    Node<"pos_emb", PositionEmbedding<8>>,
                                    Node<"embedded", Add, "token_emb", "pos_emb">,
                                    Node<"att", MultiHeadAttention<2, 2>, "embedded", "embedded">,
                                    Node<"flat", Flatten>,
                                    Node<"classes", Dense<3, Softmax>>>;
// PositionEmbedding on a float sequence: its input's gradient is the Add's alone.
using Positions = Functional<Node<"x", Input<Shape<4, 3>>>, Node<"pos", PositionEmbedding<6>>,
                             Node<"sum", Add, "x", "pos">, Node<"flat", Flatten>, Node<"out", Dense<3, Softmax>>>;

TEST_CASE("PositionEmbedding: gradients of its rows (those past the sequence: none) and of the input",
          "[attention][gradcheck]")
{
    check<TokenAndPosition>();
    check<Positions>();
}
static_assert(std::is_same_v<TokenAndPosition::layer<1>::weight<0>::shape, Shape<8, 4>>);   // (SequenceLength, features)

TEST_CASE("MultiHeadAttention: gradients of every weight and of the input, through every path", "[attention][gradcheck]")
{
    check<SelfAttention>();
    check<Causal>();
    check<ThreeSources>();
    check<Dropped>();   // training: a fixed mask on the probabilities
    check<LongQuery>();
}

// Attention and AdditiveAttention of a projected query over the sequence (the key the value, or its
// own projection), scaled or not, causal, with dropout.
template <class Att>
using QueryOverValue = Functional<Node<"x", Input<Shape<5, 4>>>, Node<"q", TimeDistributed<Dense<4, Tanh>>, "x">,
                                  Node<"att", Att, "q", "x">, Node<"flat", Flatten>, Node<"out", Dense<3, Softmax>>>;
template <class Att>
using WithKey = Functional<Node<"x", Input<Shape<5, 4>>>, Node<"q", TimeDistributed<Dense<3, Tanh>>, "x">,
                           Node<"k", TimeDistributed<Dense<3>>, "x">, Node<"att", Att, "q", "x", "k">,
                           Node<"flat", Flatten>, Node<"out", Dense<3, Softmax>>>;

TEST_CASE("Attention and AdditiveAttention: gradients of the scale and of every input path", "[attention][gradcheck]")
{
    check<QueryOverValue<Attention<>>>();
    check<QueryOverValue<Attention<true, attention_options{.use_causal_mask = true}>>>();
    check<QueryOverValue<AdditiveAttention<>>>();
    check<QueryOverValue<AdditiveAttention<false>>>();
    check<WithKey<Attention<true, attention_options{.dropout = 0.3f}>>>();
    check<WithKey<AdditiveAttention<true, attention_options{.use_causal_mask = true}>>>();
}
TEST_CASE("GlorotUniform on a vector (AdditiveAttention's scale): both fans its length, as Keras' _compute_fans",
          "[attention][initializers]")
{
    CHECK(initializers::GlorotUniform::limit<Shape<3>>() == Approx(std::sqrt(6.0 / 6.0)));
    CHECK(initializers::GlorotUniform::limit<Shape<24>>() == Approx(std::sqrt(6.0 / 48.0)));
    CHECK(initializers::GlorotUniform::limit<Shape<4, 6>>() == Approx(std::sqrt(6.0 / 10.0)));
    std::vector<float> scale(24);
    initializers::GlorotUniform::fill<Shape<24>>(scale.data(), initializers::draw{7, 1, 1});
    for (const float v : scale)
        CHECK(std::abs(v) <= 0.354f);
}

// Keras' output: (query length, value features); AdditiveAttention's scale one weight per feature.
static_assert(std::is_same_v<WithKey<Attention<>>::layer<2>::output_shape, Shape<5, 4>>);
static_assert(WithKey<AdditiveAttention<>>::layer<2>::param_count == 3);
static_assert(QueryOverValue<Attention<>>::layer<1>::param_count == 0 && QueryOverValue<Attention<true>>::layer<1>::param_count == 1);

TEST_CASE("MultiHeadAttention: Keras' summary row and parameter count", "[attention][summary]")
{
    Trainable<SelfAttention> model(1);
    std::ostringstream out;
    model.summary(out);
    const std::string text = out.str();
    CHECK(text.find("att (MultiHeadAttention)        (None, 5, 6)         194         x[0][0]") != std::string::npos);
    CHECK(text.find("Total params: 287") != std::string::npos);
}

TEST_CASE("MultiHeadAttention: with the causal mask, no position reads a later one", "[attention]")
{
    Trainable<CausalOnly> model(4);
    model.compile(optimizers::SGD{}, losses::MeanSquaredError{});
    auto x = sequences(3, 5, 6, 2);
    const auto before = model.predict(x, {.batch_size = 3});
    for (std::size_t s = 0; s < 3; ++s)
        for (std::size_t f = 0; f < 6; ++f)
            x(s, 3, f) += 0.5f;   // position 3 changes: positions 0-2 must not
    const auto after = model.predict(x, {.batch_size = 3});
    for (std::size_t s = 0; s < 3; ++s)
        for (std::size_t t = 0; t < 5; ++t) {
            bool same = true;
            for (std::size_t f = 0; f < 6; ++f)
                same = same && before(s, t, f) == after(s, t, f);
            INFO("sample " << s << ", position " << t);
            CHECK(same == (t < 3));
        }
}

TEST_CASE("MultiHeadAttention: dropout acts in training only, the same bits on one core and two replicas",
          "[attention][strategy]")
{
    const auto x = sequences(32, 6, 4, 5);
    xt::xtensor<std::int32_t, 1> y = xt::xtensor<std::int32_t, 1>::from_shape({32});
    for (std::size_t i = 0; i < 32; ++i)
        y(i) = static_cast<std::int32_t>(i % 3);
    // inference: the attention without dropout, on the same weights
    Trainable<Dropped> dropped(7);
    Trainable<Undropped> plain(8);
    plain.set_weights(dropped.get_weights());
    const auto a = dropped.predict(x, {.batch_size = 32}), b = plain.predict(x, {.batch_size = 32});
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    // training: the masks change the step, and are the same whatever the strategy
    auto train = [&](auto strategy) {
        auto m = strategy.template scope<Dropped>(7);
        m.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{});
        m.fit(x, y, {.batch_size = 16, .epochs = 2, .verbose = 0});
        return m.get_weights();
    };
    const auto one = train(OneDeviceStrategy{}), two = train(TpuStrategy<2>{});
    CHECK(one == two);
    Trainable<Undropped> undropped(7);
    undropped.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{});
    undropped.fit(x, y, {.batch_size = 16, .epochs = 2, .verbose = 0});
    CHECK(undropped.get_weights() != one);
}
