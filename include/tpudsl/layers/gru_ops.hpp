/// @file Defines gru_gates, tpudsl::GRU's step: the gates that recurrent_ops, the forward and backward
/// pass (backpropagation through time) it shares with LSTM, runs at each step.
#ifndef TPUDSL_LAYERS_GRU_OPS_HPP
#define TPUDSL_LAYERS_GRU_OPS_HPP

#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/layers/detail/recurrent.hpp>
#include <tpudsl/layers/detail/recurrent_ops.hpp>
#include <tpudsl/layers/gru.hpp>

#include <cstddef>
#include <cstring>

namespace tpudsl::detail {

/// GRU's step (see layers/gru.hpp), for recurrent_ops: the gates z, r, hh (G = 3U), and beside them
/// the recurrent products h_{t-1} R + rb (S = G; the h block is read back), which backward turns into
/// the recurrent side's dZ (its h block times r), with a bias row of its own.
template <std::size_t Units>
struct gru_gates {
    static constexpr std::size_t U = Units, G = 3 * Units, S = 3 * Units;
    static constexpr bool carried = false;
    static constexpr bool recurrent_side = true;

    /// One step's gates for n samples: at (x W + b) becomes z, r, hh; mt (h_{t-1} R, or zeros) gets
    /// the recurrent bias rb; h_t = z h_{t-1} + (1 - z) hh (h_prev null: the zero initial state).
    static void
    gates_forward(float* at, float* mt, const float* rb, const float* h_prev, float* h, std::size_t n) noexcept
    {
        using namespace recurrent;
        const vfloat one = vfloat::broadcast(1.0f);
        for (std::size_t s = 0; s < n; ++s) {
            float* arow = at + s * G;
            float* mrow = mt + s * G;
            const float* hp = h_prev ? h_prev + s * U : nullptr;
            float* hs = h + s * U;
            for_units<U>([&](std::size_t u, std::size_t k) {
                const vfloat mz = load(mrow + u, k) + load(rb + u, k);
                const vfloat mr = load(mrow + U + u, k) + load(rb + U + u, k);
                const vfloat mh = load(mrow + 2 * U + u, k) + load(rb + 2 * U + u, k);
                const vfloat z = sigmoid(load(arow + u, k) + mz), r = sigmoid(load(arow + U + u, k) + mr);
                const vfloat hh = tanh(fma(r, mh, load(arow + 2 * U + u, k)));
                store(z, arow + u, k);
                store(r, arow + U + u, k);
                store(hh, arow + 2 * U + u, k);
                store(mh, mrow + 2 * U + u, k);
                const vfloat hn = hp ? fma(z, load(hp + u, k), (one - z) * hh) : (one - z) * hh;
                store(hn, hs + u, k);
            });
        }
    }

    /// One step back for n samples: from dh, the gates in at become the input side's dZ, mt the
    /// recurrent side's, and dh the direct part of the gradient of h_{t-1} (z dh).
    static void
    gates_backward(float* at, float* mt, const float* h_prev, float* dh, std::size_t n) noexcept
    {
        using namespace recurrent;
        const vfloat one = vfloat::broadcast(1.0f);
        for (std::size_t s = 0; s < n; ++s) {
            float* arow = at + s * G;
            float* mrow = mt + s * G;
            const float* hp = h_prev ? h_prev + s * U : nullptr;
            float* dhs = dh + s * U;
            for_units<U>([&](std::size_t u, std::size_t k) {
                const vfloat z = load(arow + u, k), r = load(arow + U + u, k), hh = load(arow + 2 * U + u, k);
                const vfloat mh = load(mrow + 2 * U + u, k), d = load(dhs + u, k);
                const vfloat hpv = hp ? load(hp + u, k) : vfloat::broadcast(0.0f);
                const vfloat dz = d * (hpv - hh) * z * (one - z);
                const vfloat dhh = d * (one - z) * (one - hh * hh);
                const vfloat dr = dhh * mh * r * (one - r);
                store(dz, arow + u, k);
                store(dr, arow + U + u, k);
                store(dhh, arow + 2 * U + u, k);
                store(dz, mrow + u, k);
                store(dr, mrow + U + u, k);
                store(dhh * r, mrow + 2 * U + u, k);
                store(d * z, dhs + u, k);
            });
        }
    }

    /// Step t: m_t = h_{t-1} R (zeros at the first step), then the gates and the state; `bias` is
    /// (2, 3U), the input row then the recurrent one.
    static void
    step_forward(const recurrent_blocks& k, std::size_t t, std::size_t n, const float* r, const float* bias) noexcept
    {
        float* mt = k.s + t * n * G;
        if (t > 0)
            kernels::gemm_nn<U, G>(n, k.h + (t - 1) * n * U, r, mt);   // h_{t-1} R
        else
            std::memset(mt, 0, n * G * sizeof(float));
        gates_forward(k.a + t * n * G, mt, bias + G, t > 0 ? k.h + (t - 1) * n * U : nullptr, k.h + t * n * U, n);
    }

    /// Step t back: dZ over both sides, dh_{t-1} = z dh + dZr_t . R^T.
    static void
    step_backward(const recurrent_blocks& k, std::size_t t, std::size_t n, const float* rt) noexcept
    {
        float* mt = k.s + t * n * G;
        gates_backward(k.a + t * n * G, mt, t > 0 ? k.h + (t - 1) * n * U : nullptr, k.dh, n);
        if (t > 0)
            kernels::gemm_nn<G, U>(n, mt, rt, k.dh, true);   // dh_{t-1} = z dh + dZr_t . R^T
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_LAYERS_GRU_OPS_HPP
