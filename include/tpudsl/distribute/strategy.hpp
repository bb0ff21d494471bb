/// @file Defines the distribution strategies, OneDeviceStrategy and TpuStrategy<N>, and the CPU
/// "cluster" resolver that finds the cores, the analog of Keras' TPU set-up lines.
///
/// A strategy owns where its replicas run and how their gradients meet: `run` calls a function on
/// each of its threads (inference), `step` runs the replicas' forward and backward passes on its
/// threads and then the fused reduce-and-update (distribute/all_reduce.hpp), one shard per thread;
/// `for_each_replica_of(t, f)` names the replicas thread t runs.
///
///   tpudsl::CpuClusterResolver resolver;             // finds the cores
///   tpudsl::initialize_cpu_system(resolver);         // prints "Found CPU system: ..."
///   tpudsl::TpuStrategy<8> strategy(resolver);       // 8 replicas on min(8, cores) threads
///   auto model = strategy.scope<Model>(seed);        // a Trainable<Model, TpuStrategy<8>>
#ifndef TPUDSL_DISTRIBUTE_STRATEGY_HPP
#define TPUDSL_DISTRIBUTE_STRATEGY_HPP

#include <tpudsl/detail/function_ref.hpp>
#include <tpudsl/distribute/thread_pool.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <memory>
#include <sched.h>
#include <string>
#include <thread>

namespace tpudsl {

template <class Model, class Strategy>
class Trainable;

namespace distribute {

/// The processes of a multi-worker job, as a model's training step sees them (MultiWorkerStrategy
/// implements it over MPI; distribute/multi_worker.hpp). Each process computes a range of the step's
/// micro-batches; their gradients meet in a chained reduce in micro-batch order.
class worker_group {
public:
    virtual ~worker_group() = default;

    /// True on the worker that prints and writes files (rank 0).
    [[nodiscard]] virtual bool is_chief() const noexcept = 0;
    /// Every process gets the chief's n floats at p.
    virtual void broadcast_from_chief(float* p, std::size_t n) const = 0;
    /// One training step over a gradient buffer of `size` floats: `replicas(t)` on every thread (this
    /// process's micro-batches' forward and backward), then the reduce, chunk by chunk, each thread t
    /// calling `link(lo, hi, sums, first_link, t)` on its share of a chunk (sums: the chain so far,
    /// from the previous process), then `apply(lo, hi, sums, t)` on its share of the step's sums.
    virtual void chained_step(std::size_t size, detail::function_ref<void(std::size_t)> replicas,
                              detail::function_ref<void(std::size_t, std::size_t, float*, bool, std::size_t)> link,
                              detail::function_ref<void(std::size_t, std::size_t, float*, std::size_t)> apply) const = 0;
    /// Every process gets every micro-batch's scores: row c (`width` doubles) of micro-batch c, filled
    /// by `get(c, row)` for this process's micro-batches, then given to `set(c, row)` for all of them.
    virtual void share_scores(std::size_t width, detail::function_ref<void(std::size_t, double*)> get,
                              detail::function_ref<void(std::size_t, const double*)> set) const = 0;
    /// Every process gets every micro-batch's rows of `width` floats: micro-batch c's `sizes[c]` rows
    /// lie one after another from `base`, this process's filled in.
    virtual void share_rows(float* base, const std::size_t* sizes, std::size_t width) const = 0;
};

#ifdef TPUDSL_STEP_PHASES
/// Opt-in timing of the training step's phases, for benchmarks (`tpudsl_bench --phases`): what each
/// thread spends in every replica_runner::step on its replicas' forward and backward passes, at the
/// barrier after them, and on its shard of the fused reduce-and-update, in microseconds, the first
/// `steps` steps after clear(). Compiled in only where TPUDSL_STEP_PHASES is defined, in every
/// translation unit of the program alike; four clock reads a thread and step when it is.
struct step_phases {
    static constexpr std::size_t threads = 64, steps = 4096;
    float replicas[threads][steps], wait[threads][steps], reduce[threads][steps];
    std::size_t count[threads];

    void clear() noexcept { std::fill(std::begin(count), std::end(count), std::size_t{0}); }
};

/// The program's record (3 MB, static).
inline step_phases recorded_step_phases{};

/// One thread's step: the times at its four marks, recorded into recorded_step_phases.
class step_timer {
public:
    void mark(std::size_t i) noexcept { marks_[i] = std::chrono::steady_clock::now(); }
    void
    record(std::size_t t) const noexcept
    {
        auto& p = recorded_step_phases;
        if (t >= p.threads || p.count[t] >= p.steps)
            return;
        const auto us = [&](std::size_t i) {
            return std::chrono::duration<float, std::micro>(marks_[i + 1] - marks_[i]).count();
        };
        p.replicas[t][p.count[t]] = us(0);
        p.wait[t][p.count[t]] = us(1);
        p.reduce[t][p.count[t]++] = us(2);
    }

private:
    std::chrono::steady_clock::time_point marks_[4];
};
#else
/// Without TPUDSL_STEP_PHASES a step is not timed: these calls compile to nothing.
struct step_timer {
    void mark(std::size_t) noexcept {}
    void record(std::size_t) const noexcept {}
};
#endif

/// What a model's training and inference ask of its strategy at run time, whatever the strategy's
/// type: the threads, which replicas run here and how many micro-batches each computes, and the other
/// processes (multi-worker only). One model engine per (model, micro-batches) serves every strategy
/// through it, so a program that offers several strategies compiles the model's machinery once.
struct replica_runner {
    std::shared_ptr<thread_pool> pool;
    /// The unit a global batch must divide into (Keras' num_replicas_in_sync).
    std::size_t replicas_in_sync = 1;
    /// The replicas this process runs, [first, last), round-robin over its threads.
    std::size_t first = 0, last = 1;
    /// Micro-batches per replica: replica r computes [r per_replica, (r + 1) per_replica).
    std::size_t per_replica = 1;
    /// The other processes of a multi-worker job; null in a single-process strategy.
    std::shared_ptr<const worker_group> workers;

    /// Threads that run the replicas.
    [[nodiscard]] std::size_t threads() const noexcept { return pool->size(); }

    /// Calls f(r) for each replica r that thread t runs.
    template <class F>
    void
    for_each_replica_of(std::size_t t, F&& f) const
    {
        for (std::size_t r = first + t; r < last; r += pool->size())
            f(r);
    }

    /// Every thread t calls f(t); returns when all have.
    template <class F>
    void
    run(F&& f) const
    {
        pool->run(f);
    }

    /// One training step: every thread t runs replicas(t) (its replicas' forward and backward), all
    /// wait for all, then each runs reduce(t, threads) (its shard of the fused reduce-and-update).
    template <class Replicas, class Reduce>
    void
    step(Replicas&& replicas, Reduce&& reduce) const
    {
        auto work = [&](std::size_t t) {
            step_timer timer;
            timer.mark(0);
            replicas(t);
            timer.mark(1);
            pool->sync();
            timer.mark(2);
            reduce(t, pool->size());
            timer.mark(3);
            timer.record(t);
        };
        pool->run(work);
    }
};

} // namespace distribute

namespace detail {
/// What the thread strategies share: N replicas in Chunks micro-batches, round-robin on a persistent
/// pool of threads.
template <std::size_t N, std::size_t Chunks>
class threaded_strategy {
public:
    explicit threaded_strategy(std::size_t threads) : pool_(std::make_shared<distribute::thread_pool>(threads)) {}

    /// Threads that run the replicas.
    [[nodiscard]] std::size_t threads() const noexcept { return pool_->size(); }

    /// What the models made in the strategy's scope run on.
    [[nodiscard]] distribute::replica_runner
    runner() const
    {
        return {.pool = pool_, .replicas_in_sync = N, .first = 0, .last = N, .per_replica = Chunks / N, .workers = {}};
    }

private:
    std::shared_ptr<distribute::thread_pool> pool_;
};
} // namespace detail

/// Finds the cores this process may run on (its CPU affinity, else the hardware's count).
struct CpuClusterResolver {
    std::size_t cores = detect_cores();

    [[nodiscard]] static std::size_t
    detect_cores() noexcept
    {
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
            return static_cast<std::size_t>(CPU_COUNT(&set));
        const unsigned hw = std::thread::hardware_concurrency();
        return hw ? hw : 1;
    }
};

/// Prints what the resolver found, as TensorFlow prints a TPU system.
inline void
initialize_cpu_system(const CpuClusterResolver& resolver, std::ostream& out = std::clog)
{
    out << "INFO:tpudsl:Initializing the CPU system: localhost\n"
        << "INFO:tpudsl:Finished initializing CPU system.\n"
        << "INFO:tpudsl:Found CPU system:\n"
        << "INFO:tpudsl:*** Num CPU Cores: " << resolver.cores << '\n'
        << "INFO:tpudsl:*** Num CPU Workers: 1\n"
        << "INFO:tpudsl:*** Num CPU Cores Per Worker: " << resolver.cores << '\n';
    for (std::size_t c = 0; c < resolver.cores; ++c)
        out << "INFO:tpudsl:*** Available Device: _DeviceAttributes(/job:localhost/replica:0/task:0/device:CPU:" << c
            << ", CPU, 0, 0)\n";
}

/// One replica on the calling thread. The batch is computed in the same 8 fixed micro-batches as
/// TpuStrategy<N> (N <= 8) and their gradients are summed in the same order, so one core and N
/// replicas produce the same bits. (`TpuStrategy<1, 1>` computes each batch in one piece instead.)
class OneDeviceStrategy : public detail::threaded_strategy<1, 8> {
public:
    static constexpr std::size_t num_replicas_in_sync = 1;
    /// The batch is computed in this many fixed pieces, whose gradients are summed in order.
    static constexpr std::size_t micro_batches = 8;

    OneDeviceStrategy() : threaded_strategy(1) {}
    explicit OneDeviceStrategy(const CpuClusterResolver&) : OneDeviceStrategy() {}

    /// The model made in the strategy's scope.
    template <class Model>
    [[nodiscard]] Trainable<Model, OneDeviceStrategy>
    scope(std::uint64_t seed = 0) const
    {
        return Trainable<Model, OneDeviceStrategy>(seed, *this);
    }
};

/// N replicas of the model's graph on a persistent pool of min(N, cores) threads, sharing one set of
/// parameters. The global batch is split over Chunks fixed micro-batches (sizes differ by at most
/// one; the first ones take the extra samples), Chunks / N per replica; each has its own workspace
/// and gradient arena. After backward, one fused pass sums the arenas in micro-batch order and
/// applies the optimizer, sharded over the threads. Because the micro-batches and their order do not
/// depend on N, TpuStrategy<1>, <2>, <4> and <8> (same Chunks) give the same bits.
/// @tparam N      replicas (`num_replicas_in_sync`)
/// @tparam Chunks micro-batches per step, a multiple of N (8, or N when N > 8)
template <std::size_t N, std::size_t Chunks = (N > 8 ? N : 8)>
class TpuStrategy : public detail::threaded_strategy<N, Chunks> {
    static_assert(N > 0, "tpudsl::TpuStrategy<N>: requires at least one replica");
    static_assert(Chunks % N == 0, "tpudsl::TpuStrategy<N, Chunks>: Chunks must be a multiple of N, so that every "
                                   "replica computes the same number of micro-batches");

public:
    static constexpr std::size_t num_replicas_in_sync = N;
    static constexpr std::size_t micro_batches = Chunks;

    /// N replicas on min(N, cores) threads (`threads()`).
    explicit TpuStrategy(const CpuClusterResolver& resolver = {})
        : detail::threaded_strategy<N, Chunks>(std::min(N, std::max<std::size_t>(resolver.cores, 1)))
    {
    }

    /// The model made in the strategy's scope; it shares the strategy's threads.
    template <class Model>
    [[nodiscard]] Trainable<Model, TpuStrategy>
    scope(std::uint64_t seed = 0) const
    {
        return Trainable<Model, TpuStrategy>(seed, *this);
    }

    /// Keras' TPU batch rule, made static: a compile-time global batch must split evenly.
    template <std::size_t GlobalBatch>
    static constexpr bool divides = GlobalBatch % N == 0;

    template <std::size_t GlobalBatch>
    static constexpr std::size_t
    per_replica_batch() noexcept
    {
        static_assert(GlobalBatch % N == 0, "tpudsl::TpuStrategy<N>::per_replica_batch<B>: the global batch B must be a "
                                            "multiple of the number of replicas N; round B to a multiple of N "
                                            "[TPUDSL_TPU_BATCH_NOT_DIVISIBLE]");
        return GlobalBatch / N;
    }
};

} // namespace tpudsl

#endif // !TPUDSL_DISTRIBUTE_STRATEGY_HPP
