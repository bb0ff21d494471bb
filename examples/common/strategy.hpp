/// @file The seed examples' strategies: `seeds::with_strategy(args, body)` makes the one that
/// --strategy names and calls `body(strategy)` with it, returning what the body returns:
///
///   one          tpudsl::OneDeviceStrategy: one replica on the calling thread;
///   tpu8         tpudsl::TpuStrategy<8> over the machine's cores, after initialize_cpu_system (the
///                default; the bits of `one`);
///   multiworker  tpudsl::MultiWorkerStrategy<1> over the processes `mpirun` launched, one thread each,
///                after initialize_multi_worker_system (the bits of `one` on 1, 2, 4 or 8 processes;
///                only in a program built with MPI: CMake's tpudsl::multi_worker defines
///                TPUDSL_WITH_MPI).
///
/// The body is a generic lambda, compiled once per strategy type; the model's engine (fit, evaluate,
/// the step) is shared by the three (tpudsl::detail::trainer), so each strategy adds little. Under multiworker every
/// process runs the same body on the same data; only the chief (`seeds::is_chief(strategy)`, rank 0)
/// prints the results and writes the weights file. A worker whose body throws ends the whole job
/// (MPI_Abort through the resolver's terminate handler), since the others would wait for it forever.
#ifndef TPUDSL_EXAMPLES_COMMON_STRATEGY_HPP
#define TPUDSL_EXAMPLES_COMMON_STRATEGY_HPP

#include "common/args.hpp"

#include <tpudsl/tpudsl.hpp>
#ifdef TPUDSL_WITH_MPI
#include <tpudsl/distribute/multi_worker.hpp>
#endif

#include <exception>
#include <utility>

namespace seeds {

/// True but on the workers of a multi-worker job other than its chief: they compute what the chief
/// computes, and leave the printing and the files to it.
template <class Strategy>
[[nodiscard]] bool
is_chief(const Strategy& strategy) noexcept
{
    if constexpr (requires { strategy.is_chief(); })
        return strategy.is_chief();
    else
        return true;
}

/// Makes the strategy --strategy names and returns `body(strategy)`.
template <class Body>
int
with_strategy(const Args& args, Body&& body)
{
    if (args.strategy == "one") {
        tpudsl::OneDeviceStrategy strategy;
        return std::forward<Body>(body)(strategy);
    }
#ifdef TPUDSL_WITH_MPI
    if (args.strategy == "multiworker") {
        // [multiworker_strategy]
        tpudsl::MpiClusterResolver resolver;   // MPI_Init_thread; MPI_Finalize when the last holder goes
        tpudsl::initialize_multi_worker_system(resolver);
        tpudsl::MultiWorkerStrategy<1> strategy(resolver);   // one thread per process
        // [multiworker_strategy]
        try {
            return std::forward<Body>(body)(strategy);
        } catch (...) {
            if (resolver.size() > 1)
                std::terminate();   // says why on stderr and ends every worker (MPI_Abort)
            throw;                  // alone: main reports it as always
        }
    }
#endif
    // [tpu8_strategy]
    tpudsl::CpuClusterResolver resolver;
    tpudsl::initialize_cpu_system(resolver);
    tpudsl::TpuStrategy<8> strategy(resolver);
    // [tpu8_strategy]
    return std::forward<Body>(body)(strategy);
}

} // namespace seeds

#endif
