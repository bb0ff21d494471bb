/// @file What the seed examples do with files: --load-weights after compile, --backup-dir's callback
/// for fit, --save-weights after training. A weights file's format follows its path, as in Keras:
/// `*.weights.h5` and `*.h5` are Keras' HDF5 files (when the program is built with HDF5), any other
/// path tpudsl's own format. A file that cannot be read or written ends the program with the
/// library's message. Under `--strategy multiworker` every worker loads the weights (each needs
/// them), and the chief alone says so and writes them (the workers hold the same bits).
#ifndef TPUDSL_EXAMPLES_COMMON_PERSISTENCE_HPP
#define TPUDSL_EXAMPLES_COMMON_PERSISTENCE_HPP

#include "common/args.hpp"
#include "common/strategy.hpp"

#include <tpudsl/tpudsl.hpp>

#include <cstdio>
#include <iostream>
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

/// fit's callbacks for --backup-dir DIR: tpudsl::BackupAndRestore(DIR), which backs the training
/// state up there at the end of every epoch and, when fit starts with a backup there (a run that was
/// killed), restores it and goes on from it; a fit that completes removes the backup. Without the
/// flag, none.
inline std::vector<tpudsl::CallbackRef>
backup_and_restore(const Args& args)
{
    std::vector<tpudsl::CallbackRef> callbacks;
    if (!args.backup_dir.empty())
        callbacks.push_back(tpudsl::BackupAndRestore(args.backup_dir));
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
