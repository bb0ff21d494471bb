// BackupAndRestore: a fit that dies at any point (here: a callback that throws, as a crash ends the
// fit without on_train_end) and starts again ends with bitwise the weights of a fit never interrupted;
// backups of another fit or model, corrupt ones and stale temporaries are handled with clear errors.
// The kill -9 of a real training process is tests/resume (ctest resume.*).
#include "scratch_dir.hpp"
#include "toy_data.hpp"

#include <text_and_metadata/model.hpp>

#include <tpudsl/functional.hpp>
#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <xtensor/xtensor.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

using namespace tpudsl;
using tpudsl_tests::scratch_dir;
namespace fs = std::filesystem;

namespace {

using Drop = Sequential<Input<Shape<4>>, Dense<16, Relu>, Dropout<0.3f>, Dense<3, Softmax>>;
using Tokens = Sequential<Input<Shape<6>, std::int32_t>, Embedding<20, 4>, Flatten, Dense<3, Softmax>>;

using tpudsl_tests::make_toy;

struct crashed : std::runtime_error {
    crashed() : std::runtime_error("crashed") {}
};

/// Ends the fit, as a crash would (no on_train_end), after its `at`-th batch of this process, or at
/// the end of epoch `epoch` (0-based) when `at` is 0.
class crash : public Callback {
public:
    static crash after_batch(std::size_t at) { return crash(at, 0); }
    static crash at_epoch_end(std::size_t epoch) { return crash(0, epoch); }
    void
    on_train_batch_end(std::size_t, const Logs&, TrainingControl&) override
    {
        if (at_ != 0 && ++seen_ == at_)
            throw crashed{};
    }
    void
    on_epoch_end(std::size_t epoch, Logs&, TrainingControl&) override
    {
        if (at_ == 0 && epoch == epoch_)
            throw crashed{};
    }

private:
    crash(std::size_t at, std::size_t epoch) : at_(at), epoch_(epoch) {}
    std::size_t at_, epoch_, seen_ = 0;
};

template <class M>
std::vector<float>
weights_of(const M& m)
{
    return {m.parameters(), m.parameters() + M::sequential::param_buffer_size};
}

/// True when a and b hold the same bits.
bool
same_bits(const std::vector<float>& a, const std::vector<float>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// Counts the batches a fit trains.
class count_batches : public Callback {
public:
    explicit count_batches(std::size_t& n) : n_(&n) {}
    void on_train_batch_end(std::size_t, const Logs&, TrainingControl&) override { ++*n_; }

private:
    std::size_t* n_;
};

/// Runs `f` at the end of the fit's first epoch.
class at_first_epoch_end : public Callback {
public:
    explicit at_first_epoch_end(std::function<void()> f) : f_(std::move(f)) {}
    void
    on_epoch_end(std::size_t epoch, Logs&, TrainingControl&) override
    {
        if (epoch == 0)
            f_();
    }

private:
    std::function<void()> f_;
};

std::string
error_of(auto&& f)
{
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

} // namespace

TEST_CASE("BackupAndRestore: a fit that crashes anywhere and starts again ends with the bits of one that never "
          "stopped",
          "[backup]")
{
    // Shuffled arrays, Dropout, Nadam (whose momentum product is a state of its own), two replicas.
    using Model = Trainable<Drop, TpuStrategy<2>>;
    const auto d = make_toy(100, 1);
    auto compiled = [](Model& m) {
        m.compile(optimizers::Nadam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    };
    const FitOptions plain{.batch_size = 10, .epochs = 4, .verbose = 0};   // 10 batches per epoch

    Model reference(7);
    compiled(reference);
    const History full = reference.fit(d.x, d.y, plain);
    const auto expected = weights_of(reference);

    struct crash_point {
        const char* where;
        crash c;
        std::size_t resumed_epoch;   // the first epoch the second run trains
    };
    const crash_point points[] = {
        {"in epoch 1, before any backup", crash::after_batch(4), 0},
        {"in epoch 2", crash::after_batch(14), 1},
        {"at the end of epoch 3, before its backup", crash::at_epoch_end(2), 2},
        {"at the end of epoch 3, after its backup", crash::at_epoch_end(2), 3},
    };
    for (const auto& point : points) {
        SECTION(point.where)
        {
            scratch_dir dir("backup_arrays");
            const std::string backups = dir / "backups";
            const bool crash_first = point.resumed_epoch == 2;   // the crash comes before the backup
            {
                Model m(7);
                compiled(m);
                FitOptions o = plain;
                if (crash_first)
                    o.callbacks = {crash(point.c), BackupAndRestore(backups)};
                else
                    o.callbacks = {BackupAndRestore(backups), crash(point.c)};
                CHECK_THROWS_AS(m.fit(d.x, d.y, o), crashed);
            }
            CHECK(fs::exists(backups + "/backup.tpudsl") == (point.resumed_epoch > 0));
            Model m(7);
            compiled(m);
            FitOptions o = plain;
            BackupAndRestore backup(backups);
            o.callbacks = {backup};
            const History h = m.fit(d.x, d.y, o);
            CHECK(backup.restored() == (point.resumed_epoch > 0));
            REQUIRE(!h.epoch.empty());
            CHECK(h.epoch.front() == point.resumed_epoch);
            CHECK(h["loss"].back() == full["loss"].back());
            CHECK(m.iterations() == reference.iterations());
            CHECK(same_bits(weights_of(m), expected));
            CHECK_FALSE(fs::exists(backups));   // deleted after the completed fit, and its directory with it
        }
    }
}

TEST_CASE("BackupAndRestore with save_freq: a fit resumes at the very batch, with its epoch's running values, "
          "learning rate and seed",
          "[backup]")
{
    // 100 samples in batches of 16: 7 batches a pass; steps_per_epoch 5 runs the stream across passes;
    // the schedule halves the rate each epoch (it must not halve it twice on a resumed epoch).
    using Model = Trainable<Drop>;
    const auto d = make_toy(100, 2);
    auto compiled = [](Model& m) {
        m.compile(optimizers::Adam{.learning_rate = 0.01f}, losses::SparseCategoricalCrossentropy{},
                  metrics::SparseCategoricalAccuracy{});
    };
    auto options = [] {
        FitOptions o{.batch_size = 16, .epochs = 5, .verbose = 0, .steps_per_epoch = 5};
        o.callbacks = {LearningRateScheduler([](std::size_t, double lr) { return lr * 0.5; })};
        return o;
    };
    Model reference(3);
    compiled(reference);
    const History full = reference.fit(d.x, d.y, options());

    scratch_dir dir("backup_steps");
    {
        Model m(3);
        compiled(m);
        FitOptions o = options();
        o.callbacks.push_back(BackupAndRestore(dir / "b", {.save_freq = 3}));
        o.callbacks.push_back(crash::after_batch(13));   // backups after batches 3, 6, 9, 12: epoch 2, step 2
        CHECK_THROWS_AS(m.fit(d.x, d.y, o), crashed);
    }
    Model m(3);   // the backup's seed (another is refused): it draws the shuffles and the dropout masks
    compiled(m);
    FitOptions o = options();
    // [backup_and_restore]
    // Backs up every 3 batches into dir / "b"; restores what is there first, and removes it at the end.
    o.callbacks.push_back(BackupAndRestore(dir / "b", {.save_freq = 3}));
    const History h = m.fit(d.x, d.y, o);
    // [backup_and_restore]
    REQUIRE(h.epoch.size() == 3);
    CHECK(h.epoch.front() == 2);
    // the resumed epoch's loss and accuracy are over all of its batches, as in the run never stopped
    for (const char* key : {"loss", "sparse_categorical_accuracy", "lr"})
        for (std::size_t e = 0; e < 3; ++e)
            CHECK(h[key][e] == full[key][e + 2]);
    CHECK(m.learning_rate() == reference.learning_rate());
    CHECK(same_bits(weights_of(m), weights_of(reference)));
}

TEST_CASE("BackupAndRestore mid-epoch on a graph of two inputs and two outputs: each output's running loss goes on",
          "[backup][graph]")
{
    using Model = Trainable<seeds::TextAndMetadata, TpuStrategy<2>>;
    const auto d = seeds::make_text_and_metadata(150, 6);
    auto compiled = [](Model& m) {
        m.compile(optimizers::Adam{}, PerOutput{losses::SparseCategoricalCrossentropy{}, losses::MeanSquaredError{}}
                                          .loss_weights({1.0, 0.5}),
                  OnOutput<0, metrics::SparseCategoricalAccuracy>{});
    };
    const auto fit = [&](Model& m, std::vector<CallbackRef> callbacks) {
        return m.fit(std::tie(d.words, d.numbers), std::tie(d.topics, d.scores),
                     {.batch_size = 16, .epochs = 3, .verbose = 0, .callbacks = std::move(callbacks)});
    };
    Model reference(4);
    compiled(reference);
    const History full = fit(reference, {});
    scratch_dir dir("backup_graph");
    {
        Model m(4);
        compiled(m);
        CHECK_THROWS_AS(fit(m, {BackupAndRestore(dir / "b", {.save_freq = 4}), crash::after_batch(15)}), crashed);
    }
    Model m(4);
    compiled(m);
    const History h = fit(m, {BackupAndRestore(dir / "b", {.save_freq = 4})});   // epoch 2 of 10 batches, step 2
    REQUIRE(h.epoch.size() == 2);
    for (const char* key : {"loss", "score_loss", "topic_loss", "topic_sparse_categorical_accuracy"})
        for (std::size_t e = 0; e < 2; ++e)
            CHECK(h[key][e] == full[key][e + 1]);
    CHECK(same_bits(weights_of(m), weights_of(reference)));
}

TEST_CASE("BackupAndRestore on a Dataset: a shuffled, cached pipeline built again resumes to the same bits",
          "[backup][dataset]")
{
    using Model = Trainable<Tokens, TpuStrategy<2>>;
    using Ex = Example<Shape<6>, std::int32_t>;
    xt::xtensor<std::int32_t, 2> x(std::array<std::size_t, 2>{90, 6});
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{90});
    for (std::size_t i = 0; i < 90; ++i) {
        for (std::size_t j = 0; j < 6; ++j)
            x(i, j) = static_cast<std::int32_t>((i * 7 + j * 3) % 20);
        y(i) = static_cast<std::int32_t>(i % 3);
    }
    auto pipeline = [&] { return Dataset<Ex>::from_tensor_slices(x, y).shuffle(50, 4).batch<8>().prefetch().cache(); };
    auto compiled = [](Model& m) {
        m.compile(optimizers::Nadam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    };
    Model reference(5);
    compiled(reference);
    reference.fit(pipeline(), {.epochs = 4, .verbose = 0});

    for (const std::size_t save_freq : {std::size_t{0}, std::size_t{5}}) {
        DYNAMIC_SECTION("save_freq " << save_freq)
        {
            scratch_dir dir("backup_dataset");
            {
                Model m(5);
                compiled(m);
                FitOptions o{.epochs = 4, .verbose = 0};
                o.callbacks = {BackupAndRestore(dir / "b", {.save_freq = save_freq}), crash::after_batch(27)};
                CHECK_THROWS_AS(m.fit(pipeline(), o), crashed);   // 12 batches an epoch: in epoch 3
            }
            Model m(5);
            compiled(m);
            FitOptions o{.epochs = 4, .verbose = 0};
            o.callbacks = {BackupAndRestore(dir / "b", {.save_freq = save_freq})};
            const History h = m.fit(pipeline(), o);
            REQUIRE(!h.epoch.empty());
            CHECK(h.epoch.front() == 2);
            CHECK(same_bits(weights_of(m), weights_of(reference)));
        }
    }
}

TEST_CASE("BackupAndRestore refuses a backup of another fit or model, and a corrupt one, saying what differs",
          "[backup][errors]")
{
    using Model = Trainable<Drop>;
    const auto d = make_toy(40, 3);
    scratch_dir dir("backup_refusals");
    const std::string backups = dir / "b";
    const std::string file = backups + "/backup.tpudsl";
    {
        Model m(1);
        m.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{});
        FitOptions o{.batch_size = 10, .epochs = 3, .verbose = 0};
        o.callbacks = {BackupAndRestore(backups), crash::at_epoch_end(1)};
        CHECK_THROWS_AS(m.fit(d.x, d.y, o), crashed);
    }
    REQUIRE(fs::is_regular_file(file));
    const auto backup_bytes = fs::file_size(file);
    auto fit_again = [&](auto&& model, FitOptions o) {
        o.verbose = 0;
        o.callbacks = {BackupAndRestore(backups)};
        return error_of([&] { model.fit(d.x, d.y, o); });
    };

    Model other_batch(1);
    other_batch.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{});
    const auto before = weights_of(other_batch);
    CHECK(fit_again(other_batch, {.batch_size = 20, .epochs = 3}) ==
          "tpudsl::BackupAndRestore: the backup '" + file +
              "' was written by a fit over arrays of 40 samples in batches of 10, whole passes, shuffled; this fit "
              "is over arrays of 40 samples in batches of 20, whole passes, shuffled; remove it to start this fit "
              "from the beginning");
    CHECK(same_bits(weights_of(other_batch), before));   // left as it was

    Model other_optimizer(1);
    other_optimizer.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{});
    CHECK_THAT(fit_again(other_optimizer, {.batch_size = 10, .epochs = 3}),
               Catch::Contains("was written with the optimizer Adam (") &&
                   Catch::Contains("this model is compiled with SGD ("));

    Trainable<Sequential<Input<Shape<4>>, Dense<8, Relu>, Dense<3, Softmax>>> other_model(1);
    other_model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{});
    CHECK_THAT(fit_again(other_model, {.batch_size = 10, .epochs = 3}),
               Catch::Contains("was written by a model of another layout"));

    // A byte flipped in the weights, the file cut short: refused, never trained on.
    std::vector<char> bytes(backup_bytes);
    std::ifstream(file, std::ios::binary).read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    auto write = [&](std::size_t n, std::size_t flip) {
        std::vector<char> b(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
        if (flip < n)
            b[flip] ^= 0x10;
        std::ofstream(file, std::ios::binary | std::ios::trunc).write(b.data(), static_cast<std::streamsize>(n));
    };
    Model m(1);
    m.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{});
    write(bytes.size(), bytes.size() / 2);
    CHECK(fit_again(m, {.batch_size = 10, .epochs = 3}) ==
          "tpudsl::BackupAndRestore: the backup '" + file + "' is truncated or corrupt (checksum mismatch)");
    write(bytes.size() - 100, bytes.size());
    CHECK(fit_again(m, {.batch_size = 10, .epochs = 3}) ==
          "tpudsl::BackupAndRestore: the backup '" + file + "' is truncated or corrupt (checksum mismatch)");
    write(4, bytes.size());
    CHECK(fit_again(m, {.batch_size = 10, .epochs = 3}) ==
          "tpudsl::BackupAndRestore: the backup '" + file + "' is not a tpudsl training state (bad magic)");

    // backup_dir names a file: refused with its name
    std::ofstream(dir / "plain_file") << "x";
    Model n(1);
    n.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{});
    FitOptions o{.batch_size = 10, .epochs = 1, .verbose = 0};
    o.callbacks = {BackupAndRestore(dir / "plain_file")};
    CHECK_THAT(error_of([&] { n.fit(d.x, d.y, o); }), Catch::Contains("'" + (dir / "plain_file") + "'"));
    CHECK_THROWS_AS(BackupAndRestore(""), std::invalid_argument);
}

TEST_CASE("BackupAndRestore removes what killed writers left, keeps the backup when asked, and a finished "
          "backup trains no more",
          "[backup]")
{
    using Model = Trainable<Drop>;
    const auto d = make_toy(40, 4);
    scratch_dir dir("backup_files");
    const std::string backups = dir / "b";
    fs::create_directories(backups);
    // a temporary of a process that no longer runs (a writer killed mid-write), one of a live process
    // (this one: a writer at work), and a file of the user's
    const std::string stale = backups + "/backup.tpudsl.tmp.2147483646.0";
    const std::string live = backups + "/backup.tpudsl.tmp." + std::to_string(::getpid()) + ".99";
    std::ofstream(stale) << "partial";
    std::ofstream(live) << "partial";
    std::ofstream(backups + "/notes.txt") << "mine";

    Model m(2);
    m.compile(optimizers::RMSprop{}, losses::SparseCategoricalCrossentropy{});
    FitOptions o{.batch_size = 8, .epochs = 2, .verbose = 0};
    o.callbacks = {BackupAndRestore(backups, {.delete_checkpoint = false})};
    m.fit(d.x, d.y, o);
    CHECK_FALSE(fs::exists(stale));
    CHECK(fs::exists(live));
    CHECK(fs::exists(backups + "/notes.txt"));
    REQUIRE(fs::exists(backups + "/backup.tpudsl"));   // kept: delete_checkpoint = false

    // Its backup stands after the last epoch: a fit started again restores it and has nothing left to do.
    const auto trained = weights_of(m);
    Model again(2);
    again.compile(optimizers::RMSprop{}, losses::SparseCategoricalCrossentropy{});
    o.callbacks = {BackupAndRestore(backups)};
    const History h = again.fit(d.x, d.y, o);
    CHECK(h.epoch.empty());
    CHECK(same_bits(weights_of(again), trained));
    CHECK(again.iterations() == m.iterations());
    CHECK_FALSE(fs::exists(backups + "/backup.tpudsl"));   // deleted after the completed fit
    CHECK(fs::exists(backups + "/notes.txt"));             // the rest is the user's, and so the directory stays
    fs::remove(live);
}

TEST_CASE("BackupAndRestore refuses a backup of a model built with another seed, or one that has done more epochs "
          "than the fit asks for",
          "[backup][errors]")
{
    using Model = Trainable<Drop>;
    const auto d = make_toy(40, 5);
    auto compiled = [](Model& m) { m.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}); };
    scratch_dir dir("backup_run_settings");
    const std::string backups = dir / "b";
    const std::string file = backups + "/backup.tpudsl";
    {
        Model m(1);
        compiled(m);
        FitOptions o{.batch_size = 10, .epochs = 3, .verbose = 0};
        o.callbacks = {BackupAndRestore(backups), crash::at_epoch_end(1)};
        CHECK_THROWS_AS(m.fit(d.x, d.y, o), crashed);   // its backup has done epochs 1 and 2
    }
    REQUIRE(fs::is_regular_file(file));
    auto fit_again = [&](Model& m, std::size_t epochs) {
        FitOptions o{.batch_size = 10, .epochs = epochs, .verbose = 0};
        o.callbacks = {BackupAndRestore(backups)};
        return error_of([&] { m.fit(d.x, d.y, o); });
    };

    Model other_seed(7);   // `--seed 7` against a backup of seed 1
    compiled(other_seed);
    const auto seven = weights_of(other_seed);
    CHECK(fit_again(other_seed, 3) ==
          "tpudsl::BackupAndRestore: the backup '" + file +
              "' was written by a model built with seed 1; this model was built with seed 7: build it with seed 1 "
              "to resume that run; remove it to start this fit from the beginning");
    CHECK(same_bits(weights_of(other_seed), seven));   // left as it was

    Model fewer(1);   // `--epochs 1` against a backup that has done 2
    compiled(fewer);
    const auto one = weights_of(fewer);
    CHECK(fit_again(fewer, 1) ==
          "tpudsl::BackupAndRestore: the backup '" + file +
              "' has done 2 epochs of a fit of 3 epochs; this fit asks for epochs=1, fewer: fit with epochs=3 to "
              "finish that run (or more to go on); remove it to start this fit from the beginning");
    CHECK(same_bits(weights_of(fewer), one));
    CHECK(fewer.iterations() == 0);
    CHECK(fs::is_regular_file(file));   // never deleted by a refused fit
}

TEST_CASE("BackupAndRestore: a fit asking for more epochs than the backup's fit resumes it, as Keras does, to the "
          "bits of a run never stopped, and says so",
          "[backup]")
{
    using Model = Trainable<Drop>;
    const auto d = make_toy(40, 6);
    auto compiled = [](Model& m) { m.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}); };
    Model reference(4);
    compiled(reference);
    reference.fit(d.x, d.y, {.batch_size = 10, .epochs = 5, .verbose = 0});

    scratch_dir dir("backup_more_epochs");
    const std::string backups = dir / "b";
    {
        Model m(4);
        compiled(m);
        FitOptions o{.batch_size = 10, .epochs = 3, .verbose = 0};
        o.callbacks = {BackupAndRestore(backups), crash::at_epoch_end(1)};
        CHECK_THROWS_AS(m.fit(d.x, d.y, o), crashed);
    }
    Model m(4);
    compiled(m);
    std::ostringstream out;
    FitOptions o{.batch_size = 10, .epochs = 5, .verbose = 2, .out = &out};
    o.callbacks = {BackupAndRestore(backups)};
    const History h = m.fit(d.x, d.y, o);
    REQUIRE(h.epoch.size() == 3);
    CHECK(h.epoch.front() == 2);
    CHECK(same_bits(weights_of(m), weights_of(reference)));
    CHECK_THAT(out.str(), Catch::StartsWith("tpudsl::BackupAndRestore: resuming the backup '" + backups +
                                            "/backup.tpudsl' of a fit of 3 epochs after its epoch 2; this fit runs "
                                            "to epoch 5\n"));
}

TEST_CASE("BackupAndRestore: a second fit on a backup directory in use is refused at its start, and the first goes "
          "on to its bits",
          "[backup][errors]")
{
    using Model = Trainable<Drop>;
    const auto d = make_toy(40, 7);
    auto compiled = [](Model& m) { m.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}); };
    const FitOptions plain{.batch_size = 10, .epochs = 3, .verbose = 0};
    Model reference(2);
    compiled(reference);
    reference.fit(d.x, d.y, plain);

    scratch_dir dir("backup_lock");
    const std::string backups = dir / "b";
    std::string second_error;
    std::size_t second_batches = 0;
    auto second_fit = [&] {   // another run given the same --backup-dir while the first runs
        Model other(2);
        compiled(other);
        FitOptions o = plain;
        o.callbacks = {BackupAndRestore(backups), count_batches(second_batches)};
        second_error = error_of([&] { other.fit(d.x, d.y, o); });
    };
    Model first(2);
    compiled(first);
    FitOptions o = plain;
    o.callbacks = {BackupAndRestore(backups), at_first_epoch_end(second_fit)};
    first.fit(d.x, d.y, o);
    CHECK(second_error == "tpudsl::BackupAndRestore: the backup directory '" + backups +
                              "' is in use by another fit, which holds its lock '" + backups +
                              "/backup.lock'; give each fit its own backup_dir, or wait for that one to end");
    CHECK(second_batches == 0);
    CHECK(same_bits(weights_of(first), weights_of(reference)));
    CHECK_FALSE(fs::exists(backups));   // the backup, its lock and the directory removed at the end

    // Once the first has ended, the directory is free; a fit that crashed frees it when its callback ends.
    Model again(2);
    compiled(again);
    FitOptions o2 = plain;
    o2.callbacks = {BackupAndRestore(backups)};
    again.fit(d.x, d.y, o2);
    CHECK(same_bits(weights_of(again), weights_of(reference)));
    {
        Model crashing(2);
        compiled(crashing);
        FitOptions o3 = plain;
        o3.callbacks = {BackupAndRestore(backups), crash::at_epoch_end(0)};
        CHECK_THROWS_AS(crashing.fit(d.x, d.y, o3), crashed);
    }
    Model resumed(2);
    compiled(resumed);
    resumed.fit(d.x, d.y, o2);
    CHECK(same_bits(weights_of(resumed), weights_of(reference)));
}

TEST_CASE("BackupAndRestore: a backup directory that takes no file is refused before the first step",
          "[backup][errors]")
{
    using Model = Trainable<Drop>;
    const auto d = make_toy(40, 8);
    Model m(1);
    m.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{});
    std::size_t batches = 0;
    FitOptions o{.batch_size = 10, .epochs = 2, .verbose = 0};
    // /proc/self is a directory in which no file can be created, as root too.
    o.callbacks = {BackupAndRestore("/proc/self"), count_batches(batches)};
    CHECK_THROWS_WITH(m.fit(d.x, d.y, o),
                      Catch::StartsWith("tpudsl::BackupAndRestore: cannot write into the directory '/proc/self' (the "
                                        "backup directory): "));
    CHECK(batches == 0);
}

TEST_CASE("BackupAndRestore mid-epoch with a schedule, norm clipping, a moving average, sample weights and a "
          "metric of its own state resumes to the same bits",
          "[backup]")
{
    // A Scheduled Nadam (the schedule a function of the iterations, the momentum product the wrapped
    // optimizer's state), clipnorm (the fused pass in three parts), the moving average (a slot of its
    // own, taken at the end), weighted samples and a top-k accuracy, two replicas.
    using Model = Trainable<Drop, TpuStrategy<2>>;
    const auto d = make_toy(100, 4);
    std::vector<float> w(100);
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = 0.5f + static_cast<float>(i % 3);
    auto compiled = [](Model& m) {
        m.compile(optimizers::Scheduled{optimizers::Nadam{.options = {.clipnorm = 0.5f, .use_ema = true,
                                                                      .ema_momentum = 0.9f}},
                                        optimizers::schedules::CosineDecay{.initial_learning_rate = 0.02f,
                                                                           .decay_steps = 30}},
                  losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{},
                  metrics::SparseTopKCategoricalAccuracy<2>{});
    };
    const FitOptions plain{.batch_size = 16, .epochs = 4, .verbose = 0, .sample_weight = w};
    Model reference(5);
    compiled(reference);
    const History full = reference.fit(d.x, d.y, plain);

    scratch_dir dir("backup_scheduled");
    {
        Model m(5);
        compiled(m);
        FitOptions o = plain;
        o.callbacks = {BackupAndRestore(dir / "b", {.save_freq = 4}), crash::after_batch(17)};
        CHECK_THROWS_AS(m.fit(d.x, d.y, o), crashed);
    }
    Model m(5);
    compiled(m);
    FitOptions o = plain;
    BackupAndRestore backup(dir / "b", {.save_freq = 4});
    o.callbacks = {backup};
    const History h = m.fit(d.x, d.y, o);
    CHECK(backup.restored());
    REQUIRE(h.epoch.size() == 2);   // 7 batches an epoch: the backup after batch 16 stands in epoch 3
    for (const char* key : {"loss", "sparse_categorical_accuracy", "sparse_top_k_categorical_accuracy"})
        for (std::size_t e = 0; e < 2; ++e)
            CHECK(h[key][e] == full[key][e + 2]);
    CHECK(m.learning_rate() == reference.learning_rate());
    CHECK(same_bits(weights_of(m), weights_of(reference)));
}
