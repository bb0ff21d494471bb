/// @file keras.io's "Text classification with Transformer" on the Reuters newswires: token and position
/// embeddings, one Transformer block (self-attention of 2 heads and a feed-forward part of 32 units,
/// each with dropout under a residual and LayerNormalization(epsilon=1e-6)), GlobalAveragePooling1D,
/// Dropout, Dense(20, relu), Dropout, Dense(46, softmax). The block is keras.io's TransformerBlock
/// layer written as nodes; the positions are keras-hub's PositionEmbedding (keras.io's own
/// TokenAndPositionEmbedding holds an Embedding of the positions: the same weights, another
/// initializer).
#ifndef TPUDSL_EXAMPLES_REUTERS_TRANSFORMER_MODEL_HPP
#define TPUDSL_EXAMPLES_REUTERS_TRANSFORMER_MODEL_HPP

#include <tpudsl/functional.hpp>

#include <cstddef>
#include <cstdint>

namespace seeds {

// [reuters_transformer_model]
using namespace tpudsl;

// keras.io's TransformerBlock(embed_dim, num_heads, ff_dim, rate=0.1) called on the node From.
template <name_literal Name, name_literal From, std::size_t EmbedDim, std::size_t Heads, std::size_t FeedForward>
using TransformerBlock = Block<
    Node<Name + "_att", MultiHeadAttention<Heads, EmbedDim>, From, From>,   // key_dim=embed_dim
    Node<Name + "_dropout1", Dropout<0.1f>>,
    Node<Name + "_add1", Add, From, Name + "_dropout1">,
    Node<Name + "_norm1", LayerNormalization<1e-6f>>,
    Node<Name + "_ffn1", TimeDistributed<Dense<FeedForward, Relu>>>,
    Node<Name + "_ffn2", TimeDistributed<Dense<EmbedDim>>>,
    Node<Name + "_dropout2", Dropout<0.1f>>,
    Node<Name + "_add2", Add, Name + "_norm1", Name + "_dropout2">,
    Node<Name, LayerNormalization<1e-6f>>>;

// The first 200 token ids of a newswire, its 46 topics; embed_dim 32, 2 heads, ff_dim 32.
struct ReutersTransformer : Functional<
    Node<"tokens", Input<Shape<200>, std::int32_t>>,
    Node<"token_emb", Embedding<30982, 32>>,                   // (200, 32)
    Node<"pos_emb", PositionEmbedding<200>, "token_emb">,      // (200, 32): one vector per position
    Node<"embedded", Add, "token_emb", "pos_emb">,
    TransformerBlock<"transformer", "embedded", 32, 2, 32>,     // (200, 32)
    Node<"pool", GlobalAveragePooling1D, "transformer">,       // (32)
    Node<"dropout1", Dropout<0.1f>>,
    Node<"hidden", Dense<20, Relu>>,
    Node<"dropout2", Dropout<0.1f>>,
    Node<"topics", Dense<46, Softmax>>> {};

static_assert(ReutersTransformer::param_count ==
              30'982 * 32 + 200 * 32                     // token and position embeddings
                  + 3 * (32 * 2 * 32 + 2 * 32) + 2 * 32 * 32 + 32   // attention: query, key, value, output
                  + 2 * 2 * 32                           // two LayerNormalizations
                  + (32 * 32 + 32) * 2                   // feed-forward
                  + 32 * 20 + 20 + 20 * 46 + 46);
// [reuters_transformer_model]

} // namespace seeds

#endif
