// Training throughput of the recurrent layers (figures, not assertions): a Reuters-like text model,
// 300 token ids -> Embedding<30982, 7> -> LSTM<64> or GRU<64> -> Dense<46, Softmax>, Adam, on
// synthetic ids (throughput does not depend on their values).
//
//   recurrent_bench [--model lstm|gru|all] [--batch 32,128] [--threads 1,2] [--seconds 3]
//
// One line per configuration, which benchmarks/recurrent_peers.py reads:
//   recurrent_bench model=<m> batch=<b> threads=<t> samples_per_s=<x>
// One thread is OneDeviceStrategy, two TpuStrategy<2>.
#include <tpudsl/tpudsl.hpp>

#include <xtensor/xtensor.hpp>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace tpudsl;
using clock_type = std::chrono::steady_clock;

using LstmText = Sequential<Input<Shape<300>, std::int32_t>, Embedding<30982, 7>, LSTM<64>, Dense<46, Softmax>>;
using GruText = Sequential<Input<Shape<300>, std::int32_t>, Embedding<30982, 7>, GRU<64>, Dense<46, Softmax>>;

/// Samples per second of steady training: a warm-up epoch of four steps, then epochs for `seconds`.
template <class M, class S>
double
samples_per_s(std::size_t batch, double seconds)
{
    const std::size_t n = batch * 4;
    xt::xtensor<std::int32_t, 2> x(std::array<std::size_t, 2>{n, 300});
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{n});
    for (std::size_t i = 0; i < x.size(); ++i)
        x.data()[i] = static_cast<std::int32_t>(i * 2654435761u % 30982);
    for (std::size_t i = 0; i < n; ++i)
        y(i) = static_cast<std::int32_t>(i % 46);
    S strategy;
    auto model = strategy.template scope<M>(1);
    model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    std::ostringstream quiet;
    const FitOptions epoch{.batch_size = batch, .epochs = 1, .verbose = 0, .out = &quiet};
    model.fit(x, y, epoch);
    std::size_t done = 0;
    const auto start = clock_type::now();
    double elapsed = 0;
    while (elapsed < seconds) {
        model.fit(x, y, epoch);
        done += n;
        elapsed = std::chrono::duration<double>(clock_type::now() - start).count();
    }
    return static_cast<double>(done) / elapsed;
}

template <class M>
double
on_threads(std::size_t threads, std::size_t batch, double seconds)
{
    return threads == 2 ? samples_per_s<M, TpuStrategy<2>>(batch, seconds)
                        : samples_per_s<M, OneDeviceStrategy>(batch, seconds);
}

std::vector<std::size_t>
numbers(const std::string& list)
{
    std::vector<std::size_t> out;
    std::stringstream in(list);
    for (std::string item; std::getline(in, item, ',');)
        out.push_back(std::stoul(item));
    return out;
}

} // namespace

int
main(int argc, char** argv)
{
    std::string model = "all", batches = "32,128", threads = "1,2";
    double seconds = 3.0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--model")
            model = value;
        else if (flag == "--batch")
            batches = value;
        else if (flag == "--threads")
            threads = value;
        else if (flag == "--seconds")
            seconds = std::stod(value);
        else {
            std::fprintf(stderr, "usage: recurrent_bench [--model lstm|gru|all] [--batch 32,128] "
                                 "[--threads 1,2] [--seconds 3]\n");
            return 2;
        }
    }
    for (std::size_t b : numbers(batches))
        for (std::size_t t : numbers(threads)) {
            if (model == "all" || model == "lstm")
                std::printf("recurrent_bench model=lstm batch=%zu threads=%zu samples_per_s=%.0f\n", b, t,
                            on_threads<LstmText>(t, b, seconds));
            if (model == "all" || model == "gru")
                std::printf("recurrent_bench model=gru batch=%zu threads=%zu samples_per_s=%.0f\n", b, t,
                            on_threads<GruText>(t, b, seconds));
            std::fflush(stdout);
        }
}
