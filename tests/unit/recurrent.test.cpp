// LSTM and GRU against a plain scalar reference (Keras' cell equations in double, one sample and one
// step at a time), and the initializers they bring: orthogonal and unit_forget_bias.
#include <tpudsl/ops/graph.hpp>
#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

using namespace tpudsl;

namespace {

double
sigmoid(double x)
{
    return 1.0 / (1.0 + std::exp(-x));
}

/// Keras' LSTMCell over T steps of one sample x (T, F): kernel (F, 4U), recurrent (U, 4U), bias (4U).
std::vector<double>
lstm_reference(const float* x, std::size_t T, std::size_t F, std::size_t U, const float* w, const float* r,
               const float* b, bool sequences)
{
    std::vector<double> h(U, 0.0), c(U, 0.0), z(4 * U), out;
    for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t j = 0; j < 4 * U; ++j) {
            double v = b[j];
            for (std::size_t f = 0; f < F; ++f)
                v += static_cast<double>(x[t * F + f]) * w[f * 4 * U + j];
            for (std::size_t u = 0; u < U; ++u)
                v += h[u] * r[u * 4 * U + j];
            z[j] = v;
        }
        for (std::size_t u = 0; u < U; ++u) {
            const double i = sigmoid(z[u]), f = sigmoid(z[U + u]), g = std::tanh(z[2 * U + u]),
                         o = sigmoid(z[3 * U + u]);
            c[u] = f * c[u] + i * g;
            h[u] = o * std::tanh(c[u]);
        }
        if (sequences || t + 1 == T)
            out.insert(out.end(), h.begin(), h.end());
    }
    return out;
}

/// Keras' GRUCell (reset_after=True) over T steps of one sample: kernel (F, 3U), recurrent (U, 3U),
/// bias (2, 3U).
std::vector<double>
gru_reference(const float* x, std::size_t T, std::size_t F, std::size_t U, const float* w, const float* r,
              const float* b, bool sequences)
{
    std::vector<double> h(U, 0.0), xz(3 * U), hz(3 * U), out;
    for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t j = 0; j < 3 * U; ++j) {
            double vx = b[j], vh = b[3 * U + j];
            for (std::size_t f = 0; f < F; ++f)
                vx += static_cast<double>(x[t * F + f]) * w[f * 3 * U + j];
            for (std::size_t u = 0; u < U; ++u)
                vh += h[u] * r[u * 3 * U + j];
            xz[j] = vx;
            hz[j] = vh;
        }
        for (std::size_t u = 0; u < U; ++u) {
            const double z = sigmoid(xz[u] + hz[u]), rr = sigmoid(xz[U + u] + hz[U + u]);
            const double hh = std::tanh(xz[2 * U + u] + rr * hz[2 * U + u]);
            h[u] = z * h[u] + (1.0 - z) * hh;
        }
        if (sequences || t + 1 == T)
            out.insert(out.end(), h.begin(), h.end());
    }
    return out;
}

/// The model's one recurrent layer forward on n random samples, against the reference.
template <class M, bool IsLstm, std::size_t N>
void
check_against_reference(double scale)
{
    using G = ops::graph<M>;
    using B = typename M::template layer<0>;
    constexpr std::size_t T = M::input_shape::dims[0], F = M::input_shape::dims[1], U = B::spec::units;
    std::vector<float> params(M::param_buffer_size);
    std::vector<float> x(N * M::input_shape::size);
    std::vector<float> ws(G::workspace_floats(N, false));
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (auto& p : params)
        p = static_cast<float>(scale) * u(gen);
    for (auto& v : x)
        v = u(gen);
    const step_context ctx{.training = false, .seed = 1, .step = 0, .first_sample = 0};
    G::forward(params.data(), x.data(), ws.data(), N, N, ctx);
    const float* y = G::output(ws.data(), N);
    const float* w = params.data() + B::template weight<0>::offset;
    const float* r = params.data() + B::template weight<1>::offset;
    const float* b = params.data() + B::template weight<2>::offset;
    double worst = 0.0;
    for (std::size_t s = 0; s < N; ++s) {
        const float* xs = x.data() + s * T * F;
        const auto ref = IsLstm ? lstm_reference(xs, T, F, U, w, r, b, B::spec::return_sequences)
                                : gru_reference(xs, T, F, U, w, r, b, B::spec::return_sequences);
        REQUIRE(ref.size() == M::output_shape::size);
        for (std::size_t k = 0; k < ref.size(); ++k)
            worst = std::max(worst, std::abs(ref[k] - y[s * ref.size() + k]));
    }
    INFO("largest difference " << worst);
    CHECK(worst < 2e-5);
}

} // namespace

TEST_CASE("LSTM forward: the kernels against a scalar reference of Keras' cell", "[recurrent]")
{
    check_against_reference<Sequential<Input<Shape<7, 5>>, LSTM<13>>, true, 5>(0.5);
    check_against_reference<Sequential<Input<Shape<6, 3>>, LSTM<16, true>>, true, 3>(0.5);
    check_against_reference<Sequential<Input<Shape<1, 4>>, LSTM<3>>, true, 2>(1.0);
    // A batch large enough for the packed GEMM paths (64 rows and more).
    check_against_reference<Sequential<Input<Shape<9, 8>>, LSTM<24, true>>, true, 70>(0.3);
}

TEST_CASE("GRU forward: the kernels against a scalar reference of Keras' cell (reset_after)", "[recurrent]")
{
    check_against_reference<Sequential<Input<Shape<7, 5>>, GRU<13>>, false, 5>(0.5);
    check_against_reference<Sequential<Input<Shape<6, 3>>, GRU<16, true>>, false, 3>(0.5);
    check_against_reference<Sequential<Input<Shape<1, 4>>, GRU<3>>, false, 2>(1.0);
    check_against_reference<Sequential<Input<Shape<9, 8>>, GRU<24, true>>, false, 70>(0.3);
}

TEST_CASE("Orthogonal: orthonormal rows (wide) or columns (tall), the same values for the same seed",
          "[recurrent][initializers]")
{
    auto gram_error = [](const std::vector<float>& w, std::size_t rows, std::size_t cols, bool by_rows) {
        const std::size_t count = by_rows ? rows : cols, length = by_rows ? cols : rows;
        double worst = 0.0;
        for (std::size_t a = 0; a < count; ++a)
            for (std::size_t b = 0; b < count; ++b) {
                double dot = 0.0;
                for (std::size_t e = 0; e < length; ++e)
                    dot += static_cast<double>(by_rows ? w[a * cols + e] : w[e * cols + a]) *
                           (by_rows ? w[b * cols + e] : w[e * cols + b]);
                worst = std::max(worst, std::abs(dot - (a == b ? 1.0 : 0.0)));
            }
        return worst;
    };
    std::vector<float> wide(16 * 64), again(16 * 64), other(16 * 64), tall(12 * 5);
    initializers::Orthogonal::fill<Shape<16, 64>>(wide.data(), initializers::draw{42, 1, 1});
    initializers::Orthogonal::fill<Shape<16, 64>>(again.data(), initializers::draw{42, 1, 1});
    initializers::Orthogonal::fill<Shape<16, 64>>(other.data(), initializers::draw{43, 1, 1});
    initializers::Orthogonal::fill<Shape<12, 5>>(tall.data(), initializers::draw{42, 1, 1});
    CHECK(gram_error(wide, 16, 64, true) < 1e-5);
    CHECK(gram_error(tall, 12, 5, false) < 1e-5);
    CHECK(wide == again);
    CHECK(wide != other);
    // Square: both at once (an LSTM<U>'s recurrent kernel seen per gate is not square; GRU<U>'s neither).
    std::vector<float> square(8 * 8);
    initializers::Orthogonal::fill<Shape<8, 8>>(square.data(), initializers::draw{1, 0, 1});
    CHECK(gram_error(square, 8, 8, true) < 1e-5);
    CHECK(gram_error(square, 8, 8, false) < 1e-5);
}

TEST_CASE("initial weights: LSTM's forget bias at one, GRU's biases at zero, orthogonal recurrent kernels",
          "[recurrent][initializers]")
{
    using M = Sequential<Input<Shape<5, 3>>, LSTM<4, true>, GRU<6>>;
    std::vector<float> params(M::param_buffer_size);
    initialize_parameters<M>(params.data(), 7);
    const float* lb = params.data() + M::layer<0>::weight<2>::offset;
    for (std::size_t k = 0; k < 16; ++k)
        CHECK(lb[k] == (k >= 4 && k < 8 ? 1.0f : 0.0f));
    const float* gb = params.data() + M::layer<1>::weight<2>::offset;
    CHECK(std::all_of(gb, gb + 36, [](float v) { return v == 0.0f; }));
    const float* r = params.data() + M::layer<1>::weight<1>::offset;   // (6, 18): orthonormal rows
    double dot01 = 0.0, dot00 = 0.0;
    for (std::size_t e = 0; e < 18; ++e) {
        dot01 += static_cast<double>(r[e]) * r[18 + e];
        dot00 += static_cast<double>(r[e]) * r[e];
    }
    CHECK(std::abs(dot01) < 1e-5);
    CHECK(std::abs(dot00 - 1.0) < 1e-5);
}
