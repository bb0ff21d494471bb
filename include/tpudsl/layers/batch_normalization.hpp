/// @file Defines tpudsl::BatchNormalization, Keras' batch normalization over the channel (last) axis.
#ifndef TPUDSL_LAYERS_BATCH_NORMALIZATION_HPP
#define TPUDSL_LAYERS_BATCH_NORMALIZATION_HPP

#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/layers/layer_base.hpp>

#include <cstddef>
#include <string_view>

namespace tpudsl {

namespace detail {
/// The rules of BatchNormalization, in the order they are checked.
enum class batch_normalization_rule { ok, momentum, epsilon };
template <float Momentum, float Epsilon>
struct batch_normalization_ops;   // layers/batch_normalization_ops.hpp
} // namespace detail

/// `BatchNormalization(momentum, epsilon)` over the last axis (the channels): in training
/// `y = gamma * (x - mean) / sqrt(var + epsilon) + beta` with the mean and the (biased) variance of the
/// micro-batch, each channel over its samples and positions, and the moving statistics updated as
/// `moving = moving * Momentum + statistic * (1 - Momentum)`; outside training the moving statistics
/// stand in for the micro-batch's. Under every strategy the statistics are those of one fixed
/// micro-batch (as each TPU core normalises its own share), averaged over the step's micro-batches for
/// the moving update: OneDeviceStrategy and TpuStrategy<N> give the same bits (docs/distribute.md).
/// Weights, in Keras' order: gamma, beta (trainable; ones and zeros), moving_mean, moving_variance
/// (non-trainable; zeros and ones), each (channels,).
/// @tparam Momentum of the moving statistics, in [0, 1]
/// @tparam Epsilon  added to the variance, > 0
template <float Momentum = 0.99f, float Epsilon = 1e-3f>
struct BatchNormalization : layer_base {
    static constexpr bool position_independent = true;
    static constexpr std::string_view class_name = "BatchNormalization";
    static constexpr std::string_view base_name = "batch_normalization";
    static constexpr float momentum = Momentum;
    static constexpr float epsilon = Epsilon;
    static constexpr float moving_momentum = Momentum;
    using ops = detail::batch_normalization_ops<Momentum, Epsilon>;

    using rule = detail::batch_normalization_rule;

    template <class In, std::size_t Index>
    [[nodiscard]] static consteval rule
    check() noexcept
    {
        // Written so that NaN fails too.
        if (!(Momentum >= 0.0f && Momentum <= 1.0f))
            return rule::momentum;
        if (!(Epsilon > 0.0f))
            return rule::epsilon;
        return rule::ok;
    }

    template <rule R>
    struct diagnostic {
        static_assert(R != rule::momentum, "tpudsl::BatchNormalization<Momentum, Epsilon>: requires 0 <= Momentum <= 1 "
                                           "[TPUDSL_BATCHNORM_MOMENTUM]");
        static_assert(R != rule::epsilon, "tpudsl::BatchNormalization<Momentum, Epsilon>: requires Epsilon > 0 "
                                          "[TPUDSL_BATCHNORM_EPSILON]");
    };

    template <class In>
    static constexpr std::size_t channels = In::shape::dims[In::shape::rank - 1];

    template <class In>
    using weights = weight_list<weight<weight_role::gamma, Shape<channels<In>>>, weight<weight_role::beta, Shape<channels<In>>>,
                                weight<weight_role::moving_mean, Shape<channels<In>>, initializers::Zeros, false>,
                                weight<weight_role::moving_variance, Shape<channels<In>>, initializers::Ones, false>>;

    /// The normalised input of each sample, and after a micro-batch's rows its mean and variance.
    template <class In>
    static constexpr std::size_t scratch_size = In::shape::size + 2 * channels<In>;
};

} // namespace tpudsl

#endif // !TPUDSL_LAYERS_BATCH_NORMALIZATION_HPP
