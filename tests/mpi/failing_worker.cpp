// A worker that fails in the middle of fit: `failing_worker kill R` makes worker R kill itself with
// SIGKILL at its third step, `failing_worker throw R` makes it throw from a callback (the exception
// leaves main). The job must end, on every worker, with a message that says so, well before the
// test's timeout (tests/CMakeLists.txt, label mpi); a hang fails it.
//
// With `--backup DIR --save PATH --epochs N [--fail-epoch E]` it trains N epochs with BackupAndRestore
// in DIR (a backup at each epoch's end), fails in epoch E (0-based; `none` for no failure), and the
// chief writes the final weights to PATH: the same command run again after a failure resumes from the
// chief's backup, and must end with the weights of a run that never failed (expect_resume.cmake).
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
    Failure(std::string how, bool here, std::size_t epoch) : how_(std::move(how)), here_(here), fail_epoch_(epoch) {}
    void on_epoch_begin(std::size_t epoch, Logs&, TrainingControl&) override { epoch_ = epoch; }
    void
    on_train_batch_end(std::size_t batch, const Logs&, TrainingControl&) override
    {
        if (!here_ || how_ == "none" || epoch_ != fail_epoch_ || batch != 2)
            return;
        if (how_ == "kill")
            std::raise(SIGKILL);
        throw std::runtime_error("a callback failed on purpose at batch 2");
    }

private:
    std::string how_;
    bool here_;
    std::size_t fail_epoch_, epoch_ = 0;
};

} // namespace

int
main(int argc, char** argv)
{
    const std::string usage =
        "usage: failing_worker kill|throw|none RANK [--backup DIR] [--save PATH] [--epochs N] [--fail-epoch E]";
    if (argc < 3 || argc % 2 == 0) {
        std::cerr << usage << '\n';
        return 2;
    }
    std::string backup, save;
    std::size_t epochs = 1000, fail_epoch = 0;
    for (int i = 3; i + 1 < argc; i += 2) {
        const std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--backup")
            backup = value;
        else if (flag == "--save")
            save = value;
        else if (flag == "--epochs")
            epochs = std::stoul(value);
        else if (flag == "--fail-epoch")
            fail_epoch = std::stoul(value);
        else {
            std::cerr << usage << '\n';
            return 2;
        }
    }
    MpiClusterResolver resolver(&argc, &argv);
    const MultiWorkerStrategy<1> strategy(resolver);
    auto model = strategy.scope<seeds::FashionCnn>(1);
    model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    constexpr std::size_t n = 160;
    xt::xtensor<float, 4> x = xt::zeros<float>({n, std::size_t{28}, std::size_t{28}, std::size_t{1}});
    xt::xtensor<std::int32_t, 1> y = xt::zeros<std::int32_t>({n});
    for (std::size_t i = 0; i < n; ++i) {
        y(i) = static_cast<std::int32_t>(i % 10);
        for (std::size_t j = 0; j < 28 * 28; ++j)
            x.data()[i * 28 * 28 + j] = static_cast<float>((i * 7919 + j * 104729) % 255) / 255.0f;
    }
    FitOptions options{.batch_size = 32, .epochs = epochs, .verbose = 0};
    std::ostringstream quiet;
    options.out = &quiet;
    options.callbacks.emplace_back(Failure(argv[1], resolver.rank() == std::atoi(argv[2]), fail_epoch));
    BackupAndRestore backups(backup.empty() ? std::string(".") : backup);
    if (!backup.empty())
        options.callbacks.emplace_back(backups);   // by reference: asked below whether it restored
    model.fit(x, y, options);
    if (backups.restored() && strategy.is_chief())
        std::cout << "failing_worker: resumed from the backup in " << backup << '\n';
    if (!save.empty() && strategy.is_chief())
        model.save_weights(save);
    if (std::string(argv[1]) != "none")
        std::cerr << "failing_worker: fit ended without the failure\n";
    return 0;
}
