// Static tests of valid_model: the same cases as the compile-fail tests, as a yes/no predicate.
#include <tpudsl/tpudsl.hpp>

#include <cstdint>

using namespace tpudsl;

using Img = Input<Shape<28, 28, 1>>;
using Ids = Input<Shape<10>, std::int32_t>;

// [valid_model]
static_assert(valid_model<Img, Flatten, Dense<10>>);
static_assert(!valid_model<Img, Dense<10>>);                                    // Flatten forgotten
static_assert(!valid_model<Img, Conv2D<64, 3>, Dense<10>, Activation<Softmax>>); // Dense after Conv2D
static_assert(valid_model<Img, Conv2D<64, 3>, Flatten, Dense<10>, Activation<Softmax>>);
// [valid_model]
static_assert(!valid_model<Input<Shape<8, 8, 3>>, Conv2D<32, 3>, MaxPool2D<2>, Conv2D<64, 5>>);
static_assert(valid_model<Input<Shape<8, 8, 3>>, Conv2D<32, 3>, MaxPool2D<2>, Conv2D<64, 5, Linear, Same>>);
static_assert(!valid_model<Input<Shape<4, 8>>, Conv1D<16, 5>>);
static_assert(valid_model<Input<Shape<4, 8>>, Conv1D<16, 4>>);
static_assert(!valid_model<Input<Shape<3, 8>>, MaxPool1D<4>>);
static_assert(valid_model<Input<Shape<3, 8>>, MaxPool1D<4, 4, Same>>);
static_assert(!valid_model<Input<Shape<784>>, Conv2D<32, 3>>);                  // Conv2D on rank 1
static_assert(!valid_model<Img, Conv1D<32, 3>>);
static_assert(!valid_model<Input<Shape<28, 28>>, MaxPool2D<2>>);
static_assert(!valid_model<Ids, Embedding<100, 8>, Flatten, Embedding<100, 8>>); // Embedding not first
static_assert(valid_model<Ids, Embedding<100, 8>, Flatten>);
static_assert(!valid_model<Input<Shape<10>>, Embedding<100, 8>>);               // float token ids
static_assert(!valid_model<Ids, Dense<4>>);                                     // ids without Embedding
static_assert(!valid_model<Input<Shape<10>>, Dense<0>>);
static_assert(!valid_model<Input<Shape<8, 8, 1>>, Conv2D<0, 3>>);
static_assert(!valid_model<Input<Shape<8, 8, 1>>, Conv2D<4, Size2{0, 3}>>);
static_assert(!valid_model<Input<Shape<16, 2>>, Conv1D<4, 3, Relu, Valid, 0>>);
static_assert(!valid_model<Input<Shape<8, 8, 1>>, MaxPool2D<0>>);
static_assert(!valid_model<Input<Shape<8, 8, 1>>, AveragePooling2D<0>>);
static_assert(!valid_model<Input<Shape<3, 8>>, AveragePooling1D<4>>);
static_assert(valid_model<Input<Shape<3, 8>>, AveragePooling1D<4, 4, Same>>);
static_assert(!valid_model<Input<Shape<28, 28>>, AveragePooling2D<2>>);
static_assert(!valid_model<Input<Shape<784>>, GlobalAveragePooling2D>);         // GlobalAveragePooling2D on rank 1
static_assert(!valid_model<Img, GlobalMaxPooling1D>);
static_assert(valid_model<Img, Conv2D<8, 3>, GlobalAveragePooling2D, Dense<10>>); // no Flatten needed
static_assert(valid_model<Input<Shape<12, 4>>, Conv1D<8, 3>, GlobalMaxPooling1D, Dense<2>>);
static_assert(valid_model<Ids, Embedding<100, 8>, LSTM<16>, Dense<2>>);            // a sentence to its last state
static_assert(valid_model<Ids, Embedding<100, 8>, GRU<16, true>, LSTM<4>, Dense<2>>);
static_assert(!valid_model<Ids, Embedding<100, 8>, LSTM<16>, LSTM<4>>);         // the second gets (16)
static_assert(!valid_model<Input<Shape<784>>, GRU<8>>);
static_assert(!valid_model<Input<Shape<10, 3>>, LSTM<0>>);
static_assert(!valid_model<Ids, Embedding<0, 8>>);
static_assert(!valid_model<Ids, Embedding<10, 0>>);
static_assert(!valid_model<Input<Shape<10>>, Dense<4>, Dropout<1.0f>>);
static_assert(valid_model<Input<Shape<10>>, Dense<4>, Dropout<0.99f>>);
static_assert(!valid_model<Input<Shape<10>>, Dense<4>, Relu>);                  // bare activation
static_assert(!valid_model<Shape<10>, Dense<4>>);                               // no Input
static_assert(!valid_model<Input<Shape<10>>>);                                  // no layers
static_assert(!valid_model<Input<Shape<28, 0>>, Flatten>);                      // empty input
static_assert(!valid_model<Input<Shape<>>, Flatten>);

// valid_model and Sequential agree on every valid model (Sequential compiles and says valid).
static_assert(Sequential<Img, Conv2D<64, 3>, Flatten, Dense<10>>::valid);

// A constraint reads valid_model directly.
template <class In, class... Ls>
    requires valid_model<In, Ls...>
constexpr bool buildable = true;
template <class In, class... Ls>
concept Buildable = requires { requires buildable<In, Ls...>; };
static_assert(Buildable<Img, Flatten, Dense<10>>);
static_assert(!Buildable<Img, Dense<10>>);
