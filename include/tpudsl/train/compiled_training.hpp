/// @file Defines what compile keeps of the loss, the metrics and the optimizer it is given, whatever
/// their types (the Loss, Metric and Optimizer concepts): each object, copied once when the model is
/// compiled, behind what the engine reads of it. The step itself calls them through functions
/// instantiated for their own types (replica_steps' score_with and train_with), not through these.
#ifndef TPUDSL_TRAIN_COMPILED_TRAINING_HPP
#define TPUDSL_TRAIN_COMPILED_TRAINING_HPP

#include <tpudsl/train/losses.hpp>
#include <tpudsl/train/metrics.hpp>
#include <tpudsl/train/optimizers.hpp>
#include <tpudsl/train/per_output.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tpudsl::detail {

/// What compile takes as a loss (a Loss, or PerOutput of Losses) and as a metric (a Metric, or
/// OnOutput of one).
template <class L>
inline constexpr bool compilable_loss = Loss<L>;
template <class... Ls>
inline constexpr bool compilable_loss<PerOutput<Ls...>> = (Loss<Ls> && ...);
template <class M>
inline constexpr bool compilable_metric = Metric<M>;
template <std::size_t Output, class M>
inline constexpr bool compilable_metric<OnOutput<Output, M>> = Metric<M>;

/// A metric given to compile, OnOutput's unwrapped.
template <class M>
struct plain_metric_of {
    using type = M;
};
template <std::size_t Output, class M>
struct plain_metric_of<OnOutput<Output, M>> {
    using type = M;
};
template <class M>
using plain_metric = typename plain_metric_of<M>::type;

/// A compiled loss: its object, the kind of labels it reads and the label it ignores, if any.
struct compiled_loss {
    std::shared_ptr<const void> object;
    bool sparse_labels = false;
    std::optional<std::int32_t> ignore_class;

    template <Loss L>
    [[nodiscard]] static compiled_loss
    of(const L& loss)
    {
        return {std::make_shared<const L>(loss), static_cast<bool>(L::sparse_labels), ignored_class(loss)};
    }
    template <class L>
    [[nodiscard]] const L&
    as() const noexcept
    {
        return *static_cast<const L*>(object.get());
    }
};

/// A compiled metric: its name in the logs, the labels it reads, where its state lies among the
/// model's metric states, the output it scores (of a graph of several), and its two functions.
struct compiled_metric {
    std::string name;
    bool sparse_labels = false;
    std::size_t state_at = 0, state_size = 0;
    std::size_t output = 0;
    std::shared_ptr<const void> object;
    void (*update_fn)(const void*, const metric_batch&, double*) noexcept = nullptr;
    double (*result_fn)(const void*, const double*) noexcept = nullptr;

    /// Adds a batch to this metric's part of `states`.
    void
    update(const metric_batch& b, double* states) const noexcept
    {
        update_fn(object.get(), b, states + state_at);
    }
    /// The value of this metric's part of `states`.
    [[nodiscard]] double
    result(const double* states) const noexcept
    {
        return result_fn(object.get(), states + state_at);
    }

    template <Metric M>
    [[nodiscard]] static compiled_metric
    of(const M& m)
    {
        return {std::string(std::string_view(m.name)),
                static_cast<bool>(M::sparse_labels),
                0,
                M::state_size,
                0,
                std::make_shared<const M>(m),
                +[](const void* p, const metric_batch& b, double* s) noexcept { static_cast<const M*>(p)->update(b, s); },
                +[](const void* p, const double* s) noexcept {
                    return static_cast<double>(static_cast<const M*>(p)->result(s));
                }};
    }
};

/// A compiled optimizer: its object and name, and the parts of its state a training state
/// saves: the learning rate and, for an optimizer that keeps one (Nadam), its momentum product.
struct compiled_optimizer {
    std::shared_ptr<void> object;
    std::string_view name;
    float* learning_rate = nullptr;
    double* momentum_product = nullptr;
    bool scheduled = false;   // its learning rate is a schedule's (optimizers::Scheduled): not settable

    template <Optimizer O>
    [[nodiscard]] static compiled_optimizer
    of(const O& optimizer)
    {
        auto p = std::make_shared<O>(optimizer);
        compiled_optimizer c{p, O::name, &p->learning_rate, nullptr, false};
        if constexpr (requires { requires std::same_as<decltype(p->momentum_product), double>; })
            c.momentum_product = &p->momentum_product;
        else if constexpr (requires { requires std::same_as<decltype(p->optimizer.momentum_product), double>; })
            c.momentum_product = &p->optimizer.momentum_product;   // a Scheduled Nadam's
        if constexpr (requires { O::scheduled; })
            c.scheduled = O::scheduled;
        return c;
    }
    template <class O>
    [[nodiscard]] O&
    as() noexcept
    {
        return *static_cast<O*>(object.get());
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_TRAIN_COMPILED_TRAINING_HPP
