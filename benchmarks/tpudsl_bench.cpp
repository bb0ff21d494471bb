// How close each seed model trains to the machine's FMA peak, and how its GEMMs compare with
// OpenBLAS at the same shapes. Figures, never assertions.
//
//   tpudsl_bench [--model all|fashion|reuters|mnist|cifar|cifar_bn|reuters_lstm|reuters_transformer|resnet20] [--batch 32,128,512] [--strategy one,tpu2,tpu4,tpu8]
//                [--seconds 2] [--rounds 2] [--kernels on|off] [--phases on|off] [--csv F] [--json F] [--svg F]
//
// The FMA peak is measured here, with a loop of independent vector FMAs on one core and on every
// thread a strategy uses at once. A model's FLOPs are counted from its type: per sample, 2 x the
// multiply-adds of every Dense (over each timestep too), convolution and MultiHeadAttention (its
// projections, scores and weighted sums) for the forward pass, as many again for the kernel's gradient,
// and as many again for the input's gradient (all but the first layer). The GFLOP/s of a
// configuration are those FLOPs times its samples/s; peak_pct divides them by the peak of its threads.
//
// Each configuration prints one line that scripts read:
//   tpudsl_bench model=<name> batch=<b> strategy=<s> samples_per_s=<x> gflops=<y> peak_pct=<z> ...
// and each GEMM shape one line:
//   tpudsl_bench_kernel model=<name> op=<nn|tn|nt> m=<M> n=<N> k=<K> gflops=<x> peak_pct=<y> openblas_gflops=<z>
// With --phases on, each round of a configuration also prints a line a thread, from the steady steps:
//   tpudsl_phases model=<name> batch=<b> strategy=<s> round=<r> thread=<t> steps=<n> replicas_ms_p10=... p50 p90
//                 wait_ms_mean=<w> wait_ms_p90 reduce_ms_p50=<u> step_ms_p50=<v> step_ms_mean
// (the mean step beside the median: how much of a step's time the slow steps take)
// replicas: its replicas' forward and backward passes; wait: at the barrier after them (the other
// threads' lateness); reduce: its shard of the fused reduce-and-update (TPUDSL_STEP_PHASES, set for
// this program: four clock reads a thread and step).
#include "cifar10_bn/model.hpp"
#include "cifar10_resnet/model.hpp"
#include "cifar10_cnn/model.hpp"
#include "fashion_mnist_cnn/model.hpp"
#include "mnist_mlp/model.hpp"
#include "reuters_conv1d/model.hpp"
#include "reuters_lstm/model.hpp"
#include "reuters_transformer/model.hpp"

#include <tpudsl/detail/simd.hpp>
#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/tpudsl.hpp>

#include <xtensor/xtensor.hpp>

#if defined(TPUDSL_BENCH_OPENBLAS)
#include <cblas.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <new>
#include <numeric>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

double
seconds_since(clock_type::time_point start)
{
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

// ---------------------------------------------------------------------------------------------
// The FMA peak

/// Independent chains of FMAs, as many as the registers hold beside the two operands (20 of
/// AVX-512's 32, 12 of AVX2's 16: more would spill to memory), enough to hide the FMA latency on
/// every core we know (2 pipes x 4-5 cycles).
constexpr int chains = tpudsl::detail::simd::registers >= 32 ? 20 : 12;

[[gnu::noinline]] float
fma_loop(long iterations, float seed)
{
    using tpudsl::detail::simd::vfloat;
    vfloat acc[chains];
    for (int i = 0; i < chains; ++i)
        acc[i] = vfloat::broadcast(seed + static_cast<float>(i));
    const vfloat m = vfloat::broadcast(0.99999f), b = vfloat::broadcast(seed);
    for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 32
        for (int i = 0; i < chains; ++i)
            acc[i] = fma(acc[i], m, b);
    }
    vfloat s = acc[0];
    for (int i = 1; i < chains; ++i)
        s = s + acc[i];
    return reduce_add(s);
}

/// GFLOP/s of `threads` threads running the FMA loop at once (best of 5).
double
fma_peak(std::size_t threads)
{
    constexpr long iterations = 20'000'000;
    const double flops = 2.0 * chains * tpudsl::detail::simd::width * static_cast<double>(iterations);
    double best = 0;
    for (int round = 0; round < 5; ++round) {
        std::vector<std::thread> pool;
        std::atomic<float> sink{0};
        const auto start = clock_type::now();
        for (std::size_t t = 0; t < threads; ++t)
            pool.emplace_back([&, t] { sink = sink + fma_loop(iterations, 1e-3f * static_cast<float>(t + 1)); });
        for (auto& th : pool)
            th.join();
        best = std::max(best, flops * static_cast<double>(threads) / seconds_since(start) / 1e9);
    }
    return best;
}

// ---------------------------------------------------------------------------------------------
// FLOPs from the model's type

template <class Spec>
struct is_gemm_layer : std::false_type {};
template <std::size_t U, class A>
struct is_gemm_layer<tpudsl::Dense<U, A>> : std::true_type {};
template <std::size_t F, std::size_t K, class A, class P, std::size_t S>
struct is_gemm_layer<tpudsl::Conv1D<F, K, A, P, S>> : std::true_type {};
template <std::size_t F, auto K, class A, class P, auto S>
struct is_gemm_layer<tpudsl::Conv2D<F, K, A, P, S>> : std::true_type {};
template <std::size_t U, class A>
struct is_gemm_layer<tpudsl::TimeDistributed<tpudsl::Dense<U, A>>> : std::true_type {};

template <class Spec>
struct is_attention : std::false_type {};
template <std::size_t H, std::size_t K, std::size_t V, tpudsl::attention_options O>
struct is_attention<tpudsl::MultiHeadAttention<H, K, V, O>> : std::true_type {
    static constexpr std::size_t heads = H, key_dim = K, value_dim = V;
};

/// MultiHeadAttention's multiply-adds per sample: the query, key, value and output projections and
/// the scores and weighted sums of every head (T x S x (key_dim + value_dim)).
template <class B>
constexpr double
attention_macs()
{
    using A = is_attention<typename B::spec>;
    using d = typename tpudsl::detail::multi_head_attention_ops<A::heads, A::key_dim, A::value_dim,
                                                                 tpudsl::attention_options{}>::template dims<B>;
    const double hk = A::heads * A::key_dim, hv = A::heads * A::value_dim;
    return d::T * d::DQ * hk + d::S * d::DK * hk + d::S * d::DV * hv + d::T * hv * d::DQ +
           static_cast<double>(A::heads * d::T * d::S * (A::key_dim + A::value_dim));
}

/// A Dense or convolution as the GEMM it runs per sample: (positions x patch) . (patch x filters).
template <class B>
struct gemm_shape {
    static constexpr std::size_t n = B::output_shape::dims[B::output_shape::rank - 1];
    static constexpr std::size_t positions = B::output_shape::size / n;
    static constexpr std::size_t k = B::template weight<0>::size / n;
    static constexpr double macs = static_cast<double>(positions * k * n);
};

template <class M>
constexpr double
train_flops_per_sample()
{
    return []<std::size_t... I>(std::index_sequence<I...>) {
        double total = 0;
        auto add = [&]<std::size_t J>(std::integral_constant<std::size_t, J>) {
            using B = typename M::template layer<J>;
            if constexpr (is_gemm_layer<typename B::spec>::value)
                total += 2.0 * gemm_shape<B>::macs * (J == 0 ? 2.0 : 3.0);
            else if constexpr (is_attention<typename B::spec>::value)
                total += 2.0 * attention_macs<B>() * 3.0;
        };
        (add(std::integral_constant<std::size_t, I>{}), ...);
        return total;
    }(std::make_index_sequence<M::layer_count>{});
}

// ---------------------------------------------------------------------------------------------
// Training throughput

struct Args {
    std::string model = "all";
    std::vector<std::size_t> batches{32, 128, 512};
    std::vector<std::string> strategies{"one", "tpu2"};
    double seconds = 2.0;
    int rounds = 2;
    bool kernels = true;
    bool phases = false;
    std::string csv, json, svg;
};

struct Row {
    std::string model;
    std::size_t batch = 0;
    std::string strategy;
    std::size_t threads = 0;
    double samples_per_s = 0, ms_per_step = 0, gflops = 0, peak_pct = 0, first_epoch_ratio = 0;
};

struct KernelRow {
    std::string model, op;
    std::size_t m = 0, n = 0, k = 0;
    double gflops = 0, peak_pct = 0, openblas_gflops = 0;
};

struct Measured {
    double samples_per_s = 0;
    double first_epoch_ratio = 0;
    std::size_t threads = 0;
    std::vector<std::string> phases;   // a line's fields a thread (--phases)
};

/// The recorded steps' phases, a line's fields for each thread (distribute::step_phases).
std::vector<std::string>
phase_fields(std::size_t threads)
{
    std::vector<std::string> lines;
#ifdef TPUDSL_STEP_PHASES
    const auto& p = tpudsl::distribute::recorded_step_phases;
    const auto at = [](std::vector<float> v, double q) {
        std::sort(v.begin(), v.end());
        return v.empty() ? 0.0 : v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))] / 1000.0;
    };
    for (std::size_t t = 0; t < threads && t < p.threads; ++t) {
        const std::size_t n = p.count[t];
        const std::vector<float> rep(p.replicas[t], p.replicas[t] + n), red(p.reduce[t], p.reduce[t] + n),
            waits(p.wait[t], p.wait[t] + n);
        std::vector<float> step(n);
        for (std::size_t i = 0; i < n; ++i)
            step[i] = p.replicas[t][i] + p.wait[t][i] + p.reduce[t][i];
        const double wait = std::accumulate(waits.begin(), waits.end(), 0.0),
                     total = std::accumulate(step.begin(), step.end(), 0.0);
        const double per_step = n ? 1.0 / 1000.0 / static_cast<double>(n) : 0.0;
        char line[384];
        std::snprintf(line, sizeof line,
                      "thread=%zu steps=%zu replicas_ms_p10=%.3f replicas_ms_p50=%.3f replicas_ms_p90=%.3f "
                      "wait_ms_mean=%.3f wait_ms_p90=%.3f reduce_ms_p50=%.3f step_ms_p50=%.3f step_ms_mean=%.3f",
                      t, n, at(rep, 0.1), at(rep, 0.5), at(rep, 0.9), wait * per_step, at(waits, 0.9), at(red, 0.5),
                      at(step, 0.5), total * per_step);
        lines.emplace_back(line);
    }
#else
    (void)threads;
#endif
    return lines;
}

/// Trains a fresh model on synthetic data of its shapes (throughput does not depend on the values):
/// one timed epoch of `steps` steps from a cold start, a second one, then steady steps for `seconds`.
template <class M, class S>
Measured
train(std::size_t batch, double seconds)
{
    using In = typename M::input_type;
    constexpr std::size_t steps = 8;
    const std::size_t n = batch * steps;
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
    Measured out;
    out.threads = strategy.threads();
    auto model = strategy.template scope<M>(1);
    model.compile(tpudsl::optimizers::Adam{}, tpudsl::losses::SparseCategoricalCrossentropy{},
                  tpudsl::metrics::SparseCategoricalAccuracy{});
    std::ostringstream quiet;
    const tpudsl::FitOptions epoch{.batch_size = batch, .epochs = 1, .verbose = 0, .out = &quiet};
    auto start = clock_type::now();
    model.fit(x, y, epoch);
    const double first = seconds_since(start);
    start = clock_type::now();
    model.fit(x, y, epoch);
    out.first_epoch_ratio = first / seconds_since(start);

    std::size_t done = 0;
#ifdef TPUDSL_STEP_PHASES
    tpudsl::distribute::recorded_step_phases.clear();
#endif
    start = clock_type::now();
    double elapsed = 0;
    while (elapsed < seconds) {
        model.fit(x, y, epoch);
        done += n;
        elapsed = seconds_since(start);
    }
    out.samples_per_s = static_cast<double>(done) / elapsed;
    out.phases = phase_fields(out.threads);
    return out;
}

template <class M>
Measured
train_with(const std::string& strategy, std::size_t batch, double seconds)
{
    if (strategy == "tpu2")
        return train<M, tpudsl::TpuStrategy<2>>(batch, seconds);
    if constexpr (!requires { M::node_names; }) {   // Functional models: one and two threads only (fewer instances)
        if (strategy == "tpu4")
            return train<M, tpudsl::TpuStrategy<4>>(batch, seconds);
        if (strategy == "tpu8")
            return train<M, tpudsl::TpuStrategy<8>>(batch, seconds);
    }
    return train<M, tpudsl::OneDeviceStrategy>(batch, seconds);
}

// ---------------------------------------------------------------------------------------------
// Kernels: the GEMMs of each layer at a micro-batch of 16 samples (batch 128 / 8), one thread

template <class F>
double
best_seconds(F&& f)
{
    f();
    double best = 1e30;
    for (int r = 0; r < 5; ++r) {
        int reps = 0;
        const auto start = clock_type::now();
        double t = 0;
        do {
            f();
            ++reps;
            t = seconds_since(start);
        } while (t < 0.02);
        best = std::min(best, t / reps);
    }
    return best;
}

/// Allocates on 64-byte boundaries, as a model's buffers are (config.hpp's buffer_alignment): a kernel's
/// figure then does not depend on where malloc put its operands (a C 16 bytes off a line splits every
/// other vector store: 128 x 512 x 784 through gemm_nn_rows measured 68 instead of 81 GFLOP/s).
template <class T>
struct aligned_allocator {
    using value_type = T;
    aligned_allocator() = default;
    template <class U>
    aligned_allocator(const aligned_allocator<U>&) noexcept
    {
    }
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new[](n * sizeof(T), std::align_val_t{64})); }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete[](p, std::align_val_t{64}); }
    friend bool operator==(const aligned_allocator&, const aligned_allocator&) noexcept { return true; }
};
using buffer = std::vector<float, aligned_allocator<float>>;

buffer
filled(std::size_t n, unsigned seed)
{
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    buffer v(n);
    for (auto& e : v)
        e = u(gen);
    return v;
}

#if defined(TPUDSL_BENCH_OPENBLAS)
/// C(M,N) = op(A) . op(B), row-major, one OpenBLAS thread.
double
openblas_seconds(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b,
                 float* c)
{
    const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
    return best_seconds([&] {
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, a,
                    ta ? M : K, b, tb ? K : N, 0.0f, c, N);
    });
}
#endif

/// Prints one kernel's line (tpudsl's GFLOP/s, its share of the peak, OpenBLAS's when measured: blas
/// seconds > 0) and keeps it for the CSV, JSON and picture.
void
report_kernel(const std::string& model, const char* op, std::size_t m, std::size_t n, std::size_t k, double flops,
              double secs, double blas, double peak, std::vector<KernelRow>& rows)
{
    KernelRow r{model, op, m, n, k, flops / secs / 1e9, 0, blas > 0 ? flops / blas / 1e9 : 0};
    r.peak_pct = 100.0 * r.gflops / peak;
    std::printf("tpudsl_bench_kernel model=%s op=%s m=%zu n=%zu k=%zu gflops=%.1f peak_pct=%.1f openblas_gflops=%.1f "
                "ratio_to_openblas=%.2f\n",
                r.model.c_str(), op, m, n, k, r.gflops, r.peak_pct, r.openblas_gflops,
                r.openblas_gflops > 0 ? r.gflops / r.openblas_gflops : 0.0);
    std::fflush(stdout);
    rows.push_back(r);
}

/// nn: Z(M,N) = X(M,K) W(K,N); tn: dW(K,N) = X^T dZ, reduced over M; nt: dX(M,K) = dZ W^T. A narrow
/// Dense (Dot: kernels::prefers_dot_products) computes Z from W^T as dot products along K (nn_dot). A
/// Dense whose kernel gradient the step defers (Parts > 1: graph::deferred_kernel) computes dW once over
/// the step's Parts micro-batches of m rows (tn_parts, as gemm_tn_micro_batches; OpenBLAS: one GEMM over them).
template <std::size_t K, std::size_t N, bool Dot, std::size_t Parts = 1>
void
bench_gemms(const std::string& model, std::size_t m, bool input_grad, double peak, std::vector<KernelRow>& rows)
{
    const auto x = filled(Parts * m * K, 1), w = filled(K * N, 2), dz = filled(Parts * m * N, 3);
    buffer z(m * N), dw(K * N), dx(m * K), wt(K * N), bias(N);
    tpudsl::kernels::transpose(w.data(), K, N, wt.data());   // (N, K), as a Dense layer keeps it
    const double flops = 2.0 * static_cast<double>(m * N * K);
    auto report = [&](const char* op, std::size_t rm, std::size_t rn, std::size_t rk, double secs, double blas) {
        report_kernel(model, op, rm, rn, rk, flops, secs, blas, peak, rows);
    };
    double blas = 0;
#if defined(TPUDSL_BENCH_OPENBLAS)
    blas = openblas_seconds(false, false, m, N, K, x.data(), w.data(), z.data());
#endif
    if constexpr (Dot)
        report("nn_dot", m, N, K, best_seconds([&] {
                   tpudsl::kernels::gemm_nt_bias<K, N, tpudsl::Linear>(m, x.data(), wt.data(), bias.data(), z.data());
               }),
               blas);
    else
        report("nn", m, N, K, best_seconds([&] { tpudsl::kernels::gemm_nn<K, N>(m, x.data(), w.data(), z.data()); }),
               blas);
#if defined(TPUDSL_BENCH_OPENBLAS)
    blas = openblas_seconds(true, false, K, N, Parts * m, x.data(), dz.data(), dw.data());
#endif
    if constexpr (Parts > 1) {
        tpudsl::kernels::gemm_micro_batch part[Parts];
        for (std::size_t p = 0; p < Parts; ++p)
            part[p] = {x.data() + p * m * K, dz.data() + p * m * N, m};
        report_kernel(model, "tn_parts", K, N, Parts * m, flops * Parts,
                      best_seconds([&] { tpudsl::kernels::gemm_tn_micro_batches<N>(K, K, part, Parts, dw.data()); }), blas,
                      peak, rows);
    } else {
        report("tn", K, N, m,
               best_seconds([&] { tpudsl::kernels::gemm_tn<K, N>(m, x.data(), dz.data(), dw.data(), false); }), blas);
    }
    if (input_grad) {
#if defined(TPUDSL_BENCH_OPENBLAS)
        blas = openblas_seconds(false, true, m, K, N, dz.data(), w.data(), dx.data());
#endif
        report("nt", m, K, N,
               best_seconds([&] { tpudsl::kernels::gemm_nt<N, K>(m, dz.data(), w.data(), dx.data(), wt.data()); }), blas);
    }
}

/// A dense network's Dense layer as a replica runs it in a step of `parts` micro-batches of `rows`
/// samples (graph::rows_only): nn_rows Z_p = X_p W and nt_rows dX_p = dZ_p W^T through gemm_nn_rows
/// (W and W^T read once for all parts), tn_parts dW = sum_p X_p^T dZ_p through gemm_tn_micro_batches; OpenBLAS
/// runs each as the one GEMM over the parts' parts x rows samples that it computes. A narrow Dense (Dot)
/// runs its forward through gemm_nt_bias_rows from W^T (nn_rows_dot).
template <std::size_t K, std::size_t N, bool Dot>
void
bench_rows_gemms(const std::string& model, std::size_t parts, std::size_t rows, bool input_grad, double peak,
                 std::vector<KernelRow>& out)
{
    const std::size_t m = parts * rows;
    const auto x = filled(m * K, 1), w = filled(K * N, 2), dz = filled(m * N, 3);
    buffer z(m * N), dw(K * N), dx(m * K), wt(K * N), bias(N);
    tpudsl::kernels::transpose(w.data(), K, N, wt.data());
    std::vector<tpudsl::kernels::gemm_rows> forward(parts), input(parts);
    for (std::size_t p = 0; p < parts; ++p) {
        forward[p] = {x.data() + p * rows * K, z.data() + p * rows * N, rows};
        input[p] = {dz.data() + p * rows * N, dx.data() + p * rows * K, rows};
    }
    const double flops = 2.0 * static_cast<double>(m * N * K);
    auto report = [&](const char* op, std::size_t rm, std::size_t rn, std::size_t rk, double secs, double blas) {
        report_kernel(model, op, rm, rn, rk, flops, secs, blas, peak, out);
    };
    double blas = 0;
#if defined(TPUDSL_BENCH_OPENBLAS)
    blas = openblas_seconds(false, false, m, N, K, x.data(), w.data(), z.data());
#endif
    if constexpr (Dot)
        report("nn_rows_dot", m, N, K, best_seconds([&] {
                   tpudsl::kernels::gemm_nt_bias_rows<K, N, tpudsl::Linear>(forward.data(), parts, wt.data(),
                                                                             bias.data());
               }),
               blas);
    else
        report("nn_rows", m, N, K,
               best_seconds([&] { tpudsl::kernels::gemm_nn_rows<K, N>(forward.data(), parts, w.data()); }), blas);
#if defined(TPUDSL_BENCH_OPENBLAS)
    blas = openblas_seconds(true, false, K, N, m, x.data(), dz.data(), dw.data());
#endif
    std::vector<tpudsl::kernels::gemm_micro_batch> parts_of(parts);
    for (std::size_t p = 0; p < parts; ++p)
        parts_of[p] = {x.data() + p * rows * K, dz.data() + p * rows * N, rows};
    report("tn_parts", K, N, m,
           best_seconds([&] { tpudsl::kernels::gemm_tn_micro_batches<N>(K, K, parts_of.data(), parts, dw.data()); }), blas);
    if (input_grad) {
#if defined(TPUDSL_BENCH_OPENBLAS)
        blas = openblas_seconds(false, true, m, K, N, dz.data(), w.data(), dx.data());
#endif
        report("nt_rows", m, K, N,
               best_seconds([&] { tpudsl::kernels::gemm_nn_rows<N, K>(input.data(), parts, wt.data()); }), blas);
    }
}

template <class M>
void
bench_model_gemms(const std::string& name, double peak, std::vector<KernelRow>& rows)
{
    // (a Functional model's layers run the seeds' convolution GEMMs: no rows of its own)
    if constexpr (!requires { M::node_names; }) {
        constexpr std::size_t micro_batch = 16;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            auto one = [&]<std::size_t J>(std::integral_constant<std::size_t, J>) {
                using B = typename M::template layer<J>;
                if constexpr (is_gemm_layer<typename B::spec>::value) {
                    using G = gemm_shape<B>;
                    constexpr bool dot = B::spec::defers_kernel_gradient &&
                                         tpudsl::kernels::prefers_dot_products<G::k, G::n>;
                    if constexpr (tpudsl::ops::graph<M>::rows_only)   // a step of batch 128 on one core: 8 parts
                        bench_rows_gemms<G::k, G::n, dot>(name, 128 / micro_batch, micro_batch, J > 0, peak, rows);
                    else if constexpr (tpudsl::ops::graph<M>::template deferred_kernel<J>())
                        bench_gemms<G::k, G::n, dot, 128 / micro_batch>(name, micro_batch, J > 0, peak, rows);
                    else
                        bench_gemms<G::k, G::n, dot>(name, micro_batch * G::positions, J > 0, peak, rows);
                }
            };
            (one(std::integral_constant<std::size_t, I>{}), ...);
        }(std::make_index_sequence<M::layer_count>{});
    }
}

// ---------------------------------------------------------------------------------------------
// Output

void
write_csv(const std::string& path, const std::vector<Row>& rows, const std::vector<KernelRow>& kernels)
{
    std::ofstream f(path);
    f << "kind,model,batch,strategy,threads,samples_per_s,ms_per_step,gflops,peak_pct,first_epoch_ratio,op,m,n,k,"
         "openblas_gflops\n";
    for (const auto& r : rows)
        f << "train," << r.model << ',' << r.batch << ',' << r.strategy << ',' << r.threads << ',' << r.samples_per_s
          << ',' << r.ms_per_step << ',' << r.gflops << ',' << r.peak_pct << ',' << r.first_epoch_ratio << ",,,,,\n";
    for (const auto& k : kernels)
        f << "kernel," << k.model << ",,,1,,," << k.gflops << ',' << k.peak_pct << ",," << k.op << ',' << k.m << ','
          << k.n << ',' << k.k << ',' << k.openblas_gflops << '\n';
}

void
write_json(const std::string& path, double peak1, double peak_all, const std::vector<Row>& rows,
           const std::vector<KernelRow>& kernels)
{
    std::ofstream f(path);
    f << "{\n  \"simd\": \"" << tpudsl::detail::simd::arch_name << "\",\n  \"fma_peak_gflops_one_core\": " << peak1
      << ",\n  \"fma_peak_gflops_all_threads\": " << peak_all << ",\n  \"training\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        f << "    {\"model\": \"" << r.model << "\", \"batch\": " << r.batch << ", \"strategy\": \"" << r.strategy
          << "\", \"threads\": " << r.threads << ", \"samples_per_s\": " << r.samples_per_s
          << ", \"ms_per_step\": " << r.ms_per_step << ", \"gflops\": " << r.gflops << ", \"peak_pct\": " << r.peak_pct
          << ", \"first_epoch_ratio\": " << r.first_epoch_ratio << "}" << (i + 1 < rows.size() ? "," : "") << '\n';
    }
    f << "  ],\n  \"kernels\": [\n";
    for (std::size_t i = 0; i < kernels.size(); ++i) {
        const auto& k = kernels[i];
        f << "    {\"model\": \"" << k.model << "\", \"op\": \"" << k.op << "\", \"m\": " << k.m << ", \"n\": " << k.n
          << ", \"k\": " << k.k << ", \"gflops\": " << k.gflops << ", \"peak_pct\": " << k.peak_pct
          << ", \"openblas_gflops\": " << k.openblas_gflops << "}" << (i + 1 < kernels.size() ? "," : "") << '\n';
    }
    f << "  ]\n}\n";
}

/// Two bar charts: each training configuration's share of the FMA peak, and each GEMM's GFLOP/s
/// beside OpenBLAS's.
void
write_svg(const std::string& path, double peak1, const std::vector<Row>& rows, const std::vector<KernelRow>& kernels)
{
    const double bar = 14, gap = 4, label_w = 260, plot_w = 420;
    const double h1 = 40 + static_cast<double>(rows.size()) * (bar + gap);
    const double h2 = 40 + static_cast<double>(kernels.size()) * (2 * bar + gap);
    std::ofstream f(path);
    char buf[512];
    f << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << label_w + plot_w + 120 << "\" height=\"" << h1 + h2 + 20
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    f << "<text x=\"10\" y=\"20\" font-size=\"13\">Training: share of the FMA peak of the threads used (%)</text>\n";
    double y = 34;
    for (const auto& r : rows) {
        const double w = plot_w * std::min(r.peak_pct, 100.0) / 100.0;
        std::snprintf(buf, sizeof buf,
                      "<text x=\"%g\" y=\"%g\" text-anchor=\"end\">%s batch %zu %s</text><rect x=\"%g\" y=\"%g\" "
                      "width=\"%g\" height=\"%g\" fill=\"%s\"/><text x=\"%g\" y=\"%g\">%.1f%% (%.0f/s)</text>\n",
                      label_w - 6, y + bar - 3, r.model.c_str(), r.batch, r.strategy.c_str(), label_w, y, w, bar,
                      r.strategy == "one" ? "#4e79a7" : "#f28e2b", label_w + w + 4, y + bar - 3, r.peak_pct,
                      r.samples_per_s);
        f << buf;
        y += bar + gap;
    }
    y += 16;
    std::snprintf(buf, sizeof buf,
                  "<text x=\"10\" y=\"%g\" font-size=\"13\">GEMMs at a 16-sample micro-batch, one core: GFLOP/s "
                  "(tpudsl blue, OpenBLAS grey; peak %.0f)</text>\n",
                  y, peak1);
    f << buf;
    y += 14;
    double top = peak1;
    for (const auto& k : kernels)
        top = std::max({top, k.gflops, k.openblas_gflops});
    for (const auto& k : kernels) {
        const double w1 = plot_w * k.gflops / top, w2 = plot_w * k.openblas_gflops / top;
        std::snprintf(buf, sizeof buf,
                      "<text x=\"%g\" y=\"%g\" text-anchor=\"end\">%s %s %zux%zux%zu</text><rect x=\"%g\" y=\"%g\" "
                      "width=\"%g\" height=\"%g\" fill=\"#4e79a7\"/><text x=\"%g\" y=\"%g\">%.0f</text><rect x=\"%g\" "
                      "y=\"%g\" width=\"%g\" height=\"%g\" fill=\"#bab0ac\"/><text x=\"%g\" y=\"%g\">%.0f</text>\n",
                      label_w - 6, y + bar, k.model.c_str(), k.op.c_str(), k.m, k.n, k.k, label_w, y, w1, bar,
                      label_w + w1 + 4, y + bar - 3, k.gflops, label_w, y + bar, w2, bar, label_w + w2 + 4,
                      y + 2 * bar - 3, k.openblas_gflops);
        f << buf;
        y += 2 * bar + gap;
    }
    f << "</svg>\n";
}

std::vector<std::string>
split(const std::string& s)
{
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string part; std::getline(in, part, ',');)
        if (!part.empty())
            out.push_back(part);
    return out;
}

/// The FMA peak of `threads` threads at once, measured the first time it is asked for.
double
threads_peak(std::size_t threads)
{
    static std::map<std::size_t, double> measured;
    auto [at, fresh] = measured.try_emplace(threads, 0.0);
    if (fresh)
        at->second = fma_peak(threads);
    return at->second;
}

template <class M>
void
bench_model(const char* name, const Args& a, double peak1, double peak2, std::vector<Row>& rows,
            std::vector<KernelRow>& kernels)
{
    constexpr double flops = train_flops_per_sample<M>();
    for (const std::size_t batch : a.batches)
        for (const auto& s : a.strategies) {
            Measured best;
            for (int round = 0; round < a.rounds; ++round) {
                const Measured m = train_with<M>(s, batch, a.seconds);
                if (a.phases)
                    for (const auto& fields : m.phases)
                        std::printf("tpudsl_phases model=%s batch=%zu strategy=%s round=%d %s\n", name, batch, s.c_str(),
                                    round, fields.c_str());
                if (m.samples_per_s > best.samples_per_s)
                    best = m;
            }
            Row r{name, batch, s, best.threads, best.samples_per_s, 1000.0 * static_cast<double>(batch) / best.samples_per_s,
                  best.samples_per_s * flops / 1e9, 0, best.first_epoch_ratio};
            // The peak of as many threads as the strategy ran (measured once per thread count).
            const double peak = r.threads == 1 ? peak1 : r.threads == 2 ? peak2 : threads_peak(r.threads);
            r.peak_pct = 100.0 * r.gflops / peak;
            std::printf("tpudsl_bench model=%s batch=%zu strategy=%s samples_per_s=%.0f gflops=%.1f peak_pct=%.1f "
                        "ms_per_step=%.3f threads=%zu first_epoch_ratio=%.2f\n",
                        name, batch, s.c_str(), r.samples_per_s, r.gflops, r.peak_pct, r.ms_per_step, r.threads,
                        r.first_epoch_ratio);
            std::fflush(stdout);
            rows.push_back(r);
        }
    if (a.kernels)
        bench_model_gemms<M>(name, peak1, kernels);
}

} // namespace

int
main(int argc, char** argv)
{
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (i + 1 >= argc) {
            std::cerr << "tpudsl_bench: " << flag << " needs a value\n";
            return 2;
        }
        const std::string v = argv[++i];
        if (flag == "--model")
            a.model = v;
        else if (flag == "--batch") {
            a.batches.clear();
            for (const auto& b : split(v))
                a.batches.push_back(std::stoul(b));
        } else if (flag == "--strategy")
            a.strategies = split(v);
        else if (flag == "--seconds")
            a.seconds = std::stod(v);
        else if (flag == "--rounds")
            a.rounds = std::stoi(v);
        else if (flag == "--kernels")
            a.kernels = v != "off";
        else if (flag == "--phases")
            a.phases = v != "off";
        else if (flag == "--csv")
            a.csv = v;
        else if (flag == "--json")
            a.json = v;
        else if (flag == "--svg")
            a.svg = v;
        else {
            std::cerr << "tpudsl_bench: unknown flag " << flag
                      << " (--model --batch --strategy --seconds --rounds --kernels --phases --csv --json --svg)\n";
            return 2;
        }
    }
    for (const auto& s : a.strategies)
        if (s != "one" && s != "tpu2" && s != "tpu4" && s != "tpu8") {
            std::cerr << "tpudsl_bench: unknown strategy " << s << " (one, tpu2, tpu4, tpu8)\n";
            return 2;
        }
#if defined(TPUDSL_BENCH_OPENBLAS)
    openblas_set_num_threads(1);
#endif
    const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
    const double peak1 = fma_peak(1);
    const double peak2 = fma_peak(std::min<std::size_t>(2, hw));
    std::printf("tpudsl_bench_peak simd=%s lanes=%zu one_core_gflops=%.1f two_thread_gflops=%.1f openblas=%s\n",
                tpudsl::detail::simd::arch_name, tpudsl::detail::simd::width, peak1, peak2,
#if defined(TPUDSL_BENCH_OPENBLAS)
                "yes"
#else
                "no"
#endif
    );
    std::fflush(stdout);

    std::vector<Row> rows;
    std::vector<KernelRow> kernels;
    if (a.kernels && a.model == "all")
        bench_gemms<512, 512, false>("square", 512, true, peak1, kernels);   // 512^3
    if (a.model == "all" || a.model == "fashion")
        bench_model<seeds::FashionCnn>("fashion", a, peak1, peak2, rows, kernels);
    if (a.model == "all" || a.model == "reuters")
        bench_model<seeds::Reuters>("reuters", a, peak1, peak2, rows, kernels);
    if (a.model == "all" || a.model == "mnist")
        bench_model<seeds::MnistMlp>("mnist", a, peak1, peak2, rows, kernels);
    if (a.model == "all" || a.model == "cifar")
        bench_model<seeds::Cifar10Cnn>("cifar", a, peak1, peak2, rows, kernels);
    if (a.model == "all" || a.model == "cifar_bn")
        bench_model<seeds::Cifar10Bn>("cifar_bn", a, peak1, peak2, rows, kernels);
    if (a.model == "all" || a.model == "reuters_lstm")
        bench_model<seeds::ReutersLstm>("reuters_lstm", a, peak1, peak2, rows, kernels);
    // the Functional models: one and two threads only
    const bool one_or_two =
        std::all_of(a.strategies.begin(), a.strategies.end(), [](const std::string& s) { return s == "one" || s == "tpu2"; });
    if (a.model == "all" || a.model == "reuters_transformer") {
        if (one_or_two)
            bench_model<seeds::ReutersTransformer>("reuters_transformer", a, peak1, peak2, rows, kernels);
        else
            std::printf("tpudsl_bench: reuters_transformer skipped: it runs with --strategy one,tpu2 only\n");
    }
    if (a.model == "all" || a.model == "resnet20") {
        if (one_or_two)
            bench_model<seeds::ResNet20>("resnet20", a, peak1, peak2, rows, kernels);
        else
            std::printf("tpudsl_bench: resnet20 skipped: it runs with --strategy one,tpu2 only\n");
    }
    if (!a.csv.empty())
        write_csv(a.csv, rows, kernels);
    if (!a.json.empty())
        write_json(a.json, peak1, peak2, rows, kernels);
    if (!a.svg.empty())
        write_svg(a.svg, peak1, rows, kernels);
}
