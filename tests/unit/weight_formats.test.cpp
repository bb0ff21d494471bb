// The path chooses a weights file's format; a program built without HDF5 (no TPUDSL_WITH_HDF5, as
// this one) refuses a Keras .h5 path with a message saying how to switch HDF5 on, and writes nothing.
#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

using namespace tpudsl;
namespace fs = std::filesystem;

#ifndef TPUDSL_WITH_HDF5

TEST_CASE("weights formats: without HDF5 a Keras .h5 path is refused, saying how to switch HDF5 on")
{
    using Tiny = Sequential<Input<Shape<2>>, Dense<2, Softmax>>;
    STATIC_REQUIRE_FALSE(keras_h5_enabled);
    Trainable<Tiny> model(1);
    const fs::path dir = fs::temp_directory_path() / ("tpudsl_formats_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    for (const std::string name : {"m.weights.h5", "m.h5"}) {
        const std::string path = (dir / name).string();
        std::string msg;
        try {
            model.save_weights(path);
        } catch (const std::invalid_argument& e) {
            msg = e.what();
        }
        INFO(msg);
        CHECK(msg.find("tpudsl::save_weights: '" + path + "' names a Keras HDF5 weights file") == 0);
        CHECK(msg.find("tpudsl::keras_h5") != std::string::npos);
        CHECK(msg.find("TPUDSL_WITH_HDF5") != std::string::npos);
        CHECK_FALSE(fs::exists(path));
        CHECK_THROWS_AS(model.load_weights(path), std::invalid_argument);
    }
    // Any other path is tpudsl's own format, as before.
    model.save_weights((dir / "m.weights").string());
    model.load_weights((dir / "m.weights").string());
    fs::remove_all(dir);
}

TEST_CASE("weights formats: without HDF5 a ModelCheckpoint to a .h5 path is refused when it is made, before training")
{
    for (const std::string path : {"ckpt-{epoch:02d}.weights.h5", "best.h5"}) {
        std::string msg;
        try {
            ModelCheckpoint checkpoint(path);
        } catch (const std::invalid_argument& e) {
            msg = e.what();
        }
        INFO(msg);
        CHECK(msg.find("tpudsl::ModelCheckpoint: '" + path + "' names a Keras HDF5 weights file") == 0);
        CHECK(msg.find("tpudsl::keras_h5") != std::string::npos);
    }
    CHECK_NOTHROW(ModelCheckpoint("ckpt-{epoch:02d}.weights"));
}

#endif

TEST_CASE("weights formats: the suffix chooses the format")
{
    STATIC_REQUIRE(weights_format_of("model.weights.h5") == weights_format::keras3_h5);
    STATIC_REQUIRE(weights_format_of("model.h5") == weights_format::keras2_h5);
    STATIC_REQUIRE(weights_format_of("weights.h5") == weights_format::keras2_h5);
    STATIC_REQUIRE(weights_format_of("model.h5.tmp") == weights_format::tpudsl);
    STATIC_REQUIRE(weights_format_of("model.bin") == weights_format::tpudsl);
    STATIC_REQUIRE(weights_format_of("") == weights_format::tpudsl);
}

TEST_CASE("weights formats: tpudsl's own file with a NaN, its checksum right, is refused naming the weight")
{
    using Tiny = Sequential<Input<Shape<2>>, Dense<3>, Dense<2, Softmax>>;
    using K = Tiny::layer<1>::weight<0>;   // the second Dense's kernel, (3, 2)
    const fs::path dir = fs::temp_directory_path() / ("tpudsl_nan_weights_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string path = (dir / "nan.bin").string();
    std::vector<float> w(Tiny::param_buffer_size, 0.5f);
    save_weights<Tiny>(path, w.data());

    // The same file with one float replaced by a NaN and the checksum made right again, as a writer
    // other than save_weights could make it.
    std::vector<unsigned char> bytes;
    {
        std::ifstream in(path, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const std::size_t floats = detail::weights_header_bytes;
    REQUIRE(bytes.size() == floats + 4 * Tiny::param_buffer_size + detail::weights_trailer_bytes);
    const std::uint32_t nan_bits = 0x7fc00000u;
    for (int b = 0; b < 4; ++b)
        bytes[floats + 4 * (K::offset + 5) + static_cast<std::size_t>(b)] = static_cast<unsigned char>(nan_bits >> (8 * b));
    detail::put_u64(bytes.data() + floats + 4 * Tiny::param_buffer_size,
                    detail::fnv1a(detail::fnv1a_offset, bytes.data() + floats, 4 * Tiny::param_buffer_size));
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }

    std::vector<float> params(Tiny::param_buffer_size, 7.0f);
    std::string msg;
    try {
        load_weights<Tiny>(path, params.data());
    } catch (const std::runtime_error& e) {
        msg = e.what();
    }
    CHECK(msg == "tpudsl::load_weights: '" + path +
                     "' holds nan at element 5 of the kernel of layer 1 'dense_1' (Dense); weights must be finite");
    CHECK(params == std::vector<float>(Tiny::param_buffer_size, 7.0f));

    // ... and save_weights never writes one.
    w[K::offset + 5] = std::numeric_limits<float>::infinity();
    const std::string fresh = (dir / "fresh.bin").string();
    try {
        save_weights<Tiny>(fresh, w.data());
        msg.clear();
    } catch (const std::runtime_error& e) {
        msg = e.what();
    }
    CHECK(msg.find("tpudsl::save_weights: '" + fresh + "' not written: the weights hold inf at element 5 of the "
                   "kernel of layer 1 'dense_1' (Dense)") == 0);
    CHECK_FALSE(fs::exists(fresh));
    fs::remove_all(dir);
}
