/// @file Defines step_context: what a layer's forward pass needs to know about the step it is in.
#ifndef TPUDSL_LAYERS_STEP_CONTEXT_HPP
#define TPUDSL_LAYERS_STEP_CONTEXT_HPP

#include <cstddef>
#include <cstdint>

namespace tpudsl {

struct step_context {
    /// Training (dropout active) or inference.
    bool training = false;
    /// The model's seed; dropout masks are a function of (seed, step, global sample index, element).
    std::uint64_t seed = 0;
    /// The optimizer step this forward pass belongs to.
    std::uint64_t step = 0;
    /// Global index, within the batch, of the first sample this call sees.
    std::size_t first_sample = 0;
    /// Changes whenever the parameters change (0: unknown). Layers may keep data derived from the
    /// weights, such as a transposed kernel, across calls with the same nonzero version.
    std::uint64_t weights_version = 0;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_STEP_CONTEXT_HPP
