#include "cifar10_cnn/model.hpp"
#include "reuters_conv1d/model.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace tpudsl;

namespace {
template <class M>
std::vector<std::string>
layer_names()
{
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return std::vector<std::string>{M::template layer_name<I>()...};
    }(std::make_index_sequence<M::layer_count>{});
}

struct weight_span {
    std::size_t offset, size;
};

template <class M>
std::vector<weight_span>
weight_spans()
{
    std::vector<weight_span> spans;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (
            [&] {
                using B = typename M::template layer<I>;
                [&]<std::size_t... J>(std::index_sequence<J...>) {
                    (spans.push_back({B::template weight<J>::offset, B::template weight<J>::size}), ...);
                }(std::make_index_sequence<B::weight_count>{});
            }(),
            ...);
    }(std::make_index_sequence<M::layer_count>{});
    return spans;
}
} // namespace

TEST_CASE("layers get Keras' zero-based auto-names", "[sequential]")
{
    CHECK(layer_names<seeds::Reuters>() ==
          std::vector<std::string>{"embedding", "conv1d", "max_pooling1d", "conv1d_1", "max_pooling1d_1", "flatten",
                                   "dense"});
    CHECK(layer_names<seeds::Cifar10Cnn>() ==
          std::vector<std::string>{"conv2d", "conv2d_1", "max_pooling2d", "dropout", "conv2d_2", "conv2d_3",
                                   "max_pooling2d_1", "dropout_1", "flatten", "dense", "dropout_2", "dense_1"});
}

TEMPLATE_TEST_CASE("weights tile the flat parameter buffer: aligned, in order, disjoint", "[sequential]",
                   seeds::Reuters, seeds::Cifar10Cnn)
{
    const auto spans = weight_spans<TestType>();
    REQUIRE(!spans.empty());
    std::size_t end = 0;
    std::size_t total = 0;
    for (const auto& s : spans) {
        CHECK(s.offset % buffer_alignment_floats == 0);
        CHECK(s.offset >= end);
        CHECK(s.offset - end < buffer_alignment_floats);   // padding only, never a gap
        end = s.offset + s.size;
        total += s.size;
    }
    CHECK(total == TestType::param_count);
    CHECK(aligned_floats(end) == TestType::param_buffer_size);
    CHECK(TestType::param_buffer_size * sizeof(float) % buffer_alignment == 0);
}
