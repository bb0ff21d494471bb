/// @file Defines MultiWorkerStrategy<ReplicasPerWorker> and MpiClusterResolver: the fused step of
/// TpuStrategy spread over processes (on one machine or many) that MPI launches, with the bits of one
/// process. Not part of the umbrella header: a program that includes it links MPI (CMake:
/// `tpudsl::multi_worker`, or `find_package(MPI)` and `MPI::MPI_CXX`).
///
///   tpudsl::MpiClusterResolver resolver;                    // MPI_Init_thread unless the program did
///   tpudsl::MultiWorkerStrategy<2> strategy(resolver);      // 2 threads in each process
///   auto model = strategy.scope<Model>(seed);               // rank 0's initial weights everywhere
///   model.compile(...); model.fit(x, y, {.batch_size = 128});
///   // mpirun -np 4 --bind-to none ./program
///
/// A step's global batch is split into the same fixed micro-batches as on one process (8 by default);
/// process r of K computes micro-batches [r M / K, (r + 1) M / K) (every process reads the whole data
/// with the same shuffle, and gathers only its micro-batches' samples). Their gradients meet in a
/// chained reduce: process 0 starts the sum of the flat gradient buffer with its micro-batches, sends
/// it to process 1, which goes on with its own, and so on to the last process, whose sums are the
/// step's: they go back around the ring chunk by chunk, each process applying the optimizer to a chunk
/// as it arrives. The buffer travels in chunks, so that process r + 1 works on chunk c while process r
/// works on chunk c + 1. Each element of the sum
/// gets exactly the operations, in the order, that one process gives it (a deferred kernel's chain
/// over the samples resumes where the previous process left it: gemm_tn_micro_batches' load_c), so
/// 1, 2 or 4 processes give the bits of OneDeviceStrategy. `Reduction::allreduce` trades that for
/// MPI_Allreduce over the processes' partial sums (MPI promises no order, so no bits).
#ifndef TPUDSL_DISTRIBUTE_MULTI_WORKER_HPP
#define TPUDSL_DISTRIBUTE_MULTI_WORKER_HPP

#include <tpudsl/config.hpp>
#include <tpudsl/detail/text.hpp>
#include <tpudsl/distribute/strategy.hpp>
#include <tpudsl/distribute/thread_pool.hpp>

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1   // MPI's C API only: Open MPI's deprecated C++ bindings do not build warning-free
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tpudsl {

namespace detail {

/// The terminate handler of a process in a multi-worker job: a worker that ends on an exception (or
/// std::terminate) would leave the others waiting in the step's messages; it says why on stderr and
/// ends the whole job through MPI_Abort. (A worker killed outright is seen by the launcher: mpirun
/// ends the job when one of its processes dies.)
[[noreturn]] inline void
mpi_terminate() noexcept
{
    int rank = -1, initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::string why = "std::terminate was called";
    if (const std::exception_ptr e = std::current_exception()) {
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& x) {
            why = std::string("an exception was not caught: ") + x.what();
        } catch (...) {
            why = "an exception of unknown type was not caught";
        }
    }
    std::cerr << "tpudsl: worker " << rank << " is terminating (" << why
              << "); ending every worker of the job (MPI_Abort)" << std::endl;
    if (initialized && !finalized)
        MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort();
}

/// Throws what an MPI call returned, naming the call (the communicators tpudsl uses return errors).
inline void
mpi_check(int rc, const char* call)
{
    if (rc == MPI_SUCCESS)
        return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    throw std::runtime_error(detail::concat({"tpudsl::MultiWorkerStrategy: ", call, " failed: ",
                                             std::string_view(text, length)}));
}

/// MPI itself, once per process: initialised (MPI_THREAD_FUNNELED) unless the program did it, and then
/// finalised when the last resolver that holds it goes; left alone otherwise.
class mpi_environment {
public:
    static std::shared_ptr<mpi_environment>
    acquire(int* argc, char*** argv)
    {
        static std::mutex guard;
        static std::weak_ptr<mpi_environment> current;
        const std::lock_guard lock(guard);
        if (std::shared_ptr<mpi_environment> e = current.lock())
            return e;
        std::shared_ptr<mpi_environment> e(new mpi_environment(argc, argv));
        current = e;
        return e;
    }

    mpi_environment(const mpi_environment&) = delete;
    mpi_environment& operator=(const mpi_environment&) = delete;

    ~mpi_environment()
    {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (owns_ && !finalized)
            MPI_Finalize();
    }

private:
    mpi_environment(int* argc, char*** argv)
    {
        int initialized = 0, finalized = 0;
        MPI_Initialized(&initialized);
        MPI_Finalized(&finalized);
        if (finalized)
            throw std::runtime_error("tpudsl::MpiClusterResolver: MPI was finalised already, and a process runs MPI "
                                     "once; keep a resolver (or a strategy made from it) alive for as long as MPI is used");
        int provided = 0;
        if (!initialized) {
            mpi_check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
            owns_ = true;
            if (provided < MPI_THREAD_FUNNELED)
                throw std::runtime_error("tpudsl::MpiClusterResolver: this MPI library offers no thread support "
                                         "(MPI_THREAD_FUNNELED or better is needed: only the main thread calls MPI, "
                                         "but other threads run)");
        } else {
            MPI_Query_thread(&provided);
            if (provided < MPI_THREAD_FUNNELED)
                throw std::runtime_error("tpudsl::MpiClusterResolver: MPI was initialised without thread support; "
                                         "initialise it with MPI_Init_thread(..., MPI_THREAD_FUNNELED, ...) or let "
                                         "tpudsl do it");
        }
        std::set_terminate(mpi_terminate);
    }

    bool owns_ = false;
};

/// A communicator of tpudsl's own (so that its messages never meet the program's), over MPI_COMM_WORLD.
class mpi_session {
public:
    mpi_session(int* argc, char*** argv) : environment_(mpi_environment::acquire(argc, argv))
    {
        mpi_check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
        MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &size_);
        char name[MPI_MAX_PROCESSOR_NAME];
        int length = 0;
        MPI_Get_processor_name(name, &length);
        hostname_.assign(name, static_cast<std::size_t>(length));
    }

    mpi_session(const mpi_session&) = delete;
    mpi_session& operator=(const mpi_session&) = delete;

    ~mpi_session()
    {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized)
            MPI_Comm_free(&comm_);
    }   // then the environment, finalised if this was its last holder

    [[nodiscard]] MPI_Comm comm() const noexcept { return comm_; }
    [[nodiscard]] int rank() const noexcept { return rank_; }
    [[nodiscard]] int size() const noexcept { return size_; }
    [[nodiscard]] const std::string& hostname() const noexcept { return hostname_; }

private:
    std::shared_ptr<mpi_environment> environment_;
    MPI_Comm comm_ = MPI_COMM_NULL;
    int rank_ = 0, size_ = 1;
    std::string hostname_;
};

} // namespace detail

/// Finds the processes MPI launched (rank, size, host) and this process's cores; initialises MPI with
/// thread support (MPI_THREAD_FUNNELED) unless the program has, and finalises it when the last resolver
/// (copies held by strategies and their models included) goes, if it initialised it. Every worker
/// makes its resolvers in the same order (each duplicates MPI_COMM_WORLD, a collective call).
class MpiClusterResolver {
public:
    MpiClusterResolver() : MpiClusterResolver(nullptr, nullptr) {}
    MpiClusterResolver(int* argc, char*** argv) : session_(std::make_shared<detail::mpi_session>(argc, argv)) {}

    /// This process's place among the workers (0 is the chief).
    [[nodiscard]] int rank() const noexcept { return session_->rank(); }
    /// Workers (processes) in the job.
    [[nodiscard]] int size() const noexcept { return session_->size(); }
    [[nodiscard]] const std::string& hostname() const noexcept { return session_->hostname(); }
    /// Cores this process may run on (its CPU affinity: `mpirun --bind-to none` leaves it all of them).
    [[nodiscard]] std::size_t cores() const noexcept { return CpuClusterResolver::detect_cores(); }

    [[nodiscard]] const std::shared_ptr<detail::mpi_session>& session() const noexcept { return session_; }

private:
    std::shared_ptr<detail::mpi_session> session_;
};

/// How the workers' gradients meet.
enum class Reduction {
    /// Chained in rank order, in chunks, then broadcast: the bits of one process.
    deterministic,
    /// MPI_Allreduce over each worker's partial sum: MPI picks the order (and so the bits) by process
    /// count and message size; one collective instead of a chain.
    allreduce,
};

/// Where a worker's training steps spent their time (thread 0's clock), for benchmarks.
struct MultiWorkerTimings {
    std::size_t steps = 0;
    double compute_seconds = 0;   ///< forward and backward of the worker's micro-batches
    double reduce_seconds = 0;    ///< the reduce: its links of the chain and the waits for the previous worker's
    double apply_seconds = 0;     ///< the step's sums, received chunk by chunk, and the optimizer on them
    std::size_t bytes_sent = 0;   ///< by this worker's chain links and its forwarding of the step's sums
};

struct MultiWorkerOptions {
    Reduction reduction = Reduction::deterministic;
    /// Floats per message of the chained reduce (a process works on one chunk while the next process
    /// works on the one before). 64 KiB: the Fashion-MNIST model's 108,816 floats in 7 chunks, so that
    /// the second worker waits for one seventh of the first's link, not half (65,536: 2 chunks, a third
    /// fewer samples/s on 2 workers).
    std::size_t chunk_floats = 16384;
};

namespace detail {

/// The processes of a multi-worker job over MPI (distribute::worker_group): process r of K computes
/// micro-batches [r M / K, (r + 1) M / K) of the M of each step on its threads, and the chained reduce
/// joins them in micro-batch order. One per strategy object, shared by the models made in its scope;
/// not a template: every MultiWorkerStrategy<R, M> of a program runs on this one code.
class mpi_workers final : public distribute::worker_group {
public:
    mpi_workers(const MpiClusterResolver& resolver, MultiWorkerOptions options, std::size_t micro_batches,
                std::size_t replicas_per_worker)
        : resolver_(resolver), options_(options), micro_batches_(micro_batches)
    {
        const auto workers = static_cast<std::size_t>(resolver_.size());
        if (micro_batches % workers != 0)
            throw std::invalid_argument(detail::concat({"tpudsl::MultiWorkerStrategy: ", std::to_string(workers),
                                                        " processes cannot share the ", std::to_string(micro_batches),
                                                        " micro-batches of a step evenly; launch a number of processes that divides ",
                                                        std::to_string(micro_batches),
                                                        " (or raise MultiWorkerStrategy's Chunks)"}));
        if (options_.chunk_floats < buffer_alignment_floats)
            throw std::invalid_argument(detail::concat({"tpudsl::MultiWorkerStrategy: chunk_floats must be at least ",
                                                        std::to_string(buffer_alignment_floats)}));
        first_ = micro_batches / workers * static_cast<std::size_t>(resolver_.rank());
        last_ = first_ + micro_batches / workers;
        pool_ = std::make_shared<distribute::thread_pool>(
            std::min({replicas_per_worker, std::max<std::size_t>(resolver_.cores(), 1), last_ - first_}));
    }

    [[nodiscard]] const MpiClusterResolver& resolver() const noexcept { return resolver_; }
    [[nodiscard]] const std::shared_ptr<distribute::thread_pool>& pool() const noexcept { return pool_; }
    [[nodiscard]] std::size_t first() const noexcept { return first_; }
    [[nodiscard]] std::size_t last() const noexcept { return last_; }
    [[nodiscard]] MultiWorkerTimings& timings() const noexcept { return timings_; }

    [[nodiscard]] bool is_chief() const noexcept override { return resolver_.rank() == 0; }

    void
    broadcast_from_chief(float* p, std::size_t n) const override
    {
        mpi_check(bcast(p, n, 0), "MPI_Bcast");
    }

    void
    chained_step(std::size_t size, function_ref<void(std::size_t)> replicas,
                 function_ref<void(std::size_t, std::size_t, float*, bool, std::size_t)> link,
                 function_ref<void(std::size_t, std::size_t, float*, std::size_t)> apply) const override
    {
        if (sums_.size() < size)
            sums_.resize(size);
        float* sums = sums_.data();
        const int rank = resolver_.rank(), workers = resolver_.size();
        const std::size_t chunk = options_.chunk_floats / buffer_alignment_floats * buffer_alignment_floats;
        const std::size_t chunks = (size + chunk - 1) / chunk;
        recvs_.assign(chunks, MPI_REQUEST_NULL);   // no allocation after the first step: capacity kept
        sends_.assign(chunks, MPI_REQUEST_NULL);
        final_recvs_.assign(chunks, MPI_REQUEST_NULL);
        final_sends_.assign(chunks, MPI_REQUEST_NULL);
        const MPI_Comm comm = resolver_.session()->comm();
        const bool chain = options_.reduction == Reduction::deterministic && workers > 1;
        // The step's sums leave the last worker chunk by chunk, around the ring (last -> 0 -> 1 -> ...
        // -> last - 1): each worker applies a chunk as it arrives and passes it on, so the pipeline of
        // the chain goes on through the distribution instead of ending in one broadcast of the buffer.
        const bool last = rank + 1 == workers;
        const int ring_from = rank == 0 ? workers - 1 : rank - 1;
        float* step_sums = sums;   // where this worker's copy of the step's sums lies
        if (chain && !last) {
            if (finals_.size() < size)
                finals_.resize(size);
            step_sums = finals_.data();
        }
        const auto final_tag = [&](std::size_t c) { return static_cast<int>(chunks + c); };
        auto share = [&](std::size_t lo, std::size_t hi, std::size_t t) {   // thread t's part of [lo, hi)
            auto at = [&](std::size_t i) {
                return i >= pool_->size() ? hi
                                          : lo + (hi - lo) * i / pool_->size() / buffer_alignment_floats *
                                                     buffer_alignment_floats;
            };
            return std::pair{at(t), at(t + 1)};
        };
        int error = MPI_SUCCESS;
        const char* failed = nullptr;
        auto note = [&](int rc, const char* call) {   // thread 0's MPI calls; the first error is kept
            if (rc != MPI_SUCCESS && error == MPI_SUCCESS) {
                error = rc;
                failed = call;
            }
        };
        using clock = std::chrono::steady_clock;
        clock::time_point started = clock::now(), computed, reduced;
        auto work = [&](std::size_t t) {
            if (t == 0 && chain)
                for (std::size_t c = 0; c < chunks; ++c) {
                    const std::size_t lo = c * chunk, hi = std::min(size, lo + chunk);
                    if (rank > 0)
                        note(MPI_Irecv(sums + lo, static_cast<int>(hi - lo), MPI_FLOAT, rank - 1, static_cast<int>(c),
                                       comm, &recvs_[c]),
                             "MPI_Irecv");
                    if (!last)
                        note(MPI_Irecv(step_sums + lo, static_cast<int>(hi - lo), MPI_FLOAT, ring_from, final_tag(c),
                                       comm, &final_recvs_[c]),
                             "MPI_Irecv (the step's sums)");
                }
            replicas(t);
            pool_->sync();
            if (t == 0)
                computed = clock::now();
            if (chain) {
                for (std::size_t c = 0; c < chunks; ++c) {
                    const std::size_t lo = c * chunk, hi = std::min(size, lo + chunk);
                    if (t == 0 && rank > 0)
                        note(MPI_Wait(&recvs_[c], MPI_STATUS_IGNORE), "MPI_Wait (receiving the previous worker's sums)");
                    pool_->sync();
                    const auto [b, e] = share(lo, hi, t);
                    link(b, e, sums, rank == 0, t);
                    pool_->sync();
                    if (t == 0 && !last)
                        note(MPI_Isend(sums + lo, static_cast<int>(hi - lo), MPI_FLOAT, rank + 1, static_cast<int>(c),
                                       comm, &sends_[c]),
                             "MPI_Isend");
                    if (t == 0 && last)   // chunk c of the step's sums is final: on around the ring
                        note(MPI_Isend(sums + lo, static_cast<int>(hi - lo), MPI_FLOAT, 0, final_tag(c), comm,
                                       &final_sends_[c]),
                             "MPI_Isend (the step's sums)");
                }
            } else {
                const auto [b, e] = share(0, size, t);
                link(b, e, sums, true, t);
                pool_->sync();
                if (t == 0 && workers > 1)
                    note(MPI_Allreduce(MPI_IN_PLACE, sums, static_cast<int>(size), MPI_FLOAT, MPI_SUM, comm),
                         "MPI_Allreduce");
            }
            pool_->sync();
            if (t == 0)
                reduced = clock::now();
            if (!chain) {
                const auto [b, e] = share(0, size, t);
                apply(b, e, sums, t);
                return;
            }
            for (std::size_t c = 0; c < chunks; ++c) {   // apply each chunk of the step's sums as it comes
                const std::size_t lo = c * chunk, hi = std::min(size, lo + chunk);
                if (t == 0 && !last) {
                    note(MPI_Wait(&final_recvs_[c], MPI_STATUS_IGNORE), "MPI_Wait (receiving the step's sums)");
                    if (rank + 2 < workers)   // the next worker on the ring is not the last one
                        note(MPI_Isend(step_sums + lo, static_cast<int>(hi - lo), MPI_FLOAT, rank + 1, final_tag(c),
                                       comm, &final_sends_[c]),
                             "MPI_Isend (the step's sums)");
                }
                pool_->sync();
                const auto [b, e] = share(lo, hi, t);
                apply(b, e, step_sums, t);
            }
            if (t == 0) {   // the sends read buffers the next step writes
                note(MPI_Waitall(static_cast<int>(chunks), sends_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
                note(MPI_Waitall(static_cast<int>(chunks), final_sends_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
            }
        };
        pool_->run(work);
        const clock::time_point finished = clock::now();
        ++timings_.steps;
        timings_.compute_seconds += std::chrono::duration<double>(computed - started).count();
        timings_.reduce_seconds += std::chrono::duration<double>(reduced - computed).count();
        timings_.apply_seconds += std::chrono::duration<double>(finished - reduced).count();
        if (chain && rank + 2 < workers)   // its chain links and the step's sums passed on
            timings_.bytes_sent += 2 * size * sizeof(float);
        else if (chain)   // the last worker sends the step's sums; the one before it its chain links only
            timings_.bytes_sent += size * sizeof(float);
        mpi_check(error, failed ? failed : "");
    }

    void
    share_scores(std::size_t width, function_ref<void(std::size_t, double*)> get,
                 function_ref<void(std::size_t, const double*)> set) const override
    {
        scores_.resize(micro_batches_ * width);
        for (std::size_t c = first_; c < last_; ++c)
            get(c, scores_.data() + c * width);
        if (resolver_.size() > 1) {
            const int count = static_cast<int>((last_ - first_) * width);
            mpi_check(MPI_Allgather(MPI_IN_PLACE, count, MPI_DOUBLE, scores_.data(), count, MPI_DOUBLE,
                                    resolver_.session()->comm()),
                      "MPI_Allgather (the micro-batches' losses and metrics)");
        }
        for (std::size_t c = 0; c < micro_batches_; ++c)
            set(c, scores_.data() + c * width);
    }

    void
    share_rows(float* base, const std::size_t* sizes, std::size_t width) const override
    {
        const auto workers = static_cast<std::size_t>(resolver_.size());
        if (workers == 1)
            return;
        counts_.assign(workers, 0);
        displs_.assign(workers, 0);
        std::size_t offset = 0;
        const std::size_t each = micro_batches_ / workers;
        for (std::size_t c = 0; c < micro_batches_; ++c) {
            const std::size_t w = c / each;
            if (c % each == 0)
                displs_[w] = static_cast<int>(offset * width);
            counts_[w] += static_cast<int>(sizes[c] * width);
            offset += sizes[c];
        }
        mpi_check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, base, counts_.data(), displs_.data(), MPI_FLOAT,
                                 resolver_.session()->comm()),
                  "MPI_Allgatherv (predict's outputs)");
    }

private:
    [[nodiscard]] int
    bcast(float* p, std::size_t n, int root) const
    {
        constexpr std::size_t most = std::size_t{1} << 30;   // MPI counts are ints
        for (std::size_t i = 0; i < n; i += most)
            if (const int rc = MPI_Bcast(p + i, static_cast<int>(std::min(most, n - i)), MPI_FLOAT, root,
                                         resolver_.session()->comm());
                rc != MPI_SUCCESS)
                return rc;
        return MPI_SUCCESS;
    }

    MpiClusterResolver resolver_;
    MultiWorkerOptions options_;
    std::size_t micro_batches_, first_ = 0, last_ = 0;
    std::shared_ptr<distribute::thread_pool> pool_;
    // Buffers sized once, reused every step (the step itself allocates nothing after the first).
    mutable std::vector<float> sums_;
    mutable std::vector<float> finals_;   // the step's sums as they arrive (all workers but the last)
    mutable std::vector<MPI_Request> recvs_, sends_, final_recvs_, final_sends_;
    mutable std::vector<double> scores_;
    mutable std::vector<int> counts_, displs_;
    mutable MultiWorkerTimings timings_;
};

} // namespace detail

/// Processes launched by MPI, each running `ReplicasPerWorker` threads, over one global batch split in
/// `Chunks` fixed micro-batches (Chunks / processes each). Used as TpuStrategy is: `scope<Model>(seed)`,
/// then compile, fit, evaluate, predict. The data given to fit/evaluate/predict must be the same on
/// every process (each reads its own micro-batches of each global batch); losses and metrics are those
/// of the global batch on every process; only the chief (rank 0) prints progress.
/// @tparam ReplicasPerWorker threads per process (at most its cores are used)
/// @tparam Chunks            micro-batches per step: the processes must divide it
template <std::size_t ReplicasPerWorker = 1, std::size_t Chunks = 8>
class MultiWorkerStrategy {
    static_assert(ReplicasPerWorker > 0, "tpudsl::MultiWorkerStrategy<ReplicasPerWorker>: requires at least one replica");

public:
    /// The fixed micro-batches the global batch splits into (the unit a compile-time batch must divide
    /// into, as TpuStrategy's replicas), wherever they run.
    static constexpr std::size_t num_replicas_in_sync = Chunks;
    static constexpr std::size_t micro_batches = Chunks;
    /// Its steps take the chained reduce (Trainable's compile).
    static constexpr bool chained = true;

    explicit MultiWorkerStrategy(const MpiClusterResolver& resolver = {}, MultiWorkerOptions options = {})
        : workers_(std::make_shared<detail::mpi_workers>(resolver, options, Chunks, ReplicasPerWorker))
    {
    }

    /// The model made in the strategy's scope, with the chief's initial weights.
    template <class Model>
    [[nodiscard]] Trainable<Model, MultiWorkerStrategy>
    scope(std::uint64_t seed = 0) const
    {
        return Trainable<Model, MultiWorkerStrategy>(seed, *this);
    }

    /// What the models made in the strategy's scope run on: this process's micro-batches on its threads.
    [[nodiscard]] distribute::replica_runner
    runner() const
    {
        return {.pool = workers_->pool(),
                .replicas_in_sync = Chunks,
                .first = workers_->first(),
                .last = workers_->last(),
                .per_replica = 1,
                .workers = workers_};
    }

    [[nodiscard]] const MpiClusterResolver& cluster_resolver() const noexcept { return workers_->resolver(); }
    [[nodiscard]] int rank() const noexcept { return workers_->resolver().rank(); }
    [[nodiscard]] int workers() const noexcept { return workers_->resolver().size(); }
    /// True on the worker that prints and writes files (rank 0).
    [[nodiscard]] bool is_chief() const noexcept { return workers_->is_chief(); }
    [[nodiscard]] std::size_t threads() const noexcept { return workers_->pool()->size(); }
    /// Where this worker's training steps spent their time since the strategy was made (or reset).
    [[nodiscard]] const MultiWorkerTimings& timings() const noexcept { return workers_->timings(); }
    void reset_timings() const noexcept { workers_->timings() = {}; }

    /// This process's micro-batches: [first, last).
    [[nodiscard]] std::size_t first_micro_batch() const noexcept { return workers_->first(); }
    [[nodiscard]] std::size_t last_micro_batch() const noexcept { return workers_->last(); }

private:
    std::shared_ptr<detail::mpi_workers> workers_;
};

/// Prints what the resolver found (on the chief only), as TensorFlow prints its workers.
inline void
initialize_multi_worker_system(const MpiClusterResolver& resolver, std::ostream& out = std::clog)
{
    std::vector<char> names;
    const std::string& own = resolver.hostname();
    std::vector<char> padded(MPI_MAX_PROCESSOR_NAME, '\0');
    std::copy(own.begin(), own.end(), padded.begin());
    if (resolver.rank() == 0)
        names.resize(static_cast<std::size_t>(resolver.size()) * MPI_MAX_PROCESSOR_NAME);
    detail::mpi_check(MPI_Gather(padded.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME,
                                 MPI_CHAR, 0, resolver.session()->comm()),
                      "MPI_Gather (the workers' host names)");
    if (resolver.rank() != 0)
        return;
    out << "INFO:tpudsl:Found multi-worker system:\n"
        << "INFO:tpudsl:*** Num Workers: " << resolver.size() << '\n';
    for (int r = 0; r < resolver.size(); ++r)
        out << "INFO:tpudsl:*** Worker: /job:worker/replica:0/task:" << r << " on "
            << names.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME << '\n';
}

} // namespace tpudsl

#endif // !TPUDSL_DISTRIBUTE_MULTI_WORKER_HPP
