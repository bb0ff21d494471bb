// Static tests of each layer's binding: output shapes, Keras weight shapes, parameter counts.
#include <tpudsl/core.hpp>   // the deprecated name of <tpudsl/model.hpp> compiles for one more release
#include <tpudsl/tpudsl.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

using namespace tpudsl;
using detail::tensor;

template <class L, class In>
using out_t = typename L::template output<In>::shape;
template <class L, class In>
constexpr std::size_t params = L::template weights<In>::param_count;
template <class L, class In, std::size_t Index = 1>
constexpr auto verdict = L::template check<In, Index>();
template <class L>
using rule = typename L::rule;   // each layer's own rules

using F = tensor<Shape<28, 28, 1>>;

// Dense: kernel (in, units) + bias
static_assert(std::is_same_v<out_t<Dense<10>, tensor<Shape<10816>>>, Shape<10>>);
static_assert(params<Dense<10>, tensor<Shape<10816>>> == 108'170);
static_assert(verdict<Dense<10>, F> == rule<Dense<10>>::needs_rank1);
static_assert(verdict<Dense<0>, tensor<Shape<4>>> == rule<Dense<0>>::zero_units);

// TimeDistributed<Dense>: (T, F) -> (T, units), the Dense's weights (F, units) + bias; Keras' names
using TD5 = TimeDistributed<Dense<5, Softmax>>;
static_assert(std::is_same_v<out_t<TD5, tensor<Shape<20, 8>>>, Shape<20, 5>>);
static_assert(params<TD5, tensor<Shape<20, 8>>> == 8 * 5 + 5);
static_assert(std::is_same_v<Sequential<Input<Shape<20, 8>>, TD5>::layer<0>::weight<0>::shape, Shape<8, 5>>);
static_assert(TD5::scratch_size<tensor<Shape<20, 8>>> == 20 * 5);   // every timestep's logits
static_assert(TimeDistributed<Dense<5, Relu>>::scratch_size<tensor<Shape<20, 8>>> == 0);
static_assert(TD5::class_name == "TimeDistributed" && TD5::base_name == "time_distributed");
static_assert(verdict<TD5, tensor<Shape<20, 8>>> == rule<TD5>::ok);
static_assert(verdict<TD5, tensor<Shape<160>>> == rule<TD5>::needs_rank2);
static_assert(verdict<TD5, F> == rule<TD5>::needs_rank2);
static_assert(verdict<TimeDistributed<Dense<0>>, tensor<Shape<4, 2>>> == rule<TD5>::zero_units);
static_assert(verdict<TimeDistributed<Conv1D<4, 3>>, tensor<Shape<4, 2>>> == rule<TD5>::needs_dense);
static_assert(verdict<TimeDistributed<Flatten>, tensor<Shape<4, 2>>> == rule<TD5>::needs_dense);

// Embedding: (vocab, dim); (L) -> (L, dim), and also (a, b) -> (a, b, dim)
static_assert(std::is_same_v<out_t<Embedding<30982, 7>, tensor<Shape<300>, std::int32_t>>, Shape<300, 7>>);
static_assert(std::is_same_v<out_t<Embedding<10, 3>, tensor<Shape<4, 5>, std::int32_t>>, Shape<4, 5, 3>>);
static_assert(params<Embedding<30982, 7>, tensor<Shape<300>, std::int32_t>> == 216'874);
static_assert(verdict<Embedding<10, 3>, tensor<Shape<4>, std::int32_t>, 0> == rule<Embedding<10, 3>>::ok);
// not first: refused on floats (a Sequential's later layer), taken on token ids (a graph's node on an Input)
static_assert(verdict<Embedding<10, 3>, tensor<Shape<4>>, 1> == rule<Embedding<10, 3>>::not_first);
static_assert(verdict<Embedding<10, 3>, tensor<Shape<4>, std::int32_t>, 1> == rule<Embedding<10, 3>>::ok);
static_assert(verdict<Embedding<10, 3>, tensor<Shape<4>>, 0> == rule<Embedding<10, 3>>::needs_integer_input);

// Conv1D: kernel (k, in, out) + bias; valid and same; strides
static_assert(std::is_same_v<out_t<Conv1D<64, 5>, tensor<Shape<300, 7>>>, Shape<296, 64>>);
static_assert(params<Conv1D<64, 5>, tensor<Shape<300, 7>>> == 2'304);
static_assert(std::is_same_v<out_t<Conv1D<8, 3, Relu, Same, 2>, tensor<Shape<9, 4>>>, Shape<5, 8>>);
static_assert(std::is_same_v<out_t<Conv1D<8, 3, Relu, Valid, 2>, tensor<Shape<9, 4>>>, Shape<4, 8>>);
static_assert(std::is_same_v<typename Conv1D<8, 3>::template weights<tensor<Shape<9, 4>>>,
                             weight_list<weight<weight_role::kernel, Shape<3, 4, 8>>,
                                         weight<weight_role::bias, Shape<8>>>>);
static_assert(verdict<Conv1D<8, 10>, tensor<Shape<9, 4>>> == detail::conv_rule::kernel_too_large);
static_assert(verdict<Conv1D<8, 10, Linear, Same>, tensor<Shape<9, 4>>> == detail::conv_rule::ok);
static_assert(verdict<Conv1D<8, 3>, F> == detail::conv_rule::needs_rank2);

// Conv2D: kernel (kh, kw, in, out) + bias; square and rectangular windows and strides
static_assert(std::is_same_v<out_t<Conv2D<64, 3>, F>, Shape<26, 26, 64>>);
static_assert(params<Conv2D<64, 3>, F> == 640);
static_assert(std::is_same_v<out_t<Conv2D<32, 3, Relu, Same>, tensor<Shape<32, 32, 3>>>, Shape<32, 32, 32>>);
static_assert(params<Conv2D<32, 3, Relu, Same>, tensor<Shape<32, 32, 3>>> == 896);
static_assert(std::is_same_v<out_t<Conv2D<4, Size2{3, 5}>, tensor<Shape<10, 10, 2>>>, Shape<8, 6, 4>>);
static_assert(std::is_same_v<out_t<Conv2D<4, 3, Linear, Valid, Size2{2, 1}>, tensor<Shape<10, 10, 2>>>,
                             Shape<4, 8, 4>>);
static_assert(std::is_same_v<out_t<Conv2D<4, 3, Linear, Same, 2>, tensor<Shape<7, 8, 2>>>, Shape<4, 4, 4>>);
static_assert(std::is_same_v<typename Conv2D<4, Size2{3, 5}>::template weights<tensor<Shape<10, 10, 2>>>,
                             weight_list<weight<weight_role::kernel, Shape<3, 5, 2, 4>>,
                                         weight<weight_role::bias, Shape<4>>>>);
static_assert(verdict<Conv2D<4, 3>, tensor<Shape<784>>> == detail::conv_rule::needs_rank3);
static_assert(verdict<Conv2D<4, 3>, tensor<Shape<2, 9, 1>>> == detail::conv_rule::kernel_too_large);
static_assert(verdict<Conv2D<4, 3, Linear, Valid, 0>, F> == detail::conv_rule::zero_stride);
static_assert(verdict<Conv2D<4, -3>, F> == detail::conv_rule::zero_kernel);

// Pooling: strides default to the pool
static_assert(std::is_same_v<out_t<MaxPool1D<2>, tensor<Shape<296, 64>>>, Shape<148, 64>>);
static_assert(std::is_same_v<out_t<MaxPool1D<2>, tensor<Shape<146, 32>>>, Shape<73, 32>>);
static_assert(std::is_same_v<out_t<MaxPool1D<3, 1>, tensor<Shape<10, 2>>>, Shape<8, 2>>);
static_assert(std::is_same_v<out_t<MaxPool2D<2>, tensor<Shape<26, 26, 64>>>, Shape<13, 13, 64>>);
static_assert(std::is_same_v<out_t<MaxPool2D<2>, tensor<Shape<13, 13, 64>>>, Shape<6, 6, 64>>);
static_assert(std::is_same_v<out_t<MaxPool2D<2, 2, Same>, tensor<Shape<13, 13, 64>>>, Shape<7, 7, 64>>);
static_assert(std::is_same_v<out_t<MaxPool2D<Size2{2, 3}>, tensor<Shape<8, 9, 1>>>, Shape<4, 3, 1>>);
static_assert(params<MaxPool2D<2>, F> == 0);
static_assert(verdict<MaxPool2D<4>, tensor<Shape<3, 8, 1>>> == detail::pool_rule::window_too_large);
static_assert(verdict<MaxPool1D<2>, F> == detail::pool_rule::needs_rank2);

// Average pooling: Keras' output shapes, the max pooling's rules
static_assert(std::is_same_v<out_t<AveragePooling1D<2>, tensor<Shape<296, 64>>>, Shape<148, 64>>);
static_assert(std::is_same_v<out_t<AveragePooling1D<3, 1>, tensor<Shape<10, 2>>>, Shape<8, 2>>);
static_assert(std::is_same_v<out_t<AveragePooling1D<4, 3, Same>, tensor<Shape<13, 3>>>, Shape<5, 3>>);
static_assert(std::is_same_v<out_t<AveragePooling2D<2>, tensor<Shape<26, 26, 64>>>, Shape<13, 13, 64>>);
static_assert(std::is_same_v<out_t<AveragePooling2D<2, 2, Same>, tensor<Shape<13, 13, 64>>>, Shape<7, 7, 64>>);
static_assert(std::is_same_v<out_t<AveragePooling2D<Size2{2, 3}>, tensor<Shape<8, 9, 1>>>, Shape<4, 3, 1>>);
static_assert(std::is_same_v<out_t<AveragePooling2D<3, Size2{1, 2}, Same>, tensor<Shape<5, 7, 2>>>, Shape<5, 4, 2>>);
static_assert(params<AveragePooling2D<2>, F> == 0);
static_assert(verdict<AveragePooling2D<4>, tensor<Shape<3, 8, 1>>> == detail::pool_rule::window_too_large);
static_assert(verdict<AveragePooling1D<4>, tensor<Shape<3, 8>>> == detail::pool_rule::window_too_large);
static_assert(verdict<AveragePooling1D<2>, F> == detail::pool_rule::needs_rank2);
static_assert(verdict<AveragePooling2D<2>, tensor<Shape<28, 28>>> == detail::pool_rule::needs_rank3);
static_assert(verdict<AveragePooling2D<0>, F> == detail::pool_rule::zero_size);
static_assert(verdict<AveragePooling1D<2, 0>, tensor<Shape<8, 2>>> == detail::pool_rule::zero_stride);

// Global pooling: (steps, C) or (rows, cols, C) -> (C), no weights; the max ones keep an argmax a channel
static_assert(std::is_same_v<out_t<GlobalAveragePooling1D, tensor<Shape<296, 64>>>, Shape<64>>);
static_assert(std::is_same_v<out_t<GlobalMaxPooling1D, tensor<Shape<5, 3>>>, Shape<3>>);
static_assert(std::is_same_v<out_t<GlobalAveragePooling2D, tensor<Shape<13, 13, 64>>>, Shape<64>>);
static_assert(std::is_same_v<out_t<GlobalMaxPooling2D, F>, Shape<1>>);
static_assert(params<GlobalAveragePooling2D, F> == 0);
static_assert(GlobalMaxPooling2D::scratch_size<tensor<Shape<4, 4, 6>>> == 6);
static_assert(GlobalAveragePooling2D::scratch_size<tensor<Shape<4, 4, 6>>> == 0);
static_assert(verdict<GlobalAveragePooling2D, tensor<Shape<784>>> == detail::global_pool_rule::needs_rank3);
static_assert(verdict<GlobalMaxPooling2D, tensor<Shape<28, 28>>> == detail::global_pool_rule::needs_rank3);
static_assert(verdict<GlobalAveragePooling1D, F> == detail::global_pool_rule::needs_rank2);
static_assert(verdict<GlobalMaxPooling1D, tensor<Shape<8, 2>>> == detail::global_pool_rule::ok);

// LSTM: kernel (in, 4U), recurrent_kernel (U, 4U), bias (4U); (T, F) -> (U), or (T, U) for every step
static_assert(std::is_same_v<out_t<LSTM<64>, tensor<Shape<300, 7>>>, Shape<64>>);
static_assert(std::is_same_v<out_t<LSTM<16, true>, tensor<Shape<20, 3>>>, Shape<20, 16>>);
static_assert(params<LSTM<64>, tensor<Shape<300, 7>>> == 4 * 64 * (7 + 64 + 1));
static_assert(std::is_same_v<LSTM<8>::weights<tensor<Shape<5, 3>>>,
                             weight_list<weight<weight_role::kernel, Shape<3, 32>>,
                                         weight<weight_role::recurrent_kernel, Shape<8, 32>>,
                                         weight<weight_role::bias, Shape<32>, initializers::UnitForgetBias>>>);
static_assert(LSTM<8>::weights<tensor<Shape<5, 3>>>::param_count == 4 * 8 * (3 + 8 + 1));
static_assert(LSTM<4>::scratch_size<tensor<Shape<5, 3>>> == 5 * (3 + 6 * 4) + 2 * 4);
static_assert(verdict<LSTM<4>, tensor<Shape<5, 3>>> == rule<LSTM<4>>::ok);
static_assert(verdict<LSTM<4>, tensor<Shape<300>>> == rule<LSTM<4>>::needs_rank2);
static_assert(verdict<LSTM<4>, F> == rule<LSTM<4>>::needs_rank2);
static_assert(verdict<LSTM<0>, tensor<Shape<5, 3>>> == rule<LSTM<0>>::zero_units);
static_assert(std::is_same_v<LSTM<4>::expects<F>, detail::any_shape_of_rank<2>>);

// GRU (reset_after): kernel (in, 3U), recurrent_kernel (U, 3U), bias (2, 3U)
static_assert(std::is_same_v<out_t<GRU<32>, tensor<Shape<300, 7>>>, Shape<32>>);
static_assert(std::is_same_v<out_t<GRU<5, true>, tensor<Shape<9, 2>>>, Shape<9, 5>>);
static_assert(params<GRU<32>, tensor<Shape<300, 7>>> == 3 * 32 * (7 + 32 + 2));
static_assert(std::is_same_v<GRU<8>::weights<tensor<Shape<5, 3>>>,
                             weight_list<weight<weight_role::kernel, Shape<3, 24>>,
                                         weight<weight_role::recurrent_kernel, Shape<8, 24>, initializers::Orthogonal>,
                                         weight<weight_role::bias, Shape<2, 24>, initializers::Zeros>>>);
static_assert(verdict<GRU<4>, tensor<Shape<784>>> == rule<GRU<4>>::needs_rank2);
static_assert(verdict<GRU<0>, tensor<Shape<5, 3>>> == rule<GRU<0>>::zero_units);
static_assert(verdict<GRU<4, true>, tensor<Shape<1, 1>>> == rule<GRU<4, true>>::ok);

// Shape-keeping layers
static_assert(std::is_same_v<out_t<Flatten, tensor<Shape<13, 13, 64>>>, Shape<10816>>);
static_assert(std::is_same_v<out_t<Flatten, tensor<Shape<5>>>, Shape<5>>);
static_assert(std::is_same_v<out_t<Activation<Relu>, F>, Shape<28, 28, 1>>);
static_assert(std::is_same_v<out_t<Dropout<0.25f>, F>, Shape<28, 28, 1>>);
static_assert(verdict<Dropout<1.0f>, F> == detail::dropout_rule::rate);
static_assert(verdict<Dropout<-0.1f>, F> == detail::dropout_rule::rate);
static_assert(verdict<Dropout<0.0f>, F> == rule<Dropout<0.0f>>::ok);
// A layer that reads floats, given integers: a rule of the model, checked before the layer's own.
static_assert(detail::verdict<Flatten, tensor<Shape<4>, std::int32_t>, 1>() == detail::model_rule::needs_float_input);
static_assert(detail::verdict<Dense<0>, tensor<Shape<4>, std::int32_t>, 1>() == detail::model_rule::needs_float_input);
static_assert(detail::verdict<Embedding<10, 3>, tensor<Shape<4>, std::int32_t>, 0>() == rule<Embedding<10, 3>>::ok);

// LayerNormalization: over the last axis, gamma and beta (last axis,), the shape kept
using LN = LayerNormalization<>;
static_assert(std::is_same_v<out_t<LN, tensor<Shape<7, 12>>>, Shape<7, 12>>);
static_assert(params<LN, tensor<Shape<7, 12>>> == 2 * 12);
static_assert(LN::scratch_size<tensor<Shape<7, 12>>> == 7 * 12 + 7);   // x^ and a row's 1 / std
static_assert(LN::class_name == "LayerNormalization" && LN::base_name == "layer_normalization" && LN::epsilon == 1e-3f);
static_assert(verdict<LN, tensor<Shape<12>>> == rule<LN>::ok);
static_assert(verdict<LayerNormalization<0.0f>, tensor<Shape<12>>> == rule<LN>::epsilon);
static_assert(std::is_same_v<Sequential<Input<Shape<7, 12>>, LN>::layer<0>::weight<1>::shape, Shape<12>>);

// PositionEmbedding: (T, D) with T <= SequenceLength keeps its shape; embeddings (SequenceLength, D)
using PE = PositionEmbedding<12>;
static_assert(std::is_same_v<out_t<PE, tensor<Shape<10, 8>>>, Shape<10, 8>>);
static_assert(params<PE, tensor<Shape<10, 8>>> == 12 * 8);
static_assert(PE::class_name == "PositionEmbedding" && PE::base_name == "position_embedding");
static_assert(verdict<PE, tensor<Shape<12, 8>>> == rule<PE>::ok);
static_assert(verdict<PE, tensor<Shape<13, 8>>> == rule<PE>::too_long);
static_assert(verdict<PE, tensor<Shape<96>>> == rule<PE>::needs_rank2);
static_assert(verdict<PositionEmbedding<0>, tensor<Shape<4, 8>>> == rule<PE>::zero_length);
