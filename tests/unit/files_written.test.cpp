// Files tpudsl writes (weights, ModelCheckpoint, CSVLogger): a save never leaves a partial temporary
// behind, says why it failed, never replaces what is not a regular file, and concurrent saves to one
// path never corrupt it. ModelCheckpoint never replaces a checkpoint with non-finite weights. The
// weights loader refuses what is not a weights file of this model, without hanging on a FIFO.
//
// The failures are chosen so that they happen as root too: a parent that is a regular file, a
// target that is a directory or a FIFO, and a write beyond the process' file size limit
// (RLIMIT_FSIZE, which root is held to as well).
#include "scratch_dir.hpp"

#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace tpudsl;
namespace fs = std::filesystem;
using tpudsl_tests::scratch_dir;

namespace {

using Tiny = Sequential<Input<Shape<2>>, Dense<2, Softmax>>;
using Wide = Sequential<Input<Shape<128>>, Dense<128>>;   // 16,512 floats: a save takes a while

/// A fresh directory for one test, removed with what it holds.
/// The names in `dir` that look like a writer's temporary ("<name>.tmp...").
std::vector<std::string>
temporaries(const fs::path& dir)
{
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().find(".tmp") != std::string::npos)
            out.push_back(e.path().filename().string());
    return out;
}

template <class Model>
std::vector<float>
pattern(float base)
{
    std::vector<float> w(Model::param_buffer_size);
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = base + static_cast<float>(i) * 0.25f;
    return w;
}

template <class Model>
std::vector<float>
load(const std::string& path)
{
    std::vector<float> w(Model::param_buffer_size, -1.0f);
    load_weights<Model>(path, w.data());
    return w;
}

std::string
read_text(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// What `f` throws (its what()), or "" if it returns.
std::string
error_of(const std::function<void()>& f)
{
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

/// Runs `f` in a child process killed after `seconds`: true if it returned true in time. Used where
/// the failure being tested is a hang (opening a FIFO waits for the other end).
bool
in_child_within(unsigned seconds, const std::function<bool()>& f)
{
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::alarm(seconds);
        bool ok = false;
        try {
            ok = f();
        } catch (...) {
        }
        ::_exit(ok ? 0 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// Holds the process' file size limit at `bytes` (SIGXFSZ ignored, so a write past it fails with
/// EFBIG) until it goes out of scope.
struct file_size_limit {
    rlimit old{};
    void (*old_handler)(int);
    explicit file_size_limit(rlim_t bytes) : old_handler(std::signal(SIGXFSZ, SIG_IGN))
    {
        ::getrlimit(RLIMIT_FSIZE, &old);
        rlimit lim = old;
        lim.rlim_cur = bytes;
        ::setrlimit(RLIMIT_FSIZE, &lim);
    }
    ~file_size_limit()
    {
        ::setrlimit(RLIMIT_FSIZE, &old);
        std::signal(SIGXFSZ, old_handler);
    }
};

/// A stand-in for the model that saves its weights for real.
struct saving_control : TrainingControl {
    double lr = 0.1;
    std::vector<float> weights = pattern<Tiny>(1.0f);
    [[nodiscard]] double learning_rate() const override { return lr; }
    void set_learning_rate(double v) override { lr = v; }
    void save_weights(const std::string& p) const override { tpudsl::save_weights<Tiny>(p, weights.data()); }
    [[nodiscard]] std::vector<float> get_weights() const override { return weights; }
    void set_weights(const std::vector<float>& w) override { weights = w; }
};

void
epoch_end(Callback& cb, TrainingControl& c, std::size_t epoch, double val_loss)
{
    Logs logs;
    logs.set("val_loss", val_loss);
    cb.on_epoch_end(epoch, logs, c);
}

std::size_t
count(const std::string& text, const std::string& what)
{
    std::size_t n = 0;
    for (auto i = text.find(what); i != std::string::npos; i = text.find(what, i + 1))
        ++n;
    return n;
}

} // namespace

TEST_CASE("save_weights refuses a directory or a FIFO as its target and leaves it as it is", "[io][files]")
{
    scratch_dir dir("files_not_regular");
    const auto w = pattern<Tiny>(0.5f);

    fs::create_directory(dir / "weights.bin");
    CHECK(error_of([&] { save_weights<Tiny>(dir / "weights.bin", w.data()); }) ==
          "tpudsl::save_weights: '" + (dir / "weights.bin") +
              "' is a directory, not a regular file; it is left as it is (give the path of a file)");
    CHECK(fs::is_directory(dir.path / "weights.bin"));

    REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
    CHECK_THAT(error_of([&] { save_weights<Tiny>(dir / "fifo", w.data()); }),
               Catch::Contains("'" + (dir / "fifo") + "' is a FIFO, not a regular file"));
    CHECK(fs::is_fifo(dir.path / "fifo"));

    // a symbolic link to a directory is the directory
    fs::create_directory_symlink(dir.path / "weights.bin", dir.path / "link");
    CHECK_THAT(error_of([&] { save_weights<Tiny>(dir / "link", w.data()); }), Catch::Contains("is a directory"));
    CHECK(fs::is_symlink(dir.path / "link"));
    CHECK(temporaries(dir.path).empty());
}

TEST_CASE("a save that cannot be made says why (errno) and names the path", "[io][files]")
{
    scratch_dir dir("files_errno");
    const auto w = pattern<Tiny>(0.5f);
    std::ofstream(dir / "plain") << "a regular file";

    // the parent of the target is a regular file: ENOTDIR, as root too
    const std::string under_file = dir / "plain/weights.bin";
    try {
        save_weights<Tiny>(under_file, w.data());
        FAIL("saved under a regular file");
    } catch (const std::system_error& e) {
        CHECK(e.code() == std::errc::not_a_directory);
        CHECK(std::string(e.what()) == "tpudsl::save_weights: cannot save to '" + under_file + "': Not a directory");
    }
    // the parent does not exist: ENOENT
    try {
        save_weights<Tiny>(dir / "missing/weights.bin", w.data());
        FAIL("saved into a missing directory");
    } catch (const std::system_error& e) {
        CHECK(e.code() == std::errc::no_such_file_or_directory);
        CHECK_THAT(e.what(), Catch::StartsWith("tpudsl::save_weights: cannot create the temporary file '" +
                                              (dir / "missing/weights.bin.tmp.")) &&
                                 Catch::EndsWith("' to write '" + (dir / "missing/weights.bin") +
                                                 "': No such file or directory"));
    }
    CHECK(error_of([&] { save_weights<Tiny>("", w.data()); }) == "tpudsl::save_weights: the path is empty");
    CHECK(temporaries(dir.path).empty());
}

TEST_CASE("a write that fails midway removes its temporary and keeps the previous file", "[io][files]")
{
    scratch_dir dir("files_midway");
    const std::string path = dir / "weights.bin";
    const auto before = pattern<Wide>(1.0f);
    save_weights<Wide>(path, before.data());
    const auto after = pattern<Wide>(2.0f);
    std::string what;
    {
        file_size_limit limit(1000);   // the file is 66,088 bytes: the write stops with EFBIG
        what = error_of([&] { save_weights<Wide>(path, after.data()); });
    }
    CHECK_THAT(what, Catch::StartsWith("tpudsl::save_weights: writing '" + path + ".tmp.") &&
                         Catch::EndsWith("', the temporary file for '" + path + "', failed: File too large"));
    CHECK(temporaries(dir.path).empty());
    CHECK(load<Wide>(path) == before);
}

TEST_CASE("write_file replaces a text file whole, or leaves the previous one and no temporary", "[io][files]")
{
    scratch_dir dir("files_write_file");
    const std::string path = dir / "table.csv";
    auto read = [&] {
        std::ifstream in(path);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    write_file(path, "a,b\n1,2\n");
    CHECK(read() == "a,b\n1,2\n");
    write_file(path, "c\n");   // shorter: nothing of the old content is left behind
    CHECK(read() == "c\n");

    const std::string big(100000, 'x');
    std::string what;
    {
        file_size_limit limit(1000);
        what = error_of([&] { write_file(path, big, "plot"); });
    }
    CHECK_THAT(what, Catch::StartsWith("plot: writing '" + path + ".tmp.") && Catch::EndsWith("failed: File too large"));
    CHECK(read() == "c\n");
    fs::create_directory(dir / "dir.csv");
    CHECK_THAT(error_of([&] { write_file(dir / "dir.csv", "x"); }),
               Catch::StartsWith("tpudsl::write_file: '" + (dir / "dir.csv") + "' is a directory"));
    CHECK(temporaries(dir.path).empty());
}

TEST_CASE("saves from several threads and processes to one path never corrupt it", "[io][files][concurrency]")
{
    scratch_dir dir("files_concurrent");
    const std::string path = dir / "weights.bin";
    constexpr int writers = 4, saves = 25;
    std::vector<std::vector<float>> sets;
    for (int t = 0; t <= writers; ++t)
        sets.push_back(pattern<Wide>(static_cast<float>(t) * 1000.0f));
    save_weights<Wide>(path, sets[0].data());

    // a second process saves set 0 again and again meanwhile (forked before any thread starts)
    const pid_t child = ::fork();
    if (child == 0) {
        bool ok = true;
        for (int i = 0; i < saves && ok; ++i)
            ok = error_of([&] { save_weights<Wide>(path, sets[0].data()); }).empty();
        ::_exit(ok ? 0 : 1);
    }

    std::atomic<bool> done{false};
    std::atomic<int> failures{0}, bad_loads{0}, loads{0};
    std::vector<std::thread> threads;
    for (int t = 1; t <= writers; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < saves; ++i)
                if (!error_of([&] { save_weights<Wide>(path, sets[t].data()); }).empty())
                    ++failures;
        });
    std::thread reader([&] {
        while (!done) {
            std::vector<float> got(Wide::param_buffer_size);
            if (!error_of([&] { load_weights<Wide>(path, got.data()); }).empty() ||
                std::find(sets.begin(), sets.end(), got) == sets.end())
                ++bad_loads;
            ++loads;
        }
    });
    for (auto& th : threads)
        th.join();
    int status = 0;
    ::waitpid(child, &status, 0);
    done = true;
    reader.join();

    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(failures == 0);
    CHECK(bad_loads == 0);
    INFO(loads << " loads while saving");
    CHECK(loads > 0);
    const auto final_set = load<Wide>(path);
    CHECK(std::find(sets.begin(), sets.end(), final_set) != sets.end());
    CHECK(temporaries(dir.path).empty());
}

TEST_CASE("two writers on one path killed at random moments never leave an unreadable file",
          "[io][files][concurrency]")
{
    scratch_dir dir("files_killed");
    const std::string path = dir / "weights.bin";
    const std::vector<std::vector<float>> sets = {pattern<Wide>(0.0f), pattern<Wide>(1000.0f), pattern<Wide>(2000.0f)};
    constexpr int rounds = 20;
    int left_temporary = 0, ended_as_child = 0;

    for (int round = 0; round < rounds; ++round) {
        std::mt19937 rng(static_cast<std::mt19937::result_type>(round + 1));   // the same moments every run
        // 0.2 to 20 ms before the first kill, then up to 5 ms more before the second, either child first
        const auto first_kill = std::chrono::microseconds(200 + rng() % 19800);
        const auto second_kill = std::chrono::microseconds(rng() % 5000);
        const int first = static_cast<int>(rng() % 2);
        save_weights<Wide>(path, sets[0].data());

        // each child saves its own set again and again until it is killed (it exits 1 only if a save fails)
        pid_t children[2] = {-1, -1};
        for (int c = 0; c < 2; ++c) {
            children[c] = ::fork();
            if (children[c] == 0) {
                for (;;)
                    if (!error_of([&] { save_weights<Wide>(path, sets[static_cast<std::size_t>(c) + 1].data()); })
                             .empty())
                        ::_exit(1);
            }
        }
        std::this_thread::sleep_for(first_kill);
        int status[2] = {0, 0};
        for (int k = 0; k < 2; ++k) {
            const int c = k == 0 ? first : 1 - first;
            if (k == 1)
                std::this_thread::sleep_for(second_kill);
            if (children[c] > 0) {   // never kill(-1): that would be every process we may signal
                ::kill(children[c], SIGKILL);
                ::waitpid(children[c], &status[c], 0);
            }
        }

        INFO("round " << round << ": kills after " << first_kill.count() << " us and " << second_kill.count()
                      << " us more");
        REQUIRE(children[0] > 0);
        REQUIRE(children[1] > 0);
        CHECK((WIFSIGNALED(status[0]) && WTERMSIG(status[0]) == SIGKILL));   // not a failed save
        CHECK((WIFSIGNALED(status[1]) && WTERMSIG(status[1]) == SIGKILL));
        std::vector<float> got(Wide::param_buffer_size);
        REQUIRE(error_of([&] { load_weights<Wide>(path, got.data()); }) == "");
        const auto which = std::find(sets.begin(), sets.end(), got);
        REQUIRE(which != sets.end());
        if (which != sets.begin())
            ++ended_as_child;

        // a temporary left behind is a kill that landed between creating it and renaming it
        const auto stale = temporaries(dir.path);
        if (!stale.empty())
            ++left_temporary;
        for (const auto& name : stale)
            fs::remove(dir.path / name);
    }

    INFO(left_temporary << " of " << rounds << " rounds were killed mid-write (left a temporary), " << ended_as_child
                        << " ended with a child's save");
    CHECK(left_temporary > 0);
    CHECK(temporaries(dir.path).empty());
}

TEST_CASE("a replaced file keeps its permissions, and a symbolic link to it stays a link", "[io][files]")
{
    scratch_dir dir("files_keep");
    const std::string path = dir / "weights.bin";
    save_weights<Tiny>(path, pattern<Tiny>(1.0f).data());
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
    save_weights<Tiny>(path, pattern<Tiny>(2.0f).data());
    CHECK((fs::status(path).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));

    fs::create_symlink(path, dir.path / "latest.bin");
    save_weights<Tiny>(dir / "latest.bin", pattern<Tiny>(3.0f).data());
    CHECK(fs::is_symlink(dir.path / "latest.bin"));
    CHECK(load<Tiny>(path) == pattern<Tiny>(3.0f));
    CHECK(temporaries(dir.path).empty());
}

TEST_CASE("load_weights refuses what is not this model's weights file, and says why it cannot open one",
          "[io][files]")
{
    scratch_dir dir("files_load");
    const std::string path = dir / "weights.bin";
    const auto w = pattern<Tiny>(1.0f);
    save_weights<Tiny>(path, w.data());

    // bytes after the checksum were ignored
    std::ofstream(path, std::ios::app | std::ios::binary) << "junk";
    std::vector<float> got(Tiny::param_buffer_size, -1.0f);
    const std::size_t file_bytes = 32 + 4 * Tiny::param_buffer_size + 8;
    CHECK(error_of([&] { load_weights<Tiny>(path, got.data()); }) ==
          "tpudsl::load_weights: '" + path + "' has 4 bytes after its checksum; a weights file of this model is " +
              std::to_string(file_bytes) + " bytes");
    CHECK(got == std::vector<float>(Tiny::param_buffer_size, -1.0f));

    CHECK(error_of([&] { load_weights<Tiny>(dir / "missing.bin", got.data()); }) ==
          "tpudsl::load_weights: cannot open '" + (dir / "missing.bin") + "': No such file or directory");
    CHECK(error_of([&] { load_weights<Tiny>(dir.path.string(), got.data()); }) ==
          "tpudsl::load_weights: '" + dir.path.string() +
              "' is a directory, not a regular file; a weights file is a regular file");

    // a FIFO: opening it for reading waited for a writer forever
    REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
    CHECK(in_child_within(5, [&] {
        std::vector<float> g(Tiny::param_buffer_size);
        return error_of([&] { load_weights<Tiny>(dir / "fifo", g.data()); }).find("is a FIFO, not a regular file") !=
               std::string::npos;
    }));
}

TEST_CASE("CSVLogger refuses a directory or a FIFO and says why a write failed", "[io][files][callbacks]")
{
    scratch_dir dir("files_csv");
    saving_control c;
    fs::create_directory(dir / "log.csv");
    CSVLogger to_dir(dir / "log.csv");
    CHECK(error_of([&] { to_dir.on_train_begin(c); }) ==
          "tpudsl::CSVLogger: '" + (dir / "log.csv") +
              "' is a directory, not a regular file; it is left as it is (give the path of a file)");

    REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
    CHECK(in_child_within(5, [&] {
        saving_control cc;
        CSVLogger to_fifo(dir / "fifo");
        return error_of([&] { to_fifo.on_train_begin(cc); }).find("is a FIFO, not a regular file") !=
               std::string::npos;
    }));

    const std::string path = dir / "ok.csv";
    CSVLogger csv(path);
    csv.on_train_begin(c);
    Logs logs;
    logs.set("loss", 0.5);
    logs.set("accuracy", 0.25);
    csv.on_epoch_end(0, logs, c);
    std::string what;
    {
        file_size_limit limit(fs::file_size(path));   // the next row cannot be written
        what = error_of([&] { csv.on_epoch_end(1, logs, c); });
    }
    CHECK(what == "tpudsl::CSVLogger: writing '" + path + "' failed: File too large");
    csv.on_train_end(c);
    CHECK(read_text(path) == "epoch,accuracy,loss\n0,0.25,0.5\n");

    // append: the header is not written again
    CSVLogger more(path, ',', true);
    more.on_train_begin(c);
    more.on_epoch_end(1, logs, c);
    more.on_train_end(c);
    CHECK(read_text(path) == "epoch,accuracy,loss\n0,0.25,0.5\n1,0.25,0.5\n");
}

TEST_CASE("ModelCheckpoint never replaces a checkpoint with non-finite weights, and says so once",
          "[io][files][callbacks][non_finite]")
{
    scratch_dir dir("files_checkpoint");
    const std::string path = dir / "ck.bin";
    std::ostringstream out;
    saving_control c;
    ModelCheckpoint every(path, {}, out);
    every.on_train_begin(c);
    epoch_end(every, c, 0, 0.5);
    const auto good = c.weights;
    REQUIRE(load<Tiny>(path) == good);

    c.weights[3] = std::numeric_limits<float>::quiet_NaN();
    epoch_end(every, c, 1, 0.4);
    c.weights[3] = std::numeric_limits<float>::infinity();
    epoch_end(every, c, 2, 0.3);
    CHECK(load<Tiny>(path) == good);
    CHECK(out.str() == "WARNING: tpudsl::ModelCheckpoint: epoch 2: the weights hold nan (parameter 3); not saving "
                       "to '" + path + "' (a file already there is kept as it is). The training has diverged: lower "
                       "the learning rate, or add TerminateOnNaN to stop at the first non-finite loss. Said once "
                       "per fit.\n");

    // finite again: saved; a new fit warns again
    c.weights[3] = 7.0f;
    epoch_end(every, c, 3, 0.2);
    CHECK(load<Tiny>(path) == c.weights);
    every.on_train_begin(c);
    c.weights[0] = -std::numeric_limits<float>::infinity();
    epoch_end(every, c, 0, 0.2);
    CHECK(count(out.str(), "WARNING: tpudsl::ModelCheckpoint") == 2);
    CHECK_THAT(out.str(), Catch::Contains("epoch 1: the weights hold -inf (parameter 0)"));
    CHECK(temporaries(dir.path).empty());
}

TEST_CASE("ModelCheckpoint: a directory that takes no file is refused at the start of fit, not after its first "
          "epoch",
          "[io][files][callbacks]")
{
    scratch_dir dir("files_checkpoint_dir");
    std::ofstream(dir / "plain") << "a regular file";
    saving_control c;
    ModelCheckpoint under_file(dir / "plain/ck.bin");
    CHECK_THROWS_WITH(under_file.on_train_begin(c), "tpudsl::ModelCheckpoint: cannot write into the directory '" +
                                                        (dir / "plain") + "' (the checkpoints '" +
                                                        (dir / "plain/ck.bin") + "' go there): Not a directory");
    ModelCheckpoint missing(dir / "missing/ck-{epoch:02d}.bin");
    try {
        missing.on_train_begin(c);
        FAIL("a missing directory was taken");
    } catch (const std::system_error& e) {
        CHECK(e.code() == std::errc::no_such_file_or_directory);
        CHECK_THAT(e.what(), Catch::Contains("'" + (dir / "missing") + "'"));
    }
    ModelCheckpoint fine(dir / "ck-{epoch}.bin");
    CHECK_NOTHROW(fine.on_train_begin(c));
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(dir.path))
        left.push_back(e.path().filename().string());
    CHECK(left == std::vector<std::string>{"plain"});   // the check leaves nothing behind
}

TEST_CASE("ModelCheckpoint with save_best_only never takes a NaN monitored value as the best", "[callbacks][non_finite]")
{
    scratch_dir dir("files_best");
    const std::string path = dir / "best.bin";
    std::ostringstream out;
    saving_control c;
    ModelCheckpoint best(path, {.save_best_only = true}, out);
    best.on_train_begin(c);
    epoch_end(best, c, 0, 0.5);
    REQUIRE(load<Tiny>(path) == c.weights);

    c.weights = pattern<Tiny>(2.0f);   // finite weights, but the monitored loss is NaN
    epoch_end(best, c, 1, std::numeric_limits<double>::quiet_NaN());
    epoch_end(best, c, 2, std::numeric_limits<double>::quiet_NaN());
    CHECK(load<Tiny>(path) == pattern<Tiny>(1.0f));
    CHECK(count(out.str(), "WARNING") == 1);
    CHECK_THAT(out.str(), Catch::Contains("epoch 2: val_loss is nan, which is never the best; not saving to '" + path));

    c.weights = pattern<Tiny>(3.0f);   // 0.45 improves on 0.5: NaN did not become the best
    epoch_end(best, c, 3, 0.45);
    CHECK(load<Tiny>(path) == pattern<Tiny>(3.0f));
}

TEST_CASE("fit with ModelCheckpoint: a model whose weights went non-finite keeps its last good checkpoint",
          "[io][files][callbacks][non_finite]")
{
    scratch_dir dir("files_fit");
    const std::string path = dir / "model.bin";
    Trainable<Tiny> model(3);
    model.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{});
    xt::xtensor<float, 2> x = {{0.0f, 1.0f}, {1.0f, 0.0f}};
    xt::xtensor<std::int32_t, 1> y = {1, 0};
    std::ostringstream out;
    ModelCheckpoint ck(path, {}, out);
    model.fit(x, y, {.verbose = 0, .callbacks = {ck}});
    std::vector<float> good(model.parameters(), model.parameters() + Tiny::param_buffer_size);
    REQUIRE(load<Tiny>(path) == good);

    model.parameters()[0] = std::numeric_limits<float>::quiet_NaN();
    model.fit(x, y, {.verbose = 0, .callbacks = {ck}});
    CHECK(load<Tiny>(path) == good);
    CHECK_THAT(out.str(), Catch::Contains("WARNING: tpudsl::ModelCheckpoint: epoch 1: the weights hold nan"));
}
