// A user's program on MultiWorkerStrategy, run here as a single MPI process (no mpirun): trains a
// small model two steps and says on how many workers.
#include <tpudsl/distribute/multi_worker.hpp>
#include <tpudsl/tpudsl.hpp>

#include <xtensor/xtensor.hpp>

#include <cstdint>
#include <iostream>
#include <sstream>

using namespace tpudsl;

using Model = Sequential<Input<Shape<4>>, Dense<3, Softmax>>;

#ifndef TPUDSL_WITH_MPI
#error "tpudsl::multi_worker defines TPUDSL_WITH_MPI"
#endif

int
main(int argc, char** argv)
{
    MpiClusterResolver resolver(&argc, &argv);
    MultiWorkerStrategy<1> strategy(resolver);
    auto model = strategy.scope<Model>(1);
    model.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    xt::xtensor<float, 2> x = xt::ones<float>({std::size_t{16}, std::size_t{4}});
    xt::xtensor<std::int32_t, 1> y = xt::zeros<std::int32_t>({std::size_t{16}});
    std::ostringstream quiet;
    model.fit(x, y, {.batch_size = 8, .epochs = 1, .verbose = 0, .out = &quiet});
    if (model.iterations() != 2)
        return 1;
    std::cout << "multi_worker: trained on " << strategy.workers() << " worker(s)\n";
}
