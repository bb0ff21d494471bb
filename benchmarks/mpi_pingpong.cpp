// The link between two MPI processes, as the cost model of docs/distribute.md needs it: a ping-pong
// between ranks 0 and 1 (MPI_Send, MPI_Recv) over message sizes from 8 bytes to 16 MiB, each size's
// one-way time (half a round trip), and the fit t(n) = alpha + n / beta: alpha the one-way time of an
// 8-byte message, beta the bandwidth of the largest messages (least squares over 1 MiB and above).
//
//   mpirun -np 2 mpi_pingpong [--max-bytes N] [--trials T] [--no-pin]
//   tests/mpi/two_hosts.sh --min-bytes 0 $(command -v mpirun) build/release/benchmarks/mpi_pingpong
//       (the two processes in two network namespaces, TCP over a veth pair)
//
// Rank r runs on the r-th core it may use (--no-pin: where the scheduler puts it). Each size: T trials
// (7) of about 20 ms each, after a warm-up. Prints one line per size (the median over the trials of a
// trial's mean, and the best trial), then
//   mpi_pingpong trials=median alpha_us=<a> beta_GBps=<b> ns_per_float=<c> chunk_us=<d>
//   mpi_pingpong trials=best ...      (the same fit on each size's best trial)
// chunk_us: the one-way time of one of MultiWorkerStrategy's default chunks (16,384 floats, 64 KiB).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sched.h>

namespace {

/// Mean one-way time (s) of `iterations` round trips of `bytes` between ranks 0 and 1.
double
trial(std::vector<char>& buffer, std::size_t bytes, int iterations, int rank)
{
    const int n = static_cast<int>(bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < iterations; ++i) {
        if (rank == 0) {
            MPI_Send(buffer.data(), n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buffer.data(), n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buffer.data(), n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buffer.data(), n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    double t = (MPI_Wtime() - start) / (2.0 * iterations);
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);   // rank 0's clock
    return t;
}

} // namespace

int
main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::size_t max_bytes = std::size_t{16} << 20;
    int trials = 7;
    bool pin = true;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--max-bytes") == 0)
            max_bytes = std::strtoull(argv[i + 1], nullptr, 10);
        else if (std::strcmp(argv[i], "--trials") == 0)
            trials = std::max(1, std::atoi(argv[i + 1]));
    }
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--no-pin") == 0)
            pin = false;
    // Rank r on the r-th core it may use: two processes polling for messages on one core would wait for
    // each other's time slices (milliseconds), which one process per core never does.
    if (cpu_set_t allowed; pin && sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) >= 2) {
        int seen = 0;
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &allowed) && seen++ == rank % CPU_COUNT(&allowed)) {
                cpu_set_t one;
                CPU_ZERO(&one);
                CPU_SET(cpu, &one);
                sched_setaffinity(0, sizeof one, &one);
                break;
            }
    }
    if (size < 2) {
        if (rank == 0)
            std::fprintf(stderr, "mpi_pingpong: needs 2 processes (mpirun -np 2)\n");
        MPI_Finalize();
        return 1;
    }
    std::vector<char> buffer(max_bytes, 1);
    std::vector<double> sizes, medians, bests;
    if (rank == 0)
        std::printf("mpi_pingpong: %d processes, ranks 0 and 1; one-way time = half a round trip\n", size);
    for (std::size_t bytes = 8; bytes <= max_bytes; bytes *= 2) {
        // Trials of about 20 ms each: after a warm-up (connections, buffers), the better of two runs of
        // 5 round trips sets the count (2 to 10,000).
        trial(buffer, bytes, 5, rank);
        const double probe = std::min(trial(buffer, bytes, 5, rank), trial(buffer, bytes, 5, rank));
        const int iterations = static_cast<int>(std::clamp(0.02 / (2 * probe), 2.0, 10000.0));
        std::vector<double> t;
        for (int k = 0; k < trials; ++k)
            t.push_back(trial(buffer, bytes, iterations, rank));
        std::sort(t.begin(), t.end());
        sizes.push_back(static_cast<double>(bytes));
        medians.push_back(t[t.size() / 2]);
        bests.push_back(t.front());
        if (rank == 0)
            std::printf("mpi_pingpong bytes=%zu one_way_us=%.2f best_us=%.2f GBps=%.3f\n", bytes, medians.back() * 1e6,
                        bests.back() * 1e6, static_cast<double>(bytes) / medians.back() / 1e9);
    }
    // alpha: the 8-byte time; beta: least squares over 1 MiB and above; the chunk: 64 KiB. Once on the
    // trials' medians (what a loaded machine gives), once on the best trials (the link when undisturbed).
    if (rank == 0)
        for (const auto* which : {&medians, &bests}) {
            const std::vector<double>& times = *which;
            double sx = 0, sy = 0, sxx = 0, sxy = 0, chunk = 0;
            int m = 0;
            for (std::size_t i = 0; i < sizes.size(); ++i) {
                if (sizes[i] == double(16384 * sizeof(float)))
                    chunk = times[i];
                if (sizes[i] >= double(1 << 20)) {
                    sx += sizes[i];
                    sy += times[i];
                    sxx += sizes[i] * sizes[i];
                    sxy += sizes[i] * times[i];
                    ++m;
                }
            }
            const double slope = m >= 2 ? (m * sxy - sx * sy) / (m * sxx - sx * sx) : times.back() / sizes.back();
            std::printf("mpi_pingpong trials=%s alpha_us=%.2f beta_GBps=%.3f ns_per_float=%.3f chunk_us=%.2f\n",
                        which == &medians ? "median" : "best", times.front() * 1e6, 1e-9 / slope,
                        slope * sizeof(float) * 1e9, chunk * 1e6);
        }
    MPI_Finalize();
    return 0;
}
