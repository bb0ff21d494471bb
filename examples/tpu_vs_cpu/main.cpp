// The seeds' CPU-vs-TPU study: the Fashion-MNIST and CIFAR-10 models trained with OneDeviceStrategy
// and TpuStrategy<8> at global batches 32 to 1024. Prints a table of time per epoch, samples/s and
// test accuracy, and writes it as CSV plus an SVG bar chart of the time per epoch.
//
//   tpu_vs_cpu [--epochs 1] [--batches 32,64,128,256,512,1024] [--fashion-samples 60000]
//              [--cifar-samples 5000] [--data DIR] [--out DIR]
//
// Fashion-MNIST is the real data set when it is installed; CIFAR-10 here is a synthetic stand-in of
// the same shapes with a learnable signal (announced on the first line), until its loader lands.
#include "cifar10_cnn/model.hpp"
#include "common/args.hpp"
#include "fashion_mnist_cnn/model.hpp"

#include <tpudsl/tpudsl.hpp>

#include <xtensor/xtensor.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Args {
    std::size_t epochs = 1;
    std::vector<std::size_t> batches{32, 64, 128, 256, 512, 1024};
    std::size_t fashion_samples = 60000;
    std::size_t cifar_samples = 5000;
    std::string data = tpudsl::data::fashion_mnist::default_directory();
    std::string out = ".";
};

struct Row {
    std::string model, strategy;
    std::size_t batch, threads;
    double seconds_per_epoch, samples_per_s, accuracy;
};

template <class M>
struct Split {
    xt::xtensor<float, 4> x;   // (samples, height, width, channels), as the model's Input
    xt::xtensor<std::int32_t, 1> y;
};

template <class M>
Split<M>
make_split(std::size_t n)
{
    constexpr auto d = M::input_shape::dims;
    return {xt::xtensor<float, 4>(std::array<std::size_t, 4>{n, d[0], d[1], d[2]}),
            xt::xtensor<std::int32_t, 1>(std::array<std::size_t, 1>{n})};
}

/// A synthetic stand-in: each class brightens its own band of rows in one channel, over noise.
template <class M>
Split<M>
synthetic(std::size_t n, std::uint32_t seed)
{
    auto s = make_split<M>(n);
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> noise(0.0f, 0.6f);
    constexpr std::size_t H = M::input_shape::dims[0], W = M::input_shape::dims[1], C = M::input_shape::dims[2];
    for (std::size_t i = 0; i < n; ++i) {
        const auto label = static_cast<std::int32_t>(gen() % 10);
        s.y(i) = label;
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t w = 0; w < W; ++w)
                for (std::size_t c = 0; c < C; ++c)
                    s.x(i, h, w, c) =
                        noise(gen) + ((h * 10 / H) == std::size_t(label) && c == std::size_t(label) % C ? 0.4f : 0.0f);
    }
    return s;
}

template <class M>
std::pair<Split<M>, Split<M>>
fashion(const Args& a, bool& real)
{
    try {
        const auto d = tpudsl::data::fashion_mnist::load_data(a.data);
        auto convert = [](const tpudsl::data::image_split& sp, std::size_t limit) {
            constexpr auto d = M::input_shape::dims;
            return Split<M>{sp.x<d[0], d[1], d[2]>({.limit = limit}), sp.y(limit)};
        };
        real = true;
        return {convert(d.train, a.fashion_samples), convert(d.test, 10000)};
    } catch (const tpudsl::data::missing_data_set&) {   // present but unreadable is an error
        real = false;
        return {synthetic<M>(a.fashion_samples, 1), synthetic<M>(2000, 2)};
    }
}

template <class M, class Strategy>
Row
run(const char* name, const char* strategy_name, const Split<M>& train, const Split<M>& test, std::size_t batch,
    std::size_t epochs)
{
    Strategy strategy;
    auto model = strategy.template scope<M>(0);
    model.compile(tpudsl::optimizers::Adam{}, tpudsl::losses::SparseCategoricalCrossentropy{},
                  tpudsl::metrics::SparseCategoricalAccuracy{});
    std::ostringstream quiet;
    const auto start = std::chrono::steady_clock::now();
    model.fit(train.x, train.y, {.batch_size = batch, .epochs = epochs, .verbose = 0, .out = &quiet});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto scores = model.evaluate(test.x, test.y, {.batch_size = 256, .verbose = 0, .out = &quiet});
    const double per_epoch = seconds / static_cast<double>(epochs);
    return {name, strategy_name, batch, strategy.threads(), per_epoch,
            static_cast<double>(train.y.size()) / per_epoch, scores[1]};
}

/// A grouped bar chart: one panel per model, bars of seconds per epoch by batch and strategy.
void
write_svg(const std::string& path, const std::vector<Row>& rows, const std::vector<std::size_t>& batches)
{
    const std::vector<std::string> models{"fashion_mnist_cnn", "cifar10_cnn"};
    const int panel_w = 460, panel_h = 300, margin = 50;
    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << 2 * panel_w + margin << "\" height=\""
        << panel_h + 90 << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
        << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    for (std::size_t p = 0; p < models.size(); ++p) {
        double top = 0;
        for (const auto& r : rows)
            if (r.model == models[p])
                top = std::max(top, r.seconds_per_epoch);
        if (top <= 0)
            continue;
        const int x0 = margin + static_cast<int>(p) * panel_w, y0 = 40, h = panel_h - 60;
        svg << "<text x=\"" << x0 + 10 << "\" y=\"24\" font-size=\"14\">" << models[p]
            << ": seconds per epoch</text>\n"
            << "<line x1=\"" << x0 << "\" y1=\"" << y0 + h << "\" x2=\"" << x0 + panel_w - 40 << "\" y2=\"" << y0 + h
            << "\" stroke=\"black\"/>\n";
        const double group = (panel_w - 60.0) / static_cast<double>(batches.size());
        for (std::size_t b = 0; b < batches.size(); ++b) {
            int k = 0;
            for (const auto& r : rows) {
                if (r.model != models[p] || r.batch != batches[b])
                    continue;
                const double bh = r.seconds_per_epoch / top * h;
                const double bx = x0 + 10 + b * group + k * group * 0.4;
                svg << "<rect x=\"" << bx << "\" y=\"" << y0 + h - bh << "\" width=\"" << group * 0.38
                    << "\" height=\"" << bh << "\" fill=\"" << (r.strategy == "one" ? "#7f7f7f" : "#1f77b4")
                    << "\"><title>" << r.strategy << " batch " << r.batch << ": " << r.seconds_per_epoch
                    << " s</title></rect>\n";
                char label[32];
                std::snprintf(label, sizeof label, "%.1f", r.seconds_per_epoch);
                svg << "<text x=\"" << bx << "\" y=\"" << y0 + h - bh - 3 << "\" font-size=\"9\">" << label
                    << "</text>\n";
                ++k;
            }
            svg << "<text x=\"" << x0 + 10 + b * group + group * 0.2 << "\" y=\"" << y0 + h + 16 << "\">"
                << batches[b] << "</text>\n";
        }
        svg << "<text x=\"" << x0 + panel_w / 2 - 60 << "\" y=\"" << y0 + h + 34 << "\">global batch size</text>\n";
    }
    svg << "<rect x=\"" << margin << "\" y=\"" << panel_h + 50 << "\" width=\"12\" height=\"12\" fill=\"#7f7f7f\"/>"
        << "<text x=\"" << margin + 18 << "\" y=\"" << panel_h + 60 << "\">OneDeviceStrategy (1 core)</text>\n"
        << "<rect x=\"" << margin + 220 << "\" y=\"" << panel_h + 50
        << "\" width=\"12\" height=\"12\" fill=\"#1f77b4\"/>"
        << "<text x=\"" << margin + 238 << "\" y=\"" << panel_h + 60 << "\">TpuStrategy&lt;8&gt; (all cores)</text>\n"
        << "</svg>\n";
    tpudsl::write_file(path, svg.str(), "tpu_vs_cpu");
}

} // namespace

int
main(int argc, char** argv)
try {
    Args a;
    const std::string usage = "usage: tpu_vs_cpu [--epochs N] [--batches 32,64,...] [--fashion-samples N] "
                              "[--cifar-samples N] [--data DIR] [--out DIR]";
    constexpr std::uint64_t many = std::uint64_t{1} << 40;
    for (int i = 1; i < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--help" || flag == "-h") {
            std::cout << usage << '\n';
            return 0;
        }
        if (i + 1 >= argc)
            throw seeds::usage_error("missing value after " + flag, usage);
        const std::string value = argv[i + 1];
        if (flag == "--epochs")
            a.epochs = seeds::parse_number(flag, value, 1, many, usage);
        else if (flag == "--fashion-samples")
            a.fashion_samples = seeds::parse_number(flag, value, 1, 60000, usage);   // the data set's size
        else if (flag == "--cifar-samples")
            a.cifar_samples = seeds::parse_number(flag, value, 1, 50000, usage);
        else if (flag == "--data")
            a.data = value;
        else if (flag == "--out")
            a.out = value;
        else if (flag == "--batches") {
            a.batches.clear();
            std::stringstream ss(value);
            for (std::string b; std::getline(ss, b, ',');)
                a.batches.push_back(seeds::parse_number(flag, b, 1, many, usage));
            if (a.batches.empty())
                throw seeds::usage_error("--batches '" + value + "': expected batch sizes separated by commas", usage);
        } else {
            throw seeds::usage_error("unknown flag " + flag, usage);
        }
    }
    bool real = false;
    const auto [f_train, f_test] = fashion<seeds::FashionCnn>(a, real);
    std::cout << "CIFAR-10: synthetic stand-in (" << a.cifar_samples << " training samples of shape (32, 32, 3))\n"
              << "Fashion-MNIST: " << (real ? "the real data set" : "synthetic stand-in (data set not found)") << " ("
              << f_train.y.size() << " training samples)\n";
    const auto c_train = synthetic<seeds::Cifar10Cnn>(a.cifar_samples, 3);
    const auto c_test = synthetic<seeds::Cifar10Cnn>(1000, 4);
    tpudsl::initialize_cpu_system(tpudsl::CpuClusterResolver{}, std::cout);

    std::vector<Row> rows;
    std::printf("%-18s %-9s %6s %8s %14s %11s %9s\n", "model", "strategy", "batch", "threads", "s/epoch",
                "samples/s", "accuracy");
    auto print = [](const Row& r) {
        std::printf("%-18s %-9s %6zu %8zu %14.2f %11.0f %9.4f\n", r.model.c_str(), r.strategy.c_str(), r.batch,
                    r.threads, r.seconds_per_epoch, r.samples_per_s, r.accuracy);
        std::fflush(stdout);
    };
    for (std::size_t b : a.batches) {
        for (auto r : {run<seeds::FashionCnn, tpudsl::OneDeviceStrategy>("fashion_mnist_cnn", "one", f_train, f_test,
                                                                          b, a.epochs),
                       run<seeds::FashionCnn, tpudsl::TpuStrategy<8>>("fashion_mnist_cnn", "tpu8", f_train, f_test,
                                                                       b, a.epochs)}) {
            print(r);
            rows.push_back(r);
        }
    }
    for (std::size_t b : a.batches) {
        for (auto r : {run<seeds::Cifar10Cnn, tpudsl::OneDeviceStrategy>("cifar10_cnn", "one", c_train, c_test, b,
                                                                          a.epochs),
                       run<seeds::Cifar10Cnn, tpudsl::TpuStrategy<8>>("cifar10_cnn", "tpu8", c_train, c_test, b,
                                                                       a.epochs)}) {
            print(r);
            rows.push_back(r);
        }
    }

    std::filesystem::create_directories(a.out);
    const auto csv_path = (std::filesystem::path(a.out) / "tpu_vs_cpu.csv").string();
    std::ostringstream csv;
    csv << "model,strategy,batch,threads,seconds_per_epoch,samples_per_s,test_accuracy\n";
    for (const auto& r : rows)
        csv << r.model << ',' << r.strategy << ',' << r.batch << ',' << r.threads << ',' << r.seconds_per_epoch << ','
            << r.samples_per_s << ',' << r.accuracy << '\n';
    tpudsl::write_file(csv_path, csv.str(), "tpu_vs_cpu");   // whole, or not at all
    const auto svg_path = (std::filesystem::path(a.out) / "tpu_vs_cpu.svg").string();
    write_svg(svg_path, rows, a.batches);
    std::cout << "Wrote " << csv_path << " and " << svg_path << '\n';
    return 0;
} catch (const std::exception& e) {
    std::cerr << "tpu_vs_cpu: " << e.what() << '\n';
    return 1;
}
