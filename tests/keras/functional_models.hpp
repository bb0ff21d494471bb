// The functional models of the one-step checks against Keras (keras_side.py builds the same graphs,
// its layers named as the nodes): ResNet-20 v1 (examples/cifar10_resnet) and a small graph whose
// convolution is called three times (Shared), with a Concatenate and an Add; Dot on two pairs of axes.
#ifndef TPUDSL_TESTS_KERAS_FUNCTIONAL_MODELS_HPP
#define TPUDSL_TESTS_KERAS_FUNCTIONAL_MODELS_HPP

#include <tpudsl/functional.hpp>

#include <cifar10_resnet/model.hpp>
#include <text_and_metadata/model.hpp>

namespace functional_models {

using namespace tpudsl;

using seeds::ResNet20;
using seeds::TextAndMetadata;   // two inputs (token ids, floats), two outputs (softmax, regression)

// conv = Conv1D(3, 3, "same", "tanh"): called on the input, on its own output, and on that pooled.
using SharedConv = Functional<Node<"x", Input<Shape<6, 3>>>,
                              Node<"conv", Conv1D<3, 3, Tanh, Same>>,
                              Node<"conv_again", Shared<"conv">>,
                              Node<"pool", AveragePooling1D<2>>,
                              Node<"conv_pooled", Shared<"conv">>,
                              Node<"flat_b", Flatten, "conv_again">,
                              Node<"flat_c", Flatten, "conv_pooled">,
                              Node<"cat", Concatenate<>, "flat_b", "flat_c">,
                              Node<"hidden", Dense<4, Tanh>>,
                              Node<"skip", Dense<4>, "flat_c">,
                              Node<"sum", Add, "hidden", "skip">,
                              Node<"classes", Dense<3, Softmax>>>;

static_assert(SharedConv::param_count == (3 * 3 * 3 + 3) + (27 * 4 + 4) + (9 * 4 + 4) + (4 * 3 + 3));

// Attention-like scores: Dot on the last axes (5, 5) and on the first (4, 3), concatenated.
using DotScores = Functional<Node<"x", Input<Shape<5, 3>>>,
                             Node<"q", Conv1D<4, 1, Tanh>, "x">,
                             Node<"k", Conv1D<4, 1>, "x">,
                             Node<"scores", Dot<2, 2>, "q", "k">,
                             Node<"gram", Dot<1, 1>, "q", "x">,
                             Node<"fs", Flatten, "scores">,
                             Node<"fg", Flatten, "gram">,
                             Node<"cat", Concatenate<>, "fs", "fg">,
                             Node<"classes", Dense<3, Softmax>>>;

static_assert(DotScores::param_count == 16 + 16 + (25 + 12) * 3 + 3);

} // namespace functional_models

#endif // !TPUDSL_TESTS_KERAS_FUNCTIONAL_MODELS_HPP
