/// @file The seed examples' command line: --epochs --batch --steps --data --seed --recipe (and
/// --train-samples), --strategy, the weights files (--save-weights --load-weights), --backup-dir, and
/// the training's logs: --tensorboard DIR (TensorBoard's event files) and --plot FILE.svg (the curves).
/// `--recipe seed` runs the tutorial's own call line for line; the flags given beside it still stand.
/// `--strategy one|tpu8|multiworker` picks where the replicas run (common/strategy.hpp): one core,
/// TpuStrategy<8> over the machine's cores (the default), or the processes `mpirun` launched
/// (MultiWorkerStrategy, only in a program built with MPI: CMake's tpudsl::multi_worker).
/// `--epochs 0` trains nothing: with --load-weights it evaluates the weights loaded.
/// Numbers are parsed strictly (digits only, within range: "--batch -1" is an error, not 2^64 - 1);
/// a bad flag or value ends in a message with the usage line.
#ifndef TPUDSL_EXAMPLES_COMMON_ARGS_HPP
#define TPUDSL_EXAMPLES_COMMON_ARGS_HPP

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace seeds {

/// A command line that cannot be run: what is wrong, then the usage line.
class usage_error : public std::invalid_argument {
public:
    usage_error(const std::string& what, const std::string& usage) : std::invalid_argument(what + "\n" + usage) {}
};

/// The value of `flag` as a whole number in [lowest, highest], or a usage_error saying why not.
[[gnu::cold]] inline std::uint64_t
parse_number(std::string_view flag, std::string_view value, std::uint64_t lowest, std::uint64_t highest,
             const std::string& usage)
{
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    const std::string quoted = std::string(flag) + " '" + std::string(value) + "'";
    if (ec == std::errc::result_out_of_range)
        throw usage_error(quoted + " is too large (at most " + std::to_string(highest) + ")", usage);
    if (value.empty() || ec != std::errc{} || end != value.data() + value.size())
        throw usage_error(quoted + ": expected a whole number of decimal digits", usage);
    if (v < lowest || v > highest)
        throw usage_error(quoted + " is outside [" + std::to_string(lowest) + ", " + std::to_string(highest) + "]",
                          usage);
    return v;
}

struct Args {
    std::size_t epochs;
    std::size_t batch;
    std::size_t steps = 0;           // steps per epoch; 0: full passes
    std::size_t train_samples = 0;   // 0: all of them
    std::uint64_t seed = 0;
    std::string data;
    /// "default": this example's schedule; "seed": the Keras tutorial's own call.
    std::string recipe = "default";
    /// --strategy: "one" (OneDeviceStrategy), "tpu8" (TpuStrategy<8>), "multiworker"
    /// (MultiWorkerStrategy<1> over MPI's processes); see common/strategy.hpp.
    std::string strategy = "tpu8";
    /// --save-weights: where the weights go after training; --load-weights: where they come from
    /// before it (after compile). The format follows the path, as in Keras (tpudsl::save_weights).
    std::string save_weights, load_weights;
    /// --backup-dir: fit backs up its training state there (tpudsl::BackupAndRestore) and, started
    /// again after a crash, goes on from the last backup.
    std::string backup_dir;
    /// --tensorboard: fit logs itself there for TensorBoard (tpudsl::TensorBoard, with the weights'
    /// histograms every epoch, as TensorBoard's own tutorial calls it); `tensorboard --logdir DIR` shows it.
    std::string tensorboard;
    /// --plot: after fit, its History drawn there (tpudsl::plot_history, an SVG picture) and written
    /// beside it as CSV (tpudsl::save_history_csv, the same name ending in .csv).
    std::string plot;
    bool epochs_given = false, batch_given = false, steps_given = false;

    [[nodiscard]] bool seed_recipe() const noexcept { return recipe == "seed"; }
};

/// Parses the flags over the seed's defaults; --help prints the usage line and exits.
[[gnu::cold]] inline Args
parse_args(int argc, char** argv, Args defaults)
{
    const std::string program = argc > 0 ? std::string(argv[0]).substr(std::string(argv[0]).find_last_of('/') + 1)
                                         : std::string("seed");
    const std::string usage = "usage: " + program +
                              " [--epochs N] [--batch N] [--steps N] [--data DIR] [--seed S] [--train-samples N] "
                              "[--recipe default|seed] [--strategy one|tpu8|multiworker] [--save-weights PATH] [--load-weights PATH] "
                              "[--backup-dir DIR] [--tensorboard DIR] [--plot FILE.svg]";
    constexpr std::uint64_t many = std::uint64_t{1} << 40;   // no run asks for more; beyond is a typo
    Args a = defaults;
    for (int i = 1; i < argc; ++i) {
        const std::string_view flag = argv[i];
        if (flag == "--help" || flag == "-h") {
            std::cout << usage << '\n';
            std::exit(0);
        }
        if (i + 1 >= argc)
            throw usage_error("missing value after " + std::string(flag), usage);
        const std::string_view value = argv[++i];
        if (flag == "--epochs")
            a.epochs = parse_number(flag, value, 0, many, usage), a.epochs_given = true;
        else if (flag == "--batch")
            a.batch = parse_number(flag, value, 1, many, usage), a.batch_given = true;
        else if (flag == "--steps")
            a.steps = parse_number(flag, value, 0, many, usage), a.steps_given = true;
        else if (flag == "--recipe" && (value == "default" || value == "seed"))
            a.recipe = value;
        else if (flag == "--recipe")
            throw usage_error("--recipe '" + std::string(value) + "': expected default or seed", usage);
        else if (flag == "--strategy" && (value == "one" || value == "tpu8"))
            a.strategy = value;
        else if (flag == "--strategy" && value == "multiworker") {
#ifdef TPUDSL_WITH_MPI
            a.strategy = value;
#else
            throw usage_error("--strategy multiworker: this program was built without MPI; build it where CMake "
                              "finds MPI (Debian: libopenmpi-dev openmpi-bin, TPUDSL_WITH_MPI=ON), or pick one or tpu8",
                              usage);
#endif
        } else if (flag == "--strategy")
            throw usage_error("--strategy '" + std::string(value) + "': expected one, tpu8 or multiworker", usage);
        else if (flag == "--train-samples")
            a.train_samples = parse_number(flag, value, 0, many, usage);
        else if (flag == "--seed")
            a.seed = parse_number(flag, value, 0, std::numeric_limits<std::uint64_t>::max(), usage);
        else if (flag == "--data")
            a.data = value;
        else if ((flag == "--save-weights" || flag == "--load-weights") && value.empty())
            throw usage_error(std::string(flag) + " '': expected a file's path", usage);
        else if (flag == "--save-weights")
            a.save_weights = value;
        else if (flag == "--load-weights")
            a.load_weights = value;
        else if (flag == "--backup-dir" && value.empty())
            throw usage_error("--backup-dir '': expected a directory", usage);
        else if (flag == "--backup-dir")
            a.backup_dir = value;
        else if (flag == "--tensorboard" && value.empty())
            throw usage_error("--tensorboard '': expected a directory", usage);
        else if (flag == "--tensorboard")
            a.tensorboard = value;
        else if (flag == "--plot" && (value.size() <= 4 || !value.ends_with(".svg")))
            throw usage_error("--plot '" + std::string(value) + "': expected the path of an .svg file (the curves "
                              "are an SVG picture; their values go beside it, in the same name ending in .csv)",
                              usage);
        else if (flag == "--plot")
            a.plot = value;
        else
            throw usage_error("unknown flag " + std::string(flag), usage);
    }
    return a;
}

} // namespace seeds

#endif
