// compile_fail.layer_ops_incomplete: a user-written layer whose ops lack a backward pass; the _ok
// twin has one.
#ifdef TPUDSL_COMPILE_FAIL
#define TPUDSL_NEGATE_WITHOUT_BACKWARD   // the mistake: ops without a backward pass
#endif
#include "negate_ops.hpp"

#include <tpudsl/tpudsl.hpp>

#include <string_view>

using namespace tpudsl;

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
