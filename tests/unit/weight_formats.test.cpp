// The path chooses a weights file's format; a program built without HDF5 (no TPUDSL_WITH_HDF5, as
// this one) refuses a Keras .h5 path with a message saying how to switch HDF5 on, and writes nothing.
#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <stdexcept>
#include <string>

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
