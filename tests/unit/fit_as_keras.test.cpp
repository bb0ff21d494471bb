// fit as Keras runs it when a tutorial's call is copied line for line: the batch derived from
// steps_per_epoch when none is given, the validation batch, and arrays of any numeric element type
// converted where they enter (labels of uint8, int64, float32 or float64 train to the bits of int32).
#include "toy_data.hpp"

#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <vector>

using namespace tpudsl;

namespace {

using Toy = Sequential<Input<Shape<4>>, Dense<8, Tanh>, Dense<3, Softmax>>;

/// The toy problem with whole-number features in [0, 255], so that uint8 arrays can hold them exactly.
tpudsl_tests::toy_data
make_toy(std::size_t n, std::uint32_t seed)
{
    return tpudsl_tests::make_toy(n, seed, true);
}

template <class Model>
std::vector<float>
weights_of(const Model& m)
{
    return m.get_weights();
}

bool
same_bits(const std::vector<float>& a, const std::vector<float>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// Trains a fresh Toy (seed 3, SGD on the 0-255 features scaled down by the optimizer's small rate) on
/// x, y with `options`, and returns its weights.
template <class X, class Y>
std::vector<float>
train_toy(const X& x, const Y& y, FitOptions options)
{
    Trainable<Toy> model(3);
    model.compile(optimizers::SGD{0.001f}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    options.verbose = 0;
    model.fit(x, y, options);
    return weights_of(model);
}

} // namespace

TEST_CASE("an unset batch_size is derived from steps_per_epoch as Keras derives it, else 32", "[fit][keras]")
{
    // The rule itself: ceil(samples / steps) with steps, 32 without, and a batch given always stands.
    CHECK(FitOptions{.steps_per_epoch = 60}.batch_for(60000) == 1000);
    CHECK(FitOptions{.steps_per_epoch = 3}.batch_for(100) == 34);
    CHECK(FitOptions{}.batch_for(100) == 32);
    CHECK(FitOptions{.batch_size = 7, .steps_per_epoch = 3}.batch_for(100) == 7);

    // fit follows it: the Fashion-MNIST seed's call (60,000 samples, 60 steps, no batch) trains at 1000.
    const auto big = make_toy(60000, 1);
    const auto derived = train_toy(big.x, big.y, {.epochs = 1, .steps_per_epoch = 60});
    CHECK(same_bits(derived, train_toy(big.x, big.y, {.batch_size = 1000, .epochs = 1, .steps_per_epoch = 60})));
    CHECK(!same_bits(derived, train_toy(big.x, big.y, {.batch_size = 999, .epochs = 1, .steps_per_epoch = 60})));

    const auto small = make_toy(100, 2);
    Trainable<Toy> model(3);
    model.compile(optimizers::SGD{0.001f}, losses::SparseCategoricalCrossentropy{});
    CHECK(model.fit(small.x, small.y, {.verbose = 0}).params.steps == 4);   // ceil(100 / 32)
    CHECK(same_bits(train_toy(small.x, small.y, {.epochs = 2, .steps_per_epoch = 3}),
                    train_toy(small.x, small.y, {.batch_size = 34, .epochs = 2, .steps_per_epoch = 3})));
}

TEST_CASE("steps beyond one pass go on into a fresh shuffle, a pass's partial batch a step of its own",
          "[fit][keras]")
{
    // 10 samples at batch 4: a pass is batches of 4, 4 and 2. Five steps per epoch over two epochs read
    // passes 0, 1, 2 and the first step of pass 3, the stream running on across epochs. Each step's
    // samples are seen through the weights: replaying the passes by hand as one-step fits on the
    // samples in the order fit drew them gives the same bits.
    const auto d = make_toy(10, 4);
    const auto streamed = train_toy(d.x, d.y, {.batch_size = 4, .epochs = 2, .steps_per_epoch = 5, .shuffle = false});
    // Without shuffling every pass is 0..9: steps of samples 0-3, 4-7, 8-9, 0-3, 4-7 | 8-9, 0-3, 4-7, 8-9, 0-3.
    Trainable<Toy> model(3);
    model.compile(optimizers::SGD{0.001f}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    const std::size_t begins[] = {0, 4, 8, 0, 4, 8, 0, 4, 8, 0};
    for (const std::size_t b : begins) {
        const std::size_t n = b == 8 ? 2 : 4;
        const xt::xtensor<float, 2> xs = xt::view(d.x, xt::range(b, b + n), xt::all());
        const xt::xtensor<std::int32_t, 1> ys = xt::view(d.y, xt::range(b, b + n));
        model.fit(xs, ys, {.batch_size = 4, .epochs = 1, .verbose = 0, .shuffle = false});
    }
    CHECK(same_bits(streamed, weights_of(model)));
}

TEST_CASE("validation arrays are evaluated at validation_batch_size, else fit's batch_size as given, else 32",
          "[fit][keras]")
{
    CHECK(FitOptions{}.validation_batch() == 32);
    CHECK(FitOptions{.steps_per_epoch = 60}.validation_batch() == 32);   // never the derived batch
    CHECK(FitOptions{.batch_size = 64}.validation_batch() == 64);
    CHECK(FitOptions{.batch_size = 64, .validation_batch_size = 10}.validation_batch() == 10);

    const auto train = make_toy(90, 5), val = make_toy(70, 6);
    for (const std::size_t expected : {32u, 5u}) {
        Trainable<Toy> model(3);
        model.compile(optimizers::SGD{0.001f}, losses::SparseCategoricalCrossentropy{});
        FitOptions options{.epochs = 1, .verbose = 0, .steps_per_epoch = 3,
                           .validation_data = validation_data(val.x, val.y)};
        if (expected != 32)
            options.validation_batch_size = expected;
        const auto h = model.fit(train.x, train.y, options);
        // Validation ran on the final weights: the same numbers as evaluate at that batch.
        const auto scores = model.evaluate(val.x, val.y, {.batch_size = expected, .verbose = 0});
        CHECK(h["val_loss"].at(0) == scores[0]);
    }
    // evaluate without a batch: derived from its steps, else 32.
    Trainable<Toy> model(3);
    model.compile(optimizers::SGD{0.001f}, losses::SparseCategoricalCrossentropy{});
    std::ostringstream out;
    model.evaluate(val.x, val.y, {.verbose = 2, .out = &out});
    CHECK(out.str().find("3/3") != std::string::npos);   // ceil(70 / 32)
    out.str("");
    model.evaluate(val.x, val.y, {.verbose = 2, .steps = 2, .out = &out});
    CHECK(out.str().find("2/2") != std::string::npos);   // batch ceil(70 / 2) = 35: all of the data
    CHECK(model.evaluate(val.x, val.y, {.verbose = 0, .steps = 2})[0] ==
          model.evaluate(val.x, val.y, {.batch_size = 35, .verbose = 0})[0]);
}

TEST_CASE("a batch_size beside a Dataset is refused, as in Keras", "[fit][keras][dataset]")
{
    using E = Example<Shape<4>, float, std::int32_t>;
    const auto d = make_toy(20, 7);
    const auto ds = Dataset<E>::from_tensor_slices(d.x, d.y).batch<4>();
    Trainable<Toy> model(3);
    model.compile(optimizers::SGD{0.001f}, losses::SparseCategoricalCrossentropy{});
    CHECK_THROWS_WITH(model.fit(ds, {.batch_size = 4, .verbose = 0}),
                      "tpudsl: fit: batch_size must not be set with a Dataset: its batches are its own (Keras "
                      "refuses both too); batch the dataset instead, dataset.batch<4>()");
    CHECK_THROWS_WITH(model.evaluate(ds, {.batch_size = 4, .verbose = 0}),
                      Catch::Contains("evaluate: batch_size must not be set with a Dataset"));
    CHECK_THROWS_WITH(model.fit(d.x, d.y, {.verbose = 0, .validation_data = ds, .validation_batch_size = 4}),
                      Catch::Contains("validation_batch_size must not be set with a validation Dataset"));
    CHECK_THROWS_WITH(model.fit(d.x, d.y, {.batch_size = 0, .verbose = 0}),
                      "tpudsl: fit: batch_size must be at least 1");
    CHECK_THROWS_WITH(model.fit(d.x, d.y, {.verbose = 0, .validation_data = validation_data(d.x, d.y),
                                           .validation_batch_size = 0}),
                      "tpudsl: fit: validation_batch_size must be at least 1");
    CHECK(model.fit(ds, {.epochs = 1, .verbose = 0}).params.steps == 5);   // the dataset's batch stands
    // validation_freq 0 would never validate: refused, as Keras refuses it, before any step
    for (const bool dataset : {false, true}) {
        const auto before = model.iterations();
        FitOptions o{.epochs = 2, .verbose = 0, .validation_data = validation_data(d.x, d.y), .validation_freq = 0};
        CHECK_THROWS_WITH(dataset ? model.fit(ds, o) : model.fit(d.x, d.y, o),
                          "tpudsl: fit: validation_freq must be at least 1 (validate when (epoch + 1) % "
                          "validation_freq == 0; Keras refuses 0 too); to validate only after the last epoch, set "
                          "it to epochs");
        CHECK_THROWS_AS(dataset ? model.fit(ds, o) : model.fit(d.x, d.y, o), std::invalid_argument);
        CHECK(model.iterations() == before);
    }
}

TEMPLATE_TEST_CASE("sparse labels of any integer type, or floats holding whole numbers, train to the bits of int32",
                   "[fit][keras][dtype]", std::uint8_t, std::int8_t, std::uint16_t, std::int64_t, std::uint64_t,
                   float, double)
{
    const auto train = make_toy(50, 8), val = make_toy(20, 9);
    const xt::xtensor<TestType, 1> y = xt::cast<TestType>(train.y), y_val = xt::cast<TestType>(val.y);
    const FitOptions options{.batch_size = 16, .epochs = 2};
    auto with_validation = [&](auto labels, auto val_labels) {
        FitOptions o = options;
        o.validation_data = validation_data(val.x, val_labels);
        Trainable<Toy> model(3);
        model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
        o.verbose = 0;
        const auto h = model.fit(train.x, labels, o);
        return std::pair{weights_of(model), h["val_loss"].back()};
    };
    const auto [w32, val32] = with_validation(train.y, val.y);
    const auto [w, val_loss] = with_validation(y, y_val);
    CHECK(same_bits(w32, w));
    CHECK(val_loss == val32);

    Trainable<Toy> model(3);
    model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    CHECK(model.evaluate(val.x, y_val, {.verbose = 0})[1] == model.evaluate(val.x, val.y, {.verbose = 0})[1]);
}

TEST_CASE("a sparse label that is not a whole number, or outside the classes, is refused with its place",
          "[fit][keras][dtype][errors]")
{
    const auto d = make_toy(10, 10);
    Trainable<Toy> model(3);
    model.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{});
    xt::xtensor<double, 1> y = xt::cast<double>(d.y);
    y(4) = 2.5;
    CHECK_THROWS_WITH(model.fit(d.x, y, {.verbose = 0}),
                      "tpudsl: label 2.5 at sample 4 of y is not a whole number, but the model's classes are whole "
                      "numbers (Keras would truncate it without a word)");
    y(4) = 3.0;
    CHECK_THROWS_WITH(model.fit(d.x, y, {.verbose = 0}),
                      "tpudsl: label 3 at sample 4 of y is outside [0, 3) (the model's classes)");
    y(4) = std::nan("");
    CHECK_THROWS_WITH(model.fit(d.x, y, {.verbose = 0}), Catch::Contains("label nan at sample 4 of y is not a whole number"));
    xt::xtensor<std::int64_t, 1> wide = xt::cast<std::int64_t>(d.y);
    wide(7) = (std::int64_t{1} << 32) + 1;   // an int32 cast would make it class 1
    CHECK_THROWS_WITH(model.fit(d.x, wide, {.verbose = 0}),
                      Catch::Contains("label 4294967297 at sample 7 of y is outside [0, 3)"));
    xt::xtensor<std::int8_t, 1> negative = xt::cast<std::int8_t>(d.y);
    negative(2) = -1;
    CHECK_THROWS_WITH(model.evaluate(d.x, negative, {.verbose = 0}), Catch::Contains("label -1 at sample 2 of y"));
    xt::xtensor<float, 1> val_labels = xt::cast<float>(d.y);
    val_labels(9) = 0.25f;
    CHECK_THROWS_WITH(model.fit(d.x, d.y, {.verbose = 0, .validation_data = validation_data(d.x, val_labels)}),
                      Catch::Contains("label 0.25 at sample 9 of validation y is not a whole number"));
}

TEST_CASE("inputs of integer type are converted as Keras casts them: uint8 images, int64 token ids",
          "[fit][keras][dtype]")
{
    const auto d = make_toy(40, 11);
    const xt::xtensor<std::uint8_t, 2> pixels = xt::cast<std::uint8_t>(d.x);
    const xt::xtensor<double, 2> doubles = xt::cast<double>(d.x);
    const FitOptions options{.batch_size = 8, .epochs = 2};
    const auto reference = train_toy(d.x, d.y, options);
    CHECK(same_bits(reference, train_toy(pixels, d.y, options)));
    CHECK(same_bits(reference, train_toy(doubles, d.y, options)));
    Trainable<Toy> model(3);
    CHECK(model.predict(pixels, {.verbose = 0}) == model.predict(d.x, {.verbose = 0}));

    // One-hot targets of another type are converted to float32 too.
    Trainable<Toy> dense(3), dense64(3);
    const xt::xtensor<float, 2> onehot = to_categorical<3>(d.y);
    const xt::xtensor<double, 2> onehot64 = xt::cast<double>(onehot);
    dense.compile(optimizers::SGD{0.001f}, losses::CategoricalCrossentropy{});
    dense64.compile(optimizers::SGD{0.001f}, losses::CategoricalCrossentropy{});
    dense.fit(d.x, onehot, {.batch_size = 8, .verbose = 0});
    dense64.fit(d.x, onehot64, {.batch_size = 8, .verbose = 0});
    CHECK(same_bits(weights_of(dense), weights_of(dense64)));

    using Ids = Sequential<Input<Shape<3>, std::int32_t>, Embedding<5, 2>, Flatten, Dense<2, Softmax>>;
    xt::xtensor<std::int32_t, 2> tokens = {{1, 2, 3}, {4, 0, 1}, {2, 2, 2}, {3, 1, 0}};
    xt::xtensor<std::int64_t, 2> tokens64 = xt::cast<std::int64_t>(tokens);
    const xt::xtensor<std::int32_t, 1> labels = {0, 1, 1, 0};
    Trainable<Ids> a(5), b(5);
    a.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{});
    b.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{});
    a.fit(tokens, labels, {.batch_size = 2, .epochs = 3, .verbose = 0});
    b.fit(tokens64, labels, {.batch_size = 2, .epochs = 3, .verbose = 0});
    CHECK(same_bits(weights_of(a), weights_of(b)));
    tokens64(3, 1) = (std::int64_t{1} << 32) + 2;   // wraps to the valid id 2 in an int32 cast
    CHECK_THROWS_WITH(b.fit(tokens64, labels, {.verbose = 0}),
                      "tpudsl: token id 4294967298 at sample 3, position 1 of x is outside [0, 5) (the Embedding's "
                      "vocabulary)");
    CHECK_THROWS_WITH(b.predict(tokens64, {.verbose = 0}), Catch::Contains("token id 4294967298 at sample 3"));
}
