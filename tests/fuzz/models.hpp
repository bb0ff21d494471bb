// The models the weights harnesses load into: real Sequentials of the library's own layers (the
// harnesses are built with a clang that compiles them: tests/fuzz/run.sh).
#ifndef TPUDSL_TESTS_FUZZ_MODELS_HPP
#define TPUDSL_TESTS_FUZZ_MODELS_HPP

#include <tpudsl/model.hpp>

namespace fuzz {

/// fuzz_weights and fuzz_training_state: 26 parameters in a buffer of 64 floats (each weight starts
/// on a 64-byte boundary), so that a file is a few hundred bytes.
using model = tpudsl::Sequential<tpudsl::Input<tpudsl::Shape<3>>, tpudsl::Dense<4, tpudsl::Relu>, tpudsl::Dense<2>>;

/// fuzz_keras_weights: the MNIST seed's network, layer for layer (Dense, Dropout, Dense, Dropout,
/// Dense: examples/mnist_mlp/model.hpp), at a width whose Keras files are a few kilobytes (the seed's
/// own are 2.7 MB, too large for a fuzzer to mutate to any effect).
using mlp = tpudsl::Sequential<tpudsl::Input<tpudsl::Shape<16>>, tpudsl::Dense<8, tpudsl::Relu>,
                               tpudsl::Dropout<0.2f>, tpudsl::Dense<8, tpudsl::Relu>, tpudsl::Dropout<0.2f>,
                               tpudsl::Dense<4, tpudsl::Softmax>>;

} // namespace fuzz

#endif // !TPUDSL_TESTS_FUZZ_MODELS_HPP
