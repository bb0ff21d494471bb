// The Fashion-MNIST seed model in tiny-dnn (Debian's tiny-dnn), trained on synthetic images of its
// shapes with Adam at the given batch: Conv2D(64, 3x3, valid) -> MaxPool(2) -> ReLU -> Dense(10) ->
// softmax, cross-entropy. Prints one line:
//   peer framework=tiny-dnn model=fashion batch=<b> threads=<t> samples_per_s=<x>
// Built with CNN_SINGLE_THREAD for one thread; otherwise tiny-dnn's own std::thread parallel_for.
#include <tiny_dnn/tiny_dnn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

int
main(int argc, char** argv)
{
    using namespace tiny_dnn;
    const std::size_t batch = argc > 1 ? std::stoul(argv[1]) : 128;
    const double seconds = argc > 2 ? std::stod(argv[2]) : 3.0;
    // tiny-dnn 1.0.0a3 (Debian's) fuses the activation into each layer: ReLU after the pooling.
    const auto backend = core::backend_t::avx;
    network<sequential> net;
    net << convolutional_layer<activation::identity>(28, 28, 3, 1, 64, padding::valid, true, 1, 1, backend)
        << max_pooling_layer<activation::relu>(26, 26, 64, 2, backend)
        << fully_connected_layer<activation::softmax>(13 * 13 * 64, 10, true, backend);
    std::vector<vec_t> images;
    std::vector<label_t> labels;
    const std::size_t n = batch * 4;
    for (std::size_t i = 0; i < n; ++i) {
        vec_t img(28 * 28);
        for (std::size_t p = 0; p < img.size(); ++p)
            img[p] = static_cast<float>((i * 2654435761u + p * 40503u) % 97) / 97.0f;
        images.push_back(img);
        labels.push_back(static_cast<label_t>(i % 10));
    }
    adam opt;
    net.train<cross_entropy_multiclass>(opt, images, labels, batch, 1);   // warm-up
    std::size_t done = 0;
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    while (elapsed < seconds) {
        net.train<cross_entropy_multiclass>(opt, images, labels, batch, 1);
        done += n;
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
#if defined(CNN_SINGLE_THREAD)
    const unsigned threads = 1;
#else
    const unsigned threads = std::thread::hardware_concurrency();
#endif
    std::printf("peer framework=tiny-dnn model=fashion batch=%zu threads=%u samples_per_s=%.1f\n", batch, threads,
                static_cast<double>(done) / elapsed);
}
