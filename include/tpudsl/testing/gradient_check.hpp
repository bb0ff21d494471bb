/// @file Defines tpudsl::testing's gradient checkers, for a user's layer or loss as for the library's:
/// the analytic gradients a backward pass (or a loss's row function) computes against central finite
/// differences of the forward pass (or of the loss). Each returns a gradient_report (what was checked,
/// what disagreed, and where) for any test framework to assert on: `CHECK(report.ok())`, with
/// `report.describe()` saying where it failed.
///
///     // a layer: in a small model that reaches it from float inputs and reads every output
///     const auto report = testing::check_gradients<Sequential<Input<Shape<6>>, mylayers::Scale, Dense<3>>>();
///     // a loss: its gradient with respect to the outputs of a batch, against its own values
///     const auto loss_report = testing::check_loss_gradient(MyLoss{}, outputs, labels, targets, width);
#ifndef TPUDSL_TESTING_GRADIENT_CHECK_HPP
#define TPUDSL_TESTING_GRADIENT_CHECK_HPP

#include <tpudsl/ops/graph.hpp>
#include <tpudsl/train/losses.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tpudsl::testing {

/// How a check differences and what it accepts: |analytic - numeric| <= rel max(|analytic|, |numeric|)
/// + abs, the numeric value a central difference of `step`.
struct gradient_check_options {
    double step = 1e-2;
    double rel = 1e-2;
    double abs = 2e-3;
    /// Seeds the weights, the inputs and the factors of the scalar the check differentiates.
    std::uint32_t seed = 1;
    /// Elements differenced per weight or input at most (those a stride apart, the stride prime to the
    /// innermost dimension, and the last): every one unless set.
    std::size_t budget = static_cast<std::size_t>(-1);
};

/// One element whose gradients disagree.
struct gradient_mismatch {
    std::string where;   // "layer 2 weight 0 element 5", "input element 3", "row 1 output 2"
    double analytic, numeric;
};

/// What a check found.
struct gradient_report {
    std::size_t checked = 0;
    std::vector<gradient_mismatch> mismatches;

    /// True when something was checked and everything agreed.
    [[nodiscard]] bool ok() const noexcept { return checked > 0 && mismatches.empty(); }
    /// "12 of 240 elements disagree: layer 1 weight 0 element 3: analytic 0.25, numeric 0.5; ..." (the
    /// first ten).
    [[nodiscard]] std::string
    describe() const
    {
        if (checked == 0)
            return "no element was checked";
        std::string s = std::to_string(mismatches.size()) + " of " + std::to_string(checked) + " elements disagree";
        for (std::size_t i = 0; i < std::min<std::size_t>(mismatches.size(), 10); ++i)
            s += (i ? "; " : ": ") + mismatches[i].where + ": analytic " + std::to_string(mismatches[i].analytic) +
                 ", numeric " + std::to_string(mismatches[i].numeric);
        return s;
    }
};

namespace detail {

inline bool
close(double analytic, double numeric, const gradient_check_options& o) noexcept
{
    return std::abs(analytic - numeric) <= o.rel * std::max(std::abs(analytic), std::abs(numeric)) + o.abs;
}

/// Whether element k of `size` is differenced under the budget.
inline bool
differenced(std::size_t k, std::size_t size, std::size_t innermost, std::size_t budget) noexcept
{
    if (size <= budget)
        return true;
    std::size_t stride = (size + budget - 1) / budget;
    while (std::gcd(stride, innermost) != 1)
        ++stride;
    return k % stride == 0 || k + 1 == size;
}

template <class F, class T>
double
central_difference(F&& value_of, T& x, double step)
{
    const T saved = x;
    x = static_cast<T>(saved + step);
    const double up = value_of();
    x = static_cast<T>(saved - step);
    const double down = value_of();
    x = saved;
    return (up - down) / (2.0 * step);
}

/// A model's forward and backward over a batch of N, for the scalar L = sum_i r_i y_i (r fixed and
/// drawn), so that dL/dy = r.
template <class M, std::size_t N>
struct model_harness {
    using model = M;
    using graph = ops::graph<M>;
    using input_type = typename M::input_type;

    std::vector<float> params = std::vector<float>(M::param_buffer_size);
    std::vector<input_type> x = std::vector<input_type>(N * M::input_shape::size);
    std::vector<float> r = std::vector<float>(N * M::output_shape::size);
    std::vector<float> ws = std::vector<float>(graph::workspace_floats(N, /*input_gradient*/ true));
    step_context ctx{.training = true, .seed = 7, .step = 3, .first_sample = 0};

    explicit model_harness(std::uint32_t seed)
    {
        std::mt19937 gen(seed);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (auto& p : params)
            p = u(gen);
        for (auto& v : r)
            v = u(gen);
        if constexpr (std::is_integral_v<input_type>) {
            // token ids below 4, so that some repeat (an embedding's gradient is a scatter-add)
            std::uniform_int_distribution<int> id(0, static_cast<int>(vocabulary()) - 1);
            for (auto& v : x)
                v = static_cast<input_type>(id(gen) % 4);
        } else {
            for (auto& v : x)
                v = u(gen);
        }
    }

    /// The bound of the token ids the model's input layers read.
    static constexpr std::size_t
    vocabulary() noexcept
    {
        if constexpr (requires { M::input_bound; })
            return M::input_bound;
        else
            return M::template layer<0>::spec::input_bound;
    }

    /// L = sum_i r_i y_i.
    double
    loss()
    {
        graph::forward(params.data(), x.data(), ws.data(), N, N, ctx);
        const float* y = graph::output(ws.data(), N);
        double l = 0.0;
        for (std::size_t i = 0; i < r.size(); ++i)
            l += static_cast<double>(r[i]) * y[i];
        return l;
    }

    /// The analytic gradients: the parameters', and the input's (one input of floats only: a graph of
    /// several inputs reads them packed into one row, whose gradient the step never needs).
    std::pair<std::vector<float>, std::vector<float>>
    gradients()
    {
        std::vector<float> grads(M::param_buffer_size, 0.0f);
        constexpr bool packed = requires { requires M::packed_inputs; };
        std::vector<float> dx(std::is_integral_v<input_type> || packed ? 0 : x.size(), 0.0f);
        loss();
        std::copy(r.begin(), r.end(), graph::loss_gradient(ws.data(), N));
        graph::backward(params.data(), x.data(), ws.data(), N, N, grads.data(), false, dx.empty() ? nullptr : dx.data());
        return {grads, dx};
    }
};

} // namespace detail

/// Every weight's gradient (a non-trainable one's: that the training loss does not read it) and the
/// input's (one input of floats) of model M over a batch of N, against central differences of the forward
/// pass. Put a layer of your own in a small model to check it: its gradients reach the input only
/// through its backward.
template <class M, std::size_t N = 3>
[[nodiscard]] gradient_report
check_gradients(const gradient_check_options& o = {})
{
    detail::model_harness<M, N> h(o.seed);
    const auto [grads, dx] = h.gradients();
    auto value = [&] { return h.loss(); };
    gradient_report report;
    auto weight = [&]<class W>(std::size_t layer, std::size_t index, std::type_identity<W>) {
        for (std::size_t k = 0; k < W::size; ++k) {
            if (!detail::differenced(k, W::size, W::shape::dims.back(), o.budget))
                continue;
            ++report.checked;
            const double numeric = detail::central_difference(value, h.params[W::offset + k], o.step);
            const double analytic = W::trainable ? grads[W::offset + k] : 0.0;
            if (W::trainable ? !detail::close(analytic, numeric, o) : numeric != 0.0)
                report.mismatches.push_back({"layer " + std::to_string(layer) + (W::trainable ? "" : " non-trainable") +
                                                 " weight " + std::to_string(index) + " element " + std::to_string(k),
                                             analytic, numeric});
        }
    };
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (
            [&]<std::size_t L>(std::integral_constant<std::size_t, L>) {
                using B = typename M::template layer<L>;
                [&]<std::size_t... J>(std::index_sequence<J...>) {
                    (weight(L, J, std::type_identity<typename B::template weight<J>>{}), ...);
                }(std::make_index_sequence<B::weight_count>{});
            }(std::integral_constant<std::size_t, I>{}),
            ...);
    }(std::make_index_sequence<M::layer_count>{});
    for (std::size_t k = 0; k < dx.size(); ++k) {
        if (!detail::differenced(k, dx.size(), M::input_shape::dims.back(), o.budget))
            continue;
        ++report.checked;
        const double numeric = detail::central_difference(value, h.x[k], o.step);
        if (!detail::close(dx[k], numeric, o))
            report.mismatches.push_back({"input element " + std::to_string(k), dx[k], numeric});
    }
    return report;
}

/// A loss's gradient with respect to each output of `rows` rows of `width` (`outputs`), with a class id
/// per row (`labels`, for a loss of sparse labels) or `width` targets per row (`targets`), against
/// central differences of the loss itself (tpudsl::evaluate, as the model calls it). Choose outputs
/// away from the loss's kinks and clips.
template <Loss L>
[[nodiscard]] gradient_report
check_loss_gradient(const L& loss, std::vector<float> outputs, std::span<const std::int32_t> labels,
                    std::span<const float> targets, std::size_t width, const gradient_check_options& o = {})
{
    const std::size_t rows = width ? outputs.size() / width : 0;
    auto view_of = [&](const std::vector<float>& out) {
        loss_view v;
        v.n = rows;
        v.width = width;
        v.output = out.data();
        v.sparse_labels = labels.empty() ? nullptr : labels.data();
        v.dense_labels = targets.empty() ? nullptr : targets.data();
        return v;
    };
    std::vector<float> grad(outputs.size()), scratch(outputs.size());
    loss_view v = view_of(outputs);
    evaluate(loss, v, 1.0f, grad.data());
    auto value = [&] {
        loss_view again = view_of(outputs);
        return evaluate(loss, again, 1.0f, scratch.data());
    };
    gradient_report report;
    for (std::size_t k = 0; k < outputs.size(); ++k) {
        ++report.checked;
        const double numeric = detail::central_difference(value, outputs[k], o.step);
        if (!detail::close(grad[k], numeric, o))
            report.mismatches.push_back(
                {"row " + std::to_string(k / width) + " output " + std::to_string(k % width), grad[k], numeric});
    }
    return report;
}

} // namespace tpudsl::testing

#endif // !TPUDSL_TESTING_GRADIENT_CHECK_HPP
