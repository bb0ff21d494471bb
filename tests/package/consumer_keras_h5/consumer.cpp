// A user's program with Keras' HDF5 weights files: saves a model's weights as Keras 3 and Keras 2
// files and reads them back.
#include <tpudsl/tpudsl.hpp>

#include <cstdio>
#include <iostream>
#include <string>

using namespace tpudsl;

using Model = Sequential<Input<Shape<28, 28, 1>>, Flatten, Dense<10, Softmax>>;

int
main()
{
    static_assert(keras_h5_enabled, "tpudsl::keras_h5 defines TPUDSL_WITH_HDF5");
    Trainable<Model> a(1), b(2);
    for (const std::string path : {"consumer.weights.h5", "consumer.h5"}) {
        a.save_weights(path);
        b.load_weights(path);
        if (b.get_weights() != a.get_weights())
            return 1;
        std::remove(path.c_str());
    }
    std::cout << "keras_h5: saved and loaded .weights.h5 and .h5\n";
}
