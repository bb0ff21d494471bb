/// @file Defines the LayerSpec concept: what Sequential asks of a layer type.
#ifndef TPUDSL_LAYERS_LAYER_CONCEPTS_HPP
#define TPUDSL_LAYERS_LAYER_CONCEPTS_HPP

#include <concepts>
#include <string_view>

namespace tpudsl {

/// A layer spec holds hyperparameters only and binds to the shape coming in through member
/// templates: `check<In, Index>()` (the first rule `In` breaks), `output<In>`, `weights<In>`,
/// `expects<In>` and `scratch_size<In>`; `class_name` and `base_name` are Keras' class name and
/// auto-name prefix.
template <class L>
concept LayerSpec = requires {
    { L::class_name } -> std::convertible_to<std::string_view>;
    { L::base_name } -> std::convertible_to<std::string_view>;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_LAYER_CONCEPTS_HPP
