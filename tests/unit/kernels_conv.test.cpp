// Every kernel against its plain scalar reference (double accumulation), within 1e-5 relative to the
// magnitude of the sum it computes (sum_k |a_ik b_kj|). Convolutions and pooling here; GEMMs in
// kernels_gemm.test.cpp, the in-place convolutions' bits in kernels_in_place.test.cpp.
#include "kernel_checks.hpp"

#include <tpudsl/kernels/direct_conv.hpp>
#include <tpudsl/kernels/gemm.hpp>
#include <tpudsl/kernels/im2col.hpp>
#include <tpudsl/kernels/reference/scalar_conv.hpp>
#include <tpudsl/ops/graph.hpp>
#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <type_traits>
#include <vector>

using namespace tpudsl;
using kernel_checks::check_close;
using kernel_checks::random_vector;

namespace {

/// One layer's forward and backward through the model machinery, against the direct reference.
template <class M>
void
check_conv(std::size_t n)
{
    using G = ops::graph<M>;
    using B = typename M::template layer<0>;
    constexpr auto geo = B::spec::ops::template core<B>::geometry;
    constexpr std::size_t F = B::spec::filters;
    auto params = random_vector(M::param_buffer_size, 6);
    const auto x = random_vector(n * M::input_shape::size, 7);
    std::vector<float> ws(ops::graph<M>::workspace_floats(n, true));
    G::forward(params.data(), x.data(), ws.data(), n, n, step_context{});
    const float* w = params.data() + B::template weight<0>::offset;
    const float* bias = params.data() + B::template weight<1>::offset;

    const std::size_t out = M::output_shape::size;
    std::vector<float> want(n * out), got(G::output(ws.data(), n), G::output(ws.data(), n) + n * out);
    for (std::size_t s = 0; s < n; ++s)
        kernels::reference::conv2d_forward(geo, F, x.data() + s * geo.in_size(), w, bias, want.data() + s * out);
    // A Relu layer: the reference's outputs through Relu, and the output gradient through its
    // derivative at the layer's own outputs (the reference's next step takes it as given).
    constexpr bool relu = std::is_same_v<typename B::spec::activation, Relu>;
    if constexpr (relu)
        for (float& v : want)
            v = std::max(v, 0.0f);
    check_close(got, want, std::vector<double>(want.size(), geo.patch() + 1.0));

    const auto dy = random_vector(n * out, 8);
    std::copy(dy.begin(), dy.end(), G::loss_gradient(ws.data(), n));
    auto ref_dy = dy;
    if constexpr (relu)
        for (std::size_t i = 0; i < ref_dy.size(); ++i)
            ref_dy[i] = got[i] > 0.0f ? ref_dy[i] : 0.0f;
    // The weights' places hold garbage (the arena's alignment padding stays 0): backward writes them.
    std::vector<float> grads(M::param_buffer_size, 0.0f), dx(x.size());
    std::fill_n(grads.data() + B::template weight<0>::offset, B::template weight<0>::size, 7.0f);
    std::fill_n(grads.data() + B::template weight<1>::offset, B::template weight<1>::size, 7.0f);
    G::backward(params.data(), x.data(), ws.data(), n, n, grads.data(), false, dx.data());

    std::vector<float> ref_grads(M::param_buffer_size, 0.0f), ref_dx(x.size());
    for (std::size_t s = 0; s < n; ++s)
        kernels::reference::conv2d_backward(geo, F, x.data() + s * geo.in_size(), w, ref_dy.data() + s * out,
                                            ref_grads.data() + B::template weight<0>::offset,
                                            ref_grads.data() + B::template weight<1>::offset,
                                            ref_dx.data() + s * geo.in_size());
    check_close(grads, ref_grads, std::vector<double>(grads.size(), n * geo.positions() + 1.0));
    check_close(dx, ref_dx, std::vector<double>(dx.size(), geo.patch() * F + 1.0));
}

/// A convolution fused with the max pooling after it (conv_pool_pair), forward and backward through
/// the model machinery, against the direct references in turn: the convolution, Relu (a Relu layer),
/// the pooling; then the pooling's routing of dY, Relu's derivative, the convolution's gradients.
template <class M>
void
check_conv_pool(std::size_t n)
{
    using G = ops::graph<M>;
    STATIC_REQUIRE(G::plan.nodes[0].kind == ops::node_kind::fused_conv);
    using B = typename M::template layer<0>;
    using Pool = typename M::template layer<1>;
    constexpr auto geo = B::spec::ops::template core<B>::geometry;
    constexpr auto pool = Pool::spec::ops::template core<Pool>::geometry;
    constexpr std::size_t F = B::spec::filters;
    constexpr bool relu = std::is_same_v<typename B::spec::activation, Relu>;
    auto params = random_vector(M::param_buffer_size, 16);
    const auto x = random_vector(n * M::input_shape::size, 17);
    std::vector<float> ws(ops::graph<M>::workspace_floats(n, true));
    G::forward(params.data(), x.data(), ws.data(), n, n, step_context{});
    const std::size_t out = M::output_shape::size;
    const std::vector<float> got(G::output(ws.data(), n), G::output(ws.data(), n) + n * out);
    const auto dy = random_vector(n * out, 18);
    std::copy(dy.begin(), dy.end(), G::loss_gradient(ws.data(), n));
    // Garbage in the weights' places and in dx: backward writes them.
    std::vector<float> grads(M::param_buffer_size, 0.0f), dx(x.size(), 7.0f);
    std::fill_n(grads.data() + B::template weight<0>::offset, B::template weight<0>::size, 7.0f);
    std::fill_n(grads.data() + B::template weight<1>::offset, B::template weight<1>::size, 7.0f);
    G::backward(params.data(), x.data(), ws.data(), n, n, grads.data(), false, dx.data());

    const float* w = params.data() + B::template weight<0>::offset;
    const float* bias = params.data() + B::template weight<1>::offset;
    std::vector<float> z(pool.in_size()), dz(pool.in_size()), want(n * out), ref_grads(M::param_buffer_size, 0.0f),
        ref_dx(x.size());
    for (std::size_t s = 0; s < n; ++s) {
        kernels::reference::conv2d_forward(geo, F, x.data() + s * geo.in_size(), w, bias, z.data());
        if constexpr (relu)
            for (float& v : z)
                v = std::max(v, 0.0f);
        kernels::reference::max_pool(pool, z.data(), want.data() + s * out, dy.data() + s * out, dz.data());
        if constexpr (relu)
            for (std::size_t i = 0; i < dz.size(); ++i)
                dz[i] = z[i] > 0.0f ? dz[i] : 0.0f;
        kernels::reference::conv2d_backward(geo, F, x.data() + s * geo.in_size(), w, dz.data(),
                                            ref_grads.data() + B::template weight<0>::offset,
                                            ref_grads.data() + B::template weight<1>::offset,
                                            ref_dx.data() + s * geo.in_size());
    }
    check_close(got, want, std::vector<double>(want.size(), geo.patch() + 1.0));
    check_close(grads, ref_grads, std::vector<double>(grads.size(), n * geo.positions() + 1.0));
    check_close(dx, ref_dx, std::vector<double>(dx.size(), geo.patch() * F + 1.0));
}

/// A pooling layer's forward and backward through the model machinery against the direct reference
/// of its kind: max (bit for bit) or average (to 1e-5 of the window's magnitude).
template <class M, bool Average = false>
void
check_pool(std::size_t n)
{
    using G = ops::graph<M>;
    using B = typename M::template layer<0>;
    constexpr auto geo = B::spec::ops::template core<B>::geometry;
    const auto x = random_vector(n * M::input_shape::size, 9);
    std::vector<float> params(M::param_buffer_size), ws(ops::graph<M>::workspace_floats(n, true));
    G::forward(params.data(), x.data(), ws.data(), n, n, step_context{});
    const std::size_t out = M::output_shape::size;
    const auto dy = random_vector(n * out, 10);
    std::copy(dy.begin(), dy.end(), G::loss_gradient(ws.data(), n));
    std::vector<float> dx(x.size());
    G::backward(params.data(), x.data(), ws.data(), n, n, params.data(), false, dx.data());

    std::vector<float> want_y(n * out), want_dx(x.size());
    for (std::size_t s = 0; s < n; ++s)
        (Average ? kernels::reference::average_pool : kernels::reference::max_pool)(
            geo, x.data() + s * geo.in_size(), want_y.data() + s * out, dy.data() + s * out,
            want_dx.data() + s * geo.in_size());
    const float* y = G::output(ws.data(), n);
    if constexpr (Average) {
        check_close(std::vector<float>(y, y + n * out), want_y, std::vector<double>(want_y.size(), 1.0));
        check_close(dx, want_dx, std::vector<double>(dx.size(), 1.0));
    } else {
        CHECK(std::vector<float>(y, y + n * out) == want_y);
        CHECK(dx == want_dx);
    }
}

template <class M>
void
check_average_pool(std::size_t n)
{
    check_pool<M, true>(n);
}

} // namespace

TEST_CASE("convolutions equal the direct reference", "[kernels]")
{
    check_conv<Sequential<Input<Shape<28, 28, 1>>, Conv2D<64, 3>>>(2);
    check_conv<Sequential<Input<Shape<9, 8, 3>>, Conv2D<5, 3, Linear, Same, 2>>>(3);
    check_conv<Sequential<Input<Shape<9, 8, 3>>, Conv2D<4, Size2{2, 4}, Linear, Same, Size2{3, 1}>>>(2);
    check_conv<Sequential<Input<Shape<30, 7>>, Conv1D<16, 5>>>(2);
    check_conv<Sequential<Input<Shape<11, 4>>, Conv1D<6, 4, Linear, Same, 3>>>(3);
    // Read in place: a thin 2-D patch with strides, a partial vector of filters and a remainder of
    // positions and patch rows (12 = 6 + 6, 10 filters); a 1-D one with stride 2; a wide 2-D patch
    // (36 floats: window rows).
    check_conv<Sequential<Input<Shape<9, 8, 2>>, Conv2D<10, Size2{3, 2}, Linear, Valid, Size2{2, 1}>>>(3);
    check_conv<Sequential<Input<Shape<7, 7, 3>>, Conv2D<21, 2>>>(2);
    check_conv<Sequential<Input<Shape<17, 5>>, Conv1D<9, 3, Linear, Valid, 2>>>(3);
    check_conv<Sequential<Input<Shape<8, 8, 4>>, Conv2D<8, 3>>>(2);
}

TEST_CASE("Winograd convolutions equal the direct reference", "[kernels][winograd]")
{
    // F(4 x 4, 3 x 3): Valid with an odd output (8 x 7: the last tiles pass the input's edge), three
    // blocks of tiles (CIFAR-10's second convolution: 64 tiles), Relu over a Same 7 x 7 output (in
    // the epilogue, and its derivative and the bias gradient taken as the tiles read dY, past the
    // edge too). F(2 x 2, 3 x 3): two blocks (CIFAR-10's fourth convolution, 49 tiles), Relu over
    // 7 x 6, Same over odd rows and a width of 1, and 48 filters (a panel narrower than the register
    // tile's with AVX-512), where 4 x 4 tiles would not save 30% of the products.
    using one = Sequential<Input<Shape<10, 9, 16>>, Conv2D<32, 3>>;
    using blocks4 = Sequential<Input<Shape<32, 32, 32>>, Conv2D<32, 3>>;
    using relu = Sequential<Input<Shape<7, 7, 16>>, Conv2D<32, 3, Relu, Same>>;
    using blocks = Sequential<Input<Shape<15, 15, 64>>, Conv2D<64, 3>>;
    using relu2 = Sequential<Input<Shape<7, 6, 16>>, Conv2D<16, 3, Relu, Same>>;
    using same = Sequential<Input<Shape<7, 1, 32>>, Conv2D<16, 3, Linear, Same>>;
    using wide = Sequential<Input<Shape<6, 5, 16>>, Conv2D<48, 3, Linear, Same>>;
    auto winograd = []<class M>(M) {
        using B = typename M::template layer<0>;
        return B::spec::ops::template core<B>::winograd;
    };
    auto tile = []<class M>(M) {
        using B = typename M::template layer<0>;
        return kernels::winograd_tile<B::spec::ops::template core<B>::geometry>;
    };
    STATIC_REQUIRE((winograd(one{}) && winograd(blocks4{}) && winograd(relu{})));
    STATIC_REQUIRE((winograd(blocks{}) && winograd(relu2{}) && winograd(same{}) && winograd(wide{})));
    STATIC_REQUIRE((tile(one{}) == 4 && tile(blocks4{}) == 4 && tile(relu{}) == 4));
    STATIC_REQUIRE((tile(blocks{}) == 2 && tile(relu2{}) == 2 && tile(same{}) == 2 && tile(wide{}) == 2));
    STATIC_REQUIRE(kernels::winograd_plan<kernels::window_geometry{32, 32, 32, 3, 3, 1, 1, 30, 30, 0, 0}, 32>::blocks == 3);
    STATIC_REQUIRE(kernels::winograd_plan<kernels::window_geometry{15, 15, 64, 3, 3, 1, 1, 13, 13, 0, 0}, 64>::blocks == 2);
    check_conv<one>(2);
    check_conv<blocks4>(1);
    check_conv<relu>(3);
    check_conv<blocks>(2);
    check_conv<relu2>(2);
    check_conv<same>(3);
    check_conv<wide>(2);
    // Fused with the max pooling after it (the pair's backward routes the pooled gradient to dZ, Relu's
    // derivative at each window's maximum): 4 x 4 tiles over 8 x 7 (a pooling that drops the last
    // column) and over 8 x 8 with Relu; 2 x 2 tiles over 7 x 6 with Relu.
    using pair4 = Sequential<Input<Shape<10, 9, 16>>, Conv2D<32, 3>, MaxPool2D<2>>;
    using pair4_relu = Sequential<Input<Shape<8, 8, 16>>, Conv2D<16, 3, Relu, Same>, MaxPool2D<2>>;
    using pair2_relu = Sequential<Input<Shape<7, 6, 16>>, Conv2D<16, 3, Relu, Same>, MaxPool2D<2>>;
    STATIC_REQUIRE((tile(pair4{}) == 4 && tile(pair4_relu{}) == 4 && tile(pair2_relu{}) == 2));
    check_conv_pool<pair4>(2);
    check_conv_pool<pair4_relu>(3);
    check_conv_pool<pair2_relu>(2);
    // Not Winograd: 8 channels, a stride of 2, a 5 x 5 window, 24 filters.
    STATIC_REQUIRE(!winograd(Sequential<Input<Shape<8, 8, 8>>, Conv2D<16, 3>>{}));
    STATIC_REQUIRE(!winograd(Sequential<Input<Shape<9, 9, 16>>, Conv2D<16, 3, Linear, Valid, 2>>{}));
    STATIC_REQUIRE(!winograd(Sequential<Input<Shape<9, 9, 16>>, Conv2D<16, 5>>{}));
    STATIC_REQUIRE(!winograd(Sequential<Input<Shape<9, 9, 16>>, Conv2D<24, 3>>{}));
}

TEST_CASE("the convolution path is chosen from the shapes", "[kernels]")
{
    using kernels::conv_path;
    auto path = []<class M>(M) {
        using B = typename M::template layer<0>;
        return kernels::conv_path_for<B::spec::ops::template core<B>::geometry>;
    };
    STATIC_REQUIRE(path(Sequential<Input<Shape<28, 28, 1>>, Conv2D<64, 3>>{}) == conv_path::direct);
    STATIC_REQUIRE(path(Sequential<Input<Shape<300, 7>>, Conv1D<64, 5>>{}) == conv_path::strided);
    STATIC_REQUIRE(path(Sequential<Input<Shape<148, 64>>, Conv1D<32, 3>>{}) == conv_path::strided);
    STATIC_REQUIRE(path(Sequential<Input<Shape<32, 32, 3>>, Conv2D<32, 3, Relu, Same>>{}) == conv_path::im2col);
    STATIC_REQUIRE(path(Sequential<Input<Shape<32, 32, 32>>, Conv2D<32, 3>>{}) == conv_path::rows);
    STATIC_REQUIRE(path(Sequential<Input<Shape<10, 3>>, Conv1D<4, 2, Linear, Same>>{}) == conv_path::im2col);
}

TEST_CASE("max pooling equals the direct reference", "[kernels]")
{
    check_pool<Sequential<Input<Shape<26, 26, 4>>, MaxPool2D<2>>>(2);
    check_pool<Sequential<Input<Shape<7, 9, 3>>, MaxPool2D<3, 2, Same>>>(2);
    check_pool<Sequential<Input<Shape<7, 9, 3>>, MaxPool2D<Size2{2, 3}, 1>>>(2);
    check_pool<Sequential<Input<Shape<296, 8>>, MaxPool1D<2>>>(2);
    check_pool<Sequential<Input<Shape<13, 3>>, MaxPool1D<4, 3, Same>>>(3);
    // Tiling windows (the backward pass writes each element once): a last row and column that no
    // window reads, channels that fill no whole vector or a vector and a part.
    check_pool<Sequential<Input<Shape<13, 11, 10>>, MaxPool2D<2>>>(2);
    check_pool<Sequential<Input<Shape<9, 8, 19>>, MaxPool2D<Size2{3, 2}>>>(2);
    check_pool<Sequential<Input<Shape<20, 5>>, MaxPool1D<3>>>(3);
    // Windows inside the input with whole vectors of channels (the maxima stay in registers):
    // tiling, overlapping, and a "same" pooling whose windows happen to need no padding.
    check_pool<Sequential<Input<Shape<10, 9, 16>>, MaxPool2D<2>>>(2);
    check_pool<Sequential<Input<Shape<9, 9, 32>>, MaxPool2D<3, 2>>>(2);
    check_pool<Sequential<Input<Shape<8, 8, 16>>, MaxPool2D<2, 2, Same>>>(2);
    check_pool<Sequential<Input<Shape<7, 7, 16>>, MaxPool2D<2, 2, Same>>>(2);
    check_pool<Sequential<Input<Shape<21, 32>>, MaxPool1D<3, 2>>>(2);
}

TEST_CASE("global max pooling equals the direct reference", "[kernels]")
{
    check_pool<Sequential<Input<Shape<13, 11, 10>>, GlobalMaxPooling2D>>(2);
    check_pool<Sequential<Input<Shape<3, 2, 32>>, GlobalMaxPooling2D>>(3);
    check_pool<Sequential<Input<Shape<37, 5>>, GlobalMaxPooling1D>>(2);
    check_pool<Sequential<Input<Shape<4, 16>>, GlobalMaxPooling1D>>(2);
}

TEST_CASE("average pooling equals the direct reference", "[kernels]")
{
    // Valid windows that tile, leave a last row and column unread, and overlap; Same windows whose
    // padding is not counted in their mean; channels that fill no whole vector or a vector and a part.
    check_average_pool<Sequential<Input<Shape<26, 26, 4>>, AveragePooling2D<2>>>(2);
    check_average_pool<Sequential<Input<Shape<13, 11, 19>>, AveragePooling2D<2>>>(2);
    check_average_pool<Sequential<Input<Shape<9, 9, 16>>, AveragePooling2D<3, 2>>>(2);
    check_average_pool<Sequential<Input<Shape<7, 9, 3>>, AveragePooling2D<3, 2, Same>>>(2);
    check_average_pool<Sequential<Input<Shape<7, 9, 3>>, AveragePooling2D<Size2{2, 3}, 1, Same>>>(2);
    check_average_pool<Sequential<Input<Shape<5, 7, 2>>, AveragePooling2D<3, Size2{1, 2}, Same>>>(2);
    check_average_pool<Sequential<Input<Shape<296, 8>>, AveragePooling1D<2>>>(2);
    check_average_pool<Sequential<Input<Shape<20, 5>>, AveragePooling1D<3>>>(3);
    check_average_pool<Sequential<Input<Shape<13, 3>>, AveragePooling1D<4, 3, Same>>>(3);
    check_average_pool<Sequential<Input<Shape<21, 32>>, AveragePooling1D<3, 2>>>(2);
    // A global average pooling is one window over the whole input.
    check_average_pool<Sequential<Input<Shape<13, 11, 10>>, GlobalAveragePooling2D>>(2);
    check_average_pool<Sequential<Input<Shape<37, 5>>, GlobalAveragePooling1D>>(2);
    check_average_pool<Sequential<Input<Shape<4, 16>>, GlobalAveragePooling1D>>(3);
}
