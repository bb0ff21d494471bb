// A training step allocates nothing: a counting global operator new around steady-state steps of
// the seed models, and a whole fit whose allocations do not grow with its number of steps.
#include "fashion_mnist_cnn/model.hpp"
#include "mnist_mlp/model.hpp"
#include "reuters_conv1d/model.hpp"

#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <xtensor/xtensor.hpp>

#include <atomic>
#include <cstdlib>
#include <new>
#include <sstream>

namespace {
std::atomic<std::size_t> allocations{0};

void*
counted(std::size_t n, std::size_t align = alignof(std::max_align_t))
{
    ++allocations;
    const std::size_t size = (n + align - 1) / align * align;
    if (void* p = std::aligned_alloc(align, size ? size : align))
        return p;
    throw std::bad_alloc();
}
} // namespace

void* operator new(std::size_t n) { return counted(n); }
void* operator new[](std::size_t n) { return counted(n); }
void* operator new(std::size_t n, std::align_val_t a) { return counted(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted(n, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {
template <class M, class Opt>
std::size_t
allocations_in_steps(Opt opt, std::size_t batch, std::size_t steps)
{
    tpudsl::Trainable<M> model(1);
    model.compile(opt, tpudsl::losses::SparseCategoricalCrossentropy{},
                  tpudsl::metrics::SparseCategoricalAccuracy{},
                  tpudsl::metrics::SparseTopKCategoricalAccuracy<5>{});
    model.ensure_capacity(batch);
    model.train_step(batch);   // warm-up
    const std::size_t before = allocations.load();
    for (std::size_t s = 0; s < steps; ++s)
        model.train_step(batch - s % 3);   // full and partial batches
    return allocations.load() - before;
}
} // namespace

TEST_CASE("a steady-state training step allocates nothing", "[alloc]")
{
    CHECK(allocations_in_steps<seeds::FashionCnn>(tpudsl::optimizers::Adam{}, 16, 5) == 0);
    CHECK(allocations_in_steps<seeds::Reuters>(tpudsl::optimizers::Nadam{}, 8, 5) == 0);
    CHECK(allocations_in_steps<seeds::MnistMlp>(tpudsl::optimizers::RMSprop{}, 8, 5) == 0);
    CHECK(allocations_in_steps<seeds::MnistMlp>(tpudsl::optimizers::SGD{.momentum = 0.9f}, 8, 5) == 0);
}

TEST_CASE("fit's allocations do not grow with its number of steps", "[alloc]")
{
    using M = tpudsl::Sequential<tpudsl::Input<tpudsl::Shape<6>>, tpudsl::Dense<8, tpudsl::Relu>,
                                 tpudsl::Dense<3, tpudsl::Softmax>>;
    xt::xtensor<float, 2> x(std::array<std::size_t, 2>{64, 6}, 0.5f);
    xt::xtensor<std::int32_t, 1> y(std::array<std::size_t, 1>{64}, 1);
    auto count = [&](std::size_t steps) {
        tpudsl::Trainable<M> model;
        model.compile(tpudsl::optimizers::Adam{}, tpudsl::losses::SparseCategoricalCrossentropy{},
                      tpudsl::metrics::SparseCategoricalAccuracy{});
        std::ostringstream out;
        tpudsl::FitOptions options{.batch_size = 4, .epochs = 1, .steps_per_epoch = steps, .out = &out};
        const std::size_t before = allocations.load();
        model.fit(x, y, options);
        return allocations.load() - before;
    };
    count(10);   // per-thread buffers (a transposed kernel) are made once per thread, on first use
    CHECK(count(40) == count(10));
}
