// compile_fail.unknown_fit_option: fit's options are an aggregate; with its type written, a misspelled
// option is an error naming it (a bare braced list only says it "could not convert", in GCC and Clang).
#include <tpudsl/tpudsl.hpp>

#include <xtensor/xtensor.hpp>

using namespace tpudsl;

using Model = Sequential<Input<Shape<4>>, Dense<3, Softmax>>;

void
train(Trainable<Model>& model, const xt::xtensor<float, 2>& x, const xt::xtensor<std::int32_t, 1>& y)
{
#ifdef TPUDSL_COMPILE_FAIL
    // [unknown_fit_option]
    model.fit(x, y, FitOptions{.batch_sizes = 32, .epochs = 5});
    // [unknown_fit_option]
#else
    // [unknown_fit_option_fixed]
    model.fit(x, y, FitOptions{.batch_size = 32, .epochs = 5});
    // [unknown_fit_option_fixed]
#endif
}
