// TensorBoard: the event files a fit writes, read back by a reader of this test's own (the TFRecord
// framing and its CRC-32Cs, then the Event, Summary and HistogramProto fields, decoded from the
// protobuf wire format), hold every epoch's values of the History the fit returns, the batches' values
// at update_freq and the weights' histograms at histogram_freq; a log_dir that cannot be made stops
// the fit before its first step. The real `tensorboard` package reads a seed's files in ctest
// keras.tensorboard (tests/keras/tensorboard_log.py).
#include "scratch_dir.hpp"
#include "toy_data.hpp"

#include <tpudsl/tpudsl.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

using namespace tpudsl;
using tpudsl_tests::make_toy;
using tpudsl_tests::scratch_dir;
namespace fs = std::filesystem;

namespace {

using Toy = Sequential<Input<Shape<4>>, Dense<8, Relu>, Dense<3, Softmax>>;

/// CRC-32C bit by bit, apart from the library's table.
std::uint32_t
crc32c_bitwise(std::string_view s)
{
    std::uint32_t c = 0xFFFFFFFFu;
    for (const char ch : s) {
        c ^= static_cast<unsigned char>(ch);
        for (int k = 0; k < 8; ++k)
            c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    }
    return ~c;
}

std::uint32_t
masked(std::uint32_t crc)
{
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::uint64_t
le(std::string_view s, std::size_t at, int bytes)
{
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
        v |= std::uint64_t{static_cast<unsigned char>(s[at + static_cast<std::size_t>(i)])} << (8 * i);
    return v;
}

/// The records of a TFRecord file, each one's framing and CRCs checked.
std::vector<std::string>
read_records(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    const std::string file{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::vector<std::string> records;
    for (std::size_t at = 0; at < file.size();) {
        REQUIRE(file.size() - at >= 12);
        const std::uint64_t n = le(file, at, 8);
        CHECK(le(file, at + 8, 4) == masked(crc32c_bitwise(std::string_view(file).substr(at, 8))));
        REQUIRE(file.size() - at - 12 >= n + 4);
        const std::string data = file.substr(at + 12, n);
        CHECK(le(file, at + 12 + n, 4) == masked(crc32c_bitwise(data)));
        records.push_back(data);
        at += 12 + n + 4;
    }
    return records;
}

/// A protobuf message's fields: for each number, its values (varints, fixed64/fixed32 as their bits, or
/// the bytes of a length-delimited field).
struct fields {
    std::map<unsigned, std::vector<std::uint64_t>> numbers;
    std::map<unsigned, std::vector<std::string>> bytes;
};

std::uint64_t
varint(std::string_view s, std::size_t& at)
{
    std::uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        REQUIRE(at < s.size());
        const auto b = static_cast<unsigned char>(s[at++]);
        v |= std::uint64_t{b & 0x7Fu} << shift;
        if (!(b & 0x80))
            return v;
    }
}

fields
parse(std::string_view s)
{
    fields f;
    for (std::size_t at = 0; at < s.size();) {
        const std::uint64_t key = varint(s, at);
        const auto field = static_cast<unsigned>(key >> 3);
        switch (key & 7) {
        case 0: f.numbers[field].push_back(varint(s, at)); break;
        case 1: REQUIRE(s.size() - at >= 8); f.numbers[field].push_back(le(s, at, 8)); at += 8; break;
        case 5: REQUIRE(s.size() - at >= 4); f.numbers[field].push_back(le(s, at, 4)); at += 4; break;
        case 2: {
            const std::uint64_t n = varint(s, at);
            REQUIRE(s.size() - at >= n);
            f.bytes[field].emplace_back(s.substr(at, n));
            at += n;
            break;
        }
        default: FAIL("wire type " << (key & 7));
        }
    }
    return f;
}

double
as_double(std::uint64_t bits)
{
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
}

float
as_float(std::uint64_t bits)
{
    const auto b = static_cast<std::uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}

std::vector<double>
packed_doubles(const std::string& s)
{
    REQUIRE(s.size() % 8 == 0);
    std::vector<double> v;
    for (std::size_t at = 0; at < s.size(); at += 8)
        v.push_back(as_double(le(s, at, 8)));
    return v;
}

struct histogram {
    double min = 0, max = 0, num = 0, sum = 0, sum_squares = 0;
    std::vector<double> limits, counts;
};

struct value {
    std::string tag;
    std::optional<float> simple;
    std::optional<histogram> histo;
};

struct event {
    double wall_time = 0;
    std::uint64_t step = 0;
    std::string file_version;
    std::vector<value> values;
};

/// What TensorBoard's reader takes from an event file: its Events (tensorboard's event.proto: 1
/// wall_time, 2 step, 3 file_version, 5 summary; Summary.value 1; Value 1 tag, 2 simple_value, 5 histo).
std::vector<event>
read_events(const fs::path& path)
{
    std::vector<event> events;
    for (const std::string& record : read_records(path)) {
        const fields e = parse(record);
        event ev;
        REQUIRE(e.numbers.count(1) == 1);
        ev.wall_time = as_double(e.numbers.at(1).at(0));
        if (e.numbers.count(2))
            ev.step = e.numbers.at(2).at(0);
        if (e.bytes.count(3))
            ev.file_version = e.bytes.at(3).at(0);
        fields summary;
        if (e.bytes.count(5))
            summary = parse(e.bytes.at(5).at(0));
        for (const std::string& v : summary.bytes[1]) {
            const fields vf = parse(v);
            value val{vf.bytes.at(1).at(0), std::nullopt, std::nullopt};
            if (vf.numbers.count(2))
                val.simple = as_float(vf.numbers.at(2).at(0));
            if (vf.bytes.count(5)) {
                const fields h = parse(vf.bytes.at(5).at(0));
                histogram hist{as_double(h.numbers.at(1).at(0)), as_double(h.numbers.at(2).at(0)),
                               as_double(h.numbers.at(3).at(0)), as_double(h.numbers.at(4).at(0)),
                               as_double(h.numbers.at(5).at(0)), packed_doubles(h.bytes.at(6).at(0)),
                               packed_doubles(h.bytes.at(7).at(0))};
                val.histo = hist;
            }
            ev.values.push_back(val);
        }
        events.push_back(ev);
    }
    return events;
}

/// The event files in a directory.
std::vector<fs::path>
event_files(const fs::path& dir)
{
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir))
        files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    return files;
}

/// A run's scalars, tag -> step -> value, from its one file (whose first Event is the file version).
std::map<std::string, std::map<std::uint64_t, float>>
scalars_of(const std::vector<event>& events)
{
    std::map<std::string, std::map<std::uint64_t, float>> s;
    for (const event& e : events)
        for (const value& v : e.values)
            if (v.simple) {
                INFO(v.tag << " at step " << e.step);
                CHECK(s[v.tag].count(e.step) == 0);
                s[v.tag][e.step] = *v.simple;
            }
    return s;
}

/// What the fit showed the callbacks after TensorBoard: each batch's logs, the weights at each epoch's end.
class seen_by_callbacks : public Callback {
public:
    std::vector<Logs> batches;
    std::vector<std::vector<float>> weights;
    void on_train_batch_end(std::size_t, const Logs& logs, TrainingControl&) override { batches.push_back(logs); }
    void
    on_epoch_end(std::size_t, Logs&, TrainingControl& control) override
    {
        weights.push_back(control.get_weights());
    }
};

double
now()
{
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

} // namespace

TEST_CASE("TensorBoard: CRC-32C and the masked CRC are TFRecord's", "[callbacks][tensorboard]")
{
    CHECK(detail::crc32c("123456789", 9) == 0xE3069283u);   // the standard check value
    CHECK(detail::crc32c("", 0) == 0u);
    const std::string bytes = "\x00\x01\xfe\xff tfevents";
    CHECK(detail::crc32c(bytes.data(), bytes.size()) == crc32c_bitwise(bytes));
    CHECK(detail::masked_crc32c(0x12345678u) == masked(0x12345678u));
}

TEST_CASE("TensorBoard writes every epoch's values as TensorBoard reads them, equal to History",
          "[callbacks][tensorboard]")
{
    const auto train = make_toy(96, 41);
    const auto val = make_toy(32, 42);
    Trainable<Toy> model(7);
    model.compile(optimizers::Adam{.learning_rate = 0.05f}, losses::SparseCategoricalCrossentropy{},
                  metrics::SparseCategoricalAccuracy{});
    const scratch_dir dir("tensorboard");
    seen_by_callbacks seen;   // each batch's logs, the weights at each epoch's end
    FitOptions o{.batch_size = 32, .epochs = 4, .verbose = 0, .validation_data = validation_data(val.x, val.y),
                 .validation_freq = 2, .callbacks = {seen}};
    const double started = now();

    // [tensorboard]
    // log_dir/train: epoch_loss, epoch_<metric> and epoch_learning_rate each epoch, batch_<name> every 2
    // batches, each weight's histogram every 2 epochs; log_dir/validation: the val_ values as epoch_<name>.
    TensorBoard board(dir / "logs", {.histogram_freq = 2, .update_freq = 2, .weights = tensorboard_weights<Toy>()});
    o.callbacks.push_back(board);
    const History h = model.fit(train.x, train.y, o);
    // [tensorboard]

    const double ended = now();
    // TensorBoard puts the learning rate into the epoch's logs: History has it.
    REQUIRE(h["learning_rate"] == std::vector<double>(4, static_cast<double>(0.05f)));
    REQUIRE(h.epochs_of("val_loss") == std::vector<std::size_t>{1, 3});

    const std::vector<fs::path> train_files = event_files(dir.path / "logs" / "train");
    const std::vector<fs::path> validation_files = event_files(dir.path / "logs" / "validation");
    REQUIRE(train_files.size() == 1);
    REQUIRE(validation_files.size() == 1);
    CHECK(train_files[0].string() == board.train_file());
    CHECK(validation_files[0].string() == board.validation_file());
    const std::regex name(R"(events\.out\.tfevents\.[0-9]{10}\.[^/]+\.[0-9]+\.[0-9]+\.v2)");
    CHECK(std::regex_match(train_files[0].filename().string(), name));
    CHECK(std::regex_match(validation_files[0].filename().string(), name));

    const std::vector<event> train_events = read_events(train_files[0]);
    const std::vector<event> validation_events = read_events(validation_files[0]);
    for (const std::vector<event>* events : {&train_events, &validation_events}) {
        REQUIRE(!events->empty());
        CHECK(events->front().file_version == "brain.Event:2");   // the first record, as TensorFlow's
        CHECK(events->front().values.empty());
        for (std::size_t i = 0; i < events->size(); ++i) {
            CHECK((*events)[i].wall_time >= started - 1);
            CHECK((*events)[i].wall_time <= ended + 1);
            if (i > 0) {
                CHECK((*events)[i].file_version.empty());
                CHECK((*events)[i].values.size() == 1);   // one value an event, as tf.summary writes them
                CHECK((*events)[i].wall_time >= (*events)[i - 1].wall_time);
            }
        }
    }

    // Every epoch's values: train's in train/ as epoch_<name>, the val_ ones in validation/ without the
    // prefix, at step = the epoch; each the History's value as a float (TensorBoard's simple_value).
    const auto train_scalars = scalars_of(train_events);
    const auto validation_scalars = scalars_of(validation_events);
    for (const auto& [key, values] : h.history) {
        const bool validation = key.starts_with("val_");
        const std::string tag = "epoch_" + (validation ? key.substr(4) : key);
        const auto& scalars = validation ? validation_scalars : train_scalars;
        INFO(key);
        REQUIRE(scalars.count(tag) == 1);
        const std::map<std::uint64_t, float>& by_step = scalars.at(tag);
        REQUIRE(by_step.size() == values.size());
        for (std::size_t i = 0; i < values.size(); ++i) {
            const std::size_t epoch = h.epochs_of(key)[i];
            REQUIRE(by_step.count(epoch) == 1);
            CHECK(by_step.at(epoch) == static_cast<float>(values[i]));
        }
    }
    CHECK(validation_scalars.size() == 2);   // epoch_loss, epoch_sparse_categorical_accuracy

    // update_freq = 2: batch_<name> at batches 2, 4, ..., 12 counted from the fit's start (3 an epoch).
    REQUIRE(seen.batches.size() == 12);
    for (const std::string name : {"loss", "sparse_categorical_accuracy"}) {
        INFO(name);
        const std::map<std::uint64_t, float>& by_step = train_scalars.at("batch_" + name);
        REQUIRE(by_step.size() == 6);
        for (std::uint64_t step = 2; step <= 12; step += 2)
            CHECK(by_step.at(step) == static_cast<float>(*seen.batches[step - 1].get(name)));
    }
    CHECK(train_scalars.size() == 3 + 2);   // epoch_loss, epoch_..._accuracy, epoch_learning_rate; 2 batch_

    // histogram_freq = 2: each weight's histogram at epochs 0 and 2, of the weights at that epoch's end.
    const std::vector<TensorBoardWeight> weights = tensorboard_weights<Toy>();
    REQUIRE(weights.size() == 4);
    CHECK(weights[0].name == "dense/kernel");
    CHECK(weights[3].name == "dense_1/bias");
    CHECK(weights[3].size == 3);
    std::size_t histograms = 0;
    for (const event& e : train_events)
        for (const value& v : e.values) {
            if (!v.histo)
                continue;
            ++histograms;
            INFO(v.tag << " at step " << e.step);
            REQUIRE((e.step == 0 || e.step == 2));
            const auto w = std::find_if(weights.begin(), weights.end(),
                                        [&](const TensorBoardWeight& x) { return x.name + "/histogram" == v.tag; });
            REQUIRE(w != weights.end());
            const float* x = seen.weights[e.step].data() + w->offset;
            const histogram& hist = *v.histo;
            CHECK(hist.num == static_cast<double>(w->size));
            CHECK(hist.min == *std::min_element(x, x + w->size));
            CHECK(hist.max == *std::max_element(x, x + w->size));
            double sum = 0, sum_squares = 0;
            for (std::size_t i = 0; i < w->size; ++i) {
                sum += x[i];
                sum_squares += static_cast<double>(x[i]) * x[i];
            }
            CHECK(hist.sum == sum);
            CHECK(hist.sum_squares == sum_squares);
            // Bucket i holds the values in [limit[i - 1], limit[i]); the counts add up to num.
            REQUIRE(hist.limits.size() == hist.counts.size());
            REQUIRE(std::is_sorted(hist.limits.begin(), hist.limits.end()));
            double total = 0;
            for (std::size_t b = 0; b < hist.limits.size(); ++b) {
                const double lower = b == 0 ? -INFINITY : hist.limits[b - 1];
                const auto in =
                    std::count_if(x, x + w->size, [&](float y) { return y >= lower && y < hist.limits[b]; });
                CHECK(hist.counts[b] == static_cast<double>(in));
                total += hist.counts[b];
            }
            CHECK(total == hist.num);
        }
    CHECK(histograms == 2 * weights.size());

    // Each fit writes files of its own: a second fit adds one in train/ and leaves the first as it was.
    const auto first_size = fs::file_size(train_files[0]);
    model.fit(train.x, train.y, {.batch_size = 32, .epochs = 1, .verbose = 0, .callbacks = {board}});
    CHECK(fs::file_size(train_files[0]) == first_size);
    REQUIRE(event_files(dir.path / "logs" / "train").size() == 2);
    CHECK(board.train_file() != train_files[0].string());
    const auto second = scalars_of(read_events(board.train_file()));
    CHECK(second.at("epoch_loss").size() == 1);
    CHECK(board.validation_file().empty());   // no validation in that fit
}

TEST_CASE("TensorBoard: a log_dir that cannot be made stops the fit before its first step, bad options are refused",
          "[callbacks][tensorboard]")
{
    const auto train = make_toy(64, 43);
    Trainable<Toy> model(8);
    model.compile(optimizers::SGD{}, losses::SparseCategoricalCrossentropy{});
    const std::vector<float> before = model.get_weights();
    const scratch_dir dir("tensorboard_bad");
    {
        std::ofstream(dir / "file") << "a regular file, not a directory\n";
    }
    const std::string log_dir = dir / "file/logs";
    seen_by_callbacks seen;
    try {
        model.fit(train.x, train.y, {.batch_size = 32, .epochs = 2, .verbose = 0,
                                     .callbacks = {TensorBoard(log_dir), seen}});
        FAIL("fit went on with a log_dir under a regular file");
    } catch (const std::system_error& e) {
        const std::string what = e.what();
        INFO(what);
        CHECK(what.starts_with("tpudsl::TensorBoard: cannot create the directory '" + log_dir + "/train'"));
        CHECK(what.find("(log_dir '" + log_dir + "')") != std::string::npos);
        CHECK(e.code() == std::errc::not_a_directory);
    }
    CHECK(seen.batches.empty());
    CHECK(model.get_weights() == before);

    CHECK_THROWS_WITH(TensorBoard(""), Catch::Contains("log_dir is empty"));
    CHECK_THROWS_WITH(TensorBoard("logs", {.histogram_freq = 1}),
                      Catch::Contains("histogram_freq is 1 but no weights are given") &&
                          Catch::Contains("tensorboard_weights<Model>()"));
    // weights of a larger model: refused at the fit's start, before any step
    using Wide = Sequential<Input<Shape<4>>, Dense<64, Relu>, Dense<3, Softmax>>;
    TensorBoard wide(dir / "logs", {.histogram_freq = 1, .weights = tensorboard_weights<Wide>()});
    CHECK_THROWS_WITH(model.fit(train.x, train.y, {.batch_size = 32, .verbose = 0, .callbacks = {wide, seen}}),
                      Catch::Contains("beyond the model's") && Catch::Contains("another model"));
    CHECK(seen.batches.empty());
}
