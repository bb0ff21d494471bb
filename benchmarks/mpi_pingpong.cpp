// MPI's latency (alpha) and time per byte (beta) between two processes, for the alpha-beta model of
// benchmarks/multi_worker_projection.py: a ping-pong of MPI_Send/MPI_Recv (blocking, as a chain link
// ends up being), message sizes 4 B to 64 MiB, each the median of several rounds of repetitions.
//
//   mpirun -np 2 --bind-to core mpi_pingpong [--max-bytes 67108864] [--rounds 7] [--min-seconds 0.01]
//   mpirun -np 2 --bind-to core --mca btl tcp,self mpi_pingpong          (TCP over loopback)
//
// Prints (rank 0) one line per size:
//   mpi_pingpong bytes=<n> one_way_us=<t> median_us=<t> mb_per_s=<n / t>
// one_way_us: the fastest of the rounds (each the mean of enough round trips for --min-seconds): on a
// machine shared with other work the fastest round is the transport's, the median shows the noise.
// Then a fit of the fastest: alpha = the one-way time of the smallest messages (median of those up to
// 64 B), beta = the slope of one-way time over bytes for messages of 64 KiB to 16 MiB (least squares
// weighted by 1/t^2, so that each size counts by its relative error: the chained reduce's chunks are
// 64 KiB, the gradient buffers 0.4 to 4.8 MB):
//   mpi_pingpong_fit alpha_us=<a> beta_ns_per_byte=<b> bandwidth_mb_per_s=<1 / b>
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int
main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::size_t max_bytes = std::size_t{64} << 20;
    int rounds = 7;   // odd
    double min_seconds = 0.01;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--max-bytes")
            max_bytes = std::stoul(value);
        else if (flag == "--rounds")
            rounds = std::stoi(value);
        else if (flag == "--min-seconds")
            min_seconds = std::stod(value);
        else {
            if (rank == 0)
                std::fprintf(stderr, "mpi_pingpong: unknown flag %s (--max-bytes, --rounds, --min-seconds)\n", flag.c_str());
            MPI_Finalize();
            return 2;
        }
    }
    if (size != 2) {
        if (rank == 0)
            std::fprintf(stderr, "mpi_pingpong: run it on 2 processes (mpirun -np 2)\n");
        MPI_Finalize();
        return 2;
    }
    std::vector<char> buffer(max_bytes, 1);
    const int peer = 1 - rank;
    std::vector<double> sizes, times;
    for (std::size_t bytes = 4; bytes <= max_bytes; bytes *= 4) {
        const int n = static_cast<int>(bytes);
        auto exchange = [&](int reps) {   // reps round trips; rank 0's time
            MPI_Barrier(MPI_COMM_WORLD);
            const double start = MPI_Wtime();
            for (int r = 0; r < reps; ++r) {
                if (rank == 0) {
                    MPI_Send(buffer.data(), n, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
                    MPI_Recv(buffer.data(), n, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buffer.data(), n, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buffer.data(), n, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
                }
            }
            double t = MPI_Wtime() - start;
            MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);   // both ranks take rank 0's decisions
            return t;
        };
        exchange(2);   // warm-up: connections, registration, pages
        int reps = 1;  // enough round trips for min_seconds
        for (double t = exchange(reps); t < min_seconds && reps < (1 << 20); t = exchange(reps))
            reps *= 2;
        std::vector<double> one_way;
        for (int r = 0; r < rounds; ++r)
            one_way.push_back(exchange(reps) / (2.0 * reps));
        std::sort(one_way.begin(), one_way.end());
        const double t = one_way.front(), mid = one_way[one_way.size() / 2];
        sizes.push_back(static_cast<double>(bytes));
        times.push_back(t);
        if (rank == 0) {
            std::printf("mpi_pingpong bytes=%zu one_way_us=%.3f median_us=%.3f mb_per_s=%.1f\n", bytes, t * 1e6, mid * 1e6,
                        static_cast<double>(bytes) / t / 1e6);
            std::fflush(stdout);
        }
    }
    if (rank == 0) {
        std::vector<double> small;
        for (std::size_t i = 0; i < sizes.size(); ++i)
            if (sizes[i] <= 64)
                small.push_back(times[i]);
        std::nth_element(small.begin(), small.begin() + small.size() / 2, small.end());
        const double alpha = small[small.size() / 2];
        double sx = 0, sy = 0, sxx = 0, sxy = 0, m = 0;
        for (std::size_t i = 0; i < sizes.size(); ++i)
            if (sizes[i] >= 65536 && sizes[i] <= 16777216) {
                const double w = 1.0 / (times[i] * times[i]);
                sx += w * sizes[i];
                sy += w * times[i];
                sxx += w * sizes[i] * sizes[i];
                sxy += w * sizes[i] * times[i];
                m += w;
            }
        const double beta = m > 0 ? (m * sxy - sx * sy) / (m * sxx - sx * sx) : 0.0;
        std::printf("mpi_pingpong_fit alpha_us=%.3f beta_ns_per_byte=%.4f bandwidth_mb_per_s=%.1f\n", alpha * 1e6,
                    beta * 1e9, beta > 0 ? 1e-6 / beta : 0.0);
    }
    MPI_Finalize();
    return 0;
}
