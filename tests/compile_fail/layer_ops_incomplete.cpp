// compile_fail.layer_ops_incomplete: a user-written layer whose ops lack a backward pass; the _ok
// twin has one.
#include <tpudsl/tpudsl.hpp>

#include <cstddef>
#include <string_view>

using namespace tpudsl;

struct NegateOps {
    template <class B>
    static void
    forward(const float*, const float* x, float* y, float*, std::size_t n, const step_context&) noexcept
    {
        for (std::size_t i = 0; i < n * B::input_shape::size; ++i)
            y[i] = -x[i];
    }
#ifndef TPUDSL_COMPILE_FAIL
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

struct Negate : layer_base {
    static constexpr std::string_view class_name = "Negate";
    static constexpr std::string_view base_name = "negate";
    using ops = NegateOps;
};

using Model = Sequential<Input<Shape<4>>, Negate, Dense<2>>;
// Training the model instantiates its graph, which checks every layer's ops.
[[maybe_unused]] void
build()
{
    Trainable<Model> model(0);
}
