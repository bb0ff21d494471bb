// A worker that fails in the middle of fit: `failing_worker kill R` makes worker R kill itself with
// SIGKILL at its third step, `failing_worker throw R` makes it throw from a callback (the exception
// leaves main). The job must end, on every worker, with a message that says so, well before the
// test's timeout (tests/CMakeLists.txt, label mpi); a hang fails it.
#include "fashion_mnist_cnn/model.hpp"

#include <tpudsl/distribute/multi_worker.hpp>
#include <tpudsl/tpudsl.hpp>

#include <xtensor/xtensor.hpp>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

using namespace tpudsl;

namespace {

class Failure : public Callback {
public:
    Failure(std::string how, bool here) : how_(std::move(how)), here_(here) {}
    void
    on_train_batch_end(std::size_t batch, const Logs&, TrainingControl&) override
    {
        if (!here_ || batch != 2)
            return;
        if (how_ == "kill")
            std::raise(SIGKILL);
        throw std::runtime_error("a callback failed on purpose at batch 2");
    }

private:
    std::string how_;
    bool here_;
};

} // namespace

int
main(int argc, char** argv)
{
    if (argc != 3) {
        std::cerr << "usage: failing_worker kill|throw RANK\n";
        return 2;
    }
    MpiClusterResolver resolver(&argc, &argv);
    const MultiWorkerStrategy<1> strategy(resolver);
    auto model = strategy.scope<seeds::FashionCnn>(1);
    model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    xt::xtensor<float, 4> x = xt::zeros<float>({std::size_t{640}, std::size_t{28}, std::size_t{28}, std::size_t{1}});
    xt::xtensor<std::int32_t, 1> y = xt::zeros<std::int32_t>({std::size_t{640}});
    std::ostringstream quiet;
    model.fit(x, y,
              {.batch_size = 32, .epochs = 1000, .verbose = 0, .callbacks = {Failure(argv[1], resolver.rank() == std::atoi(argv[2]))},
               .out = &quiet});
    std::cerr << "failing_worker: fit ended without the failure\n";
    return 0;
}
