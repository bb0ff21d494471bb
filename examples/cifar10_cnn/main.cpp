// The cifar10_cnn seed model: prints its Keras summary. Its shapes, weights and parameter count are
// checked at compile time, in model.hpp.
#include "model.hpp"

#include <iostream>

int
main()
{
    tpudsl::summary<seeds::Cifar10Cnn>(std::cout);
    return 0;
}
