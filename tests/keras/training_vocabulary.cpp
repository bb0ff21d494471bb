// The C++ side of training_vocabulary.py: every built-in loss, metric, optimizer and learning-rate
// schedule of tpudsl, and the optimizers' options, on fixed inputs, written to stdout as one JSON array
// of cases for Keras to redo and compare.
// Each case names the Keras class and the keyword arguments that mean the same configuration, and
// carries its inputs (the very floats tpudsl read, printed to read back exactly) and tpudsl's answers:
//   loss:      evaluate(loss, view, 1/n, grad): the batch's mean loss (the sum over the rows / n,
//              Keras' default reduction) and its gradient with respect to Keras' y_pred (the outputs,
//              or the logits of a model ending in Softmax);
//   metric:    result() after each of two update()s (two batches, the state accumulating);
//   schedule:  the learning rate at several steps (0, 1, between, at and after decay_steps, on each
//              side of a boundary);
//   optimizer: the weights after each of three steps from the same start, a new gradient each step:
//              the optimizer alone (prepare / update / advance; a Scheduled one with its schedule as
//              Keras' learning_rate), or, with its options (clipping, weight decay, moving average),
//              as the model steps it: several weights of different sizes in one flat buffer, the
//              gradient clipped by norm (detail::norm_clipping) and each piece updated by
//              detail::update_with_options, and after the steps, with use_ema, the weights the end of
//              fit leaves (detail::take_moving_average, Keras' finalize_variable_values).
// The inputs stay away from the points where two correct implementations may part: clipping edges,
// kinks (|e| = delta, e = 0, a hinge margin of 0), ties between scores or with a threshold.
#include <tpudsl/train/losses.hpp>
#include <tpudsl/train/metrics.hpp>
#include <tpudsl/train/optimizers.hpp>
#include <tpudsl/train/schedules.hpp>
#include <tpudsl/train/update_options.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

/// Fixed pseudo-random numbers (SplitMix64), the same on every machine.
class numbers {
  public:
    explicit numbers(std::uint64_t seed) : state_(seed) {}

    /// `count` floats uniform in [lo, hi).
    std::vector<float>
    uniform(std::size_t count, float lo, float hi)
    {
        std::vector<float> v(count);
        for (float& x : v)
            x = lo + static_cast<float>(unit() * (static_cast<double>(hi) - lo));
        return v;
    }
    /// `count` class ids in [0, classes).
    std::vector<std::int32_t>
    labels(std::size_t count, std::int32_t classes)
    {
        std::vector<std::int32_t> v(count);
        for (auto& x : v)
            x = static_cast<std::int32_t>(unit() * classes);
        return v;
    }
    /// `count` of 0 and 1.
    std::vector<float>
    bits(std::size_t count)
    {
        std::vector<float> v(count);
        for (float& x : v)
            x = unit() < 0.5 ? 0.0f : 1.0f;
        return v;
    }

  private:
    double
    unit()
    {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        return static_cast<double>(z >> 11) * 0x1.0p-53;
    }
    std::uint64_t state_;
};

/// softmax over each row of `d`.
std::vector<float>
softmax(const std::vector<float>& z, std::size_t d)
{
    std::vector<float> p(z.size());
    for (std::size_t r = 0; r < z.size(); r += d) {
        const float m = *std::max_element(z.begin() + static_cast<std::ptrdiff_t>(r),
                                          z.begin() + static_cast<std::ptrdiff_t>(r + d));
        double sum = 0.0;
        for (std::size_t j = r; j < r + d; ++j)
            sum += std::exp(static_cast<double>(z[j]) - m);
        for (std::size_t j = r; j < r + d; ++j)
            p[j] = static_cast<float>(std::exp(static_cast<double>(z[j]) - m) / sum);
    }
    return p;
}

/// Rows of softmax(logits uniform in [-spread, spread)): probabilities well inside (1e-7, 1 - 1e-7).
std::vector<float>
softmax_rows(numbers& rng, std::size_t n, std::size_t d, float spread)
{
    return softmax(rng.uniform(n * d, -spread, spread), d);
}

/// One-hot rows of `d` for labels.
std::vector<float>
one_hot(const std::vector<std::int32_t>& labels, std::size_t d)
{
    std::vector<float> t(labels.size() * d, 0.0f);
    for (std::size_t r = 0; r < labels.size(); ++r)
        t[r * d + static_cast<std::size_t>(labels[r])] = 1.0f;
    return t;
}

/// JSON written as it goes, commas placed by nesting.
class json_out {
  public:
    /// '{' or '[', as a value of the open container.
    void
    open(char c)
    {
        item();
        text_ += c;
        first_.push_back(true);
    }
    void
    close(char c)
    {
        text_ += c;
        first_.pop_back();
    }
    /// A key of the open object; the value follows.
    void
    key(std::string_view k)
    {
        item();
        text_ += '"';
        text_ += k;
        text_ += "\": ";
        after_key_ = true;
    }
    void
    string(std::string_view s)
    {
        item();
        text_ += '"';
        text_ += s;
        text_ += '"';
    }
    /// JSON text as it is (a case's Keras arguments, written by hand).
    void
    raw(std::string_view s)
    {
        item();
        text_ += s;
    }
    /// 17 significant digits: the double reads back exactly.
    void
    number(double v)
    {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", v);
        raw(buf);
    }
    /// Floats with 9 significant digits and doubles with 17: each reads back exactly.
    template <class T>
    void
    array(const std::vector<T>& v)
    {
        open('[');
        for (const T x : v) {
            char buf[32];
            if constexpr (std::is_same_v<T, float>)
                std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(x));
            else if constexpr (std::is_same_v<T, double>)
                std::snprintf(buf, sizeof buf, "%.17g", x);
            else
                std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(x));
            raw(buf);
        }
        close(']');
    }
    [[nodiscard]] const std::string& text() const { return text_; }

  private:
    void
    item()
    {
        if (after_key_) {
            after_key_ = false;
            return;
        }
        if (!first_.empty()) {
            if (!first_.back())
                text_ += first_.size() == 1 ? ",\n" : ", ";
            first_.back() = false;
        }
    }
    std::string text_;
    std::vector<bool> first_;
    bool after_key_ = false;
};

/// The start of a case: its kind, tpudsl's name for it, whether it reads class ids, the Keras class
/// and its arguments.
void
begin_case(json_out& out, std::string_view kind, std::string_view tpudsl_name, bool sparse_labels,
           std::string_view keras_class, std::string_view args)
{
    out.open('{');
    out.key("kind");
    out.string(kind);
    out.key("tpudsl");
    out.string(tpudsl_name);
    out.key("sparse_labels");
    out.raw(sparse_labels ? "true" : "false");
    out.key("keras");
    out.string(keras_class);
    out.key("args");
    out.raw(args);
}

/// What a loss case reads: n rows of `width`. Keras' y_pred is `output`, or `logits` when they are
/// given (tpudsl's output is then their softmax, as for a model that ends in Softmax).
struct loss_inputs {
    std::size_t n = 0, width = 0;
    std::vector<float> output;
    std::vector<float> logits;
    std::vector<std::int32_t> labels;
    std::vector<float> targets;
    std::vector<float> sample_weight;
};

template <tpudsl::Loss L>
void
loss_case(json_out& out, std::string_view keras_class, std::string_view args, const L& loss, loss_inputs in)
{
    const std::size_t n = in.n, d = in.width;
    if (!in.logits.empty())
        in.output = softmax(in.logits, d);
    tpudsl::loss_view view{.n = n,
                           .width = d,
                           .output = in.output.data(),
                           .logits = in.logits.empty() ? nullptr : in.logits.data(),
                           .sparse_labels = in.labels.empty() ? nullptr : in.labels.data(),
                           .dense_labels = in.targets.empty() ? nullptr : in.targets.data(),
                           .sample_weight = in.sample_weight.empty() ? nullptr : in.sample_weight.data()};
    std::vector<float> grad(n * d, 0.0f);
    // Keras' sum_over_batch_size: over the rows scored (all but those of an ignore_class)
    const std::size_t scored = tpudsl::scored_rows(loss, view);
    const double sum = tpudsl::evaluate(loss, view, scored ? 1.0f / static_cast<float>(scored) : 0.0f, grad.data());
    begin_case(out, "loss", L::name, L::sparse_labels, keras_class, args);
    out.key("shape");
    out.array(std::vector<std::size_t>{n, d});
    out.key("logits_of_softmax");   // Keras' y_pred is the logits of tpudsl's output
    out.raw(in.logits.empty() ? "false" : "true");
    out.key("y_pred");
    out.array(in.logits.empty() ? in.output : in.logits);
    out.key("y_true");
    if (L::sparse_labels)
        out.array(in.labels);
    else
        out.array(in.targets);
    if (!in.sample_weight.empty()) {
        out.key("sample_weight");
        out.array(in.sample_weight);
    }
    out.key("value");
    out.number(scored ? sum / static_cast<double>(scored) : 0.0);
    out.key("grad");
    out.array(grad);
    out.close('}');
}

/// One batch a metric reads: `rows` of the case's width.
struct metric_inputs {
    std::size_t rows = 0;
    std::vector<float> output;
    std::vector<std::int32_t> labels;
    std::vector<float> targets;
    std::vector<float> sample_weight;
};

template <tpudsl::Metric M>
void
metric_case(json_out& out, std::string_view keras_class, std::string_view args, const M& metric, std::size_t width,
            const std::vector<metric_inputs>& batches)
{
    std::vector<double> state(M::state_size, 0.0), results;
    begin_case(out, "metric", metric.name, M::sparse_labels, keras_class, args);
    out.key("width");
    out.number(static_cast<double>(width));
    out.key("batches");
    out.open('[');
    for (const metric_inputs& b : batches) {
        metric.update(tpudsl::metric_batch{.rows = b.rows,
                                           .width = width,
                                           .output = b.output.data(),
                                           .labels = b.labels.empty() ? nullptr : b.labels.data(),
                                           .targets = b.targets.empty() ? nullptr : b.targets.data(),
                                           .sample_weight = b.sample_weight.empty() ? nullptr : b.sample_weight.data()},
                      state.data());
        results.push_back(metric.result(state.data()));
        out.open('{');
        out.key("y_pred");
        out.array(b.output);
        out.key("y_true");
        if (M::sparse_labels)
            out.array(b.labels);
        else
            out.array(b.targets);
        if (!b.sample_weight.empty()) {
            out.key("sample_weight");
            out.array(b.sample_weight);
        }
        out.close('}');
    }
    out.close(']');
    out.key("results");
    out.array(results);
    out.close('}');
}

/// Three steps of an optimizer on `w0`, gradient `grads[t - 1]` at step t, its slots zero (or its
/// `initial_slot_value`) at the start, as the trainer sets them.
template <tpudsl::Optimizer O>
void
optimizer_case(json_out& out, std::string_view args, O opt, const std::vector<float>& w0,
               const std::vector<std::vector<float>>& grads)
{
    const std::size_t n = w0.size();
    std::vector<float> w = w0;
    std::array<std::vector<float>, tpudsl::max_optimizer_slots> slots;
    float* slot_ptrs[tpudsl::max_optimizer_slots] = {};
    for (std::size_t s = 0; s < slots.size(); ++s) {
        float initial = 0.0f;
        if constexpr (requires { opt.initial_slot_value(s); })
            if (s < O::slots)
                initial = static_cast<float>(opt.initial_slot_value(s));
        slots[s].assign(n, initial);
        slot_ptrs[s] = slots[s].data();
    }
    begin_case(out, "optimizer", O::name, false, O::name, args);
    out.key("w0");
    out.array(w0);
    out.key("grads");
    out.open('[');
    for (const auto& g : grads)
        out.array(g);
    out.close(']');
    out.key("weights");
    out.open('[');
    std::uint64_t t = 0;
    for (const auto& g : grads) {
        auto c = opt.prepare(++t);
        opt.update(c, w.data(), g.data(), slot_ptrs, 0, n);
        if constexpr (requires { opt.advance(c); })
            opt.advance(c);
        out.array(w);
    }
    out.close(']');
    out.close('}');
}

/// A schedule's learning rate at each of `steps`.
template <tpudsl::LearningRateSchedule S>
void
schedule_case(json_out& out, std::string_view keras_class, std::string_view args, const S& schedule,
              const std::vector<std::uint64_t>& steps)
{
    std::vector<float> values;
    for (const std::uint64_t step : steps)
        values.push_back(static_cast<float>(schedule(step)));
    begin_case(out, "schedule", keras_class, false, keras_class, args);
    out.key("steps");
    out.array(steps);
    out.key("values");
    out.array(values);
    out.close('}');
}

/// Three steps of an optimizer with its options, as the model takes them: the weights of `sizes`
/// floats each, one after the other in a flat buffer (Keras' Variables, in that order), gradient
/// `grads[t - 1]` at step t. The learning rate of step t is the optimizer's learning_rate before
/// prepare(t) (a Scheduled one's: its schedule's at t - 1); a step that clips by norm leaves the summed
/// gradient in the clipping's sums, sums its squares on two threads' segments and updates two shards
/// that cut a weight; otherwise the gradient is updated from in one piece. The moving average, with
/// use_ema, is the slot after the optimizer's; after the steps the weights take it, as at the end of fit.
template <tpudsl::Optimizer O>
void
options_case(json_out& out, std::string_view args, O opt, const std::vector<std::size_t>& sizes,
             const std::vector<float>& w0, const std::vector<std::vector<float>>& grads)
{
    namespace D = tpudsl::detail;
    const tpudsl::optimizers::optimizer_options& options = *tpudsl::optimizers::options_of(opt);
    const std::size_t n = w0.size();
    std::vector<std::pair<std::size_t, std::size_t>> variables;
    for (std::size_t at = 0; const std::size_t size : sizes) {
        variables.emplace_back(at, at + size);
        at += size;
    }
    D::norm_clipping clipping;
    clipping.prepare(variables, n, options.clipnorm, options.global_clipnorm);

    std::vector<float> w = w0;
    std::vector<std::vector<float>> slots(O::slots + (options.use_ema ? 1 : 0));
    float* slot_ptrs[tpudsl::max_optimizer_slots + 1] = {};
    for (std::size_t s = 0; s < slots.size(); ++s) {
        float initial = 0.0f;
        if constexpr (requires { opt.initial_slot_value(s); })
            if (s < O::slots)
                initial = static_cast<float>(opt.initial_slot_value(s));
        slots[s].assign(n, initial);
        slot_ptrs[s] = slots[s].data();
    }
    begin_case(out, "optimizer", O::name, false, O::name, args);
    out.key("variables");
    out.array(sizes);
    out.key("w0");
    out.array(w0);
    out.key("grads");
    out.open('[');
    for (const auto& g : grads)
        out.array(g);
    out.close(']');
    out.key("weights");
    out.open('[');
    std::uint64_t t = 0;
    for (const auto& grad : grads) {
        const float lr = opt.learning_rate;
        const auto c = opt.prepare(++t);
        const auto update = [&](float* g, std::size_t b, std::size_t e) {
            D::update_with_options(opt, c, lr, t, w.data(), g, slot_ptrs, b, e);
        };
        if (clipping.on()) {
            std::copy(grad.begin(), grad.end(), clipping.sums());
            clipping.square_sums(0, 2);
            clipping.square_sums(1, 2);
            clipping.compute_factors();
            const std::size_t cut = sizes[0] / 2;
            clipping.clip(0, cut, [&](std::size_t b, std::size_t e) { update(clipping.sums(), b, e); });
            clipping.clip(cut, n, [&](std::size_t b, std::size_t e) { update(clipping.sums(), b, e); });
        } else {
            std::vector<float> g = grad;   // clipping by value clips it in place
            update(g.data(), 0, n);
        }
        if constexpr (requires { opt.advance(c); })
            opt.advance(c);
        out.array(w);
    }
    out.close(']');
    if (options.use_ema) {
        D::take_moving_average(w.data(), slots[O::slots].data(), n, {});
        out.key("finalized");
        out.array(w);
    }
    out.close('}');
}

namespace L = tpudsl::losses;
namespace M = tpudsl::metrics;
namespace O = tpudsl::optimizers;
namespace S = tpudsl::optimizers::schedules;

/// Keras' arguments of an optimizer whose learning_rate is `keras_class(**schedule_args)`, then `rest`
/// (more members of the JSON object, each after a comma).
std::string
scheduled_args(std::string_view keras_class, std::string_view schedule_args, std::string_view rest = "")
{
    std::string args = "{\"learning_rate\": {\"schedule\": \"";
    args += keras_class;
    args += "\", \"args\": ";
    args += schedule_args;
    args += "}";
    args += rest;
    args += "}";
    return args;
}

// The schedules of the scheduled optimizers, each with its Keras arguments: a rate that differs at
// steps 0, 1 and 2.
constexpr std::string_view exponential = "{\"initial_learning_rate\": 0.1, \"decay_steps\": 2, \"decay_rate\": 0.5}";
const S::ExponentialDecay exponential_decay{.initial_learning_rate = 0.1f, .decay_steps = 2, .decay_rate = 0.5f};
constexpr std::string_view exponential_stairs =
    "{\"initial_learning_rate\": 0.1, \"decay_steps\": 1, \"decay_rate\": 0.3, \"staircase\": true}";
const S::ExponentialDecay exponential_stairs_decay{.initial_learning_rate = 0.1f, .decay_steps = 1, .decay_rate = 0.3f,
                                                   .staircase = true};
constexpr std::string_view piecewise = "{\"boundaries\": [0, 1], \"values\": [0.2, 0.1, 0.05]}";
const S::PiecewiseConstantDecay piecewise_decay{.boundaries = {0, 1}, .values = {0.2f, 0.1f, 0.05f}};
constexpr std::string_view cosine = "{\"initial_learning_rate\": 0.1, \"decay_steps\": 2, \"alpha\": 0.1}";
const S::CosineDecay cosine_decay{.initial_learning_rate = 0.1f, .decay_steps = 2, .alpha = 0.1f};
constexpr std::string_view warmup =
    "{\"initial_learning_rate\": 0.01, \"decay_steps\": 2, \"warmup_target\": 0.1, \"warmup_steps\": 1}";
const S::CosineDecay warmup_decay{.initial_learning_rate = 0.01f, .decay_steps = 2, .warmup_target = 0.1f,
                                  .warmup_steps = 1};
constexpr std::string_view inverse = "{\"initial_learning_rate\": 0.1, \"decay_steps\": 1, \"decay_rate\": 0.5}";
const S::InverseTimeDecay inverse_decay{.initial_learning_rate = 0.1f, .decay_steps = 1, .decay_rate = 0.5f};
constexpr std::string_view inverse_stairs =
    "{\"initial_learning_rate\": 0.05, \"decay_steps\": 0.5, \"decay_rate\": 1.0, \"staircase\": true}";
const S::InverseTimeDecay inverse_stairs_decay{.initial_learning_rate = 0.05f, .decay_steps = 0.5f, .decay_rate = 1.0f,
                                               .staircase = true};

void
losses(json_out& out)
{
    numbers rng(101);
    constexpr std::size_t n = 8, d = 5;
    const auto labels = [&] { return rng.labels(n, d); };
    // The cross-entropies: on probabilities (a softmax's, and positive outputs that do not sum to 1,
    // which Keras' categorical cross-entropy normalises), on logits, with label smoothing, weighted.
    loss_case(out, "SparseCategoricalCrossentropy", "{}", L::SparseCategoricalCrossentropy{},
              {.n = n, .width = d, .output = softmax_rows(rng, n, d, 2.0f), .labels = labels()});
    loss_case(out, "SparseCategoricalCrossentropy", "{\"from_logits\": true}",
              L::SparseCategoricalCrossentropy{.from_logits = true},
              {.n = n, .width = d, .output = rng.uniform(n * d, -3.0f, 3.0f), .labels = labels()});
    loss_case(out, "SparseCategoricalCrossentropy", "{\"from_logits\": true}", L::SparseCategoricalCrossentropy{},
              {.n = n, .width = d, .logits = rng.uniform(n * d, -3.0f, 3.0f), .labels = labels()});
    loss_case(out, "SparseCategoricalCrossentropy", "{}", L::SparseCategoricalCrossentropy{},
              {.n = n, .width = d, .output = softmax_rows(rng, n, d, 2.0f), .labels = labels(),
               .sample_weight = rng.uniform(n, 0.0f, 2.0f)});
    // ignore_class: the rows of -1 (or of a class, 2) scored as nothing, the mean over the others
    const auto some_ignored = [&](std::int32_t ignored) {
        auto y = labels();
        y[1] = y[4] = y[5] = ignored;
        return y;
    };
    loss_case(out, "SparseCategoricalCrossentropy", "{\"ignore_class\": -1}", L::SparseCategoricalCrossentropy{.ignore_class = -1},
              {.n = n, .width = d, .output = softmax_rows(rng, n, d, 2.0f), .labels = some_ignored(-1)});
    loss_case(out, "SparseCategoricalCrossentropy", "{\"from_logits\": true, \"ignore_class\": 2}",
              L::SparseCategoricalCrossentropy{.ignore_class = 2},
              {.n = n, .width = d, .logits = rng.uniform(n * d, -3.0f, 3.0f), .labels = some_ignored(2),
               .sample_weight = rng.uniform(n, 0.0f, 2.0f)});
    loss_case(out, "CategoricalCrossentropy", "{}", L::CategoricalCrossentropy{},
              {.n = n, .width = d, .output = softmax_rows(rng, n, d, 2.0f), .targets = one_hot(labels(), d)});
    loss_case(out, "CategoricalCrossentropy", "{}", L::CategoricalCrossentropy{},
              {.n = n, .width = d, .output = rng.uniform(n * d, 0.05f, 1.0f), .targets = softmax_rows(rng, n, d, 1.0f)});
    loss_case(out, "CategoricalCrossentropy", "{\"label_smoothing\": 0.1}",
              L::CategoricalCrossentropy{.label_smoothing = 0.1f},
              {.n = n, .width = d, .output = rng.uniform(n * d, 0.05f, 1.0f), .targets = one_hot(labels(), d)});
    loss_case(out, "CategoricalCrossentropy", "{\"from_logits\": true}", L::CategoricalCrossentropy{.from_logits = true},
              {.n = n, .width = d, .output = rng.uniform(n * d, -3.0f, 3.0f), .targets = one_hot(labels(), d),
               .sample_weight = rng.uniform(n, 0.0f, 2.0f)});
    loss_case(out, "CategoricalCrossentropy", "{\"from_logits\": true, \"label_smoothing\": 0.2}",
              L::CategoricalCrossentropy{.label_smoothing = 0.2f},
              {.n = n, .width = d, .logits = rng.uniform(n * d, -3.0f, 3.0f), .targets = one_hot(labels(), d)});
    loss_case(out, "BinaryCrossentropy", "{}", L::BinaryCrossentropy{},
              {.n = n, .width = d, .output = rng.uniform(n * d, 0.05f, 0.95f), .targets = rng.bits(n * d)});
    loss_case(out, "BinaryCrossentropy", "{\"label_smoothing\": 0.1}", L::BinaryCrossentropy{.label_smoothing = 0.1f},
              {.n = n, .width = d, .output = rng.uniform(n * d, 0.05f, 0.95f), .targets = rng.uniform(n * d, 0.0f, 1.0f)});
    loss_case(out, "BinaryCrossentropy", "{\"from_logits\": true}", L::BinaryCrossentropy{.from_logits = true},
              {.n = n, .width = d, .output = rng.uniform(n * d, -4.0f, 4.0f), .targets = rng.bits(n * d)});
    loss_case(out, "BinaryCrossentropy", "{\"from_logits\": true, \"label_smoothing\": 0.2}",
              L::BinaryCrossentropy{.from_logits = true, .label_smoothing = 0.2f},
              {.n = n, .width = d, .output = rng.uniform(n * d, -4.0f, 4.0f), .targets = rng.bits(n * d),
               .sample_weight = rng.uniform(n, 0.0f, 2.0f)});
    // The regression losses: errors on both sides of Huber's delta.
    const auto regression = [&](bool weighted) {
        return loss_inputs{.n = n,
                           .width = d,
                           .output = rng.uniform(n * d, -1.5f, 1.5f),
                           .targets = rng.uniform(n * d, -1.0f, 1.0f),
                           .sample_weight = weighted ? rng.uniform(n, 0.0f, 2.0f) : std::vector<float>{}};
    };
    loss_case(out, "MeanSquaredError", "{}", L::MeanSquaredError{}, regression(false));
    loss_case(out, "MeanSquaredError", "{}", L::MeanSquaredError{}, regression(true));
    loss_case(out, "MeanAbsoluteError", "{}", L::MeanAbsoluteError{}, regression(false));
    loss_case(out, "Huber", "{}", L::Huber{}, regression(false));
    loss_case(out, "Huber", "{\"delta\": 0.5}", L::Huber{.delta = 0.5f}, regression(true));
    loss_case(out, "LogCosh", "{}", L::LogCosh{}, regression(false));
    loss_case(out, "KLDivergence", "{}", L::KLDivergence{},
              {.n = n, .width = d, .output = softmax_rows(rng, n, d, 2.0f), .targets = softmax_rows(rng, n, d, 2.0f)});
    loss_case(out, "CosineSimilarity", "{}", L::CosineSimilarity{}, regression(false));
    // Hinge: 0/1 targets (Keras makes them -1/1), and -1/1 targets.
    loss_case(out, "Hinge", "{}", L::Hinge{},
              {.n = n, .width = d, .output = rng.uniform(n * d, -2.0f, 2.0f), .targets = rng.bits(n * d)});
    std::vector<float> signs = rng.bits(n * d);
    for (float& t : signs)
        t = 2.0f * t - 1.0f;
    loss_case(out, "Hinge", "{}", L::Hinge{},
              {.n = n, .width = d, .output = rng.uniform(n * d, -2.0f, 2.0f), .targets = signs});
}

void
metrics(json_out& out)
{
    numbers rng(202);
    constexpr std::size_t n = 16;
    // Two batches of n rows of `d`, scores uniform in [0, 1); `kind` of labels.
    enum class kind { sparse, one_hot, bits, values };
    const auto batches = [&](std::size_t d, kind k, bool weighted) {
        std::vector<metric_inputs> b(2);
        for (metric_inputs& x : b) {
            x.rows = n;
            x.output = rng.uniform(n * d, 0.0f, 1.0f);
            if (k == kind::sparse)
                x.labels = rng.labels(n, static_cast<std::int32_t>(d));
            else if (k == kind::one_hot)
                x.targets = one_hot(rng.labels(n, static_cast<std::int32_t>(d)), d);
            else if (k == kind::bits)
                x.targets = rng.bits(n * d);
            else
                x.targets = rng.uniform(n * d, 0.0f, 1.0f);
            if (weighted)
                x.sample_weight = rng.uniform(n, 0.0f, 2.0f);
        }
        return b;
    };
    metric_case(out, "SparseCategoricalAccuracy", "{}", M::SparseCategoricalAccuracy{}, 3,
                batches(3, kind::sparse, false));
    metric_case(out, "SparseCategoricalAccuracy", "{}", M::SparseCategoricalAccuracy{}, 3,
                batches(3, kind::sparse, true));
    metric_case(out, "CategoricalAccuracy", "{}", M::CategoricalAccuracy{}, 3, batches(3, kind::one_hot, true));
    metric_case(out, "SparseTopKCategoricalAccuracy", "{}", M::SparseTopKCategoricalAccuracy<>{}, 8,
                batches(8, kind::sparse, false));
    metric_case(out, "SparseTopKCategoricalAccuracy", "{\"k\": 2}", M::SparseTopKCategoricalAccuracy<2>{}, 6,
                batches(6, kind::sparse, true));
    metric_case(out, "TopKCategoricalAccuracy", "{}", M::TopKCategoricalAccuracy<>{}, 8,
                batches(8, kind::one_hot, false));
    metric_case(out, "TopKCategoricalAccuracy", "{\"k\": 3}", M::TopKCategoricalAccuracy<3>{}, 6,
                batches(6, kind::one_hot, true));
    metric_case(out, "BinaryAccuracy", "{}", M::BinaryAccuracy{}, 3, batches(3, kind::bits, false));
    metric_case(out, "BinaryAccuracy", "{\"threshold\": 0.3}", M::BinaryAccuracy{.threshold = 0.3f}, 3,
                batches(3, kind::bits, true));
    metric_case(out, "MeanAbsoluteError", "{}", M::MeanAbsoluteError{}, 4, batches(4, kind::values, false));
    metric_case(out, "MeanSquaredError", "{}", M::MeanSquaredError{}, 4, batches(4, kind::values, true));
    metric_case(out, "RootMeanSquaredError", "{}", M::RootMeanSquaredError{}, 4, batches(4, kind::values, true));
    metric_case(out, "Precision", "{}", M::Precision{}, 3, batches(3, kind::bits, false));
    metric_case(out, "Precision", "{\"thresholds\": 0.3}", M::Precision{.threshold = 0.3f}, 3,
                batches(3, kind::bits, true));
    metric_case(out, "Recall", "{}", M::Recall{}, 3, batches(3, kind::bits, false));
    metric_case(out, "Recall", "{\"thresholds\": 0.7}", M::Recall{.threshold = 0.7f}, 3, batches(3, kind::bits, true));
    // AUC: scores that lean towards the targets (an area well above one half).
    const auto leaning = [&](bool weighted) {
        std::vector<metric_inputs> b = batches(2, kind::bits, weighted);
        for (metric_inputs& x : b)
            for (std::size_t i = 0; i < x.output.size(); ++i)
                x.output[i] = 0.6f * x.output[i] + 0.35f * x.targets[i];
        return b;
    };
    metric_case(out, "AUC", "{}", M::AUC{}, 2, leaning(false));
    metric_case(out, "AUC", "{}", M::AUC{}, 2, leaning(true));
    metric_case(out, "AUC", "{\"curve\": \"PR\"}", M::AUC{.curve = M::auc_curve::pr}, 2, leaning(false));
    metric_case(out, "AUC", "{\"curve\": \"PR\"}", M::AUC{.curve = M::auc_curve::pr}, 2, leaning(true));
}

void
optimizers(json_out& out)
{
    numbers rng(303);
    constexpr std::size_t n = 37;   // a vector and a partial one, whatever the width
    const std::vector<float> w0 = rng.uniform(n, -1.0f, 1.0f);
    std::vector<std::vector<float>> grads;
    for (int t = 0; t < 3; ++t)
        grads.push_back(rng.uniform(n, -1.0f, 1.0f));
    // Keras' defaults, then larger steps and the other options (the steps then move the weights by
    // about their own size, so that an update wrong in its 6th digit shows).
    optimizer_case(out, "{}", O::SGD{}, w0, grads);
    optimizer_case(out, "{\"learning_rate\": 0.1, \"momentum\": 0.9}", O::SGD{.learning_rate = 0.1f, .momentum = 0.9f},
                   w0, grads);
    optimizer_case(out, "{\"learning_rate\": 0.1, \"momentum\": 0.9, \"nesterov\": true}",
                   O::SGD{.learning_rate = 0.1f, .momentum = 0.9f, .nesterov = true}, w0, grads);
    optimizer_case(out, "{}", O::Adam{}, w0, grads);
    optimizer_case(out, "{\"learning_rate\": 0.1, \"beta_1\": 0.8, \"beta_2\": 0.99, \"epsilon\": 0.001}",
                   O::Adam{.learning_rate = 0.1f, .beta_1 = 0.8f, .beta_2 = 0.99f, .epsilon = 1e-3f}, w0, grads);
    optimizer_case(out, "{}", O::AdamW{}, w0, grads);
    optimizer_case(out, "{\"learning_rate\": 0.1, \"weight_decay\": 0.05}",
                   O::AdamW{.learning_rate = 0.1f, .weight_decay = 0.05f}, w0, grads);
    optimizer_case(out, "{}", O::Nadam{}, w0, grads);
    optimizer_case(out, "{\"learning_rate\": 0.1, \"beta_1\": 0.8}", O::Nadam{.learning_rate = 0.1f, .beta_1 = 0.8f},
                   w0, grads);
    optimizer_case(out, "{}", O::RMSprop{}, w0, grads);
    optimizer_case(out, "{\"learning_rate\": 0.05, \"rho\": 0.8, \"momentum\": 0.5, \"centered\": true}",
                   O::RMSprop{.learning_rate = 0.05f, .rho = 0.8f, .momentum = 0.5f, .centered = true}, w0, grads);
    optimizer_case(out, "{}", O::Adagrad{}, w0, grads);
    optimizer_case(out, "{\"learning_rate\": 0.1, \"initial_accumulator_value\": 0.5}",
                   O::Adagrad{.learning_rate = 0.1f, .initial_accumulator_value = 0.5f}, w0, grads);
    optimizer_case(out, "{}", O::Adamax{}, w0, grads);
    optimizer_case(out, "{\"learning_rate\": 0.1, \"beta_2\": 0.9}", O::Adamax{.learning_rate = 0.1f, .beta_2 = 0.9f},
                   w0, grads);
    optimizer_case(out, "{}", O::Adadelta{}, w0, grads);
    optimizer_case(out, "{\"learning_rate\": 1.0, \"rho\": 0.9, \"epsilon\": 0.001}",
                   O::Adadelta{.learning_rate = 1.0f, .rho = 0.9f, .epsilon = 1e-3f}, w0, grads);
    optimizer_case(out, "{}", O::Lion{}, w0, grads);
    optimizer_case(out, "{\"learning_rate\": 0.1, \"beta_1\": 0.5, \"beta_2\": 0.9}",
                   O::Lion{.learning_rate = 0.1f, .beta_1 = 0.5f, .beta_2 = 0.9f}, w0, grads);

    // Scheduled: each optimizer with a schedule whose rate differs at steps 0, 1 and 2 (the rate of step
    // t is the schedule's at t - 1, Keras' iterations before the step), as Keras' learning_rate.
    optimizer_case(out, scheduled_args("ExponentialDecay", exponential, ", \"momentum\": 0.9"),
                   O::Scheduled{O::SGD{.momentum = 0.9f}, exponential_decay}, w0, grads);
    optimizer_case(out, scheduled_args("PiecewiseConstantDecay", piecewise, ", \"momentum\": 0.9, \"nesterov\": true"),
                   O::Scheduled{O::SGD{.momentum = 0.9f, .nesterov = true}, piecewise_decay}, w0, grads);
    optimizer_case(out, scheduled_args("CosineDecay", cosine), O::Scheduled{O::Adam{}, cosine_decay}, w0, grads);
    optimizer_case(out, scheduled_args("CosineDecay", warmup, ", \"beta_1\": 0.8"),
                   O::Scheduled{O::Adam{.beta_1 = 0.8f}, warmup_decay}, w0, grads);
    optimizer_case(out, scheduled_args("InverseTimeDecay", inverse, ", \"weight_decay\": 0.05"),
                   O::Scheduled{O::AdamW{.weight_decay = 0.05f}, inverse_decay}, w0, grads);
    optimizer_case(out, scheduled_args("ExponentialDecay", exponential_stairs),
                   O::Scheduled{O::Nadam{}, exponential_stairs_decay}, w0, grads);
    optimizer_case(out, scheduled_args("InverseTimeDecay", inverse_stairs, ", \"momentum\": 0.5"),
                   O::Scheduled{O::RMSprop{.momentum = 0.5f}, inverse_stairs_decay}, w0, grads);
    optimizer_case(out, scheduled_args("ExponentialDecay", exponential),
                   O::Scheduled{O::Adagrad{}, exponential_decay}, w0, grads);
    optimizer_case(out, scheduled_args("CosineDecay", cosine), O::Scheduled{O::Adamax{}, cosine_decay}, w0, grads);
    optimizer_case(out, scheduled_args("PiecewiseConstantDecay", piecewise),
                   O::Scheduled{O::Adadelta{}, piecewise_decay}, w0, grads);
    optimizer_case(out, scheduled_args("PiecewiseConstantDecay", piecewise), O::Scheduled{O::Lion{}, piecewise_decay},
                   w0, grads);
}

void
schedules(json_out& out)
{
    const std::vector<std::uint64_t> steps{0, 1, 5, 9, 10, 11, 25, 1000};
    schedule_case(out, "ExponentialDecay", "{\"initial_learning_rate\": 0.1, \"decay_steps\": 10, \"decay_rate\": 0.5}",
                  S::ExponentialDecay{.initial_learning_rate = 0.1f, .decay_steps = 10, .decay_rate = 0.5f}, steps);
    schedule_case(out, "ExponentialDecay",
                  "{\"initial_learning_rate\": 0.01, \"decay_steps\": 3, \"decay_rate\": 0.96, \"staircase\": true}",
                  S::ExponentialDecay{.initial_learning_rate = 0.01f, .decay_steps = 3, .decay_rate = 0.96f,
                                      .staircase = true},
                  {0, 1, 2, 3, 4, 5, 6, 7, 100, 1000});
    schedule_case(out, "PiecewiseConstantDecay", "{\"boundaries\": [10, 20], \"values\": [0.1, 0.05, 0.01]}",
                  S::PiecewiseConstantDecay{.boundaries = {10, 20}, .values = {0.1f, 0.05f, 0.01f}},
                  {0, 1, 9, 10, 11, 19, 20, 21, 1000});
    schedule_case(out, "PiecewiseConstantDecay",
                  "{\"boundaries\": [0, 4, 5, 9], \"values\": [1.0, 0.5, 0.25, 0.125, 0.0625]}",
                  S::PiecewiseConstantDecay{.boundaries = {0, 4, 5, 9}, .values = {1.0f, 0.5f, 0.25f, 0.125f, 0.0625f}},
                  {0, 1, 3, 4, 5, 6, 9, 10});
    schedule_case(out, "CosineDecay", "{\"initial_learning_rate\": 0.1, \"decay_steps\": 10}",
                  S::CosineDecay{.initial_learning_rate = 0.1f, .decay_steps = 10}, {0, 1, 3, 5, 7, 10, 11, 25});
    schedule_case(out, "CosineDecay", "{\"initial_learning_rate\": 0.1, \"decay_steps\": 10, \"alpha\": 0.2}",
                  S::CosineDecay{.initial_learning_rate = 0.1f, .decay_steps = 10, .alpha = 0.2f}, steps);
    schedule_case(out, "CosineDecay",
                  "{\"initial_learning_rate\": 0.0, \"decay_steps\": 10, \"warmup_target\": 0.1, \"warmup_steps\": 4}",
                  S::CosineDecay{.initial_learning_rate = 0.0f, .decay_steps = 10, .warmup_target = 0.1f,
                                 .warmup_steps = 4},
                  {1, 2, 3, 4, 5, 9, 13, 14, 20});
    schedule_case(out, "CosineDecay",
                  "{\"initial_learning_rate\": 0.01, \"decay_steps\": 10, \"alpha\": 0.1, \"warmup_target\": 0.1, "
                  "\"warmup_steps\": 5}",
                  S::CosineDecay{.initial_learning_rate = 0.01f, .decay_steps = 10, .alpha = 0.1f,
                                 .warmup_target = 0.1f, .warmup_steps = 5},
                  {0, 1, 3, 4, 5, 6, 10, 14, 15, 16, 100});
    schedule_case(out, "InverseTimeDecay", "{\"initial_learning_rate\": 0.1, \"decay_steps\": 10, \"decay_rate\": 0.5}",
                  S::InverseTimeDecay{.initial_learning_rate = 0.1f, .decay_steps = 10, .decay_rate = 0.5f}, steps);
    schedule_case(out, "InverseTimeDecay",
                  "{\"initial_learning_rate\": 0.5, \"decay_steps\": 4, \"decay_rate\": 2.0, \"staircase\": true}",
                  S::InverseTimeDecay{.initial_learning_rate = 0.5f, .decay_steps = 4, .decay_rate = 2.0f,
                                      .staircase = true},
                  {0, 1, 3, 4, 5, 7, 8, 9, 100});
}

void
options(json_out& out)
{
    numbers rng(404);
    // Two weights (a kernel and a bias): the bias' gradients smaller, so that a clip by norm of each
    // weight leaves it as it is where the kernel's is cut (a clip of the whole gradient would not); the
    // second step's gradient small enough that no clip acts.
    const std::vector<std::size_t> sizes{37, 5};
    const std::vector<float> w0 = rng.uniform(37 + 5, -1.0f, 1.0f);
    std::vector<std::vector<float>> grads;
    for (const float scale : {1.0f, 0.15f, 2.0f}) {
        std::vector<float> g;
        for (std::size_t v = 0; v < sizes.size(); ++v) {
            const float spread = (v == 1 ? 0.4f : 1.0f) * scale;
            const std::vector<float> part = rng.uniform(sizes[v], -spread, spread);
            g.insert(g.end(), part.begin(), part.end());
        }
        grads.push_back(g);
    }
    const auto with = [](auto opt, O::optimizer_options options) {
        opt.options = options;
        return opt;
    };
    // Clipping: by each weight's norm, by the global norm, by value.
    options_case(out, "{\"learning_rate\": 0.1, \"momentum\": 0.9, \"clipnorm\": 1.0}",
                 with(O::SGD{.learning_rate = 0.1f, .momentum = 0.9f}, {.clipnorm = 1.0f}), sizes, w0, grads);
    options_case(out, "{\"learning_rate\": 0.1, \"clipnorm\": 0.5}",
                 with(O::Adam{.learning_rate = 0.1f}, {.clipnorm = 0.5f}), sizes, w0, grads);
    options_case(out, "{\"learning_rate\": 0.1, \"global_clipnorm\": 2.0}",
                 with(O::SGD{.learning_rate = 0.1f}, {.global_clipnorm = 2.0f}), sizes, w0, grads);
    options_case(out, "{\"learning_rate\": 0.05, \"momentum\": 0.5, \"global_clipnorm\": 1.5}",
                 with(O::RMSprop{.learning_rate = 0.05f, .momentum = 0.5f}, {.global_clipnorm = 1.5f}), sizes, w0,
                 grads);
    options_case(out, "{\"learning_rate\": 0.1, \"clipvalue\": 0.5}",
                 with(O::SGD{.learning_rate = 0.1f}, {.clipvalue = 0.5f}), sizes, w0, grads);
    options_case(out, "{\"learning_rate\": 0.1, \"clipvalue\": 0.3}",
                 with(O::Adagrad{.learning_rate = 0.1f}, {.clipvalue = 0.3f}), sizes, w0, grads);
    // Weight decay (w -= w wd lr before the update).
    options_case(out, "{\"learning_rate\": 0.1, \"momentum\": 0.9, \"weight_decay\": 0.5}",
                 with(O::SGD{.learning_rate = 0.1f, .momentum = 0.9f}, {.weight_decay = 0.5f}), sizes, w0, grads);
    options_case(out, "{\"learning_rate\": 0.1, \"weight_decay\": 0.5}",
                 with(O::Adam{.learning_rate = 0.1f}, {.weight_decay = 0.5f}), sizes, w0, grads);
    // The moving average: kept only (the weights take it at the end), or copied into the weights every
    // step or every second step.
    options_case(out, "{\"learning_rate\": 0.1, \"momentum\": 0.5, \"use_ema\": true, \"ema_momentum\": 0.5}",
                 with(O::SGD{.learning_rate = 0.1f, .momentum = 0.5f}, {.use_ema = true, .ema_momentum = 0.5f}), sizes,
                 w0, grads);
    options_case(out, "{\"use_ema\": true}", with(O::Adam{}, {.use_ema = true}), sizes, w0, grads);
    options_case(out,
                 "{\"learning_rate\": 0.1, \"use_ema\": true, \"ema_momentum\": 0.8, \"ema_overwrite_frequency\": 1}",
                 with(O::Adam{.learning_rate = 0.1f},
                      {.use_ema = true, .ema_momentum = 0.8f, .ema_overwrite_frequency = 1}),
                 sizes, w0, grads);
    options_case(out,
                 "{\"learning_rate\": 0.1, \"momentum\": 0.9, \"use_ema\": true, \"ema_momentum\": 0.7, "
                 "\"ema_overwrite_frequency\": 2}",
                 with(O::SGD{.learning_rate = 0.1f, .momentum = 0.9f},
                      {.use_ema = true, .ema_momentum = 0.7f, .ema_overwrite_frequency = 2}),
                 sizes, w0, grads);
    options_case(out,
                 "{\"learning_rate\": 0.05, \"centered\": true, \"use_ema\": true, \"ema_momentum\": 0.6, "
                 "\"ema_overwrite_frequency\": 2}",
                 with(O::RMSprop{.learning_rate = 0.05f, .centered = true},
                      {.use_ema = true, .ema_momentum = 0.6f, .ema_overwrite_frequency = 2}),
                 sizes, w0, grads);
    options_case(out,
                 "{\"learning_rate\": 0.1, \"initial_accumulator_value\": 0.5, \"use_ema\": true, "
                 "\"ema_momentum\": 0.5}",
                 with(O::Adagrad{.learning_rate = 0.1f, .initial_accumulator_value = 0.5f},
                      {.use_ema = true, .ema_momentum = 0.5f}),
                 sizes, w0, grads);
    // Together, and with a schedule: the weight decay at the schedule's rate of the step.
    options_case(out,
                 "{\"learning_rate\": 0.1, \"beta_1\": 0.8, \"clipnorm\": 1.0, \"weight_decay\": 0.3, "
                 "\"use_ema\": true, \"ema_momentum\": 0.5}",
                 with(O::Nadam{.learning_rate = 0.1f, .beta_1 = 0.8f},
                      {.clipnorm = 1.0f, .weight_decay = 0.3f, .use_ema = true, .ema_momentum = 0.5f}),
                 sizes, w0, grads);
    options_case(out,
                 scheduled_args("ExponentialDecay", exponential,
                                ", \"global_clipnorm\": 2.0, \"weight_decay\": 0.5, \"use_ema\": true, "
                                "\"ema_momentum\": 0.6, \"ema_overwrite_frequency\": 2"),
                 O::Scheduled{with(O::Adam{}, {.global_clipnorm = 2.0f, .weight_decay = 0.5f, .use_ema = true,
                                               .ema_momentum = 0.6f, .ema_overwrite_frequency = 2}),
                              exponential_decay},
                 sizes, w0, grads);
    options_case(out,
                 scheduled_args("PiecewiseConstantDecay", piecewise,
                                ", \"momentum\": 0.9, \"clipvalue\": 0.5, \"weight_decay\": 0.5, "
                                "\"use_ema\": true, \"ema_momentum\": 0.5"),
                 O::Scheduled{with(O::SGD{.momentum = 0.9f},
                                   {.clipvalue = 0.5f, .weight_decay = 0.5f, .use_ema = true, .ema_momentum = 0.5f}),
                              piecewise_decay},
                 sizes, w0, grads);
    options_case(out,
                 scheduled_args("CosineDecay", warmup, ", \"clipnorm\": 0.5, \"weight_decay\": 0.5"),
                 O::Scheduled{with(O::SGD{}, {.clipnorm = 0.5f, .weight_decay = 0.5f}), warmup_decay}, sizes, w0,
                 grads);
}

} // namespace

int
main()
{
    json_out out;
    out.open('[');
    losses(out);
    metrics(out);
    schedules(out);
    optimizers(out);
    options(out);
    out.close(']');
    std::printf("%s\n", out.text().c_str());
    return 0;
}
