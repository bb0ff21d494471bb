/// @file Opens a GEMM header's loops: turns off GCC's -Waggressive-loop-optimizations until
/// loops_end.hpp (private; no include guard, each GEMM header includes the pair around its code).
///
/// GCC 12 at -O3 reports "iteration N invokes undefined behavior" inside these loops once it has
/// propagated a constant batch size into them. The loops stay in bounds: the kernel tests also run under
/// AddressSanitizer and UBSan.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waggressive-loop-optimizations"
#endif
