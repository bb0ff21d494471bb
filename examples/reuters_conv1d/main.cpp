// The reuters_conv1d seed model: prints its Keras summary. Its shapes, weights and parameter count are
// checked at compile time, in model.hpp.
#include "model.hpp"

#include <iostream>

int
main()
{
    tpudsl::summary<seeds::Reuters>(std::cout);
    return 0;
}
