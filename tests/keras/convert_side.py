"""tools/keras_to_tpudsl.py against real Keras (Keras 3, its NumPy backend):

    convert_side.py TOOL DIR

builds models in Keras, saves each (`.keras`; the Fashion-MNIST seed also as a whole-model `.h5`),
runs TOOL on each file, and checks that the parameter count and output shape(s) the tool wrote into
the header are Keras' own (model.count_params(), model.output_shape). Writes the headers to
DIR/generated/<model>.hpp (namespace `generated`) for converted_models.cpp to compile, and for the
models that are not seeds, DIR/<model>.layers.txt: one line per Keras layer, its output shape and
parameter count as tpudsl's summary prints them, then the shapes of its weights in Keras' order
(for the functional models that are graphs, each line starts with the layer's name and the
InputLayers have none). Also checks that docs/interop.md shows the declarations the tool writes for
the Fashion-MNIST seed and for the model of two inputs and two outputs. Exit status 0 when
everything agrees.
"""
import os
import re
import shutil
import subprocess
import sys

# The architecture does not depend on the backend; Keras' NumPy backend builds the models' weights
# in milliseconds where JAX compiles each initializer (seconds per model).
os.environ["KERAS_BACKEND"] = "numpy"

import keras  # noqa: E402
from keras import layers  # noqa: E402

sys.dont_write_bytecode = True   # no __pycache__ left in the source tree by the import below
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keras_models  # noqa: E402


def mnist_mlp_functional():
    """The MNIST seed as a functional model: one chain, so the tool takes it."""
    x = inputs = keras.Input((784,))
    for layer in keras_models.mnist_mlp().layers:
        x = layer.__class__.from_config(layer.get_config())(x)
    return keras.Model(inputs, x)


def mixed_image():
    """Options the seeds do not use: strides, rectangular windows, pooling strides and padding."""
    return keras.Sequential([
        keras.Input((17, 23, 2)),
        layers.Conv2D(6, (3, 5), strides=2, padding="same", activation="tanh"),
        layers.MaxPooling2D((2, 3), strides=1, padding="same"),
        layers.Conv2D(4, 3, strides=(1, 2), activation="sigmoid"),
        layers.MaxPooling2D(3, strides=2),
        layers.Dropout(0.125),
        layers.Flatten(),
        layers.Dense(7),
        layers.Activation("tanh"),
        layers.Dense(3, activation="sigmoid"),
    ])


def mixed_text():
    """Token ids declared as floats (Keras casts them), Conv1D strides and padding, pool strides."""
    return keras.Sequential([
        keras.Input((40,)),
        layers.Embedding(50, 4),
        layers.Conv1D(5, 4, strides=3, padding="same"),
        layers.Activation("relu"),
        layers.MaxPooling1D(3, strides=2, padding="same"),
        layers.Conv1D(3, 2),
        layers.Flatten(),
        layers.Dense(2, activation="softmax"),
    ])


def mixed_recurrent():
    """Token ids into an LSTM giving every state, a GRU giving its last, in .keras and .h5 (tf.keras names)."""
    return keras.Sequential([
        keras.Input((20,), dtype="int32"),
        layers.Embedding(30, 5),
        layers.LSTM(6, return_sequences=True),
        layers.GRU(4),
        layers.Dense(3, activation="softmax"),
    ])


def two_texts():
    """Two texts (a question and an answer, int32 ids), an Embedding each; the question's Embedding also
    reads a title of other length (Keras' layer reuse: one table, the title's call Shared), all merged
    into one Dense output."""
    question = keras.Input((10,), dtype="int32", name="question")
    answer = keras.Input((7,), dtype="int32", name="answer")
    title = keras.Input((4,), dtype="int32", name="title")
    words = layers.Embedding(60, 6, name="words")
    q = layers.GlobalAveragePooling1D(name="q_average")(words(question))
    a = layers.Flatten(name="a_flat")(layers.Embedding(40, 3, name="a_words")(answer))
    t = layers.GlobalMaxPooling1D(name="t_max")(words(title))
    x = layers.Dense(8, activation="relu", name="hidden")(layers.Concatenate(name="joined")([q, a, t]))
    return keras.Model([question, answer, title], layers.Dense(2, activation="softmax", name="match")(x))


# (builder, C++ name, file suffixes, whether tpudsl has it as a seed)
MODELS = {
    "fashion_mnist_cnn": (keras_models.fashion_mnist_cnn, "FashionCnn", (".keras", ".h5")),
    "mnist_mlp": (keras_models.mnist_mlp, "MnistMlp", (".keras",)),
    "cifar10_cnn": (keras_models.cifar10_cnn, "Cifar10Cnn", (".keras",)),
    "reuters_conv1d": (keras_models.reuters_conv1d, "Reuters", (".keras",)),
    "mnist_mlp_functional": (mnist_mlp_functional, "MnistMlpFunctional", (".keras",)),
    "mixed_image": (mixed_image, "MixedImage", (".keras",)),
    "mixed_text": (mixed_text, "MixedText", (".keras",)),
    "mixed_recurrent": (mixed_recurrent, "MixedRecurrent", (".keras", ".h5")),
    # The layer models of the one-step checks: the tool's type must be pooling_models.hpp's.
    "average_pool2d": (keras_models.average_pool2d, "AveragePool2D", (".keras",)),
    "average_pool1d": (keras_models.average_pool1d, "AveragePool1D", (".keras",)),
    "global_average2d": (keras_models.global_average2d, "GlobalAverage2D", (".keras",)),
    "global_max2d": (keras_models.global_max2d, "GlobalMax2D", (".keras",)),
    "global_average1d": (keras_models.global_average1d, "GlobalAverage1D", (".keras",)),
    "global_max1d": (keras_models.global_max1d, "GlobalMax1D", (".keras",)),
    # ... and of batch_norm_models.hpp.
    "batch_norm_conv": (keras_models.batch_norm_conv, "BatchNormConv", (".keras",)),
    "batch_norm_dense": (keras_models.batch_norm_dense, "BatchNormDense", (".keras",)),
    # ... and time_distributed_models.hpp's.
    "time_distributed_dense": (keras_models.time_distributed_dense, "TimeDistributedDense", (".keras",)),
    # ... and transformer_models.hpp's.
    "layer_norm_dense": (keras_models.layer_norm_dense, "LayerNormDense", (".keras", ".h5")),
    "layer_norm_sequence": (keras_models.layer_norm_sequence, "LayerNormSequence", (".keras",)),
    "attention_self": (keras_models.attention_self, "AttentionSelf", (".keras",)),
    "attention_causal": (keras_models.attention_causal, "AttentionCausal", (".keras",)),
    "attention_cross": (keras_models.attention_cross, "AttentionCross", (".keras",)),
    "transformer_block": (keras_models.transformer_block, "TransformerBlock", (".keras",)),
    "attention_luong": (keras_models.attention_luong, "AttentionLuong", (".keras",)),
    "attention_bahdanau": (keras_models.attention_bahdanau, "AttentionBahdanau", (".keras",)),
    # ... and recurrent_models.hpp's.
    "lstm": (keras_models.lstm, "Lstm", (".keras",)),
    "lstm_sequences": (keras_models.lstm_sequences, "LstmSequences", (".keras",)),
    "gru": (keras_models.gru, "Gru", (".keras",)),
    "gru_sequences": (keras_models.gru_sequences, "GruSequences", (".keras",)),
    "recurrent_tagger": (keras_models.recurrent_tagger, "Tagger", (".keras",)),
    "recurrent_stacked": (keras_models.recurrent_stacked, "Stacked", (".keras",)),
    # Graphs (Functional): ResNet-20 (examples/cifar10_resnet), the models of two inputs and two outputs
    # (examples/text_and_metadata) and functional_models.hpp's (a layer called three times, Dot).
    "resnet20": (keras_models.resnet20, "ResNet20", (".keras",)),
    "text_and_metadata": (keras_models.text_and_metadata, "TextAndMetadata", (".keras", ".h5")),
    "functional_shared": (keras_models.functional_shared, "SharedConv", (".keras",)),
    "functional_dot": (keras_models.functional_dot, "DotScores", (".keras",)),
    # Two texts: an Embedding each, one of them shared with a third input of token ids (this file's).
    "two_texts": (two_texts, "TwoTexts", (".keras", ".h5")),
}
GRAPHS = {"resnet20", "text_and_metadata", "functional_shared", "functional_dot", "two_texts", "attention_self",
          "attention_causal", "attention_cross", "transformer_block", "attention_luong", "attention_bahdanau"}


def keras_shape(shape):
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ")"


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    tool, out = argv[1], argv[2]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "generated"))
    failures = 0
    for name, (build, cpp_name, suffixes) in MODELS.items():
        model = build()
        if name.startswith("mixed") or name in GRAPHS:
            with open(os.path.join(out, name + ".layers.txt"), "w") as f:
                for layer in model.layers:
                    if name in GRAPHS and isinstance(layer, keras.layers.InputLayer):
                        continue
                    weights = "".join(f" {tuple(w.shape)}" for w in layer.weights)
                    named = f"{layer.name} " if name in GRAPHS else ""   # a layer called again: its first call
                    # (a MultiHeadAttention asked for its scores gives them second: the graphs read the first)
                    tensor = layer.output[0] if isinstance(layer.output, (list, tuple)) else layer.output
                    f.write(f"{named}{keras_shape(tensor.shape)} {layer.count_params()}{weights}\n")
        for suffix in suffixes:
            path = os.path.join(out, name + suffix)
            model.save(path)
            stem = name + ("_h5" if suffix == ".h5" else "")
            header = os.path.join(out, "generated", stem + ".hpp")
            run = subprocess.run([sys.executable, tool, path, "--name", cpp_name + ("H5" if suffix == ".h5" else ""),
                                  "--namespace", "generated", "-o", header], capture_output=True, text=True)
            if run.returncode != 0:
                print(f"{name}{suffix}: the tool failed ({run.returncode}): {run.stderr.strip()}")
                failures += 1
                continue
            text = open(header).read()
            count = re.search(r"::param_count == ([0-9']+)\);", text)
            # One output: ::output_shape; several: ::output_shape_at<K>, each.
            shapes = re.findall(r"::output_shape(?:_at<[0-9]+>)?, Shape<([0-9, ]+)>>", text)
            got_count = int(count.group(1).replace("'", "")) if count else None
            got_shapes = [tuple(int(d) for d in shape.split(",")) for shape in shapes]
            keras_shapes = [tuple(t.shape[1:]) for t in model.outputs]
            ok = got_count == model.count_params() and got_shapes == keras_shapes
            print(f"{name}{suffix}: tool {got_count} params, output {', '.join(map(str, got_shapes))}; Keras "
                  f"{model.count_params()}, {', '.join(map(str, keras_shapes))}" + (" ok" if ok else " MISMATCH"))
            failures += not ok
    generated = os.path.join(out, "generated")
    failures += not docs_match(os.path.join(generated, "fashion_mnist_cnn.hpp"), "fashion_mnist_cnn", "FashionCnn")
    failures += not docs_match(os.path.join(generated, "text_and_metadata.hpp"), "text_and_metadata", "TextAndMetadata")
    return 1 if failures else 0


def docs_match(header, model, cpp_name):
    """docs/interop.md shows the declaration the tool writes for `model`, through its static_asserts."""
    docs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "interop.md")
    text = open(docs).read()
    block = re.search(rf"<!-- keras_to_tpudsl output: {model} -->\n```text\n(.*?)```", text, re.S)
    lines = open(header).read().splitlines(keepends=True) if os.path.exists(header) else []
    start = next((i for i, line in enumerate(lines) if line.startswith(f"using {cpp_name} =")), len(lines))
    end = next((i for i in range(len(lines) - 1, start - 1, -1) if "::output_shape" in lines[i]), len(lines) - 1)
    ok = block is not None and block.group(1) == "".join(lines[start:end + 1])
    print(f"docs/interop.md: the tool's output for {model}" + (" ok" if ok else " DIFFERS"))
    return ok


if __name__ == "__main__":
    sys.exit(main(sys.argv))
