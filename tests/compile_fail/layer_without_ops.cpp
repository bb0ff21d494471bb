// compile_fail.layer_without_ops: a user-written layer that does not name its forward and backward
// pass; the _ok twin names them.
#include "negate_ops.hpp"

#include <tpudsl/tpudsl.hpp>

#include <string_view>

using namespace tpudsl;

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
