// Functional models: the graph's constants, Keras' summary of a functional model, and training one
// (fit, evaluate, predict, weights files) on a learnable toy problem. Gradients across merges are
// checked in gradcheck.test.cpp, strategies in distribute/strategy.test.cpp.
#include "scratch_dir.hpp"
#include "toy_data.hpp"

#include <text_and_metadata/model.hpp>

#include <tpudsl/functional.hpp>
#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <xtensor/xadapt.hpp>

using namespace tpudsl;

namespace {

using tpudsl_tests::make_toy;

// [residual_mlp]
// x = Dense(16, "relu")(features); x = Dense(4)(x); x = Add()([x, features]); Dense(3, "softmax")(x)
using ToyResidual = Functional<Node<"features", Input<Shape<4>>>,
                               Node<"hidden", Dense<16, Relu>>,
                               Node<"mix", Dense<4>>,
                               Node<"skip", Add, "mix", "features">,
                               Node<"classes", Dense<3, Softmax>>>;
// [residual_mlp]

// The shortcut declared before the branch it joins: Keras lists the layers by depth, not as written.
using Declared = Functional<Node<"x", Input<Shape<6>>>, Node<"shortcut", Dense<4>, "x">, Node<"a", Dense<4, Relu>, "x">,
                            Node<"b", Dense<4>>, Node<"sum", Add, "b", "shortcut">>;

// [shared_layer]
// tied = Dense(8, "relu"); h = tied(x); h2 = tied(h); Add()([h, h2]) ...: one layer called twice
using Tied = Functional<Node<"x", Input<Shape<8>>>,
                        Node<"tied", Dense<8, Relu>>,
                        Node<"tied_again", Shared<"tied">>,
                        Node<"sum", Add, "tied", "tied_again">,
                        Node<"classes", Dense<3, Softmax>>>;
// [shared_layer]

// [named_graph]
// The same graph as a struct of its own: the compiler's symbols then name `NamedResidual`, not the
// whole graph (a large graph compiles faster so).
struct NamedResidual : ToyResidual {};
// [named_graph]

} // namespace

TEST_CASE("a shared layer (Keras' layer reuse) has one set of weights, counted once", "[graph][shared]")
{
    STATIC_REQUIRE(Tied::layer_count == 4);
    STATIC_REQUIRE(Tied::param_count == 8 * 8 + 8 + 8 * 3 + 3);   // Keras: 99
    STATIC_REQUIRE(Tied::layer<1>::param_count == 0);
    STATIC_REQUIRE(Tied::layer_weights_of == std::array<std::size_t, 4>{0, 0, 2, 3});
    STATIC_REQUIRE(ops::graph<Tied>::shared<0> && ops::graph<Tied>::shared<1> && !ops::graph<Tied>::shared<2>);
    // the second use's gradients wait in a block of the workspace before they add up
    STATIC_REQUIRE(ops::graph<Tied>::workspace_floats(2) ==
                   2 * ops::graph<Tied>::plan.per_sample + aligned_floats(8 * 8) + aligned_floats(8));

    std::ostringstream out;
    tpudsl::summary<Tied>(out);
    CHECK(out.str() ==
          "Model: \"model\"\n"
          "__________________________________________________________________________________________________\n"
          "Layer (type)                    Output Shape         Param #     Connected to                     \n"
          "==================================================================================================\n"
          "x (InputLayer)                  [(None, 8)]          0                                            \n"
          "__________________________________________________________________________________________________\n"
          "tied (Dense)                    (None, 8)            72          x[0][0]                          \n"
          "                                                                 tied[0][0]                       \n"
          "__________________________________________________________________________________________________\n"
          "sum (Add)                       (None, 8)            0           tied[0][0]                       \n"
          "                                                                 tied[1][0]                       \n"
          "__________________________________________________________________________________________________\n"
          "classes (Dense)                 (None, 3)            27          sum[0][0]                        \n"
          "==================================================================================================\n"
          "Total params: 99\n"
          "Trainable params: 99\n"
          "Non-trainable params: 0\n"
          "__________________________________________________________________________________________________\n");

    // called on inputs of different shapes (a convolution on two lengths), its output shape is "multiple"
    using TwoLengths = Functional<Node<"x", Input<Shape<6, 2>>>, Node<"conv", Conv1D<2, 3, Tanh, Same>>,
                                  Node<"pool", AveragePooling1D<2>>, Node<"again", Shared<"conv">>,
                                  Node<"flat", Flatten>, Node<"out", Dense<2>>>;
    std::ostringstream two;
    tpudsl::summary<TwoLengths>(two);
    CHECK(two.str().find("conv (Conv1D)                   multiple             14          x[0][0]") !=
          std::string::npos);
    CHECK(two.str().find("pool[0][0]") != std::string::npos);
    CHECK(two.str().find("flat (Flatten)                  (None, 6)            0           conv[1][0]") !=
          std::string::npos);
}

TEST_CASE("a model with a shared layer trains, and its weights file holds the layer once", "[graph][shared][fit]")
{
    const auto train = tpudsl_tests::make_toy(600, 31);
    using Toy = Functional<Node<"features", Input<Shape<4>>>, Node<"tied", Dense<4, Tanh>>,
                           Node<"tied_again", Shared<"tied">>, Node<"sum", Add, "tied", "tied_again", "features">,
                           Node<"classes", Dense<3, Softmax>>>;
    Trainable<Toy> model(5);
    model.compile(optimizers::Adam{.learning_rate = 0.01f}, losses::SparseCategoricalCrossentropy{},
                  metrics::SparseCategoricalAccuracy{});
    const std::vector<float> before(model.parameters(), model.parameters() + Toy::param_buffer_size);
    const History history = model.fit(train.x, train.y, {.batch_size = 32, .epochs = 8, .verbose = 0});
    CHECK(history["loss"].back() < history["loss"].front());
    CHECK(history["sparse_categorical_accuracy"].back() > 0.9);
    // the shared kernel moved
    CHECK(std::memcmp(before.data() + Toy::layer<0>::weight<0>::offset,
                      model.parameters() + Toy::layer<0>::weight<0>::offset, 16 * sizeof(float)) != 0);
    const tpudsl_tests::scratch_dir dir("functional_shared");
    model.save_weights(dir / "tied.weights.bin");
    Trainable<Toy> loaded(77);
    loaded.load_weights(dir / "tied.weights.bin");
    CHECK(std::memcmp(loaded.parameters(), model.parameters(), Toy::param_buffer_size * sizeof(float)) == 0);
}

TEST_CASE("a Functional's shapes, counts, names and edges are constants of its type", "[graph]")
{
    using M = ToyResidual;
    STATIC_REQUIRE(M::valid);
    STATIC_REQUIRE(M::node_count == 5);
    STATIC_REQUIRE(M::layer_count == 4);
    STATIC_REQUIRE(M::input_count == 1);
    STATIC_REQUIRE(M::output_count == 1);
    STATIC_REQUIRE(M::param_count == 4 * 16 + 16 + 16 * 4 + 4 + 4 * 3 + 3);
    STATIC_REQUIRE(M::trainable_param_count == M::param_count);
    STATIC_REQUIRE(std::is_same_v<M::output_shape, Shape<3>>);
    STATIC_REQUIRE(std::is_same_v<M::input_shape, Shape<4>>);
    STATIC_REQUIRE(std::is_same_v<M::layer<2>::spec, Add>);
    STATIC_REQUIRE(M::layer<2>::input_count == 2);
    STATIC_REQUIRE(std::is_same_v<M::layer<2>::output_shape, Shape<4>>);
    // the Add reads layer 1 ("mix") and the input; the last layer's weights follow the others'
    STATIC_REQUIRE(M::edges[M::first_edge[2]].layer == 1);
    STATIC_REQUIRE(M::edges[M::first_edge[2] + 1].input == 0);
    STATIC_REQUIRE(M::layer<3>::param_offset == M::layer<1>::param_end);
    CHECK(M::layer_name<2>() == "skip");
    // a Concatenate's output joins its inputs on the last axis
    using Cat = Functional<Node<"in", Input<Shape<5, 2>>>, Node<"a", Conv1D<3, 1>, "in">, Node<"b", Conv1D<4, 1>, "in">,
                           Node<"joined", Concatenate<>, "a", "b", "in">, Node<"rows", Concatenate<1>, "joined", "joined">>;
    STATIC_REQUIRE(std::is_same_v<Cat::layer<2>::output_shape, Shape<5, 9>>);
    STATIC_REQUIRE(std::is_same_v<Cat::output_shape, Shape<10, 9>>);
    // the reshaping layers' shapes
    using Shapes = Functional<Node<"x", Input<Shape<3, 4, 5>>>, Node<"p", Permute<3, 1, 2>>, Node<"r", Reshape<20, 3>>,
                              Node<"f", Flatten>, Node<"v", RepeatVector<2>>, Node<"i", Identity>>;
    STATIC_REQUIRE(std::is_same_v<Shapes::layer<0>::output_shape, Shape<5, 3, 4>>);
    STATIC_REQUIRE(std::is_same_v<Shapes::layer<1>::output_shape, Shape<20, 3>>);
    STATIC_REQUIRE(std::is_same_v<Shapes::output_shape, Shape<2, 60>>);
    STATIC_REQUIRE(!valid_model<Input<Shape<3, 4>>, Reshape<5, 2>>);
    STATIC_REQUIRE(!valid_model<Input<Shape<3, 4>>, Permute<1, 1>>);
    STATIC_REQUIRE(!valid_model<Input<Shape<3, 4>>, RepeatVector<2>>);
    // fan-out: each tensor's gradient block, and a temporary for every later consumer's share
    using G = ops::graph<M>;
    STATIC_REQUIRE(G::plan.direct[M::first_edge[0]] == false);   // "hidden" reads the input after "skip"
    STATIC_REQUIRE(G::plan.direct[M::first_edge[2] + 1] == true);
    STATIC_REQUIRE(G::plan.temporary[M::first_edge[0]] > 0);
    // gradients of different times share memory: the planned workspace is below one block each
    STATIC_REQUIRE(G::plan.per_sample < G::plan.naive_per_sample);
}

TEST_CASE("place_blocks: blocks alive at the same time never overlap, the others may share", "[graph][memory]")
{
    std::mt19937 gen(5);
    for (int round = 0; round < 200; ++round) {
        std::array<ops::block_request, 24> blocks{};
        std::size_t naive = 0;
        for (auto& b : blocks) {
            b.first = gen() % 20;
            b.last = b.first + gen() % 6;
            b.size = (gen() % 4) * 16;
            naive += b.size;
        }
        const auto placed = ops::place_blocks(blocks);
        std::size_t live_peak = 0;
        for (std::size_t t = 0; t < 26; ++t) {
            std::size_t live = 0;
            for (const auto& b : blocks)
                live += b.first <= t && t <= b.last ? b.size : 0;
            live_peak = std::max(live_peak, live);
        }
        CHECK(placed.total <= naive);
        CHECK(placed.total >= live_peak);
        for (std::size_t i = 0; i < blocks.size(); ++i) {
            CHECK(placed.offset[i] + blocks[i].size <= placed.total);
            for (std::size_t j = i + 1; j < blocks.size(); ++j) {
                const bool together = blocks[i].first <= blocks[j].last && blocks[j].first <= blocks[i].last;
                const bool overlap = placed.offset[i] < placed.offset[j] + blocks[j].size &&
                                     placed.offset[j] < placed.offset[i] + blocks[i].size;
                if (together && blocks[i].size > 0 && blocks[j].size > 0)
                    CHECK_FALSE(overlap);
            }
        }
    }
    // two blocks of disjoint lifetimes take one place
    constexpr auto one = ops::place_blocks(std::array<ops::block_request, 2>{{{16, 0, 1}, {16, 2, 3}}});
    STATIC_REQUIRE(one.total == 16);
}

TEST_CASE("summary of a Functional model matches tf.keras' table, Connected to column and InputLayer row",
          "[graph][summary]")
{
    std::ostringstream out;
    tpudsl::summary<ToyResidual>(out);
    CHECK(out.str() ==
          "Model: \"model\"\n"
          "__________________________________________________________________________________________________\n"
          "Layer (type)                    Output Shape         Param #     Connected to                     \n"
          "==================================================================================================\n"
          "features (InputLayer)           [(None, 4)]          0                                            \n"
          "__________________________________________________________________________________________________\n"
          "hidden (Dense)                  (None, 16)           80          features[0][0]                   \n"
          "__________________________________________________________________________________________________\n"
          "mix (Dense)                     (None, 4)            68          hidden[0][0]                     \n"
          "__________________________________________________________________________________________________\n"
          "skip (Add)                      (None, 4)            0           mix[0][0]                        \n"
          "                                                                 features[0][0]                   \n"
          "__________________________________________________________________________________________________\n"
          "classes (Dense)                 (None, 3)            15          skip[0][0]                       \n"
          "==================================================================================================\n"
          "Total params: 163\n"
          "Trainable params: 163\n"
          "Non-trainable params: 0\n"
          "__________________________________________________________________________________________________\n");

    // Keras' order: by depth from the input, ties in the order a walk from the output meets them
    std::ostringstream declared;
    tpudsl::summary<Declared>(declared, "residual");
    const std::string text = declared.str();
    CHECK(text.rfind("Model: \"residual\"\n", 0) == 0);
    const auto at = [&](const char* row) { return text.find(row); };
    CHECK(at("x (InputLayer)") < at("a (Dense)"));
    CHECK(at("a (Dense)") < at("b (Dense)"));
    CHECK(at("b (Dense)") < at("shortcut (Dense)"));
    CHECK(at("shortcut (Dense)") < at("sum (Add)"));

    // a chain prints as Keras prints a sequential-like model: 65 columns, its InputLayer first
    using Chain = Functional<Node<"pixels", Input<Shape<8>>>, Node<"dense", Dense<2>>>;
    std::ostringstream chain;
    tpudsl::summary<Chain>(chain);
    CHECK(chain.str() == "Model: \"model\"\n"
                         "_________________________________________________________________\n"
                         "Layer (type)                 Output Shape              Param #   \n"
                         "=================================================================\n"
                         "pixels (InputLayer)          [(None, 8)]               0         \n"
                         "_________________________________________________________________\n"
                         "dense (Dense)                (None, 2)                 18        \n"
                         "=================================================================\n"
                         "Total params: 18\n"
                         "Trainable params: 18\n"
                         "Non-trainable params: 0\n"
                         "_________________________________________________________________\n");
}

TEST_CASE("a Functional model trains with fit, and evaluate, predict and its weights file agree", "[graph][fit]")
{
    const auto train = make_toy(600, 21);
    const auto test = make_toy(200, 22);
    Trainable<ToyResidual> model(3);
    model.compile(optimizers::Adam{.learning_rate = 0.01f}, losses::SparseCategoricalCrossentropy{},
                  metrics::SparseCategoricalAccuracy{});
    const History history = model.fit(train.x, train.y, {.batch_size = 32, .epochs = 8, .verbose = 0});
    CHECK(history["loss"].back() < history["loss"].front());
    const auto scores = model.evaluate(test.x, test.y, {.verbose = 0});
    CHECK(scores[1] > 0.9);   // chance is 1/3

    const auto p = model.predict(test.x, {.batch_size = 13});
    REQUIRE(p.size() == 200 * 3);
    std::size_t hits = 0;
    for (std::size_t s = 0; s < 200; ++s) {
        const float* row = p.data() + s * 3;
        hits += static_cast<std::int32_t>(std::max_element(row, row + 3) - row) == test.y(s);
    }
    CHECK(scores[1] == Approx(hits / 200.0));

    // the same seed gives the same bits; the weights file round-trips
    Trainable<ToyResidual> again(3);
    again.compile(optimizers::Adam{.learning_rate = 0.01f}, losses::SparseCategoricalCrossentropy{},
                  metrics::SparseCategoricalAccuracy{});
    again.fit(train.x, train.y, {.batch_size = 32, .epochs = 8, .verbose = 0});
    CHECK(std::memcmp(again.parameters(), model.parameters(), ToyResidual::param_buffer_size * sizeof(float)) == 0);
    const tpudsl_tests::scratch_dir dir("functional");
    model.save_weights(dir / "residual.weights.bin");
    Trainable<ToyResidual> loaded(99);
    loaded.load_weights(dir / "residual.weights.bin");
    CHECK(std::memcmp(loaded.parameters(), model.parameters(), ToyResidual::param_buffer_size * sizeof(float)) == 0);
    // a file of another graph is refused
    Trainable<Declared> other(1);
    CHECK_THROWS_WITH(other.load_weights(dir / "residual.weights.bin"), Catch::Contains("another model layout"));
}

TEST_CASE("a graph declared as a struct of its own is the same model: constants, summary, bits and files",
          "[graph][fit]")
{
    STATIC_REQUIRE(NamedResidual::param_count == ToyResidual::param_count);
    STATIC_REQUIRE(NamedResidual::param_buffer_size == ToyResidual::param_buffer_size);
    STATIC_REQUIRE(NamedResidual::layer<2>::param_offset == ToyResidual::layer<2>::param_offset);
    const auto train = make_toy(300, 23);
    Trainable<ToyResidual> plain(5);
    Trainable<NamedResidual> named(5);
    std::ostringstream plain_summary, named_summary;
    plain.summary(plain_summary);
    named.summary(named_summary);
    CHECK(named_summary.str() == plain_summary.str());
    plain.compile(optimizers::Adam{.learning_rate = 0.01f}, losses::SparseCategoricalCrossentropy{},
                  metrics::SparseCategoricalAccuracy{});
    named.compile(optimizers::Adam{.learning_rate = 0.01f}, losses::SparseCategoricalCrossentropy{},
                  metrics::SparseCategoricalAccuracy{});
    plain.fit(train.x, train.y, {.batch_size = 32, .epochs = 3, .verbose = 0});
    named.fit(train.x, train.y, {.batch_size = 32, .epochs = 3, .verbose = 0});
    CHECK(std::memcmp(named.parameters(), plain.parameters(), ToyResidual::param_buffer_size * sizeof(float)) == 0);
    const tpudsl_tests::scratch_dir dir("functional_named");
    named.save_weights(dir / "named.weights.bin");
    Trainable<ToyResidual> loaded(99);
    loaded.load_weights(dir / "named.weights.bin");
    CHECK(std::memcmp(loaded.parameters(), plain.parameters(), ToyResidual::param_buffer_size * sizeof(float)) == 0);
}

// ---- several inputs and outputs (examples/text_and_metadata) ----

namespace {
using seeds::TextAndMetadata;

auto
compiled_two_heads(std::uint64_t seed, double score_weight = 0.5)
{
    auto model = std::make_unique<Trainable<TextAndMetadata>>(seed);
    model->compile(optimizers::Adam{},
                   PerOutput{losses::SparseCategoricalCrossentropy{}, losses::MeanSquaredError{}}.loss_weights({1.0, score_weight}),
                   OnOutput<0, metrics::SparseCategoricalAccuracy>{});
    return model;
}
} // namespace

TEST_CASE("a graph of two inputs and two outputs: packed rows, a part each, constants of its type", "[graph][heads]")
{
    using M = TextAndMetadata;
    STATIC_REQUIRE(M::input_count == 2 && M::output_count == 2);
    STATIC_REQUIRE(M::param_count == 1092);   // Keras' count
    STATIC_REQUIRE(M::packed_inputs && M::packed_outputs);
    STATIC_REQUIRE(std::is_same_v<M::input_shape, Shape<17>> && std::is_same_v<M::input_type, float>);
    STATIC_REQUIRE(std::is_same_v<M::output_shape, Shape<4>>);
    STATIC_REQUIRE(M::input_offsets == std::array<std::size_t, 3>{0, 12, 17});
    STATIC_REQUIRE(M::input_bounds == std::array<std::size_t, 2>{100, 0});
    STATIC_REQUIRE(M::input_integral == std::array<bool, 2>{true, false});
    STATIC_REQUIRE(M::output_offsets == std::array<std::size_t, 3>{0, 3, 4});
    STATIC_REQUIRE(ops::graph<M>::heads == 2);
    STATIC_REQUIRE(ops::graph<M>::head_softmax == std::array<bool, 2>{true, false});
    // each input unpacked into a block of its own, alive through the step, inside the plan
    STATIC_REQUIRE(ops::graph<M>::plan.per_sample < ops::graph<M>::plan.naive_per_sample + 12 + 5);
}

TEST_CASE("a head's loss with ignore_class scores only that head's other labels", "[graph][heads][losses]")
{
    auto data = seeds::make_text_and_metadata(120, 4);
    for (std::size_t s = 0; s < 120; s += 4)
        data.topics(s) = -1;   // no topic known for these: their score still counts
    Trainable<TextAndMetadata> model(3);
    model.compile(optimizers::Adam{}, PerOutput{losses::SparseCategoricalCrossentropy{.ignore_class = -1}, losses::MeanSquaredError{}});
    const auto x = std::tie(data.words, data.numbers);
    const auto [topics, scores] = model.predict(x, {.batch_size = 120});
    double topic_loss = 0.0, score_loss = 0.0;
    for (std::size_t s = 0; s < 120; ++s) {
        if (data.topics(s) >= 0)
            topic_loss -= std::log(static_cast<double>(topics.data()[3 * s + static_cast<std::size_t>(data.topics(s))]));
        const double e = scores[s] - data.scores(s, 0);
        score_loss += e * e;
    }
    const Scores evaluated = model.evaluate(x, std::tie(data.topics, data.scores), {.batch_size = 120, .verbose = 0});
    CHECK(evaluated["topic_loss"] == Approx(topic_loss / 90).epsilon(1e-5));
    CHECK(evaluated["score_loss"] == Approx(score_loss / 120).epsilon(1e-5));
    const History h = model.fit(x, std::tie(data.topics, data.scores), {.batch_size = 40, .epochs = 4, .verbose = 0});
    CHECK(h["topic_loss"].back() < h["topic_loss"].front());
    data.topics(8) = -2;
    CHECK_THROWS_WITH(model.fit(x, std::tie(data.topics, data.scores), {.verbose = 0}),
                      Catch::Contains("label -2 at sample 8 of y[0] (output \"topic\") is outside [0, 3) (the output's "
                                      "classes) and is not the loss's ignore_class, -1"));
}

TEST_CASE("a graph of two inputs and two outputs trains from tuples of arrays, with a loss per output and Keras' log names",
          "[graph][heads][fit]")
{
    const auto train = seeds::make_text_and_metadata(2000, 1);
    const auto test = seeds::make_text_and_metadata(400, 2);
    auto model = compiled_two_heads(3);
    const History history = model->fit(std::tie(train.words, train.numbers), std::tie(train.topics, train.scores),
                                       {.batch_size = 32, .epochs = 6, .verbose = 0});
    for (const char* name : {"loss", "topic_sparse_categorical_accuracy", "topic_loss", "score_loss"})
        CHECK(history.contains(name));
    // the loss fit minimises is the weighted sum; each output's loss is logged before its weight
    CHECK(history["loss"].back() ==
          Approx(history["topic_loss"].back() + 0.5 * history["score_loss"].back()).epsilon(1e-9));
    CHECK(history["topic_loss"].back() < history["topic_loss"].front());
    CHECK(history["score_loss"].back() < history["score_loss"].front());

    const Scores scores = model->evaluate(std::tie(test.words, test.numbers), std::tie(test.topics, test.scores),
                                          {.batch_size = 64, .verbose = 0});
    // Keras 3's order: every name sorted
    REQUIRE(scores.names() == std::vector<std::string>{"loss", "score_loss", "topic_loss", "topic_sparse_categorical_accuracy"});
    CHECK(scores["topic_sparse_categorical_accuracy"] > 0.6);   // chance: 1/3
    CHECK(scores["score_loss"] < 0.3);                           // the scores' variance: 1.19

    // predict: one array per output, and the same numbers evaluate reported
    const auto [topics, predicted] = model->predict(std::tie(test.words, test.numbers), {.batch_size = 50});
    REQUIRE(topics.size() == 400 * 3);
    REQUIRE(predicted.size() == 400);
    double squared = 0.0, hits = 0.0;
    for (std::size_t s = 0; s < 400; ++s) {
        const double e = predicted[s] - test.scores(s, 0);
        squared += e * e;
        const float* row = topics.data() + 3 * s;
        hits += std::max_element(row, row + 3) - row == test.topics(s);
        CHECK(row[0] + row[1] + row[2] == Approx(1.0f).epsilon(1e-5));
    }
    CHECK(squared / 400 == Approx(scores["score_loss"]).epsilon(1e-5));
    CHECK(hits / 400 == Approx(scores["topic_sparse_categorical_accuracy"]));

    // validation_data of packed arrays: the val_ names of every part
    const PackedArrays validation = model->pack(std::tie(test.words, test.numbers), std::tie(test.topics, test.scores));
    const History more = model->fit(std::tie(train.words, train.numbers), std::tie(train.topics, train.scores),
                                    {.batch_size = 32, .epochs = 1, .verbose = 0, .validation_data = validation.ref()});
    for (const char* name : {"val_loss", "val_topic_sparse_categorical_accuracy", "val_topic_loss", "val_score_loss"})
        CHECK(more.contains(name));

    // the same seed gives the same bits
    auto again = compiled_two_heads(3);
    again->fit(std::tie(train.words, train.numbers), std::tie(train.topics, train.scores),
               {.batch_size = 32, .epochs = 6, .verbose = 0});
    auto first = compiled_two_heads(3);
    first->fit(std::tie(train.words, train.numbers), std::tie(train.topics, train.scores),
               {.batch_size = 32, .epochs = 6, .verbose = 0});
    CHECK(std::memcmp(again->parameters(), first->parameters(), TextAndMetadata::param_buffer_size * sizeof(float)) == 0);
    // a loss weight of 0: the score head's kernel learns nothing (its gradient is weighted out)
    auto unweighted = compiled_two_heads(3, 0.0);
    const std::vector<float> before = unweighted->get_weights();
    unweighted->fit(std::tie(train.words, train.numbers), std::tie(train.topics, train.scores),
                    {.batch_size = 32, .epochs = 1, .verbose = 0});
    using Score = TextAndMetadata::layer<5>;
    static_assert(Score::param_count == 17);
    const std::vector<float> after = unweighted->get_weights();
    CHECK(std::equal(before.begin() + Score::param_offset, before.begin() + Score::param_offset + 17,
                     after.begin() + Score::param_offset));
    CHECK(before != after);
}

TEST_CASE("a graph of two inputs and two outputs refuses bad parts by name", "[graph][heads][errors]")
{
    auto d = seeds::make_text_and_metadata(40, 5);
    auto model = compiled_two_heads(1);
    const auto fit = [&](const auto& words, const auto& numbers, const auto& topics, const auto& scores) {
        model->fit(std::tie(words, numbers), std::tie(topics, scores), {.batch_size = 8, .verbose = 0});
    };
    auto words = d.words;
    words(7, 3) = 100;
    CHECK_THROWS_WITH(fit(words, d.numbers, d.topics, d.scores),
                      Catch::Contains("x[0] (Input \"words\")") && Catch::Contains("100") &&
                          Catch::Contains("the Embedding's vocabulary"));
    auto topics = d.topics;
    topics(2) = 3;
    CHECK_THROWS_WITH(fit(d.words, d.numbers, topics, d.scores),
                      Catch::Contains("y[0] (output \"topic\")") && Catch::Contains("the output's classes"));
    const xt::xtensor<float, 2> four = xt::zeros<float>({40, 4});
    CHECK_THROWS_WITH(fit(d.words, four, d.topics, d.scores),
                      Catch::Contains("x[1] (Input \"numbers\") has shape (40, 4), but the model expects (samples, 5)"));
    const xt::xtensor<float, 2> fewer = xt::zeros<float>({39, 1});
    CHECK_THROWS_WITH(fit(d.words, d.numbers, d.topics, fewer),
                      Catch::Contains("y[1] (output \"score\") holds 39 samples"));
    auto numbers = d.numbers;
    numbers(1, 1) = std::nanf("");
    CHECK_THROWS_WITH(fit(d.words, numbers, d.topics, d.scores), Catch::Contains("non-finite"));
    Trainable<TextAndMetadata> negative(1);
    CHECK_THROWS_WITH(negative.compile(optimizers::SGD{}, PerOutput{losses::SparseCategoricalCrossentropy{},
                                                                    losses::MeanSquaredError{}}.loss_weights({1.0, -1.0})),
                      Catch::Contains("loss_weights must be finite and not negative"));
    // A Dataset of packed rows trains as the tuples do, and its rows are checked part by part too.
    const PackedArrays packed = model->pack(std::tie(d.words, d.numbers), std::tie(d.topics, d.scores));
    xt::xtensor<float, 2> x = xt::adapt(packed.ref().x.as<float>(), 40 * 17, xt::no_ownership(),
                                        std::array<std::size_t, 2>{40, 17});
    const xt::xtensor<float, 2> y = xt::adapt(packed.ref().y.as<float>(), 40 * 4, xt::no_ownership(),
                                              std::array<std::size_t, 2>{40, 4});
    using Row = Example<Shape<17>, float, float, 4>;
    CHECK(model->fit(Dataset<Row>::from_tensor_slices(x, y).batch<8>(), {.verbose = 0})["loss"].size() == 1);
    x(5, 2) = 100.0f;   // a token id past the vocabulary, in the words' part of a row
    CHECK_THROWS_WITH(model->fit(Dataset<Row>::from_tensor_slices(x, y).batch<8>(), {.verbose = 0}),
                      Catch::Contains("token id 100 at sample 5, position 2 of x[0]"));
    x(5, 2) = 1.5f;
    CHECK_THROWS_WITH(model->fit(Dataset<Row>::from_tensor_slices(x, y).batch<8>(), {.verbose = 0}),
                      Catch::Contains("is not a whole number"));
}

TEST_CASE("a graph of two texts, an Embedding each, trains on one thread and two to the same bits", "[graph][heads][fit]")
{
    using TwoTexts = Functional<Node<"question", Input<Shape<6>, std::int32_t>>, Node<"answer", Input<Shape<6>, std::int32_t>>,
                                Node<"q_embed", Embedding<20, 4>, "question">, Node<"q_avg", GlobalAveragePooling1D>,
                                Node<"a_embed", Embedding<20, 4>, "answer">, Node<"a_avg", GlobalAveragePooling1D>,
                                Node<"joined", Concatenate<>, "q_avg", "a_avg">, Node<"hidden", Dense<16, Relu>>,
                                Node<"match", Dense<2, Softmax>>>;
    STATIC_REQUIRE(TwoTexts::input_bounds == std::array<std::size_t, 2>{20, 20});
    // An answer matches its question when it draws from the same half of the vocabulary.
    const std::size_t n = 600;
    xt::xtensor<std::int32_t, 2> question = xt::zeros<std::int32_t>({n, std::size_t{6}});
    xt::xtensor<std::int32_t, 2> answer = xt::zeros<std::int32_t>({n, std::size_t{6}});
    xt::xtensor<std::int32_t, 1> match = xt::zeros<std::int32_t>({n});
    std::mt19937 rng(9);
    for (std::size_t s = 0; s < n; ++s) {
        const int q = static_cast<int>(rng() % 2), a = static_cast<int>(rng() % 2);
        for (std::size_t j = 0; j < 6; ++j) {
            question(s, j) = 10 * q + static_cast<int>(rng() % 10);
            answer(s, j) = 10 * a + static_cast<int>(rng() % 10);
        }
        match(s) = q == a;
    }
    const auto train = [&]<class Strategy>(std::type_identity<Strategy>) {
        Trainable<TwoTexts, Strategy> model(2);
        model.compile(optimizers::Adam{.learning_rate = 0.02f}, losses::SparseCategoricalCrossentropy{},
                      metrics::SparseCategoricalAccuracy{});
        const History h = model.fit(std::tie(question, answer), match, {.batch_size = 32, .epochs = 15, .verbose = 0});
        std::vector<float> bits = model.get_weights();
        bits.push_back(static_cast<float>(h["sparse_categorical_accuracy"].back()));
        return bits;
    };
    const auto one = train(std::type_identity<OneDeviceStrategy>{});
    CHECK(one.back() > 0.9f);   // chance: 1/2; the match needs both texts
    const auto two = train(std::type_identity<TpuStrategy<2>>{});
    CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
}
