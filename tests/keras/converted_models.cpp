// The C++ side of the check of tools/keras_to_tpudsl.py (tests/keras/convert_side.py writes the
// headers it includes, from models saved by real Keras):
//   converted_models <dir>
// Each seed written by the tool is the very type of the hand-written seed (checked when this file
// compiles), and prints the same summary. The models that are not seeds have, layer by layer, the
// output shapes, parameter counts and weight shapes (in Keras' order) Keras gave
// (<dir>/<model>.layers.txt), so that Keras' weights files fit them. The layer models of the one-step
// checks written by the tool are the very types of pooling_models.hpp, batch_norm_models.hpp,
// time_distributed_models.hpp and recurrent_models.hpp.
#include "batch_norm_models.hpp"
#include "pooling_models.hpp"
#include "recurrent_models.hpp"
#include "time_distributed_models.hpp"

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
#include <generated/global_average1d.hpp>
#include <generated/global_average2d.hpp>
#include <generated/global_max1d.hpp>
#include <generated/global_max2d.hpp>
#include <generated/gru.hpp>
#include <generated/gru_sequences.hpp>
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
#include <generated/reuters_conv1d.hpp>
#include <generated/time_distributed_dense.hpp>

#include <tpudsl/model.hpp>

#include <cstddef>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

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
static_assert(std::is_same_v<generated::Lstm, recurrent_models::Lstm>);
static_assert(std::is_same_v<generated::LstmSequences, recurrent_models::LstmSequences>);
static_assert(std::is_same_v<generated::Gru, recurrent_models::Gru>);
static_assert(std::is_same_v<generated::GruSequences, recurrent_models::GruSequences>);
static_assert(std::is_same_v<generated::Tagger, recurrent_models::Tagger>);
static_assert(std::is_same_v<generated::Stacked, recurrent_models::Stacked>);
static_assert(std::is_same_v<generated::MixedRecurrentH5, generated::MixedRecurrent>);

namespace {

template <class Model>
std::string
summary_of()
{
    std::ostringstream out;
    tpudsl::summary<Model>(out);
    return out.str();
}

template <class Generated, class Seed>
int
same_summary(const char* name)
{
    const bool same = summary_of<Generated>() == summary_of<Seed>();
    std::cout << name << ": the same type as the seed, " << (same ? "the same summary" : "ANOTHER SUMMARY") << '\n';
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

/// "(None, d...) params (weight shape)...", one line per layer, as convert_side.py writes Keras' layers.
template <class Model>
std::string
layer_lines()
{
    std::string s;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (([&] {
             using L = typename Model::template layer<I>;
             s += L::output_shape::keras_string() + " " + std::to_string(L::param_count);
             [&]<std::size_t... J>(std::index_sequence<J...>) {
                 ((s += " " + weight_shape<typename L::template weight<J>>()), ...);
             }(std::make_index_sequence<L::weight_count>{});
             s += "\n";
         }()),
         ...);
    }(std::make_index_sequence<Model::layer_count>{});
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
    std::stringstream keras;
    keras << in.rdbuf();
    const bool same = keras.str() == layer_lines<Model>();
    std::cout << name << ": layers " << (same ? "as in Keras" : "DIFFER from Keras") << '\n';
    if (!same)
        std::cout << "Keras:\n" << keras.str() << "tpudsl:\n" << layer_lines<Model>();
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
    return failures == 0 ? 0 : 1;
}
