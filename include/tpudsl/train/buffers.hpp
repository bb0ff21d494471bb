/// @file What a trained model's memory needs besides its storage (detail/aligned_buffer.hpp): the
/// weights' version counter, and the check that a batch's buffers fit in the machine's memory before
/// they are allocated.
#ifndef TPUDSL_TRAIN_BUFFERS_HPP
#define TPUDSL_TRAIN_BUFFERS_HPP

#include <tpudsl/config.hpp>
#include <tpudsl/detail/aligned_buffer.hpp>
#include <tpudsl/detail/text.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

#include <unistd.h>

namespace tpudsl::detail {

/// A process-unique, nonzero version for a set of weights.
inline std::uint64_t
next_weights_version() noexcept
{
    static std::atomic<std::uint64_t> counter{0};
    return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

/// Refuses a batch of `batch` samples whose buffers would take `bytes` (`per_sample` of them for each
/// sample) when that is more than the machine's memory, before any of them is allocated.
[[gnu::cold]] inline void
check_batch_memory(std::size_t batch, long double per_sample, long double bytes)
{
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    const long double memory = pages > 0 && page > 0 ? static_cast<long double>(pages) * page : 0.0L;
    const long double limit = memory > 0 ? memory : static_cast<long double>(std::numeric_limits<std::size_t>::max());
    if (bytes <= limit)
        return;
    auto text = [](long double b) {   // 1.2 GB, 340.0 MB, 12.5 kB
        const char* unit = b >= 1e9L ? "GB" : b >= 1e6L ? "MB" : "kB";
        const long double scale = b >= 1e9L ? 1e9L : b >= 1e6L ? 1e6L : 1e3L;
        char out[48];
        std::snprintf(out, sizeof out, "%.1f %s", static_cast<double>(b / scale), unit);
        return std::string(out);
    };
    bad_input(detail::concat({"a batch of ", std::to_string(batch), " samples needs ", text(bytes),
                              " of buffers for this model (", text(per_sample),
                              " per sample), more than this machine's ", text(limit),
                              " of memory; use a smaller batch_size"}));
}

} // namespace tpudsl::detail

#endif // !TPUDSL_TRAIN_BUFFERS_HPP
