// The C++ side of the check of tools/keras_to_tpudsl.py (tests/keras/convert_side.py writes the
// headers it includes, from models saved by real Keras):
//   converted_models <dir>
// Each seed written by the tool is the very type of the hand-written seed (checked when this file
// compiles), and prints the same summary. The models that are not seeds have, layer by layer, the
// output shapes, parameter counts and weight shapes (in Keras' order) Keras gave
// (<dir>/<model>.layers.txt), so that Keras' weights files fit them. The layer models of the one-step
// checks written by the tool are the very types of pooling_models.hpp, batch_norm_models.hpp,
// time_distributed_models.hpp, recurrent_models.hpp and transformer_models.hpp.
// The graphs (Functional): the model of two inputs and two outputs (examples/text_and_metadata),
// DotScores and TwoTexts (below: an Embedding per text, one of them Shared on a third input) are the
// very types of the hand-written ones. ResNet-20 and SharedConv cannot be: the
// hand-written ResNet-20 is made of Blocks and declares its projection shortcuts after the second
// BatchNormalization where Keras' layer order (which the tool follows) has them before it, and
// SharedConv names its Shared nodes as it likes (the tool: conv_1, conv_2). For those two, every count
// and shape of the type is the hand-written one's, the summaries (names, shapes, parameters, what each
// layer reads, the shared layer's calls) are the same, and, for all four graphs, each layer's output
// shape, parameter count and weight shapes are Keras' (TwoTexts' too).
#include "batch_norm_models.hpp"
#include "functional_models.hpp"
#include "pooling_models.hpp"
#include "recurrent_models.hpp"
#include "time_distributed_models.hpp"
#include "transformer_models.hpp"
#include "../unit/summary_text.hpp"

#include <cifar10_cnn/model.hpp>
#include <fashion_mnist_cnn/model.hpp>
#include <mnist_mlp/model.hpp>
#include <reuters_conv1d/model.hpp>

#include <generated/average_pool1d.hpp>
#include <generated/average_pool2d.hpp>
#include <generated/batch_norm_conv.hpp>
#include <generated/batch_norm_dense.hpp>
#include <generated/cifar10_cnn.hpp>
#include <generated/fashion_mnist_cnn.hpp>
#include <generated/fashion_mnist_cnn_h5.hpp>
#include <generated/attention_bahdanau.hpp>
#include <generated/attention_causal.hpp>
#include <generated/attention_cross.hpp>
#include <generated/attention_luong.hpp>
#include <generated/attention_self.hpp>
#include <generated/functional_dot.hpp>
#include <generated/functional_shared.hpp>
#include <generated/global_average1d.hpp>
#include <generated/global_average2d.hpp>
#include <generated/global_max1d.hpp>
#include <generated/global_max2d.hpp>
#include <generated/gru.hpp>
#include <generated/gru_sequences.hpp>
#include <generated/layer_norm_dense.hpp>
#include <generated/layer_norm_dense_h5.hpp>
#include <generated/layer_norm_sequence.hpp>
#include <generated/lstm.hpp>
#include <generated/lstm_sequences.hpp>
#include <generated/mixed_image.hpp>
#include <generated/mixed_recurrent.hpp>
#include <generated/mixed_recurrent_h5.hpp>
#include <generated/mixed_text.hpp>
#include <generated/mnist_mlp.hpp>
#include <generated/mnist_mlp_functional.hpp>
#include <generated/recurrent_stacked.hpp>
#include <generated/recurrent_tagger.hpp>
#include <generated/resnet20.hpp>
#include <generated/reuters_conv1d.hpp>
#include <generated/text_and_metadata.hpp>
#include <generated/text_and_metadata_h5.hpp>
#include <generated/time_distributed_dense.hpp>
#include <generated/transformer_block.hpp>
#include <generated/two_texts.hpp>
#include <generated/two_texts_h5.hpp>

#include <tpudsl/functional.hpp>
#include <tpudsl/model.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// [convert_same_type]
static_assert(std::is_same_v<generated::FashionCnn, seeds::FashionCnn>);   // the tool's type is the seed's
// [convert_same_type]
static_assert(std::is_same_v<generated::FashionCnnH5, seeds::FashionCnn>);
static_assert(std::is_same_v<generated::MnistMlp, seeds::MnistMlp>);
static_assert(std::is_same_v<generated::MnistMlpFunctional, seeds::MnistMlp>);
static_assert(std::is_same_v<generated::Cifar10Cnn, seeds::Cifar10Cnn>);
static_assert(std::is_same_v<generated::Reuters, seeds::Reuters>);
static_assert(std::is_same_v<generated::AveragePool2D, pooling_models::AveragePool2D>);
static_assert(std::is_same_v<generated::AveragePool1D, pooling_models::AveragePool1D>);
static_assert(std::is_same_v<generated::GlobalAverage2D, pooling_models::GlobalAverage2D>);
static_assert(std::is_same_v<generated::GlobalMax2D, pooling_models::GlobalMax2D>);
static_assert(std::is_same_v<generated::GlobalAverage1D, pooling_models::GlobalAverage1D>);
static_assert(std::is_same_v<generated::GlobalMax1D, pooling_models::GlobalMax1D>);
static_assert(std::is_same_v<generated::BatchNormConv, batch_norm_models::BatchNormConv>);
static_assert(std::is_same_v<generated::BatchNormDense, batch_norm_models::BatchNormDense>);
static_assert(std::is_same_v<generated::TimeDistributedDense, time_distributed_models::TimeDistributedDense>);
static_assert(std::is_same_v<generated::LayerNormDense, transformer_models::LayerNormDense>);
static_assert(std::is_same_v<generated::LayerNormDenseH5, transformer_models::LayerNormDense>);
static_assert(std::is_same_v<generated::LayerNormSequence, transformer_models::LayerNormSequence>);
static_assert(std::is_same_v<generated::AttentionSelf, transformer_models::AttentionSelf>);
static_assert(std::is_same_v<generated::AttentionCausal, transformer_models::AttentionCausal>);
static_assert(std::is_same_v<generated::AttentionCross, transformer_models::AttentionCross>);
static_assert(std::is_same_v<generated::TransformerBlock, transformer_models::TransformerBlock>);
static_assert(std::is_same_v<generated::AttentionLuong, transformer_models::AttentionLuong>);
static_assert(std::is_same_v<generated::AttentionBahdanau, transformer_models::AttentionBahdanau>);
static_assert(std::is_same_v<generated::Lstm, recurrent_models::Lstm>);
static_assert(std::is_same_v<generated::LstmSequences, recurrent_models::LstmSequences>);
static_assert(std::is_same_v<generated::Gru, recurrent_models::Gru>);
static_assert(std::is_same_v<generated::GruSequences, recurrent_models::GruSequences>);
static_assert(std::is_same_v<generated::Tagger, recurrent_models::Tagger>);
static_assert(std::is_same_v<generated::Stacked, recurrent_models::Stacked>);
static_assert(std::is_same_v<generated::MixedRecurrentH5, generated::MixedRecurrent>);
static_assert(std::is_same_v<generated::TextAndMetadata, seeds::TextAndMetadata>);
static_assert(std::is_same_v<generated::TextAndMetadataH5, seeds::TextAndMetadata>);
static_assert(std::is_same_v<generated::DotScores, functional_models::DotScores>);

namespace hand_written {
using namespace tpudsl;
// convert_side.py's two_texts: two texts of token ids, an Embedding each, the question's Embedding
// called again on the title (Keras' layer reuse), merged, one Dense output.
using TwoTexts = Functional<
    Node<"question", Input<Shape<10>, std::int32_t>>, Node<"answer", Input<Shape<7>, std::int32_t>>,
    Node<"title", Input<Shape<4>, std::int32_t>>, Node<"words", Embedding<60, 6>, "question">,
    Node<"words_1", Shared<"words">, "title">, Node<"a_words", Embedding<40, 3>, "answer">,
    Node<"q_average", GlobalAveragePooling1D, "words">, Node<"a_flat", Flatten, "a_words">,
    Node<"t_max", GlobalMaxPooling1D, "words_1">, Node<"joined", Concatenate<>, "q_average", "a_flat", "t_max">,
    Node<"hidden", Dense<8, Relu>>, Node<"match", Dense<2, Softmax>>>;
} // namespace hand_written
static_assert(std::is_same_v<generated::TwoTexts, hand_written::TwoTexts>);
static_assert(std::is_same_v<generated::TwoTextsH5, hand_written::TwoTexts>);

namespace {

/// What a graph's type says of itself, outside the spelling of its nodes: its counts, its inputs
/// (shape and element type, in order) and its outputs' shapes.
template <class A, class B>
consteval bool
same_graph_counts()
{
    if constexpr (A::param_count != B::param_count || A::non_trainable_param_count != B::non_trainable_param_count ||
                  A::layer_count != B::layer_count || A::node_count != B::node_count ||
                  A::input_count != B::input_count || A::output_count != B::output_count ||
                  A::edge_count != B::edge_count || A::param_buffer_size != B::param_buffer_size) {
        return false;
    } else {
        return []<std::size_t... I>(std::index_sequence<I...>) {
            return (std::is_same_v<typename A::template input_at<I>, typename B::template input_at<I>> && ...);
        }(std::make_index_sequence<A::input_count>{}) && []<std::size_t... K>(std::index_sequence<K...>) {
            return (std::is_same_v<typename A::template output_shape_at<K>, typename B::template output_shape_at<K>> &&
                    ...);
        }(std::make_index_sequence<A::output_count>{});
    }
}
static_assert(same_graph_counts<generated::ResNet20, seeds::ResNet20>());
static_assert(same_graph_counts<generated::SharedConv, functional_models::SharedConv>());

using tpudsl_tests::summary_text;

template <class Generated, class Seed>
int
same_summary(const char* name, const char* same_what = "the same type as the seed")
{
    const bool same = summary_text<Generated>() == summary_text<Seed>();
    std::cout << name << ": " << same_what << ", " << (same ? "the same summary" : "ANOTHER SUMMARY") << '\n';
    if (!same)
        std::cout << "tool:\n" << summary_text<Generated>() << "hand-written:\n" << summary_text<Seed>();
    return same ? 0 : 1;
}

/// "(d, ...)": a weight's shape as Python prints a tuple.
template <class Weight>
std::string
weight_shape()
{
    std::string s = "(";
    for (std::size_t i = 0; i < Weight::shape::dims.size(); ++i)
        s += (i ? ", " : "") + std::to_string(Weight::shape::dims[i]);
    return s + (Weight::shape::dims.size() == 1 ? ",)" : ")");
}

/// "(None, d...) params (weight shape)...", one line per layer, as convert_side.py writes Keras' layers;
/// for a graph, "name (None, d...) ..." for each layer but a Shared node (a layer's further call), in
/// Keras' order (each line sorted into place, Keras' layers being sorted alike).
template <class Model>
std::string
layer_lines()
{
    std::vector<std::string> lines;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (([&] {
             using L = typename Model::template layer<I>;
             std::string s;
             if constexpr (requires { Model::functional; }) {
                 if (Model::layer_weights_of[I] != I)
                     return;
                 s = Model::template layer_name<I>() + " ";
             }
             s += L::output_shape::keras_string() + " " + std::to_string(L::param_count);
             [&]<std::size_t... J>(std::index_sequence<J...>) {
                 ((s += " " + weight_shape<typename L::template weight<J>>()), ...);
             }(std::make_index_sequence<L::weight_count>{});
             lines.push_back(s + "\n");
         }()),
         ...);
    }(std::make_index_sequence<Model::layer_count>{});
    if constexpr (requires { Model::functional; })
        std::ranges::sort(lines);
    std::string s;
    for (const std::string& line : lines)
        s += line;
    return s;
}

template <class Model>
int
same_layers(const std::string& dir, const char* name)
{
    const std::string path = dir + "/" + name + ".layers.txt";
    std::ifstream in(path);
    if (!in) {
        std::cout << name << ": cannot open " << path << '\n';
        return 1;
    }
    std::string keras;
    if constexpr (requires { Model::functional; }) {
        std::vector<std::string> lines;
        for (std::string line; std::getline(in, line);)
            lines.push_back(line + "\n");
        std::ranges::sort(lines);
        for (const std::string& line : lines)
            keras += line;
    } else {
        std::stringstream text;
        text << in.rdbuf();
        keras = text.str();
    }
    const bool same = keras == layer_lines<Model>();
    std::cout << name << ": layers " << (same ? "as in Keras" : "DIFFER from Keras") << '\n';
    if (!same)
        std::cout << "Keras:\n" << keras << "tpudsl:\n" << layer_lines<Model>();
    return same ? 0 : 1;
}

} // namespace

int
main(int argc, char** argv)
{
    if (argc != 2) {
        std::cerr << "usage: converted_models DIR\n";
        return 2;
    }
    int failures = same_summary<generated::FashionCnn, seeds::FashionCnn>("fashion_mnist_cnn") +
                   same_summary<generated::FashionCnnH5, seeds::FashionCnn>("fashion_mnist_cnn (.h5)") +
                   same_summary<generated::MnistMlp, seeds::MnistMlp>("mnist_mlp") +
                   same_summary<generated::MnistMlpFunctional, seeds::MnistMlp>("mnist_mlp (functional)") +
                   same_summary<generated::Cifar10Cnn, seeds::Cifar10Cnn>("cifar10_cnn") +
                   same_summary<generated::Reuters, seeds::Reuters>("reuters_conv1d");
    failures += same_layers<generated::MixedImage>(argv[1], "mixed_image");
    failures += same_layers<generated::MixedText>(argv[1], "mixed_text");
    failures += same_layers<generated::MixedRecurrent>(argv[1], "mixed_recurrent");
    failures += same_summary<generated::TextAndMetadata, seeds::TextAndMetadata>("text_and_metadata") +
                same_summary<generated::DotScores, functional_models::DotScores>("functional_dot", "the same type as "
                                                                                 "functional_models::DotScores") +
                same_summary<generated::ResNet20, seeds::ResNet20>("resnet20", "the seed's counts and shapes") +
                same_summary<generated::SharedConv, functional_models::SharedConv>(
                    "functional_shared", "functional_models::SharedConv's counts and shapes");
    failures += same_layers<generated::TextAndMetadata>(argv[1], "text_and_metadata");
    failures += same_layers<generated::DotScores>(argv[1], "functional_dot");
    failures += same_layers<generated::ResNet20>(argv[1], "resnet20");
    failures += same_layers<generated::SharedConv>(argv[1], "functional_shared");
    failures += same_layers<generated::TwoTexts>(argv[1], "two_texts");
    failures += same_layers<generated::AttentionSelf>(argv[1], "attention_self");
    failures += same_layers<generated::AttentionCausal>(argv[1], "attention_causal");
    failures += same_layers<generated::AttentionCross>(argv[1], "attention_cross");
    failures += same_layers<generated::TransformerBlock>(argv[1], "transformer_block");
    failures += same_layers<generated::AttentionLuong>(argv[1], "attention_luong");
    failures += same_layers<generated::AttentionBahdanau>(argv[1], "attention_bahdanau");
    return failures == 0 ? 0 : 1;
}
