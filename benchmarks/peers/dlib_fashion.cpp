// The Fashion-MNIST seed model in dlib (Debian's libdlib-dev), trained on synthetic images of its
// shapes with Adam at the given batch: Conv2D(64, 3x3, valid) -> MaxPool(2) -> ReLU -> Dense(10),
// softmax cross-entropy (loss_multiclass_log). Prints one line:
//   peer framework=dlib model=fashion batch=<b> threads=<t> samples_per_s=<x>
// Threads: dlib's CPU layers run on the calling thread and on the BLAS it links (OPENBLAS_NUM_THREADS).
#include <dlib/dnn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace dlib;

template <typename SUBNET>
using con_valid = add_layer<con_<64, 3, 3, 1, 1, 0, 0>, SUBNET>;

using net_type = loss_multiclass_log<fc<10, relu<max_pool<2, 2, 2, 2, con_valid<input<matrix<float>>>>>>>;

int
main(int argc, char** argv)
{
    const std::size_t batch = argc > 1 ? std::stoul(argv[1]) : 128;
    const double seconds = argc > 2 ? std::stod(argv[2]) : 3.0;
    const char* threads_env = std::getenv("OPENBLAS_NUM_THREADS");
    net_type net;
    dnn_trainer<net_type, adam> trainer(net, adam(0.0, 0.9, 0.999));
    trainer.set_learning_rate(1e-3);
    trainer.be_quiet();
    std::vector<matrix<float>> images(batch);
    std::vector<unsigned long> labels(batch);
    for (std::size_t i = 0; i < batch; ++i) {
        images[i].set_size(28, 28);
        for (long r = 0; r < 28; ++r)
            for (long c = 0; c < 28; ++c)
                images[i](r, c) = static_cast<float>((i * 2654435761u + static_cast<std::size_t>(r * 28 + c) * 40503u) % 97) / 97.0f;
        labels[i] = i % 10;
    }
    trainer.train_one_step(images, labels);   // warm-up
    std::size_t done = 0;
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    while (elapsed < seconds) {
        trainer.train_one_step(images, labels);
        done += batch;
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    trainer.get_net();   // waits for the trainer's thread to finish the queued steps
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("peer framework=dlib model=fashion batch=%zu threads=%s samples_per_s=%.1f\n", batch,
                threads_env ? threads_env : "default", static_cast<double>(done) / elapsed);
}
