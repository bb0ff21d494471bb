// The in-place convolutions against im2col + GEMM, bit for bit, and the fused graph's workspace plan.
// (Their own translation unit: the unrolled direct and row tiles are the slowest code to compile.)
#include "kernel_checks.hpp"

#include <tpudsl/kernels/direct_conv.hpp>
#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/kernels/im2col.hpp>
#include <tpudsl/ops/graph.hpp>
#include <tpudsl/tpudsl.hpp>

#include "fashion_mnist_cnn/model.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace tpudsl;
using kernel_checks::random_vector;

namespace {

/// The in-place kernels against im2col + GEMM on the same sample: the same additions in the same order.
template <kernels::window_geometry G, std::size_t F>
void
check_in_place_bits(std::size_t samples)
{
    constexpr std::size_t P = G.positions(), K = G.patch();
    const auto x = random_vector(samples * G.in_size(), 11);
    const auto w = random_vector(K * F, 12);
    const auto b = random_vector(F, 13);
    const auto dz = random_vector(samples * P * F, 14);
    std::vector<float> cols(P * K), want(P * F), got(P * F), want_dw(K * F), got_dw(K * F);
    for (std::size_t s = 0; s < samples; ++s) {
        kernels::im2col<G>(x.data() + s * G.in_size(), cols.data());
        kernels::gemm_nn_bias<K, F, Relu>(P, cols.data(), w.data(), b.data(), want.data());
        kernels::conv_forward_in_place<G, F, Relu>(x.data() + s * G.in_size(), w.data(), b.data(), got.data());
        CHECK(got == want);
        kernels::gemm_tn<K, F>(P, cols.data(), dz.data() + s * P * F, want_dw.data(), s > 0);
        kernels::conv_kernel_gradient_in_place<G, F>(x.data() + s * G.in_size(), dz.data() + s * P * F,
                                                     got_dw.data(), s > 0);
    }
    CHECK(got_dw == want_dw);
}

} // namespace

TEST_CASE("convolutions read in place give im2col's bits", "[kernels]")
{
    // The Fashion model's convolution (direct), the Reuters model's two (strided, one over two blocks
    // of the GEMM's K when filters are few), and a strided thin 2-D patch with partial vectors.
    check_in_place_bits<kernels::window_geometry{28, 28, 1, 3, 3, 1, 1, 26, 26, 0, 0}, 64>(3);
    check_in_place_bits<kernels::window_geometry{1, 300, 7, 1, 5, 1, 1, 1, 296, 0, 0}, 64>(2);
    check_in_place_bits<kernels::window_geometry{1, 148, 64, 1, 3, 1, 1, 1, 146, 0, 0}, 32>(2);
    check_in_place_bits<kernels::window_geometry{9, 8, 2, 3, 2, 2, 1, 4, 7, 0, 0}, 10>(2);
    // Window rows: the CIFAR-10 model's second convolution, and a strided one with a patch over two
    // blocks of the GEMM's K (so im2col's GEMM splits it where the rows do not).
    check_in_place_bits<kernels::window_geometry{32, 32, 32, 3, 3, 1, 1, 30, 30, 0, 0}, 32>(2);
    check_in_place_bits<kernels::window_geometry{11, 12, 40, 3, 5, 2, 2, 5, 4, 0, 0}, 20>(2);
}

TEST_CASE("a fused graph's workspace is smaller than its layers' own layout", "[kernels]")
{
    using seeds::FashionCnn;
    using G = ops::graph<FashionCnn>;
    // Per sample: the pooled block (the absorbed Relu shares it), the Dense and Softmax outputs, the
    // argmax, the softmax logits, two deltas as wide as the pooled block (the convolution's own
    // gradient never reaches them). Once: one sample's convolution output; no windows (read in place,
    // and the first layer needs no input gradient).
    STATIC_REQUIRE(G::plan.per_sample == 4 * aligned_floats(13 * 13 * 64) + 3 * aligned_floats(10));
    STATIC_REQUIRE(G::plan.fixed == aligned_floats(26 * 26 * 64));
    STATIC_REQUIRE(G::workspace_floats(16) * 3 < 16 * FashionCnn::workspace_size);   // 0.26 of it
    // Every block lies inside the workspace, and the delta buffers do not overlap the others.
    constexpr std::size_t cap = 16;
    std::vector<float> ws(G::workspace_floats(cap));
    for (std::size_t l = 0; l < G::layers; ++l) {
        CHECK(G::activation(ws.data(), cap, l) <= ws.data() + ws.size());
        CHECK(G::scratch(ws.data(), cap, l) <= ws.data() + ws.size());
    }
    CHECK(G::delta(ws.data(), cap, 1) + cap * G::plan.delta_stride <= ws.data() + cap * G::plan.per_sample);
    CHECK(G::activation(ws.data(), cap, 0) + 26 * 26 * 64 == ws.data() + ws.size());
}
