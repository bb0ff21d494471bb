/// @file Defines the forward and backward pass of tpudsl::TimeDistributed<Dense> on a batch.
#ifndef TPUDSL_LAYERS_TIME_DISTRIBUTED_OPS_HPP
#define TPUDSL_LAYERS_TIME_DISTRIBUTED_OPS_HPP

#include <tpudsl/core/shape.hpp>
#include <tpudsl/kernels/scratch.hpp>
#include <tpudsl/layers/dense_ops.hpp>
#include <tpudsl/layers/step_context.hpp>
#include <tpudsl/layers/time_distributed.hpp>

#include <cstddef>

namespace tpudsl::detail {

/// A bound TimeDistributed<Dense> B as its Dense sees it: one timestep of F features to Units, the
/// same layer index (its arena region) and the same weights.
template <class B, std::size_t Units>
struct timestep_binding {
    using input_shape = Shape<B::input_shape::dims[1]>;
    using output_shape = Shape<Units>;
    static constexpr std::size_t index = B::index;
    template <std::size_t J>
    using weight = typename B::template weight<J>;
};

/// TimeDistributed<Dense>'s forward and backward: a (n, T, F) batch is (n T, F) rows of one Dense,
/// so both are Dense's own passes (one GEMM over every timestep of every sample) on n T rows.
template <std::size_t Units, class Act>
struct time_distributed_ops {
    using dense = dense_ops<Units, Act>;
    template <class B>
    using step = timestep_binding<B, Units>;
    template <class B>
    static constexpr std::size_t timesteps = B::input_shape::dims[0];

    /// Dense's requests, for T rows per sample.
    template <class B>
    static constexpr kernels::scratch_sizes
    scratch(const kernels::scratch_rows& rows) noexcept
    {
        constexpr std::size_t T = timesteps<B>;
        return dense::template scratch<step<B>>({.micro_batch = rows.micro_batch * T,
                                                 .replica = rows.replica * T,
                                                 .step = rows.step * T});
    }

    /// Floats kept in a thread's arena: the wrapped Dense's transposed kernel.
    template <class B>
    static constexpr std::size_t kept_floats = dense::template kept_floats<step<B>>;

    template <class B>
    static void
    forward(const float* params, const float* x, float* y, float* scratch, std::size_t n, const step_context& ctx) noexcept
    {
        dense::template forward<step<B>>(params, x, y, scratch, n * timesteps<B>, ctx);   // (n T, Units) <- (n T, F)
    }

    template <class B>
    static void
    backward(const float* params, const float* x, const float* y, float* dy, float* dx, float* grads, float* scratch,
             std::size_t n, bool dy_is_logit_grad) noexcept
    {
        dense::template backward<step<B>>(params, x, y, dy, dx, grads, scratch, n * timesteps<B>, dy_is_logit_grad);
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_TIME_DISTRIBUTED_OPS_HPP
