/// @file What the seed examples do with weights files: --load-weights after compile, --save-weights
/// after training. The format follows the path, as in Keras: `*.weights.h5` and `*.h5` are Keras' HDF5
/// files (when the program is built with HDF5), any other path tpudsl's own format. A file that cannot
/// be read or written ends the program with the library's message.
#ifndef TPUDSL_EXAMPLES_COMMON_PERSISTENCE_HPP
#define TPUDSL_EXAMPLES_COMMON_PERSISTENCE_HPP

#include "common/args.hpp"

#include <iostream>

namespace seeds {

/// --load-weights PATH: the compiled model's weights from PATH; without the flag, nothing.
template <class Model>
void
load_weights(Model& model, const Args& args)
{
    if (args.load_weights.empty())
        return;
    model.load_weights(args.load_weights);
    std::cout << "Weights: loaded from " << args.load_weights << '\n';
}

/// --save-weights PATH: the model's weights to PATH (written whole or not at all); without the flag,
/// nothing.
template <class Model>
void
save_weights(const Model& model, const Args& args)
{
    if (args.save_weights.empty())
        return;
    model.save_weights(args.save_weights);
    std::cout << "Weights: saved to " << args.save_weights << '\n';
}

} // namespace seeds

#endif
