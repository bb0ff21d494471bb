// Training throughput of MultiWorkerStrategy under mpirun, beside TpuStrategy<2> and OneDeviceStrategy
// in one process (measured when run with one process), with where a worker's steps spend their time.
// Synthetic inputs of the right shapes: throughput does not depend on the values.
//
//   mpirun -np 2 multi_worker_bench [--batch 128] [--steps 40] [--model fashion|reuters|all] [--chunk floats]
//   mpirun -np 1 --bind-to none multi_worker_bench    (the one-process references, on 2 cores)
//
// Each configuration prints one line (the chief's):
//   multi_worker_bench model=<m> batch=<b> strategy=<s> workers=<k> threads=<t> samples_per_s=<x>
//       compute=<share> reduce=<share> apply=<share> bytes_sent_per_step=<n>
#include "fashion_mnist_cnn/model.hpp"
#include "reuters_conv1d/model.hpp"

#include <tpudsl/distribute/multi_worker.hpp>
#include <tpudsl/tpudsl.hpp>

#include <xtensor/xtensor.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

namespace {

struct Args {
    std::size_t batch = 128;
    std::size_t steps = 40;
    std::string model = "all";
    std::size_t chunk = tpudsl::MultiWorkerOptions{}.chunk_floats;
};

template <class M>
struct data {
    static constexpr std::size_t rank = M::input_shape::rank;
    xt::xtensor<typename M::input_type, rank + 1> x;
    xt::xtensor<std::int32_t, 1> y;
    explicit data(std::size_t n) : x(shape(n)), y(std::array<std::size_t, 1>{n})
    {
        using In = typename M::input_type;
        for (std::size_t i = 0; i < x.size(); ++i)
            x.data()[i] = static_cast<In>(i * 2654435761u % 97) / static_cast<In>(std::is_integral_v<In> ? 1 : 97);
        for (std::size_t i = 0; i < n; ++i)
            y(i) = static_cast<std::int32_t>(i % M::output_shape::size);
    }
    static std::array<std::size_t, rank + 1>
    shape(std::size_t n)
    {
        std::array<std::size_t, rank + 1> s{n};
        std::copy(M::input_shape::dims.begin(), M::input_shape::dims.end(), s.begin() + 1);
        return s;
    }
};

/// Samples per second of `steps` training steps (after two of warm-up), every worker timing the same steps.
template <class M, class S>
double
samples_per_second(const S& strategy, const data<M>& d, const Args& args)
{
    auto model = strategy.template scope<M>(1);
    model.compile(tpudsl::optimizers::Adam{}, tpudsl::losses::SparseCategoricalCrossentropy{},
                  tpudsl::metrics::SparseCategoricalAccuracy{});
    std::ostringstream quiet;
    model.fit(d.x, d.y, {.batch_size = args.batch, .epochs = 1, .verbose = 0, .steps_per_epoch = 2, .out = &quiet});
    if constexpr (requires { strategy.reset_timings(); })
        strategy.reset_timings();
    const auto start = std::chrono::steady_clock::now();
    model.fit(d.x, d.y, {.batch_size = args.batch, .epochs = 1, .verbose = 0, .steps_per_epoch = args.steps, .out = &quiet});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return static_cast<double>(args.steps * args.batch) / seconds;
}

template <class M>
void
bench(const char* name, const tpudsl::MpiClusterResolver& resolver, const Args& args)
{
    const data<M> d(args.batch * 4);
    auto line = [&](const char* strategy, int workers, std::size_t threads, double rate, const tpudsl::MultiWorkerTimings* t) {
        if (resolver.rank() != 0)
            return;
        std::printf("multi_worker_bench model=%s batch=%zu strategy=%s workers=%d threads=%zu samples_per_s=%.0f", name,
                    args.batch, strategy, workers, threads, rate);
        if (t) {
            const double all = t->compute_seconds + t->reduce_seconds + t->apply_seconds;
            std::printf(" compute=%.2f reduce=%.2f apply=%.2f bytes_sent_per_step=%zu", t->compute_seconds / all,
                        t->reduce_seconds / all, t->apply_seconds / all, t->bytes_sent / std::max<std::size_t>(t->steps, 1));
        }
        std::printf("\n");
        std::fflush(stdout);
    };
    if (resolver.size() == 1) {
        tpudsl::OneDeviceStrategy one;
        line("OneDevice", 1, one.threads(), samples_per_second<M>(one, d, args), nullptr);
        tpudsl::TpuStrategy<2> two;
        line("TpuStrategy<2>", 1, two.threads(), samples_per_second<M>(two, d, args), nullptr);
    }
    const tpudsl::MultiWorkerStrategy<1> chained(resolver, {.chunk_floats = args.chunk});
    const double c = samples_per_second<M>(chained, d, args);
    line("MultiWorker<1>", resolver.size(), chained.threads(), c, &chained.timings());
    const tpudsl::MultiWorkerStrategy<1> fast(resolver, {.reduction = tpudsl::Reduction::allreduce});
    const double f = samples_per_second<M>(fast, d, args);
    line("MultiWorker<1>,allreduce", resolver.size(), fast.threads(), f, &fast.timings());
}

} // namespace

int
main(int argc, char** argv)
{
    tpudsl::MpiClusterResolver resolver(&argc, &argv);
    Args args;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--batch")
            args.batch = std::stoul(value);
        else if (flag == "--steps")
            args.steps = std::stoul(value);
        else if (flag == "--model")
            args.model = value;
        else if (flag == "--chunk")
            args.chunk = std::stoul(value);
        else {
            std::cerr << "multi_worker_bench: unknown flag " << flag << " (--batch, --steps, --model, --chunk)\n";
            return 2;
        }
    }
    if (args.model == "fashion" || args.model == "all")
        bench<seeds::FashionCnn>("fashion", resolver, args);
    if (args.model == "reuters" || args.model == "all")
        bench<seeds::Reuters>("reuters", resolver, args);
}
