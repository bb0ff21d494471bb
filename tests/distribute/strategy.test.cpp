// TpuStrategy<N>: replicas on threads, the fused reduce-and-update, and its determinism.
#include "cifar10_resnet/model.hpp"
#include "fashion_mnist_cnn/model.hpp"
#include "reuters_conv1d/model.hpp"
#include "text_and_metadata/model.hpp"
#include "../synthetic_model_data.hpp"

#include <tpudsl/functional.hpp>
#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <xtensor/xtensor.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

using namespace tpudsl;

namespace {

using tpudsl_tests::synthetic;

template <class M, class Strategy, class Opt>
std::vector<float>
train(const synthetic<M>& data, Opt opt, std::size_t batch, std::size_t steps, std::uint64_t seed = 7)
{
    Strategy strategy;
    auto model = strategy.template scope<M>(seed);
    model.compile(opt, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    std::ostringstream quiet;
    model.fit(data.x, data.y, {.batch_size = batch, .epochs = 1, .verbose = 0, .steps_per_epoch = steps, .out = &quiet});
    CHECK(model.iterations() == steps);
    return {model.parameters(), model.parameters() + M::param_buffer_size};
}

bool
same_bits(const std::vector<float>& a, const std::vector<float>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// Every weight within 1e-5 relative (with a floor of 1e-3 in the scale, for weights near zero).
void
check_close(const std::vector<float>& a, const std::vector<float>& b)
{
    REQUIRE(a.size() == b.size());
    std::size_t bad = 0;
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double scale = std::max({std::abs(double{a[i]}), std::abs(double{b[i]}), 1e-3});
        const double rel = std::abs(double{a[i]} - b[i]) / scale;
        worst = std::max(worst, rel);
        bad += rel > 1e-5;
    }
    INFO("worst relative difference " << worst);
    CHECK(bad == 0);
}

} // namespace

TEST_CASE("the global batch splits floor/ceil over the micro-batches", "[strategy]")
{
    using T = Trainable<seeds::FashionCnn, TpuStrategy<8>>;
    CHECK(T::micro_batch_sizes(22) == std::array<std::size_t, 8>{3, 3, 3, 3, 3, 3, 2, 2});
    CHECK(T::micro_batch_sizes(6) == std::array<std::size_t, 8>{1, 1, 1, 1, 1, 1, 0, 0});
    CHECK(T::micro_batch_sizes(128) == std::array<std::size_t, 8>{16, 16, 16, 16, 16, 16, 16, 16});
    STATIC_REQUIRE(TpuStrategy<8>::per_replica_batch<128>() == 16);
    STATIC_REQUIRE(!TpuStrategy<8>::divides<22>);
    STATIC_REQUIRE(TpuStrategy<8>::num_replicas_in_sync == 8);
    STATIC_REQUIRE(TpuStrategy<16>::micro_batches == 16);
}

TEST_CASE("OneDeviceStrategy and TpuStrategy<8> agree within 1e-5 after 20 steps (in fact bit for bit)",
          "[strategy]")
{
    SECTION("Fashion-MNIST model, Adam")
    {
        const synthetic<seeds::FashionCnn> data(20 * 32, 1);
        const auto one = train<seeds::FashionCnn, OneDeviceStrategy>(data, optimizers::Adam{}, 32, 20);
        const auto eight = train<seeds::FashionCnn, TpuStrategy<8>>(data, optimizers::Adam{}, 32, 20);
        check_close(one, eight);
        CHECK(same_bits(one, eight));
    }
    SECTION("Fashion-MNIST model, Nadam, partial batches")
    {
        const synthetic<seeds::FashionCnn> data(300, 2);
        check_close(train<seeds::FashionCnn, OneDeviceStrategy>(data, optimizers::Nadam{}, 30, 20),
                    train<seeds::FashionCnn, TpuStrategy<8>>(data, optimizers::Nadam{}, 30, 20));
    }
    SECTION("Reuters model, Nadam")
    {
        const synthetic<seeds::Reuters> data(20 * 32, 3);
        check_close(train<seeds::Reuters, OneDeviceStrategy>(data, optimizers::Nadam{}, 32, 20),
                    train<seeds::Reuters, TpuStrategy<8>>(data, optimizers::Nadam{}, 32, 20));
    }
    SECTION("Reuters model, Adam")
    {
        const synthetic<seeds::Reuters> data(20 * 32, 4);
        check_close(train<seeds::Reuters, OneDeviceStrategy>(data, optimizers::Adam{}, 32, 20),
                    train<seeds::Reuters, TpuStrategy<8>>(data, optimizers::Adam{}, 32, 20));
    }
}

TEST_CASE("TpuStrategy is bitwise reproducible, and N = 1, 2, 4, 8 give the same bits as one device",
          "[strategy][determinism]")
{
    using M = Sequential<Input<Shape<12, 12, 1>>, Conv2D<8, 3, Relu>, MaxPool2D<2>, Flatten, Dropout<0.25f>,
                         Dense<10, Softmax>>;
    const synthetic<M> data(200, 5);
    const auto eight = train<M, TpuStrategy<8>>(data, optimizers::Nadam{}, 24, 15);
    CHECK(same_bits(eight, train<M, TpuStrategy<8>>(data, optimizers::Nadam{}, 24, 15)));
    CHECK(same_bits(eight, train<M, TpuStrategy<4>>(data, optimizers::Nadam{}, 24, 15)));
    CHECK(same_bits(eight, train<M, TpuStrategy<2>>(data, optimizers::Nadam{}, 24, 15)));
    CHECK(same_bits(eight, train<M, TpuStrategy<1>>(data, optimizers::Nadam{}, 24, 15)));
    CHECK(same_bits(eight, train<M, OneDeviceStrategy>(data, optimizers::Nadam{}, 24, 15)));
    // one piece per batch sums in another order: close, but not the same bits
    const auto whole = train<M, TpuStrategy<1, 1>>(data, optimizers::Nadam{}, 24, 15);
    CHECK(!same_bits(eight, whole));
    // and it trained: it differs from the initial weights
    Trainable<M> fresh(7);
    CHECK(!same_bits(eight, std::vector<float>(fresh.parameters(), fresh.parameters() + M::param_buffer_size)));
}

TEST_CASE("recurrent models: TpuStrategy<2> and <8> give one device's bits, runs repeat their bits",
          "[strategy][determinism][recurrent]")
{
    using Text = Sequential<Input<Shape<12>, std::int32_t>, Embedding<1024, 6>, LSTM<16>, Dense<5, Softmax>>;
    const synthetic<Text> text(160, 8);
    const auto one = train<Text, OneDeviceStrategy>(text, optimizers::Adam{}, 32, 5);
    CHECK(same_bits(one, train<Text, TpuStrategy<2>>(text, optimizers::Adam{}, 32, 5)));
    CHECK(same_bits(one, train<Text, TpuStrategy<8>>(text, optimizers::Adam{}, 32, 5)));
    CHECK(same_bits(one, train<Text, OneDeviceStrategy>(text, optimizers::Adam{}, 32, 5)));
    Trainable<Text> fresh(7);
    CHECK(!same_bits(one, std::vector<float>(fresh.parameters(), fresh.parameters() + Text::param_buffer_size)));

    using Stacked = Sequential<Input<Shape<6, 4>>, GRU<8, true>, LSTM<6>, Dense<3, Softmax>>;
    const synthetic<Stacked> seq(90, 9);
    const auto first = train<Stacked, OneDeviceStrategy>(seq, optimizers::Nadam{}, 24, 4);   // partial batches too
    CHECK(same_bits(first, train<Stacked, TpuStrategy<2>>(seq, optimizers::Nadam{}, 24, 4)));
    CHECK(same_bits(first, train<Stacked, TpuStrategy<8>>(seq, optimizers::Nadam{}, 24, 4)));
}

TEST_CASE("the threads share each Dense kernel's transpose, remade by the fused pass: the bits of their own",
          "[strategy][determinism]")
{
    // Dense<24> and Dense<10> keep W^T for their input gradient. Dense<10>'s kernel gradient is
    // deferred to the fused pass (the plan's choice here), so after a step the threads read the copy that
    // the pass made as it updated W (each thread its shard's rows) instead of each making its own;
    // Dense<24> keeps its own per thread. Writing the weights (parameters()) makes the shared copy
    // stale: the threads then transpose afresh, which must give the same bits.
    using M = Sequential<Input<Shape<40>>, Dense<48, Relu>, Dense<24, Relu>, Dense<10, Softmax>>;
    const synthetic<M> data(32, 9);
    TpuStrategy<2> strategy;
    auto shared = strategy.scope<M>(3);
    auto own = strategy.scope<M>(3);
    std::ostringstream quiet;
    const FitOptions one_step{.batch_size = 32, .epochs = 1, .verbose = 0, .steps_per_epoch = 1, .shuffle = false,
                              .out = &quiet};
    for (auto* model : {&shared, &own})
        model->compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    using W = M::layer<2>::weight<0>;   // the deferred kernel (24, 10)
    std::size_t adopted = 0;
    for (std::size_t step = 0; step < 6; ++step) {
        shared.fit(data.x, data.y, one_step);
        (void)own.parameters();   // a write: no transpose of these weights is current
        own.fit(data.x, data.y, one_step);
        const float* weights = std::as_const(shared).parameters();   // read only: the copies stay current
        const float* own_weights = std::as_const(own).parameters();
        REQUIRE(std::memcmp(weights, own_weights, M::param_buffer_size * sizeof(float)) == 0);
        std::vector<float> want(24 * 10);
        kernels::transpose(weights + W::offset, 24, 10, want.data());
        for (const auto& arena : shared.scratch_arenas()) {
            CHECK(arena.shared(1) == nullptr);   // not deferred: updated outside the shared pass's rows
            const kernels::kept_copy* copy = arena.shared(2);
            REQUIRE(copy != nullptr);
            CHECK(std::equal(want.begin(), want.end(), copy->data));   // what the threads read next step
            CHECK(copy->from == weights + W::offset);
            adopted += arena.kept(2).data == copy->data;   // this step's forward read it
        }
        for (const auto& arena : own.scratch_arenas())
            CHECK(arena.kept(2).data != arena.shared(2)->data);   // stale: each thread made its own
    }
    CHECK(adopted == 5 * strategy.threads());   // every step but the first, on every thread
}

TEST_CASE("shard_cuts: the fused pass's shards move to where the measured time splits evenly", "[strategy]")
{
    constexpr std::size_t a = buffer_alignment_floats, size = 6000 * a + 5;
    distribute::shard_cuts cuts(size, 3);
    REQUIRE(cuts.shards() == 3);
    const std::vector<std::size_t> even{0, 2000 * a, 4000 * a, size};
    CHECK(std::ranges::equal(cuts.cuts(), even));   // equal float counts to begin with
    // A float costs 1 in the first tenth of the buffer and 4 beyond (as a deferred kernel with its
    // transpose costs more than a bias): the shards' times are the cost of their floats.
    const auto cost_to = [&](std::size_t x) {
        const double cheap = static_cast<double>(std::min(x, size / 10));
        return cheap + 4.0 * (static_cast<double>(x) - cheap);
    };
    const auto spend_one_step = [&] {
        for (std::size_t i = 0; i < cuts.shards(); ++i)
            cuts.record(i, std::chrono::steady_clock::duration(
                               static_cast<std::chrono::steady_clock::rep>(cost_to(cuts.end(i)) - cost_to(cuts.begin(i)))));
        cuts.rebalance();
    };
    for (std::size_t step = 0; step + 1 < distribute::shard_cuts::window; ++step)
        spend_one_step();
    CHECK(std::ranges::equal(cuts.cuts(), even));   // nothing moves before a window of steps
    spend_one_step();
    CHECK(cuts.begin(1) > 2000 * a);   // the first shard, cheap per float, grows
    for (std::size_t window = 0; window < 20; ++window)
        for (std::size_t step = 0; step < distribute::shard_cuts::window; ++step)
            spend_one_step();
    double most = 0.0, least = cost_to(size);
    for (std::size_t i = 0; i < cuts.shards(); ++i) {
        const double c = cost_to(cuts.end(i)) - cost_to(cuts.begin(i));
        most = std::max(most, c);
        least = std::min(least, c);
        CHECK(cuts.begin(i) % a == 0);
        CHECK(cuts.begin(i) <= cuts.end(i));
    }
    CHECK(cuts.begin(0) == 0);
    CHECK(cuts.end(2) == size);
    CHECK(most - least <= 2.0 * 4.0 * a);   // even to within the alignment
    CHECK(most / least < 1.001);

    // Placed by hand: the times so far are dropped, and a bad placement is refused with what was expected.
    const std::vector<std::size_t> placed{0, 16 * a, 16 * a, size};
    cuts.assign(placed);
    CHECK(std::ranges::equal(cuts.cuts(), placed));
    const std::vector<std::size_t> unaligned{0, 16 * a + 1, 20 * a, size}, short_of{0, a, 2 * a, size - 5};
    CHECK_THROWS_WITH(cuts.assign(unaligned), Catch::Contains("non-decreasing cuts from 0 to 96005") &&
                                                  Catch::Contains("each a multiple of 16 but the last"));
    CHECK_THROWS_AS(cuts.assign(short_of), std::invalid_argument);
    CHECK(std::ranges::equal(cuts.cuts(), placed));

    // Costly floats in a narrow range where the even split of the time lies (the guess "even within a
    // shard" overshoots to either side of it): the cut's step shrinks each time it turns back, and it
    // settles inside the range instead of swinging across it.
    constexpr std::size_t big = 100'000 / a * a;
    const auto hot_cost_to = [](std::size_t x) {
        const double lo = 55'000.0, hi = 56'000.0, d = static_cast<double>(x);
        return d + 999.0 * std::clamp(d - lo, 0.0, hi - lo);
    };
    distribute::shard_cuts hot(big, 2);
    for (std::size_t step = 0; step < 60 * distribute::shard_cuts::window; ++step) {
        for (std::size_t i = 0; i < 2; ++i)
            hot.record(i, std::chrono::steady_clock::duration(static_cast<std::chrono::steady_clock::rep>(
                              hot_cost_to(hot.end(i)) - hot_cost_to(hot.begin(i)))));
        hot.rebalance();
    }
    const double hot_total = hot_cost_to(big), slower = std::max(hot_cost_to(hot.end(0)), hot_total - hot_cost_to(hot.end(0)));
    CHECK(slower / (hot_total / 2.0) < 1.02);   // equal counts: 1.91 (the whole hot range on one side)

    // Whatever the times (none, zero, random, proportional), the cuts stay cuts: from 0 to the size,
    // non-decreasing, multiples of the alignment, for sizes below one block per shard and up to 64 shards.
    std::mt19937_64 random(11);
    for (const std::size_t n : {std::size_t{0}, std::size_t{5}, std::size_t{17}, 40 * a + 3, std::size_t{96005}})
        for (const std::size_t shards : {std::size_t{2}, std::size_t{3}, std::size_t{8}, std::size_t{64}}) {
            distribute::shard_cuts c(n, shards);
            for (std::size_t step = 0; step < 40 * distribute::shard_cuts::window; ++step) {
                for (std::size_t i = 0; i < shards; ++i) {
                    const auto kind = (step / distribute::shard_cuts::window + i) % 4;
                    const std::int64_t t = kind == 0   ? 0
                                           : kind == 1 ? static_cast<std::int64_t>(random() % 1000)
                                                       : static_cast<std::int64_t>(c.end(i) - c.begin(i)) * (1 + i % 3);
                    if (kind != 3 || i % 2 == 0)   // some threads record nothing in some windows
                        c.record(i, std::chrono::steady_clock::duration(t));
                }
                c.rebalance();
                bool ok = c.begin(0) == 0 && c.end(shards - 1) == n;
                for (std::size_t i = 0; i < shards; ++i)
                    ok = ok && c.begin(i) <= c.end(i) && (i == 0 || (c.begin(i) % a == 0 && c.begin(i) <= n / a * a));
                if (!ok)
                    FAIL_CHECK("invalid cuts for size " << n << ", " << shards << " shards, step " << step);
            }
        }

    distribute::shard_cuts one(size, 1);   // one thread: the whole buffer, nothing to move
    for (std::size_t step = 0; step < 3 * distribute::shard_cuts::window; ++step) {
        one.record(0, std::chrono::milliseconds(1));
        one.rebalance();
    }
    CHECK(one.begin(0) == 0);
    CHECK(one.end(0) == size);
}

TEST_CASE("reduce_and_update works on exactly its shard, cut inside a deferred kernel's row or not", "[strategy]")
{
    // A buffer of a deferred kernel (rows of 40 floats) between two summed ranges: whatever [lo, hi)
    // is, the deferred callable and the update together cover it once, and nothing outside it.
    constexpr std::size_t a = buffer_alignment_floats, P = 50 * a;
    const distribute::deferred_range deferred[] = {{3 * a, 3 * a + 40 * 12, 40}};
    const distribute::gradient_layout layout{.size = P, .deferred = deferred};
    std::vector<float> arena0(P, 1.0f), arena1(P, 2.0f), params(P, 0.0f);
    const distribute::micro_batch_gradients batches[] = {{arena0.data(), nullptr, true}, {arena1.data(), nullptr, true}};
    for (const auto& [lo, hi] : {std::pair<std::size_t, std::size_t>{0, P}, {a, 5 * a}, {4 * a, 31 * a},
                                  {6 * a, 6 * a}, {2 * a, P}}) {
        std::vector<int> updated(P, 0), derived(P, 0);
        distribute::reduce_and_update(
            lo, hi, layout, batches, params.data(),
            [&](std::size_t b, std::size_t e, float*) {
                for (std::size_t i = std::max(b, deferred[0].begin); i < std::min(e, deferred[0].end); ++i)
                    ++derived[i];
            },
            [&](float* g, std::size_t b, std::size_t e) {
                for (std::size_t i = b; i < e; ++i) {
                    ++updated[i];
                    // outside the deferred kernel: the arenas summed in order
                    if (i < deferred[0].begin || i >= deferred[0].end)
                        CHECK(g[i] == 3.0f);
                }
            });
        INFO("shard [" << lo << ", " << hi << ")");
        for (std::size_t i = 0; i < P; ++i) {
            const bool inside = i >= lo && i < hi, kernel = i >= deferred[0].begin && i < deferred[0].end;
            if (updated[i] != (inside ? 1 : 0) || derived[i] != (inside && kernel ? 1 : 0))
                FAIL_CHECK("float " << i << ": updated " << updated[i] << " times, derived " << derived[i]);
        }
        std::fill(arena0.begin(), arena0.end(), 1.0f);   // the pass summed into arena 0 and cleared nothing
    }
}

TEST_CASE("wherever the fused pass's shards are cut, a step gives one device's bits", "[strategy][determinism]")
{
    // The Reuters model holds a marked Embedding table (rows of 7 floats), convolution kernels whose
    // gradients are summed from the arenas and a deferred Dense<46> kernel: cuts inside a table row,
    // inside a kernel's row, and at either end (one thread with nothing to do).
    using M = seeds::Reuters;
    const synthetic<M> data(32, 10);
    constexpr std::size_t table = M::layer<0>::weight<0>::offset, conv = M::layer<1>::weight<0>::offset,
                          dense = M::layer<6>::weight<0>::offset, a = buffer_alignment_floats, width = 7;
    static_assert(table % a == 0 && conv % a == 0 && dense % a == 0);
    // A cut strictly inside the row of a token the batch holds (a row the step's arenas mark).
    std::size_t inside_row = 0;
    for (const std::int32_t id : data.x) {
        const std::size_t row = table + static_cast<std::size_t>(id) * width, cut = (row / a + 1) * a;
        if (cut < row + width) {
            inside_row = cut;
            break;
        }
    }
    REQUIRE(inside_row != 0);
    const std::size_t places[] = {inside_row, conv + 3 * a, dense + 7 * a, 0, M::param_buffer_size / a * a,
                                  dense + 46 * 16 * a};
    std::ostringstream quiet;
    const FitOptions one_step{.batch_size = 32, .epochs = 1, .verbose = 0, .steps_per_epoch = 1, .shuffle = false,
                              .out = &quiet};
    Trainable<M> one(5);
    CpuClusterResolver two_cores;   // two threads whatever the machine
    two_cores.cores = 2;
    TpuStrategy<2> strategy(two_cores);
    auto two = strategy.scope<M>(5);
    REQUIRE(two.fused_pass_shards().shards() == 2);
    one.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    two.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{});
    const auto same = [&] {
        return std::memcmp(std::as_const(one).parameters(), std::as_const(two).parameters(),
                           M::param_buffer_size * sizeof(float)) == 0;
    };
    for (const std::size_t place : places) {
        // [place_fused_pass_cuts]
        // Thread 0 reduces and updates parameters [0, place), thread 1 the rest, for the next step.
        const std::vector<std::size_t> cuts{0, place, M::param_buffer_size};
        two.fused_pass_shards().assign(cuts);
        two.fit(data.x, data.y, one_step);
        // [place_fused_pass_cuts]
        one.fit(data.x, data.y, one_step);
        REQUIRE(same());
    }
    // Then the cuts move as the threads' times say (three windows), the shared transposes made under
    // the last placement read by the next steps: still one device's bits.
    for (std::size_t step = 0; step < 3 * distribute::shard_cuts::window; ++step) {
        one.fit(data.x, data.y, one_step);
        two.fit(data.x, data.y, one_step);
    }
    REQUIRE(same());
    // and the steps trained: the weights left their initial values
    Trainable<M> fresh(5);
    CHECK(std::memcmp(std::as_const(fresh).parameters(), std::as_const(two).parameters(),
                      M::param_buffer_size * sizeof(float)) != 0);
}

TEST_CASE("metrics are global sums: evaluate gives the same numbers on every strategy", "[strategy]")
{
    const synthetic<seeds::FashionCnn> data(101, 6);
    Trainable<seeds::FashionCnn> one(3);
    TpuStrategy<8> strategy;
    auto eight = strategy.scope<seeds::FashionCnn>(3);
    for (auto* m : {static_cast<void*>(&one), static_cast<void*>(&eight)})
        (void)m;
    one.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{},
                metrics::SparseTopKCategoricalAccuracy<3>{});
    eight.compile(optimizers::Adam{}, losses::SparseCategoricalCrossentropy{}, metrics::SparseCategoricalAccuracy{},
                  metrics::SparseTopKCategoricalAccuracy<3>{});
    const auto a = one.evaluate(data.x, data.y, {.batch_size = 20, .verbose = 0});
    const auto b = eight.evaluate(data.x, data.y, {.batch_size = 20, .verbose = 0});
    REQUIRE(a.size() == 3);
    CHECK(a[0] == Approx(b[0]).epsilon(1e-6));
    CHECK(a[1] == b[1]);   // counts of hits: exact
    CHECK(a[2] == b[2]);
    const auto pa = one.predict(data.x), pb = eight.predict(data.x);
    CHECK(pa == pb);       // predictions are per sample: identical bits
}

TEST_CASE("spin_barrier: what each thread wrote before a barrier, every thread sees after it, spinning or asleep",
          "[strategy]")
{
    // A spin of zero sends every early thread to atomic::wait at once (the sleeping path); 100 us
    // mostly spins. Four threads on any machine, so that some of them wait for a core.
    for (const auto spin : {std::chrono::nanoseconds(0), std::chrono::nanoseconds(std::chrono::microseconds(100))}) {
        constexpr std::size_t threads = 4, rounds = 300;
        distribute::spin_barrier barrier(threads, spin);
        std::vector<std::size_t> wrote(threads, 0);   // plain writes: the barrier must order them
        std::atomic<std::size_t> wrong{0};
        auto run = [&](std::size_t t) {
            for (std::size_t r = 1; r <= rounds; ++r) {
                wrote[t] = r;
                barrier.arrive_and_wait();
                for (std::size_t u = 0; u < threads; ++u)
                    if (wrote[u] != r)
                        ++wrong;
                barrier.arrive_and_wait();   // nobody writes round r + 1 before all have read round r
            }
        };
        std::vector<std::thread> others;
        for (std::size_t t = 1; t < threads; ++t)
            others.emplace_back(run, t);
        run(0);
        for (auto& o : others)
            o.join();
        CHECK(wrong == 0);
    }
}

TEST_CASE("the resolver reports the cores, and the strategy runs min(N, cores) threads", "[strategy]")
{
    CpuClusterResolver resolver;
    resolver.cores = 2;
    std::ostringstream out;
    initialize_cpu_system(resolver, out);
    CHECK(out.str().find("INFO:tpudsl:Found CPU system:\nINFO:tpudsl:*** Num CPU Cores: 2\n") != std::string::npos);
    CHECK(out.str().find("device:CPU:1, CPU, 0, 0)") != std::string::npos);
    TpuStrategy<8> eight(resolver);
    CHECK(eight.threads() == 2);
    TpuStrategy<1> one(resolver);
    CHECK(one.threads() == 1);
    resolver.cores = 16;
    TpuStrategy<8> wide(resolver);
    CHECK(wide.threads() == 8);
}

TEST_CASE("a per-timestep classifier (TimeDistributed) trains to the same bits on one device and on TpuStrategy<2>",
          "[strategy][determinism]")
{
    using Tagger = Sequential<Input<Shape<12, 4>>, Conv1D<8, 3, Relu, Same>, TimeDistributed<Dense<8, Relu>>,
                              TimeDistributed<Dense<3, Softmax>>>;
    // Each timestep's label: the largest of its first three features.
    const std::size_t n = 90;
    xt::xtensor<float, 3> x(std::array<std::size_t, 3>{n, 12, 4});
    xt::xtensor<std::int32_t, 2> y(std::array<std::size_t, 2>{n, 12});
    std::mt19937 gen(11);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (auto& v : x)
        v = u(gen);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t t = 0; t < 12; ++t)
            y(i, t) = static_cast<std::int32_t>(std::max_element(&x(i, t, 0), &x(i, t, 0) + 3) - &x(i, t, 0));
    auto run = [&]<class Strategy>(Strategy strategy) {
        auto model = strategy.template scope<Tagger>(5);
        model.compile(optimizers::Adam{.learning_rate = 0.01f}, losses::SparseCategoricalCrossentropy{},
                      metrics::SparseCategoricalAccuracy{});
        std::ostringstream quiet;
        const History h = model.fit(x, y, {.batch_size = 16, .epochs = 10, .verbose = 0, .out = &quiet});
        const auto scores = model.evaluate(x, y, {.batch_size = 30, .verbose = 0});
        return std::make_tuple(std::vector<float>(model.parameters(), model.parameters() + Tagger::param_buffer_size),
                               h["loss"], scores);
    };
    const auto [one, one_loss, one_scores] = run(OneDeviceStrategy{});
    const auto [two, two_loss, two_scores] = run(TpuStrategy<2>{});
    CHECK(same_bits(one, two));
    CHECK(one_loss == two_loss);
    CHECK(one_scores[1] == two_scores[1]);
    CHECK(one_scores[0] == Approx(two_scores[0]).epsilon(1e-6));
    CHECK(one_scores[1] > 0.7);   // and it learned
}

TEST_CASE("functional models: TpuStrategy<2> and <8> give one device's bits, runs repeat their bits",
          "[strategy][determinism][graph]")
{
    // A residual block (the stem read twice) with BatchNormalization and Dropout.
    using Residual =
        Functional<Node<"image", Input<Shape<12, 12, 1>>>, Node<"stem", Conv2D<8, 3, Relu, Same>>,
              Node<"conv_a", Conv2D<8, 3, Linear, Same>>, Node<"bn", BatchNormalization<>>, Node<"relu", Activation<Relu>>,
              Node<"conv_b", Conv2D<8, 3, Linear, Same>>, Node<"add", Add, "conv_b", "stem">,
              Node<"out_relu", Activation<Relu>>, Node<"pool", MaxPool2D<2>>, Node<"flat", Flatten>,
              Node<"drop", Dropout<0.25f>>, Node<"head", Dense<10, Softmax>>>;
    const synthetic<Residual> images(120, 5);
    const auto one = train<Residual, OneDeviceStrategy>(images, optimizers::Nadam{}, 24, 6);
    CHECK(same_bits(one, train<Residual, TpuStrategy<2>>(images, optimizers::Nadam{}, 24, 6)));
    CHECK(same_bits(one, train<Residual, TpuStrategy<8>>(images, optimizers::Nadam{}, 24, 6)));
    CHECK(same_bits(one, train<Residual, OneDeviceStrategy>(images, optimizers::Nadam{}, 24, 6)));
    Trainable<Residual> fresh(7);
    CHECK(!same_bits(one, std::vector<float>(fresh.parameters(), fresh.parameters() + Residual::param_buffer_size)));

    // ResNet-20 (examples/cifar10_resnet): nine residual blocks, two projection shortcuts.
    const synthetic<seeds::ResNet20> cifar(40, 9);
    const auto resnet = train<seeds::ResNet20, OneDeviceStrategy>(cifar, optimizers::Adam{}, 16, 2);
    CHECK(same_bits(resnet, train<seeds::ResNet20, TpuStrategy<2>>(cifar, optimizers::Adam{}, 16, 2)));
    CHECK(same_bits(resnet, train<seeds::ResNet20, TpuStrategy<8>>(cifar, optimizers::Adam{}, 16, 2)));

    // Token ids through an Embedding (its table's rows added into), two branches concatenated, one of
    // them a convolution called twice (Shared: its gradients add up).
    using Text = Functional<Node<"tokens", Input<Shape<12>, std::int32_t>>, Node<"embed", Embedding<1024, 6>>,
                       Node<"wide", Conv1D<6, 5, Relu, Same>, "embed">, Node<"deeper", Shared<"wide">, "wide">,
                       Node<"narrow", Conv1D<4, 1, Relu>, "embed">, Node<"cat", Concatenate<>, "deeper", "narrow">,
                       Node<"pool", GlobalAveragePooling1D>, Node<"head", Dense<5, Softmax>>>;
    const synthetic<Text> text(90, 8);
    const auto first = train<Text, OneDeviceStrategy>(text, optimizers::Adam{}, 24, 4);   // partial batches too
    CHECK(same_bits(first, train<Text, TpuStrategy<2>>(text, optimizers::Adam{}, 24, 4)));
    CHECK(same_bits(first, train<Text, TpuStrategy<8>>(text, optimizers::Adam{}, 24, 4)));

    // Two inputs (token ids, floats) and two outputs, each with its loss and weight: the replicas' heads'
    // losses and metrics add up as their gradients do.
    const auto parts = seeds::make_text_and_metadata(100, 4);
    const auto two_heads = [&]<class Strategy>(std::type_identity<Strategy>) {
        Trainable<seeds::TextAndMetadata, Strategy> model(5);
        model.compile(optimizers::Adam{}, PerOutput{losses::SparseCategoricalCrossentropy{}, losses::MeanSquaredError{}}
                                              .loss_weights({1.0, 0.3}),
                      OnOutput<0, metrics::SparseCategoricalAccuracy>{});
        const History h = model.fit(std::tie(parts.words, parts.numbers), std::tie(parts.topics, parts.scores),
                                    {.batch_size = 24, .epochs = 2, .verbose = 0});   // a partial last batch
        std::vector<float> bits = model.get_weights();
        for (const char* name : {"loss", "topic_sparse_categorical_accuracy", "topic_loss", "score_loss"})
            bits.push_back(static_cast<float>(h[name].back()));
        return bits;
    };
    const auto heads_one = two_heads(std::type_identity<OneDeviceStrategy>{});
    CHECK(same_bits(heads_one, two_heads(std::type_identity<TpuStrategy<2>>{})));
    CHECK(same_bits(heads_one, two_heads(std::type_identity<TpuStrategy<8>>{})));
}
