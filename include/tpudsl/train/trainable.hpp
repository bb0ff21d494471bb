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
#include <utility>

namespace tpudsl {

/// A trainable model of type `Seq` (a `Sequential<...>`), run by `Strategy`: Keras' compile, fit,
/// evaluate, predict and summary (detail::trainer, shared by the strategies of the same micro-batches),
/// and what the strategy's type decides at compile time: the replicas a Dataset's batch must divide into.
/// @tparam Seq      the model type; its constants size every buffer
/// @tparam Strategy OneDeviceStrategy (default), TpuStrategy<N> or MultiWorkerStrategy<R>
template <class Seq, class Strategy = OneDeviceStrategy>
class Trainable final : public detail::trainer<Seq, Strategy::micro_batches> {
    using engine = detail::trainer<Seq, Strategy::micro_batches>;
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
        detail::check_dataset_type<Seq, num_replicas_in_sync, E, B>();
        return this->fit_dataset(data, std::move(options));
    }

    /// `evaluate(dataset)`: [loss, metrics...] over one iteration of a batched Dataset.
    template <class E, std::size_t B>
    Scores
    evaluate(const Dataset<Batch<E, B>>& data, EvaluateOptions options = {})
    {
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
