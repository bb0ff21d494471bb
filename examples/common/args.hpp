/// @file The seed examples' command line: --epochs --batch --steps --data --seed (and --train-samples).
#ifndef TPUDSL_EXAMPLES_COMMON_ARGS_HPP
#define TPUDSL_EXAMPLES_COMMON_ARGS_HPP

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace seeds {

struct Args {
    std::size_t epochs;
    std::size_t batch;
    std::size_t steps = 0;           // steps per epoch; 0: full passes
    std::size_t train_samples = 0;   // 0: all of them
    std::uint64_t seed = 0;
    std::string data;
};

/// Parses the flags over the seed's defaults.
inline Args
parse_args(int argc, char** argv, Args defaults)
{
    Args a = defaults;
    for (int i = 1; i < argc; ++i) {
        const std::string_view flag = argv[i];
        if (i + 1 >= argc)
            throw std::invalid_argument("missing value after " + std::string(flag));
        const std::string value = argv[++i];
        if (flag == "--epochs")
            a.epochs = std::stoul(value);
        else if (flag == "--batch")
            a.batch = std::stoul(value);
        else if (flag == "--steps")
            a.steps = std::stoul(value);
        else if (flag == "--train-samples")
            a.train_samples = std::stoul(value);
        else if (flag == "--seed")
            a.seed = std::stoull(value);
        else if (flag == "--data")
            a.data = value;
        else
            throw std::invalid_argument("unknown flag " + std::string(flag) +
                                        " (flags: --epochs --batch --steps --data --seed --train-samples)");
    }
    if (a.epochs == 0 || a.batch == 0)
        throw std::invalid_argument("--epochs and --batch must be at least 1");
    return a;
}

} // namespace seeds

#endif
