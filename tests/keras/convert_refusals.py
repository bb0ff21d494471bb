"""tools/keras_to_tpudsl.py on hand-written Keras configs (tests/keras/configs/), without Keras:

    convert_refusals.py TOOL CONFIGS_DIR

tf-keras 2's spellings are read (batch_input_shape, an InputLayer or none, input_length, string
initializers, a functional chain with tf-keras 2's inbound_nodes); functional models that are not one
chain (branches, a layer called again, several inputs and outputs), in Keras 3's and tf-keras 2's
spellings, are written as a Functional; what tpudsl cannot express is refused with exit status 1, a
message on stderr naming the layer and the option, nothing on stdout, and an existing -o file left
as it was. Exit status 0 when every case behaves.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

ACCEPTED = {
    "tf2_reuters.json": ["Input<Shape<300>, std::int32_t>,   // (300)", "Embedding<30982, 7>,",
                         "Conv1D<64, 5, Relu>,", "MaxPool1D<2>,", "Dense<46, Softmax>>;",
                         "static_assert(Reuters::param_count == 332'856);"],
    "tf2_mlp_no_input_layer.json": ["Input<Shape<784>>,", "Dense<512, Relu>,", "Dropout<0.2f>,",
                                    "static_assert(Reuters::param_count == 669'706);"],
    "tf2_functional_chain.json": ["Conv2D<64, 3>,                     // (26, 26, 64)", "MaxPool2D<2>,",
                                  "Activation<Relu>,", "Flatten,                           // (10816)",
                                  "static_assert(Reuters::param_count == 108'810);",
                                  "static_assert(std::is_same_v<Reuters::output_shape, Shape<10>>);"],
    "keras3_lstm.json": ["Embedding<1000, 16>,", "LSTM<32>,                          // (32)",
                         "static_assert(Reuters::param_count == 22'305);"],
    # Two Dense on one input, added: a graph.
    "keras3_branching.json": ["#include <tpudsl/functional.hpp>", "using Reuters = Functional<",
                              'Node<"input_layer", Input<Shape<8>>>,', 'Node<"a", Dense<4>, "input_layer">,',
                              'Node<"b", Dense<4>, "input_layer">,', 'Node<"add", Add, "a", "b">>;',
                              "static_assert(Reuters::param_count == 72);",
                              "static_assert(std::is_same_v<Reuters::output_shape, Shape<4>>);"],
    # Saved by Keras 3.15: two inputs (token ids, floats), a Dense called twice, the reshaping layers, a
    # Dot and two outputs (convert_refusals.two_heads() built in Keras).
    "keras3_graph.json": ['Node<"words", Input<Shape<6>, std::int32_t>>,', 'Node<"shared", Dense<4, Tanh>, "numbers">,',
                          'Node<"shared_1", Shared<"shared">, "mix">,', 'Node<"square", Reshape<6, 2>>,',
                          'Node<"score", Dot<1>, "shared_1", "mix">,', 'Outputs<"topic", "score">>;',
                          "static_assert(Reuters::param_count == 227);"],
}

REFUSED = {
    "tf2_channels_first.json": ["layer 'conv2d' (Conv2D)", "data_format='channels_first'"],
}


def tensor(name, call=0, output=0):
    return {"class_name": "__keras_tensor__", "config": {"shape": None, "dtype": "float32",
                                                         "keras_history": [name, call, output]}}


def graph(layers, inputs, outputs):
    """A Keras 3 functional model's config. `layers`: (class, name, config, calls), each call the list of
    what it reads: a layer's name (its first call's output), a (name, call, output) or, for a merge, a
    list of them; `inputs` and `outputs`: names or (name, call, output)."""
    def ref(x):
        return tensor(*x) if isinstance(x, tuple) else tensor(x)

    def end(x):
        return list(x) if isinstance(x, tuple) else [x, 0, 0]
    entries = []
    for cls, name, config, calls in layers:
        nodes = [{"args": [[ref(x) for x in a] if isinstance(a, list) else ref(a)], "kwargs": {}} for a in calls]
        entries.append({"class_name": cls, "name": name, "config": dict(config, name=name), "inbound_nodes": nodes})
    return {"class_name": "Functional", "config": {"name": "graph", "layers": entries,
                                                    "input_layers": [end(x) for x in inputs],
                                                    "output_layers": [end(x) for x in outputs]}}


def inp(name, *dims, dtype="float32"):
    return ("InputLayer", name, {"batch_shape": [None, *dims], "dtype": dtype}, [])


def dense(name, units, *calls, **options):
    return ("Dense", name, dict({"units": units}, **options), list(calls))


def tf2(config):
    """A Keras 3 graph in tf-keras 2's spelling: inbound_nodes [[[layer, call, output, {}], ...]]."""
    for l in config["config"]["layers"]:
        nodes = []
        for node in l["inbound_nodes"]:
            tensors, stack = [], [node["args"]]
            while stack:
                x = stack.pop()
                if isinstance(x, list):
                    stack.extend(reversed(x))
                else:
                    tensors.append(x["config"]["keras_history"] + [{}])
            nodes.append(tensors)
        l["inbound_nodes"] = nodes
    return config


def two_heads():
    """Two inputs (token ids, floats), a layer called twice, two outputs, Concatenate on axis 1 and the
    reshaping layers."""
    return graph([
        inp("words", 6, dtype="int32"), inp("numbers", 4),
        ("Embedding", "embedding", {"input_dim": 50, "output_dim": 2}, ["words"]),
        ("Flatten", "flat", {}, ["embedding"]),
        dense("shared", 4, "numbers", "mix", activation="tanh"),
        ("Concatenate", "joined", {"axis": 1}, [["flat", "shared"]]),
        dense("mix", 4, "joined"),
        ("RepeatVector", "repeat", {"n": 3}, [("shared", 1, 0)]),
        ("Permute", "swap", {"dims": [2, 1]}, ["repeat"]),
        ("Reshape", "square", {"target_shape": [-1, 2]}, ["swap"]),
        ("Identity", "same", {}, ["square"]),
        ("Flatten", "flat_2", {}, ["same"]),
        dense("topic", 3, "flat_2", activation="softmax"),
        ("Dot", "score", {"axes": 1, "normalize": False}, [[("shared", 1, 0), "mix"]]),
    ], ["words", "numbers"], ["topic", "score"])


def graphs():
    """Graphs, each converted (expected lines) or refused (expected message parts): (label, config,
    'converted' or 'refused', expected)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs", "keras3_branching.json")) as f:
        branching = json.load(f)
    yield "tf-keras 2's graph", tf2(branching), "converted", ['Node<"add", Add, "a", "b">>;']
    yield "two inputs, two outputs, a layer called twice", two_heads(), "converted", [
        "#include <cstdint>", 'Node<"words", Input<Shape<6>, std::int32_t>>,', 'Node<"numbers", Input<Shape<4>>>,',
        'Node<"embedding", Embedding<50, 2>, "words">,', 'Node<"shared", Dense<4, Tanh>, "numbers">,',
        'Node<"joined", Concatenate<1>, "flat", "shared">,', 'Node<"shared_1", Shared<"shared">, "mix">,',
        'Node<"repeat", RepeatVector<3>, "shared_1">,', 'Node<"swap", Permute<2, 1>>,',
        'Node<"square", Reshape<6, 2>>,', 'Node<"same", Identity>,', 'Node<"score", Dot<1>, "shared_1", "mix">,',
        'Outputs<"topic", "score">>;', "static_assert(Reuters::param_count == 227);",
        "static_assert(std::is_same_v<Reuters::output_shape_at<0>, Shape<3>>);",
        "static_assert(std::is_same_v<Reuters::output_shape_at<1>, Shape<1>>);"]
    yield "tf-keras 2's two heads", tf2(two_heads()), "converted", ['Node<"shared_1", Shared<"shared">, "mix">,']
    # The layer's first call reads a layer listed after it, its second the input: the first call still
    # comes first (it declares the layer).
    yield "a layer's first call after its second in Keras' order", graph([
        inp("x", 4), dense("shared", 4, "late", "x"), dense("late", 4, "x"),
        ("Add", "sum", {}, [["shared", ("shared", 1, 0)]])], ["x"], ["sum"]), "converted", [
        'Node<"late", Dense<4>, "x">,', 'Node<"shared", Dense<4>>,', 'Node<"shared_1", Shared<"shared">, "x">,',
        'Node<"sum", Add, "shared", "shared_1">>;']

    def branches(*middle, merge=("Add", {}), shape=(8,)):
        """An input, the layers `middle` (each reading the input), merged by `merge`."""
        names = [m[1] for m in middle]
        return graph([inp("x", *shape), *middle, (merge[0], "merge", merge[1], [names])], ["x"], ["merge"])
    reshaped = [("Reshape", name, {"target_shape": [2, 2, 2]}, ["x"]) for name in ("r", "s")]
    yield "a Dot on rank-3 inputs", branches(*reshaped, merge=("Dot", {"axes": 3})), "refused", [
        "layer 'merge' (Dot)", "rank-3 input 'r' (2, 2, 2)", "rank 1 or 2"]
    yield "a Dot of normalized vectors", branches(
        dense("a", 4, "x"), dense("b", 4, "x"), merge=("Dot", {"axes": -1, "normalize": True})), "refused", [
        "layer 'merge' (Dot)", "normalize=true"]
    yield "a Dot on extents that differ", branches(
        dense("a", 4, "x"), dense("b", 3, "x"), merge=("Dot", {"axes": 1})), "refused", [
        "layer 'merge' (Dot)", "4 of 'a' (4), 3 of 'b' (3)"]
    yield "an Add of shapes that differ", branches(dense("a", 4, "x"), dense("b", 3, "x")), "refused", [
        "layer 'merge' (Add)", "'a' (4) and 'b' (3)", "one shape"]
    yield "a Concatenate of shapes that differ", branches(
        ("Reshape", "r", {"target_shape": [2, 4]}, ["x"]), ("Reshape", "s", {"target_shape": [4, 2]}, ["x"]),
        merge=("Concatenate", {"axis": -1})), "refused", [
        "layer 'merge' (Concatenate)", "(2, 4) and 's' (4, 2)", "differ on another axis"]
    yield "a Concatenate on the batch axis", branches(
        dense("a", 4, "x"), dense("b", 4, "x"), merge=("Concatenate", {"axis": 0})), "refused", [
        "layer 'merge' (Concatenate)", "axis=0 is not a per-sample axis"]
    yield "a layer tpudsl lacks in a branch", branches(
        dense("a", 8, "x"), ("UnitNormalization", "norm", {}, ["x"])), "refused", [
        "layer 'norm' (UnitNormalization)", "tpudsl has no UnitNormalization layer"]
    def attention(kwargs, **config):
        c = graph([inp("x", 5, 4), ("MultiHeadAttention", "att", dict({"num_heads": 2, "key_dim": 3}, **config),
                                    [["x", "x"]])], ["x"], ["att"])
        node = c["config"]["layers"][1]["inbound_nodes"][0]
        node["args"] = node["args"][0]   # called (query, value), not on a list
        node["kwargs"] = kwargs
        return c
    yield "a causal MultiHeadAttention", attention({"use_causal_mask": True}, dropout=0.25), "converted", [
        'Node<"att", MultiHeadAttention<2, 3, 3, attention_options{.dropout = 0.25f, .use_causal_mask = true}>, '
        '"x", "x">>;']
    yield "a MultiHeadAttention given a mask", attention({"attention_mask": tensor("x")}), "refused", [
        "layer 'att' (MultiHeadAttention)", "attention_mask=", "takes no mask at its call"]
    yield "a MultiHeadAttention of another output shape", attention({}, output_shape=[6]), "refused", [
        "layer 'att' (MultiHeadAttention)", "output_shape=[6] is not supported"]
    yield "a shared BatchNormalization", graph([
        inp("x", 8), ("BatchNormalization", "bn", {}, ["x", "a"]), dense("a", 8, "bn"),
        ("Add", "sum", {}, [["a", ("bn", 1, 0)]])], ["x"], ["sum"]), "refused", [
        "layer 'bn' (BatchNormalization)", "called 2 times", "not shared"]
    yield "a layer shared on inputs its weights do not fit", graph([
        inp("x", 8), dense("a", 4, "x", "a"), ("Add", "sum", {}, [["a", ("a", 1, 0)]])], ["x"], ["sum"]), "refused", [
        "layer 'a' (Dense)", "call #2 reads (4)", "other shapes"]
    yield "an Add called twice", graph([
        inp("x", 8), dense("a", 8, "x"), ("Add", "sum", {}, [["x", "a"], ["a", "sum"]])], ["x"], [("sum", 1, 0)]), \
        "refused", ["layer 'sum' (Add)", "called 2 times", "a merge is not shared"]
    yield "a layer's second output", branches(
        ("LSTM", "a", {"units": 8, "return_state": True}, ["x"]), ("LSTM", "b", {"units": 8}, ["x"]), shape=(3, 8)), \
        "refused", ["layer 'a' (LSTM)", "return_state=true"]
    config = branches(dense("a", 4, "x"), dense("b", 4, "x"))
    config["config"]["layers"][-1]["inbound_nodes"][0]["args"][0][1]["config"]["keras_history"] = ["b", 0, 1]
    yield "a layer's output #1", config, "refused", [
        "layer 'merge' (Add)", "reads output #1 of layer 'b' (Dense)", "one output each"]
    config = branches(dense("a", 4, "x"), ("Dropout", "b", {"rate": 0.5}, ["a"]))
    config["config"]["layers"][2]["inbound_nodes"][0]["kwargs"] = {"training": True}
    yield "a layer called with training=True", config, "refused", ["layer 'b' (Dropout)", "training=true"]
    # Two texts: an Embedding on each (int32 and int64 ids), in Keras' order after a float input's layer.
    yield "two Embeddings", graph([
        inp("x", 3), inp("w", 5, dtype="int32"), inp("v", 5, dtype="int64"), dense("d", 2, "x"),
        ("Embedding", "e", {"input_dim": 9, "output_dim": 2}, ["w"]),
        ("Embedding", "f", {"input_dim": 7, "output_dim": 2}, ["v"]), ("Add", "sum", {}, [["e", "f"]]),
        ("GlobalAveragePooling1D", "avg", {}, ["sum"]), ("Concatenate", "cat", {}, [["avg", "d"]])],
        ["x", "w", "v"], ["cat"]), "converted", [
        "#include <cstdint>", 'Node<"x", Input<Shape<3>>>,', 'Node<"w", Input<Shape<5>, std::int32_t>>,',
        'Node<"v", Input<Shape<5>, std::int64_t>>,', 'Node<"d", Dense<2>, "x">,',
        'Node<"e", Embedding<9, 2>, "w">,', 'Node<"f", Embedding<7, 2>, "v">,', 'Node<"sum", Add, "e", "f">,',
        'Node<"avg", GlobalAveragePooling1D>,', 'Node<"cat", Concatenate<>, "avg", "d">>;',
        "static_assert(Reuters::param_count == 40);",
        "static_assert(std::is_same_v<Reuters::output_shape, Shape<4>>);"]
    # Keras' layer reuse of an Embedding: one table for both texts (of other lengths: its weights are
    # (vocabulary, dimension) on either), the second call Shared; each Input holds token ids.
    shared_embedding = graph([
        inp("q", 6, dtype="int32"), inp("a", 4, dtype="int32"),
        ("Embedding", "embed", {"input_dim": 9, "output_dim": 2}, ["q", "a"]),
        ("GlobalAveragePooling1D", "qa", {}, ["embed"]), ("GlobalMaxPooling1D", "aa", {}, [("embed", 1, 0)]),
        ("Concatenate", "cat", {}, [["qa", "aa"]]), dense("out", 1, "cat")], ["q", "a"], ["out"])
    expected = ['Node<"q", Input<Shape<6>, std::int32_t>>,', 'Node<"a", Input<Shape<4>, std::int32_t>>,',
                'Node<"embed", Embedding<9, 2>, "q">,           // (6, 2)',
                'Node<"embed_1", Shared<"embed">, "a">,         // (4, 2)',
                'Node<"qa", GlobalAveragePooling1D, "embed">,', 'Node<"aa", GlobalMaxPooling1D, "embed_1">,',
                'Node<"cat", Concatenate<>, "qa", "aa">,', 'Node<"out", Dense<1>>>;',
                "static_assert(Reuters::param_count == 23);"]
    yield "a shared Embedding", shared_embedding, "converted", expected
    yield "tf-keras 2's shared Embedding", tf2(shared_embedding), "converted", expected
    yield "a shared Embedding's call on a layer's output", graph([
        inp("w", 5, dtype="int32"), inp("x", 5),
        ("Embedding", "e", {"input_dim": 9, "output_dim": 2}, ["w", "a"]), dense("a", 5, "x"),
        ("Add", "sum", {}, [["e", ("e", 1, 0)]])], ["w", "x"], ["sum"]), "refused", [
        "layer 'e' (Embedding)", "its call #2 reads layer 'a' (Dense)", "read one of the model's inputs directly"]
    yield "a shared Embedding on token ids and floats", graph([
        inp("w", 5, dtype="int32"), inp("x", 5), ("Embedding", "e", {"input_dim": 9, "output_dim": 2}, ["w", "x"]),
        dense("a", 2, "x"), ("Add", "sum", {}, [["e", ("e", 1, 0), "a"]])], ["w", "x"], ["sum"]), "refused", [
        "layer 'x' (InputLayer)", "feeds an Embedding and layer 'a' (Dense)"]
    yield "a vocabulary past float32's integers, with several inputs", graph([
        inp("w", 5, dtype="int32"), inp("v", 2), ("Embedding", "e", {"input_dim": 2 ** 24 + 1, "output_dim": 1}, ["w"]),
        ("Flatten", "f", {}, ["e"]), ("Concatenate", "cat", {}, [["f", "v"]])], ["w", "v"], ["cat"]), "refused", [
        "layer 'e' (Embedding)", "input_dim=16777217 is too large for a graph of several inputs"]
    yield "an Embedding after a layer", graph([
        inp("w", 5), dense("a", 5, "w"), ("Embedding", "e", {"input_dim": 9, "output_dim": 2}, ["a"]),
        ("Flatten", "f", {}, ["e"]), ("Concatenate", "cat", {}, [["f", "a"]])], ["w"], ["cat"]), "refused", [
        "layer 'e' (Embedding)", "read one of the model's inputs directly"]
    yield "token ids into an Embedding and a Dense", graph([
        inp("w", 5, dtype="int32"), ("Embedding", "e", {"input_dim": 9, "output_dim": 1}, ["w"]),
        ("Flatten", "f", {}, ["e"]), dense("a", 5, "w"), ("Add", "sum", {}, [["f", "a"]])], ["w"], ["sum"]), \
        "refused", ["layer 'w' (InputLayer)", "feeds an Embedding and layer 'a' (Dense)"]
    yield "an input no output needs", graph([
        inp("x", 8), inp("unused", 3), dense("a", 4, "x"), dense("b", 4, "x"), ("Add", "sum", {}, [["a", "b"]])],
        ["x", "unused"], ["sum"]), "refused", ["the model's input 'unused' leads to none of the model's outputs"]
    yield "an output that is an input", graph([inp("x", 8), dense("a", 4, "x")], ["x"], ["a", "x"]), "refused", [
        "the model's output 'x' is one of its inputs"]
    yield "a nested model", branches(dense("a", 4, "x"), ("Sequential", "inner", {"layers": []}, ["x"])), \
        "refused", ["layer 'inner' (Sequential)", "nested model"]
    yield "a name that is not a C++ literal's", branches(dense("a", 4, "x"), dense('b"); int x; //', 4, "x")), \
        "refused", ["layer 'b\"); int x; //' (Dense)", "its name is not", "rename the layer"]
    yield "a cycle", graph([inp("x", 8), dense("a", 8, "x"), dense("b", 8, "c"), dense("c", 8, "b"),
                           ("Add", "sum", {}, [["a", "c"]])], ["x"], ["sum"]), "refused", ["on a cycle"]


def layer(config, name):
    return next(l for l in config["config"]["layers"] if l["config"].get("name") == name)["config"]


def mutations(base):
    """Single options changed in tf2_reuters.json, each refused: (label, change, expected)."""
    def with_(name, key, value):
        def change(c):
            layer(c, name)[key] = value
        return change
    yield "use_bias", with_("dense", "use_bias", False), ["layer 'dense' (Dense)", "use_bias=false"]
    yield "dilation", with_("conv1d", "dilation_rate", [2]), ["layer 'conv1d' (Conv1D)", "dilation_rate=[2]"]
    yield "causal", with_("conv1d_1", "padding", "causal"), ["layer 'conv1d_1' (Conv1D)", 'padding="causal"']
    yield "gelu", with_("dense", "activation", "gelu"), ["layer 'dense' (Dense)", "activation 'gelu'"]
    yield "initializer", with_("conv1d", "kernel_initializer", {"class_name": "HeNormal", "config": {}}), \
        ["layer 'conv1d' (Conv1D)", "kernel_initializer=", "glorot_uniform"]
    yield "regularizer", with_("dense", "kernel_regularizer", {"class_name": "L2", "config": {"l2": 0.01}}), \
        ["layer 'dense' (Dense)", "kernel_regularizer="]
    yield "mask_zero", with_("embedding", "mask_zero", True), ["layer 'embedding' (Embedding)", "mask_zero"]
    yield "frozen", with_("conv1d", "trainable", False), ["layer 'conv1d' (Conv1D)", "trainable=false"]
    yield "mixed precision", with_("dense", "dtype", {"class_name": "Policy", "config": {"name": "mixed_float16"}}), \
        ["layer 'dense' (Dense)", "mixed_float16"]
    yield "groups", with_("conv1d", "groups", 2), ["layer 'conv1d' (Conv1D)", "groups=2"]
    yield "unknown option", with_("flatten", "something_new", 3), ["layer 'flatten' (Flatten)", "something_new=3"]

    def global_pooling(cls, keepdims):
        """tf-keras 2's spelling of a global pooling (the alias, keepdims) in place of the last pooling."""
        def change(c):
            entry = next(l for l in c["config"]["layers"] if l["config"].get("name") == "max_pooling1d_1")
            entry["class_name"] = cls
            entry["config"] = {"name": "pool", "trainable": True, "dtype": "float32",
                               "data_format": "channels_last", "keepdims": keepdims}
        return change
    yield "keepdims", global_pooling("GlobalAveragePooling1D", True), \
        ["layer 'pool' (GlobalAveragePooling1D)", "keepdims=true"]
    yield "global pooling of the wrong rank", global_pooling("GlobalMaxPooling2D", False), \
        ["layer 'pool' (GlobalMaxPooling2D)", "takes a rank-3 input", "(146, 32)"]

    def batch_norm(**options):
        """A BatchNormalization after the first convolution, with options tpudsl lacks."""
        def change(c):
            layers = c["config"]["layers"]
            at = next(i for i, l in enumerate(layers) if l["config"].get("name") == "conv1d") + 1
            config = {"name": "bn", "trainable": True, "dtype": "float32", "axis": -1, "momentum": 0.99,
                      "epsilon": 0.001, "center": True, "scale": True}
            config.update(options)
            layers.insert(at, {"class_name": "BatchNormalization", "config": config})
        return change
    yield "batch norm axis", batch_norm(axis=1), ["layer 'bn' (BatchNormalization)", "axis=1", "last (channel) axis"]
    yield "synchronized", batch_norm(synchronized=True), ["layer 'bn' (BatchNormalization)", "synchronized=true"]
    yield "no scale", batch_norm(scale=False), ["layer 'bn' (BatchNormalization)", "scale=false"]

    def wrapped(name, cls, config):
        """tf-keras 2's TimeDistributed around a layer, in place of the layer `name`."""
        def change(c):
            entry = next(l for l in c["config"]["layers"] if l["config"].get("name") == name)
            entry["class_name"] = "TimeDistributed"
            entry["config"] = {"name": "td", "trainable": True, "dtype": "float32",
                               "layer": {"class_name": cls, "config": config}}
        return change
    yield "TimeDistributed of a Dropout", wrapped("flatten", "Dropout", {"name": "drop", "rate": 0.5}), \
        ["layer 'td' (TimeDistributed)", "TimeDistributed(Dropout) is not supported", "wraps a Dense only"]
    yield "TimeDistributed on a rank-1 input", wrapped("dense", "Dense", {"name": "inner", "units": 46}), \
        ["layer 'td' (TimeDistributed)", "rank-1 input (2336)", "(timesteps, features)"]
    yield "TimeDistributed Dense without a bias", \
        wrapped("flatten", "Dense", {"name": "inner", "units": 4, "use_bias": False}), \
        ["layer 'td/inner' (Dense)", "use_bias=false"]

    def unknown_dim(c):
        c["config"]["layers"][0]["config"]["batch_input_shape"] = [None, None]
    yield "variable length", unknown_dim, ["input shape [null]", "no None"]


def average_poolings(c):
    """tf2_reuters.json with its poolings as tf-keras 2 aliases of the average ones, the last one global."""
    layers = c["config"]["layers"]
    first = next(l for l in layers if l["config"].get("name") == "max_pooling1d")
    first["class_name"] = "AvgPool1D"
    first["config"].update({"pool_size": [3], "strides": [2], "padding": "same"})
    last = next(l for l in layers if l["config"].get("name") == "max_pooling1d_1")
    last["class_name"] = "GlobalAvgPool1D"
    last["config"] = {"name": "pool", "trainable": True, "dtype": "float32", "data_format": "channels_last",
                      "keepdims": False}


def integer_pixels(c):
    """tf2_functional_chain.json with an int32 input: a Conv2D reads floats (Keras casts)."""
    c["config"]["layers"][0]["config"]["dtype"] = "int32"


def recurrent_mutations():
    """Single options changed in keras3_lstm.json's LSTM (or it made a GRU), each refused."""
    def with_(key, value, cls=None):
        def change(c):
            entry = next(l for l in c["config"]["layers"] if l["config"].get("name") == "lstm")
            entry["config"][key] = value
            if cls:
                entry["class_name"] = cls
        return change
    yield "go_backwards", with_("go_backwards", True), ["layer 'lstm' (LSTM)", "go_backwards=true"]
    yield "stateful", with_("stateful", True), ["layer 'lstm' (LSTM)", "stateful=true"]
    yield "return_state", with_("return_state", True), ["layer 'lstm' (LSTM)", "return_state=true"]
    yield "recurrent dropout", with_("recurrent_dropout", 0.2), ["layer 'lstm' (LSTM)", "recurrent_dropout=0.2"]
    yield "hard_sigmoid", with_("recurrent_activation", "hard_sigmoid"), \
        ["layer 'lstm' (LSTM)", 'recurrent_activation="hard_sigmoid"', "sigmoid"]
    yield "relu LSTM", with_("activation", "relu"), ["layer 'lstm' (LSTM)", 'activation="relu"', "tanh"]
    yield "unit_forget_bias", with_("unit_forget_bias", False), ["layer 'lstm' (LSTM)", "unit_forget_bias=false"]
    yield "recurrent initializer", with_("recurrent_initializer", {"class_name": "GlorotUniform", "config": {}}), \
        ["layer 'lstm' (LSTM)", "recurrent_initializer=", "orthogonal"]
    yield "reset_after", with_("reset_after", False, "GRU"), ["layer 'lstm' (GRU)", "reset_after=false"]
    yield "SimpleRNN", with_("units", 32, "SimpleRNN"), ["layer 'lstm' (SimpleRNN)", "tpudsl has no SimpleRNN layer"]


def run(tool, path, out=None):
    cmd = [sys.executable, tool, path, "--name", "Reuters", "--namespace", "t"] + (["-o", out] if out else [])
    return subprocess.run(cmd, capture_output=True, text=True)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    tool, configs = argv[1], argv[2]
    failures = []
    for name, expected in ACCEPTED.items():
        r = run(tool, os.path.join(configs, name))
        missing = [e for e in expected if e not in r.stdout]
        if r.returncode != 0 or missing or r.stderr:
            failures.append(f"{name}: exit {r.returncode}, stderr {r.stderr.strip()!r}, missing {missing}")
        else:
            print(f"{name}: converted")
    with tempfile.TemporaryDirectory() as tmp:
        refused = []   # the graphs refused, checked with the other refusals below
        with open(os.path.join(configs, "tf2_functional_chain.json")) as f:
            config = json.load(f)
        integer_pixels(config)
        path = os.path.join(tmp, "integer_pixels.json")
        with open(path, "w") as f:
            json.dump(config, f)
        r = run(tool, path)
        if r.returncode != 0 or "Input<Shape<28, 28, 1>>," not in r.stdout or "int32" in r.stdout:
            failures.append(f"integer pixels: exit {r.returncode}, stderr {r.stderr.strip()!r}, output {r.stdout!r}")
        else:
            print("integer pixels: converted to a float input")
        for label, config, outcome, expected in graphs():
            path = os.path.join(tmp, label.replace(" ", "_").replace("'", "") + ".json")
            with open(path, "w") as f:
                json.dump(config, f)
            if outcome == "refused":
                refused.append((label, path, expected))
                continue
            r = run(tool, path)
            missing = [e for e in expected if e not in r.stdout]
            if r.returncode != 0 or missing or r.stderr:
                failures.append(f"{label}: exit {r.returncode}, stderr {r.stderr.strip()!r}, missing {missing}")
            else:
                print(f"{label}: converted")
        with open(os.path.join(configs, "tf2_reuters.json")) as f:
            config = json.load(f)
        average_poolings(config)
        path = os.path.join(tmp, "average_poolings.json")
        with open(path, "w") as f:
            json.dump(config, f)
        r = run(tool, path)
        expected = ["AveragePooling1D<3, 2, Same>,", "// (148, 64)", "GlobalAveragePooling1D,            // (32)",
                    "Flatten,                           // (32)", "static_assert(Reuters::param_count == 226'872);"]
        missing = [e for e in expected if e not in r.stdout]
        if r.returncode != 0 or missing:
            failures.append(f"average poolings: exit {r.returncode}, stderr {r.stderr.strip()!r}, missing {missing}")
        else:
            print("average poolings: converted")
        cases = [(name, os.path.join(configs, name), expected) for name, expected in REFUSED.items()] + refused
        with open(os.path.join(configs, "tf2_reuters.json")) as f:
            base = json.load(f)
        for label, change, expected in mutations(base):
            config = copy.deepcopy(base)
            change(config)
            path = os.path.join(tmp, label.replace(" ", "_") + ".json")
            with open(path, "w") as f:
                json.dump(config, f)
            cases.append((label, path, expected))
        with open(os.path.join(configs, "keras3_lstm.json")) as f:
            base = json.load(f)
        for label, change, expected in recurrent_mutations():
            config = copy.deepcopy(base)
            change(config)
            path = os.path.join(tmp, label.replace(" ", "_") + ".json")
            with open(path, "w") as f:
                json.dump(config, f)
            cases.append((label, path, expected))
        out = os.path.join(tmp, "existing.hpp")
        for label, path, expected in cases:
            with open(out, "w") as f:
                f.write("// left alone\n")
            r = run(tool, path, out)
            missing = [e for e in expected if e not in r.stderr]
            kept = open(out).read() == "// left alone\n" and not [n for n in os.listdir(tmp) if n.endswith(".tmp")]
            if r.returncode != 1 or missing or r.stdout or not kept:
                failures.append(f"{label}: exit {r.returncode}, stderr {r.stderr.strip()!r}, missing {missing}, "
                                f"output file kept: {kept}")
            else:
                print(f"{label}: refused: {r.stderr.strip()}")
    for f in failures:
        print("FAILED " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
