// compile_fail.graph_inputs_tuple: a graph of two Inputs takes a tuple of arrays, one per Input, as
// Keras takes a list; one array for both does not compile.
#include <tpudsl/functional.hpp>
#include <tpudsl/tpudsl.hpp>

#include <cstdint>
#include <tuple>

#include <xtensor/xtensor.hpp>

using namespace tpudsl;

using TwoInputs = Functional<Node<"ids", Input<Shape<6>, std::int32_t>>, Node<"values", Input<Shape<2>>>,
                             Node<"embedding", Embedding<50, 4>, "ids">, Node<"flat", Flatten>,
                             Node<"joined", Concatenate<>, "flat", "values">, Node<"label", Dense<3, Softmax>>>;

auto
predict(Trainable<TwoInputs>& model, const xt::xtensor<std::int32_t, 2>& ids, const xt::xtensor<float, 2>& values)
{
#ifdef TPUDSL_COMPILE_FAIL
    static_cast<void>(values);
    // [graph_inputs_tuple]
    return model.predict(ids);
    // [graph_inputs_tuple]
#else
    // [graph_inputs_tuple_fixed]
    return model.predict(std::tie(ids, values));
    // [graph_inputs_tuple_fixed]
#endif
}
