// Keras' HDF5 weights files without Keras: both layouts written and read back bit for bit, their
// groups and attributes where Keras looks for them, and every file that does not fit the model (other
// layers, shapes or counts; not HDF5; truncated) refused with a message naming the file, the layer
// and both shapes, the parameters left as they were. Built with TPUDSL_WITH_HDF5 (tpudsl::keras_h5);
// the checks against real Keras are tests/keras.
#include "scratch_dir.hpp"

#include <tpudsl/functional.hpp>
#include <tpudsl/tpudsl.hpp>

#include <fashion_mnist_cnn/model.hpp>
#include <mnist_mlp/model.hpp>

#include <catch2/catch.hpp>
#include <xtensor/xarray.hpp>

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <unistd.h>

static_assert(tpudsl::keras_h5_enabled, "this test is built with TPUDSL_WITH_HDF5");

using namespace tpudsl;
namespace fs = std::filesystem;
using tpudsl_tests::scratch_dir;

namespace {

/// The Fashion-MNIST model with 32 filters instead of 64: same layers, other shapes.
using FashionNarrow = Sequential<Input<Shape<28, 28, 1>>, Conv2D<32, 3>, MaxPool2D<2>, Activation<Relu>, Flatten,
                                 Dense<10>, Activation<Softmax>>;
using TwoDense = Sequential<Input<Shape<3>>, Dense<4, Relu>, Dropout<0.5f>, Dense<2>>;
using Text = Sequential<Input<Shape<12>, std::int32_t>, Embedding<20, 3>, Conv1D<4, 3, Relu>, MaxPool1D<2>, Flatten,
                        Dense<5, Softmax>>;

/// Distinct values in every weight, zeros in the alignment padding between weights (which no file holds).
template <class Model>
std::vector<float>
pattern(float base)
{
    std::vector<float> w(Model::param_buffer_size, 0.0f);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (
            [&]<class L>(std::type_identity<L>) {
                [&]<std::size_t... J>(std::index_sequence<J...>) {
                    (
                        [&]<class W>(std::type_identity<W>) {
                            for (std::size_t i = 0; i < W::size; ++i)
                                w[W::offset + i] = base + static_cast<float>((W::offset + i) % 1000) * 0.001f;
                        }(std::type_identity<typename L::template weight<J>>{}),
                        ...);
                }(std::make_index_sequence<L::weight_count>{});
            }(std::type_identity<typename Model::template layer<I>>{}),
            ...);
    }(std::make_index_sequence<Model::layer_count>{});
    return w;
}

/// The message of what `f` throws (an exception of type E), or "" when it throws nothing.
template <class E, class F>
std::string
message_of(F&& f)
{
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    return "";
}

struct h5file {
    hid_t id;
    explicit h5file(const std::string& path) : id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)) {}
    ~h5file()
    {
        if (id >= 0)
            H5Fclose(id);
    }
    [[nodiscard]] bool
    has(const std::string& p) const
    {
        return detail::h5::has_link(detail::h5::context{"test", "read"}, id, p);
    }
    [[nodiscard]] std::vector<std::size_t>
    shape(const std::string& p) const
    {
        const hid_t ds = H5Dopen2(id, p.c_str(), H5P_DEFAULT);
        const hid_t sp = H5Dget_space(ds);
        std::vector<hsize_t> d(static_cast<std::size_t>(H5Sget_simple_extent_ndims(sp)));
        H5Sget_simple_extent_dims(sp, d.data(), nullptr);
        H5Sclose(sp);
        H5Dclose(ds);
        return {d.begin(), d.end()};
    }
};

} // namespace

TEST_CASE("keras_h5: Keras' to_snake_case of the class names")
{
    CHECK(detail::h5::to_snake_case("Conv2D") == "conv2d");
    CHECK(detail::h5::to_snake_case("MaxPooling2D") == "max_pooling2d");
    CHECK(detail::h5::to_snake_case("MaxPooling1D") == "max_pooling1d");
    CHECK(detail::h5::to_snake_case("Embedding") == "embedding");
    CHECK(detail::h5::to_snake_case("BatchNormalization") == "batch_normalization");
    CHECK(detail::h5::to_snake_case("GRU") == "gru");
    CHECK(detail::h5::to_snake_case("HTTPServerLayer") == "http_server_layer");
    CHECK(detail::h5::to_snake_case("XAbCd") == "x_ab_cd");
}

TEST_CASE("keras_h5: Keras 3 layout, written and read back bit for bit")
{
    scratch_dir dir("keras_h5_k3");
    const std::string path = dir / "fashion.weights.h5";
    const auto w = pattern<seeds::FashionCnn>(0.5f);
    Trainable<seeds::FashionCnn> a(1);
    a.set_weights(w);
    a.save_weights(path);

    {
        const h5file f(path);
        REQUIRE(f.id >= 0);
        CHECK(f.has("vars"));
        for (const char* g : {"conv2d", "max_pooling2d", "activation", "flatten", "dense", "activation_1"})
            CHECK(f.has(std::string("layers/") + g + "/vars"));
        CHECK(f.shape("layers/conv2d/vars/0") == std::vector<std::size_t>{3, 3, 1, 64});
        CHECK(f.shape("layers/conv2d/vars/1") == std::vector<std::size_t>{64});
        CHECK(f.shape("layers/dense/vars/0") == std::vector<std::size_t>{10816, 10});
        CHECK_FALSE(f.has("layers/conv2d/vars/2"));
        CHECK_FALSE(f.has("layers/flatten/vars/0"));
    }
    CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}) == 1);   // no temporary left

    Trainable<seeds::FashionCnn> b(2);
    REQUIRE(b.get_weights() != w);
    b.load_weights(path);
    CHECK(b.get_weights() == w);
}

TEST_CASE("keras_h5: Keras 2 layout, written and read back bit for bit")
{
    scratch_dir dir("keras_h5_k2");
    const std::string path = dir / "text.h5";
    const auto w = pattern<Text>(-0.25f);
    Trainable<Text> a(1);
    a.set_weights(w);
    a.save_weights(path);

    {
        const h5file f(path);
        REQUIRE(f.id >= 0);
        CHECK(f.shape("embedding/embedding/embeddings:0") == std::vector<std::size_t>{20, 3});
        CHECK(f.shape("conv1d/conv1d/kernel:0") == std::vector<std::size_t>{3, 3, 4});
        CHECK(f.shape("dense/dense/bias:0") == std::vector<std::size_t>{5});
        CHECK(f.has("max_pooling1d"));
        const detail::h5::context ctx{"test", path};
        CHECK(detail::h5::read_string_attribute(ctx, f.id, "layer_names", "the file") ==
              std::vector<std::string>{"embedding", "conv1d", "max_pooling1d", "flatten", "dense"});
        const hid_t g = H5Gopen2(f.id, "dense", H5P_DEFAULT);
        CHECK(detail::h5::read_string_attribute(ctx, g, "weight_names", "dense") ==
              std::vector<std::string>{"dense/kernel:0", "dense/bias:0"});
        H5Gclose(g);
    }

    Trainable<Text> b(2);
    b.load_weights(path);
    CHECK(b.get_weights() == w);
}

TEST_CASE("keras_h5: BatchNormalization's four weights, moving statistics included, in both layouts")
{
    using Normalized = Sequential<Input<Shape<6, 6, 2>>, Conv2D<4, 3>, BatchNormalization<>, Flatten, Dense<3>,
                                  BatchNormalization<0.9f>>;
    scratch_dir dir("keras_h5_bn");
    const std::string k3 = dir / "bn.weights.h5", k2 = dir / "bn.h5";
    const auto w = pattern<Normalized>(0.75f);
    save_keras_weights<Normalized>(k3, w.data(), keras_h5_layout::keras3);
    save_keras_weights<Normalized>(k2, w.data(), keras_h5_layout::keras2);
    {
        const h5file f3(k3), f2(k2);
        for (int v = 0; v < 4; ++v)
            CHECK(f3.shape("layers/batch_normalization/vars/" + std::to_string(v)) == std::vector<std::size_t>{4});
        CHECK(f3.shape("layers/batch_normalization_1/vars/3") == std::vector<std::size_t>{3});
        CHECK_FALSE(f3.has("layers/batch_normalization/vars/4"));
        const detail::h5::context ctx{"test", k2};
        const hid_t g = H5Gopen2(f2.id, "batch_normalization", H5P_DEFAULT);
        CHECK(detail::h5::read_string_attribute(ctx, g, "weight_names", "batch_normalization") ==
              std::vector<std::string>{"batch_normalization/gamma:0", "batch_normalization/beta:0",
                                       "batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"});
        H5Gclose(g);
    }
    for (const auto& path : {k3, k2}) {
        std::vector<float> back(Normalized::param_buffer_size, 0.0f);
        load_keras_weights<Normalized>(path, back.data());
        CHECK(back == w);
    }
}

TEST_CASE("keras_h5: layers of one class are numbered as Keras numbers them")
{
    scratch_dir dir("keras_h5_names");
    const std::string k3 = dir / "m.weights.h5", k2 = dir / "m.h5";
    const auto w = pattern<TwoDense>(1.0f);
    save_keras_weights<TwoDense>(k3, w.data(), keras_h5_layout::keras3);
    save_keras_weights<TwoDense>(k2, w.data(), keras_h5_layout::keras2);
    const h5file f3(k3), f2(k2);
    CHECK(f3.shape("layers/dense/vars/0") == std::vector<std::size_t>{3, 4});
    CHECK(f3.shape("layers/dense_1/vars/0") == std::vector<std::size_t>{4, 2});
    CHECK(f3.has("layers/dropout/vars"));
    CHECK(f2.shape("dense_1/dense_1/kernel:0") == std::vector<std::size_t>{4, 2});

    // Either layout is read from either name: the groups tell which.
    std::vector<float> back(TwoDense::param_buffer_size, 0.0f);
    load_keras_weights<TwoDense>(k3, back.data());
    CHECK(back == w);
    std::fill(back.begin(), back.end(), 0.0f);
    load_keras_weights<TwoDense>(k2, back.data());
    CHECK(back == w);
}

TEST_CASE("keras_h5: a Functional model's layers in Keras' order, its InputLayer and a shared layer once")
{
    // The shortcut declared first; Keras lists layers by depth, so the branch's Dense comes first.
    using Graph = Functional<Node<"x", Input<Shape<4>>>, Node<"shortcut", Dense<4>, "x">, Node<"a", Dense<4, Relu>, "x">,
                             Node<"a_again", Shared<"a">>, Node<"sum", Add, "a_again", "shortcut">,
                             Node<"head", Dense<2>>>;
    scratch_dir dir("keras_h5_functional");
    const std::string k3 = dir / "g.weights.h5", k2 = dir / "g.h5";
    const auto w = pattern<Graph>(0.5f);
    save_keras_weights<Graph>(k3, w.data(), keras_h5_layout::keras3);
    save_keras_weights<Graph>(k2, w.data(), keras_h5_layout::keras2);
    {
        const h5file f3(k3), f2(k2);
        CHECK(f3.has("layers/input_layer/vars"));
        CHECK_FALSE(f3.has("layers/input_layer/vars/0"));
        CHECK(f3.has("layers/add/vars"));
        CHECK_FALSE(f3.has("layers/dense_3"));   // three Dense layers: a, shortcut, head
        // the Dense of the deeper branch (a, called twice) comes first
        const detail::h5::context ctx{"test", k3};
        const hid_t g = H5Gopen2(f3.id, "layers/dense/vars", H5P_DEFAULT);
        CHECK(detail::h5::read_string_attribute(ctx, g, "name", "layers/dense/vars") == std::vector<std::string>{"a"});
        H5Gclose(g);
        const hid_t own = H5Gopen2(f3.id, "vars", H5P_DEFAULT);
        CHECK(detail::h5::read_string_attribute(ctx, own, "name", "vars") == std::vector<std::string>{"functional"});
        H5Gclose(own);
        CHECK(f3.shape("layers/dense_2/vars/0") == std::vector<std::size_t>{4, 2});
        const detail::h5::context ctx2{"test", k2};
        CHECK(detail::h5::read_string_attribute(ctx2, f2.id, "layer_names", "/") ==
              std::vector<std::string>{"x", "a", "shortcut", "sum", "head"});
        CHECK(f2.shape("shortcut/shortcut/kernel:0") == std::vector<std::size_t>{4, 4});
    }
    for (const auto& path : {k3, k2}) {
        std::vector<float> back(Graph::param_buffer_size, 0.0f);
        load_keras_weights<Graph>(path, back.data());
        CHECK(back == w);
    }
}

TEST_CASE("keras_h5: TimeDistributed keeps its Dense's weights where Keras keeps them")
{
    // Keras 3: `layers/time_distributed/vars` empty, the wrapped Dense's in `layer/vars`, named as Keras
    // names the Dense (made before its wrapper, counted with the model's other Dense layers).
    using Wrapped = Sequential<Input<Shape<6, 3>>, TimeDistributed<Dense<5, Relu>>, TimeDistributed<Dense<2, Softmax>>>;
    using Tagger = Sequential<Input<Shape<6, 3>>, TimeDistributed<Dense<4>>, Flatten, Dense<3>, Dense<2>>;
    scratch_dir dir("keras_h5_td");
    const std::string k3 = dir / "td.weights.h5", k2 = dir / "td.h5";
    const auto w = pattern<Wrapped>(0.75f);
    save_keras_weights<Wrapped>(k3, w.data(), keras_h5_layout::keras3);
    save_keras_weights<Wrapped>(k2, w.data(), keras_h5_layout::keras2);
    {
        const h5file f3(k3), f2(k2);
        CHECK(f3.has("layers/time_distributed/vars"));
        CHECK_FALSE(f3.has("layers/time_distributed/vars/0"));
        CHECK(f3.shape("layers/time_distributed/layer/vars/0") == std::vector<std::size_t>{3, 5});
        CHECK(f3.shape("layers/time_distributed/layer/vars/1") == std::vector<std::size_t>{5});
        CHECK(f3.shape("layers/time_distributed_1/layer/vars/0") == std::vector<std::size_t>{5, 2});
        const detail::h5::context ctx{"test", k3};
        const hid_t g = H5Gopen2(f3.id, "layers/time_distributed_1/layer/vars", H5P_DEFAULT);
        CHECK(detail::h5::read_string_attribute(ctx, g, "name", "vars") == std::vector<std::string>{"dense_1"});
        H5Gclose(g);
        // Keras 2: the wrapper's group, its weights named after it (tf-keras builds the Dense in its scope).
        CHECK(f2.shape("time_distributed/time_distributed/kernel:0") == std::vector<std::size_t>{3, 5});
        CHECK(f2.shape("time_distributed_1/time_distributed_1/bias:0") == std::vector<std::size_t>{2});
    }
    for (const auto& path : {k3, k2}) {
        Trainable<Wrapped> b(2);
        REQUIRE(b.get_weights() != w);
        b.load_weights(path);
        CHECK(b.get_weights() == w);
    }
    // The Dense layers after it are named after the one it wraps, as Keras names them; their Keras 3
    // groups are numbered by class (dense, dense_1) as ever.
    const auto named = detail::h5::layers_of<Tagger>();
    CHECK(named[0].wrapped == "dense");
    CHECK(named[0].vars_path() == "time_distributed/layer/vars");
    CHECK(named[2].name == "dense_1");
    CHECK(named[3].name == "dense_2");
    CHECK(named[2].vars_path() == "dense/vars");
    CHECK(named[2].wrapped.empty());
}

TEST_CASE("keras_h5: a file of another model is refused, naming the file, the layer and both shapes")
{
    scratch_dir dir("keras_h5_mismatch");
    Trainable<seeds::FashionCnn> wide(1);
    Trainable<FashionNarrow> narrow(2);
    const auto before = narrow.get_weights();

    for (const std::string name : {"fashion.weights.h5", "fashion.h5"}) {
        const std::string path = dir / name;
        wide.save_weights(path);
        const std::string msg = message_of<std::runtime_error>([&] { narrow.load_weights(path); });
        INFO(msg);
        CHECK(msg.find("tpudsl::load_weights: '" + path + "'") == 0);
        CHECK(msg.find("'conv2d' (Conv2D)") != std::string::npos);
        CHECK(msg.find("(3, 3, 1, 64)") != std::string::npos);
        CHECK(msg.find("(3, 3, 1, 32)") != std::string::npos);
        CHECK(narrow.get_weights() == before);
    }
}

TEST_CASE("keras_h5: a file with other layers or another count of layers is refused")
{
    scratch_dir dir("keras_h5_layers");
    Trainable<seeds::MnistMlp> mlp(1);
    Trainable<seeds::FashionCnn> cnn(2);
    const auto before = cnn.get_weights();

    mlp.save_weights(dir / "mlp.weights.h5");
    std::string msg = message_of<std::runtime_error>([&] { cnn.load_weights(dir / "mlp.weights.h5"); });
    INFO(msg);
    CHECK(msg.find("'layers/dense_1'") != std::string::npos);   // the first of the file's groups the model lacks
    CHECK(msg.find("this model does not have") != std::string::npos);

    // A group without weights that the model lacks, as a functional Keras model's input_layer, is passed over.
    {
        const auto w = pattern<TwoDense>(2.0f);
        save_keras_weights<TwoDense>(dir / "functional.weights.h5", w.data(), keras_h5_layout::keras3);
        const hid_t f = H5Fopen((dir / "functional.weights.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
        const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
        H5Pset_create_intermediate_group(lcpl, 1);
        H5Gclose(H5Gcreate2(f, "layers/input_layer/vars", lcpl, H5P_DEFAULT, H5P_DEFAULT));
        H5Pclose(lcpl);
        H5Fclose(f);
        std::vector<float> back(TwoDense::param_buffer_size, 0.0f);
        load_keras_weights<TwoDense>(dir / "functional.weights.h5", back.data());
        CHECK(back == w);
    }

    mlp.save_weights(dir / "mlp.h5");
    msg = message_of<std::runtime_error>([&] { cnn.load_weights(dir / "mlp.h5"); });
    INFO(msg);
    // Matched in order, as Keras does: the MLP's first dense layer against the CNN's conv2d.
    CHECK(msg.find("(784, 512)") != std::string::npos);
    CHECK(msg.find("(3, 3, 1, 64)") != std::string::npos);
    CHECK(msg.find("'conv2d' (Conv2D)") != std::string::npos);
    CHECK(cnn.get_weights() == before);

    // A count that differs, with shapes that agree as far as they go.
    using OneDense = Sequential<Input<Shape<3>>, Dense<4, Relu>>;
    const auto w = pattern<TwoDense>(0.0f);
    save_keras_weights<TwoDense>(dir / "two.h5", w.data(), keras_h5_layout::keras2);
    std::vector<float> one(OneDense::param_buffer_size, 0.0f);
    msg = message_of<std::runtime_error>([&] { load_keras_weights<OneDense>(dir / "two.h5", one.data()); });
    CHECK(msg.find("holds weights for 2 layers; this model has 1 layers with weights, and none for the file's "
                   "layer 'dense_1'") != std::string::npos);
    save_keras_weights<OneDense>(dir / "one.weights.h5", one.data(), keras_h5_layout::keras3);
    std::vector<float> two(TwoDense::param_buffer_size, 0.0f);
    msg = message_of<std::runtime_error>([&] { load_keras_weights<TwoDense>(dir / "one.weights.h5", two.data()); });
    CHECK(msg.find("has no group 'layers/dense_1/vars' for layer 2 'dense_1' (Dense), which has 2 weights") !=
          std::string::npos);
}

TEST_CASE("keras_h5: what is not an HDF5 weights file is refused with a clear message")
{
    scratch_dir dir("keras_h5_bad");
    Trainable<TwoDense> m(1);
    const auto before = m.get_weights();

    {
        std::ofstream(dir / "text.h5") << "not an HDF5 file at all\n";
    }
    std::string msg = message_of<std::runtime_error>([&] { m.load_weights(dir / "text.h5"); });
    CHECK(msg == "tpudsl::load_weights: '" + (dir / "text.h5") + "' is not an HDF5 file (a Keras weights file "
                                                                  ".weights.h5 or .h5 is one)");

    // A good file cut in half.
    m.save_weights(dir / "whole.weights.h5");
    std::ifstream in(dir / "whole.weights.h5", std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::ofstream(dir / "half.weights.h5", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    msg = message_of<std::runtime_error>([&] { m.load_weights(dir / "half.weights.h5"); });
    INFO(msg);
    CHECK(msg.find("tpudsl::load_weights: '" + (dir / "half.weights.h5") + "'") == 0);

    // An HDF5 file that is no Keras file: a TPUDSL file's groups are absent.
    {
        const hid_t f = H5Fcreate((dir / "empty.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        H5Fclose(f);
    }
    msg = message_of<std::runtime_error>([&] { m.load_weights(dir / "empty.h5"); });
    CHECK(msg.find("it is not a Keras weights file") != std::string::npos);

    CHECK(message_of<std::system_error>([&] { m.load_weights(dir / "missing.h5"); }).find("cannot open") !=
          std::string::npos);
    CHECK(message_of<std::runtime_error>([&] { m.load_weights(dir.path.string() + "/"); }).find("directory") !=
          std::string::npos);
    CHECK(m.get_weights() == before);
}

TEST_CASE("keras_h5: float64 datasets, as some Keras files hold, are converted")
{
    scratch_dir dir("keras_h5_f64");
    const std::string path = dir / "f64.weights.h5";
    const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    const double kernel[3][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}};
    const double bias[4] = {-1, -2, -3, -4};
    auto put = [&](const char* name, hsize_t rank, const hsize_t* dims, const double* data) {
        const hid_t sp = H5Screate_simple(static_cast<int>(rank), dims, nullptr);
        const hid_t ds = H5Dcreate2(f, name, H5T_IEEE_F64LE, sp, lcpl, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
        H5Dclose(ds);
        H5Sclose(sp);
    };
    const hsize_t kd[2] = {3, 4}, bd[1] = {4};
    put("layers/dense/vars/0", 2, kd, &kernel[0][0]);
    put("layers/dense/vars/1", 1, bd, bias);
    H5Pclose(lcpl);
    H5Fclose(f);

    using OneDense = Sequential<Input<Shape<3>>, Dense<4>>;
    std::vector<float> w(OneDense::param_buffer_size, 0.0f);
    load_keras_weights<OneDense>(path, w.data());
    using K = OneDense::layer<0>::weight<0>;
    using B = OneDense::layer<0>::weight<1>;
    CHECK(w[K::offset + 0] == 1.0f);
    CHECK(w[K::offset + 11] == 12.0f);
    CHECK(w[B::offset + 3] == -4.0f);
}

namespace {

using TinyCnn = Sequential<Input<Shape<6, 6, 2>>, Conv2D<3, 3, Relu, Same>, Conv2D<4, 3>, MaxPool2D<2>, Activation<Relu>,
                           Dropout<0.25f>, Flatten, Dense<5, Relu>, Dense<3, Softmax>>;

/// The array `<name> <what>` of tests/fixtures/keras2/tiny.txt.
std::vector<double>
fixture_array(const std::string& name, const std::string& what)
{
    std::ifstream in(std::string(TPUDSL_FIXTURES_DIR) + "/keras2/tiny.txt");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string n, w;
        words >> n >> w;
        if (n == name && w == what)
            return {std::istream_iterator<double>(words), std::istream_iterator<double>()};
    }
    FAIL("tiny.txt has no line '" << name << ' ' << what << "'");
    return {};
}

template <class Model>
void
check_keras2_fixture(const std::string& name)
{
    using T = typename Model::input_type;
    const auto xs = fixture_array(name, "x");
    const auto ys = fixture_array(name, "y");
    std::vector<std::size_t> shape{xs.size() / Model::input_shape::size};
    for (std::size_t d : Model::input_shape::dims)
        shape.push_back(d);
    xt::xarray<T> x(shape);
    std::transform(xs.begin(), xs.end(), x.begin(), [](double v) { return static_cast<T>(v); });

    Trainable<Model> model(5);
    model.load_weights(std::string(TPUDSL_FIXTURES_DIR) + "/keras2/" + name + ".h5");
    const auto p = model.predict(x);
    REQUIRE(p.size() == ys.size());
    for (std::size_t i = 0; i < p.size(); ++i)
        CHECK(std::abs(p[i] - ys[i]) <= 1e-5);
}

} // namespace

TEST_CASE("keras_h5: files written by tf-keras 2 are read, and predict what tf-keras predicted")
{
    check_keras2_fixture<TinyCnn>("tiny_cnn");
    check_keras2_fixture<Text>("tiny_text");
}

TEST_CASE("keras_h5: the example of docs/interop.md")
{
    scratch_dir dir("keras_h5_docs");
    struct back_to {
        fs::path where;
        ~back_to() { fs::current_path(where); }
    } restore{fs::current_path()};
    fs::current_path(dir.path);

    // [interop_save_load]
    Trainable<seeds::FashionCnn> model(/*seed*/ 0);
    model.save_weights("fashion.weights.h5");   // Keras 3's layout
    model.save_weights("fashion.h5");           // Keras 2's (tf.keras) legacy layout
    model.load_weights("fashion.weights.h5");   // or any .h5 Keras wrote, whole-model files too
    // [interop_save_load]

    const auto w = model.get_weights();
    Trainable<seeds::FashionCnn> other(1);
    other.load_weights("fashion.h5");
    CHECK(other.get_weights() == w);
}

TEST_CASE("keras_h5: ModelCheckpoint writes Keras files when its path ends in .h5")
{
    scratch_dir dir("keras_h5_checkpoint");
    xt::xarray<float> x(std::vector<std::size_t>{8, 3});
    xt::xarray<std::int32_t> y(std::vector<std::size_t>{8});
    for (std::size_t i = 0; i < 8; ++i) {
        for (std::size_t j = 0; j < 3; ++j)
            x(i, j) = static_cast<float>((i * 3 + j) % 5) * 0.3f - 0.6f;
        y(i) = static_cast<std::int32_t>(i % 2);
    }
    Trainable<TwoDense> model(3);
    model.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{});
    ModelCheckpoint every(dir / "ckpt-{epoch:02d}.weights.h5");
    model.fit(x, y, {.batch_size = 4, .epochs = 2, .verbose = 0, .callbacks = {every}});

    Trainable<TwoDense> other(4);
    other.load_weights(dir / "ckpt-02.weights.h5");
    CHECK(other.get_weights() == model.get_weights());
    const h5file f(dir / "ckpt-01.weights.h5");
    CHECK(f.has("layers/dense_1/vars/1"));
}

TEST_CASE("keras_h5: Keras 2 files that lie about their layers or weights are refused")
{
    using OneDense = Sequential<Input<Shape<3>>, Dense<4>>;
    scratch_dir dir("keras_h5_lying");
    const auto w = pattern<OneDense>(0.5f);
    std::vector<float> params(OneDense::param_buffer_size, 7.0f);
    const auto before = params;

    // Writes a Keras 2 file of OneDense, then lets `edit` change it through HDF5.
    auto lying_file = [&](const std::string& name, auto edit) {
        const std::string path = dir / name;
        save_keras_weights<OneDense>(path, w.data(), keras_h5_layout::keras2);
        const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
        REQUIRE(f >= 0);
        edit(f);
        H5Fclose(f);
        return path;
    };
    auto string_list = [](hid_t obj, const char* attr, std::vector<std::string> values) {
        H5Adelete(obj, attr);
        const detail::h5::context ctx{"test", "edit"};
        detail::h5::write_string_list_attribute(ctx, obj, attr, values);
    };

    std::string path = lying_file("ghost.h5", [&](hid_t f) { string_list(f, "layer_names", {"dense", "ghost"}); });
    std::string msg = message_of<std::runtime_error>([&] { load_keras_weights<OneDense>(path, params.data()); });
    CHECK(msg == "tpudsl::load_weights: '" + path + "' lists a layer 'ghost' in 'layer_names' but has no group for it");

    path = lying_file("missing.h5", [&](hid_t f) {
        const hid_t g = H5Gopen2(f, "dense", H5P_DEFAULT);
        string_list(g, "weight_names", {"dense/kernel:0", "dense/nothing:0"});
        H5Gclose(g);
    });
    msg = message_of<std::runtime_error>([&] { load_keras_weights<OneDense>(path, params.data()); });
    INFO(msg);
    CHECK(msg.find("has no dataset for 'dense/nothing:0' of its layer 'dense', the bias of layer 0 'dense' (Dense)") !=
          std::string::npos);

    path = lying_file("numbers.h5", [&](hid_t f) {
        H5Adelete(f, "layer_names");
        const hsize_t n = 1;
        const hid_t sp = H5Screate_simple(1, &n, nullptr);
        const hid_t a = H5Acreate2(f, "layer_names", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT);
        const int v = 3;
        H5Awrite(a, H5T_NATIVE_INT, &v);
        H5Aclose(a);
        H5Sclose(sp);
    });
    msg = message_of<std::runtime_error>([&] { load_keras_weights<OneDense>(path, params.data()); });
    CHECK(msg.find("has an attribute 'layer_names' of the file that holds no strings") != std::string::npos);

    path = lying_file("integers.h5", [&](hid_t f) {
        H5Ldelete(f, "dense/dense/bias:0", H5P_DEFAULT);
        const hsize_t n = 4;
        const hid_t sp = H5Screate_simple(1, &n, nullptr);
        const hid_t d = H5Dcreate2(f, "dense/dense/bias:0", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dclose(d);
        H5Sclose(sp);
    });
    msg = message_of<std::runtime_error>([&] { load_keras_weights<OneDense>(path, params.data()); });
    CHECK(msg.find("holds 'dense/bias:0' of its layer 'dense', the bias of layer 0 'dense' (Dense) in a dataset that "
                   "is not of floating-point numbers") != std::string::npos);
    CHECK(params == before);
}

TEST_CASE("keras_h5: threads save and load Keras files at the same time")
{
    scratch_dir dir("keras_h5_threads");
    const auto w = pattern<Text>(0.125f);
    std::vector<std::thread> threads;
    std::vector<int> ok(4, 0);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            const std::string path = dir / ("t" + std::to_string(t) + (t % 2 ? ".h5" : ".weights.h5"));
            for (int round = 0; round < 5; ++round) {
                save_keras_weights<Text>(path, w.data(), t % 2 ? keras_h5_layout::keras2 : keras_h5_layout::keras3);
                std::vector<float> back(Text::param_buffer_size, 0.0f);
                load_keras_weights<Text>(path, back.data());
                ok[static_cast<std::size_t>(t)] += back == w;
            }
        });
    for (auto& th : threads)
        th.join();
    CHECK(ok == std::vector<int>(4, 5));
}

TEST_CASE("keras_h5: LSTM and GRU weights are their cells', in both layouts")
{
    using Recurrent = Sequential<Input<Shape<10>, std::int32_t>, Embedding<20, 3>, LSTM<4, true>, GRU<5, true>, LSTM<2>,
                                 Dense<3, Softmax>>;
    scratch_dir dir("keras_h5_recurrent");
    const std::string k3 = dir / "r.weights.h5", k2 = dir / "r.h5";
    const auto w = pattern<Recurrent>(0.75f);
    save_keras_weights<Recurrent>(k3, w.data(), keras_h5_layout::keras3);
    save_keras_weights<Recurrent>(k2, w.data(), keras_h5_layout::keras2);
    {
        // Keras 3: layers/lstm/vars empty (named lstm), layers/lstm/cell/vars/0..2 (named lstm_cell).
        const h5file f(k3);
        CHECK(f.has("layers/lstm/vars"));
        CHECK_FALSE(f.has("layers/lstm/vars/0"));
        CHECK(f.shape("layers/lstm/cell/vars/0") == std::vector<std::size_t>{3, 16});
        CHECK(f.shape("layers/lstm/cell/vars/1") == std::vector<std::size_t>{4, 16});
        CHECK(f.shape("layers/lstm/cell/vars/2") == std::vector<std::size_t>{16});
        CHECK(f.shape("layers/gru/cell/vars/0") == std::vector<std::size_t>{4, 15});
        CHECK(f.shape("layers/gru/cell/vars/1") == std::vector<std::size_t>{5, 15});
        CHECK(f.shape("layers/gru/cell/vars/2") == std::vector<std::size_t>{2, 15});
        CHECK(f.shape("layers/lstm_1/cell/vars/1") == std::vector<std::size_t>{2, 8});
        const detail::h5::context ctx{"test", k3};
        const hid_t g = H5Gopen2(f.id, "layers/lstm_1/cell/vars", H5P_DEFAULT);
        CHECK(detail::h5::read_string_attribute(ctx, g, "name", "cell") == std::vector<std::string>{"lstm_cell"});
        H5Gclose(g);
    }
    {
        // Keras 2: lstm/lstm_cell/kernel:0, as tf.keras names them.
        const h5file f(k2);
        CHECK(f.shape("lstm/lstm/lstm_cell/kernel:0") == std::vector<std::size_t>{3, 16});
        CHECK(f.shape("gru/gru/gru_cell/bias:0") == std::vector<std::size_t>{2, 15});
        const detail::h5::context ctx{"test", k2};
        const hid_t g = H5Gopen2(f.id, "lstm_1", H5P_DEFAULT);
        CHECK(detail::h5::read_string_attribute(ctx, g, "weight_names", "lstm_1") ==
              std::vector<std::string>{"lstm_1/lstm_cell/kernel:0", "lstm_1/lstm_cell/recurrent_kernel:0",
                                       "lstm_1/lstm_cell/bias:0"});
        H5Gclose(g);
    }
    for (const auto& path : {k3, k2}) {
        std::vector<float> back(Recurrent::param_buffer_size, 0.0f);
        load_keras_weights<Recurrent>(path, back.data());
        CHECK(back == w);
    }
}
