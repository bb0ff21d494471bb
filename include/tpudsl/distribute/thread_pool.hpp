/// @file Defines thread_pool: a fixed set of threads, created once, that run one function together
/// per call, with a barrier between phases (spin_barrier). No mutex, no allocation per call. What the
/// pool runs computes with denormal floats flushed to zero (flush_denormals), as TensorFlow's threads do.
#ifndef TPUDSL_DISTRIBUTE_THREAD_POOL_HPP
#define TPUDSL_DISTRIBUTE_THREAD_POOL_HPP

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace tpudsl::distribute {

/// While it lives, the calling thread computes with denormal floats flushed to zero: results below
/// the smallest normal float become zero (FTZ) and denormal operands are read as zero (DAZ); the
/// thread's previous flush mode comes back when it ends. TensorFlow runs every CPU kernel so (its threads
/// start with ScopedFlushDenormal), and so do a model's steps here: a Keras model computes the same
/// zeros, and training never meets the slow path x86 cores take on denormals. (Adam's first moment
/// of a weight whose gradient stays zero, an MNIST corner pixel's or a dead unit's, shrinks by 0.9 a
/// step and crosses the denormals for many steps in a row, and the fused pass slows down over
/// them.) On cores other than x86 and AArch64 it changes nothing. The mode
/// covers the calls and memory operations made while it lives (a thread_pool task); arithmetic the
/// compiler may move across its ends is not fenced.
class flush_denormals {
public:
    flush_denormals() noexcept
    {
        const word now = read();
        saved_ = now & bits;
        if (saved_ != bits)
            write(now | bits);
    }
    flush_denormals(const flush_denormals&) = delete;
    flush_denormals& operator=(const flush_denormals&) = delete;
    /// Puts back the flush bits only: the exception flags the call raised stay raised.
    ~flush_denormals()
    {
        const word now = read();
        if ((now & bits) != saved_)
            write((now & ~bits) | saved_);
    }

private:
    // The control register and its flush bits (none elsewhere: nothing is read or written).
#if defined(__SSE__) || defined(__x86_64__)
    using word = unsigned;
    static constexpr word bits = 0x8000 | 0x0040;   // MXCSR's FTZ and DAZ
    static word read() noexcept { return _mm_getcsr(); }
    static void write(word w) noexcept { _mm_setcsr(w); }
#elif defined(__aarch64__)
    using word = unsigned long long;
    static constexpr word bits = 1ull << 24;   // FPCR's FZ
    static word
    read() noexcept
    {
        word w = 0;
        asm volatile("mrs %0, fpcr" : "=r"(w) : : "memory");
        return w;
    }
    static void write(word w) noexcept { asm volatile("msr fpcr, %0" : : "r"(w) : "memory"); }
#else
    using word = unsigned;
    static constexpr word bits = 0;
    static word read() noexcept { return 0; }
    static void write(word) noexcept {}
#endif
    word saved_ = 0;
};

/// A barrier for a few threads that meet every few milliseconds (a training step meets three
/// times): a participant that arrives early spins on the generation for up to `spin` (the usual gap
/// between the replicas' arrivals is tens of microseconds) and only then sleeps in atomic::wait.
/// std::barrier sleeps almost at once, and waking the sleeper costs more than the gap it saved, at
/// every barrier of every step.
class spin_barrier {
public:
    explicit spin_barrier(std::size_t participants,
                          std::chrono::nanoseconds spin = std::chrono::microseconds(100)) noexcept
        : participants_(static_cast<std::uint32_t>(participants)), spin_(spin)
    {
    }

    spin_barrier(const spin_barrier&) = delete;
    spin_barrier& operator=(const spin_barrier&) = delete;

    /// Returns once all participants have arrived; what each did before arriving happens-before what
    /// every other does after returning.
    void
    arrive_and_wait() noexcept
    {
        // The generation cannot move on before this thread arrives: read before arriving, it is ours.
        const std::uint32_t generation = generation_.load(std::memory_order_acquire);
        if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == participants_) {
            arrived_.store(0, std::memory_order_relaxed);   // ordered before the release below
            generation_.store(generation + 1, std::memory_order_release);
            generation_.notify_all();   // no system call when no one sleeps
            return;
        }
        const auto start = std::chrono::steady_clock::now();
        for (std::uint32_t i = 1;; ++i) {
            if (generation_.load(std::memory_order_acquire) != generation)
                return;
            pause();
            if (i % 64 == 0 && std::chrono::steady_clock::now() - start > spin_)
                break;
        }
        while (generation_.load(std::memory_order_acquire) == generation)
            generation_.wait(generation, std::memory_order_acquire);
    }

private:
    static void
    pause() noexcept
    {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        asm volatile("yield");
#endif
    }

    const std::uint32_t participants_;
    const std::chrono::nanoseconds spin_;
    alignas(64) std::atomic<std::uint32_t> arrived_{0};
    alignas(64) std::atomic<std::uint32_t> generation_{0};
};

/// `threads` participants: the calling thread is participant 0, the others are workers that live
/// as long as the pool. `run(f)` makes every participant t call `f(t)` and returns when all have;
/// inside f, `sync()` is a barrier across the participants. Every f(t) runs with denormals flushed
/// (flush_denormals): the workers all their lives, the calling thread for the call.
class thread_pool {
public:
    explicit thread_pool(std::size_t threads)
        : size_(threads ? threads : 1), start_(size_), phase_(size_), done_(size_)
    {
        workers_.reserve(size_ - 1);
        for (std::size_t t = 1; t < size_; ++t)
            workers_.emplace_back([this, t] { work(t); });
    }

    thread_pool(const thread_pool&) = delete;
    thread_pool& operator=(const thread_pool&) = delete;

    ~thread_pool()
    {
        stop_.store(true, std::memory_order_relaxed);
        if (size_ > 1)
            start_.arrive_and_wait();   // the barrier orders the store before the workers' read
        for (auto& w : workers_)
            w.join();
    }

    [[nodiscard]] std::size_t size() const noexcept { return size_; }

    /// Every participant calls f(t); returns when all have returned. Not reentrant.
    template <class F>
    void
    run(F& f)
    {
        const flush_denormals flush;
        if (size_ == 1) {
            f(std::size_t{0});
            return;
        }
        task_ = [](void* ctx, std::size_t t) { (*static_cast<F*>(ctx))(t); };
        ctx_ = &f;
        start_.arrive_and_wait();
        f(std::size_t{0});
        done_.arrive_and_wait();
    }

    /// A barrier across all participants, for use inside the function given to run().
    void
    sync()
    {
        if (size_ > 1)
            phase_.arrive_and_wait();
    }

private:
    void
    work(std::size_t t)
    {
        const flush_denormals flush;
        for (;;) {
            start_.arrive_and_wait();
            if (stop_.load(std::memory_order_relaxed))
                return;
            task_(ctx_, t);
            done_.arrive_and_wait();
        }
    }

    std::size_t size_;
    spin_barrier start_, phase_, done_;
    std::atomic<bool> stop_{false};
    void (*task_)(void*, std::size_t) = nullptr;
    void* ctx_ = nullptr;
    std::vector<std::thread> workers_;
};

} // namespace tpudsl::distribute

#endif // !TPUDSL_DISTRIBUTE_THREAD_POOL_HPP
