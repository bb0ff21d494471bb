// The Dataset pipeline: tf.data's ordering, seeding, partial batches and cache/shuffle semantics.
#include <tpudsl/data/dataset.hpp>
#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <xtensor/xtensor.hpp>

#include <algorithm>
#include <limits>
#include <numeric>
#include <sstream>
#include <vector>

using namespace tpudsl;

namespace {

using Ex = Example<Shape<2>, float, std::int32_t>;

/// n examples whose x = (i, -i) and y = i.
Dataset<Ex>
numbers(std::size_t n)
{
    xt::xtensor<float, 2> x(std::array<std::size_t, 2>{n, 2});
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{n});
    for (std::size_t i = 0; i < n; ++i) {
        x(i, 0) = static_cast<float>(i);
        x(i, 1) = -static_cast<float>(i);
        y(i) = static_cast<std::int32_t>(i);
    }
    return Dataset<Ex>::from_tensor_slices(x, y);
}

template <class T>
std::vector<std::int32_t>
labels_of(const Dataset<T>& ds, std::size_t iteration = 0)
{
    std::vector<std::int32_t> out;
    ds.start(iteration);
    T item;
    while (ds.next(item)) {
        if constexpr (is_batch<T>::value)
            out.insert(out.end(), item.y.begin(), item.y.begin() + static_cast<std::ptrdiff_t>(item.size));
        else
            out.push_back(item.y[0]);
    }
    return out;
}

std::vector<std::int32_t>
iota(std::int32_t from, std::int32_t to)
{
    std::vector<std::int32_t> v(static_cast<std::size_t>(to - from));
    std::iota(v.begin(), v.end(), from);
    return v;
}

} // namespace

TEST_CASE("from_tensor_slices yields the rows in order and checks the arrays", "[dataset]")
{
    const auto ds = numbers(5);
    CHECK(labels_of(ds) == iota(0, 5));
    Ex e;
    ds.start();
    REQUIRE(ds.next(e));
    REQUIRE(ds.next(e));
    CHECK(e.x == std::array<float, 2>{1.0f, -1.0f});

    xt::xtensor<float, 2> wide(std::array<std::size_t, 2>{3, 3});
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{3});
    CHECK_THROWS_WITH(Dataset<Ex>::from_tensor_slices(wide, y), Catch::Contains("x has shape (3, 3)"));
    xt::xtensor<float, 2> x(std::array<std::size_t, 2>{4, 2});
    CHECK_THROWS_WITH(Dataset<Ex>::from_tensor_slices(x, y), Catch::Contains("y has shape (3,) for 4 samples"));
}

TEST_CASE("batch: full batches, then the partial one unless drop_remainder", "[dataset]")
{
    const auto ds = numbers(10);
    Batch<Ex, 4> b;
    auto batched = ds.batch<4>();
    batched.start();
    std::vector<std::size_t> sizes;
    while (batched.next(b))
        sizes.push_back(b.size);
    CHECK(sizes == std::vector<std::size_t>{4, 4, 2});
    CHECK(labels_of(batched) == iota(0, 10));
    CHECK(labels_of(ds.batch<4>(/*drop_remainder=*/true)) == iota(0, 8));
    batched.start();
    batched.next(b);
    CHECK(b.x[2] == 1.0f);   // row-major: (x0, x1) of example 1
    STATIC_REQUIRE(decltype(batched)::element_type::capacity == 4);
}

TEST_CASE("shuffle: a permutation, the same for the same seed, different on each iteration", "[dataset]")
{
    const auto ds = numbers(50).shuffle(10, 7);
    const auto first = labels_of(ds, 0);
    auto sorted = first;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == iota(0, 50));
    CHECK(first != iota(0, 50));
    CHECK(labels_of(ds, 0) == first);                     // seeded: the same bits again
    CHECK(labels_of(numbers(50).shuffle(10, 7), 0) == first);
    CHECK(labels_of(ds, 1) != first);                     // reshuffled each iteration
    CHECK(labels_of(numbers(50).shuffle(10, 8), 0) != first);
    // a buffer of 10 only moves an element so far: the first output comes from the first 10
    CHECK(first[0] < 10);
    // a buffer as large as the data is a uniform shuffle: anything can come first
    bool late_first = false;
    for (std::size_t it = 0; it < 20 && !late_first; ++it)
        late_first = labels_of(numbers(50).shuffle(50, 3), it)[0] >= 10;
    CHECK(late_first);
}

TEST_CASE("shuffle().cache() replays the first iteration, cache().shuffle() reshuffles", "[dataset]")
{
    const auto frozen = numbers(30).shuffle(30, 1).cache();
    const auto epoch1 = labels_of(frozen, 0);
    CHECK(labels_of(frozen, 1) == epoch1);
    CHECK(labels_of(frozen, 2) == epoch1);
    const auto lively = numbers(30).cache().shuffle(30, 1);
    CHECK(labels_of(lively, 0) != labels_of(lively, 1));
    // seed (a)'s pipeline: shuffle, batch, prefetch, cache — the batches of epoch 1, every epoch
    const auto seed_a = numbers(45).shuffle(10, 2).batch<8>().prefetch().cache();
    const auto a1 = labels_of(seed_a, 0);
    CHECK(a1.size() == 45);
    CHECK(labels_of(seed_a, 1) == a1);
    // a cache first read at iteration 3 (a fit resumed at epoch 3, in a new process) holds what one
    // first read at iteration 0 holds: upstream's iteration 0
    const auto resumed = numbers(45).shuffle(10, 2).batch<8>().prefetch().cache();
    CHECK(labels_of(resumed, 3) == a1);
    CHECK(labels_of(numbers(45).shuffle(10, 2), 3) != a1);
}

TEST_CASE("cardinality, as tf.data computes it", "[dataset]")
{
    const auto ds = numbers(10);
    CHECK(ds.cardinality() == 10);
    CHECK(ds.shuffle(4).batch<4>().prefetch().cache().cardinality() == 3);
    CHECK(ds.batch<4>(true).cardinality() == 2);
    CHECK(ds.skip(3).take(5).cardinality() == 5);
    CHECK(ds.skip(12).cardinality() == 0);
    CHECK(ds.repeat(3).cardinality() == 30);
    CHECK(ds.repeat().cardinality() == Dataset<Ex>::infinite_cardinality);
    CHECK(ds.repeat().take(7).cardinality() == 7);
}

TEST_CASE("repeat, take and skip", "[dataset]")
{
    const auto ds = numbers(4);
    CHECK(labels_of(ds.repeat(3)) == std::vector<std::int32_t>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3});
    CHECK(labels_of(ds.repeat().take(6)) == std::vector<std::int32_t>{0, 1, 2, 3, 0, 1});
    CHECK(labels_of(ds.skip(1).take(2)) == std::vector<std::int32_t>{1, 2});
    CHECK(labels_of(ds.skip(9)).empty());
    CHECK(labels_of(ds.take(0).repeat()).empty());   // an empty upstream does not loop forever
    // each repetition is a new iteration upstream: a shuffle reshuffles
    const auto twice = labels_of(numbers(20).shuffle(20, 5).repeat(2));
    CHECK(std::vector<std::int32_t>(twice.begin(), twice.begin() + 20) !=
          std::vector<std::int32_t>(twice.begin() + 20, twice.end()));
}

TEST_CASE("map transforms elements, and may change their type", "[dataset]")
{
    using Big = Example<Shape<3>, float, std::int32_t>;
    const auto mapped = numbers(3).map([](const Ex& e) {
        Big b;
        b.x = {e.x[0], e.x[1], 2 * e.x[0]};
        b.y = {e.y[0] * 10};
        return b;
    });
    STATIC_REQUIRE(std::is_same_v<decltype(mapped)::element_type, Big>);
    CHECK(labels_of(mapped) == std::vector<std::int32_t>{0, 10, 20});
}

TEST_CASE("prefetch keeps the order and restarts cleanly, even mid-iteration", "[dataset]")
{
    const auto ds = numbers(100).shuffle(16, 4).batch<7>().prefetch(3);
    const auto plain = labels_of(numbers(100).shuffle(16, 4).batch<7>(), 0);
    CHECK(labels_of(ds, 0) == plain);
    Batch<Ex, 7> b;
    ds.start(1);
    ds.next(b);   // abandon iteration 1 after one batch
    CHECK(labels_of(ds, 0) == plain);
    CHECK(labels_of(ds, 1) == labels_of(numbers(100).shuffle(16, 4).batch<7>(), 1));
}

// [dataset_fit]
TEST_CASE("fit and evaluate on a batched Dataset, as the Reuters seed feeds its model", "[dataset][fit]")
{
    using Toy = Sequential<Input<Shape<2>>, Dense<8, Tanh>, Dense<2, Softmax>>;
    using E = Example<Shape<2>, float, std::int32_t>;
    xt::xtensor<float, 2> x(std::array<std::size_t, 2>{60, 2});
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{60});
    for (std::size_t i = 0; i < 60; ++i) {
        x(i, 0) = static_cast<float>(i % 7) / 7.0f - 0.5f;
        x(i, 1) = static_cast<float>(i % 5) / 5.0f - 0.5f;
        y(i) = x(i, 0) > x(i, 1) ? 1 : 0;
    }
    const auto train = Dataset<E>::from_tensor_slices(x, y).shuffle(60, 1).batch<8>().prefetch().cache();
    const auto test = Dataset<E>::from_tensor_slices(x, y).batch<16>();

    TpuStrategy<8> strategy;
    auto model = strategy.scope<Toy>(3);
    model.compile(optimizers::Adam{.learning_rate = 0.05f}, losses::SparseCategoricalCrossentropy{},
                  metrics::SparseCategoricalAccuracy{});
    std::ostringstream out;
    const auto history = model.fit(train, {.epochs = 10, .validation_data = test, .out = &out});
    const auto scores = model.evaluate(test, {.verbose = 0});
    // [dataset_fit]
    std::istringstream lines(out.str());
    std::string epoch1, bar1, epoch2, bar2;
    std::getline(lines, epoch1);
    std::getline(lines, bar1);
    std::getline(lines, epoch2);
    std::getline(lines, bar2);
    CHECK(epoch1 == "Epoch 1/10");
    CHECK(bar1.rfind("8/8 [==============================] - ", 0) == 0);   // 60 = 7 batches of 8 and one of 4
    CHECK(bar1.find(" - val_loss: ") != std::string::npos);
    CHECK(bar2.rfind("8/8 [==============================] - ", 0) == 0);
    CHECK(history.params.steps == 8);
    CHECK(history["val_loss"].size() == 10);
    CHECK(history["loss"].back() < history["loss"].front());
    CHECK(scores[1] > 0.8);
    CHECK(model.iterations() == 80);
}

TEST_CASE("values are checked where they enter: from_tensor_slices summarises them, map forgets",
          "[dataset][fit]")
{
    using Toy = Sequential<Input<Shape<2>>, Dense<2, Softmax>>;
    using E = Example<Shape<2>, float, std::int32_t>;
    xt::xtensor<float, 2> x(std::array<std::size_t, 2>{10, 2}, 0.5f);
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{10}, 1);
    y(3) = 0;
    const auto ds = Dataset<E>::from_tensor_slices(x, y).shuffle(4, 1).batch<4>().prefetch();
    CHECK(ds.values().known);
    CHECK(ds.values().x_finite);
    CHECK(ds.values().y_min == 0);
    CHECK(ds.values().y_max == 1);
    x(7, 1) = std::numeric_limits<float>::quiet_NaN();
    CHECK(!Dataset<E>::from_tensor_slices(x, y).values().x_finite);
    // A map may make anything of the values: they are unknown after it, and fit checks each batch.
    const auto mapped = Dataset<E>::from_tensor_slices(x, y).map([](E e) {
        e.y[0] += 1;   // labels 1 and 2: 2 is outside the model's two classes
        return e;
    });
    CHECK(!mapped.values().known);
    Trainable<Toy> model;
    model.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{});
    x(7, 1) = 0.5f;
    CHECK_THROWS_WITH(model.fit(Dataset<E>::from_tensor_slices(x, y).map([](E e) {
                                                                        e.y[0] += 1;
                                                                        return e;
                                                                    }).batch<4>(),
                                {.verbose = 0}),
                      Catch::Contains("label 2 at sample 0 of y is outside [0, 2)") &&
                          Catch::Contains("(in batch 0 of the dataset)"));
    // Values that fit the model are not read again; the same data trains as before.
    const auto h = model.fit(Dataset<E>::from_tensor_slices(x, y).batch<4>(), {.epochs = 2, .verbose = 0});
    CHECK(h.epoch.size() == 2);
}

TEST_CASE("validation_data: one spelling for arrays and Datasets, a Dataset that does not fit is named",
          "[dataset][fit]")
{
    using Toy = Sequential<Input<Shape<2>>, Dense<2, Softmax>>;
    using E = Example<Shape<2>, float, std::int32_t>;
    xt::xtensor<float, 2> x(std::array<std::size_t, 2>{16, 2}, 0.25f);
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{16}, 1);
    const auto data = Dataset<E>::from_tensor_slices(x, y).batch<4>();
    auto fitted = [&](auto validation) {
        Trainable<Toy> model(2);
        model.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{});
        const auto h = model.fit(data, {.epochs = 2, .verbose = 0, .validation_data = validation});
        return h["val_loss"];
    };
    // the same values validated as arrays (at fit's batch size) and as a Dataset (at its own)
    const auto as_arrays = fitted(validation_data(x, y));
    const auto as_dataset = fitted(Dataset<E>::from_tensor_slices(x, y).batch<8>());
    REQUIRE(as_arrays.size() == 2);
    CHECK(as_dataset.size() == 2);
    CHECK(as_dataset[1] == Approx(as_arrays[1]).epsilon(1e-6));
    // A validation Dataset's examples are checked against the Input when fit validates.
    using Wide = Example<Shape<3>, float, std::int32_t>;
    xt::xtensor<float, 2> x3(std::array<std::size_t, 2>{8, 3}, 0.25f);
    xt::xtensor<std::int32_t, 1> y3(std::array<std::size_t, 1>{8}, 1);
    Trainable<Toy> model(2);
    model.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{});
    CHECK_THROWS_WITH(model.fit(data, {.verbose = 0, .validation_data = Dataset<Wide>::from_tensor_slices(x3, y3).batch<4>()}),
                      Catch::Contains("validation x has shape (4, 3), but the model expects (samples, 2) per sample") &&
                          Catch::Contains("in batch 0 of the validation dataset"));
}

namespace {
/// The two-feature problem of the Reuters-like fit above: class 1 when the first feature is larger.
std::pair<xt::xtensor<float, 2>, xt::xtensor<std::int32_t, 1>>
two_features(std::size_t n)
{
    std::pair<xt::xtensor<float, 2>, xt::xtensor<std::int32_t, 1>> d{
        xt::xtensor<float, 2>(std::array<std::size_t, 2>{n, 2}), xt::xtensor<std::int32_t, 1>(std::array<std::size_t, 1>{n})};
    auto& [x, y] = d;
    for (std::size_t i = 0; i < n; ++i) {
        x(i, 0) = static_cast<float>(i % 7) / 7.0f - 0.5f;
        x(i, 1) = static_cast<float>(i % 5) / 5.0f - 0.5f;
        y(i) = x(i, 0) > x(i, 1) ? 1 : 0;
    }
    return d;
}
} // namespace

TEST_CASE("a batch size chosen at run time trains as the same size fixed at compile time", "[dataset][fit]")
{
    using Toy = Sequential<Input<Shape<2>>, Dense<8, Tanh>, Dense<2, Softmax>>;
    using E = Example<Shape<2>, float, std::int32_t>;
    const auto [x, y] = two_features(60);
    const std::size_t batch = 8;   // as from a command line's --batch
    const auto dynamic = Dataset<E>::from_tensor_slices(x, y).shuffle(60, 1).batch(batch).prefetch().cache();
    const auto fixed = Dataset<E>::from_tensor_slices(x, y).shuffle(60, 1).batch<8>().prefetch().cache();
    CHECK(dynamic.batch_size() == 8);
    CHECK(dynamic.cardinality() == fixed.cardinality());
    auto train = [&](const auto& data) {
        TpuStrategy<4> strategy;
        auto model = strategy.scope<Toy>(3);
        model.compile(optimizers::Adam{.learning_rate = 0.05f}, losses::SparseCategoricalCrossentropy{},
                      metrics::SparseCategoricalAccuracy{});
        const auto history = model.fit(data, {.epochs = 3, .verbose = 0, .validation_data = data});
        CHECK(history.params.steps == 8);
        return std::pair{model.get_weights(), model.evaluate(data, {.verbose = 0})};
    };
    const auto [w_dynamic, s_dynamic] = train(dynamic);
    const auto [w_fixed, s_fixed] = train(fixed);
    CHECK(w_dynamic == w_fixed);
    CHECK(s_dynamic == s_fixed);
    // A run-time batch that does not split over the replicas is refused when fit starts.
    TpuStrategy<4> strategy;
    auto model = strategy.scope<Toy>(3);
    model.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{});
    CHECK_THROWS_WITH(model.fit(Dataset<E>::from_tensor_slices(x, y).batch(6), {.verbose = 0}),
                      Catch::Contains("batch size (6) must be a multiple of the strategy's 4 replicas"));
    CHECK_THROWS_WITH(Dataset<E>::from_tensor_slices(x, y).batch(0), Catch::Contains("batch_size must be at least 1"));
}

TEST_CASE("a dataset's bad batch is reported with its place, one that runs dry stops training",
          "[dataset][fit]")
{
    using Toy = Sequential<Input<Shape<2>>, Dense<2, Softmax>>;
    using E = Example<Shape<2>, float, std::int32_t>;
    xt::xtensor<float, 2> x(std::array<std::size_t, 2>{10, 2}, 0.5f);
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{10}, 1);
    y(6) = 2;
    Trainable<Toy> model;
    model.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{});
    std::ostringstream out;
    CHECK_THROWS_WITH(model.fit(Dataset<E>::from_tensor_slices(x, y).batch<4>(), {.verbose = 0, .out = &out}),
                      Catch::Contains("label 2 at sample 2 of y is outside [0, 2)") &&
                          Catch::Contains("(in batch 1 of the dataset)"));
    y(6) = 1;
    const auto h = model.fit(Dataset<E>::from_tensor_slices(x, y).batch<4>(),
                             {.epochs = 3, .verbose = 0, .steps_per_epoch = 5, .out = &out});
    CHECK(out.str().find("WARNING: Your input ran out of data; interrupting training.") != std::string::npos);
    CHECK(h.epoch.size() == 1);
    CHECK_THROWS_WITH(model.fit(Dataset<E>::from_tensor_slices(x, y).repeat().batch<4>(), {.verbose = 0}),
                      Catch::Contains("repeats forever; pass steps_per_epoch"));
}
