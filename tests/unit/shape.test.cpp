#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <array>
#include <string>
#include <tuple>
#include <utility>

using namespace tpudsl;

TEST_CASE("Shape prints as Keras prints an output shape", "[shape]")
{
    CHECK(Shape<300, 7>::keras_string() == "(None, 300, 7)");
    CHECK(Shape<2336>::keras_string() == "(None, 2336)");
    CHECK(Shape<26, 26, 64>::keras_string() == "(None, 26, 26, 64)");
    STATIC_REQUIRE(Shape<26, 26, 64>::size == 43264);
}

// Invariants every layer must satisfy once bound to an input it accepts.
template <class L, class In>
struct case_of {
    using layer = L;
    using input = In;
};
using layer_cases = std::tuple<
    case_of<Embedding<100, 8>, detail::tensor<Shape<12>, std::int32_t>>,
    case_of<Conv1D<16, 3, Relu>, detail::tensor<Shape<20, 4>>>,
    case_of<Conv1D<16, 4, Tanh, Same, 3>, detail::tensor<Shape<20, 4>>>,
    case_of<Conv2D<8, 3>, detail::tensor<Shape<9, 9, 2>>>,
    case_of<Conv2D<8, Size2{2, 4}, Sigmoid, Same, Size2{2, 3}>, detail::tensor<Shape<9, 10, 3>>>,
    case_of<MaxPool1D<3>, detail::tensor<Shape<20, 4>>>,
    case_of<MaxPool2D<2, 1, Same>, detail::tensor<Shape<5, 5, 3>>>,
    case_of<Flatten, detail::tensor<Shape<3, 4, 5>>>,
    case_of<Dense<7, Softmax>, detail::tensor<Shape<11>>>,
    case_of<Activation<Relu>, detail::tensor<Shape<3, 4>>>,
    case_of<Dropout<0.5f>, detail::tensor<Shape<6>>>>;

TEMPLATE_LIST_TEST_CASE("every layer binds consistently", "[layers]", layer_cases)
{
    using L = typename TestType::layer;
    using In = typename TestType::input;
    using M = Sequential<Input<typename In::shape, typename In::value_type>, L>;
    using B = typename M::template layer<0>;

    STATIC_REQUIRE(detail::rule_ok(detail::verdict<L, In, 0>()));
    STATIC_REQUIRE(std::is_same_v<typename B::output_shape, typename L::template output<In>::shape>);
    STATIC_REQUIRE(B::output_shape::size > 0);
    // The parameter count is the sum of the weight sizes, and the weights tile the buffer in order.
    const auto [offsets, sizes] = [&]<std::size_t... J>(std::index_sequence<J...>) {
        return std::pair{std::array<std::size_t, sizeof...(J)>{B::template weight<J>::offset...},
                         std::array<std::size_t, sizeof...(J)>{B::template weight<J>::size...}};
    }(std::make_index_sequence<B::weight_count>{});
    std::size_t sum = 0;
    std::size_t next = B::param_offset;
    for (std::size_t j = 0; j < offsets.size(); ++j) {
        CHECK(offsets[j] == next);
        CHECK(offsets[j] % buffer_alignment_floats == 0);
        sum += sizes[j];
        next += aligned_floats(sizes[j]);
    }
    CHECK(sum == B::param_count);
    CHECK(next == B::param_end);
    CHECK(M::param_buffer_size == B::param_end);
    CHECK(M::param_count == B::param_count);
    CHECK(ops::graph<M>::workspace_floats(1) >= aligned_floats(B::output_shape::size) + B::scratch_size);
    // Keras' name for the only layer of a model is the bare prefix.
    CHECK(M::template layer_name<0>() == std::string(L::base_name));
}
