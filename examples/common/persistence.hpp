/// @file What the seed examples do with files: --load-weights after compile, fit's callbacks for
/// --backup-dir, --tensorboard and --plot, --save-weights after training. A weights file's format
/// follows its path, as in Keras: `*.weights.h5` and `*.h5` are Keras' HDF5 files (when the program is
/// built with HDF5), any other path tpudsl's own format. A file that cannot be read or written ends the
/// program with the library's message. Under `--strategy multiworker` every worker loads the weights
/// (each needs them), and the chief alone says so and writes them (the workers hold the same bits).
#ifndef TPUDSL_EXAMPLES_COMMON_PERSISTENCE_HPP
#define TPUDSL_EXAMPLES_COMMON_PERSISTENCE_HPP

#include "common/args.hpp"
#include "common/strategy.hpp"

#include <tpudsl/tpudsl.hpp>

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace seeds {

/// --load-weights PATH: the compiled model's weights from PATH, on every worker; without the flag,
/// nothing. Called before training, it also checks --save-weights' path on the chief: its directory
/// must exist and take a new file, and the path must not name a directory, nor a Keras file in a
/// program built without HDF5; a path that cannot be written is refused now rather than after the
/// training.
template <class Model, class Strategy>
void
load_weights(Model& model, const Strategy& strategy, const Args& args)
{
    if (!args.save_weights.empty() && is_chief(strategy)) {
        if (!tpudsl::keras_h5_enabled && tpudsl::weights_format_of(args.save_weights) != tpudsl::weights_format::tpudsl)
            tpudsl::detail::keras_h5_disabled("--save-weights", args.save_weights);   // before training, not after
        tpudsl::detail::require_replaceable("--save-weights", args.save_weights,
                                            "checked before training: the weights file");
    }
    if (args.load_weights.empty())
        return;
    model.load_weights(args.load_weights);
    if (is_chief(strategy))
        std::cout << "Weights: loaded from " << args.load_weights << '\n';
}

/// --plot FILE.svg: records the epochs' logs as History records them (it comes last among fit's
/// callbacks, so it sees what the others added) and, when the fit ends, draws them to FILE.svg
/// (tpudsl::plot_history) and writes them beside it to FILE.csv (tpudsl::save_history_csv): the History
/// that fit returns, as a picture and as numbers. Both paths are checked before the first step; a
/// multi-worker job's chief alone writes them.
class PlotHistory : public tpudsl::Callback {
public:
    explicit PlotHistory(std::string svg)
        : svg_(std::move(svg)), csv_(std::filesystem::path(svg_).replace_extension(".csv").string())
    {
    }

    void
    on_train_begin(tpudsl::TrainingControl& control) override
    {
        history_ = {};
        writes_ = control.writes_files();
        if (!writes_)
            return;
        tpudsl::detail::require_replaceable("--plot", svg_, "checked before training: the training curves");
        tpudsl::detail::require_replaceable("--plot", csv_, "checked before training: the training curves' values");
    }
    void
    on_epoch_end(std::size_t epoch, tpudsl::Logs& logs, tpudsl::TrainingControl&) override
    {
        history_.record(epoch, logs);
    }
    void
    on_train_end(tpudsl::TrainingControl&) override
    {
        if (!writes_ || history_.epoch.empty())
            return;
        tpudsl::plot_history(history_, svg_);
        tpudsl::save_history_csv(history_, csv_);
        std::cout << "History: plotted to " << svg_ << ", its values in " << csv_ << '\n';
    }

private:
    std::string svg_, csv_;
    tpudsl::History history_;
    bool writes_ = true;
};

/// fit's callbacks, as the flags ask: --backup-dir DIR, tpudsl::BackupAndRestore(DIR), which backs the
/// training state up there at the end of every epoch and, when fit starts with a backup there (a run
/// that was killed), restores it and goes on from it (a fit that completes removes the backup);
/// --tensorboard DIR, tpudsl::TensorBoard(DIR) with the histograms of `model`'s weights every epoch;
/// --plot FILE.svg, PlotHistory. Without the flags, none.
template <class Model>
std::vector<tpudsl::CallbackRef>
callbacks(const Args& args, const Model& /*model*/)
{
    std::vector<tpudsl::CallbackRef> callbacks;
    if (!args.backup_dir.empty())
        callbacks.push_back(tpudsl::BackupAndRestore(args.backup_dir));
    if (!args.tensorboard.empty())
        callbacks.push_back(tpudsl::TensorBoard(
            args.tensorboard, {.histogram_freq = 1, .weights = tpudsl::tensorboard_weights<Model>()}));
    if (!args.plot.empty())
        callbacks.push_back(PlotHistory(args.plot));   // last, as History: the logs as fit returns them
    return callbacks;
}

/// --save-weights PATH: the model's weights to PATH (written whole or not at all), by the chief of a
/// multi-worker job only; without the flag, nothing.
template <class Model, class Strategy>
void
save_weights(const Model& model, const Strategy& strategy, const Args& args)
{
    if (args.save_weights.empty() || !is_chief(strategy))
        return;
    model.save_weights(args.save_weights);
    std::cout << "Weights: saved to " << args.save_weights << '\n';
}

/// A seed's last lines: --save-weights (the chief writes), then, on the chief, "Test accuracy" and,
/// for a model compiled with a second metric (top-5), "Test top-5 accuracy". Every worker of a
/// multi-worker job has evaluated (a collective step); one reports. Returns main's exit status.
template <class Model, class Strategy>
int
finish(const Model& model, const Strategy& strategy, const Args& args, const tpudsl::Scores& scores)
{
    save_weights(model, strategy, args);
    if (!is_chief(strategy))
        return 0;
    std::printf("Test accuracy: %.4f\n", scores[1]);
    if (scores.size() > 2)
        std::printf("Test top-5 accuracy: %.4f\n", scores[2]);
    return 0;
}

} // namespace seeds

#endif
