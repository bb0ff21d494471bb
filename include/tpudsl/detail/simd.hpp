/// @file The only door to xsimd (private): the float batch of the widest instruction set the
/// compiler flags allow, or a one-lane scalar stand-in when xsimd supports none.
#ifndef TPUDSL_DETAIL_SIMD_HPP
#define TPUDSL_DETAIL_SIMD_HPP

#include <xsimd/xsimd.hpp>

#include <cstddef>

namespace tpudsl::detail::simd {

#if defined(XSIMD_NO_SUPPORTED_ARCHITECTURE)
/// Scalar stand-in with xsimd's spelling, for targets without SIMD.
struct vfloat {
    float v;
    static constexpr std::size_t size = 1;
    static vfloat load(const float* p) noexcept { return {*p}; }
    static vfloat broadcast(float x) noexcept { return {x}; }
    void store(float* p) const noexcept { *p = v; }
    friend vfloat fma(vfloat a, vfloat b, vfloat c) noexcept { return {a.v * b.v + c.v}; }
    friend vfloat operator+(vfloat a, vfloat b) noexcept { return {a.v + b.v}; }
    friend vfloat operator*(vfloat a, vfloat b) noexcept { return {a.v * b.v}; }
    friend float reduce_add(vfloat a) noexcept { return a.v; }
    /// {x, x + 1, ..., x + size - 1}
    static vfloat ramp(float x) noexcept { return {x}; }
    /// Where a > b: b = a and ib = ia (lane by lane, without a branch).
    friend void take_if_greater(vfloat a, vfloat& b, vfloat ia, vfloat& ib) noexcept
    {
        const bool m = a.v > b.v;
        b.v = m ? a.v : b.v;
        ib.v = m ? ia.v : ib.v;
    }
};
inline constexpr const char* arch_name = "scalar";
#else
/// xsimd's batch of floats for the default (widest enabled) architecture.
struct vfloat {
    using batch = xsimd::batch<float>;
    batch v;
    static constexpr std::size_t size = batch::size;
    static vfloat load(const float* p) noexcept { return {batch::load_unaligned(p)}; }
    static vfloat broadcast(float x) noexcept { return {batch(x)}; }
    void store(float* p) const noexcept { v.store_unaligned(p); }
    friend vfloat fma(vfloat a, vfloat b, vfloat c) noexcept { return {xsimd::fma(a.v, b.v, c.v)}; }
    friend vfloat operator+(vfloat a, vfloat b) noexcept { return {a.v + b.v}; }
    friend vfloat operator*(vfloat a, vfloat b) noexcept { return {a.v * b.v}; }
    friend float reduce_add(vfloat a) noexcept { return xsimd::hadd(a.v); }
    /// {x, x + 1, ..., x + size - 1}
    static vfloat
    ramp(float x) noexcept
    {
        alignas(64) float lanes[size];
        for (std::size_t i = 0; i < size; ++i)
            lanes[i] = x + static_cast<float>(i);
        return {batch::load_aligned(lanes)};
    }
    /// Where a > b: b = a and ib = ia (lane by lane, without a branch).
    friend void take_if_greater(vfloat a, vfloat& b, vfloat ia, vfloat& ib) noexcept
    {
        const auto m = a.v > b.v;
        b.v = xsimd::select(m, a.v, b.v);
        ib.v = xsimd::select(m, ia.v, ib.v);
    }
};
inline const char* const arch_name = xsimd::default_arch::name();
#endif

inline constexpr std::size_t width = vfloat::size;

} // namespace tpudsl::detail::simd

#endif // !TPUDSL_DETAIL_SIMD_HPP
