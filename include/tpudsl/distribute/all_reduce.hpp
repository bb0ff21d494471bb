/// @file Defines the fused reduce-and-update of a step: the micro-batches' gradient arenas summed in a
/// fixed order over one shard of the flat parameter buffer, the optimizer applied to that shard in the
/// same pass, and what layers add into cleared for the next step.
///
/// It knows neither the model nor the optimizer: the layout of the gradient buffer comes in as data
/// (gradient_layout), the gradients a layer leaves to the reduce (a deferred kernel gradient) and the
/// update come in as callables. A strategy runs it on each of its threads, one shard each, after its
/// replicas' backward passes; the result does not depend on which thread ran which micro-batch.
#ifndef TPUDSL_DISTRIBUTE_ALL_REDUCE_HPP
#define TPUDSL_DISTRIBUTE_ALL_REDUCE_HPP

#include <tpudsl/config.hpp>
#include <tpudsl/core/gradient_layout.hpp>
#include <tpudsl/detail/simd.hpp>
#include <tpudsl/detail/text.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tpudsl::distribute {

/// The layout's types (core/gradient_layout.hpp), under the names the reduce has always used.
using tpudsl::deferred_range;
using tpudsl::gradient_layout;
using tpudsl::moving_range;
using tpudsl::table_span;

/// One micro-batch's share of a step, as the reduce sees it.
struct micro_batch_gradients {
    float* grads = nullptr;                  ///< its gradient arena, in the parameter buffer's layout
    const std::uint64_t* marks = nullptr;    ///< gradient_layout::marked: the table rows it touched
    bool has_samples = false;
};

/// Marks the rows `ids[0..n)` of a table (one bit a row): the rows a micro-batch's arena holds
/// something in.
template <class Id>
inline void
mark_rows(std::uint64_t* marks, const Id* ids, std::size_t n) noexcept
{
    for (std::size_t i = 0; i < n; ++i) {
        const auto r = static_cast<std::size_t>(ids[i]);
        marks[r / 64] |= std::uint64_t{1} << (r % 64);
    }
}

} // namespace tpudsl::distribute

namespace tpudsl::detail {

/// Calls f(row, b, e) for each row of `t` marked in some of marks[0..count) that meets [lo, hi), with
/// [b, e) the part of the row inside it, rows in increasing order.
template <class F>
inline void
for_each_marked_row(const distribute::table_span& t, const std::uint64_t* const* marks, std::size_t count, std::size_t lo,
                    std::size_t hi, F&& f) noexcept
{
    const std::size_t r0 = (lo - t.begin) / t.width, r1 = (hi - t.begin + t.width - 1) / t.width;
    for (std::size_t w = r0 / 64; w * 64 < r1; ++w) {
        std::uint64_t any = 0;
        for (std::size_t k = 0; k < count; ++k)
            any |= marks[k][w];
        for (; any != 0; any &= any - 1) {
            const std::size_t r = w * 64 + static_cast<std::size_t>(std::countr_zero(any));
            if (r >= r0 && r < r1)
                f(r, std::max(lo, t.begin + r * t.width), std::min(hi, t.begin + (r + 1) * t.width));
        }
    }
}

/// g0[lo, hi) inside table t += the other arenas, in order, as the dense sum adds them ((g0 + g1) + g2 ...),
/// each arena only over the rows its marks name. The same bits: an arena is +0 outside its marked
/// rows, and adding +0 leaves every value that such sums can hold (all but -0, which a sum that
/// starts from +0 never reaches) as it is.
inline void
sum_marked_rows(float* g0, const float* const* others, const std::uint64_t* const* marks, std::size_t count,
                const distribute::table_span& t, std::size_t lo, std::size_t hi) noexcept
{
    for_each_marked_row(t, marks, count, lo, hi, [&](std::size_t r, std::size_t b, std::size_t e) {
        const std::uint64_t bit = std::uint64_t{1} << (r % 64);
        for (std::size_t k = 0; k < count; ++k)   // arena by arena: each element's adds in the same order
            if (marks[k][r / 64] & bit)
                for (std::size_t i = b; i < e; ++i)
                    g0[i] += others[k][i];
    });
}

/// g[lo, hi) inside table t = +0 on every row marked in some of marks[0..count).
inline void
clear_marked_rows(float* g, const std::uint64_t* const* marks, std::size_t count, const distribute::table_span& t, std::size_t lo,
                  std::size_t hi) noexcept
{
    for_each_marked_row(t, marks, count, lo, hi,
                        [&](std::size_t, std::size_t b, std::size_t e) { std::fill(g + b, g + e, 0.0f); });
}

/// p[b, e) = p * momentum + (sums / micro_batches) * (1 - momentum): the moving statistics' update
/// from the sums of the step's micro-batches' statistics (with one micro-batch exactly Keras').
inline void
update_moving(float* p, const float* sums, std::size_t b, std::size_t e, float momentum, std::size_t micro_batches) noexcept
{
    if (!(momentum < 1.0f))
        return;
    const float count = static_cast<float>(micro_batches), rest = 1.0f - momentum;
    for (std::size_t i = b; i < e; ++i)
        p[i] = p[i] * momentum + sums[i] / count * rest;
}

/// g0[b, e) = ((g0 + g1) + g2) + ...: one pass, a vector at a time, every element summed in
/// micro-batch order (the same bits as adding the arenas one after another).
inline void
sum_arenas(float* g0, const float* const* others, std::size_t count, std::size_t b, std::size_t e) noexcept
{
    using tpudsl::detail::simd::vfloat;
    std::size_t i = b;
    for (; i + vfloat::size <= e; i += vfloat::size) {
        vfloat s = vfloat::load(g0 + i);
        for (std::size_t k = 0; k < count; ++k)
            s = s + vfloat::load(others[k] + i);
        s.store(g0 + i);
    }
    for (; i < e; ++i) {
        float s = g0[i];
        for (std::size_t k = 0; k < count; ++k)
            s += others[k][i];
        g0[i] = s;
    }
}

} // namespace tpudsl::detail

namespace tpudsl::distribute {

/// The blocks of [lo, hi) the fused passes work in: about `block` floats that stay in L1, and inside a
/// deferred kernel whole rows, a multiple of 12 (the GEMM's row tiles), about 98,304 floats (L2).
template <class F>
void
for_each_block(const gradient_layout& layout, std::size_t lo, std::size_t hi, F&& f)
{
    constexpr std::size_t block = 4096, kernel_block = 98304;
    for (std::size_t b = lo, e; b < hi; b = e) {
        e = std::min(b + block, hi);
        for (const auto& r : layout.deferred)
            if (r.begin <= b && b < r.end) {
                const std::size_t rows = std::max<std::size_t>(12, kernel_block / r.columns / 12 * 12);
                e = std::min({hi, r.end, r.begin + ((b - r.begin) / r.columns + rows) * r.columns});
            }
        f(b, e);
    }
}

} // namespace tpudsl::distribute

namespace tpudsl::detail {

/// sums[b, e) += the `count` arenas `others` in order; in a marked table only the rows each marked.
inline void
add_arenas(const distribute::gradient_layout& layout, float* sums, const float* const* others, const std::uint64_t* const* marks,
           std::size_t count, std::size_t b, std::size_t e) noexcept
{
    if (layout.marked) {
        const distribute::table_span& table = layout.table;
        const std::size_t tb = std::max(b, table.begin), te = std::min(e, table.begin + table.rows * table.width);
        if (tb < te) {
            if (b < tb)
                sum_arenas(sums, others, count, b, tb);
            sum_marked_rows(sums, others, marks, count, table, tb, te);
            if (te < e)
                sum_arenas(sums, others, count, te, e);
            return;
        }
    }
    sum_arenas(sums, others, count, b, e);
}

/// f(lo, hi) for the parts of [b, e) outside the deferred ranges (where the arenas are summed).
template <class F>
void
outside_deferred(const distribute::gradient_layout& layout, std::size_t b, std::size_t e, F&& f)
{
    std::size_t from = b;
    for (const auto& r : layout.deferred) {
        if (r.end <= from || r.begin >= e)
            continue;
        if (r.begin > from)
            f(from, r.begin);
        from = std::min(e, r.end);
    }
    if (from < e)
        f(from, e);
}

/// The step's sums over [b, e) applied: `update(sums, lo, hi)` (the optimizer) between the moving
/// statistics, which move by the mean over the `with_samples` micro-batches that had samples.
template <class Update>
void
apply_sums(const distribute::gradient_layout& layout, float* params, float* sums, std::size_t with_samples, std::size_t b,
           std::size_t e, Update& update) noexcept
{
    std::size_t from = b;
    for (const auto& m : layout.moving) {
        if (m.end <= from || m.begin >= e)
            continue;
        if (m.begin > from)
            update(sums, from, m.begin);
        const std::size_t top = std::min(e, m.end);
        update_moving(params, sums, std::max(from, m.begin), top, m.momentum, with_samples);
        from = top;
    }
    if (from < e)
        update(sums, from, e);
}

} // namespace tpudsl::detail

namespace tpudsl::distribute {

/// Where each thread's shard of the fused pass lies: thread i of T reduces and updates [begin(i),
/// end(i)) of the parameter buffer. A float's cost differs by range (a deferred kernel's gradient is a
/// GEMM over the step's samples, a shared transposed kernel is rewritten beside its update, a bias is a
/// sum of arenas), so equal float counts are not equal work: in the MNIST MLP on two threads the
/// thread whose shard holds the 512 x 512 kernel (its gradient and its shared transpose) is the one
/// the others wait for. The cuts start at equal float counts; each thread records its time on its shard, and every
/// `window` steps each cut moves toward where the time measured, taken as even within each shard,
/// splits evenly: half-way at first; a cut that turns back (the costly floats lie on both sides of it,
/// where the even-within-a-shard guess overshoots) halves its step, one that keeps its direction
/// lengthens it again. The time a shard takes is its least over the window: a thread that lost its
/// core for a while (which only ever adds time) does not move the cuts. Which
/// thread computes an element never changes its value (its operations are the same in any shard), so
/// the cuts move time, not bits. Cuts stay multiples of buffer_alignment_floats (whole vectors, whole
/// cache lines to each thread). Allocates only in the constructor.
class shard_cuts {
public:
    /// Steps whose times one move of the cuts weighs.
    static constexpr std::size_t window = 8;

    /// `shards` shards of a buffer of `size` floats, at equal float counts.
    shard_cuts(std::size_t size, std::size_t shards)
        : cuts_(shards + 1), spent_(shards), targets_(shards + 1), gain_(shards + 1, max_gain),
          direction_(shards + 1, 0), size_(size)
    {
        for (std::size_t i = 0; i <= shards; ++i)
            cuts_[i] = i == shards ? size : size * i / shards / buffer_alignment_floats * buffer_alignment_floats;
    }

    [[nodiscard]] std::size_t shards() const noexcept { return spent_.size(); }
    [[nodiscard]] std::size_t begin(std::size_t i) const noexcept { return cuts_[i]; }
    [[nodiscard]] std::size_t end(std::size_t i) const noexcept { return cuts_[i + 1]; }
    /// The shards' bounds: shards() + 1 values from 0 to the buffer's size.
    [[nodiscard]] std::span<const std::size_t> cuts() const noexcept { return cuts_; }

    /// Places the cuts (a test, or a starting point better than equal counts): shards() + 1 values
    /// from 0 to the buffer's size, non-decreasing, each a multiple of buffer_alignment_floats but the
    /// last. The times recorded so far are dropped; the cuts move again from the next full window.
    void
    assign(std::span<const std::size_t> cuts)
    {
        bool valid = cuts.size() == cuts_.size() && cuts.front() == 0 && cuts.back() == size_;
        for (std::size_t i = 1; valid && i < cuts.size(); ++i)
            valid = cuts[i - 1] <= cuts[i] && (i + 1 == cuts.size() || cuts[i] % buffer_alignment_floats == 0);
        if (!valid)
            throw std::invalid_argument(detail::concat({"tpudsl::distribute::shard_cuts::assign: expected ",
                                                        std::to_string(cuts_.size()),
                                                        " non-decreasing cuts from 0 to ", std::to_string(size_),
                                                        ", each a multiple of ",
                                                        std::to_string(buffer_alignment_floats), " but the last"}));
        std::copy(cuts.begin(), cuts.end(), cuts_.begin());
        std::fill(gain_.begin(), gain_.end(), max_gain);
        std::fill(direction_.begin(), direction_.end(), 0);
        clear_times();
    }

    /// Thread i's time on its shard this step (each thread writes only its own slot).
    void
    record(std::size_t i, std::chrono::steady_clock::duration spent) noexcept
    {
        spent_[i].ns = std::min(spent_[i].ns, spent.count());
    }

    /// After a step, once every thread has recorded: every `window` steps, moves the cuts.
    void
    rebalance() noexcept
    {
        if (shards() < 2 || ++steps_ < window)
            return;
        steps_ = 0;
        double total = 0.0;
        for (const auto& s : spent_) {
            if (s.ns == unmeasured)   // a thread that recorded nothing: nothing to go by
                return clear_times();
            total += static_cast<double>(s.ns);
        }
        if (!(total > 0.0))
            return clear_times();
        // Where the measured cost splits evenly: the time of shard j spread evenly over its floats.
        const std::size_t T = shards();
        std::size_t j = 0;
        double before = 0.0;   // the time of the shards before j
        for (std::size_t k = 1; k < T; ++k) {
            const double want = total * static_cast<double>(k) / static_cast<double>(T);
            while (j + 1 < T && before + static_cast<double>(spent_[j].ns) <= want)
                before += static_cast<double>(spent_[j++].ns);
            const double cost = static_cast<double>(spent_[j].ns), floats = static_cast<double>(cuts_[j + 1] - cuts_[j]);
            const double at = static_cast<double>(cuts_[j]) + (cost > 0.0 ? std::min(1.0, (want - before) / cost) * floats : 0.0);
            targets_[k] = at;
        }
        constexpr double a = buffer_alignment_floats;
        for (std::size_t k = 1; k < T; ++k) {
            const double d = targets_[k] - static_cast<double>(cuts_[k]);
            const int direction = (d > 0.0) - (d < 0.0);
            if (direction != 0 && direction == -direction_[k])
                gain_[k] = std::max(gain_[k] / 2.0, min_gain);
            else if (direction != 0 && direction == direction_[k])
                gain_[k] = std::min(gain_[k] * 1.25, max_gain);
            if (direction != 0)
                direction_[k] = direction;
            const double to = static_cast<double>(cuts_[k]) + gain_[k] * d;
            const auto cut = static_cast<std::size_t>(to / a + 0.5) * buffer_alignment_floats;
            cuts_[k] = std::clamp(cut, cuts_[k - 1], size_ / buffer_alignment_floats * buffer_alignment_floats);
        }
        clear_times();
    }

private:
    void
    clear_times() noexcept
    {
        for (auto& s : spent_)
            s.ns = unmeasured;
        steps_ = 0;
    }

    static constexpr std::chrono::steady_clock::rep unmeasured = std::numeric_limits<std::chrono::steady_clock::rep>::max();
    /// The share of the way to its target a cut moves: half at first, down to 1/64 once it has turned.
    static constexpr double max_gain = 0.5, min_gain = 1.0 / 64.0;
    struct alignas(64) slot {   // one cache line per thread: its least time over the window
        std::chrono::steady_clock::rep ns = unmeasured;
    };
    std::vector<std::size_t> cuts_;
    std::vector<slot> spent_;
    std::vector<double> targets_;     // where rebalance's cost model puts each cut
    std::vector<double> gain_;        // each cut's step, a share of the way to its target
    std::vector<int> direction_;      // each cut's last move: -1, 0 (none yet) or 1
    std::size_t size_, steps_ = 0;
};

/// The fused pass over one shard [lo, hi) of the parameter buffer (a thread's, shard_cuts): for each
/// block [b, e) of the shard, the deferred gradients (`deferred(b, e, g0)` writes g0 where [b, e) meets
/// a deferred range: one chain over the step's samples in order); elsewhere the arenas of the
/// micro-batches that had samples summed in micro-batch order into arena 0; `update(g0, b, e)` applies
/// the optimizer to [b, e), the moving statistics of `params` excepted (their mean over the
/// micro-batches that had samples moves them: update_moving); then the accumulating ranges are cleared
/// in every arena (the rest is written afresh by the next backward pass). Micro-batch 0 always has
/// samples: it takes the first. Allocates nothing.
template <class Deferred, class Update>
void
reduce_and_update(std::size_t lo, std::size_t hi, const gradient_layout& layout,
                  std::span<const micro_batch_gradients> batches, float* params, Deferred&& deferred,
                  Update&& update) noexcept
{
    const std::size_t count_all = std::min(batches.size(), max_micro_batches);
    float* g0 = batches[0].grads;
    const float* others[max_micro_batches] = {};
    const std::uint64_t* other_marks[max_micro_batches] = {};
    const std::uint64_t* all_marks[max_micro_batches] = {};
    std::size_t count = 0;
    for (std::size_t k = 1; k < count_all && batches[k].has_samples; ++k) {
        other_marks[count] = batches[k].marks;
        others[count++] = batches[k].grads;
    }
    for (std::size_t k = 0; k < count_all; ++k)
        all_marks[k] = batches[k].marks;
    for_each_block(layout, lo, hi, [&](std::size_t b, std::size_t e) {
        deferred(b, e, g0);
        detail::outside_deferred(layout, b, e, [&](std::size_t lo, std::size_t hi) {
            detail::add_arenas(layout, g0, others, other_marks, count, lo, hi);
        });
        detail::apply_sums(layout, params, g0, count + 1, b, e, update);
        for (const auto& [rb, re] : layout.accumulating) {
            const std::size_t lo = std::max(b, rb), hi = std::min(e, re);
            if (lo >= hi)
                continue;
            if (layout.marked) {
                // Arena 0 holds the sums: every micro-batch's rows; the others their own.
                detail::clear_marked_rows(g0, all_marks, count_all, layout.table, lo, hi);
                for (std::size_t k = 1; k < count_all; ++k)
                    detail::clear_marked_rows(batches[k].grads, all_marks + k, 1, layout.table, lo, hi);
            } else {
                for (std::size_t k = 0; k < count_all; ++k)
                    std::fill(batches[k].grads + lo, batches[k].grads + hi, 0.0f);
            }
        }
    });
}

/// One link of the chained reduce that spreads reduce_and_update's sum over processes (the processes
/// hold consecutive micro-batches of a step: process 0 the first ones). sums[lo, hi) = the chain so far
/// (what the previous process's link left there) continued over this process's micro-batches `local`
/// in order: the arenas with samples added one after another, a deferred kernel's chains resumed
/// (`deferred(lo, hi, sums, go_on)`). The first link starts the chain: from arena 0 (which then must
/// have samples) and from zero in the deferred kernels, as reduce_and_update does. Every element gets
/// the operations reduce_and_update gives it on one process, in the same order: the same bits.
template <class Deferred>
void
chain_reduce(std::size_t lo, std::size_t hi, const gradient_layout& layout, std::span<const micro_batch_gradients> local,
             float* sums, bool first_link, Deferred&& deferred) noexcept
{
    const float* others[max_micro_batches] = {};
    const std::uint64_t* other_marks[max_micro_batches] = {};
    std::size_t count = 0;
    for (std::size_t k = first_link ? 1 : 0; k < std::min(local.size(), max_micro_batches) && local[k].has_samples; ++k) {
        other_marks[count] = local[k].marks;
        others[count++] = local[k].grads;
    }
    for_each_block(layout, lo, hi, [&](std::size_t b, std::size_t e) {
        deferred(b, e, sums, !first_link);
        detail::outside_deferred(layout, b, e, [&](std::size_t from, std::size_t to) {
            if (first_link)
                std::copy(local[0].grads + from, local[0].grads + to, sums + from);
            detail::add_arenas(layout, sums, others, other_marks, count, from, to);
        });
    });
}

/// After the last link: the step's sums[lo, hi) (the same on every process) applied as reduce_and_update
/// applies them: `update(sums, b, e)` the optimizer, the moving statistics moved by the mean over the
/// step's `with_samples` micro-batches that had samples; then what layers add into cleared in this
/// process's arenas `local`.
template <class Update>
void
chain_update(std::size_t lo, std::size_t hi, const gradient_layout& layout, std::span<const micro_batch_gradients> local,
             float* sums, float* params, std::size_t with_samples, Update&& update) noexcept
{
    for_each_block(layout, lo, hi, [&](std::size_t b, std::size_t e) {
        detail::apply_sums(layout, params, sums, with_samples, b, e, update);
        for (const auto& [rb, re] : layout.accumulating) {
            const std::size_t cb = std::max(b, rb), ce = std::min(e, re);
            if (cb >= ce)
                continue;
            for (const auto& k : local) {
                if (layout.marked) {
                    const std::uint64_t* marks = k.marks;
                    detail::clear_marked_rows(k.grads, &marks, 1, layout.table, cb, ce);
                } else {
                    std::fill(k.grads + cb, k.grads + ce, 0.0f);
                }
            }
        }
    });
}

} // namespace tpudsl::distribute

#endif // !TPUDSL_DISTRIBUTE_ALL_REDUCE_HPP
