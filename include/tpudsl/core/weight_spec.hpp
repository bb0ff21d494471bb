/// @file Defines the descriptors of a layer's weights (Keras' layouts) and the tensor spec that
/// flows from layer to layer.
#ifndef TPUDSL_CORE_WEIGHT_SPEC_HPP
#define TPUDSL_CORE_WEIGHT_SPEC_HPP

#include <tpudsl/config.hpp>
#include <tpudsl/core/initializers.hpp>
#include <tpudsl/core/name_literal.hpp>
#include <tpudsl/core/shape.hpp>

#include <cstddef>
#include <string_view>

namespace tpudsl {

/// What a weight tensor is to its layer; its name in Keras (`dense/kernel`, `embedding/embeddings`,
/// `batch_normalization/moving_mean`, `lstm_cell/recurrent_kernel`).
enum class weight_role { kernel, bias, embeddings, gamma, beta, moving_mean, moving_variance, recurrent_kernel };

[[nodiscard]] constexpr std::string_view
weight_role_name(weight_role r) noexcept
{
    switch (r) {
    case weight_role::kernel: return "kernel";
    case weight_role::bias: return "bias";
    case weight_role::embeddings: return "embeddings";
    case weight_role::gamma: return "gamma";
    case weight_role::beta: return "beta";
    case weight_role::moving_mean: return "moving_mean";
    case weight_role::moving_variance: return "moving_variance";
    case weight_role::recurrent_kernel: return "recurrent_kernel";
    }
    return "?";
}

namespace detail {
/// Keras' default initializer of a weight of role R: glorot_uniform kernels, zero biases,
/// uniform(-0.05, 0.05) embeddings, ones for gamma and the moving variance, zeros for beta and the
/// moving mean, orthogonal recurrent kernels.
template <weight_role R>
[[nodiscard]] consteval auto
default_initializer() noexcept
{
    if constexpr (R == weight_role::bias || R == weight_role::beta || R == weight_role::moving_mean)
        return initializers::Zeros{};
    else if constexpr (R == weight_role::gamma || R == weight_role::moving_variance)
        return initializers::Ones{};
    else if constexpr (R == weight_role::embeddings)
        return initializers::RandomUniform<0.05>{};
    else if constexpr (R == weight_role::recurrent_kernel)
        return initializers::Orthogonal{};
    else
        return initializers::GlorotUniform{};
}
} // namespace detail

/// One weight tensor of a layer in Keras' layout: Dense kernel (in, out), Conv1D kernel (k, in, out),
/// Conv2D kernel (kh, kw, in, out), Embedding (vocab, dim), biases (out).
/// @tparam R         its role (and its name in Keras)
/// @tparam S         its shape
/// @tparam Init      how it starts: a type of tpudsl::initializers (Keras' default for the role)
/// @tparam Trainable false for a weight the optimizer never updates (a moving statistic): it counts
///                   among the summary's "Non-trainable params"
template <weight_role R, class S, class Init = decltype(detail::default_initializer<R>()), bool Trainable = true>
struct weight {
    static constexpr weight_role role = R;
    /// Its name in Keras' files and the logs: the role's.
    static constexpr std::string_view name = weight_role_name(R);
    using shape = S;
    using initializer = Init;
    static constexpr bool trainable = Trainable;
    static constexpr std::size_t size = S::size;
};

/// A weight its layer's author names, as Keras' `self.add_weight(name="scale", ...)`: the name goes
/// into Keras' weight files and the logs as a role's does; a kernel's default initializer
/// (glorot_uniform) unless one is given.
template <name_literal Name, class S, class Init = initializers::GlorotUniform, bool Trainable = true>
struct named_weight : weight<weight_role::kernel, S, Init, Trainable> {
    static constexpr std::string_view name = Name.view();
};

/// The weights of a layer, in Keras' order (`layer.weights`).
template <class... W>
struct weight_list {
    static constexpr std::size_t count = sizeof...(W);
    static constexpr std::size_t param_count = (std::size_t{0} + ... + W::size);
    static constexpr std::size_t trainable_param_count = (std::size_t{0} + ... + (W::trainable ? W::size : 0));
};

/// Rounds a float count up to the buffer alignment.
[[nodiscard]] constexpr std::size_t
aligned_floats(std::size_t n) noexcept
{
    return (n + buffer_alignment_floats - 1) / buffer_alignment_floats * buffer_alignment_floats;
}

namespace detail {
/// What flows between layers: the per-sample shape and the element type.
template <class S, class T = float>
struct tensor {
    using shape = S;
    using value_type = T;
    static constexpr bool valid = true;
};
} // namespace detail

} // namespace tpudsl

#endif // !TPUDSL_CORE_WEIGHT_SPEC_HPP
