// The Transformer layers' models of the one-step checks against Keras (keras_models.py builds the same
// layers in the same order, the graphs' layers named as the nodes): LayerNormalization after a Dense
// and over each timestep of a sequence; MultiHeadAttention as self-attention under a residual and
// LayerNormalization, causal, and across sequences of other lengths and features; a Transformer block
// behind token and position embeddings (PositionEmbedding).
#ifndef TPUDSL_TESTS_KERAS_TRANSFORMER_MODELS_HPP
#define TPUDSL_TESTS_KERAS_TRANSFORMER_MODELS_HPP

#include <tpudsl/functional.hpp>
#include <tpudsl/model.hpp>

namespace transformer_models {

using namespace tpudsl;

using LayerNormDense = Sequential<Input<Shape<8>>, Dense<6, Tanh>, LayerNormalization<>, Dense<3, Softmax>>;

using LayerNormSequence = Sequential<Input<Shape<5, 4>>, Conv1D<6, 3, Relu, Same>, LayerNormalization<0.01f>,
                                     TimeDistributed<Dense<3, Softmax>>>;

// att = MultiHeadAttention(2, key_dim=3, value_dim=4)(x, x); LayerNormalization(Add([att, x])), over 37
// positions: two blocks of query positions (32 and 5)
using AttentionSelf = Functional<Node<"x", Input<Shape<37, 8>>>,
                                 Node<"att", MultiHeadAttention<2, 3, 4>, "x", "x">,
                                 Node<"sum", Add, "att", "x">,
                                 Node<"norm", LayerNormalization<>>,
                                 Node<"pool", GlobalAveragePooling1D>,
                                 Node<"classes", Dense<3, Softmax>>>;

// MultiHeadAttention(3, key_dim=2)(h, h, use_causal_mask=True) over 34 positions
using AttentionCausal = Functional<Node<"x", Input<Shape<34, 4>>>,
                                   Node<"proj", TimeDistributed<Dense<6, Tanh>>>,
                                   Node<"att", MultiHeadAttention<3, 2, 2, attention_options{.use_causal_mask = true}>,
                                        "proj", "proj">,
                                   Node<"flat", Flatten>,
                                   Node<"classes", Dense<3, Softmax>>>;

// MultiHeadAttention(2, key_dim=3, value_dim=2)(q, x, key=k): a query of 3 positions over 7
using AttentionCross = Functional<Node<"x", Input<Shape<7, 5>>>,
                                  Node<"mean", GlobalAveragePooling1D, "x">,
                                  Node<"summary", Dense<6, Tanh>>,
                                  Node<"repeat", RepeatVector<3>>,
                                  Node<"keys", TimeDistributed<Dense<2>>, "x">,
                                  Node<"att", MultiHeadAttention<2, 3, 2>, "repeat", "x", "keys">,
                                  Node<"flat", Flatten>,
                                  Node<"classes", Dense<3, Softmax>>>;

// keras.io's Transformer text classifier in small: token and position embeddings, self-attention and a
// feed-forward part, each under a residual and LayerNormalization(epsilon=1e-6).
using TransformerBlock = Functional<Node<"tokens", Input<Shape<10>, std::int32_t>>,
                                    Node<"token_emb", Embedding<50, 8>>,
                                    Node<"pos_emb", PositionEmbedding<12>, "token_emb">,
                                    Node<"embedded", Add, "token_emb", "pos_emb">,
                                    Node<"att", MultiHeadAttention<2, 8>, "embedded", "embedded">,
                                    Node<"res1", Add, "embedded", "att">,
                                    Node<"norm1", LayerNormalization<1e-6f>>,
                                    Node<"ffn1", TimeDistributed<Dense<16, Relu>>, "norm1">,
                                    Node<"ffn2", TimeDistributed<Dense<8>>>,
                                    Node<"res2", Add, "norm1", "ffn2">,
                                    Node<"norm2", LayerNormalization<1e-6f>>,
                                    Node<"pool", GlobalAveragePooling1D>,
                                    Node<"classes", Dense<3, Softmax>>>;

// Attention()([q, x]): Luong's dot-product attention of a projected query over the sequence.
using AttentionLuong = Functional<Node<"x", Input<Shape<5, 4>>>,
                                  Node<"q", TimeDistributed<Dense<4, Tanh>>, "x">,
                                  Node<"att", Attention<>, "q", "x">,
                                  Node<"flat", Flatten>,
                                  Node<"classes", Dense<3, Softmax>>>;

// AdditiveAttention()([q, x, k], use_causal_mask=True): Bahdanau's, its scale learned.
using AttentionBahdanau = Functional<Node<"x", Input<Shape<5, 4>>>,
                                     Node<"q", TimeDistributed<Dense<3, Tanh>>, "x">,
                                     Node<"k", TimeDistributed<Dense<3>>, "x">,
                                     Node<"att", AdditiveAttention<true, attention_options{.use_causal_mask = true}>, "q", "x",
                                          "k">,
                                     Node<"flat", Flatten>,
                                     Node<"classes", Dense<3, Softmax>>>;

static_assert(LayerNormDense::param_count == 87);
static_assert(AttentionLuong::param_count == 83 && AttentionBahdanau::param_count == 96);
static_assert(TransformerBlock::param_count == 1403);
static_assert(AttentionSelf::param_count == 295);
static_assert(AttentionCausal::param_count == 813);
static_assert(AttentionCross::param_count == 219);
static_assert(LayerNormSequence::param_count == 111);

} // namespace transformer_models

#endif // !TPUDSL_TESTS_KERAS_TRANSFORMER_MODELS_HPP
