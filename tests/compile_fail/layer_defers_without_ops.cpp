// compile_fail.layer_defers_without_ops: a user-written layer whose spec declares
// defers_kernel_gradient (its kernel's gradient left to the fused pass) but whose ops have only
// forward and backward; the _ok twin does not declare it.
#include "negate_ops.hpp"

#include <tpudsl/tpudsl.hpp>

#include <string_view>

using namespace tpudsl;

struct Negate : layer_base {
    static constexpr std::string_view class_name = "Negate";
    static constexpr std::string_view base_name = "negate";
#ifdef TPUDSL_COMPILE_FAIL
    static constexpr bool defers_kernel_gradient = true;   // the mistake: its ops are not DeferringOps
#endif
    using ops = NegateOps;
};

using Model = Sequential<Input<Shape<4>>, Dense<3>, Negate, Dense<2>>;
// Training the model instantiates its graph, which checks every layer's ops.
[[maybe_unused]] void
build()
{
    Trainable<Model> model(0);
}
