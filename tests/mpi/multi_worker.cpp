// MultiWorkerStrategy under mpirun: every worker trains a model on the same data and checks that its
// final weights are bitwise those of OneDeviceStrategy (which it trains too), that evaluate gives one
// process's numbers and predict its rows. Run with 1, 2 and 4 processes (tests/CMakeLists.txt, label
// mpi). Exits non-zero on every worker when one of them found a difference.
#include "cifar10_resnet/model.hpp"
#include "fashion_mnist_cnn/model.hpp"
#include "reuters_conv1d/model.hpp"
#include "text_and_metadata/model.hpp"
#include "../synthetic_model_data.hpp"

#include <tpudsl/distribute/multi_worker.hpp>
#include <tpudsl/tpudsl.hpp>

#include <xtensor/xtensor.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <unistd.h>

using namespace tpudsl;

namespace {

using tpudsl_tests::synthetic;

/// FNV-1a over the weights' bytes: what the workers print, so that a log shows which bits they hold.
std::uint64_t
digest(const float* p, std::size_t n)
{
    std::uint64_t h = 1469598103934665603ull;
    const auto* bytes = reinterpret_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n * sizeof(float); ++i)
        h = (h ^ bytes[i]) * 1099511628211ull;
    return h;
}

int failures = 0;

void
expect(bool ok, const std::string& what, int rank)
{
    if (!ok) {
        ++failures;
        std::cerr << "multi_worker test, worker " << rank << ": FAILED: " << what << '\n';
    }
}

/// Trains M on one device and on the strategy (same seed, data, batch, epochs, shuffle), then compares.
template <class M, class Opt>
void
check_model(const char* name, const MultiWorkerStrategy<2>& strategy, const synthetic<M>& data, Opt opt,
            std::size_t batch, std::size_t epochs, bool bitwise = true)
{
    const int rank = strategy.rank();
    std::ostringstream quiet;
    Trainable<M> one(11);
    one.compile(opt, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    auto many = strategy.template scope<M>(11);
    many.compile(opt, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    const FitOptions options{.batch_size = batch, .epochs = epochs, .verbose = 0, .out = &quiet};
    one.fit(data.x, data.y, options);
    many.fit(data.x, data.y, options);
    const std::uint64_t a = digest(one.parameters(), M::param_buffer_size),
                        b = digest(many.parameters(), M::param_buffer_size);
    const bool same = std::memcmp(one.parameters(), many.parameters(), M::param_buffer_size * sizeof(float)) == 0;
    Trainable<M> fresh(11);
    expect(std::memcmp(fresh.parameters(), many.parameters(), M::param_buffer_size * sizeof(float)) != 0,
           std::string(name) + ": the weights did not change in training", rank);
    if (bitwise) {
        expect(same, std::string(name) + ": weights differ from OneDeviceStrategy's", rank);
    } else {   // Reduction::allreduce: MPI's order; close, not the same bits
        double worst = 0;
        for (std::size_t i = 0; i < M::param_buffer_size; ++i)
            worst = std::max(worst, std::abs(double{one.parameters()[i]} - many.parameters()[i]) /
                                        std::max({std::abs(double{one.parameters()[i]}), 1e-2}));
        expect(worst < 1e-3, std::string(name) + ": weights farther than 1e-3 from OneDeviceStrategy's", rank);
    }
    const Scores s1 = one.evaluate(data.x, data.y, {.batch_size = batch, .verbose = 0});
    const Scores s2 = many.evaluate(data.x, data.y, {.batch_size = batch, .verbose = 0});
    if (bitwise) {
        expect(s1.size() == s2.size() && s1[0] == s2[0] && s1[1] == s2[1],
               std::string(name) + ": evaluate's loss and accuracy differ from one process's", rank);
        expect(one.predict(data.x, {.batch_size = batch}) == many.predict(data.x, {.batch_size = batch}),
               std::string(name) + ": predict's rows differ from one process's", rank);
    }
    if (rank == 0)
        std::cout << name << ": " << strategy.workers() << " workers x " << strategy.threads() << " threads, weights "
                  << (same ? "bitwise equal to" : "differ from") << " OneDeviceStrategy's (digest " << std::hex << b
                  << " vs " << a << std::dec << "), evaluate loss " << s2[0] << " vs " << s1[0] << ", accuracy " << s2[1]
                  << " vs " << s1[1] << '\n';
}

/// The same on a Dataset pipeline (shuffled, prefetched, a validation Dataset): every worker runs the
/// pipeline and reads its own micro-batches of each batch.
void
check_dataset(const MultiWorkerStrategy<2>& strategy)
{
    using M = seeds::Reuters;
    using Ex = Example<Shape<300>, std::int32_t>;
    const synthetic<M> train(88, 6), test(40, 7);
    auto pipeline = [&] { return Dataset<Ex>::from_tensor_slices(train.x, train.y).shuffle(64, 3).batch<24>().prefetch(); };
    auto validation = Dataset<Ex>::from_tensor_slices(test.x, test.y).batch<16>();
    std::ostringstream quiet;
    Trainable<M> one(5);
    auto many = strategy.scope<M>(5);
    one.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseTopKCategoricalAccuracy<5>{});
    many.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseTopKCategoricalAccuracy<5>{});
    const History h1 = one.fit(pipeline(), {.epochs = 2, .verbose = 0, .validation_data = validation, .out = &quiet});
    const History h2 = many.fit(pipeline(), {.epochs = 2, .verbose = 0, .validation_data = validation, .out = &quiet});
    const bool same = std::memcmp(one.parameters(), many.parameters(), M::param_buffer_size * sizeof(float)) == 0;
    expect(same, "reuters_conv1d on a Dataset: weights differ from OneDeviceStrategy's", strategy.rank());
    expect(h1["val_loss"] == h2["val_loss"] && h1["loss"] == h2["loss"],
           "reuters_conv1d on a Dataset: History's losses differ from one process's", strategy.rank());
    if (strategy.rank() == 0)
        std::cout << "reuters_conv1d on a Dataset: weights " << (same ? "bitwise equal to" : "differ from")
                  << " OneDeviceStrategy's, val_loss " << h2["val_loss"].back() << " vs " << h1["val_loss"].back() << '\n';
}

/// A functional model of two inputs and two outputs (examples/text_and_metadata): each output's loss,
/// weighted, and its metric, the same bits as one process's, History's per-output losses too.
void
check_two_heads(const MultiWorkerStrategy<2>& strategy)
{
    using M = seeds::TextAndMetadata;
    const auto data = seeds::make_text_and_metadata(70, 3);
    std::ostringstream quiet;
    const auto train = [&](auto& model) {
        model.compile(optimizers::Adam{}, PerOutput{losses::SparseCategoricalCrossentropy{}, losses::MeanSquaredError{}}
                                              .loss_weights({1.0, 0.5}),
                      OnOutput<0, metrics::SparseCategoricalAccuracy>{});
        return model.fit(std::tie(data.words, data.numbers), std::tie(data.topics, data.scores),
                         {.batch_size = 16, .epochs = 2, .verbose = 0, .out = &quiet});
    };
    Trainable<M> one(4);
    auto many = strategy.scope<M>(4);
    const History h1 = train(one), h2 = train(many);
    const bool same = std::memcmp(one.parameters(), many.parameters(), M::param_buffer_size * sizeof(float)) == 0;
    expect(same, "text_and_metadata: weights differ from OneDeviceStrategy's", strategy.rank());
    expect(h1["topic_loss"] == h2["topic_loss"] && h1["score_loss"] == h2["score_loss"] && h1["loss"] == h2["loss"],
           "text_and_metadata: History's per-output losses differ from one process's", strategy.rank());
    if (strategy.rank() == 0)
        std::cout << "text_and_metadata: weights " << (same ? "bitwise equal to" : "differ from")
                  << " OneDeviceStrategy's, score_loss " << h2["score_loss"].back() << " vs " << h1["score_loss"].back()
                  << '\n';
}

/// Callbacks write files on the chief only: each worker points CSVLogger, ModelCheckpoint and
/// BackupAndRestore at a directory of its own; only the chief's holds anything afterwards, and its
/// log one line per epoch.
void
check_files(const MultiWorkerStrategy<2>& strategy)
{
    namespace fs = std::filesystem;
    using M = Sequential<Input<Shape<6>>, Dense<8, Relu>, Dense<3, Softmax>>;
    const synthetic<M> data(64, 8);
    const fs::path dir = fs::temp_directory_path() / ("tpudsl_mpi_files_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    auto model = strategy.scope<M>(1);
    model.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    std::ostringstream quiet;
    model.fit(data.x, data.y,
              {.batch_size = 16, .epochs = 2, .verbose = 0,
               .callbacks = {CSVLogger((dir / "log.csv").string()), ModelCheckpoint((dir / "w{epoch}.weights").string()),
                             BackupAndRestore((dir / "backup").string(), {.delete_checkpoint = false})},
               .out = &quiet});
    std::size_t lines = 0;
    if (std::ifstream log(dir / "log.csv"); log)
        for (std::string line; std::getline(log, line);)
            ++lines;
    const bool chief = strategy.is_chief();
    expect(fs::exists(dir / "w1.weights") == chief && fs::exists(dir / "w2.weights") == chief,
           chief ? "the chief wrote no checkpoint" : "a worker other than the chief wrote checkpoints", strategy.rank());
    expect(fs::exists(dir / "log.csv") == chief && lines == (chief ? 3u : 0u),
           chief ? "the chief's CSV log does not hold a header and 2 epochs" : "a worker other than the chief wrote a log",
           strategy.rank());
    expect(fs::exists(dir / "backup" / "backup.tpudsl") == chief,
           chief ? "the chief wrote no backup" : "a worker other than the chief wrote a backup", strategy.rank());
    fs::remove_all(dir);
}

} // namespace

int
main(int argc, char** argv)
{
    tpudsl::MpiClusterResolver resolver(&argc, &argv);   // MPI_Init_thread, unless the program did
    const int rank = resolver.rank();
    try {
        // [multi_worker_setup]
        tpudsl::initialize_multi_worker_system(resolver);    // the chief prints the workers and their hosts
        tpudsl::MultiWorkerStrategy<2> strategy(resolver);   // 2 threads in each process
        // [multi_worker_setup]
        // The Fashion-MNIST seed's model, Adam; 133 samples in batches of 32: the last batch of 5
        // leaves micro-batches (and with 4 workers a whole worker) without samples.
        check_model<seeds::FashionCnn>("fashion_mnist_cnn", strategy, synthetic<seeds::FashionCnn>(133, 1),
                                       optimizers::Adam{}, 32, 2);
        // The Reuters seed's model (Embedding: the marked rows; Conv1D and Dense), Nadam.
        check_model<seeds::Reuters>("reuters_conv1d", strategy, synthetic<seeds::Reuters>(96, 2), optimizers::Nadam{},
                                    48, 2);
        // Chunks of 1,000 floats (rounded to 992): the chain's messages cut the Embedding's rows, the
        // convolutions' and the Dense's kernels mid-row.
        const MultiWorkerStrategy<2> small_chunks(resolver, {.chunk_floats = 1000});
        check_model<seeds::Reuters>("reuters_conv1d (chunks of 992 floats)", small_chunks, synthetic<seeds::Reuters>(64, 5),
                                    optimizers::Adam{}, 32, 1);
        check_dataset(strategy);
        check_files(strategy);
        // BatchNormalization's moving statistics and Dropout's masks, RMSprop.
        using Bn = Sequential<Input<Shape<10, 10, 1>>, Conv2D<6, 3>, BatchNormalization<0.9f>, Activation<Relu>, MaxPool2D<2>,
                              Flatten, Dropout<0.25f>, Dense<10, Softmax>>;
        check_model<Bn>("batch_normalization", strategy, synthetic<Bn>(90, 3), optimizers::RMSprop{}, 24, 2);
        // A functional model: ResNet-20 (fan-outs summed in a fixed order, BatchNormalization's statistics).
        check_model<seeds::ResNet20>("cifar10_resnet", strategy, synthetic<seeds::ResNet20>(40, 6), optimizers::Adam{},
                                     16, 1);
        check_two_heads(strategy);
        // The opt-in MPI_Allreduce: close to one process, not bitwise. (A resolver of its own: MPI once,
        // a communicator each.)
        const MultiWorkerStrategy<2> fast(MpiClusterResolver{}, {.reduction = Reduction::allreduce});
        check_model<seeds::FashionCnn>("fashion_mnist_cnn (Reduction::allreduce)", fast,
                                       synthetic<seeds::FashionCnn>(64, 4), optimizers::Adam{}, 32, 1, false);
    } catch (const std::exception& e) {
        std::cerr << "multi_worker test, worker " << rank << ": " << e.what() << '\n';
        ++failures;
    }
    int any = 0;
    MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        std::cout << (any ? "FAILED" : "passed") << " on " << resolver.size() << " workers\n";
    return any ? 1 : 0;
}
