// Functional models: the graph's constants, Keras' summary of a functional model, and training one
// (fit, evaluate, predict, weights files) on a learnable toy problem. Gradients across merges are
// checked in gradcheck.test.cpp, strategies in distribute/strategy.test.cpp.
#include "scratch_dir.hpp"
#include "toy_data.hpp"

#include <tpudsl/functional.hpp>
#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

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
