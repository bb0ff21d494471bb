// Training throughput of each seed model under OneDeviceStrategy, TpuStrategy<2> and TpuStrategy<8>,
// measured in one run so the ratios compare like with like. Synthetic inputs of the right shapes:
// throughput does not depend on the values.
//
//   strategy_bench [--batch 128] [--seconds 2] [--model fashion|reuters|mnist|cifar|all]
//
// Each configuration runs for --seconds, three times (strategies interleaved); the best counts.
//
// Each configuration prints one line:
//   strategy_bench model=<m> batch=<b> strategy=<s> threads=<t> samples_per_s=<x> ratio_to_one=<r>
#include "cifar10_cnn/model.hpp"
#include "fashion_mnist_cnn/model.hpp"
#include "mnist_mlp/model.hpp"
#include "reuters_conv1d/model.hpp"

#include <tpudsl/tpudsl.hpp>

#include <xtensor/xtensor.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

namespace {

struct Args {
    std::size_t batch = 128;
    double seconds = 2.0;
    std::string model = "all";
};

template <class M, class S>
double
samples_per_second(std::size_t batch, double seconds, std::size_t& threads)
{
    using In = typename M::input_type;
    const std::size_t n = batch * 4;
    constexpr std::size_t rank = M::input_shape::rank;
    std::array<std::size_t, rank + 1> shape{n};   // (samples, the Input's dims...)
    std::copy(M::input_shape::dims.begin(), M::input_shape::dims.end(), shape.begin() + 1);
    xt::xtensor<In, rank + 1> x(shape);
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{n});
    for (std::size_t i = 0; i < x.size(); ++i)
        x.data()[i] = static_cast<In>(i * 2654435761u % 97) / static_cast<In>(std::is_integral_v<In> ? 1 : 97);
    for (std::size_t i = 0; i < n; ++i)
        y(i) = static_cast<std::int32_t>(i % M::output_shape::size);
    S strategy;
    threads = strategy.threads();
    auto model = strategy.template scope<M>(1);
    model.compile(tpudsl::optimizers::Adam{}, tpudsl::losses::SparseCategoricalCrossentropy{},
                  tpudsl::metrics::SparseCategoricalAccuracy{});
    std::ostringstream quiet;
    model.fit(x, y, {.batch_size = batch, .epochs = 1, .verbose = 0, .steps_per_epoch = 2, .out = &quiet});   // warm-up
    std::size_t steps = 0;
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    while (elapsed < seconds) {
        model.fit(x, y, {.batch_size = batch, .epochs = 1, .verbose = 0, .steps_per_epoch = 4, .out = &quiet});
        steps += 4;
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    return static_cast<double>(steps * batch) / elapsed;
}

/// Best of three rounds, the strategies interleaved within each round, so that a slow spell of the
/// machine does not land on one strategy only.
template <class M>
void
bench(const char* name, const Args& a)
{
    std::size_t t1 = 0, t2 = 0, t8 = 0;
    double one = 0, two = 0, eight = 0;
    for (int round = 0; round < 3; ++round) {
        one = std::max(one, samples_per_second<M, tpudsl::OneDeviceStrategy>(a.batch, a.seconds, t1));
        two = std::max(two, samples_per_second<M, tpudsl::TpuStrategy<2>>(a.batch, a.seconds, t2));
        eight = std::max(eight, samples_per_second<M, tpudsl::TpuStrategy<8>>(a.batch, a.seconds, t8));
    }
    const struct {
        const char* s;
        std::size_t t;
        double v;
    } rows[] = {{"one", t1, one}, {"tpu2", t2, two}, {"tpu8", t8, eight}};
    for (const auto& r : rows)
        std::printf("strategy_bench model=%s batch=%zu strategy=%s threads=%zu samples_per_s=%.0f ratio_to_one=%.2f\n",
                    name, a.batch, r.s, r.t, r.v, r.v / one);
    std::fflush(stdout);
}

} // namespace

int
main(int argc, char** argv)
{
    Args a;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--batch")
            a.batch = std::stoul(argv[i + 1]);
        else if (flag == "--seconds")
            a.seconds = std::stod(argv[i + 1]);
        else if (flag == "--model")
            a.model = argv[i + 1];
        else {
            std::cerr << "strategy_bench: unknown flag " << flag << " (--batch --seconds --model)\n";
            return 2;
        }
    }
    tpudsl::CpuClusterResolver resolver;
    tpudsl::initialize_cpu_system(resolver, std::cout);
    if (a.model == "all" || a.model == "fashion")
        bench<seeds::FashionCnn>("fashion", a);
    if (a.model == "all" || a.model == "reuters")
        bench<seeds::Reuters>("reuters", a);
    if (a.model == "all" || a.model == "mnist")
        bench<seeds::MnistMlp>("mnist", a);
    if (a.model == "all" || a.model == "cifar")
        bench<seeds::Cifar10Cnn>("cifar", a);
}
