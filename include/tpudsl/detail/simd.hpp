/// @file The only door to xsimd and to the instruction set's intrinsics (private): the float batch of
/// the widest instruction set the compiler flags allow, or a one-lane scalar stand-in when xsimd
/// supports none, and the operations written here with intrinsics where xsimd has none or a slower
/// one (masked loads and stores, blends, an 8 x 8 transpose). Nothing else names an intrinsic.
#ifndef TPUDSL_DETAIL_SIMD_HPP
#define TPUDSL_DETAIL_SIMD_HPP

#include <xsimd/xsimd.hpp>
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <cstddef>
#include <cstdint>

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
    friend vfloat operator-(vfloat a, vfloat b) noexcept { return {a.v - b.v}; }
    friend vfloat operator/(vfloat a, vfloat b) noexcept { return {a.v / b.v}; }
    friend vfloat sqrt(vfloat a) noexcept { return {__builtin_sqrtf(a.v)}; }
    friend vfloat exp(vfloat a) noexcept { return {__builtin_expf(a.v)}; }
    friend vfloat tanh(vfloat a) noexcept { return {__builtin_tanhf(a.v)}; }
    friend float reduce_add(vfloat a) noexcept { return a.v; }
    friend vfloat max(vfloat a, vfloat b) noexcept { return {a.v > b.v ? a.v : b.v}; }
    /// The first `count` (< size) lanes from p, the others 0; never reads past p + count.
    static vfloat load_n(const float* p, std::size_t count) noexcept { return {count ? *p : 0.0f}; }
    /// Lanes [lo, hi) of p (0 <= lo <= hi <= size), the others 0; reads only those lanes.
    static vfloat load_lanes(const float* p, std::size_t lo, std::size_t hi) noexcept { return {lo < hi ? *p : 0.0f}; }
    /// Stores the first `count` (< size) lanes; never writes past p + count.
    void store_n(float* p, std::size_t count) const noexcept
    {
        if (count)
            *p = v;
    }
    /// {x, x + 1, ..., x + size - 1}
    static vfloat ramp(float x) noexcept { return {x}; }
    /// Where a > b: b = a and ib = ia (lane by lane, without a branch).
    friend void take_if_greater(vfloat a, vfloat& b, vfloat ia, vfloat& ib) noexcept
    {
        const bool m = a.v > b.v;
        b.v = m ? a.v : b.v;
        ib.v = m ? ia.v : ib.v;
    }
    /// x where a == b, else 0 (lane by lane).
    friend vfloat where_equal(vfloat a, vfloat b, vfloat x) noexcept { return {a.v == b.v ? x.v : 0.0f}; }
    /// x where a > b, else 0 (lane by lane).
    friend vfloat where_greater(vfloat a, vfloat b, vfloat x) noexcept { return {a.v > b.v ? x.v : 0.0f}; }
};
inline constexpr const char* arch_name = "scalar";
#else
/// xsimd's batch of floats for the default (widest enabled) architecture.
struct vfloat {
    using batch = xsimd::batch<float>;
    batch v;
    static constexpr std::size_t size = batch::size;

#if defined(__AVX2__) && !defined(__AVX512F__)
    /// The AVX2 mask whose first `count` lanes are set.
    static __m256i
    lane_mask(std::size_t count) noexcept
    {
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }
#endif
    static vfloat load(const float* p) noexcept { return {batch::load_unaligned(p)}; }
    static vfloat broadcast(float x) noexcept { return {batch(x)}; }
    void store(float* p) const noexcept { v.store_unaligned(p); }
    friend vfloat fma(vfloat a, vfloat b, vfloat c) noexcept { return {xsimd::fma(a.v, b.v, c.v)}; }
    friend vfloat operator+(vfloat a, vfloat b) noexcept { return {a.v + b.v}; }
    friend vfloat operator*(vfloat a, vfloat b) noexcept { return {a.v * b.v}; }
    friend vfloat operator-(vfloat a, vfloat b) noexcept { return {a.v - b.v}; }
    friend vfloat operator/(vfloat a, vfloat b) noexcept { return {a.v / b.v}; }
    /// AVX-512: the masked form with every lane set (the same vsqrtps; the unmasked intrinsic's undefined
    /// pass-through operand makes GCC 12 warn "may be used uninitialized" where it is inlined).
    friend vfloat
    sqrt(vfloat a) noexcept
    {
#if defined(__AVX512F__)
        return {batch(_mm512_mask_sqrt_ps(a.v, static_cast<__mmask16>(0xFFFF), a.v))};
#else
        return {xsimd::sqrt(a.v)};
#endif
    }
    /// e^a, lane by lane: Cephes' expf (a degree-5 polynomial on a - n ln 2, times 2^n built in the
    /// exponent's bits), within 2 ulp; a is clamped to [-87.3, 88.3], where 2^n stays normal. Written
    /// here on plain arithmetic: xsimd's exp goes through AVX-512 intrinsics whose undefined
    /// pass-through operand GCC 12 warns about.
    friend vfloat
    exp(vfloat a) noexcept
    {
        using ibatch = xsimd::batch<std::int32_t>;
        const batch lo(-87.3f), hi(88.3f), magic(12582912.0f);   // 1.5 * 2^23: rounds to an integer
        batch x = xsimd::select(a.v < lo, lo, a.v);
        x = xsimd::select(x > hi, hi, x);
        const batch t = xsimd::fma(x, batch(1.44269504088896341f), magic);
        const batch n = t - magic;
        batch r = xsimd::fma(n, batch(-0.693359375f), x);
        r = xsimd::fma(n, batch(2.12194440e-4f), r);
        batch p(1.9875691500e-4f);
        p = xsimd::fma(p, r, batch(1.3981999507e-3f));
        p = xsimd::fma(p, r, batch(8.3334519073e-3f));
        p = xsimd::fma(p, r, batch(4.1665795894e-2f));
        p = xsimd::fma(p, r, batch(1.6666665459e-1f));
        p = xsimd::fma(p, r, batch(5.0000001201e-1f));
        const batch e = xsimd::fma(p, r * r, r) + batch(1.0f);
        // t's low bits hold n: (n + 127) << 23 is 2^n's float.
        const ibatch bits = (xsimd::bitwise_cast<ibatch>(t) - ibatch(0x4B400000 - 127)) * ibatch(1 << 23);
        return {e * xsimd::bitwise_cast<batch>(bits)};
    }
    /// tanh(a), lane by lane: Cephes' odd polynomial for |a| < 0.625, (1 - e) / (1 + e) with
    /// e = exp(-2 |a|) beyond; within a few ulp.
    friend vfloat
    tanh(vfloat a) noexcept
    {
        const batch zero(0.0f), one(1.0f);
        const auto negative = a.v < zero;
        const batch m = xsimd::select(negative, zero - a.v, a.v);
        const batch e = exp(vfloat{batch(-2.0f) * m}).v;
        const batch big = (one - e) / (one + e);
        const batch z = a.v * a.v;
        batch p(-5.70498872745e-3f);
        p = xsimd::fma(p, z, batch(2.06390887954e-2f));
        p = xsimd::fma(p, z, batch(-5.37397155531e-2f));
        p = xsimd::fma(p, z, batch(1.33314422036e-1f));
        p = xsimd::fma(p, z, batch(-3.33332819422e-1f));
        const batch small = xsimd::fma(p * z, a.v, a.v);
        const batch far = xsimd::select(negative, zero - big, big);
        return {xsimd::select(m < batch(0.625f), small, far)};
    }
    friend float reduce_add(vfloat a) noexcept { return xsimd::hadd(a.v); }
    /// (a < b) ? b : a, lane by lane (NaN in a stays). AVX-512: a compare and a blend (GCC 12 warns
    /// about the undefined pass-through operand of _mm512_max_ps).
    friend vfloat
    max(vfloat a, vfloat b) noexcept
    {
#if defined(__AVX2__) && !defined(__AVX512F__)
        return {batch(_mm256_max_ps(b.v, a.v))};   // (b > a) ? b : a, the select below in one instruction
#else
        return {xsimd::select(a.v < b.v, b.v, a.v)};
#endif
    }

    /// The first `count` (< size) lanes from p, the others 0; never reads past p + count.
    static vfloat
    load_n(const float* p, std::size_t count) noexcept
    {
#if defined(__AVX512F__)
        static_assert(size == 16);
        return {batch(_mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << count) - 1u), p))};
#elif defined(__AVX2__)
        static_assert(size == 8);
        return {batch(_mm256_maskload_ps(p, lane_mask(count)))};
#else
        alignas(64) float lanes[size] = {};
        for (std::size_t i = 0; i < count; ++i)
            lanes[i] = p[i];
        return {batch::load_aligned(lanes)};
#endif
    }

    /// Lanes [lo, hi) of p (0 <= lo <= hi <= size), the others 0; reads only those lanes (p itself
    /// may point before an array when lo > 0).
    static vfloat
    load_lanes(const float* p, std::size_t lo, std::size_t hi) noexcept
    {
#if defined(__AVX512F__)
        const auto keep = static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
        return {batch(_mm512_maskz_loadu_ps(keep, p))};
#elif defined(__AVX2__)
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256i keep = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(lo)), lane),
                                                 _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(hi)), lane));
        return {batch(_mm256_maskload_ps(p, keep))};
#else
        alignas(64) float lanes[size] = {};
        for (std::size_t i = lo; i < hi; ++i)
            lanes[i] = p[i];
        return {batch::load_aligned(lanes)};
#endif
    }

    /// Stores the first `count` (< size) lanes; never writes past p + count.
    void
    store_n(float* p, std::size_t count) const noexcept
    {
#if defined(__AVX512F__)
        _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << count) - 1u), v);
#elif defined(__AVX2__)
        _mm256_maskstore_ps(p, lane_mask(count), v);
#else
        alignas(64) float lanes[size];
        v.store_aligned(lanes);
        for (std::size_t i = 0; i < count; ++i)
            p[i] = lanes[i];
#endif
    }

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
#if defined(__AVX2__) && !defined(__AVX512F__) && defined(__GNUC__)
        // GCC 12 turns a blend on a compare's mask into the compare, an integer sign test of the mask
        // and the blend: one more instruction per blend, and two crossings between the float and
        // integer domains in the pooling's dependency chain. Written out, the blends stay blends.
        const __m256 m = _mm256_cmp_ps(a.v, b.v, _CMP_GT_OQ);
        __m256 nb, nib;
        asm("vblendvps %3, %2, %1, %0" : "=x"(nb) : "x"(__m256(b.v)), "x"(__m256(a.v)), "x"(m));
        asm("vblendvps %3, %2, %1, %0" : "=x"(nib) : "x"(__m256(ib.v)), "x"(__m256(ia.v)), "x"(m));
        b.v = nb;
        ib.v = nib;
#else
        const auto m = a.v > b.v;
        b.v = xsimd::select(m, a.v, b.v);
        ib.v = xsimd::select(m, ia.v, ib.v);
#endif
    }
    /// x where a == b, else 0 (lane by lane).
    friend vfloat where_equal(vfloat a, vfloat b, vfloat x) noexcept
    {
#if defined(__AVX2__) && !defined(__AVX512F__)
        return {batch(_mm256_and_ps(_mm256_cmp_ps(a.v, b.v, _CMP_EQ_OQ), x.v))};   // a mask, not a blend
#else
        return {xsimd::select(a.v == b.v, x.v, batch(0.0f))};
#endif
    }
    /// x where a > b, else 0 (lane by lane).
    friend vfloat where_greater(vfloat a, vfloat b, vfloat x) noexcept
    {
#if defined(__AVX2__) && !defined(__AVX512F__)
        return {batch(_mm256_and_ps(_mm256_cmp_ps(a.v, b.v, _CMP_GT_OQ), x.v))};
#else
        return {xsimd::select(a.v > b.v, x.v, batch(0.0f))};
#endif
    }
};
inline const char* const arch_name = xsimd::default_arch::name();
#endif

inline constexpr std::size_t width = vfloat::size;

/// How many vector registers the instruction set names: 32 with AVX-512, 16 with AVX2/SSE on x86-64.
inline constexpr std::size_t registers = width == 16 ? 32 : 16;

/// True when transpose_8x8 moves its block in registers (AVX2 and up); elsewhere it copies element by
/// element, and a caller does better with its own loop over the whole matrix.
#if defined(__AVX2__)
inline constexpr bool transposes_8x8_in_registers = true;
#else
inline constexpr bool transposes_8x8_in_registers = false;
#endif

/// The 8 x 8 block at `in` (rows in_ld apart) transposed into the one at `out` (rows out_ld apart).
/// With AVX2, in registers: eight row loads, three rounds of shuffles, eight row stores; otherwise
/// element by element.
[[gnu::always_inline]] inline void
transpose_8x8(const float* in, std::size_t in_ld, float* out, std::size_t out_ld) noexcept
{
#if defined(__AVX2__)
    __m256 r[8], t[8];
#pragma GCC unroll 8
    for (std::size_t i = 0; i < 8; ++i)
        r[i] = _mm256_loadu_ps(in + i * in_ld);
#pragma GCC unroll 4
    for (std::size_t i = 0; i < 8; i += 2) {   // (r0 r1) -> a0 b0 a1 b1 | a4 b4 a5 b5 and the high halves
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
#pragma GCC unroll 2
    for (std::size_t i = 0; i < 8; i += 4) {   // four rows' elements 0 1 (and 2 3) per 128-bit lane
        r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
#pragma GCC unroll 4
    for (std::size_t i = 0; i < 4; ++i) {   // rows 0-3 from the low lanes, 4-7 from the high ones
        _mm256_storeu_ps(out + i * out_ld, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
        _mm256_storeu_ps(out + (i + 4) * out_ld, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
    }
#else
    for (std::size_t i = 0; i < 8; ++i)
        for (std::size_t j = 0; j < 8; ++j)
            out[j * out_ld + i] = in[i * in_ld + j];
#endif
}

} // namespace tpudsl::detail::simd

#endif // !TPUDSL_DETAIL_SIMD_HPP
