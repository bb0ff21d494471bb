/// @file The forward and backward pass of a user-written Negate layer (y = -x), shared by the
/// compile-fail tests of a layer's ops; with TPUDSL_NEGATE_WITHOUT_BACKWARD it has no backward pass.
#ifndef TPUDSL_TESTS_COMPILE_FAIL_NEGATE_OPS_HPP
#define TPUDSL_TESTS_COMPILE_FAIL_NEGATE_OPS_HPP

#include <tpudsl/tpudsl.hpp>

#include <cstddef>

struct NegateOps {
    template <class B>
    static void
    forward(const float*, const float* x, float* y, float*, std::size_t n, const tpudsl::step_context&) noexcept
    {
        for (std::size_t i = 0; i < n * B::input_shape::size; ++i)
            y[i] = -x[i];
    }
#ifndef TPUDSL_NEGATE_WITHOUT_BACKWARD
    template <class B>
    static void
    backward(const float*, const float*, const float*, float* dy, float* dx, float*, float*, std::size_t n,
             bool) noexcept
    {
        if (dx)
            for (std::size_t i = 0; i < n * B::input_shape::size; ++i)
                dx[i] = -dy[i];
    }
#endif
};

#endif // !TPUDSL_TESTS_COMPILE_FAIL_NEGATE_OPS_HPP
