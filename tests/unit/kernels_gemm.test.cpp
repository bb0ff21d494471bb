// Every kernel against its plain scalar reference (double accumulation), within 1e-5 relative to the
// magnitude of the sum it computes (sum_k |a_ik b_kj|). GEMMs here; convolutions and pooling in
// kernels_conv.test.cpp.
#include "kernel_checks.hpp"

#include <tpudsl/detail/simd.hpp>
#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/kernels/reference/scalar_gemm.hpp>
#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

using namespace tpudsl;
using kernel_checks::check_close;
using kernel_checks::random_vector;

namespace {

template <std::size_t M, std::size_t K, std::size_t N>
void
check_gemm()
{
    INFO("M=" << M << " K=" << K << " N=" << N << " simd=" << detail::simd::arch_name);
    const auto a = random_vector(M * K, 1), b = random_vector(K * N, 2), c0 = random_vector(M * N, 3);
    std::vector<double> scale(M * N);

    // nn, overwrite and accumulate
    std::vector<float> got(M * N), want(M * N);
    kernels::gemm_nn<K, N>(M, a.data(), b.data(), got.data());
    kernels::reference::gemm(M, N, K, a.data(), false, b.data(), false, want.data(), false, scale.data());
    check_close(got, want, scale);
    got = c0;
    want = c0;
    kernels::gemm_nn<K, N>(M, a.data(), b.data(), got.data(), true);
    kernels::reference::gemm(M, N, K, a.data(), false, b.data(), false, want.data(), true, scale.data());
    check_close(got, want, scale);

    // tn: A stored (K, M)
    const auto at = random_vector(K * M, 4);
    got = c0;
    want = c0;
    kernels::gemm_tn<M, N>(K, at.data(), b.data(), got.data());
    kernels::reference::gemm(M, N, K, at.data(), true, b.data(), false, want.data(), true, scale.data());
    check_close(got, want, scale);

    // nt: B stored (N, K)
    const auto bt = random_vector(N * K, 5);
    kernels::gemm_nt<K, N>(M, a.data(), bt.data(), got.data());
    kernels::reference::gemm(M, N, K, a.data(), false, bt.data(), true, want.data(), false, scale.data());
    check_close(got, want, scale);

    // nt with the caller's B^T (K, N): b itself
    std::fill(got.begin(), got.end(), 0.0f);
    kernels::gemm_nt<K, N>(M, a.data(), nullptr, got.data(), b.data());
    kernels::reference::gemm(M, N, K, a.data(), false, b.data(), false, want.data(), false, scale.data());
    check_close(got, want, scale);

    // The fused bias (+ Relu) epilogue: nn, and nt as dot products along K (a narrow Dense's forward
    // from W^T). `run(Act)` computes got from a and B (b, or bt when `b_transposed`).
    const auto bias = random_vector(N, 6);
    auto check_bias = [&](bool b_transposed, auto run) {
        const auto& bb = b_transposed ? bt : b;
        kernels::reference::gemm(M, N, K, a.data(), false, bb.data(), b_transposed, want.data(), false, scale.data());
        for (std::size_t i = 0; i < M; ++i)
            for (std::size_t j = 0; j < N; ++j) {
                want[i * N + j] += bias[j];
                scale[i * N + j] += std::abs(bias[j]);
            }
        run(Linear{});
        check_close(got, want, scale);
        for (auto& w : want)
            w = std::max(w, 0.0f);
        run(Relu{});
        check_close(got, want, scale);
    };
    check_bias(false, [&]<class Act>(Act) {
        kernels::gemm_nn_bias<K, N, Act>(M, a.data(), b.data(), bias.data(), got.data());
    });
    check_bias(true, [&]<class Act>(Act) {
        kernels::gemm_nt_bias<K, N, Act>(M, a.data(), bt.data(), bias.data(), got.data());
    });
}

} // namespace

TEST_CASE("gemm kernels equal the scalar reference", "[kernels]")
{
    check_gemm<1, 1, 1>();
    check_gemm<5, 3, 7>();
    check_gemm<7, 17, 33>();
    check_gemm<13, 64, 100>();
    check_gemm<9, 9, 64>();        // the Fashion model's convolution: patch 9, 64 filters
    check_gemm<4, 2336, 46>();     // the Reuters model's Dense
    check_gemm<3, 300, 512>();
    // Every path of the blocking: packed panels (M >= 64), several blocks of K, a remainder panel of
    // 3 vectors with a partial last one (N = 100), 3-vector panels (48), 2-vector panels with 14-row
    // tiles and the 8/4/2/1 row remainders (M = 13, 67), under 8-row tiles a remainder tile of 1-7
    // rows (M = 13, 67, 65, 70, 35, 26), a single partial vector (N = 10).
    check_gemm<70, 300, 100>();
    check_gemm<130, 260, 48>();
    check_gemm<67, 513, 32>();
    check_gemm<13, 129, 32>();
    check_gemm<64, 9, 10>();
    check_gemm<100, 40, 46>();
    check_gemm<65, 1000, 7>();
    // gemm_tn reading A^T in place under packed panels (blocked_tn_in_place): M a multiple of 128, K in
    // four balanced blocks of 150 (and above: 67 x 513 x 32, 130 x 260 x 48, with row remainders).
    check_gemm<384, 600, 64>();
    // ... and from 24 rows up: the Reuters model's first Conv1D (patch 35; 5 rows left under 6-row
    // tiles), 26 rows (2 left), 2 blocks of K.
    check_gemm<35, 300, 64>();
    check_gemm<26, 260, 32>();
    // gemm_nt_bias (dot products along K): the Fashion model's Dense<10> (K in passes, columns in
    // uneven groups), K ending in a partial vector, one column, a row remainder of every height.
    check_gemm<16, 10816, 10>();
    check_gemm<17, 1003, 11>();
    check_gemm<7, 515, 1>();
    check_gemm<5, 2000, 3>();
    // gemm_tn with a wide C packs both operands (blocked_tn): two blocks of K, two blocks of rows, the
    // second 11 rows (a tile, then the 4 and 1 remainders; 8 too where tiles are taller), and with
    // AVX-512 a one-vector remainder panel (N = 400: 6 panels of 4 vectors + 1).
    static_assert(kernels::detail::tn_packs_both<400>);
    check_gemm<155, 300, 400>();
    // A 16-sample micro-batch of the MLP's Dense<512> (B read in place), and a short one beside it.
    check_gemm<16, 784, 512>();
    check_gemm<13, 70, 256>();
}

TEST_CASE("gemm row tiles: a row's bits do not depend on the rows beside it, in full tiles or in a remainder's "
          "short tile",
          "[kernels]")
{
    // The rows left under the last full tile run as one tile of a few fixed heights, its extra rows
    // repeating the last real one (row_tiles): each row of C must still be the row computed alone (a
    // one-row GEMM, itself such a tile), overwritten, accumulated and through the bias epilogue, with B
    // read in place (under 64 rows) and packed. Widths of one to seven vectors: every tile shape of the
    // plan (1, 2, 3 and 4 vectors with AVX-512; 1 and 2 with 16 registers).
    auto check = []<std::size_t K, std::size_t N>(std::integral_constant<std::size_t, K>,
                                                  std::integral_constant<std::size_t, N>) {
        const auto b = random_vector(K * N, 7), bias = random_vector(N, 8);
        std::vector<std::size_t> heights;
        for (std::size_t m = 1; m <= 31; ++m)
            heights.push_back(m);
        for (std::size_t m : {64, 69, 70, 77})
            heights.push_back(m);
        for (const std::size_t m : heights) {
            INFO("M=" << m << " K=" << K << " N=" << N << " simd=" << detail::simd::arch_name);
            const auto a = random_vector(m * K, 9), c0 = random_vector(m * N, 10);
            std::vector<float> nn(m * N), acc = c0, relu(m * N);
            kernels::gemm_nn<K, N>(m, a.data(), b.data(), nn.data());
            kernels::gemm_nn<K, N>(m, a.data(), b.data(), acc.data(), true);
            kernels::gemm_nn_bias<K, N, Relu>(m, a.data(), b.data(), bias.data(), relu.data());
            for (std::size_t i = 0; i < m; ++i) {
                INFO("row " << i);
                std::vector<float> one(N), one_acc(c0.begin() + i * N, c0.begin() + (i + 1) * N), one_relu(N);
                kernels::gemm_nn<K, N>(1, a.data() + i * K, b.data(), one.data());
                kernels::gemm_nn<K, N>(1, a.data() + i * K, b.data(), one_acc.data(), true);
                kernels::gemm_nn_bias<K, N, Relu>(1, a.data() + i * K, b.data(), bias.data(), one_relu.data());
                CHECK(std::equal(one.begin(), one.end(), nn.begin() + i * N));
                CHECK(std::equal(one_acc.begin(), one_acc.end(), acc.begin() + i * N));
                CHECK(std::equal(one_relu.begin(), one_relu.end(), relu.begin() + i * N));
            }
        }
    };
    using std::integral_constant;
    check(integral_constant<std::size_t, 300>{}, integral_constant<std::size_t, 7>{});
    check(integral_constant<std::size_t, 300>{}, integral_constant<std::size_t, 32>{});
    check(integral_constant<std::size_t, 300>{}, integral_constant<std::size_t, 46>{});
    check(integral_constant<std::size_t, 70>{}, integral_constant<std::size_t, 64>{});
    check(integral_constant<std::size_t, 70>{}, integral_constant<std::size_t, 100>{});
}

TEST_CASE("gemm_tn_micro_batches: one chain over every part's rows in order, the bits of gemm_tn on them stacked",
          "[kernels]")
{
    auto check = []<std::size_t M, std::size_t N>(std::integral_constant<std::size_t, M>,
                                                  std::integral_constant<std::size_t, N>,
                                                  std::vector<std::size_t> rows) {
        INFO("M=" << M << " N=" << N);
        std::vector<std::vector<float>> a, b;
        std::vector<float> a_all, b_all;   // the parts' rows one after another
        for (std::size_t p = 0; p < rows.size(); ++p) {
            a.push_back(random_vector(rows[p] * M, 20 + p));
            b.push_back(random_vector(rows[p] * N, 40 + p));
            a_all.insert(a_all.end(), a[p].begin(), a[p].end());
            b_all.insert(b_all.end(), b[p].begin(), b[p].end());
        }
        std::vector<float> want(M * N);
        kernels::gemm_tn<M, N>(a_all.size() / M, a_all.data(), b_all.data(), want.data(), false);
        std::vector<kernels::gemm_micro_batch> parts;
        for (std::size_t p = 0; p < rows.size(); ++p)
            parts.push_back({a[p].data(), b[p].data(), rows[p]});
        std::vector<float> got(M * N, 7.0f);
        kernels::gemm_tn_micro_batches<N>(M, M, parts.data(), rows.size(), got.data());
        CHECK(got == want);
        // The chain cut after any part and resumed from C (load_c): the bits of one chain (what a
        // process continuing the previous process's micro-batches computes).
        for (std::size_t cut = 0; cut <= rows.size(); ++cut) {
            INFO("cut after part " << cut);
            std::vector<float> chained(M * N, 7.0f);
            auto part = [&](std::size_t first) { return parts.data() + first; };
            kernels::gemm_tn_micro_batches<N>(M, M, part(0), cut, chained.data());
            kernels::gemm_tn_micro_batches<N>(M, M, part(cut), rows.size() - cut, chained.data(), /*load_c*/ true);
            CHECK(chained == want);
            // One row's columns [1, N - 1) resumed the same way (a range of the fused pass cut mid-row).
            if (cut > 0 && N > 2) {
                std::vector<float> row(N, 7.0f);
                kernels::gemm_tn_micro_batches_columns<N>(M - 1, 1, N - 1, M, part(0), cut, row.data());
                kernels::gemm_tn_micro_batches_columns<N>(M - 1, 1, N - 1, M, part(cut), rows.size() - cut, row.data(),
                                                          /*load_c*/ true);
                CHECK(std::equal(row.begin() + 1, row.end() - 1, want.begin() + (M - 1) * N + 1));
            }
        }
    };
    using std::integral_constant;
    // The MLP's kernels over eight micro-batches of 16 (a wide C: every part's rows of A^T packed, in
    // blocks of rows), a wide C with two blocks of rows, row remainders and a one-vector last panel, an
    // empty part; then C read in place (gemm_tn splits the reference's K = 603 into blocks: one chain
    // all the same) and remainders of every kind.
    check(integral_constant<std::size_t, 784>{}, integral_constant<std::size_t, 512>{},
          std::vector<std::size_t>(8, 16));
    check(integral_constant<std::size_t, 203>{}, integral_constant<std::size_t, 200>{},
          std::vector<std::size_t>{7, 0, 16, 3});
    // The same width under 48 rows (a thread's short range of rows in the fused pass): B in place.
    check(integral_constant<std::size_t, 20>{}, integral_constant<std::size_t, 200>{},
          std::vector<std::size_t>{7, 0, 16, 3});
    check(integral_constant<std::size_t, 512>{}, integral_constant<std::size_t, 64>{}, std::vector<std::size_t>{600, 3});
    check(integral_constant<std::size_t, 13>{}, integral_constant<std::size_t, 10>{}, std::vector<std::size_t>{5, 0, 4});
    check(integral_constant<std::size_t, 23>{}, integral_constant<std::size_t, 46>{}, std::vector<std::size_t>{1, 2, 3});
    // Narrow C, computed down its columns: the Fashion model's Dense<10> over several blocks of rows
    // (the last partial), a width under one tile of columns, and one with a remainder tile.
    check(integral_constant<std::size_t, 1100>{}, integral_constant<std::size_t, 10>{},
          std::vector<std::size_t>{16, 16, 0, 16, 7});
    check(integral_constant<std::size_t, 37>{}, integral_constant<std::size_t, 3>{}, std::vector<std::size_t>{4, 9});
    check(integral_constant<std::size_t, 70>{}, integral_constant<std::size_t, 17>{}, std::vector<std::size_t>{3, 1});
    std::vector<float> zero(6 * 5, 3.0f);   // no part has rows: C is zero
    const kernels::gemm_micro_batch empty[2] = {{nullptr, nullptr, 0}, {nullptr, nullptr, 0}};
    kernels::gemm_tn_micro_batches<5>(6, 6, empty, 2, zero.data());
    CHECK(std::all_of(zero.begin(), zero.end(), [](float v) { return v == 0.0f; }));
}

TEST_CASE("gemm_nn_rows: every block of rows the bits of gemm_nn / gemm_nn_bias on it alone", "[kernels]")
{
    auto check = []<std::size_t K, std::size_t N>(std::integral_constant<std::size_t, K>,
                                                  std::integral_constant<std::size_t, N>,
                                                  std::vector<std::size_t> rows) {
        INFO("K=" << K << " N=" << N << " blocks=" << rows.size());
        const auto b = random_vector(K * N, 60), bias = random_vector(N, 61);
        std::vector<std::vector<float>> a, want_nn, want_lin, want_relu, got_nn, got_lin, got_relu;
        for (std::size_t p = 0; p < rows.size(); ++p) {
            a.push_back(random_vector(rows[p] * K, 70 + p));
            for (auto* v : {&want_nn, &want_lin, &want_relu})
                v->emplace_back(rows[p] * N);
            for (auto* v : {&got_nn, &got_lin, &got_relu})
                v->emplace_back(rows[p] * N, 5.0f);
            kernels::gemm_nn<K, N>(rows[p], a[p].data(), b.data(), want_nn[p].data());
            kernels::gemm_nn_bias<K, N, Linear>(rows[p], a[p].data(), b.data(), bias.data(), want_lin[p].data());
            kernels::gemm_nn_bias<K, N, Relu>(rows[p], a[p].data(), b.data(), bias.data(), want_relu[p].data());
        }
        auto blocks = [&](std::vector<std::vector<float>>& c) {
            std::vector<kernels::gemm_rows> r;
            for (std::size_t p = 0; p < rows.size(); ++p)
                r.push_back({a[p].data(), c[p].data(), rows[p]});
            return r;
        };
        kernels::gemm_nn_rows<K, N>(blocks(got_nn).data(), rows.size(), b.data());
        kernels::gemm_nn_bias_rows<K, N, Linear>(blocks(got_lin).data(), rows.size(), b.data(), bias.data());
        kernels::gemm_nn_bias_rows<K, N, Relu>(blocks(got_relu).data(), rows.size(), b.data(), bias.data());
        CHECK(got_nn == want_nn);
        CHECK(got_lin == want_lin);
        CHECK(got_relu == want_relu);
    };
    using std::integral_constant;
    // The MLP's layers over eight micro-batches of 16 (packed: 128 rows; K = 784 in two blocks; tiles
    // of rows from two blocks), its input gradient, blocks too few to pack, a narrow C with a partial
    // vector, an empty block, a single block (run at its stride).
    check(integral_constant<std::size_t, 784>{}, integral_constant<std::size_t, 512>{},
          std::vector<std::size_t>(8, 16));
    check(integral_constant<std::size_t, 512>{}, integral_constant<std::size_t, 512>{},
          std::vector<std::size_t>{16, 16, 16, 15});
    check(integral_constant<std::size_t, 512>{}, integral_constant<std::size_t, 10>{},
          std::vector<std::size_t>{9, 0, 13, 7, 1});
    check(integral_constant<std::size_t, 10>{}, integral_constant<std::size_t, 512>{},
          std::vector<std::size_t>{16, 16, 16, 16, 16, 16, 16, 16});
    check(integral_constant<std::size_t, 33>{}, integral_constant<std::size_t, 46>{}, std::vector<std::size_t>{5, 2});
    check(integral_constant<std::size_t, 100>{}, integral_constant<std::size_t, 64>{}, std::vector<std::size_t>{70});
}

TEST_CASE("gemm_nt_bias_rows: an element's bits depend on its row of A and of B only", "[kernels]")
{
    auto check = []<std::size_t K, std::size_t N>(std::integral_constant<std::size_t, K>,
                                                  std::integral_constant<std::size_t, N>,
                                                  std::vector<std::size_t> rows) {
        INFO("K=" << K << " N=" << N << " blocks=" << rows.size() << " simd=" << detail::simd::arch_name);
        const auto b = random_vector(N * K, 80), bias = random_vector(N, 81);
        std::vector<std::vector<float>> a, got_lin, got_relu;
        std::vector<kernels::gemm_rows> lin, relu;
        for (std::size_t p = 0; p < rows.size(); ++p) {
            a.push_back(random_vector(rows[p] * K, 90 + p));
            got_lin.emplace_back(rows[p] * N, 5.0f);
            got_relu.emplace_back(rows[p] * N, 5.0f);
        }
        for (std::size_t p = 0; p < rows.size(); ++p) {
            lin.push_back({a[p].data(), got_lin[p].data(), rows[p]});
            relu.push_back({a[p].data(), got_relu[p].data(), rows[p]});
        }
        kernels::gemm_nt_bias_rows<K, N, Linear>(lin.data(), rows.size(), b.data(), bias.data());
        kernels::gemm_nt_bias_rows<K, N, Relu>(relu.data(), rows.size(), b.data(), bias.data());
        for (std::size_t p = 0; p < rows.size(); ++p)
            for (std::size_t r = 0; r < rows[p]; ++r) {   // each row alone: a one-row tile
                std::vector<float> one(N);
                kernels::gemm_nt_bias<K, N, Linear>(1, a[p].data() + r * K, b.data(), bias.data(), one.data());
                CHECK(std::equal(one.begin(), one.end(), got_lin[p].begin() + r * N));
                for (std::size_t j = 0; j < N; ++j) {
                    CHECK(got_relu[p][r * N + j] == std::max(one[j], 0.0f));
                    CHECK_FALSE(std::isnan(one[j]));
                }
            }
    };
    using std::integral_constant;
    // Fashion's Dense<10> over eight micro-batches of 16, the MLP's last Dense (one pass of K), an empty
    // block, a partial last vector of K.
    check(integral_constant<std::size_t, 10816>{}, integral_constant<std::size_t, 10>{},
          std::vector<std::size_t>(8, 16));
    check(integral_constant<std::size_t, 512>{}, integral_constant<std::size_t, 10>{},
          std::vector<std::size_t>{9, 0, 13, 7, 1});
    check(integral_constant<std::size_t, 301>{}, integral_constant<std::size_t, 7>{}, std::vector<std::size_t>{5, 2});

    // K = 0: C is the bias (through Relu)
    const std::vector<float> bias{-1.0f, 2.0f, 0.5f};
    std::vector<float> c(2 * 3, 9.0f);
    kernels::gemm_nt_bias<0, 3, Relu>(2, nullptr, nullptr, bias.data(), c.data());
    CHECK(c == std::vector<float>{0.0f, 2.0f, 0.5f, 0.0f, 2.0f, 0.5f});
}

TEST_CASE("transpose_strided moves every element, in and out of its register blocks", "[kernels]")
{
    // Strips of 16 columns, one of 8 and a column remainder; a row remainder under 8; leading
    // dimensions wider than the matrix (the rest of each row must stay as it was); a 512 x 512 matrix
    // (rows 2 KB apart); and shapes too small for a block.
    const auto check = [](std::size_t rows, std::size_t cols, std::size_t in_ld, std::size_t out_ld) {
        INFO(rows << " x " << cols << ", in_ld " << in_ld << ", out_ld " << out_ld);
        const auto in = random_vector(rows * in_ld, 21);
        std::vector<float> got(cols * out_ld, -9.0f), want(cols * out_ld, -9.0f);
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < cols; ++c)
                want[c * out_ld + r] = in[r * in_ld + c];
        kernels::detail::transpose_strided(in.data(), rows, cols, in_ld, got.data(), out_ld);
        CHECK(got == want);
    };
    check(37, 21, 23, 40);
    check(16, 8, 8, 16);
    check(19, 24, 30, 20);
    check(8, 40, 40, 8);
    check(45, 70, 77, 45);
    check(512, 512, 512, 512);
    check(7, 5, 5, 7);
    check(1, 30, 30, 1);
}

TEST_CASE("transpose_range: ranges that cover a matrix, cut anywhere, make its whole transpose", "[kernels]")
{
    // The fused pass transposes each thread's shard of a kernel: shards start and end inside rows,
    // some are shorter than a row, and blocks inside them are whole rows.
    const auto check = [](std::size_t rows, std::size_t cols, std::vector<std::size_t> cuts) {
        INFO(rows << " x " << cols);
        const auto in = random_vector(rows * cols, 23);
        std::vector<float> want(rows * cols), got(rows * cols, -9.0f);
        kernels::transpose(in.data(), rows, cols, want.data());
        cuts.insert(cuts.begin(), 0);
        cuts.push_back(rows * cols);
        for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
            kernels::transpose_range(in.data(), rows, cols, cuts[k], cuts[k + 1], got.data());
            // nothing past the range written yet: every element from cuts[k + 1] on still -9
            for (std::size_t i = cuts[k + 1]; i < rows * cols; ++i)
                if (got[(i % cols) * rows + i / cols] != -9.0f)
                    FAIL("element " << i << " written before its range");
        }
        CHECK(got == want);
    };
    check(512, 512, {131072, 131072 + 12 * 512});        // whole rows
    check(40, 37, {5, 30, 37 * 3 + 4, 37 * 20, 37 * 39 + 36});   // inside rows, shorter than a row, one element
    check(33, 9, {1, 2, 3, 100, 101});
    check(1, 50, {7, 8, 49});
    check(17, 1, {3, 16});
}
