/// @file A model of two inputs and two outputs, Keras' functional API's own first example in spirit:
/// a short text (12 token ids) and 5 numbers about it go in; a topic (one of 3) and a score come out.
/// The text is embedded and averaged, joined with the numbers, and one shared hidden layer feeds both
/// heads. 1,092 parameters, as Keras counts them. The data is synthetic and learnable: a third of a
/// text's words come from its topic's third of the vocabulary, the rest from all of it, and the score
/// is a fixed linear function of the numbers plus half the topic.
#ifndef TPUDSL_EXAMPLES_TEXT_AND_METADATA_MODEL_HPP
#define TPUDSL_EXAMPLES_TEXT_AND_METADATA_MODEL_HPP

#include <tpudsl/functional.hpp>

#include <cstddef>
#include <cstdint>
#include <random>

#include <xtensor/xtensor.hpp>

namespace seeds {

using namespace tpudsl;

// [two_inputs_two_outputs]
// words = Input((12,), dtype="int32"); numbers = Input((5,))
// x = GlobalAveragePooling1D()(Embedding(100, 8)(words))
// x = Dense(16, "relu")(Concatenate()([x, numbers]))
// topic = Dense(3, "softmax", name="topic")(x); score = Dense(1, name="score")(x)
// model = keras.Model([words, numbers], [topic, score])
using TextAndMetadata = Functional<
    Node<"words", Input<Shape<12>, std::int32_t>>,
    Node<"numbers", Input<Shape<5>>>,
    Node<"embedding", Embedding<100, 8>, "words">,
    Node<"average", GlobalAveragePooling1D>,
    Node<"joined", Concatenate<>, "average", "numbers">,
    Node<"hidden", Dense<16, Relu>>,
    Node<"topic", Dense<3, Softmax>, "hidden">,
    Node<"score", Dense<1>, "hidden">,
    Outputs<"topic", "score">>;
// [two_inputs_two_outputs]

/// n samples of the synthetic task, drawn from `seed`: words (n, 12), numbers (n, 5), topics (n,), scores (n, 1).
struct TextAndMetadataData {
    xt::xtensor<std::int32_t, 2> words;
    xt::xtensor<float, 2> numbers;
    xt::xtensor<std::int32_t, 1> topics;
    xt::xtensor<float, 2> scores;
};

inline TextAndMetadataData
make_text_and_metadata(std::size_t n, std::uint32_t seed)
{
    TextAndMetadataData d{xt::xtensor<std::int32_t, 2>::from_shape({n, 12}), xt::xtensor<float, 2>::from_shape({n, 5}),
                          xt::xtensor<std::int32_t, 1>::from_shape({n}), xt::xtensor<float, 2>::from_shape({n, 1})};
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> topic(0, 2), word(0, 32), any(1, 99), coin(0, 2);
    std::normal_distribution<float> number(0.0f, 1.0f);
    constexpr float weights[5] = {0.5f, -0.3f, 0.8f, 0.0f, 0.2f};
    for (std::size_t s = 0; s < n; ++s) {
        const int t = topic(rng);
        d.topics(s) = t;
        for (std::size_t w = 0; w < 12; ++w)   // one word in three from the topic's third of the vocabulary
            d.words(s, w) = coin(rng) == 0 ? 1 + 33 * t + word(rng) : any(rng);
        float score = 0.5f * static_cast<float>(t);
        for (std::size_t j = 0; j < 5; ++j) {
            d.numbers(s, j) = number(rng);
            score += weights[j] * d.numbers(s, j);
        }
        d.scores(s, 0) = score;
    }
    return d;
}

} // namespace seeds

#endif // !TPUDSL_EXAMPLES_TEXT_AND_METADATA_MODEL_HPP
