// compile_fail.loss_not_a_loss: compile takes a loss that the Loss concept accepts; one without its
// `sparse_labels` (the kind of labels it reads) is refused in one message naming the concept.
#include <tpudsl/tpudsl.hpp>

#include <cstddef>
#include <string_view>

using namespace tpudsl;

using Model = Sequential<Input<Shape<4>>, Dense<1>>;

// [loss_not_a_loss]
struct AbsoluteError {
    static constexpr std::string_view name = "absolute_error";
#ifndef TPUDSL_COMPILE_FAIL
    static constexpr bool sparse_labels = false;
#endif
// [loss_not_a_loss]
    double
    operator()(const loss_row& row, float scale, float* grad) const noexcept
    {
        double l = 0.0;
        for (std::size_t j = 0; j < row.width; ++j) {
            const float e = row.output[j] - row.target[j];
            l += e > 0.0f ? e : -e;
            grad[j] = scale * static_cast<float>((e > 0.0f) - (e < 0.0f));
        }
        return l;
    }
};

void
compile(Trainable<Model>& model)
{
    model.compile(optimizers::SGD{}, AbsoluteError{});
}
