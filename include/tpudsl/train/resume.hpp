/// @file How a Trainable's fit in progress is saved and restored (what BackupAndRestore asks of it
/// through TrainingControl): the state (io/training_state.hpp) gathered from the model, checked
/// against the fit and the model it is restored into, and put back, so that the fit goes on to the
/// bits of one never stopped. A friend of Trainable; nothing here runs in a training step.
#ifndef TPUDSL_TRAIN_RESUME_HPP
#define TPUDSL_TRAIN_RESUME_HPP

#include <tpudsl/detail/text.hpp>
#include <tpudsl/io/training_state.hpp>
#include <tpudsl/train/buffers.hpp>
#include <tpudsl/train/callbacks.hpp>
#include <tpudsl/train/history.hpp>
#include <tpudsl/train/optimizers.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace tpudsl::detail {

/// Where a restored fit goes on: its position, and mid-epoch the learning rate and running values
/// of the epoch it stood in.
struct resume_point {
    fit_position position;
    float learning_rate;
    double loss_total;
    std::uint64_t seen;
    std::vector<double> states;   // the metrics' states, then each output's loss
};

struct resume_access {
    /// The running values a state holds beside the metrics' states: each output's loss, for a graph of several.
    template <class M>
    static constexpr std::size_t running_heads = M::heads > 1 ? M::heads : 0;

    /// The state of model `m`'s fit in progress, written to `path` atomically.
    template <class M>
    [[gnu::cold]] static void
    save(const M& m, const std::string& path)
    {
        if (!m.in_fit_)
            throw std::logic_error("tpudsl::Trainable::save_training_state: only a fit in progress has a training state");
        training_state s;
        s.seed = m.seed_;
        s.iterations = m.iterations_;
        s.position = m.position_;
        s.fit = m.fit_signature_;
        s.epochs = m.fit_epochs_;
        s.optimizer = m.optimizer_.name;
        s.learning_rate = *m.optimizer_.learning_rate;
        if (m.optimizer_.momentum_product)
            s.momentum_product = *m.optimizer_.momentum_product;
        if (m.position_.step != 0) {   // mid-epoch: the epoch's running values go on too
            s.loss_total = m.loss_total_;
            s.seen = m.seen_;
            s.running = m.metric_states_;
            // a graph of several outputs: each output's loss so far, after the metrics' states
            s.running.insert(s.running.end(), m.head_loss_totals_.begin(), m.head_loss_totals_.begin() + running_heads<M>);
        }
        write_training_state(path, s, state_layout::of<typename M::sequential>(), m.params_.data(), m.slots_.data(),
                             m.slots_.size());
    }

    /// Takes everything from a state that save wrote, after checking that it belongs to this model
    /// and this fit; the model is left as it was when it does not. The fit goes on from its position.
    template <class M>
    [[gnu::cold]] static void
    restore(M& m, const std::string& path)
    {
        using Seq = typename M::sequential;
        if (!m.in_fit_)
            throw std::logic_error("tpudsl::Trainable::restore_training_state: call it from a callback's on_train_begin");
        // the most slots: an optimizer's, then the moving average of the weights
        training_state s = read_training_state(path, state_layout::of<Seq>(),
                                               (max_optimizer_slots + 1) * Seq::param_buffer_size);
        const std::string who = concat({"tpudsl::BackupAndRestore: the backup '", path, "' "});
        const std::string start_over = "; remove it to start this fit from the beginning";
        if (s.fit != m.fit_signature_)
            throw std::invalid_argument(detail::concat({who, "was written by a fit over ", s.fit.text(),
                                                        "; this fit is over ", m.fit_signature_.text(), start_over}));
        if (s.seed != m.seed_)
            throw std::invalid_argument(detail::concat({who, "was written by a model built with seed ",
                                                        std::to_string(s.seed), "; this model was built with seed ",
                                                        std::to_string(m.seed_), ": build it with seed ",
                                                        std::to_string(s.seed), " to resume that run", start_over}));
        // The epochs the backup has done: all of `epoch`, and `step` batches of the next one.
        const std::uint64_t needed = s.position.epoch + (s.position.step != 0 ? 1 : 0);
        if (m.fit_epochs_ < needed) {
            const std::string of_run = s.epochs ? concat({" of a fit of ", std::to_string(s.epochs), " epochs"}) : "";
            throw std::invalid_argument(detail::concat(
                {who, "has done ", std::to_string(s.position.epoch), s.position.epoch == 1 ? " epoch" : " epochs",
                 s.position.step ? concat({" and ", std::to_string(s.position.step), " steps of epoch ",
                                           std::to_string(s.position.epoch + 1)})
                                 : std::string(),
                 of_run, "; this fit asks for epochs=", std::to_string(m.fit_epochs_), ", fewer: fit with epochs=",
                 s.epochs >= needed ? concat({std::to_string(s.epochs), " to finish that run (or more to go on)"})
                                    : concat({std::to_string(needed), " or more to go on from it"}),
                 start_over}));
        }
        const std::string_view optimizer = m.optimizer_.name;
        if (s.optimizer != optimizer || s.slots.size() != m.slots_.size())
            throw std::invalid_argument(detail::concat({who, "was written with the optimizer ", s.optimizer, " (",
                                                        std::to_string(s.slots.size()),
                                                        " slot floats); this model is compiled with ", optimizer,
                                                        " (", std::to_string(m.slots_.size()), ")", start_over}));
        if (s.position.step != 0 && s.running.size() != m.metric_states_.size() + running_heads<M>)
            throw std::invalid_argument(detail::concat({who, "holds ", std::to_string(s.running.size()),
                                                        " running values; this model is compiled with metrics of ",
                                                        std::to_string(m.metric_states_.size() + running_heads<M>),
                                                        start_over}));
        if (!(s.learning_rate >= 0.0f && std::isfinite(s.learning_rate)) ||
            !(s.momentum_product >= 0.0 && s.momentum_product <= 1.0))
            throw std::runtime_error(detail::concat({who,
                                                     "holds an optimizer state out of its domain (learning rate ",
                                                     number_text(s.learning_rate), ", momentum product ",
                                                     number_text(s.momentum_product), ")"}));
        if (s.epochs != 0 && s.epochs != m.fit_epochs_ && m.fit_out_)   // resumed as Keras does, but said
            *m.fit_out_ << "tpudsl::BackupAndRestore: resuming the backup '" << path << "' of a fit of " << s.epochs
                        << " epochs after its epoch " << s.position.epoch
                        << (s.position.step ? concat({" and ", std::to_string(s.position.step), " steps"}) : "")
                        << "; this fit runs to epoch " << m.fit_epochs_ << '\n';
        std::copy(s.params.begin(), s.params.end(), m.params_.data());
        std::copy(s.slots.begin(), s.slots.end(), m.slots_.data());
        m.weights_version_ = next_weights_version();
        m.iterations_ = s.iterations;
        m.seed_ = s.seed;
        *m.optimizer_.learning_rate = s.learning_rate;
        if (m.optimizer_.momentum_product)
            *m.optimizer_.momentum_product = s.momentum_product;
        m.resume_ = resume_point{s.position, s.learning_rate, s.loss_total, s.seen, std::move(s.running)};
    }

    /// A restored fit's first epoch (after its on_epoch_begin and begin_epoch): puts the data stream
    /// where the backup stood; mid-epoch, also the epoch's running values and the learning rate that
    /// epoch ran with (a schedule's on_epoch_begin has just set it again). Returns the steps done.
    template <class M, class Source>
    static std::size_t
    resume_at(M& m, Source& source, Logs& logs)
    {
        const resume_point r = std::move(*m.resume_);
        m.resume_.reset();
        source.seek(r.position, m.seed_);
        if (r.position.step == 0)
            return 0;
        m.loss_total_ = r.loss_total;
        m.seen_ = static_cast<std::size_t>(r.seen);
        const auto states = static_cast<std::ptrdiff_t>(m.metric_states_.size());
        m.metric_states_.assign(r.states.begin(), r.states.begin() + states);
        std::copy(r.states.begin() + states, r.states.end(), m.head_loss_totals_.begin());
        *m.optimizer_.learning_rate = r.learning_rate;
        m.write_running_logs(logs);
        return static_cast<std::size_t>(r.position.step);
    }
};

} // namespace tpudsl::detail

#endif // !TPUDSL_TRAIN_RESUME_HPP
