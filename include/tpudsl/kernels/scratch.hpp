/// @file Defines the kernels' scratch buffers (private): one named buffer per use, each this thread's,
/// with who fills it, who reads it and how large it grows.
///
/// A buffer grows to the largest request it has seen on its thread and is then reused: a steady
/// training step allocates nothing. What it holds is valid until the next request for the same buffer
/// on the same thread; a buffer that several kernels use says why they cannot meet in it. (The row
/// lists of gemm_nn_rows and gemm_nt_bias_rows are row_refs, not floats: gemm/rows.hpp keeps their
/// buffer, row_buffer.)
#ifndef TPUDSL_KERNELS_SCRATCH_HPP
#define TPUDSL_KERNELS_SCRATCH_HPP

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpudsl::kernels::detail {

/// The kernels' scratch buffers of floats.
enum class scratch {
    /// Packed panels of B (gemm/): one kc x nv-vector panel in `blocked` (column_panel) and
    /// `blocked_rows`; every panel of a block of K in blocked_tn (kc_max rows) and blocked_tn_in_place
    /// (up to 2 x 128 rows), N rounded up to whole vectors; every micro-batch's panel, one after the other, in
    /// micro_batches_panel and packed_micro_batches (all the micro-batches' rows x one panel's width). Six users, one at a
    /// time: each packs into it and is done with it before it returns, and none calls another kernel
    /// meanwhile.
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
    count   ///< not a buffer: how many there are
};

/// This thread's buffer `which` of at least n floats, 64-byte aligned (a packed panel's vectors never
/// straddle a cache line): grows once, then is reused (no allocation in a steady step).
inline float*
scratch_buffer(std::size_t n, scratch which)
{
    thread_local std::vector<float> buffers[static_cast<std::size_t>(scratch::count)];
    std::vector<float>& buffer = buffers[static_cast<int>(which)];
    constexpr std::size_t pad = 64 / sizeof(float);   // the start is moved to a 64-byte boundary
    if (buffer.size() < n + pad)
        buffer.resize(n + pad);
    const auto offset = reinterpret_cast<std::uintptr_t>(buffer.data()) % 64;
    return buffer.data() + (offset ? (64 - offset) / sizeof(float) : 0);
}

} // namespace tpudsl::kernels::detail

#endif // !TPUDSL_KERNELS_SCRATCH_HPP
