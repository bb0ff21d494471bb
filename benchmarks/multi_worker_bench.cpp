// Training throughput of MultiWorkerStrategy under mpirun, beside TpuStrategy<2> and OneDeviceStrategy
// in one process, with where a worker's steps spend their time. Synthetic inputs of the right shapes:
// throughput does not depend on the values. benchmarks/multi_worker_scaling.sh runs it interleaved over
// rounds and summarises the medians (benchmarks/multi_worker_projection.py).
//
//   mpirun -np 2 --bind-to core multi_worker_bench [--batch 128] [--seconds 1] [--steps n]
//       [--model fashion,reuters,mnist,cifar10_cnn,cifar10_bn,reuters_lstm|all] [--chunk floats]
//       [--only one,tpu2,chained,allreduce] [--round r]
//   mpirun -np 1 --bind-to none multi_worker_bench --only one,tpu2,chained   (the one-process references)
//
// With one process, `chained` is MultiWorkerStrategy<1> alone: its timings split one core's step into
// compute (forward and backward of the 8 micro-batches), reduce (the link: the deferred kernels'
// gradients and the arenas' sums, no message) and apply (the optimizer), the inputs of the projection.
//
// Each configuration prints one line (the chief's):
//   multi_worker_bench model=<m> params=<n> batch=<b> strategy=<s> workers=<k> threads=<t> round=<r>
//       steps=<n> samples_per_s=<x> step_ms=<t> [compute_ms=<t> reduce_ms=<t> apply_ms=<t>
//       compute=<share> reduce=<share> apply=<share> bytes_sent_per_step=<n>]
// bytes_sent_per_step: what the chief's chain links send (the whole buffer once; the last worker's
// broadcast and MPI_Allreduce's own messages are not counted: benchmarks/multi_worker_projection.py
// adds them from the algorithms' message counts).
#include "cifar10_bn/model.hpp"
#include "cifar10_cnn/model.hpp"
#include "fashion_mnist_cnn/model.hpp"
#include "mnist_mlp/model.hpp"
#include "reuters_conv1d/model.hpp"
#include "reuters_lstm/model.hpp"

#include <tpudsl/distribute/multi_worker.hpp>
#include <tpudsl/tpudsl.hpp>

#include <xtensor/xtensor.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

namespace {

struct Args {
    std::size_t batch = 128;
    double seconds = 1.0;     // per configuration, when --steps is not given
    std::size_t steps = 0;    // fixed step count (0: from --seconds)
    std::string model = "all";
    std::string only = "one,tpu2,chained,allreduce";
    std::size_t chunk = tpudsl::MultiWorkerOptions{}.chunk_floats;
    int round = 0;

    [[nodiscard]] static bool
    listed(const std::string& list, const std::string& name)
    {
        std::stringstream in(list);
        for (std::string item; std::getline(in, item, ',');)
            if (item == name || item == "all")
                return true;
        return false;
    }
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

/// The steps a configuration runs: --steps, else enough for --seconds from two timed steps after the
/// warm-up (rank 0 decides, every worker runs as many).
inline std::size_t
steps_for(double two_steps_seconds, const Args& args, MPI_Comm comm)
{
    unsigned long steps = args.steps;
    if (steps == 0)
        steps = static_cast<unsigned long>(
            std::clamp(std::ceil(args.seconds / std::max(two_steps_seconds / 2, 1e-6)), 4.0, 5000.0));
    MPI_Bcast(&steps, 1, MPI_UNSIGNED_LONG, 0, comm);
    return steps;
}

/// Samples per second of the configuration's steps (after two of warm-up and two timed to size the run),
/// every worker timing the same steps.
template <class M, class S>
double
samples_per_second(const S& strategy, const data<M>& d, const Args& args, MPI_Comm comm, std::size_t& steps)
{
    auto model = strategy.template scope<M>(1);
    model.compile(tpudsl::optimizers::Adam{}, tpudsl::losses::SparseCategoricalCrossentropy{},
                  tpudsl::metrics::SparseCategoricalAccuracy{});
    std::ostringstream quiet;
    auto fit = [&](std::size_t n) {
        const auto start = std::chrono::steady_clock::now();
        model.fit(d.x, d.y, {.batch_size = args.batch, .epochs = 1, .verbose = 0, .steps_per_epoch = n, .out = &quiet});
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    fit(2);
    steps = steps_for(fit(2), args, comm);
    if constexpr (requires { strategy.reset_timings(); })
        strategy.reset_timings();
    const double seconds = fit(steps);
    return static_cast<double>(steps * args.batch) / seconds;
}

template <class M>
void
bench(const char* name, const tpudsl::MpiClusterResolver& resolver, const Args& args)
{
    const data<M> d(args.batch * 4);
    const MPI_Comm comm = resolver.session()->comm();
    auto line = [&](const char* strategy, int workers, std::size_t threads, std::size_t steps, double rate,
                    const tpudsl::MultiWorkerTimings* t) {
        if (resolver.rank() != 0)
            return;
        std::printf("multi_worker_bench model=%s params=%zu batch=%zu strategy=%s workers=%d threads=%zu round=%d "
                    "steps=%zu samples_per_s=%.1f step_ms=%.4f",
                    name, M::param_buffer_size, args.batch, strategy, workers, threads, args.round, steps, rate,
                    1e3 * static_cast<double>(args.batch) / rate);
        if (t) {
            const double all = t->compute_seconds + t->reduce_seconds + t->apply_seconds;
            const double per = 1e3 / static_cast<double>(std::max<std::size_t>(t->steps, 1));
            std::printf(" compute_ms=%.4f reduce_ms=%.4f apply_ms=%.4f compute=%.3f reduce=%.3f apply=%.3f "
                        "bytes_sent_per_step=%zu",
                        t->compute_seconds * per, t->reduce_seconds * per, t->apply_seconds * per, t->compute_seconds / all,
                        t->reduce_seconds / all, t->apply_seconds / all,
                        t->bytes_sent / std::max<std::size_t>(t->steps, 1));
        }
        std::printf("\n");
        std::fflush(stdout);
    };
    std::size_t steps = 0;
    if (resolver.size() == 1) {
        if (Args::listed(args.only, "one")) {
            tpudsl::OneDeviceStrategy one;
            const double r = samples_per_second<M>(one, d, args, comm, steps);
            line("OneDevice", 1, one.threads(), steps, r, nullptr);
        }
        if (Args::listed(args.only, "tpu2")) {
            tpudsl::TpuStrategy<2> two;
            const double r = samples_per_second<M>(two, d, args, comm, steps);
            line("TpuStrategy<2>", 1, two.threads(), steps, r, nullptr);
        }
    }
    if (Args::listed(args.only, "chained")) {
        const tpudsl::MultiWorkerStrategy<1> chained(resolver, {.chunk_floats = args.chunk});
        const double r = samples_per_second<M>(chained, d, args, comm, steps);
        line("MultiWorker<1>", resolver.size(), chained.threads(), steps, r, &chained.timings());
    }
    if (Args::listed(args.only, "allreduce")) {
        const tpudsl::MultiWorkerStrategy<1> fast(resolver, {.reduction = tpudsl::Reduction::allreduce});
        const double r = samples_per_second<M>(fast, d, args, comm, steps);
        line("MultiWorker<1>,allreduce", resolver.size(), fast.threads(), steps, r, &fast.timings());
    }
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
        else if (flag == "--seconds")
            args.seconds = std::stod(value);
        else if (flag == "--model")
            args.model = value;
        else if (flag == "--only")
            args.only = value;
        else if (flag == "--chunk")
            args.chunk = std::stoul(value);
        else if (flag == "--round")
            args.round = std::stoi(value);
        else {
            if (resolver.rank() == 0)
                std::cerr << "multi_worker_bench: unknown flag " << flag
                          << " (--batch, --steps, --seconds, --model, --only, --chunk, --round)\n";
            return 2;
        }
    }
    // Each model in the order of the seeds' table; `--model a,b` picks some.
    if (Args::listed(args.model, "fashion"))
        bench<seeds::FashionCnn>("fashion", resolver, args);
    if (Args::listed(args.model, "reuters"))
        bench<seeds::Reuters>("reuters", resolver, args);
    if (Args::listed(args.model, "mnist"))
        bench<seeds::MnistMlp>("mnist", resolver, args);
    if (Args::listed(args.model, "cifar10_cnn"))
        bench<seeds::Cifar10Cnn>("cifar10_cnn", resolver, args);
    if (Args::listed(args.model, "cifar10_bn"))
        bench<seeds::Cifar10Bn>("cifar10_bn", resolver, args);
    if (Args::listed(args.model, "reuters_lstm"))
        bench<seeds::ReutersLstm>("reuters_lstm", resolver, args);
}
