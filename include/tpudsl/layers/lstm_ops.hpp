/// @file Defines lstm_gates, tpudsl::LSTM's step: the gates that recurrent_ops, the forward and backward
/// pass (backpropagation through time) it shares with GRU, runs at each step.
#ifndef TPUDSL_LAYERS_LSTM_OPS_HPP
#define TPUDSL_LAYERS_LSTM_OPS_HPP

#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/layers/detail/recurrent.hpp>
#include <tpudsl/layers/detail/recurrent_ops.hpp>
#include <tpudsl/layers/lstm.hpp>

#include <cstddef>
#include <cstring>

namespace tpudsl::detail {

/// LSTM's step (see layers/lstm.hpp), for recurrent_ops: the gates i, f, c, o (G = 4U), the cell
/// states c_1 .. c_T kept beside them (S = U), the cell's gradient carried back beside the state's.
template <std::size_t Units>
struct lstm_gates {
    static constexpr std::size_t U = Units, G = 4 * Units, S = Units;
    static constexpr bool carried = true;
    static constexpr bool recurrent_side = false;

    /// One step's gates for n samples: the pre-activations in gt become i, f, c~, o; then
    /// c_t = f c_{t-1} + i c~ and h_t = o tanh(c_t) (c_prev null: the zero initial state).
    static void
    gates_forward(float* gt, const float* c_prev, float* c, float* h, std::size_t n) noexcept
    {
        using namespace recurrent;
        for (std::size_t s = 0; s < n; ++s) {
            float* row = gt + s * G;
            const float* cps = c_prev ? c_prev + s * U : nullptr;
            float* cs = c + s * U;
            float* hs = h + s * U;
            for_units<U>([&](std::size_t u, std::size_t k) {
                const vfloat i = sigmoid(load(row + u, k)), f = sigmoid(load(row + U + u, k));
                const vfloat cc = tanh(load(row + 2 * U + u, k)), o = sigmoid(load(row + 3 * U + u, k));
                store(i, row + u, k);
                store(f, row + U + u, k);
                store(cc, row + 2 * U + u, k);
                store(o, row + 3 * U + u, k);
                const vfloat cn = cps ? fma(f, load(cps + u, k), i * cc) : i * cc;
                store(cn, cs + u, k);
                store(o * tanh(cn), hs + u, k);
            });
        }
    }

    /// One step back for n samples: from dh (the state's gradient) and dc (the cell's, carried from
    /// the step after), the gates' activations in gt become dZ; dc becomes the gradient of c_{t-1}.
    static void
    gates_backward(float* gt, const float* c_prev, const float* c, const float* dh, float* dc, std::size_t n) noexcept
    {
        using namespace recurrent;
        const vfloat one = vfloat::broadcast(1.0f);
        for (std::size_t s = 0; s < n; ++s) {
            float* row = gt + s * G;
            const float* cps = c_prev ? c_prev + s * U : nullptr;
            const float* cs = c + s * U;
            const float* dhs = dh + s * U;
            float* dcs = dc + s * U;
            for_units<U>([&](std::size_t u, std::size_t k) {
                const vfloat i = load(row + u, k), f = load(row + U + u, k);
                const vfloat cc = load(row + 2 * U + u, k), o = load(row + 3 * U + u, k);
                const vfloat tc = tanh(load(cs + u, k)), d = load(dhs + u, k);
                const vfloat dcv = fma(d * o, one - tc * tc, load(dcs + u, k));
                const vfloat cp = cps ? load(cps + u, k) : vfloat::broadcast(0.0f);
                store(dcv * cc * i * (one - i), row + u, k);
                store(dcv * cp * f * (one - f), row + U + u, k);
                store(dcv * i * (one - cc * cc), row + 2 * U + u, k);
                store(d * tc * o * (one - o), row + 3 * U + u, k);
                store(dcv * f, dcs + u, k);
            });
        }
    }

    /// Step t: gates_t += h_{t-1} R, then the gates and the states.
    static void
    step_forward(const recurrent_blocks& k, std::size_t t, std::size_t n, const float* r, const float*) noexcept
    {
        float* gt = k.a + t * n * G;
        if (t > 0)
            kernels::gemm_nn<U, G>(n, k.h + (t - 1) * n * U, r, gt, true);   // + h_{t-1} R
        gates_forward(gt, t > 0 ? k.s + (t - 1) * n * U : nullptr, k.s + t * n * U, k.h + t * n * U, n);
    }

    /// Step t back: dZ over the gates, dc on to c_{t-1}, dh_{t-1} = dZ_t . R^T.
    static void
    step_backward(const recurrent_blocks& k, std::size_t t, std::size_t n, const float* rt) noexcept
    {
        float* gt = k.a + t * n * G;
        gates_backward(gt, t > 0 ? k.s + (t - 1) * n * U : nullptr, k.s + t * n * U, k.dh, k.dc, n);
        if (t > 0)
            kernels::gemm_nn<G, U>(n, gt, rt, k.dh);   // dh_{t-1} = dZ_t . R^T
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_LSTM_OPS_HPP
