// The in-place convolutions against im2col + GEMM, bit for bit, and the fused graph's workspace plan.
// (Their own translation unit: the unrolled direct and row tiles are the slowest code to compile.)
#include "kernel_checks.hpp"

#include <tpudsl/kernels/direct_conv.hpp>
#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/kernels/im2col.hpp>
#include <tpudsl/kernels/pooling.hpp>
#include <tpudsl/ops/graph.hpp>
#include <tpudsl/tpudsl.hpp>

#include "fashion_mnist_cnn/model.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace tpudsl;
using kernel_checks::random_vector;

namespace {

/// Bit for bit, NaN included: the float vectors compared as bytes.
bool
same_bits(const std::vector<float>& a, const std::vector<float>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

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

/// A padded convolution's layer (conv_core) reading its zero frames against im2col + GEMM over the
/// same samples: its output, kernel, bias and input gradients, bit for bit. The frames hold what
/// im2col's rows hold, padding included, so the additions are the same and in the same order.
template <kernels::window_geometry G, std::size_t F>
void
check_framed_bits(std::size_t samples)
{
    using core = tpudsl::detail::conv_core<G, F, Relu>;
    STATIC_REQUIRE(!G.windows_inside());
    STATIC_REQUIRE(core::framed);
    STATIC_REQUIRE(!core::winograd);   // whose bits are not im2col's
    constexpr std::size_t P = G.positions(), K = G.patch();
    constexpr kernels::window_geometry FG = kernels::frame_geometry<G>;
    STATIC_REQUIRE(FG.windows_inside());
    const auto x = random_vector(samples * G.in_size(), 31);
    const auto w = random_vector(K * F, 32);
    const auto b = random_vector(F, 33);
    auto dz = random_vector(samples * P * F, 34);
    // The frame: x where it lies, zeros around it (and past the last window nothing).
    std::vector<float> frame(FG.in_size(), -1.0f);
    kernels::to_frame<G>(x.data(), frame.data());
    for (std::size_t r = 0; r < FG.in_h; ++r)
        for (std::size_t c = 0; c < FG.in_w; ++c)
            for (std::size_t ch = 0; ch < G.channels; ++ch) {
                const bool inside = r >= G.pad_top && r - G.pad_top < G.in_h && c >= G.pad_left && c - G.pad_left < G.in_w;
                const float want = inside ? x[((r - G.pad_top) * G.in_w + c - G.pad_left) * G.channels + ch] : 0.0f;
                REQUIRE(frame[(r * FG.in_w + c) * G.channels + ch] == want);
            }
    // The im2col path as conv_core ran it before: the whole batch's rows in one GEMM each way.
    std::vector<float> cols(samples * P * K), want(samples * P * F), want_dw(K * F), want_db(F);
    for (std::size_t s = 0; s < samples; ++s)
        kernels::im2col<G>(x.data() + s * G.in_size(), cols.data() + s * P * K);
    kernels::gemm_nn_bias<K, F, Relu>(samples * P, cols.data(), w.data(), b.data(), want.data());
    for (std::size_t i = 0; i < dz.size(); ++i)   // what Relu's backward leaves: no gradient where y = 0
        if (want[i] == 0.0f)
            dz[i] = 0.0f;
    kernels::gemm_tn<K, F>(samples * P, cols.data(), dz.data(), want_dw.data(), false);
    tpudsl::detail::column_sums<F>(dz.data(), want_db.data(), samples * P);
    std::vector<float> want_dx(samples * G.in_size()), dcols(samples * P * K);
    kernels::gemm_nt<F, K>(samples * P, dz.data(), w.data(), dcols.data());
    for (std::size_t s = 0; s < samples; ++s)
        kernels::col2im<G>(dcols.data() + s * P * K, want_dx.data() + s * G.in_size());

    std::vector<float> scratch(samples * P * K, 7.0f), y(samples * P * F), dy = dz, dw(K * F), db(F),
        dx(samples * G.in_size());
    core::forward(w.data(), b.data(), x.data(), y.data(), scratch.data(), samples);
    CHECK(same_bits(y, want));
    core::backward(w.data(), x.data(), y.data(), dy.data(), dx.data(), dw.data(), db.data(), scratch.data(), samples,
                   false);
    CHECK(same_bits(dw, want_dw));
    CHECK(same_bits(db, want_db));
    if constexpr (core::dx_as_conv) {
        // The input gradient as a convolution of dZ's zero frame adds the same products in another order
        // (check_input_gradient_as_conv holds its bits): here, within float rounding of col2im's.
        for (std::size_t i = 0; i < dx.size(); ++i) {
            INFO("dx element " << i);
            CHECK(std::abs(dx[i] - want_dx[i]) <= 1e-5f * (1.0f + std::abs(want_dx[i])));
        }
    } else {
        CHECK(same_bits(dx, want_dx));
    }
}


/// A padded convolution fused with its max pooling (conv_pool_pair over a framed conv_core) against
/// im2col + GEMM and the separate pooling passes, sample by sample in the order the pair takes them:
/// pooled output and argmax, kernel, bias and (`with_dx`) input gradients, bit for bit.
template <kernels::window_geometry G, kernels::window_geometry PG, std::size_t F>
void
check_framed_pair_bits(std::size_t n, bool with_dx)
{
    using core = tpudsl::detail::conv_core<G, F, Relu>;
    using pair = tpudsl::detail::conv_pool_pair<core, tpudsl::detail::pooling_core<PG, true>>;
    STATIC_REQUIRE(core::framed);
    STATIC_REQUIRE(!core::winograd);   // whose bits are not im2col's
    constexpr std::size_t P = G.positions(), K = G.patch(), out = PG.positions() * F, Q = PG.positions();
    const auto x = random_vector(n * G.in_size(), 41);
    const auto w = random_vector(K * F, 42);
    const auto b = random_vector(F, 43);
    const auto dy = random_vector(n * out, 44);
    std::vector<float> wt(F * K);
    for (std::size_t k = 0; k < K; ++k)
        for (std::size_t f = 0; f < F; ++f)
            wt[f * K + k] = w[k * F + f];

    std::vector<float> cols(n * P * K), z(P * F), want_y(n * out), want_arg(n * out);
    for (std::size_t s = 0; s < n; ++s) {
        kernels::im2col<G>(x.data() + s * G.in_size(), cols.data() + s * P * K);
        kernels::gemm_nn_bias<K, F, Relu>(P, cols.data() + s * P * K, w.data(), b.data(), z.data());
        kernels::max_pool_forward<PG>(z.data(), want_y.data() + s * out, want_arg.data() + s * out);
    }
    std::vector<float> want_dw(K * F), want_db(F), want_dx(n * G.in_size()), g(out), dz(P * F), dcols(P * K);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t s = pair::reverse ? n - 1 - i : i;
        kernels::activation_backward<Relu, F>(want_y.data() + s * out, dy.data() + s * out, g.data(), Q);
        tpudsl::detail::column_sums<F>(g.data(), want_db.data(), Q, i > 0);
        kernels::max_pool_backward<PG>(g.data(), want_arg.data() + s * out, dz.data());
        kernels::gemm_tn<K, F>(P, cols.data() + s * P * K, dz.data(), want_dw.data(), i > 0);
        if (with_dx) {
            kernels::gemm_nn<F, K>(P, dz.data(), wt.data(), dcols.data());
            kernels::col2im<G>(dcols.data(), want_dx.data() + s * G.in_size());
        }
    }

    std::vector<float> scratch(n * P * K, 7.0f), z1(P * F), y(n * out), arg(n * out), dw(K * F), db(F),
        dx(n * G.in_size()), pooled = dy;
    pair::forward(w.data(), b.data(), x.data(), z1.data(), scratch.data(), y.data(), arg.data(), n);
    CHECK(same_bits(y, want_y));
    CHECK(same_bits(arg, want_arg));
    pair::backward(w.data(), x.data(), y.data(), tpudsl::detail::dy_in_place{pooled.data(), out},
                   with_dx ? dx.data() : nullptr, dw.data(), db.data(), scratch.data(), z1.data(), arg.data(), n);
    CHECK(same_bits(dw, want_dw));
    CHECK(same_bits(db, want_db));
    if (with_dx)
        CHECK(same_bits(dx, want_dx));
}

/// Inputs with ties: a third of them 0 (a Relu's windows then hold several zeros) and some repeated.
std::vector<float>
input_with_ties(std::size_t n, std::uint32_t seed)
{
    auto x = random_vector(n, seed);
    for (std::size_t i = 0; i < n; ++i) {
        if (i % 3 == 1)
            x[i] = 0.0f;
        else if (i % 7 == 5)
            x[i] = x[i - 1];
    }
    return x;
}

/// conv_pool_forward_in_place against conv_forward_in_place + max_pool_forward: pooled values and
/// argmax, the same bits.
template <kernels::window_geometry G, kernels::window_geometry PG, std::size_t F, class Act>
void
check_pooled_in_tiles(std::size_t samples, bool with_nan = false)
{
    STATIC_REQUIRE(kernels::pools_in_tiles<G, PG, F>);
    constexpr std::size_t P = G.positions(), out = PG.positions() * F;
    auto x = input_with_ties(samples * G.in_size(), 21);
    if (with_nan)
        x[G.in_size() / 2] = std::numeric_limits<float>::quiet_NaN();
    const auto w = random_vector(G.patch() * F, 22);
    auto b = random_vector(F, 23);
    b[0] = 0.0f;   // filter 0 of a zero patch gives exact zeros: ties in its windows
    std::vector<float> z(P * F), want_y(samples * out), want_a(samples * out), got_y(samples * out),
        got_a(samples * out, -1.0f);
    for (std::size_t s = 0; s < samples; ++s) {
        kernels::conv_forward_in_place<G, F, Act>(x.data() + s * G.in_size(), w.data(), b.data(), z.data());
        kernels::max_pool_forward<PG>(z.data(), want_y.data() + s * out, want_a.data() + s * out);
        kernels::conv_pool_forward_in_place<G, PG, F, Act>(x.data() + s * G.in_size(), w.data(), b.data(),
                                                           got_y.data() + s * out, got_a.data() + s * out);
    }
    CHECK(same_bits(got_y, want_y));
    CHECK(same_bits(got_a, want_a));
}

/// max_pool_backward_through against activation_backward + column_sums + max_pool_backward.
template <kernels::window_geometry PG, class Act>
void
check_pool_backward_through(bool accumulate)
{
    STATIC_REQUIRE(kernels::pool_backward_through_act<PG, Act>);
    constexpr std::size_t C = PG.channels, Q = PG.positions();
    const auto z = input_with_ties(PG.in_size(), 31);
    std::vector<float> y(Q * C), argmax(Q * C);
    kernels::max_pool_forward<PG>(z.data(), y.data(), argmax.data());
    if constexpr (std::is_same_v<Act, Relu>)
        for (float& v : y)
            v = v > 0.0f ? v : 0.0f;
    const auto dy = random_vector(Q * C, 32);
    const auto db0 = random_vector(C, 33);
    std::vector<float> g = dy, want_dx(PG.in_size()), want_db = db0;
    kernels::activation_backward<Act, C>(y.data(), g.data(), g.data(), Q);
    tpudsl::detail::column_sums<C>(g.data(), want_db.data(), Q, accumulate);
    kernels::max_pool_backward<PG>(g.data(), argmax.data(), want_dx.data());
    std::vector<float> got_dx(PG.in_size(), 7.0f), got_db = db0;   // every element of dx is written
    kernels::max_pool_backward_through<PG, Act>(y.data(), dy.data(), argmax.data(), got_dx.data(), got_db.data(),
                                                accumulate);
    CHECK(same_bits(got_dx, want_dx));
    CHECK(same_bits(got_db, want_db));
}

/// conv_pool_kernel_gradient (dZ a band of pooling windows at a time) against max_pool_backward_through
/// writing the whole dZ and conv_kernel_gradient_in_place reading it: dW and db the same bits, over
/// `samples` samples (written by the first, added to after), both starting from the same garbage.
template <kernels::window_geometry G, kernels::window_geometry PG, std::size_t F, class Act>
void
check_kernel_gradient_in_bands(std::size_t samples)
{
    STATIC_REQUIRE(kernels::pool_gradient_in_bands<G, PG, F, Act>);
    constexpr std::size_t P = G.positions(), K = G.patch(), out = PG.positions() * F;
    const auto x = input_with_ties(samples * G.in_size(), 61);
    const auto w = random_vector(K * F, 62);
    const auto b = random_vector(F, 63);
    const auto dy = random_vector(samples * out, 64);
    std::vector<float> z(P * F), y(samples * out), argmax(samples * out);
    for (std::size_t s = 0; s < samples; ++s) {
        kernels::conv_forward_in_place<G, F, Act>(x.data() + s * G.in_size(), w.data(), b.data(), z.data());
        kernels::max_pool_forward<PG>(z.data(), y.data() + s * out, argmax.data() + s * out);
    }
    std::vector<float> dz(P * F), want_dw = random_vector(K * F, 65), want_db = random_vector(F, 66);
    std::vector<float> got_dw = want_dw, got_db = want_db;
    // The band buffer exactly one band long, garbage before each sample: every value read is written first.
    std::vector<float> band(PG.k_h * G.out_w * F);
    for (std::size_t s = 0; s < samples; ++s) {
        kernels::max_pool_backward_through<PG, Act>(y.data() + s * out, dy.data() + s * out,
                                                    argmax.data() + s * out, dz.data(), want_db.data(), s > 0);
        kernels::conv_kernel_gradient_in_place<G, F>(x.data() + s * G.in_size(), dz.data(), want_dw.data(), s > 0);
        std::fill(band.begin(), band.end(), std::numeric_limits<float>::quiet_NaN());
        kernels::conv_pool_kernel_gradient<G, PG, F, Act>(x.data() + s * G.in_size(), y.data() + s * out,
                                                          dy.data() + s * out, argmax.data() + s * out, band.data(),
                                                          got_dw.data(), got_db.data(), s > 0);
    }
    CHECK(same_bits(got_dw, want_dw));
    CHECK(same_bits(got_db, want_db));
}

/// col2im against the plain loop (clear dx, add each window's row in window order), bit for bit;
/// dcols holds zeros of both signs.
template <kernels::window_geometry G>
void
check_col2im_bits()
{
    constexpr std::size_t P = G.positions(), K = G.patch();
    auto dcols = random_vector(P * K, 41);
    for (std::size_t i = 0; i < dcols.size(); i += 5)
        dcols[i] = i % 10 == 0 ? -0.0f : 0.0f;
    std::vector<float> want(G.in_size(), 0.0f);
    for (std::size_t p = 0; p < P; ++p)
        for (std::size_t k = 0; k < K; ++k)
            want[p * G.s_w * G.channels + k] += dcols[p * K + k];
    std::vector<float> got(G.in_size(), 3.0f);
    kernels::col2im<G>(dcols.data(), got.data());
    CHECK(same_bits(got, want));
}

/// conv_input_gradient_in_place (dZ in its zero frame, the flipped kernel) against the definition of
/// the input gradient, in double: dX(h, t, c) = sum over windows (oh, ow) and taps (i, j) with
/// oh + i - pad_top = h, ow + j - pad_left = t of dZ(oh, ow, .) . W((i k_w + j) C + c, .). The frame is
/// zeroed and dZ copied into it (frame_dz), as conv_pool_pair and conv_core do; a 1-D geometry's frame
/// is one row.
template <kernels::window_geometry G, std::size_t F>
void
check_input_gradient_as_conv()
{
    static_assert(kernels::input_gradient_as_conv<G>);
    constexpr std::size_t C = G.channels, KH = G.k_h, KW = G.k_w;
    INFO("in " << G.in_h << " x " << G.in_w << " C=" << C << " window " << KH << " x " << KW << " F=" << F);
    const auto w = random_vector(G.patch() * F, 51);
    const auto dz = random_vector(G.positions() * F, 52);
    std::vector<double> want(G.in_size(), 0.0), scale(G.in_size(), 0.0);
    for (std::size_t oh = 0; oh < G.out_h; ++oh)
        for (std::size_t ow = 0; ow < G.out_w; ++ow)
            for (std::size_t i = 0; i < KH; ++i)
                for (std::size_t j = 0; j < KW; ++j)
                    for (std::size_t c = 0; c < C; ++c)
                        for (std::size_t f = 0; f < F; ++f) {
                            const std::size_t h = oh + i - G.pad_top, t = ow + j - G.pad_left;   // wraps when < 0
                            if (oh + i < G.pad_top || ow + j < G.pad_left || h >= G.in_h || t >= G.in_w)
                                continue;   // a tap on the padding
                            const double term = double(dz[(oh * G.out_w + ow) * F + f]) * w[((i * KW + j) * C + c) * F + f];
                            const std::size_t at = (h * G.in_w + t) * C + c;
                            want[at] += term;
                            scale[at] += std::abs(term);
                        }
    std::vector<float> frame(kernels::dz_frame_size<G, F>, 0.0f);
    kernels::frame_dz<G, F>(dz.data(), frame.data());
    std::vector<float> wf(G.patch() * F), got(G.in_size(), 7.0f);
    kernels::flip_kernel<G, F>(w.data(), wf.data());
    kernels::conv_input_gradient_in_place<G, F>(frame.data(), wf.data(), got.data());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("dx element " << i);
        CHECK(std::abs(got[i] - want[i]) <= 1e-5 * scale[i] + 1e-6);
    }
    // Its order: each element one chain over a window row's taps and filters, the window rows added in
    // order; here one strided GEMM per output row and window row, C carried from one to the next.
    constexpr std::size_t FW = G.out_w + 2 * (KW - 1), R = KW * F;
    const float* at = frame.data() + (G.pad_top * FW + G.pad_left) * F;   // input position (0, 0)'s window
    std::vector<float> by_rows(G.in_size(), 7.0f);
    for (std::size_t h = 0; h < G.in_h; ++h)
        for (std::size_t i = 0; i < KH; ++i)
            kernels::detail::blocked<C>(G.in_w, R, at + (h + i) * FW * F, F, 1, wf.data() + i * R * C,
                                        by_rows.data() + h * G.in_w * C, i > 0);
    CHECK(same_bits(got, by_rows));
    // The flipped kernel from the thread's buffer is the same matrix.
    const float* scratch = kernels::flipped_kernel_scratch<G, F>(w.data());
    CHECK(std::equal(wf.begin(), wf.end(), scratch));
}

} // namespace

TEST_CASE("a stride-1 convolution's input gradient is the convolution of the zero-framed dZ with the flipped kernel",
          "[kernels]")
{
    using kernels::window_geometry;
    // The Reuters model's two convolutions (7 channels: a partial vector; 64 channels from 3 x 32),
    // a window of 2 over 3 channels and 5 filters, a window of 9 over one channel, and a window of 1.
    check_input_gradient_as_conv<window_geometry{1, 300, 7, 1, 5, 1, 1, 1, 296, 0, 0}, 64>();
    check_input_gradient_as_conv<window_geometry{1, 148, 64, 1, 3, 1, 1, 1, 146, 0, 0}, 32>();
    check_input_gradient_as_conv<window_geometry{1, 12, 3, 1, 2, 1, 1, 1, 11, 0, 0}, 5>();
    check_input_gradient_as_conv<window_geometry{1, 40, 1, 1, 9, 1, 1, 1, 32, 0, 0}, 4>();
    check_input_gradient_as_conv<window_geometry{1, 20, 17, 1, 1, 1, 1, 1, 20, 0, 0}, 3>();
    // By positions (kernels::input_gradient_by_positions) where the channels fill under 80% of one
    // vector: the Reuters model's (above: 7 channels, 300 positions); a last tile narrower by one
    // vector and by two (AVX-512: 4 vectors to a tile of 5 channels, 77 and 30 positions); 12, 6 and
    // 3 channels (the widest that go by positions with AVX-512, AVX2 and SSE2); Same paddings on a
    // narrow input, one whose frame reaches past the windows by more than a vector (a right padding
    // of 6).
    STATIC_REQUIRE(kernels::input_gradient_by_positions<window_geometry{1, 300, 7, 1, 5, 1, 1, 1, 296, 0, 0}> ==
                   (tpudsl::detail::simd::vfloat::size == 16));
    STATIC_REQUIRE_FALSE(kernels::input_gradient_by_positions<window_geometry{1, 20, 17, 1, 1, 1, 1, 1, 20, 0, 0}>);
    check_input_gradient_as_conv<window_geometry{1, 77, 5, 1, 4, 1, 1, 1, 74, 0, 0}, 24>();
    check_input_gradient_as_conv<window_geometry{1, 30, 5, 1, 3, 1, 1, 1, 28, 0, 0}, 7>();
    check_input_gradient_as_conv<window_geometry{1, 96, 12, 1, 3, 1, 1, 1, 94, 0, 0}, 16>();
    check_input_gradient_as_conv<window_geometry{1, 53, 6, 1, 7, 1, 1, 1, 47, 0, 0}, 9>();
    check_input_gradient_as_conv<window_geometry{1, 41, 3, 1, 2, 1, 1, 1, 40, 0, 0}, 11>();
    check_input_gradient_as_conv<window_geometry{1, 37, 5, 1, 3, 1, 1, 1, 37, 0, 1}, 20>();
    check_input_gradient_as_conv<window_geometry{1, 9, 2, 1, 5, 1, 1, 1, 9, 0, 2}, 3>();
    check_input_gradient_as_conv<window_geometry{1, 32, 2, 1, 12, 1, 1, 1, 32, 0, 5}, 4>();
    // 2-D windows read by rows: the CIFAR-10 model's second and fourth convolutions, a 2 x 3 window.
    check_input_gradient_as_conv<window_geometry{32, 32, 32, 3, 3, 1, 1, 30, 30, 0, 0}, 32>();
    check_input_gradient_as_conv<window_geometry{15, 15, 64, 3, 3, 1, 1, 13, 13, 0, 0}, 64>();
    check_input_gradient_as_conv<window_geometry{9, 10, 12, 2, 3, 1, 1, 8, 8, 0, 0}, 20>();
    // Window runs (kernels::detail::window_runs_gemm) where Wf's rows are at most four column panels
    // wide (32 channels with SSE2's 4 lanes, 64 with AVX2's 8, 256 with AVX-512's 16), one GEMM per
    // window row beyond: 320 channels on every instruction set.
    STATIC_REQUIRE(kernels::detail::runs_read_in_place<32>);
    STATIC_REQUIRE_FALSE(kernels::detail::runs_read_in_place<320>);
    check_input_gradient_as_conv<window_geometry{6, 7, 320, 3, 2, 1, 1, 4, 6, 0, 0}, 8>();
    // Same padding, stride 1: the CIFAR-10 model's third convolution (its zero frame read by window
    // rows), a 5 x 5 window (two rows and columns of padding each side), a 1-D one, and a 2 x 2
    // window (its padding after only: none before).
    check_input_gradient_as_conv<window_geometry{15, 15, 32, 3, 3, 1, 1, 15, 15, 1, 1}, 64>();
    check_input_gradient_as_conv<window_geometry{7, 9, 16, 5, 5, 1, 1, 7, 9, 2, 2}, 12>();
    check_input_gradient_as_conv<window_geometry{1, 20, 17, 1, 3, 1, 1, 1, 20, 0, 1}, 8>();
    check_input_gradient_as_conv<window_geometry{6, 5, 24, 2, 2, 1, 1, 6, 5, 0, 0}, 8>();
    // A stride of 2, Same or not, is no convolution of dZ.
    STATIC_REQUIRE_FALSE(kernels::input_gradient_as_conv<window_geometry{9, 8, 6, 3, 3, 2, 2, 5, 4, 1, 0}>);
    // Strides other than 1, and thin 2-D patches (the direct path), keep dcols and col2im.
    STATIC_REQUIRE_FALSE(kernels::input_gradient_as_conv<window_geometry{1, 18, 5, 1, 3, 1, 2, 1, 8, 0, 0}>);
    STATIC_REQUIRE_FALSE(kernels::input_gradient_as_conv<window_geometry{28, 28, 1, 3, 3, 1, 1, 26, 26, 0, 0}>);
    STATIC_REQUIRE_FALSE(kernels::input_gradient_as_conv<window_geometry{11, 12, 40, 3, 5, 2, 2, 5, 4, 0, 0}>);
}

TEST_CASE("a direct convolution pools its windows in registers with the separate passes' bits", "[kernels]")
{
    using kernels::window_geometry;
    // The Fashion model's pair; then outputs that leave a row and a column to no window (27 x 27 under
    // 2 x 2), 3 x 3 windows over 10 filters (a partial vector), a non-square window with strides, and
    // a NaN input (the maximum skips it unless it comes first, as in max_pool_forward).
    check_pooled_in_tiles<window_geometry{28, 28, 1, 3, 3, 1, 1, 26, 26, 0, 0},
                          window_geometry{26, 26, 64, 2, 2, 2, 2, 13, 13, 0, 0}, 64, Relu>(3);
    check_pooled_in_tiles<window_geometry{28, 28, 1, 3, 3, 1, 1, 26, 26, 0, 0},
                          window_geometry{26, 26, 64, 2, 2, 2, 2, 13, 13, 0, 0}, 64, Linear>(2);
    check_pooled_in_tiles<window_geometry{29, 29, 2, 3, 3, 1, 1, 27, 27, 0, 0},
                          window_geometry{27, 27, 24, 2, 2, 2, 2, 13, 13, 0, 0}, 24, Relu>(2);
    check_pooled_in_tiles<window_geometry{14, 14, 1, 3, 3, 1, 1, 12, 12, 0, 0},
                          window_geometry{12, 12, 10, 3, 3, 3, 3, 4, 4, 0, 0}, 10, Relu>(2);
    check_pooled_in_tiles<window_geometry{13, 18, 3, 2, 3, 2, 1, 6, 16, 0, 0},
                          window_geometry{6, 16, 16, 1, 3, 1, 3, 6, 5, 0, 0}, 16, Linear>(2);
    check_pooled_in_tiles<window_geometry{28, 28, 1, 3, 3, 1, 1, 26, 26, 0, 0},
                          window_geometry{26, 26, 64, 2, 2, 2, 2, 13, 13, 0, 0}, 64, Relu>(1, true);
    // Windows that overlap, or a pooling with padding, keep the separate passes.
    STATIC_REQUIRE_FALSE(kernels::pools_in_tiles<window_geometry{28, 28, 1, 3, 3, 1, 1, 26, 26, 0, 0},
                                                 window_geometry{26, 26, 64, 3, 3, 2, 2, 12, 12, 0, 0}, 64>);
    STATIC_REQUIRE_FALSE(kernels::pools_in_tiles<window_geometry{28, 28, 1, 3, 3, 1, 1, 26, 26, 0, 0},
                                                 window_geometry{26, 26, 64, 3, 3, 3, 3, 9, 9, 1, 1}, 64>);
}

TEST_CASE("a pooling's backward through its activation and bias sums in one pass gives the passes' bits",
          "[kernels]")
{
    using kernels::window_geometry;
    // The Fashion model's pooling; the Reuters model's (1-D, an odd length leaves the last row to no
    // window); 3 x 3 windows that leave two columns out; Linear; db written and added to.
    check_pool_backward_through<window_geometry{26, 26, 64, 2, 2, 2, 2, 13, 13, 0, 0}, Relu>(false);
    check_pool_backward_through<window_geometry{26, 26, 64, 2, 2, 2, 2, 13, 13, 0, 0}, Relu>(true);
    check_pool_backward_through<window_geometry{1, 297, 64, 1, 2, 1, 2, 1, 148, 0, 0}, Relu>(true);
    check_pool_backward_through<window_geometry{10, 11, 16, 3, 3, 3, 3, 3, 3, 0, 0}, Relu>(false);
    check_pool_backward_through<window_geometry{10, 11, 16, 3, 3, 3, 3, 3, 3, 0, 0}, Linear>(true);
}

TEST_CASE("a first layer's convolution and pooling take the kernel gradient one band of windows at a time, "
          "with the whole dZ's bits",
          "[kernels]")
{
    using kernels::window_geometry;
    // The Fashion model's pair (Relu, Linear); outputs that leave a row and a column to no window (27 x 27
    // under 2 x 2: the last row's dZ is zero and still added); 3 x 3 windows; a strided, non-square patch.
    check_kernel_gradient_in_bands<window_geometry{28, 28, 1, 3, 3, 1, 1, 26, 26, 0, 0},
                                   window_geometry{26, 26, 64, 2, 2, 2, 2, 13, 13, 0, 0}, 64, Relu>(3);
    check_kernel_gradient_in_bands<window_geometry{28, 28, 1, 3, 3, 1, 1, 26, 26, 0, 0},
                                   window_geometry{26, 26, 64, 2, 2, 2, 2, 13, 13, 0, 0}, 64, Linear>(2);
    check_kernel_gradient_in_bands<window_geometry{29, 29, 2, 3, 3, 1, 1, 27, 27, 0, 0},
                                   window_geometry{27, 27, 32, 2, 2, 2, 2, 13, 13, 0, 0}, 32, Relu>(2);
    check_kernel_gradient_in_bands<window_geometry{14, 14, 1, 3, 3, 1, 1, 12, 12, 0, 0},
                                   window_geometry{12, 12, 16, 3, 3, 3, 3, 4, 4, 0, 0}, 16, Relu>(2);
    check_kernel_gradient_in_bands<window_geometry{13, 18, 3, 2, 3, 2, 1, 6, 16, 0, 0},
                                   window_geometry{6, 16, 16, 1, 3, 1, 3, 6, 5, 0, 0}, 16, Linear>(2);
    // A patch too wide for the direct tiles keeps the whole dZ.
    STATIC_REQUIRE_FALSE(kernels::pool_gradient_in_bands<window_geometry{30, 30, 32, 3, 3, 1, 1, 28, 28, 0, 0},
                                                         window_geometry{28, 28, 32, 2, 2, 2, 2, 14, 14, 0, 0}, 32,
                                                         Relu>);
}

TEST_CASE("col2im over 1-D windows sums each element in registers with the plain loop's bits", "[kernels]")
{
    using kernels::window_geometry;
    // The Reuters model's first convolution (7 channels: windows at every alignment), a stride of 2
    // that leaves the last element to no window, windows that touch without overlapping, one channel,
    // and 64 channels (windows aligned to the vectors: the plain path).
    check_col2im_bits<window_geometry{1, 300, 7, 1, 5, 1, 1, 1, 296, 0, 0}>();
    check_col2im_bits<window_geometry{1, 18, 5, 1, 3, 1, 2, 1, 8, 0, 0}>();
    check_col2im_bits<window_geometry{1, 12, 3, 1, 2, 1, 2, 1, 6, 0, 0}>();
    check_col2im_bits<window_geometry{1, 40, 1, 1, 9, 1, 1, 1, 32, 0, 0}>();
    check_col2im_bits<window_geometry{1, 148, 64, 1, 3, 1, 1, 1, 146, 0, 0}>();
}

TEST_CASE("convolutions read in place give im2col's bits", "[kernels]")
{
    // The Fashion model's convolution (direct), the Reuters model's two (strided, one over two blocks
    // of the GEMM's K when filters are few), and a strided thin 2-D patch with partial vectors.
    check_in_place_bits<kernels::window_geometry{28, 28, 1, 3, 3, 1, 1, 26, 26, 0, 0}, 64>(3);
    check_in_place_bits<kernels::window_geometry{1, 300, 7, 1, 5, 1, 1, 1, 296, 0, 0}, 64>(2);
    check_in_place_bits<kernels::window_geometry{1, 148, 64, 1, 3, 1, 1, 1, 146, 0, 0}, 32>(2);
    check_in_place_bits<kernels::window_geometry{9, 8, 2, 3, 2, 2, 1, 4, 7, 0, 0}, 10>(2);
    // Window rows: the CIFAR-10 model's second and fourth convolutions (the kernel gradient in groups of
    // output rows: 6 of 5 rows; 10 rows then 3), and a strided one with a patch over two blocks of the
    // GEMM's K (so im2col's GEMM splits it where the rows do not).
    check_in_place_bits<kernels::window_geometry{32, 32, 32, 3, 3, 1, 1, 30, 30, 0, 0}, 32>(2);
    check_in_place_bits<kernels::window_geometry{15, 15, 64, 3, 3, 1, 1, 13, 13, 0, 0}, 64>(2);
    check_in_place_bits<kernels::window_geometry{11, 12, 40, 3, 5, 2, 2, 5, 4, 0, 0}, 20>(2);
    // Window runs: 64 positions in tiles that run across output rows (8 x 8: 10 x 6 + 4 with 6-row
    // tiles), 20 filters (a narrower last panel); 320 filters take one GEMM per window row.
    check_in_place_bits<kernels::window_geometry{9, 10, 12, 2, 3, 1, 1, 8, 8, 0, 0}, 20>(2);
    check_in_place_bits<kernels::window_geometry{6, 7, 8, 3, 3, 1, 1, 4, 5, 0, 0}, 320>(1);
}

TEST_CASE("padded convolutions read from their zero frames give im2col's bits", "[kernels]")
{
    using kernels::window_geometry;
    // The CIFAR-10 model's first Same convolution: 3 channels (the frame's patch of 27 takes the direct
    // tiles); 24 channels (window rows: with 16 or 32, as CIFAR-10's third, it would run as Winograd);
    // Same with a stride of 2 (one row and column of padding before, the last window passing the
    // input's end); a Same 1-D convolution (the strided path).
    check_framed_bits<window_geometry{32, 32, 3, 3, 3, 1, 1, 32, 32, 1, 1}, 32>(2);
    check_framed_bits<window_geometry{15, 15, 24, 3, 3, 1, 1, 15, 15, 1, 1}, 64>(2);
    STATIC_REQUIRE(!tpudsl::detail::conv_core<window_geometry{15, 15, 24, 3, 3, 1, 1, 15, 15, 1, 1}, 64, Relu>::winograd);
    check_framed_bits<window_geometry{9, 8, 6, 3, 3, 2, 2, 5, 4, 1, 0}, 10>(3);
    check_framed_bits<window_geometry{1, 20, 5, 1, 3, 1, 1, 1, 20, 0, 1}, 12>(2);
    // A stride wider than the window along the columns (the frame crops the input's last column),
    // and a window larger than the input (two rows and columns of zeros on every side).
    check_framed_bits<window_geometry{4, 9, 2, 3, 2, 1, 3, 4, 3, 1, 0}, 8>(2);
    check_framed_bits<window_geometry{2, 3, 2, 5, 5, 1, 1, 2, 3, 2, 2}, 8>(2);
    // A Same window of 1 x 1 pads nothing: read in place, not framed.
    STATIC_REQUIRE(!tpudsl::detail::conv_core<window_geometry{6, 6, 4, 1, 1, 1, 1, 6, 6, 0, 0}, 8, Relu>::framed);
}

TEST_CASE("a padded convolution fused with its pooling reads its zero frames with im2col's bits", "[kernels]")
{
    using kernels::window_geometry;
    // Window rows (a patch of 72), a thin patch (the direct tiles, pooling in registers; without an
    // input gradient the kernel gradient in bands), and a 1-D Same convolution (the strided path).
    // Each with and without an input gradient (a first layer).
    for (const bool with_dx : {true, false}) {
        check_framed_pair_bits<window_geometry{12, 12, 8, 3, 3, 1, 1, 12, 12, 1, 1},
                               window_geometry{12, 12, 16, 2, 2, 2, 2, 6, 6, 0, 0}, 16>(3, with_dx);
        check_framed_pair_bits<window_geometry{10, 10, 1, 3, 3, 1, 1, 10, 10, 1, 1},
                               window_geometry{10, 10, 16, 2, 2, 2, 2, 5, 5, 0, 0}, 16>(3, with_dx);
        check_framed_pair_bits<window_geometry{1, 20, 4, 1, 3, 1, 1, 1, 20, 0, 1},
                               window_geometry{1, 20, 16, 1, 2, 1, 2, 1, 10, 0, 0}, 16>(2, with_dx);
        // Stride 2, the padding after only, and a pooling that leaves the last row and column of the
        // convolution's output to no window (in registers, and in bands without an input gradient).
        check_framed_pair_bits<window_geometry{10, 10, 1, 3, 3, 2, 2, 5, 5, 0, 0},
                               window_geometry{5, 5, 16, 2, 2, 2, 2, 2, 2, 0, 0}, 16>(3, with_dx);
    }
    using thin = tpudsl::detail::conv_pool_pair<
        tpudsl::detail::conv_core<window_geometry{10, 10, 1, 3, 3, 1, 1, 10, 10, 1, 1}, 16, Relu>,
        tpudsl::detail::pooling_core<window_geometry{10, 10, 16, 2, 2, 2, 2, 5, 5, 0, 0}, true>>;
    STATIC_REQUIRE(thin::conv_type::framed);
    STATIC_REQUIRE(thin::pooled_in_tiles);
    STATIC_REQUIRE(thin::in_bands);
}

TEST_CASE("a fused graph's workspace plan, read as data", "[kernels]")
{
    using seeds::FashionCnn;
    using G = ops::graph<FashionCnn>;
    // Per sample: the pooled block (the absorbed Relu shares it), the Dense and Softmax outputs, the
    // argmax, the softmax logits, two deltas as wide as the pooled block (the convolution's own
    // gradient never reaches them). Once: one sample's convolution output; no windows (read in place,
    // and the first layer needs no input gradient).
    STATIC_REQUIRE(G::plan.per_sample == 4 * aligned_floats(13 * 13 * 64) + 3 * aligned_floats(10));
    STATIC_REQUIRE(G::plan.one_sample == aligned_floats(26 * 26 * 64));
    // The layers as the plan runs them: the convolution with its pooling, the Relu absorbed (its output
    // is the pooling's block), the Flatten an alias, the Dense's kernel gradient left to the
    // all-reduce and its input gradient to the pair.
    using ops::node_kind;
    STATIC_REQUIRE(G::plan.nodes[0].kind == node_kind::fused_conv);
    STATIC_REQUIRE(G::plan.nodes[1].kind == node_kind::fused_pool);
    STATIC_REQUIRE(G::plan.nodes[2].kind == node_kind::alias && G::plan.nodes[2].absorbed);
    STATIC_REQUIRE(G::plan.nodes[3].kind == node_kind::alias && !G::plan.nodes[3].absorbed);
    STATIC_REQUIRE(G::plan.nodes[4].deferred_kernel && G::plan.nodes[4].dx_left_to_pair);
    STATIC_REQUIRE(G::plan.nodes[0].dense_above == 4);
    STATIC_REQUIRE(G::plan.nodes[1].activation == G::plan.nodes[3].activation);
    STATIC_REQUIRE(G::plan.nodes[0].activation_one_sample && !G::plan.nodes[1].activation_one_sample);
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
