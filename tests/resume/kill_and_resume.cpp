// kill_and_resume: a training program killed with SIGKILL and restarted with the same command line
// must end with the weights of a run that was never interrupted, bit for bit.
//
//   kill_and_resume --scratch DIR [--timeout S] -- PROGRAM ARGS...
//
// PROGRAM is a seed example; ARGS must train at least 3 epochs (its "Epoch k/E" lines are read). In DIR
// (emptied first) it:
//   1. runs PROGRAM ARGS --save-weights DIR/ref.weights, uninterrupted, and times it; then
//      PROGRAM ARGS --load-weights DIR/ref.weights --epochs 0, which must train nothing and print the
//      reference's test accuracy again;
//   2. for each kill plan, runs PROGRAM ARGS --backup-dir B --save-weights out.weights, kills it with
//      SIGKILL at the plan's moments, restarts the very same command until one run finishes, and
//      requires out.weights to equal ref.weights byte for byte, and B to hold no backup afterwards.
// The moments come from inotify on B (a temporary "*.tmp.*" created: a backup being written;
// backup.tpudsl renamed into place: a backup landed) and from the timings seen so far. Every resumed
// run must start at the epoch after the last backup that landed ("Epoch k/E"; none when the last
// epoch's backup had landed). Each run is killed and the test fails if it outlives the timeout.
// Linux only: fork/execv, inotify, prctl.
#include <poll.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace fs = std::filesystem;

namespace {

constexpr const char* backup_name = "backup.tpudsl";

/// A failed check: what went wrong, said once, in main.
struct failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string
seconds(double s)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f s", s);
    return buf;
}

std::string
read_file(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    if (!in)
        throw failure("cannot read " + p.string());
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The last `n` lines of a log, for a failure's message.
std::string
tail(const std::string& text, std::size_t n = 25)
{
    std::size_t at = text.size();
    for (std::size_t lines = 0; at > 0 && lines <= n;)
        if (text[--at] == '\n')
            ++lines;
    return text.substr(at);
}

/// The first "Epoch k/E" line's k and E, if any.
std::optional<std::pair<std::size_t, std::size_t>>
first_epoch_line(const std::string& log)
{
    static const std::regex line("(^|\n)Epoch ([0-9]+)/([0-9]+)\n");
    std::smatch m;
    if (!std::regex_search(log, m, line))
        return std::nullopt;
    return std::pair{std::stoul(m[2]), std::stoul(m[3])};
}

std::optional<std::string>
test_accuracy(const std::string& log)
{
    static const std::regex line("(^|\n)Test accuracy: ([0-9.]+)\n");
    std::smatch m;
    if (!std::regex_search(log, m, line))
        return std::nullopt;
    return m[2].str();
}

/// The temporaries ("*.tmp.*") in dir, with their sizes.
std::vector<std::string>
temporaries(const fs::path& dir)
{
    std::vector<std::string> found;
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return found;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().find(".tmp.") != std::string::npos)
            found.push_back(e.path().filename().string() + " (" + std::to_string(fs::file_size(e.path(), ec)) +
                            " bytes)");
    std::sort(found.begin(), found.end());
    return found;
}

std::string
join(const std::vector<std::string>& v)
{
    std::string s;
    for (const auto& x : v)
        s += (s.empty() ? "" : ", ") + x;
    return s;
}

/// inotify on a plan's directory and on its backup directory B inside it (watched from the moment it
/// exists, whoever creates it).
class backup_watch {
public:
    struct event {
        enum kind { temporary_created, backup_landed } what;
        double at;   // seconds since the run started
        std::string name;
    };

    backup_watch(fs::path parent, fs::path dir) : parent_(std::move(parent)), dir_(std::move(dir))
    {
        fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (fd_ < 0)
            throw failure(std::string("inotify_init1: ") + std::strerror(errno));
        parent_wd_ = ::inotify_add_watch(fd_, parent_.c_str(), IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
        if (parent_wd_ < 0)
            throw failure("inotify_add_watch " + parent_.string() + ": " + std::strerror(errno));
        watch_dir();
    }
    backup_watch(const backup_watch&) = delete;
    backup_watch& operator=(const backup_watch&) = delete;
    ~backup_watch() { ::close(fd_); }

    [[nodiscard]] int fd() const noexcept { return fd_; }

    /// The events queued so far, stamped `now`.
    std::vector<event>
    read(double now)
    {
        std::vector<event> out;
        alignas(inotify_event) char buf[16384];
        for (;;) {
            const ssize_t n = ::read(fd_, buf, sizeof buf);
            if (n <= 0)
                break;
            for (char* p = buf; p < buf + n;) {
                const auto* e = reinterpret_cast<const inotify_event*>(p);
                p += sizeof(inotify_event) + e->len;
                const std::string name = e->len ? e->name : "";
                if (e->wd == parent_wd_) {
                    if (name == dir_.filename().string() && dir_wd_ < 0) {
                        watch_dir();
                        scan(now, out);   // what B held before the watch
                    }
                } else if (e->wd == dir_wd_) {
                    if (e->mask & IN_IGNORED)
                        dir_wd_ = -1;   // B was removed
                    else if ((e->mask & IN_CREATE) && name.find(".tmp.") != std::string::npos)
                        out.push_back({event::temporary_created, now, name});
                    else if ((e->mask & IN_MOVED_TO) && name == backup_name)
                        out.push_back({event::backup_landed, now, name});
                }
            }
        }
        return out;
    }

private:
    void
    watch_dir()
    {
        dir_wd_ = ::inotify_add_watch(fd_, dir_.c_str(), IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
    }

    void
    scan(double now, std::vector<event>& out)
    {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(dir_, ec)) {
            const std::string name = e.path().filename().string();
            if (name.find(".tmp.") != std::string::npos)
                out.push_back({event::temporary_created, now, name});
            else if (name == backup_name)
                out.push_back({event::backup_landed, now, name});
        }
    }

    fs::path parent_, dir_;
    int fd_ = -1, parent_wd_ = -1, dir_wd_ = -1;
};

/// When a run is killed: at the nth event of a kind (then after `delay` seconds), or `delay` seconds
/// after it started.
struct kill_point {
    enum kind { never, temporary_created, backup_landed, after_start } when = never;
    std::size_t nth = 1;
    double delay = 0;
};

struct run_result {
    bool killed = false;
    int status = 0;   // waitpid's
    double took = 0, killed_at = 0;
    std::string kill_moment;   // what happened when it was killed
    std::vector<double> temporaries_at;   // when each backup write began
    std::size_t landed = 0;
    std::string log;
};

/// A kill point in words, with what the run saw of it.
std::string
describe(const kill_point& k, const run_result& r)
{
    switch (k.when) {
    case kill_point::temporary_created:
        return "at backup write " + std::to_string(k.nth) + "; it began " + std::to_string(r.temporaries_at.size());
    case kill_point::backup_landed:
        return seconds(k.delay) + " after backup " + std::to_string(k.nth) + " landed; " + std::to_string(r.landed) +
               " landed";
    case kill_point::after_start:
        return seconds(k.delay) + " after the start";
    case kill_point::never:
        break;
    }
    return "never";
}

/// Runs argv with its output in log_path, killing it at `kill` (or when it outlives `timeout`).
run_result
run(const std::vector<std::string>& argv, const fs::path& log_path, backup_watch* watch, const kill_point& kill,
    double timeout)
{
    std::vector<char*> cargv;
    for (const auto& a : argv)
        cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    const pid_t parent = ::getpid();
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid < 0)
        throw failure(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);   // no orphan outlives the test
        if (::getppid() != parent)
            ::_exit(127);
        const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || ::dup2(fd, 1) < 0 || ::dup2(fd, 2) < 0)
            ::_exit(127);
        ::execv(cargv[0], cargv.data());
        std::fprintf(stderr, "kill_and_resume: cannot run %s: %s\n", cargv[0], std::strerror(errno));
        ::_exit(127);
    }
    auto now = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

    run_result r;
    std::optional<double> kill_at;
    if (kill.when == kill_point::after_start)
        kill_at = kill.delay, r.kill_moment = seconds(kill.delay) + " after the start";
    std::size_t temporaries_seen = 0;
    bool exited = false, timed_out = false;
    auto do_kill = [&](const std::string& moment) {
        if (r.killed)
            return;
        ::kill(pid, SIGKILL);
        r.killed = true;
        r.killed_at = now();
        r.kill_moment = moment;
    };
    auto take = [&](const std::vector<backup_watch::event>& events) {
        for (const auto& e : events) {
            const bool temporary = e.what == backup_watch::event::temporary_created;
            if (temporary)
                r.temporaries_at.push_back(e.at), ++temporaries_seen;
            else
                ++r.landed;
            const std::size_t count = temporary ? temporaries_seen : r.landed;
            const bool match = (temporary && kill.when == kill_point::temporary_created) ||
                               (!temporary && kill.when == kill_point::backup_landed);
            if (!match || count != kill.nth || r.killed || kill_at)
                continue;
            const std::string what = temporary ? "the creation of " + e.name + " (backup write " +
                                                     std::to_string(count) + " of this run)"
                                               : std::string(backup_name) + " landing (backup " +
                                                     std::to_string(count) + " of this run)";
            if (kill.delay <= 0)
                do_kill("at once on " + what);
            else
                kill_at = e.at + kill.delay, r.kill_moment = seconds(kill.delay) + " after " + what;
        }
    };
    while (!exited) {
        const double t = now();
        double wait = 0.02;
        if (kill_at && !r.killed)
            wait = std::clamp(*kill_at - t, 0.0, wait);
        pollfd p{watch ? watch->fd() : -1, POLLIN, 0};
        ::poll(&p, 1, static_cast<int>(wait * 1000));
        if (watch)
            take(watch->read(now()));
        if (kill_at && !r.killed && now() >= *kill_at)
            do_kill(r.kill_moment);
        int status = 0;
        const pid_t w = ::waitpid(pid, &status, WNOHANG);
        if (w == pid)
            exited = true, r.status = status;
        else if (now() > timeout && !timed_out) {
            timed_out = true;
            ::kill(pid, SIGKILL);
        }
    }
    r.took = now();
    if (watch)
        take(watch->read(r.took));   // what happened before it died
    std::error_code ec;
    if (fs::exists(log_path, ec))
        r.log = read_file(log_path);
    if (timed_out && !r.killed)
        throw failure("'" + argv[0] + "' still ran after " + seconds(timeout) + " (hung?); killed it. Its output:\n" +
                      tail(r.log));
    return r;
}

std::string
command_line(const std::vector<std::string>& argv)
{
    std::string s;
    for (const auto& a : argv)
        s += (s.empty() ? "" : " ") + a;
    return s;
}

/// A finished run's exit: 0, else a failure quoting its output.
void
require_success(const run_result& r, const std::vector<std::string>& argv)
{
    if (WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0)
        return;
    const std::string how = WIFEXITED(r.status) ? "exited with " + std::to_string(WEXITSTATUS(r.status))
                                                : "died of signal " + std::to_string(WTERMSIG(r.status));
    throw failure(command_line(argv) + "\n" + how + ". Its output:\n" + tail(r.log));
}

/// The files' first difference, or nothing when they are equal.
std::optional<std::string>
difference(const fs::path& a, const fs::path& b)
{
    const std::string x = read_file(a), y = read_file(b);
    if (x == y)
        return std::nullopt;
    const auto [i, j] = std::mismatch(x.begin(), x.end(), y.begin(), y.end());
    const auto at = static_cast<std::size_t>(i - x.begin());
    std::ostringstream s;
    s << a.filename().string() << " (" << x.size() << " bytes) and " << b.filename().string() << " (" << y.size()
      << " bytes) first differ at byte " << at;
    if (i != x.end() && j != y.end())
        s << " (0x" << std::hex << (static_cast<unsigned>(*i) & 0xffu) << " against 0x"
          << (static_cast<unsigned>(*j) & 0xffu) << ")";
    else
        s << " (one ends there)";
    return s.str();
}

/// What the runs so far say about time: an epoch, and a fresh run's start to its first backup write.
struct timings {
    std::vector<double> epochs, first_writes;
    double reference = 0;
    std::size_t epoch_count = 0;

    void
    learn(const run_result& r, bool fresh)
    {
        for (std::size_t i = 1; i < r.temporaries_at.size(); ++i)
            epochs.push_back(r.temporaries_at[i] - r.temporaries_at[i - 1]);
        if (fresh && !r.temporaries_at.empty())
            first_writes.push_back(r.temporaries_at.front());
    }
    static double
    median(std::vector<double> v)
    {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    }
    [[nodiscard]] double
    epoch() const
    {
        return epochs.empty() ? reference / static_cast<double>(epoch_count + 1) : median(epochs);
    }
    [[nodiscard]] double
    first_write() const
    {
        return first_writes.empty() ? epoch() * 1.5 : median(first_writes);
    }
};

struct plan {
    std::string name;
    std::vector<kill_point> kills;   // one per killed run; the run after the last finishes
    bool create_backup_dir = true;   // false: the program must create it
};

class driver {
public:
    driver(fs::path scratch, std::vector<std::string> command, double timeout)
        : scratch_(std::move(scratch)), command_(std::move(command)), timeout_(timeout)
    {
    }

    void
    reference()
    {
        fs::remove_all(scratch_);
        fs::create_directories(scratch_);
        ref_ = scratch_ / "ref.weights";
        auto argv = command_;
        argv.insert(argv.end(), {"--save-weights", ref_.string()});
        std::cout << "reference: " << command_line(argv) << std::endl;
        const auto r = run(argv, scratch_ / "reference.log", nullptr, {}, timeout_);
        require_success(r, argv);
        const auto epochs = first_epoch_line(r.log);
        if (!epochs || epochs->first != 1 || epochs->second < 3)
            throw failure("the reference run must train at least 3 epochs and print \"Epoch 1/E\"; its output:\n" +
                          tail(r.log));
        accuracy_ = test_accuracy(r.log).value_or("");
        if (accuracy_.empty())
            throw failure("no 'Test accuracy:' line in the reference's output:\n" + tail(r.log));
        time_.reference = r.took;
        time_.epoch_count = epochs_ = epochs->second;
        std::cout << "reference: " << epochs_ << " epochs in " << seconds(r.took) << ", test accuracy " << accuracy_
                  << ", " << fs::file_size(ref_) << " bytes of weights" << std::endl;
        run_timeout_ = std::max(60.0, 4 * r.took + 30);
    }

    /// --load-weights ref --epochs 0: nothing trains, and the test accuracy is the reference's.
    void
    evaluate_only()
    {
        auto argv = command_;
        argv.insert(argv.end(), {"--load-weights", ref_.string(), "--epochs", "0"});
        const auto r = run(argv, scratch_ / "evaluate.log", nullptr, {}, run_timeout_);
        require_success(r, argv);
        if (first_epoch_line(r.log) || r.log.find("/step") != std::string::npos)
            throw failure(command_line(argv) + "\ntrained (an epoch's lines in its output); --epochs 0 must not:\n" +
                          tail(r.log));
        const auto accuracy = test_accuracy(r.log);
        if (accuracy != accuracy_)
            throw failure(command_line(argv) + "\nprinted test accuracy " + accuracy.value_or("(none)") +
                          "; the run that wrote the weights printed " + accuracy_ + ":\n" + tail(r.log));
        std::cout << "evaluate: --load-weights ref.weights --epochs 0 trained nothing and printed the reference's "
                     "test accuracy, "
                  << accuracy_ << ", in " << seconds(r.took) << std::endl;
    }

    /// Runs a plan's killed runs and the one that finishes; compares the weights.
    void
    execute(const plan& p)
    {
        const fs::path dir = scratch_ / p.name, backup = dir / "backup", out = dir / "out.weights";
        fs::create_directories(dir);
        if (p.create_backup_dir)
            fs::create_directories(backup);
        auto argv = command_;
        argv.insert(argv.end(), {"--backup-dir", backup.string(), "--save-weights", out.string()});
        std::cout << "plan " << p.name << ":" << (p.create_backup_dir ? "" : " (no backup directory yet)")
                  << std::endl;
        backup_watch watch(dir, backup);
        std::size_t latest = 0;   // the epoch of the last backup that landed, 0: none
        for (std::size_t n = 0;; ++n) {
            const bool last = n == p.kills.size();
            kill_point kill = last ? kill_point{} : p.kills[n];
            const std::size_t expected = latest + 1;   // the first epoch this run trains
            const auto r = run(argv, dir / ("run" + std::to_string(n + 1) + ".log"), &watch, kill, run_timeout_);
            time_.learn(r, expected == 1);
            if (r.landed)
                latest = expected - 1 + r.landed;
            std::error_code ec;
            const bool backup_there = fs::exists(backup / backup_name, ec);
            std::ostringstream line;
            line << "  run " << n + 1 << ": ";
            const auto first = first_epoch_line(r.log);
            const std::string before = expected == 1 ? "no backup had landed before it"
                                                     : "the last backup that landed before it was epoch " +
                                                           std::to_string(expected - 1) + "'s";
            auto check_start = [&](bool output_complete) {
                if (expected <= epochs_) {
                    line << "began at Epoch " << expected << "/" << epochs_;
                    if (first && first->first != expected)
                        throw failure(command_line(argv) + "\nrun " + std::to_string(n + 1) + " of plan " + p.name +
                                      " began at \"Epoch " + std::to_string(first->first) + "/" +
                                      std::to_string(first->second) + "\"; " + before + ", so it should have begun at Epoch " +
                                      std::to_string(expected) + ". Its output:\n" + tail(r.log));
                    if (!first && output_complete)
                        throw failure(command_line(argv) + "\nrun " + std::to_string(n + 1) + " of plan " + p.name +
                                      " printed no \"Epoch k/E\" line; it should have begun at Epoch " +
                                      std::to_string(expected) + ". Its output:\n" + tail(r.log));
                    if (!first)
                        line << " (expected; its output was lost with the kill)";
                } else {
                    line << "had every epoch in its backup, trained none";
                    if (first)
                        throw failure(command_line(argv) + "\nrun " + std::to_string(n + 1) + " of plan " + p.name +
                                      " trained (\"Epoch " + std::to_string(first->first) + "\") although the last "
                                      "epoch's backup had landed. Its output:\n" + tail(r.log));
                }
                if (expected > 1)
                    line << " (resumed)";
            };
            if (!r.killed && !last) {
                require_success(r, argv);
                throw failure(command_line(argv) + "\nrun " + std::to_string(n + 1) + " of plan " + p.name +
                              " finished before the moment it was to be killed (" + describe(kill, r) +
                              "): no kill, nothing resumed. Its output:\n" + tail(r.log));
            }
            if (!r.killed) {
                require_success(r, argv);
                check_start(true);
                line << ", finished in " << seconds(r.took);
                std::cout << line.str() << std::endl;
                break;
            }
            check_start(false);
            line << "; killed " << seconds(r.killed_at) << " in, " << r.kill_moment << "; ";
            if (kill.when == kill_point::after_start && r.temporaries_at.empty())
                line << "no backup write had begun; ";
            const auto left = temporaries(backup);
            line << "left behind: " << (backup_there ? std::string(backup_name) + " (epoch " + std::to_string(latest) + ")"
                                                     : std::string("no backup"));
            if (!left.empty())
                line << " and the temporary " << join(left) << " (the kill landed before its rename)";
            else if (kill.when == kill_point::temporary_created)
                line << ", no temporary (the write had finished before the kill)";
            std::cout << line.str() << std::endl;
            if (!backup_there) {
                if (latest != 0)
                    std::cout << "  NOTE: the backup of epoch " << latest << " is gone; the restart trains from the "
                                                                             "start"
                              << std::endl;
                latest = 0;
            }
        }
        std::error_code ec;
        if (fs::exists(backup / backup_name, ec))
            throw failure(command_line(argv) + "\nfinished, yet " + (backup / backup_name).string() +
                          " is still there: a fit that completes deletes its backup");
        const auto left = temporaries(backup);
        std::cout << "  afterwards: no backup; the backup directory "
                  << (fs::exists(backup, ec) ? "is still there" : "was removed");
        if (!left.empty())
            std::cout << ", holding the stale temporary " << join(left);
        std::cout << std::endl;
        if (const auto d = difference(ref_, out))
            throw failure("plan " + p.name + ": the resumed weights differ from the uninterrupted run's: " + *d +
                          "\ncommand: " + command_line(argv) + "\nkept in " + dir.string());
        std::cout << "  out.weights equals ref.weights, byte for byte" << std::endl;
    }

    [[nodiscard]] std::size_t epochs() const noexcept { return epochs_; }
    [[nodiscard]] const timings& time() const noexcept { return time_; }

private:
    fs::path scratch_, ref_;
    std::vector<std::string> command_;
    double timeout_, run_timeout_ = 600;
    std::size_t epochs_ = 0;
    std::string accuracy_;
    timings time_;
};

} // namespace

int
main(int argc, char** argv)
try {
    const std::string usage = "usage: kill_and_resume --scratch DIR [--timeout SECONDS] -- PROGRAM ARGS...";
    fs::path scratch;
    double timeout = 600;
    std::vector<std::string> command;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--") {
            command.assign(argv + i + 1, argv + argc);
            break;
        }
        if (i + 1 >= argc)
            throw std::invalid_argument("missing value after " + a + "\n" + usage);
        if (a == "--scratch")
            scratch = argv[++i];
        else if (a == "--timeout")
            timeout = std::stod(argv[++i]);
        else
            throw std::invalid_argument("unknown argument " + a + "\n" + usage);
    }
    if (scratch.empty() || command.empty())
        throw std::invalid_argument(usage);

    driver d(fs::absolute(scratch), command, timeout);
    d.reference();
    d.evaluate_only();
    const auto& t = d.time();
    // In this order, the plans timed by the clock learn an epoch's length from the runs before them.
    d.execute({"first-backup-write", {{kill_point::temporary_created, 1, 0}}});
    d.execute({"mid-epoch-after-first-backup", {{kill_point::backup_landed, 1, t.epoch() / 2}}});
    // About a third into the first epoch (its backup write begins an epoch after it began; the gaps
    // between backups include the writes, so not before half way to the first one); the program
    // creates the backup directory itself.
    d.execute({"before-any-backup",
               {{kill_point::after_start, 1, std::max(t.first_write() - t.epoch() * 2 / 3, t.first_write() / 2)}},
               false});
    d.execute({"last-backup-write", {{kill_point::temporary_created, d.epochs(), 0}}});
    d.execute({"two-kills",
               {{kill_point::backup_landed, 1, 0},          // as the first backup lands
                {kill_point::temporary_created, 1, 0}}});   // then in the restart's first backup write
    std::cout << "kill_and_resume: every resumed run ended with the uninterrupted run's weights (epoch ~"
              << seconds(t.epoch()) << ")" << std::endl;
    return 0;
} catch (const failure& f) {
    std::cout << std::flush;
    std::cerr << "kill_and_resume: FAILED: " << f.what() << '\n';
    return 1;
} catch (const std::exception& e) {
    std::cout << std::flush;
    std::cerr << "kill_and_resume: " << e.what() << '\n';
    return 2;
}
