// compile_fail.layer_without_ops: a user-written layer that does not name its forward and backward
// pass; the _ok twin names them.
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
    template <class B>
    static void
    backward(const float*, const float*, const float*, float* dy, float* dx, float*, float*, std::size_t n,
             bool) noexcept
    {
        if (dx)
            for (std::size_t i = 0; i < n * B::input_shape::size; ++i)
                dx[i] = -dy[i];
    }
};

#ifdef TPUDSL_COMPILE_FAIL
// [layer_without_ops]
struct Negate : layer_base {
    static constexpr std::string_view class_name = "Negate";
    static constexpr std::string_view base_name = "negate";
};
// [layer_without_ops]
#else
// [layer_without_ops_fixed]
struct Negate : layer_base {
    static constexpr std::string_view class_name = "Negate";
    static constexpr std::string_view base_name = "negate";
    using ops = NegateOps;   // its forward and backward
};
// [layer_without_ops_fixed]
#endif

using Model = Sequential<Input<Shape<4>>, Negate, Dense<2>>;
// Training the model instantiates its graph, which checks every layer's ops.
[[maybe_unused]] void
build()
{
    Trainable<Model> model(0);
}
