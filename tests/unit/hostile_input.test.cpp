// Hostile input to fit, evaluate and predict: batch sizes from command lines (0, beyond the data, near
// SIZE_MAX, beyond memory), empty and oddly laid-out arrays, an x of the right element count but not
// the right shape, empty datasets, and a training run whose loss stops being finite. Each ends in a
// clear error or in Keras' behaviour, never in a crash, a huge allocation or a result made of nothing.
#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace tpudsl;

namespace {

using Small = Sequential<Input<Shape<4, 4, 1>>, Flatten, Dense<8, Relu>, Dense<3, Softmax>>;

constexpr std::size_t huge = std::numeric_limits<std::size_t>::max();

struct small_data {
    xt::xtensor<float, 4> x = xt::xtensor<float, 4>(std::array<std::size_t, 4>{20, 4, 4, 1});
    xt::xtensor<std::int32_t, 1> y = xt::xtensor<std::int32_t, 1>(std::array<std::size_t, 1>{20});

    small_data()
    {
        for (std::size_t i = 0; i < x.size(); ++i)
            x.data()[i] = static_cast<float>((i * 37) % 11) / 11.0f;
        for (std::size_t i = 0; i < y.size(); ++i)
            y(i) = static_cast<std::int32_t>(i % 3);
    }
};

/// A compiled model, on the heap (a Trainable owns its buffers and stays where it was made).
std::unique_ptr<Trainable<Small>>
compiled(std::ostream& out)
{
    auto model = std::make_unique<Trainable<Small>>(3);
    model->set_output(out);
    model->compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    return model;
}

std::vector<float>
weights(const std::unique_ptr<Trainable<Small>>& m)
{
    return {m->parameters(), m->parameters() + Small::param_buffer_size};
}

std::string
message_of(auto&& f)
{
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(no exception)";
}

} // namespace

TEST_CASE("a batch size beyond the data is all of it, as in Keras, up to SIZE_MAX", "[fit][errors][sizes]")
{
    const small_data d;
    std::ostringstream out;
    auto whole = compiled(out);
    whole->fit(d.x, d.y, {.batch_size = 20, .epochs = 2, .verbose = 0, .out = &out});
    for (const std::size_t batch : {std::size_t{21}, std::size_t{1} << 40, huge - 7, huge}) {
        INFO("batch_size " << batch);
        auto model = compiled(out);
        const History h = model->fit(d.x, d.y, {.batch_size = batch, .epochs = 2, .verbose = 0, .out = &out});
        CHECK(h.params.steps == 1);
        CHECK(weights(model) == weights(whole));
        CHECK(model->evaluate(d.x, d.y, {.batch_size = batch, .verbose = 0})[0] ==
              whole->evaluate(d.x, d.y, {.batch_size = 20, .verbose = 0})[0]);
        CHECK(model->predict(d.x, {.batch_size = batch}) == whole->predict(d.x, {.batch_size = 20}));
    }
}

TEST_CASE("a Dataset batched beyond its data, up to SIZE_MAX, gives one batch of all of it", "[fit][errors][sizes]")
{
    const small_data d;
    std::ostringstream out;
    auto whole = compiled(out);
    whole->fit(d.x, d.y, {.batch_size = 20, .epochs = 2, .verbose = 0, .shuffle = false, .out = &out});
    for (const std::size_t batch : {std::size_t{64}, huge}) {
        INFO("batch " << batch);
        const auto ds = Dataset<Example<Shape<4, 4, 1>, float, std::int32_t>>::from_tensor_slices(d.x, d.y).batch(batch);
        CHECK(ds.cardinality() == 1);
        auto model = compiled(out);
        model->fit(ds, {.epochs = 2, .verbose = 0, .out = &out});
        CHECK(weights(model) == weights(whole));
        CHECK(model->evaluate(ds, {.verbose = 0})[0] == whole->evaluate(d.x, d.y, {.batch_size = 20, .verbose = 0})[0]);
    }
}

TEST_CASE("a batch whose buffers exceed the machine's memory is refused before anything is allocated",
          "[fit][errors][sizes]")
{
    // 4M units: about 50 MB of workspace per sample, so 2,048 samples ask for about 100 GB.
    using Wide = Sequential<Input<Shape<1>>, Dense<(1 << 22)>, Dense<2, Softmax>>;
    xt::xtensor<float, 2> x(std::array<std::size_t, 2>{2048, 1}, 0.5f);
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{2048}, 1);
    Trainable<Wide> model(1);
    model.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{});
    std::ostringstream out;
    const std::string what = message_of([&] { model.fit(x, y, {.batch_size = 2048, .epochs = 1, .out = &out}); });
    CHECK_THAT(what, Catch::Matches("tpudsl: a batch of 2048 samples needs [0-9.]+ GB of buffers for this model "
                                    "\\([0-9.]+ MB per sample\\), more than this machine's [0-9.]+ GB of memory; use "
                                    "a smaller batch_size"));
    CHECK(model.iterations() == 0);
}

TEST_CASE("a batch size of 0 is refused by fit, evaluate and predict", "[fit][errors][sizes]")
{
    const small_data d;
    std::ostringstream out;
    auto model = compiled(out);
    CHECK(message_of([&] { model->fit(d.x, d.y, {.batch_size = 0, .out = &out}); }) ==
          "tpudsl: fit: batch_size must be at least 1");
    CHECK(message_of([&] { model->evaluate(d.x, d.y, {.batch_size = 0, .verbose = 0}); }) ==
          "tpudsl: evaluate: batch_size must be at least 1");
    CHECK(message_of([&] { model->predict(d.x, {.batch_size = 0}); }) == "tpudsl: predict: batch_size must be at least 1");
}

TEST_CASE("empty data is refused, never scored as a loss of 0", "[fit][errors][empty]")
{
    const small_data d;
    std::ostringstream out;
    auto model = compiled(out);
    const xt::xtensor<float, 4> none(std::array<std::size_t, 4>{0, 4, 4, 1});
    const xt::xtensor<std::int32_t, 1> no_labels(std::array<std::size_t, 1>{0});
    CHECK(message_of([&] { model->fit(none, no_labels, {.out = &out}); }) ==
          "tpudsl: fit: x holds no samples (Keras refuses empty data too)");
    CHECK(message_of([&] { model->evaluate(none, no_labels, {.verbose = 0}); }) ==
          "tpudsl: evaluate: x holds no samples (Keras refuses empty data too)");
    CHECK(message_of([&] { model->predict(none); }) == "tpudsl: predict: x holds no samples (Keras refuses empty data too)");
    CHECK(message_of([&] {
              model->fit(d.x, d.y, {.batch_size = 4, .validation_data = validation_data(none, no_labels), .out = &out});
          }) == "tpudsl: fit: validation x holds no samples; pass validation data with at least one sample, or none");
    CHECK(model->iterations() == 0);

    using Ds = Dataset<Example<Shape<4, 4, 1>, float, std::int32_t>>;
    const auto empty = Ds::from_tensor_slices(d.x, d.y).take(0).batch(4);
    CHECK(message_of([&] { model->fit(empty, {.epochs = 1, .out = &out}); }) ==
          "tpudsl: fit: the dataset holds no batch (its cardinality is 0)");
    CHECK(message_of([&] { model->evaluate(empty, {.verbose = 0}); }) ==
          "tpudsl: evaluate: the dataset holds no batch (its cardinality is 0)");
    CHECK(message_of([&] {
              model->fit(d.x, d.y, {.batch_size = 4, .validation_data = ValidationData(empty), .out = &out});
          }) == "tpudsl: evaluate(validation Dataset): the dataset yielded no batch");
}

TEST_CASE("an x with the model's element count but not its shape is refused, Keras' trailing axis of 1 is not",
          "[fit][errors][shapes]")
{
    const small_data d;
    std::ostringstream out;
    auto model = compiled(out);
    const xt::xtensor<float, 2> flat(std::array<std::size_t, 2>{20, 16}, 0.5f);
    const xt::xtensor<float, 3> transposed(std::array<std::size_t, 3>{20, 2, 8}, 0.5f);
    CHECK(message_of([&] { model->fit(flat, d.y, {.out = &out}); }) ==
          "tpudsl: x has shape (20, 16), but the model expects (samples, 4, 4, 1) per sample");
    CHECK(message_of([&] { model->evaluate(transposed, d.y, {.verbose = 0}); }) ==
          "tpudsl: x has shape (20, 2, 8), but the model expects (samples, 4, 4, 1) per sample");
    CHECK(message_of([&] { model->predict(flat); }) ==
          "tpudsl: x has shape (20, 16), but the model expects (samples, 4, 4, 1) per sample");
    // (20, 4, 4) for (4, 4, 1): Keras adds the trailing axis, and so does tpudsl (the same elements)
    xt::xtensor<float, 3> no_channel(std::array<std::size_t, 3>{20, 4, 4});
    std::memcpy(no_channel.data(), d.x.data(), d.x.size() * sizeof(float));
    CHECK(model->predict(no_channel) == model->predict(d.x));
}

TEST_CASE("arrays that are not row-major contiguous are refused by name, never read as garbage",
          "[fit][errors][layout]")
{
    const small_data d;
    std::ostringstream out;
    auto model = compiled(out);
    xt::xtensor<float, 4, xt::layout_type::column_major> column_major(std::array<std::size_t, 4>{20, 4, 4, 1}, 0.5f);
    CHECK(message_of([&] { model->fit(column_major, d.y, {.out = &out}); }) ==
          "tpudsl: x of shape (20, 4, 4, 1) is not a row-major contiguous array (its strides, in elements, are "
          "(1, 20, 80, 0)); tpudsl reads arrays row-major: copy it into one first, for instance "
          "xt::xtensor<float, N> copy = x");
    xt::xtensor<float, 4> twice(std::array<std::size_t, 4>{40, 4, 4, 1}, 0.5f);
    auto every_other = xt::view(twice, xt::range(0, 40, 2));
    CHECK_THAT(message_of([&] { model->predict(every_other); }),
               Catch::StartsWith("tpudsl: x of shape (20, 4, 4, 1) is not a row-major contiguous array"));
    xt::xtensor<std::int32_t, 1> labels_twice(std::array<std::size_t, 1>{40}, 1);
    auto odd_labels = xt::view(labels_twice, xt::range(0, 40, 2));
    CHECK_THAT(message_of([&] { model->evaluate(d.x, odd_labels, {.verbose = 0}); }),
               Catch::StartsWith("tpudsl: y of shape (20,) is not a row-major contiguous array"));
    // A view of whole rows at an offset is row-major: it is read where it starts.
    xt::xtensor<float, 4> more(std::array<std::size_t, 4>{30, 4, 4, 1});
    std::memcpy(more.data() + 10 * 16, d.x.data(), d.x.size() * sizeof(float));
    auto last_twenty = xt::view(more, xt::range(10, 30));
    CHECK(model->predict(last_twenty) == model->predict(d.x));
}

TEST_CASE("a loss that stops being finite: training goes on, as in Keras, with one warning", "[fit][errors][nan]")
{
    const small_data d;
    std::ostringstream out, warnings;
    Trainable<Small> model(3);
    model.set_output(warnings);
    model.compile(optimizers::SGD{.learning_rate = 1e30f}, losses::SparseCategoricalCrossentropy{});
    const History h = model.fit(d.x, d.y, {.batch_size = 4, .epochs = 3, .verbose = 0, .out = &out});
    CHECK(h["loss"].size() == 3);   // every epoch ran
    CHECK(std::isnan(h["loss"].back()));
    const std::string w = warnings.str();
    CHECK_THAT(w, Catch::Matches("WARNING: tpudsl: the loss became nan at epoch 1, step [0-9]+; training goes on, as "
                                 "in Keras, but the weights are no longer finite\\. Add tpudsl::TerminateOnNaN to "
                                 "the callbacks to stop at the first non-finite loss; a lower learning rate \\(now "
                                 "1e\\+30\\) or inputs scaled to \\[0, 1\\] usually prevent it\\. Said once per "
                                 "fit\\.\n"));

    // With TerminateOnNaN the callback speaks instead (and stops).
    std::ostringstream quiet;
    Trainable<Small> stopped(3);
    stopped.set_output(quiet);
    stopped.compile(optimizers::SGD{.learning_rate = 1e30f}, losses::SparseCategoricalCrossentropy{});
    TerminateOnNaN terminate(out);
    stopped.fit(d.x, d.y, {.batch_size = 4, .epochs = 3, .verbose = 0, .callbacks = {std::ref(terminate)}, .out = &out});
    CHECK(quiet.str().empty());
}
