/// @file Defines tpudsl::Trainable<Model, Strategy>: the trainable object of a model type, with Keras'
/// compile, fit, evaluate, predict and summary, on one core or on the replicas of a strategy; its
/// engine, detail::trainer, is shared by the strategies that split a step alike
/// (train/trainer_core.hpp, trainer_evaluate.hpp, trainer_fit.hpp).
#ifndef TPUDSL_TRAIN_TRAINABLE_HPP
#define TPUDSL_TRAIN_TRAINABLE_HPP

#include <tpudsl/data/dataset.hpp>
#include <tpudsl/distribute/strategy.hpp>
#include <tpudsl/train/batch_sources.hpp>
#include <tpudsl/train/fit_options.hpp>
#include <tpudsl/train/history.hpp>
#include <tpudsl/train/trainer_fit.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace tpudsl {

namespace detail {
/// What a call on the Trainable of an invalid model returns: anything, so that the model's own
/// message stays the only error.
struct unchecked_result {
    template <class T>
    operator T() const
    {
        return T{};
    }
    template <class K>
    unchecked_result operator[](const K&) const
    {
        return {};
    }
};

/// What Trainable stands on for a model type that failed its checks (Seq::valid false): no engine is
/// instantiated for it, so the model's message (a layer and its shapes) is the one error of the program.
struct invalid_engine {
    template <class... A>
    explicit invalid_engine(A&&...) noexcept
    {
    }
#define TPUDSL_INVALID_ENGINE_MEMBER(name)                                                                            \
    template <class... A>                                                                                           \
    unchecked_result name(A&&...) const                                                                             \
    {                                                                                                               \
        return {};                                                                                                  \
    }
    TPUDSL_INVALID_ENGINE_MEMBER(fit)
    TPUDSL_INVALID_ENGINE_MEMBER(evaluate)
    TPUDSL_INVALID_ENGINE_MEMBER(predict)
    // the options written in place, as braces
    template <class X, class Y>
    unchecked_result
    fit(const X&, const Y&, const FitOptions&) const
    {
        return {};
    }
    template <class X, class Y>
    unchecked_result
    evaluate(const X&, const Y&, const EvaluateOptions&) const
    {
        return {};
    }
    template <class X>
    unchecked_result
    predict(const X&, const EvaluateOptions&) const
    {
        return {};
    }
    TPUDSL_INVALID_ENGINE_MEMBER(summary)
    TPUDSL_INVALID_ENGINE_MEMBER(get_weights)
    TPUDSL_INVALID_ENGINE_MEMBER(set_weights)
    TPUDSL_INVALID_ENGINE_MEMBER(save_weights)
    TPUDSL_INVALID_ENGINE_MEMBER(load_weights)
    TPUDSL_INVALID_ENGINE_MEMBER(learning_rate)
    TPUDSL_INVALID_ENGINE_MEMBER(set_learning_rate)
    TPUDSL_INVALID_ENGINE_MEMBER(parameters)
    TPUDSL_INVALID_ENGINE_MEMBER(fit_dataset)
    TPUDSL_INVALID_ENGINE_MEMBER(evaluate_dataset)
#undef TPUDSL_INVALID_ENGINE_MEMBER
    template <class Opt, bool Chained, class... A>
    void
    compile_with(A&&...) const
    {
    }
};
} // namespace detail

/// A trainable model of type `Seq` (a `Sequential<...>`), run by `Strategy`: Keras' compile, fit,
/// evaluate, predict and summary (detail::trainer, shared by the strategies of the same micro-batches),
/// and what the strategy's type decides at compile time: the replicas a Dataset's batch must divide into.
/// @tparam Seq      the model type; its constants size every buffer
/// @tparam Strategy OneDeviceStrategy (default), TpuStrategy<N> or MultiWorkerStrategy<R>
template <class Seq, class Strategy = OneDeviceStrategy>
class Trainable final
    : public std::conditional_t<Seq::valid, detail::trainer<Seq, Strategy::micro_batches>, detail::invalid_engine> {
    using engine =
        std::conditional_t<Seq::valid, detail::trainer<Seq, Strategy::micro_batches>, detail::invalid_engine>;
    /// A strategy whose workers are processes (MultiWorkerStrategy): its steps take the chained reduce.
    static constexpr bool chained = requires { requires Strategy::chained; };

public:
    using strategy_type = Strategy;
    static constexpr std::size_t num_replicas_in_sync = Strategy::num_replicas_in_sync;

    /// Builds the model with Keras' initial weights drawn from `seed`, with a strategy of its own.
    explicit Trainable(std::uint64_t seed = 0) : Trainable(seed, Strategy{}) {}

    /// Builds the model on a strategy's threads (what `strategy.scope<Model>(seed)` does).
    Trainable(std::uint64_t seed, const Strategy& strategy) : engine(seed, strategy.runner()) {}

    using engine::evaluate;
    using engine::fit;

    /// `compile(optimizer, loss, metrics...)`: an Optimizer, a Loss (PerOutput{...} of them for a graph
    /// of several outputs) and Metrics (OnOutput<output, Metric> there), built-in or the user's
    /// (docs/training.md). Resets the optimizer's state.
    template <class Opt, class L, class... Ms>
    void
    compile(Opt optimizer, L loss, Ms... metrics)
    {
        this->template compile_with<Opt, chained>(optimizer, loss, metrics...);
    }

    /// `fit(dataset)`: trains on a batched Dataset; each epoch is a new iteration of it (reshuffled
    /// unless cached). Its examples must have the model's input shape and type, and its batch must
    /// split evenly over the replicas: both are checked at compile time.
    template <class E, std::size_t B>
    History
    fit(const Dataset<Batch<E, B>>& data, FitOptions options = {})
    {
        if constexpr (Seq::valid)
            detail::check_dataset_type<Seq, num_replicas_in_sync, E, B>();
        return this->fit_dataset(data, std::move(options));
    }

    /// `evaluate(dataset)`: [loss, metrics...] over one iteration of a batched Dataset.
    template <class E, std::size_t B>
    Scores
    evaluate(const Dataset<Batch<E, B>>& data, EvaluateOptions options = {})
    {
        if constexpr (Seq::valid)
            detail::check_dataset_type<Seq, num_replicas_in_sync, E, B>();
        return this->evaluate_dataset(data, options);
    }
};

namespace keras {
/// Keras' `keras.Model`, the trained model, as Keras spells it: `tpudsl::keras::Model<FashionCnn>` is
/// `tpudsl::Trainable<FashionCnn>`. It lives in a namespace of its own so that `using namespace
/// tpudsl` leaves free the name users give their model types (`using Model = Sequential<...>`).
template <class Seq, class Strategy = OneDeviceStrategy>
using Model = Trainable<Seq, Strategy>;
} // namespace keras

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_TRAINABLE_HPP
