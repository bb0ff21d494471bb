/// @file Defines place_blocks: a replica's workspace laid out from each block's lifetime, as XLA's
/// buffer assignment does it. Blocks whose lifetimes do not overlap may share memory; each block is put
/// at the lowest offset where it meets no block alive at the same time (the largest blocks first).
/// Pure data, computed at compile time.
#ifndef TPUDSL_OPS_MEMORY_PLAN_HPP
#define TPUDSL_OPS_MEMORY_PLAN_HPP

#include <algorithm>
#include <array>
#include <cstddef>

namespace tpudsl::ops {

/// A block of a step's workspace: its floats per sample of capacity, and the steps [first, last] of the
/// step's timeline during which it holds something (a forward or backward pass of one layer each).
struct block_request {
    std::size_t size = 0;
    std::size_t first = 0, last = 0;
};

/// Where each block lies, and the floats per sample they take together.
template <std::size_t N>
struct block_placement {
    std::array<std::size_t, N> offset{};
    std::size_t total = 0;
};

/// Places the blocks: the largest first (ties: the earliest, then in order), each at the lowest offset
/// that no block alive at the same time overlaps. Sizes should be aligned already; offsets are then too.
template <std::size_t N>
[[nodiscard]] constexpr block_placement<N>
place_blocks(const std::array<block_request, N>& blocks) noexcept
{
    std::array<std::size_t, N> order{};
    for (std::size_t i = 0; i < N; ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (blocks[a].size != blocks[b].size)
            return blocks[a].size > blocks[b].size;
        if (blocks[a].first != blocks[b].first)
            return blocks[a].first < blocks[b].first;
        return a < b;
    });
    block_placement<N> p;
    std::array<bool, N> placed{};
    for (std::size_t k = 0; k < N; ++k) {
        const block_request& b = blocks[order[k]];
        if (b.size == 0) {
            placed[order[k]] = true;
            continue;
        }
        // The blocks placed so far that live at the same time, by offset.
        std::array<std::size_t, N> near{};
        std::size_t count = 0;
        for (std::size_t j = 0; j < N; ++j)
            if (placed[j] && blocks[j].size > 0 && blocks[j].first <= b.last && b.first <= blocks[j].last)
                near[count++] = j;
        std::sort(near.begin(), near.begin() + count,
                  [&](std::size_t x, std::size_t y) { return p.offset[x] < p.offset[y]; });
        std::size_t at = 0;
        for (std::size_t i = 0; i < count; ++i) {
            const std::size_t j = near[i];
            if (at + b.size <= p.offset[j])
                break;
            at = std::max(at, p.offset[j] + blocks[j].size);
        }
        p.offset[order[k]] = at;
        placed[order[k]] = true;
        p.total = std::max(p.total, at + b.size);
    }
    return p;
}

} // namespace tpudsl::ops

#endif // !TPUDSL_OPS_MEMORY_PLAN_HPP
