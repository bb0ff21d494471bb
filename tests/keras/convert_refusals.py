"""tools/keras_to_tpudsl.py on hand-written Keras configs (tests/keras/configs/), without Keras:

    convert_refusals.py TOOL CONFIGS_DIR

tf-keras 2's spellings are read (batch_input_shape, an InputLayer or none, input_length, string
initializers, a functional chain with tf-keras 2's inbound_nodes); what tpudsl cannot express is
refused with exit status 1, a message on stderr naming the layer and the option, nothing on stdout,
and an existing -o file left as it was. Exit status 0 when every case behaves.
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
}

REFUSED = {
    "tf2_channels_first.json": ["layer 'conv2d' (Conv2D)", "data_format='channels_first'"],
    "keras3_branching.json": ["layer 'add' (Add) takes 2 inputs", "branches"],
}


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
        cases = [(name, os.path.join(configs, name), expected) for name, expected in REFUSED.items()]
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
