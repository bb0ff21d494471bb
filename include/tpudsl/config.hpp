/// @file Defines tpudsl's version macros and library-wide configuration.
#ifndef TPUDSL_CONFIG_HPP
#define TPUDSL_CONFIG_HPP

#define TPUDSL_VERSION_MAJOR 0
#define TPUDSL_VERSION_MINOR 1
#define TPUDSL_VERSION_PATCH 0
#define TPUDSL_VERSION (TPUDSL_VERSION_MAJOR * 10000 + TPUDSL_VERSION_MINOR * 100 + TPUDSL_VERSION_PATCH)

#if __cplusplus < 202002L
#error "tpudsl requires C++20 (compile with -std=c++20 or link tpudsl::tpudsl, which asks for it)"
#endif

#include <cstddef>

/// 1 (the default): a 3 x 3 convolution of stride 1 over at least 16 channels runs as Winograd
/// F(m x m, 3 x 3) (kernels/winograd.hpp), fewer products, its outputs within a few float roundings of
/// the direct sum. 0: every convolution sums directly, as Keras' backends do, so that a deep network's
/// training step follows Keras' to float rounding (a ReLU that a Winograd rounding tips the other way
/// changes that sample's gradients); slower 3 x 3 convolutions.
#ifndef TPUDSL_WINOGRAD
#define TPUDSL_WINOGRAD 1
#endif

namespace tpudsl {

/// Alignment, in bytes, of every tensor in the parameter, gradient and workspace buffers:
/// one cache line, which is also one AVX-512 register.
inline constexpr std::size_t buffer_alignment = 64;

/// The same alignment counted in floats: every tensor offset is a multiple of it.
inline constexpr std::size_t buffer_alignment_floats = buffer_alignment / sizeof(float);

/// Most micro-batches a step may have (8 for every strategy): the fused reduce and the deferred kernels'
/// gradient (kernels::gemm_tn_micro_batches) keep one entry per micro-batch on the stack.
inline constexpr std::size_t max_micro_batches = 64;

} // namespace tpudsl

#endif // !TPUDSL_CONFIG_HPP
