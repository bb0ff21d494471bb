/// @file Defines thread_pool: a fixed set of threads, created once, that run one function together
/// per call, with a barrier between phases. No mutex, no allocation per call.
#ifndef TPUDSL_DISTRIBUTE_THREAD_POOL_HPP
#define TPUDSL_DISTRIBUTE_THREAD_POOL_HPP

#include <atomic>
#include <barrier>
#include <cstddef>
#include <thread>
#include <vector>

namespace tpudsl::distribute {

/// `threads` participants: the calling thread is participant 0, the others are workers that live
/// as long as the pool. `run(f)` makes every participant t call `f(t)` and returns when all have;
/// inside f, `sync()` is a barrier across the participants.
class thread_pool {
public:
    explicit thread_pool(std::size_t threads)
        : size_(threads ? threads : 1), start_(static_cast<std::ptrdiff_t>(size_)),
          phase_(static_cast<std::ptrdiff_t>(size_)), done_(static_cast<std::ptrdiff_t>(size_))
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
        for (;;) {
            start_.arrive_and_wait();
            if (stop_.load(std::memory_order_relaxed))
                return;
            task_(ctx_, t);
            done_.arrive_and_wait();
        }
    }

    std::size_t size_;
    std::barrier<> start_, phase_, done_;
    std::atomic<bool> stop_{false};
    void (*task_)(void*, std::size_t) = nullptr;
    void* ctx_ = nullptr;
    std::vector<std::thread> workers_;
};

} // namespace tpudsl::distribute

#endif // !TPUDSL_DISTRIBUTE_THREAD_POOL_HPP
