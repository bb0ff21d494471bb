#include "../keras/functional_models.hpp"
#include "summary_text.hpp"
#include "cifar10_cnn/model.hpp"
#include "fashion_mnist_cnn/model.hpp"
#include "mnist_mlp/model.hpp"
#include "reuters_conv1d/model.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

// Keras' table for the Reuters seed, as tf.keras prints it, trailing spaces included.
static const std::string reuters_expected =
    // [reuters_summary]
    "Model: \"sequential\"\n"
    "_________________________________________________________________\n"
    "Layer (type)                 Output Shape              Param #   \n"
    "=================================================================\n"
    "embedding (Embedding)        (None, 300, 7)            216874    \n"
    "_________________________________________________________________\n"
    "conv1d (Conv1D)              (None, 296, 64)           2304      \n"
    "_________________________________________________________________\n"
    "max_pooling1d (MaxPooling1D) (None, 148, 64)           0         \n"
    "_________________________________________________________________\n"
    "conv1d_1 (Conv1D)            (None, 146, 32)           6176      \n"
    "_________________________________________________________________\n"
    "max_pooling1d_1 (MaxPooling1 (None, 73, 32)            0         \n"
    "_________________________________________________________________\n"
    "flatten (Flatten)            (None, 2336)              0         \n"
    "_________________________________________________________________\n"
    "dense (Dense)                (None, 46)                107502    \n"
    "=================================================================\n"
    "Total params: 332,856\n"
    "Trainable params: 332,856\n"
    "Non-trainable params: 0\n"
    "_________________________________________________________________\n"
    // [reuters_summary]
    ;

TEST_CASE("summary of the Reuters seed matches Keras byte for byte", "[summary]")
{
    std::ostringstream out;
    // [summary_call]
    tpudsl::summary<seeds::Reuters>(out);
    // [summary_call]
    CHECK(out.str() == reuters_expected);
}

TEST_CASE("summary of the Fashion-MNIST and MNIST seeds", "[summary]")
{
    std::ostringstream fashion;
    tpudsl::summary<seeds::FashionCnn>(fashion);
    CHECK(fashion.str() == "Model: \"sequential\"\n"
                           "_________________________________________________________________\n"
                           "Layer (type)                 Output Shape              Param #   \n"
                           "=================================================================\n"
                           "conv2d (Conv2D)              (None, 26, 26, 64)        640       \n"
                           "_________________________________________________________________\n"
                           "max_pooling2d (MaxPooling2D) (None, 13, 13, 64)        0         \n"
                           "_________________________________________________________________\n"
                           "activation (Activation)      (None, 13, 13, 64)        0         \n"
                           "_________________________________________________________________\n"
                           "flatten (Flatten)            (None, 10816)             0         \n"
                           "_________________________________________________________________\n"
                           "dense (Dense)                (None, 10)                108170    \n"
                           "_________________________________________________________________\n"
                           "activation_1 (Activation)    (None, 10)                0         \n"
                           "=================================================================\n"
                           "Total params: 108,810\n"
                           "Trainable params: 108,810\n"
                           "Non-trainable params: 0\n"
                           "_________________________________________________________________\n");

    std::ostringstream mnist;
    tpudsl::summary<seeds::MnistMlp>(mnist, "mnist_mlp");
    const std::string s = mnist.str();
    CHECK(s.rfind("Model: \"mnist_mlp\"\n", 0) == 0);
    CHECK(s.find("dropout_1 (Dropout)          (None, 512)               0         \n") != std::string::npos);
    CHECK(s.find("dense_2 (Dense)              (None, 10)                5130      \n") != std::string::npos);
    CHECK(s.find("Total params: 669,706\n") != std::string::npos);
}

TEST_CASE("summary rows cut and pad as Keras' print_row", "[summary]")
{
    using tpudsl::detail::summary_row;
    const std::array<std::size_t, 3> ends{29, 55, 65};
    // A name longer than its column is cut, and keeps one space before the next column.
    CHECK(summary_row({"a_very_long_layer_name_indeed (Conv2D)", "(None, 1)", "7"}, ends) ==
          "a_very_long_layer_name_indee (None, 1)                 7         ");
    CHECK(summary_row({"x", "y", "z"}, ends).size() == 65);
    CHECK(tpudsl::detail::with_thousands(0) == "0");
    CHECK(tpudsl::detail::with_thousands(999) == "999");
    CHECK(tpudsl::detail::with_thousands(1000) == "1,000");
    CHECK(tpudsl::detail::with_thousands(1250858) == "1,250,858");
}

TEST_CASE("summary rows and auto-names of the average and global poolings", "[summary]")
{
    using namespace tpudsl;
    using Image = Sequential<Input<Shape<16, 16, 3>>, Conv2D<8, 3, Relu, Same>, AveragePooling2D<2>,
                             AveragePooling2D<3, 2, Same>, GlobalAveragePooling2D, Dense<10, Softmax>>;
    std::ostringstream image;
    summary<Image>(image);
    CHECK(image.str() == "Model: \"sequential\"\n"
                         "_________________________________________________________________\n"
                         "Layer (type)                 Output Shape              Param #   \n"
                         "=================================================================\n"
                         "conv2d (Conv2D)              (None, 16, 16, 8)         224       \n"
                         "_________________________________________________________________\n"
                         "average_pooling2d (AveragePo (None, 8, 8, 8)           0         \n"
                         "_________________________________________________________________\n"
                         "average_pooling2d_1 (Average (None, 4, 4, 8)           0         \n"
                         "_________________________________________________________________\n"
                         "global_average_pooling2d (Gl (None, 8)                 0         \n"
                         "_________________________________________________________________\n"
                         "dense (Dense)                (None, 10)                90        \n"
                         "=================================================================\n"
                         "Total params: 314\n"
                         "Trainable params: 314\n"
                         "Non-trainable params: 0\n"
                         "_________________________________________________________________\n");

    using Text = Sequential<Input<Shape<40, 4>>, Conv1D<8, 3, Relu>, AveragePooling1D<2>, GlobalMaxPooling1D,
                            Dense<3, Softmax>>;
    std::ostringstream text;
    summary<Text>(text);
    CHECK(text.str().find("average_pooling1d (AveragePo (None, 19, 8)             0         \n") != std::string::npos);
    CHECK(text.str().find("global_max_pooling1d (Global (None, 8)                 0         \n") != std::string::npos);

    // Keras' auto-name prefixes, which its weights files use as group names.
    STATIC_REQUIRE(GlobalMaxPooling2D::base_name == "global_max_pooling2d");
    STATIC_REQUIRE(GlobalAveragePooling1D::base_name == "global_average_pooling1d");
    STATIC_REQUIRE(GlobalAveragePooling2D::class_name == "GlobalAveragePooling2D");
    STATIC_REQUIRE(AveragePooling1D<>::class_name == "AveragePooling1D");
}

TEST_CASE("summary of a model with BatchNormalization: Keras' Total, Trainable and Non-trainable counts",
          "[summary]")
{
    using namespace tpudsl;
    using Image = Sequential<Input<Shape<16, 16, 3>>, Conv2D<8, 3, Linear, Same>, BatchNormalization<>, Activation<Relu>,
                             GlobalAveragePooling2D, Dense<10>, BatchNormalization<0.9f>, Dense<3, Softmax>>;
    std::ostringstream image;
    summary<Image>(image);
    // Keras: 224 + 32 + 90 + 40 + 33 = 419, of which 2 x (8 + 10) = 36 moving statistics.
    CHECK(image.str().find("batch_normalization (BatchNo (None, 16, 16, 8)         32        \n") != std::string::npos);
    CHECK(image.str().find("batch_normalization_1 (Batch (None, 10)                40        \n") != std::string::npos);
    CHECK(image.str().find("Total params: 419\n"
                           "Trainable params: 383\n"
                           "Non-trainable params: 36\n") != std::string::npos);
    STATIC_REQUIRE(BatchNormalization<>::class_name == "BatchNormalization");
}

TEST_CASE("summary rows and auto-names of TimeDistributed", "[summary]")
{
    using namespace tpudsl;
    using Tagger = Sequential<Input<Shape<20, 8>>, Conv1D<16, 3, Relu, Same>, TimeDistributed<Dense<16, Relu>>,
                              TimeDistributed<Dense<5, Softmax>>>;
    std::ostringstream out;
    summary<Tagger>(out);
    CHECK(out.str() == "Model: \"sequential\"\n"
                       "_________________________________________________________________\n"
                       "Layer (type)                 Output Shape              Param #   \n"
                       "=================================================================\n"
                       "conv1d (Conv1D)              (None, 20, 16)            400       \n"
                       "_________________________________________________________________\n"
                       "time_distributed (TimeDistri (None, 20, 16)            272       \n"
                       "_________________________________________________________________\n"
                       "time_distributed_1 (TimeDist (None, 20, 5)             85        \n"
                       "=================================================================\n"
                       "Total params: 757\n"
                       "Trainable params: 757\n"
                       "Non-trainable params: 0\n"
                       "_________________________________________________________________\n");
    CHECK(Tagger::layer_name<1>() == "time_distributed");
    CHECK(Tagger::layer_name<2>() == "time_distributed_1");
    STATIC_REQUIRE(TimeDistributed<Dense<5>>::class_name == "TimeDistributed");
}

TEST_CASE("summary rows and auto-names of the recurrent layers", "[summary][recurrent]")
{
    using namespace tpudsl;
    using Text = Sequential<Input<Shape<300>, std::int32_t>, Embedding<30982, 7>, LSTM<64, true>, LSTM<32, true>, GRU<16, true>,
                            GRU<8>, Dense<46, Softmax>>;
    std::ostringstream text;
    summary<Text>(text);
    CHECK(text.str().find("lstm (LSTM)                  (None, 300, 64)           18432     \n") != std::string::npos);
    CHECK(text.str().find("lstm_1 (LSTM)                (None, 300, 32)           12416     \n") != std::string::npos);
    CHECK(text.str().find("gru (GRU)                    (None, 300, 16)           2400      \n") != std::string::npos);
    CHECK(text.str().find("gru_1 (GRU)                  (None, 8)                 624       \n") != std::string::npos);

    STATIC_REQUIRE(LSTM<4>::base_name == "lstm");
    STATIC_REQUIRE(LSTM<4>::class_name == "LSTM");
    STATIC_REQUIRE(GRU<4, true>::base_name == "gru");
    STATIC_REQUIRE(GRU<4, true>::class_name == "GRU");
}

namespace {
/// tests/fixtures/summaries/<name>.txt: tf.keras' own summary of the same model
/// (tests/keras/tf_keras_summaries.py).
std::string
tf_keras_summary(const std::string& name)
{
    std::ifstream in(std::string(TPUDSL_FIXTURES_DIR) + "/summaries/" + name + ".txt", std::ios::binary);
    REQUIRE(in);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

using tpudsl_tests::summary_text;
} // namespace

TEST_CASE("summaries equal tf.keras' print_summary of the same models, byte for byte: the seeds, ResNet-20, "
          "a shared layer, Dot, two inputs and two outputs",
          "[summary][graph]")
{
    CHECK(summary_text<seeds::FashionCnn>() == tf_keras_summary("fashion_mnist_cnn"));
    CHECK(summary_text<seeds::MnistMlp>() == tf_keras_summary("mnist_mlp"));
    CHECK(summary_text<seeds::Cifar10Cnn>() == tf_keras_summary("cifar10_cnn"));
    CHECK(summary_text<seeds::Reuters>() == tf_keras_summary("reuters_conv1d"));
    CHECK(summary_text<functional_models::ResNet20>() == tf_keras_summary("resnet20"));
    CHECK(summary_text<functional_models::SharedConv>() == tf_keras_summary("functional_shared"));
    CHECK(summary_text<functional_models::DotScores>() == tf_keras_summary("functional_dot"));
    CHECK(summary_text<functional_models::TextAndMetadata>() == tf_keras_summary("text_and_metadata"));
}
