/// @file Defines the kernels' scratch: one named buffer per use (with who fills it, who reads it and
/// how large it grows), the sizes a set of kernel calls needs of each (scratch_sizes, which a model's
/// plan adds up), and scratch_arena, a replica's buffers sized by that plan and bound to the thread
/// that runs the replica (scratch_scope).
///
/// A kernel asks for a buffer with scratch_buffer(n, which). Under a bound arena it gets the arena's
/// buffer, sized before the first step: a training step allocates nothing and the memory goes with
/// the model. Called with no arena bound (a kernel used on its own, a test), or asked for more than
/// the plan said (counted: scratch_arena::overflows), it gets this thread's fallback buffer, which
/// grows to the largest request it has seen. What a buffer holds is valid until the next request for
/// the same buffer on the same thread; a buffer that several kernels use says why they cannot meet in
/// it.
#ifndef TPUDSL_KERNELS_SCRATCH_HPP
#define TPUDSL_KERNELS_SCRATCH_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tpudsl::kernels::detail {

/// The kernels' scratch buffers of floats.
enum class scratch {
    /// Packed panels of B (gemm/): one kc x nv-vector panel in `blocked` (column_panel) and
    /// `blocked_rows`; every panel of a block of K in blocked_tn (kc_max rows) and blocked_tn_in_place
    /// (up to 2 x 128 rows), N rounded up to whole vectors; every micro-batch's panel, one after the other, in
    /// micro_batches_panel and packed_micro_batches (all the micro-batches' rows x one panel's width); one sample's dZ^T in
    /// conv_input_gradient_by_positions (direct_conv.hpp). Seven users, one at a time: each packs into it and is
    /// done with it before it returns, and none calls another kernel meanwhile.
    packed_b,
    /// A layer's kernel transposed, in three entry points: B^T (K, N) of gemm_nt when its caller keeps
    /// no `bt` (read before it returns) and of transposed_scratch (gemm/transpose.hpp), and the flipped
    /// kernel Wf (patch x F floats) of flipped_kernel_scratch (direct_conv.hpp). The last two hand it
    /// to their caller, whose copy lasts until the thread's next call of any of the three. Sharing is
    /// safe because no kernel asks for this buffer but these three, and a caller holds one result at
    /// a time: a convolution's backward pass takes W^T or Wf once and reads it through the pass,
    /// which calls none of the three again.
    transposed_b,
    /// A^T in micro-panels of MR rows (gemm/): in blocked_tn a block of mc rows by kc_max steps of K, in
    /// packed_micro_batches a block of rows by all the micro-batches' rows, each micro-panel with a vector of pad. Two
    /// users, one at a time, as packed_b.
    packed_a,
    /// One whole row of gemm_tn_micro_batches' C, N floats, for gemm_tn_micro_batches_columns (gemm/micro_batches.hpp): it is
    /// held across its one call of gemm_tn_micro_batches, which uses packed_b, packed_a or narrow_sums.
    micro_batches_row,
    /// narrow_micro_batches' block of C^T (gemm/micro_batches.hpp): 32 V W rows of C (V W floats to a vector tile) by N
    /// columns.
    narrow_sums,
    /// dot_rows' partial sums (gemm/dot.hpp), a vector per element of C when K takes several passes:
    /// m x N x W floats.
    dot_sums,
    /// A Winograd convolution's workspace (winograd.hpp): its transformed kernel, its kernel gradient's
    /// sums and a block of tiles' transforms, winograd_plan::floats. One user: a convolution's pass
    /// fills it and reads it through its samples, calling no other kernel that asks for it.
    winograd,
    /// A layer's own workspace across the kernels it calls (layer_workspace below: multi-head attention's
    /// head of key and value and its blocks of scores). One user at a time, a layer's forward or
    /// backward pass; no kernel asks for it.
    layer_workspace,
    count   ///< not a buffer: how many there are
};

/// One row of a gemm_nn_rows or gemm_nt_bias_rows call: where its row of A and its row of C are.
struct row_ref {
    const float* a;
    float* c;
};

inline constexpr std::size_t scratch_buffers = static_cast<std::size_t>(scratch::count);

} // namespace tpudsl::kernels::detail

namespace tpudsl::kernels {

/// What a set of kernel calls asks of each scratch buffer (floats) and of the row list (row_refs):
/// the largest request of each, since the calls take turns. `a | b` covers both a's calls and b's.
struct scratch_sizes {
    std::size_t floats[detail::scratch_buffers]{};
    std::size_t rows = 0;

    /// n floats of buffer `which`, nothing else.
    [[nodiscard]] static constexpr scratch_sizes
    of(detail::scratch which, std::size_t n) noexcept
    {
        scratch_sizes s;
        s.floats[static_cast<std::size_t>(which)] = n;
        return s;
    }

    [[nodiscard]] static constexpr scratch_sizes
    of_rows(std::size_t n) noexcept
    {
        scratch_sizes s;
        s.rows = n;
        return s;
    }

    constexpr scratch_sizes&
    operator|=(const scratch_sizes& other) noexcept
    {
        for (std::size_t b = 0; b < detail::scratch_buffers; ++b)
            floats[b] = std::max(floats[b], other.floats[b]);
        rows = std::max(rows, other.rows);
        return *this;
    }

    [[nodiscard]] friend constexpr scratch_sizes
    operator|(scratch_sizes a, const scratch_sizes& b) noexcept
    {
        return a |= b;
    }

    [[nodiscard]] friend constexpr bool operator==(const scratch_sizes&, const scratch_sizes&) = default;
};

/// The rows the kernel calls of a step take at most, by who makes them: one micro-batch (a layer's
/// forward and backward), a replica's micro-batches together (a Dense's rows kernels), and every
/// micro-batch of the step (a deferred kernel gradient, summed over all of them).
struct scratch_rows {
    std::size_t micro_batch = 0;
    std::size_t replica = 0;
    std::size_t step = 0;
};

/// What a layer keeps in its thread's arena from one call to the next (a Dense's transposed kernel):
/// where the floats came from and their version, so that a stale copy is never read, and where they
/// are (the layer's region, or a copy the model's threads share: scratch_arena::shared).
struct kept_copy {
    const float* from = nullptr;
    std::uint64_t version = 0;
    const float* data = nullptr;
};

/// A replica's scratch: the kernels' buffers (scratch_sizes) and each layer's own region (floats it
/// keeps from forward to backward, or a buffer it fills per group of samples), in one 64-byte aligned
/// allocation made when the sizes are known, before the first step. Bind it to the thread that runs
/// the replica with scratch_scope; while bound, the kernels' requests are served from it.
class scratch_arena {
public:
    scratch_arena() = default;
    scratch_arena(const scratch_arena&) = delete;
    scratch_arena& operator=(const scratch_arena&) = delete;
    scratch_arena(scratch_arena&&) noexcept = default;   // the storage moves with its pointers
    scratch_arena& operator=(scratch_arena&&) noexcept = default;
    ~scratch_arena() = default;

    /// Buffers of `sizes`, and a region of layer_floats[i] floats for layer i.
    scratch_arena(const scratch_sizes& sizes, const std::vector<std::size_t>& layer_floats)
        : sizes_(sizes), rows_(sizes.rows), layer_floats_(layer_floats), kept_(layer_floats.size())
    {
        constexpr std::size_t line = 64 / sizeof(float);
        auto round = [](std::size_t n) { return (n + line - 1) / line * line; };
        std::size_t at = 0;
        for (std::size_t b = 0; b < detail::scratch_buffers; ++b) {
            offsets_[b] = at;
            at += round(sizes.floats[b]);
        }
        layer_offsets_.resize(layer_floats.size());
        for (std::size_t i = 0; i < layer_floats.size(); ++i) {
            layer_offsets_[i] = at;
            at += round(layer_floats[i]);
        }
        storage_.assign(at + line, 0.0f);
        const auto misalign = reinterpret_cast<std::uintptr_t>(storage_.data()) % 64;
        base_ = storage_.data() + (misalign ? (64 - misalign) / sizeof(float) : 0);
    }

    /// Buffer `which` when it holds n floats; nullptr (and one more overflow) when it does not.
    [[nodiscard]] float*
    buffer(detail::scratch which, std::size_t n) noexcept
    {
        const auto b = static_cast<std::size_t>(which);
        if (n > sizes_.floats[b]) {
            ++overflows_;
            return nullptr;
        }
        return base_ + offsets_[b];
    }

    /// The row list when it holds n row_refs; nullptr (and one more overflow) when it does not.
    [[nodiscard]] detail::row_ref*
    rows(std::size_t n) noexcept
    {
        if (n > rows_.size()) {
            ++overflows_;
            return nullptr;
        }
        return rows_.data();
    }

    /// Layer i's region when it holds n floats, else nullptr (and one more overflow).
    [[nodiscard]] float*
    layer(std::size_t i, std::size_t n) noexcept
    {
        if (i >= layer_floats_.size() || n > layer_floats_[i]) {
            ++overflows_;
            return nullptr;
        }
        return base_ + layer_offsets_[i];
    }

    /// What layer i's region holds (kept_copy): meaningful only beside layer(i, n).
    [[nodiscard]] kept_copy&
    kept(std::size_t i) noexcept
    {
        return kept_[i];
    }
    [[nodiscard]] const kept_copy&
    kept(std::size_t i) const noexcept
    {
        return kept_[i];
    }

    /// Copies that every thread of the model reads, one per layer (`copies[i].data` null where layer
    /// i has none): a Dense's transposed kernel that the fused pass remade as it updated the kernel.
    /// They must outlive the arena's use; the model writes them only while no thread runs.
    void
    share(const kept_copy* copies) noexcept
    {
        shared_ = copies;
    }

    /// Layer i's shared copy, or nullptr.
    [[nodiscard]] const kept_copy*
    shared(std::size_t i) const noexcept
    {
        return shared_ && i < kept_.size() && shared_[i].data ? &shared_[i] : nullptr;
    }

    /// The sizes the arena was made for.
    [[nodiscard]] const scratch_sizes&
    sizes() const noexcept
    {
        return sizes_;
    }

    /// Bytes the arena holds.
    [[nodiscard]] std::size_t
    bytes() const noexcept
    {
        return storage_.size() * sizeof(float) + rows_.size() * sizeof(detail::row_ref);
    }

    /// Requests larger than the plan said (served by the thread's fallback buffers instead): zero
    /// when the plan sized every buffer.
    [[nodiscard]] std::size_t
    overflows() const noexcept
    {
        return overflows_;
    }

private:
    scratch_sizes sizes_{};
    std::size_t offsets_[detail::scratch_buffers]{};
    std::vector<float> storage_;
    float* base_ = nullptr;
    std::vector<detail::row_ref> rows_;
    std::vector<std::size_t> layer_floats_, layer_offsets_;
    std::vector<kept_copy> kept_;
    const kept_copy* shared_ = nullptr;
    std::size_t overflows_ = 0;
};

namespace detail {

/// The arena bound to this thread (scratch_scope), or nullptr.
[[nodiscard]] inline scratch_arena*&
bound_arena() noexcept
{
    thread_local scratch_arena* arena = nullptr;
    return arena;
}

} // namespace detail

/// Binds an arena to the calling thread for the scope's lifetime (the one bound before comes back
/// after it).
class scratch_scope {
public:
    explicit scratch_scope(scratch_arena& arena) noexcept
        : previous_(std::exchange(detail::bound_arena(), &arena))
    {
    }
    scratch_scope(const scratch_scope&) = delete;
    scratch_scope& operator=(const scratch_scope&) = delete;
    ~scratch_scope() { detail::bound_arena() = previous_; }

private:
    scratch_arena* previous_;
};

} // namespace tpudsl::kernels

namespace tpudsl::kernels::detail {

/// Buffer `which` of at least n floats, 64-byte aligned (a packed panel's vectors never straddle a
/// cache line): the bound arena's, else this thread's fallback, which grows once and is then reused.
inline float*
scratch_buffer(std::size_t n, scratch which)
{
    if (scratch_arena* arena = bound_arena())
        if (float* p = arena->buffer(which, n))
            return p;
    thread_local std::vector<float> buffers[scratch_buffers];
    std::vector<float>& buffer = buffers[static_cast<int>(which)];
    constexpr std::size_t pad = 64 / sizeof(float);   // the start is moved to a 64-byte boundary
    if (buffer.size() < n + pad)
        buffer.resize(n + pad);
    const auto offset = reinterpret_cast<std::uintptr_t>(buffer.data()) % 64;
    return buffer.data() + (offset ? (64 - offset) / sizeof(float) : 0);
}

} // namespace tpudsl::kernels::detail

namespace tpudsl::kernels {

/// What a layer asks for its own workspace of n floats in its thread's scratch (its scratch() declares
/// it beside its kernels' needs), and that workspace: valid through the layer's pass, which calls only
/// kernels that never ask for it.
[[nodiscard]] constexpr scratch_sizes
layer_workspace_sizes(std::size_t n) noexcept
{
    return scratch_sizes::of(detail::scratch::layer_workspace, n);
}
[[nodiscard]] inline float*
layer_workspace(std::size_t n)
{
    return detail::scratch_buffer(n, detail::scratch::layer_workspace);
}

} // namespace tpudsl::kernels

namespace tpudsl::kernels::detail {

/// A list of at least n row_refs: the bound arena's, else this thread's fallback.
inline row_ref*
row_buffer(std::size_t n)
{
    if (scratch_arena* arena = bound_arena())
        if (row_ref* p = arena->rows(n))
            return p;
    thread_local std::vector<row_ref> rows;
    if (rows.size() < n)
        rows.resize(n);
    return rows.data();
}

} // namespace tpudsl::kernels::detail

#endif // !TPUDSL_KERNELS_SCRATCH_HPP
