"""The models of tpudsl's checks against Keras, built with Keras' public API only (keras.Input, keras.layers,
keras.Sequential, keras.Model), so that Keras 3 (keras_side.py) and tf.keras 2.x (tf_keras_summaries.py)
build the same ones: each seed model, one model per layer the seeds lack, and the functional models, their
layers in tpudsl's order (Keras' auto-names are then the ones tpudsl prints) or named as tpudsl's nodes.
"""
import keras
from keras import layers


def fashion_mnist_cnn():
    return keras.Sequential([
        keras.Input((28, 28, 1)),
        layers.Conv2D(64, 3),
        layers.MaxPooling2D(2),
        layers.Activation("relu"),
        layers.Flatten(),
        layers.Dense(10),
        layers.Activation("softmax"),
    ])


def mnist_mlp():
    return keras.Sequential([
        keras.Input((784,)),
        layers.Dense(512, activation="relu"),
        layers.Dropout(0.2),
        layers.Dense(512, activation="relu"),
        layers.Dropout(0.2),
        layers.Dense(10, activation="softmax"),
    ])


def cifar10_cnn():
    return keras.Sequential([
        keras.Input((32, 32, 3)),
        layers.Conv2D(32, 3, padding="same", activation="relu"),
        layers.Conv2D(32, 3, activation="relu"),
        layers.MaxPooling2D(2),
        layers.Dropout(0.25),
        layers.Conv2D(64, 3, padding="same", activation="relu"),
        layers.Conv2D(64, 3, activation="relu"),
        layers.MaxPooling2D(2),
        layers.Dropout(0.25),
        layers.Flatten(),
        layers.Dense(512, activation="relu"),
        layers.Dropout(0.5),
        layers.Dense(10, activation="softmax"),
    ])


def reuters_conv1d():
    return keras.Sequential([
        keras.Input((300,), dtype="int32"),
        layers.Embedding(30982, 7),
        layers.Conv1D(64, 5, activation="relu"),
        layers.MaxPooling1D(2),
        layers.Conv1D(32, 3, activation="relu"),
        layers.MaxPooling1D(2),
        layers.Flatten(),
        layers.Dense(46, activation="softmax"),
    ])


def average_pool2d():
    """Valid windows that tile, and Same ones whose padding is not counted in their mean."""
    return keras.Sequential([
        keras.Input((9, 9, 2)),
        layers.Conv2D(4, 3, activation="tanh"),
        layers.AveragePooling2D(3, strides=2, padding="same"),
        layers.AveragePooling2D(2),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])


def average_pool1d():
    return keras.Sequential([
        keras.Input((12, 3)),
        layers.Conv1D(4, 3, activation="tanh"),
        layers.AveragePooling1D(3, strides=2, padding="same"),
        layers.AveragePooling1D(2),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])


def global_pooling(rank, pooling):
    def model():
        return keras.Sequential([
            keras.Input((6, 6, 2) if rank == 2 else (10, 3)),
            (layers.Conv2D if rank == 2 else layers.Conv1D)(4, 3, activation="tanh"),
            pooling(),
            layers.Dense(3, activation="softmax"),
        ])
    return model


global_average2d = global_pooling(2, layers.GlobalAveragePooling2D)
global_max2d = global_pooling(2, layers.GlobalMaxPooling2D)
global_average1d = global_pooling(1, layers.GlobalAveragePooling1D)
global_max1d = global_pooling(1, layers.GlobalMaxPooling1D)

def batch_norm_conv():
    """After a convolution, before its activation: statistics over samples and positions."""
    return keras.Sequential([
        keras.Input((6, 6, 2)),
        layers.Conv2D(4, 3),
        layers.BatchNormalization(),
        layers.Activation("relu"),
        layers.GlobalAveragePooling2D(),
        layers.Dense(3, activation="softmax"),
    ])


def batch_norm_dense():
    return keras.Sequential([
        keras.Input((8,)),
        layers.Dense(6, activation="tanh"),
        layers.BatchNormalization(momentum=0.8, epsilon=0.01),
        layers.Dense(3, activation="softmax"),
    ])


def layer_norm_dense():
    """After a Dense: each sample's six features normalised on their own."""
    return keras.Sequential([
        keras.Input((8,)),
        layers.Dense(6, activation="tanh"),
        layers.LayerNormalization(),
        layers.Dense(3, activation="softmax"),
    ])


def layer_norm_sequence():
    """Over the features of each timestep, epsilon of its own, a class per timestep."""
    return keras.Sequential([
        keras.Input((5, 4)),
        layers.Conv1D(6, 3, padding="same", activation="relu"),
        layers.LayerNormalization(epsilon=0.01),
        layers.TimeDistributed(layers.Dense(3, activation="softmax")),
    ])


def attention_self():
    """Self-attention with a residual and LayerNormalization (a Transformer block's first half), over 37
    positions: two blocks of query positions (32 and 5)."""
    inputs = keras.Input((37, 8), name="x")
    # (Keras 3 on JAX computes through jax.nn.dot_product_attention, which refuses a value_dim other than
    # key_dim, unless the scores are asked for: its own einsums then run, and the scores go unused)
    att, _ = layers.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=4, name="att")(
        inputs, inputs, return_attention_scores=True)
    x = layers.LayerNormalization(name="norm")(layers.Add(name="sum")([att, inputs]))
    x = layers.GlobalAveragePooling1D(name="pool")(x)
    return keras.Model(inputs, layers.Dense(3, activation="softmax", name="classes")(x))


def attention_causal():
    """Causal self-attention over a projected sequence of 34 positions (two blocks of query positions),
    one input read as query and value."""
    inputs = keras.Input((34, 4), name="x")
    h = layers.TimeDistributed(layers.Dense(6, activation="tanh"), name="proj")(inputs)
    att = layers.MultiHeadAttention(num_heads=3, key_dim=2, name="att")(h, h, use_causal_mask=True)
    return keras.Model(inputs, layers.Dense(3, activation="softmax", name="classes")(layers.Flatten(name="flat")(att)))


def attention_cross():
    """Cross-attention: a query of 3 positions (from the sequence's mean) over a value of 7, a key of
    its own features."""
    inputs = keras.Input((7, 5), name="x")
    q = layers.RepeatVector(3, name="repeat")(layers.Dense(6, activation="tanh", name="summary")(
        layers.GlobalAveragePooling1D(name="mean")(inputs)))
    k = layers.TimeDistributed(layers.Dense(2), name="keys")(inputs)
    att, _ = layers.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=2, name="att")(
        q, inputs, key=k, return_attention_scores=True)
    return keras.Model(inputs, layers.Dense(3, activation="softmax", name="classes")(layers.Flatten(name="flat")(att)))


def attention_luong():
    """Luong's attention: a projected query over the sequence, Attention() on [query, value]."""
    inputs = keras.Input((5, 4), name="x")
    q = layers.TimeDistributed(layers.Dense(4, activation="tanh"), name="q")(inputs)
    att = layers.Attention(name="att")([q, inputs])
    return keras.Model(inputs, layers.Dense(3, activation="softmax", name="classes")(layers.Flatten(name="flat")(att)))


def attention_bahdanau():
    """Bahdanau's: AdditiveAttention (its scale learned) on [query, value, key], causal."""
    inputs = keras.Input((5, 4), name="x")
    q = layers.TimeDistributed(layers.Dense(3, activation="tanh"), name="q")(inputs)
    k = layers.TimeDistributed(layers.Dense(3), name="k")(inputs)
    att = layers.AdditiveAttention(name="att")([q, inputs, k], use_causal_mask=True)
    return keras.Model(inputs, layers.Dense(3, activation="softmax", name="classes")(layers.Flatten(name="flat")(att)))


@keras.saving.register_keras_serializable(package="keras_hub")
class PositionEmbedding(layers.Layer):
    """keras-hub's PositionEmbedding as it computes (keras_hub.layers.PositionEmbedding, without the
    package): the first `timesteps` rows of a learned (sequence_length, features) table, broadcast to
    the input's shape; the weight is named "embeddings"."""

    def __init__(self, sequence_length, initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        self.sequence_length = int(sequence_length)
        self.initializer = keras.initializers.get(initializer)

    def get_config(self):
        return {**super().get_config(), "sequence_length": self.sequence_length,
                "initializer": keras.initializers.serialize(self.initializer)}

    def build(self, inputs_shape):
        self.position_embeddings = self.add_weight(name="embeddings", shape=[self.sequence_length, inputs_shape[-1]],
                                                   initializer=self.initializer, trainable=True)

    def call(self, inputs, start_index=0):
        shape = keras.ops.shape(inputs)
        table = keras.ops.convert_to_tensor(self.position_embeddings)
        table = keras.ops.slice(table, (start_index, 0), (shape[-2], shape[-1]))
        return keras.ops.broadcast_to(table, shape)

    def compute_output_shape(self, input_shape):
        return input_shape


def transformer_block():
    """keras.io's Transformer text classifier in small: token and position embeddings added, a block of
    self-attention and a feed-forward part, each under a residual and LayerNormalization."""
    tokens = keras.Input((10,), dtype="int32", name="tokens")
    x = layers.Embedding(50, 8, name="token_emb")(tokens)
    x = layers.Add(name="embedded")([x, PositionEmbedding(12, name="pos_emb")(x)])
    att = layers.MultiHeadAttention(num_heads=2, key_dim=8, name="att")(x, x)
    x = layers.LayerNormalization(epsilon=1e-6, name="norm1")(layers.Add(name="res1")([x, att]))
    ffn = layers.TimeDistributed(layers.Dense(16, activation="relu"), name="ffn1")(x)
    ffn = layers.TimeDistributed(layers.Dense(8), name="ffn2")(ffn)
    x = layers.LayerNormalization(epsilon=1e-6, name="norm2")(layers.Add(name="res2")([x, ffn]))
    x = layers.GlobalAveragePooling1D(name="pool")(x)
    return keras.Model(tokens, layers.Dense(3, activation="softmax", name="classes")(x))


def time_distributed_dense():
    """A per-timestep classifier: labels (samples, timesteps), the loss their mean."""
    return keras.Sequential([
        keras.Input((10, 3)),
        layers.Conv1D(4, 3, padding="same", activation="tanh"),
        layers.TimeDistributed(layers.Dense(3, activation="softmax")),
    ])


def lstm():
    return keras.Sequential([keras.Input((8, 3)), layers.LSTM(6), layers.Dense(3, activation="softmax")])


def lstm_sequences():
    return keras.Sequential([
        keras.Input((7, 3)),
        layers.LSTM(5, return_sequences=True),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])


def gru():
    return keras.Sequential([keras.Input((8, 3)), layers.GRU(6), layers.Dense(3, activation="softmax")])


def gru_sequences():
    return keras.Sequential([
        keras.Input((7, 3)),
        layers.GRU(5, return_sequences=True),
        layers.GlobalAveragePooling1D(),
        layers.Dense(3, activation="softmax"),
    ])


def recurrent_tagger():
    """Every state into a per-timestep classifier: labels (samples, timesteps)."""
    return keras.Sequential([
        keras.Input((7, 3)),
        layers.GRU(5, return_sequences=True),
        layers.TimeDistributed(layers.Dense(3, activation="softmax")),
    ])


def recurrent_stacked():
    return keras.Sequential([
        keras.Input((6, 4)),
        layers.LSTM(8, return_sequences=True),
        layers.GRU(5),
        layers.Dense(3, activation="softmax"),
    ])


def resnet20():
    """ResNet-20 v1 as examples/cifar10_resnet/model.hpp declares it, its layers named as the nodes."""
    def conv(x, filters, name, kernel=3, strides=1):
        return layers.Conv2D(filters, kernel, strides=strides, padding="same", name=name)(x)

    def block(x, name, filters, strides):
        y = conv(x, filters, name + "_conv1", strides=strides)
        y = layers.BatchNormalization(name=name + "_bn1")(y)
        y = layers.Activation("relu", name=name + "_relu1")(y)
        y = conv(y, filters, name + "_conv2")
        y = layers.BatchNormalization(name=name + "_bn2")(y)
        if strides != 1:
            x = conv(x, filters, name + "_shortcut", kernel=1, strides=strides)
        y = layers.Add(name=name + "_add")([x, y])
        return layers.Activation("relu", name=name)(y)

    inputs = keras.Input((32, 32, 3), name="image")
    x = conv(inputs, 16, "stem_conv")
    x = layers.BatchNormalization(name="stem_bn")(x)
    x = layers.Activation("relu", name="stem")(x)
    for stage, filters in enumerate((16, 32, 64)):
        for b in range(3):
            x = block(x, f"stage{stage + 1}_block{b + 1}", filters, 2 if stage > 0 and b == 0 else 1)
    x = layers.GlobalAveragePooling2D(name="pool")(x)
    return keras.Model(inputs, layers.Dense(10, activation="softmax", name="classes")(x))


def functional_shared():
    """One convolution called three times (on the input, its output, and that pooled), Concatenate, Add."""
    inputs = keras.Input((6, 3), name="x")
    conv = layers.Conv1D(3, 3, padding="same", activation="tanh", name="conv")
    again = conv(conv(inputs))
    pooled = conv(layers.AveragePooling1D(2, name="pool")(again))
    flat_b = layers.Flatten(name="flat_b")(again)
    flat_c = layers.Flatten(name="flat_c")(pooled)
    hidden = layers.Dense(4, activation="tanh", name="hidden")(layers.Concatenate(name="cat")([flat_b, flat_c]))
    total = layers.Add(name="sum")([hidden, layers.Dense(4, name="skip")(flat_c)])
    return keras.Model(inputs, layers.Dense(3, activation="softmax", name="classes")(total))


def functional_dot():
    """Dot on the last axes (scores of queries against keys) and on the first, concatenated."""
    inputs = keras.Input((5, 3), name="x")
    q = layers.Conv1D(4, 1, activation="tanh", name="q")(inputs)
    k = layers.Conv1D(4, 1, name="k")(inputs)
    scores = layers.Flatten(name="fs")(layers.Dot(axes=(2, 2), name="scores")([q, k]))
    gram = layers.Flatten(name="fg")(layers.Dot(axes=(1, 1), name="gram")([q, inputs]))
    return keras.Model(inputs, layers.Dense(3, activation="softmax", name="classes")(
        layers.Concatenate(name="cat")([scores, gram])))


def text_and_metadata():
    """Two inputs (token ids and floats), two outputs (a softmax topic, a regression score)."""
    words = keras.Input((12,), dtype="int32", name="words")
    numbers = keras.Input((5,), name="numbers")
    x = layers.GlobalAveragePooling1D(name="average")(layers.Embedding(100, 8, name="embedding")(words))
    x = layers.Dense(16, activation="relu", name="hidden")(layers.Concatenate(name="joined")([x, numbers]))
    topic = layers.Dense(3, activation="softmax", name="topic")(x)
    score = layers.Dense(1, name="score")(x)
    return keras.Model([words, numbers], [topic, score])


# A model of several outputs is compiled with a loss per output: sparse categorical crossentropy for a
# softmax output, mean squared error for the others, weighted by LOSS_WEIGHTS.
LOSS_WEIGHTS = (1.0, 0.5)


MODELS = {f.__name__: f for f in (fashion_mnist_cnn, mnist_mlp, cifar10_cnn, reuters_conv1d)}
PARAMS = {"fashion_mnist_cnn": 108_810, "mnist_mlp": 669_706, "cifar10_cnn": 1_250_858,
          "reuters_conv1d": 332_856}
# The layer models: checked by one training step (step), each against its own type in keras_interop.cpp.
LAYER_MODELS = {"average_pool2d": average_pool2d, "average_pool1d": average_pool1d,
                "global_average2d": global_average2d, "global_max2d": global_max2d,
                "global_average1d": global_average1d, "global_max1d": global_max1d,
                "batch_norm_conv": batch_norm_conv, "batch_norm_dense": batch_norm_dense}
LAYER_MODELS["time_distributed_dense"] = time_distributed_dense
LAYER_MODELS.update({"layer_norm_dense": layer_norm_dense, "layer_norm_sequence": layer_norm_sequence,
                     "attention_self": attention_self, "attention_causal": attention_causal,
                     "attention_cross": attention_cross, "transformer_block": transformer_block,
                     "attention_luong": attention_luong, "attention_bahdanau": attention_bahdanau})
LAYER_MODELS.update({f.__name__: f for f in (lstm, lstm_sequences, gru, gru_sequences, recurrent_tagger,
                                                recurrent_stacked, resnet20, functional_shared, functional_dot,
                                                text_and_metadata)})
MODELS.update(LAYER_MODELS)
PARAMS["time_distributed_dense"] = 55
PARAMS.update({"layer_norm_dense": 87, "layer_norm_sequence": 111, "attention_self": 295, "attention_causal": 813,
               "attention_cross": 219, "transformer_block": 1403, "attention_luong": 83, "attention_bahdanau": 96})
PARAMS.update({"average_pool2d": 127, "average_pool1d": 67, "global_average2d": 91, "global_max2d": 91,
               "global_average1d": 55, "global_max1d": 55, "batch_norm_conv": 107, "batch_norm_dense": 99})
PARAMS.update({"lstm": 261, "lstm_sequences": 288, "gru": 219, "gru_sequences": 168, "recurrent_tagger": 168,
               "recurrent_stacked": 659, "resnet20": 274_442, "functional_shared": 197,
               "functional_dot": 146, "text_and_metadata": 1092})
