/// @file Defines the activation tags: Linear, Relu, Softmax, Sigmoid, Tanh.
#ifndef TPUDSL_CORE_ACTIVATION_TAGS_HPP
#define TPUDSL_CORE_ACTIVATION_TAGS_HPP

#include <string_view>
#include <type_traits>

namespace tpudsl {

/// `activation=None` in Keras: the identity.
struct Linear {
    static constexpr std::string_view name = "linear";
};
/// `max(x, 0)`.
struct Relu {
    static constexpr std::string_view name = "relu";
};
/// `exp(x_i) / sum_j exp(x_j)` over the last axis.
struct Softmax {
    static constexpr std::string_view name = "softmax";
};
/// `1 / (1 + exp(-x))`.
struct Sigmoid {
    static constexpr std::string_view name = "sigmoid";
};
/// `tanh(x)`.
struct Tanh {
    static constexpr std::string_view name = "tanh";
};

/// True for the activation tags above.
template <class A>
concept ActivationType = std::is_same_v<A, Linear> || std::is_same_v<A, Relu> || std::is_same_v<A, Softmax> ||
                         std::is_same_v<A, Sigmoid> || std::is_same_v<A, Tanh>;

/// True for the activations a GEMM or a convolution applies in its epilogue, as each tile leaves the
/// registers: Linear (nothing) and Relu (element-wise, its derivative a select). The others run as a
/// pass of their own after it.
template <class A>
concept EpilogueActivation = std::is_same_v<A, Linear> || std::is_same_v<A, Relu>;

} // namespace tpudsl

#endif // !TPUDSL_CORE_ACTIVATION_TAGS_HPP
