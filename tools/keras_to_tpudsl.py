#!/usr/bin/env python3
"""Writes a Keras model's architecture as a tpudsl model type: a C++ header with its Sequential<...>.

    tools/keras_to_tpudsl.py MODEL --name NAME [--namespace NS] [-o OUT.hpp]

MODEL is a Keras 3 `.keras` file (a zip holding config.json), a whole-model `.h5` (Keras 2 or 3:
the JSON in its root attribute `model_config`), or that JSON itself (`model.to_json()`, `.json`).
Keras 3 and tf-keras 2 spellings are both read. The header declares `using NAME = Sequential<...>`,
one layer per Keras layer in Keras' order (so that weights files match layer for layer), a shape
comment per layer, and static_asserts of the parameter count and output shape that this tool
computes from the Keras config itself. Without -o the header goes to standard output; with -o it is
written to a temporary file beside OUT and renamed over it.

What tpudsl cannot express is refused, naming the layer (its Keras name and class) and the option:
layers tpudsl lacks (SimpleRNN, Conv3D, ...), options it lacks (dilation, groups, causal
padding, channels_first, use_bias=False, initializers other than Keras' defaults, regularizers,
constraints, frozen layers, mixed precision; for LSTM and GRU: other activations, return_state,
go_backwards, stateful, dropout, reset_after=False), and models that are not one chain of layers. Exit
status 0 on success, 1 when the model is refused or unreadable, 2 for a bad command line.

Needs only Python's standard library (and h5py for `.h5` files); not Keras.
"""
import argparse
import json
import os
import re
import sys
import tempfile
import zipfile

TOOL = "keras_to_tpudsl"
SUPPORTED = ("InputLayer", "Dense", "Conv1D", "Conv2D", "MaxPooling1D", "MaxPooling2D", "AveragePooling1D",
             "AveragePooling2D", "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D",
             "GlobalMaxPooling2D", "Embedding", "Flatten", "Dropout", "Activation", "BatchNormalization",
             "TimeDistributed", "LSTM", "GRU")
# Keras' pooling classes and tpudsl's names for them.
POOLINGS = {"MaxPooling1D": "MaxPool1D", "MaxPooling2D": "MaxPool2D", "AveragePooling1D": "AveragePooling1D",
            "AveragePooling2D": "AveragePooling2D"}
GLOBAL_POOLINGS = ("GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D")
ACTIVATIONS = {"linear": "Linear", "relu": "Relu", "softmax": "Softmax", "sigmoid": "Sigmoid",
               "tanh": "Tanh"}
# Keras' other spellings of the same layers (tf-keras 2 and Keras 3 aliases).
ALIASES = {"MaxPool1D": "MaxPooling1D", "MaxPool2D": "MaxPooling2D", "Convolution1D": "Conv1D",
           "Convolution2D": "Conv2D", "AvgPool1D": "AveragePooling1D", "AvgPool2D": "AveragePooling2D",
           "GlobalAvgPool1D": "GlobalAveragePooling1D", "GlobalAvgPool2D": "GlobalAveragePooling2D",
           "GlobalMaxPool1D": "GlobalMaxPooling1D", "GlobalMaxPool2D": "GlobalMaxPooling2D"}
INPUT_TYPES = {"int8": "std::int8_t", "int16": "std::int16_t", "int32": "std::int32_t",
               "int64": "std::int64_t", "uint8": "std::uint8_t", "uint16": "std::uint16_t",
               "uint32": "std::uint32_t", "float16": None, "bfloat16": None, "float32": None,
               "float64": None}
CPP_KEYWORDS = set("""alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
char16_t char32_t class compl concept const consteval constexpr constinit const_cast continue co_await
co_return co_yield decltype default delete do double dynamic_cast else enum explicit export extern false
float for friend goto if inline int long mutable namespace new noexcept not not_eq nullptr operator or
or_eq private protected public register reinterpret_cast requires return short signed sizeof static
static_assert static_cast struct switch template this thread_local throw true try typedef typeid typename
union unsigned using virtual void volatile wchar_t while xor xor_eq""".split())


class Refused(Exception):
    """The model cannot be written as a tpudsl type; the message says why."""


# ---------------------------------------------------------------------------------------------
# Reading the config
# ---------------------------------------------------------------------------------------------

def read_model(path):
    """Returns (the model's config as a dict, the Keras version that wrote it or None)."""
    if os.path.isdir(path):
        raise Refused("it is a directory (a TensorFlow SavedModel?): save the model with "
                      "model.save(\"m.keras\") or model.save(\"m.h5\")")
    if not os.path.isfile(path):
        raise Refused("no such file")
    with open(path, "rb") as f:
        magic = f.read(8)
    if magic.startswith(b"PK"):
        try:
            with zipfile.ZipFile(path) as z:
                names = z.namelist()
                if "config.json" not in names:
                    raise Refused("a zip without config.json, not a Keras 3 .keras file")
                config = parse_json(z.read("config.json"), "its config.json")
                version = None
                if "metadata.json" in names:
                    try:
                        version = json.loads(z.read("metadata.json")).get("keras_version")
                    except (ValueError, AttributeError):
                        version = None
                return config, version
        except zipfile.BadZipFile as e:
            raise Refused(f"not a readable zip ({e})") from None
    if magic == b"\x89HDF\r\n\x1a\n":
        try:
            import h5py  # noqa: PLC0415
        except ImportError:
            raise Refused("an HDF5 file: reading it needs h5py (pip install h5py)") from None
        with h5py.File(path, "r") as f:
            if "model_config" not in f.attrs:
                raise Refused("an HDF5 file without a model_config attribute: a weights-only file, not a "
                              "whole model saved with model.save(\"x.h5\")")
            version = f.attrs.get("keras_version")
            version = version.decode() if isinstance(version, bytes) else version
            return parse_json(f.attrs["model_config"], "its model_config"), version
    with open(path, "rb") as f:
        config = parse_json(f.read(), "the file")
    return config, config.get("keras_version")   # model.to_json() of tf-keras 2 names its version


def parse_json(raw, where):
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", errors="replace")
    try:
        config = json.loads(raw)
    except json.JSONDecodeError as e:
        raise Refused(f"{where} is not JSON, so not a Keras model config ({e})") from None
    if not isinstance(config, dict) or "class_name" not in config:
        raise Refused(f"{where} is not a Keras model config (no class_name at its root)")
    return config


def layer_chain(model):
    """The model's layers in data-flow order, as (class_name, config) pairs, InputLayer included
    when the model has one. Refuses a model that is not one chain."""
    cls = model.get("class_name")
    cfg = model.get("config")
    if cls == "Sequential":
        layers = cfg if isinstance(cfg, list) else (cfg or {}).get("layers", [])
        chain = [(ALIASES.get(l.get("class_name"), l.get("class_name")), l.get("config") or {}) for l in layers]
        build = None if isinstance(cfg, list) else cfg.get("build_input_shape")
        return chain, build, (cfg or {}).get("name", "sequential") if isinstance(cfg, dict) else "sequential"
    if cls in ("Functional", "Model"):
        return functional_chain(cfg), None, cfg.get("name", "model")
    raise Refused(f"the model is a '{cls}': only Sequential models and functional models that are one "
                  "chain of layers can be written as a tpudsl Sequential")


def inbound_names(node):
    """The layer names a node reads, in Keras 3's (keras_history) or tf-keras 2's spelling."""
    names = []

    def walk(x):
        if isinstance(x, dict):
            hist = (x.get("config") or {}).get("keras_history") if x.get("class_name") == "__keras_tensor__" else None
            if hist:
                names.append(hist[0])
            else:
                for v in x.values():
                    walk(v)
        elif isinstance(x, list):
            # tf-keras 2: [layer_name, node_index, tensor_index, kwargs]
            if len(x) >= 3 and isinstance(x[0], str) and isinstance(x[1], int) and isinstance(x[2], int):
                names.append(x[0])
            else:
                for v in x:
                    walk(v)
    walk(node)
    return names


def endpoint_names(spec):
    """input_layers/output_layers: ['a', 0, 0] (Keras 3, one) or [['a', 0, 0], ...]."""
    if isinstance(spec, list) and spec and isinstance(spec[0], str):
        return [spec[0]]
    return [s[0] for s in spec or []]


def functional_chain(cfg):
    layers = cfg.get("layers", [])
    by_name = {l.get("name") or (l.get("config") or {}).get("name"): l for l in layers}
    inputs = endpoint_names(cfg.get("input_layers"))
    outputs = endpoint_names(cfg.get("output_layers"))
    if len(inputs) != 1 or len(outputs) != 1:
        raise Refused(f"the functional model has {len(inputs)} inputs and {len(outputs)} outputs: a tpudsl "
                      "Sequential has one of each")
    readers = {name: [] for name in by_name}
    source = {}
    for name, l in by_name.items():
        nodes = l.get("inbound_nodes") or []
        label = f"layer '{name}' ({l.get('class_name')})"
        if len(nodes) > 1:
            raise Refused(f"{label} is called {len(nodes)} times (a shared layer): the model is not a chain "
                          "of layers, which is what a tpudsl Sequential is")
        feeds = inbound_names(nodes[0]) if nodes else []
        if len(feeds) > 1:
            raise Refused(f"{label} takes {len(feeds)} inputs ({', '.join(repr(f) for f in feeds)}): the model "
                          "branches, and a tpudsl Sequential is one chain of layers")
        if feeds:
            source[name] = feeds[0]
            readers.setdefault(feeds[0], []).append(name)
    for name, rs in readers.items():
        if len(rs) > 1:
            l = by_name.get(name, {})
            raise Refused(f"layer '{name}' ({l.get('class_name')}) feeds {len(rs)} layers "
                          f"({', '.join(repr(r) for r in rs)}): the model branches, and a tpudsl Sequential "
                          "is one chain of layers")
    order = [inputs[0]]
    while order[-1] != outputs[0]:
        nxt = readers.get(order[-1], [])
        if not nxt:
            raise Refused(f"the output '{outputs[0]}' is not reached from the input '{inputs[0]}' through "
                          "one chain of layers")
        order.append(nxt[0])
    unused = [n for n in by_name if n not in order]
    if unused:
        raise Refused(f"layer '{unused[0]}' ({by_name[unused[0]].get('class_name')}) is not on the chain from "
                      "the input to the output")
    return [(ALIASES.get(by_name[n].get("class_name"), by_name[n].get("class_name")), by_name[n].get("config") or {})
            for n in order]


# ---------------------------------------------------------------------------------------------
# Converting the layers
# ---------------------------------------------------------------------------------------------

class Layer:
    """One Keras layer being converted: its config, and refusals that name it."""

    def __init__(self, cls, cfg, index):
        self.cls, self.cfg, self.index = cls, cfg, index
        self.name = cfg.get("name") or f"#{index}"
        self.used = {"name", "trainable", "dtype", "batch_input_shape", "batch_shape", "input_shape",
                     "batch_size", "seed"}

    def refuse(self, what):
        raise Refused(f"layer '{self.name}' ({self.cls}): {what}")

    def get(self, key, default=None):
        self.used.add(key)
        return self.cfg.get(key, default)

    def expect(self, key, allowed, why, default=None):
        value = self.get(key, default)
        if value not in allowed:
            self.refuse(f"{key}={json.dumps(value)} is not supported: {why}")
        return value

    def ints(self, key, rank, default=None):
        value = self.get(key, default)
        if isinstance(value, int):
            value = [value] * rank
        if not (isinstance(value, list) and len(value) == rank and all(isinstance(v, int) and v > 0 for v in value)):
            self.refuse(f"{key}={json.dumps(value)} is not {rank} positive integer(s)")
        return value

    def common(self):
        if self.cfg.get("trainable", True) is not True:
            self.refuse("trainable=false is not supported: tpudsl trains every layer's weights")
        dtype = self.cfg.get("dtype")
        if isinstance(dtype, dict):
            dtype = (dtype.get("config") or {}).get("name", dtype.get("class_name"))
        if dtype not in (None, "float32"):
            self.refuse(f"dtype policy '{dtype}' is not supported: tpudsl computes in float32")

    def finish(self):
        """Refuses options this tool does not know that are set to something other than off."""
        for key, value in self.cfg.items():
            if key not in self.used and value not in (None, False, 0, "", [], {}):
                self.refuse(f"option {key}={json.dumps(value)} is not supported by tpudsl (or not known to "
                            "this tool)")

    def activation(self, key="activation"):
        act = self.get(key, "linear")
        if act is None:
            act = "linear"
        if isinstance(act, dict):   # Keras 3 may write {"class_name": "function", "config": "relu"}
            act = act.get("config") if isinstance(act.get("config"), str) else act.get("class_name")
        if act not in ACTIVATIONS:
            self.refuse(f"activation '{act}' is not supported: tpudsl has {', '.join(ACTIVATIONS)}")
        return ACTIVATIONS[act]

    def initializer(self, key, want):
        init = self.get(key)
        if init is None:
            return
        cls, cfg = (init, {}) if isinstance(init, str) else (init.get("class_name"), init.get("config") or {})
        norm = re.sub(r"[^a-z]", "", str(cls).lower())
        if want == "glorot_uniform":
            ok = norm == "glorotuniform" and not cfg.get("input_axes") and not cfg.get("output_axes")
        elif want == "zeros":
            ok = norm in ("zeros", "zero")
        elif want == "orthogonal":
            ok = norm == "orthogonal" and float(cfg.get("gain", 1.0)) == 1.0
        else:   # Embedding: RandomUniform(-0.05, 0.05)
            ok = norm in ("uniform", "randomuniform") and float(cfg.get("minval", -0.05)) == -0.05 and \
                float(cfg.get("maxval", 0.05)) == 0.05
        if not ok:
            self.refuse(f"{key}={json.dumps(init)} is not supported: tpudsl starts it with Keras' default, {want}")

    def no_extras(self, *keys):
        for key in keys:
            value = self.get(key)
            if value not in (None, False):
                self.refuse(f"{key}={json.dumps(value)} is not supported by tpudsl")

    def channels_last(self):
        fmt = self.get("data_format", "channels_last")
        if fmt not in (None, "channels_last"):
            self.refuse(f"data_format='{fmt}' is not supported: tpudsl's tensors are channels_last")


def window_arg(values):
    """A kernel, pool or stride as tpudsl spells it: an integer when square, Size2{r, c} otherwise."""
    if len(values) == 1 or all(v == values[0] for v in values):
        return str(values[0])
    return f"Size2{{{values[0]}, {values[1]}}}"


def window_out(length, k, stride, padding):
    return -(-length // stride) if padding == "same" else (length - k) // stride + 1 if length >= k else 0


def trim_defaults(args, defaults):
    """Drops trailing template arguments equal to their defaults (None: no default)."""
    while args and defaults[len(args) - 1] is not None and args[-1] == defaults[len(args) - 1]:
        args.pop()
    return args


def convert_layer(layer, shape, first):
    """Returns (tpudsl spec, output shape, parameter count) of one layer on an input of `shape`."""
    cls = layer.cls
    layer.common()
    rank = len(shape)
    if cls == "Dense":
        if rank != 1:
            layer.refuse(f"a Dense on a rank-{rank} input {fmt_shape(shape)} is not supported: tpudsl's Dense "
                         "takes a rank-1 input; put a Flatten before it")
        units = layer.get("units")
        if not isinstance(units, int) or units <= 0:
            layer.refuse(f"units={json.dumps(units)} is not a positive integer")
        act = layer.activation()
        dense_checks(layer)
        args = trim_defaults([str(units), act], [None, "Linear"])
        return f"Dense<{', '.join(args)}>", (units,), shape[0] * units + units
    if cls == "TimeDistributed":
        return time_distributed(layer, shape)
    if cls in ("Conv1D", "Conv2D"):
        n = 1 if cls == "Conv1D" else 2
        if rank != n + 1:
            layer.refuse(f"a {cls} takes a rank-{n + 1} input (channels last), not {fmt_shape(shape)}")
        filters = layer.get("filters")
        if not isinstance(filters, int) or filters <= 0:
            layer.refuse(f"filters={json.dumps(filters)} is not a positive integer")
        kernel = layer.ints("kernel_size", n)
        strides = layer.ints("strides", n, [1] * n)
        padding = layer.expect("padding", ("valid", "same"), "tpudsl pads 'valid' or 'same'", "valid")
        if any(d != 1 for d in layer.ints("dilation_rate", n, [1] * n)):
            layer.refuse(f"dilation_rate={json.dumps(layer.get('dilation_rate'))} is not supported: tpudsl's "
                         "convolutions are not dilated")
        layer.expect("groups", (1, None), "tpudsl's convolutions are not grouped", 1)
        layer.channels_last()
        act = layer.activation()
        dense_checks(layer)
        out = tuple(window_out(shape[i], kernel[i], strides[i], padding) for i in range(n))
        if any(o <= 0 for o in out):
            layer.refuse(f"kernel {kernel} does not fit its input {fmt_shape(shape)}")
        pad = "Same" if padding == "same" else "Valid"
        args = trim_defaults([str(filters), window_arg(kernel), act, pad, window_arg(strides)],
                             [None, None, "Linear", "Valid", "1"])
        name = "Conv1D" if n == 1 else "Conv2D"
        params = kernel[0] * (kernel[1] if n == 2 else 1) * shape[-1] * filters + filters
        return f"{name}<{', '.join(args)}>", out + (filters,), params
    if cls in POOLINGS:
        n = 1 if cls.endswith("1D") else 2
        if rank != n + 1:
            layer.refuse(f"a {cls} takes a rank-{n + 1} input (channels last), not {fmt_shape(shape)}")
        pool = layer.ints("pool_size", n, [2] * n)
        strides = pool if layer.cfg.get("strides") is None else layer.ints("strides", n)
        layer.used.add("strides")
        padding = layer.expect("padding", ("valid", "same"), "tpudsl pads 'valid' or 'same'", "valid")
        layer.channels_last()
        out = tuple(window_out(shape[i], pool[i], strides[i], padding) for i in range(n))
        if any(o <= 0 for o in out):
            layer.refuse(f"pool {pool} does not fit its input {fmt_shape(shape)}")
        p, st = window_arg(pool), window_arg(strides)
        args = trim_defaults([p, st, "Same" if padding == "same" else "Valid"], [None, p, "Valid"])
        return f"{POOLINGS[cls]}<{', '.join(args)}>", out + (shape[-1],), 0
    if cls in GLOBAL_POOLINGS:
        n = 1 if cls.endswith("1D") else 2
        if rank != n + 1:
            layer.refuse(f"a {cls} takes a rank-{n + 1} input (channels last), not {fmt_shape(shape)}")
        layer.channels_last()
        if layer.get("keepdims"):
            layer.refuse("keepdims=true is not supported: tpudsl's global poolings give (channels)")
        return cls, (shape[-1],), 0
    if cls == "Embedding":
        if not first:
            layer.refuse("an Embedding must be the model's first layer in tpudsl")
        vocab, dim = layer.get("input_dim"), layer.get("output_dim")
        for key, v in (("input_dim", vocab), ("output_dim", dim)):
            if not isinstance(v, int) or v <= 0:
                layer.refuse(f"{key}={json.dumps(v)} is not a positive integer")
        layer.initializer("embeddings_initializer", "uniform(-0.05, 0.05)")
        layer.no_extras("embeddings_regularizer", "activity_regularizer", "embeddings_constraint",
                        "quantization_config", "lora_rank", "lora_alpha", "sparse")
        if layer.get("mask_zero"):
            layer.refuse("mask_zero=true is not supported: tpudsl has no masks")
        length = layer.get("input_length")
        if length is not None and (length if isinstance(length, int) else list(length)) not in (shape[0], list(shape)):
            layer.refuse(f"input_length={json.dumps(length)} differs from the input's shape {fmt_shape(shape)}")
        return f"Embedding<{vocab}, {dim}>", tuple(shape) + (dim,), vocab * dim
    if cls in ("LSTM", "GRU"):
        return convert_recurrent(layer, shape)
    if cls == "Flatten":
        layer.channels_last()
        size = 1
        for d in shape:
            size *= d
        return "Flatten", (size,), 0
    if cls == "Dropout":
        rate = layer.get("rate")
        if not isinstance(rate, (int, float)) or not 0 <= rate < 1:
            layer.refuse(f"rate={json.dumps(rate)} is not in [0, 1)")
        layer.no_extras("noise_shape")
        return f"Dropout<{float(rate)!r}f>", shape, 0
    if cls == "Activation":
        return f"Activation<{layer.activation()}>", shape, 0
    if cls == "BatchNormalization":
        return batch_normalization(layer, shape)
    if cls == "InputLayer":
        layer.refuse("an InputLayer can only come first")
    hint = ""
    if cls in ("ReLU", "Softmax"):
        hint = f" (Activation('{cls.lower()}') is)"
    layer.refuse(f"tpudsl has no {cls} layer{hint}; it has Dense, Conv1D, Conv2D, MaxPooling1D, "
                 "MaxPooling2D, AveragePooling1D, AveragePooling2D, GlobalAveragePooling1D, "
                 "GlobalAveragePooling2D, GlobalMaxPooling1D, GlobalMaxPooling2D, Embedding, LSTM, GRU, "
                 "Flatten, Dropout, Activation, BatchNormalization and TimeDistributed(Dense)")


def batch_normalization(layer, shape):
    """BatchNormalization over the last axis, with Keras' initializers, centred and scaled."""
    axis = layer.get("axis", -1)
    if isinstance(axis, list) and len(axis) == 1:
        axis = axis[0]
    if axis not in (-1, len(shape)):
        layer.refuse(f"axis={json.dumps(axis)} is not supported: tpudsl normalises the last (channel) axis")
    momentum, epsilon = layer.get("momentum", 0.99), layer.get("epsilon", 1e-3)
    if not isinstance(momentum, (int, float)) or not 0 <= momentum <= 1:
        layer.refuse(f"momentum={json.dumps(momentum)} is not in [0, 1]")
    if not isinstance(epsilon, (int, float)) or not epsilon > 0:
        layer.refuse(f"epsilon={json.dumps(epsilon)} is not positive")
    for key in ("center", "scale"):
        if layer.get(key, True) is not True:
            layer.refuse(f"{key}=false is not supported: tpudsl's BatchNormalization has gamma and beta")
    for key, want in (("beta_initializer", "zeros"), ("gamma_initializer", "ones"),
                      ("moving_mean_initializer", "zeros"), ("moving_variance_initializer", "ones")):
        init = layer.get(key)
        cls = init if isinstance(init, str) or init is None else init.get("class_name")
        if cls is not None and re.sub(r"[^a-z]", "", str(cls).lower()) not in (want, want[:-1]):
            layer.refuse(f"{key}={json.dumps(init)} is not supported: tpudsl starts it with Keras' default, {want}")
    if layer.get("synchronized"):
        layer.refuse("synchronized=true is not supported: tpudsl normalises each fixed micro-batch on its own")
    if layer.get("renorm"):
        layer.refuse("renorm=true is not supported by tpudsl")
    layer.no_extras("beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint",
                    "virtual_batch_size", "adjustment", "renorm_clipping")
    layer.get("fused")            # an implementation choice of TensorFlow's: the same results
    layer.get("renorm_momentum")  # read only with renorm
    args = trim_defaults([f"{float(momentum)!r}f", f"{float(epsilon)!r}f"], ["0.99f", "0.001f"])
    return f"BatchNormalization<{', '.join(args)}>" if args else "BatchNormalization<>", shape, 4 * shape[-1]


def time_distributed(layer, shape):
    """TimeDistributed(Dense) on (timesteps, features): the Dense converted as on one timestep."""
    inner = layer.get("layer")
    if not isinstance(inner, dict):
        layer.refuse("its config holds no wrapped layer")
    inner_cls = ALIASES.get(inner.get("class_name"), inner.get("class_name"))
    if inner_cls != "Dense":
        layer.refuse(f"TimeDistributed({inner_cls}) is not supported: tpudsl's TimeDistributed wraps a Dense only")
    if len(shape) != 2:
        layer.refuse(f"a TimeDistributed(Dense) on a rank-{len(shape)} input {fmt_shape(shape)} is not supported: "
                     "tpudsl's takes a rank-2 input (timesteps, features)")
    dense = Layer("Dense", inner.get("config") or {}, layer.index)
    dense.name = f"{layer.name}/{dense.name}"   # its refusals name the wrapper too
    spec, (units,), params = convert_layer(dense, shape[1:], first=False)
    dense.finish()
    return f"TimeDistributed<{spec}>", (shape[0], units), params


def convert_recurrent(layer, shape):
    """An LSTM or a GRU with Keras' defaults (tanh, sigmoid, a zero initial state, reset_after for GRU):
    (timesteps, features) to (units) or, with return_sequences, (timesteps, units)."""
    cls = layer.cls
    if len(shape) != 2:
        layer.refuse(f"an {cls} takes a (timesteps, features) input, not {fmt_shape(shape)}")
    units = layer.get("units")
    if not isinstance(units, int) or units <= 0:
        layer.refuse(f"units={json.dumps(units)} is not a positive integer")
    for key, want in (("activation", "tanh"), ("recurrent_activation", "sigmoid")):
        act = layer.get(key, want)
        if isinstance(act, dict):   # Keras 3 may write {"class_name": "function", "config": "tanh"}
            act = act.get("config") if isinstance(act.get("config"), str) else act.get("class_name")
        if act != want:
            layer.refuse(f"{key}={json.dumps(act)} is not supported: tpudsl's {cls} uses {want}")
    for key, why in (("return_state", "tpudsl's layers have one output"),
                     ("go_backwards", "tpudsl reads sequences from the first step"),
                     ("stateful", "tpudsl starts every batch from a zero state"),
                     ("time_major", "tpudsl's sequences are (batch, timesteps, features)")):
        if layer.get(key):
            layer.refuse(f"{key}=true is not supported: {why}")
    for key in ("dropout", "recurrent_dropout"):
        if layer.get(key, 0.0) not in (None, 0, 0.0):
            layer.refuse(f"{key}={json.dumps(layer.get(key))} is not supported: tpudsl's {cls} has no dropout "
                         "(put a Dropout before it)")
    if layer.get("use_bias", True) is not True:
        layer.refuse(f"use_bias=false is not supported: tpudsl's {cls} always has a bias")
    if cls == "LSTM" and layer.get("unit_forget_bias", True) is not True:
        layer.refuse("unit_forget_bias=false is not supported: tpudsl's LSTM starts its forget bias at one")
    if cls == "GRU" and layer.get("reset_after", True) is not True:
        layer.refuse("reset_after=false is not supported: tpudsl's GRU is Keras 3's reset_after=True")
    layer.initializer("kernel_initializer", "glorot_uniform")
    layer.initializer("recurrent_initializer", "orthogonal")
    layer.initializer("bias_initializer", "zeros")
    layer.no_extras("kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "activity_regularizer",
                    "kernel_constraint", "recurrent_constraint", "bias_constraint")
    # Hints on how Keras runs the layer, not what it computes; without masks, zero_output_for_mask is moot.
    layer.used.update(("unroll", "use_cudnn", "implementation", "zero_output_for_mask"))
    sequences = bool(layer.get("return_sequences", False))
    gates = 4 if cls == "LSTM" else 3
    params = gates * units * (shape[1] + units + (1 if cls == "LSTM" else 2))
    args = trim_defaults([str(units), "true" if sequences else "false"], [None, "false"])
    out = (shape[0], units) if sequences else (units,)
    return f"{cls}<{', '.join(args)}>", out, params


def dense_checks(layer):
    """The options Dense, Conv1D and Conv2D share."""
    if layer.get("use_bias", True) is not True:
        layer.refuse("use_bias=false is not supported: tpudsl's layer always has a bias")
    layer.initializer("kernel_initializer", "glorot_uniform")
    layer.initializer("bias_initializer", "zeros")
    layer.no_extras("kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
                    "bias_constraint", "quantization_config", "lora_rank", "lora_alpha")


def fmt_shape(shape):
    return "(" + ", ".join(str(d) for d in shape) + ")"


def input_of(chain, build_shape):
    """The per-sample input shape and element type, and the layers after the input."""
    layers = list(chain)
    shape, dtype = None, None
    if layers and layers[0][0] == "InputLayer":
        cls, cfg = layers.pop(0)
        layer = Layer(cls, cfg, 0)
        shape = cfg.get("batch_shape") or cfg.get("batch_input_shape")
        if shape is None and cfg.get("shape") is not None:
            shape = [None] + list(cfg["shape"])
        dtype = cfg.get("dtype")
        if cfg.get("sparse") or cfg.get("ragged"):
            layer.refuse("sparse or ragged inputs are not supported by tpudsl")
    if shape is None and layers:
        first = layers[0][1]
        shape = first.get("batch_input_shape") or first.get("batch_shape")
        dtype = dtype or (first.get("dtype") if isinstance(first.get("dtype"), str) else None)
    if shape is None:
        shape = build_shape
    if shape is None:
        raise Refused("the model does not say its input shape: declare it with keras.Input(shape) before "
                      "saving it")
    dims = list(shape[1:])
    if not dims or any(not isinstance(d, int) or d <= 0 for d in dims):
        raise Refused(f"the input shape {json.dumps(shape[1:])} is not fully known: tpudsl needs every "
                      "dimension of a sample (no None)")
    if isinstance(dtype, dict):
        dtype = (dtype.get("config") or {}).get("name")
    dtype = dtype or "float32"
    if dtype not in INPUT_TYPES:
        raise Refused(f"the input's dtype '{dtype}' is not supported by tpudsl")
    return tuple(dims), dtype, layers


def convert(model, name, namespace, source, version):
    chain, build_shape, model_name = layer_chain(model)
    shape, dtype, layers = input_of(chain, build_shape)
    if not layers:
        raise Refused("the model has no layers after its input")
    # An Embedding takes integer ids (Keras casts float ones); every other layer computes in float
    # (Keras casts integer inputs, and so does tpudsl's fit where the data enters).
    cpp_type = (INPUT_TYPES[dtype] or "std::int32_t") if layers[0][0] == "Embedding" else None
    entries = [(f"Input<Shape<{', '.join(map(str, shape))}>" + (f", {cpp_type}>" if cpp_type else ">"),
                fmt_shape(shape))]
    total = 0
    for i, (cls, cfg) in enumerate(layers):
        layer = Layer(cls, cfg, i + 1)
        if not isinstance(cls, str):
            layer.refuse("the layer has no class_name: this is not a Keras model config")
        if cls in ("Sequential", "Functional", "Model"):
            layer.refuse("a nested model is not supported: write its layers into the outer model")
        spec, shape, params = convert_layer(layer, shape, first=(i == 0))
        layer.finish()
        total += params
        entries.append((spec, fmt_shape(shape)))
    return header(name, namespace, entries, total, shape, source, version, model_name, cpp_type)


def header(name, namespace, entries, total, out_shape, source, version, model_name, cpp_type):
    q = "" if namespace else "tpudsl::"

    def qualify(spec):
        return re.sub(r"\b(Input|Shape|Dense|Conv1D|Conv2D|MaxPool1D|MaxPool2D|AveragePooling1D|AveragePooling2D|"
                      r"GlobalAveragePooling1D|GlobalAveragePooling2D|GlobalMaxPooling1D|GlobalMaxPooling2D|"
                      r"Embedding|LSTM|GRU|Flatten|Dropout|Activation|TimeDistributed|Linear|Relu|Softmax|Sigmoid|"
                      r"Tanh|Same|Valid|Size2)\b",
                      q + r"\1", spec)

    guard = re.sub(r"[^A-Za-z0-9]+", "_", (namespace + "_" if namespace else "") +
                   re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)).upper().strip("_") + "_HPP"
    by = f"Keras {version}" if version else "Keras"
    lines = [f"/// @file {name}: the tpudsl type of the {by} model '{model_name}' in {os.path.basename(source)},",
             "/// written by tools/keras_to_tpudsl.py. Its layers are Keras', one for one and in order.",
             f"#ifndef {guard}", f"#define {guard}", "", "#include <tpudsl/core.hpp>", ""]
    if cpp_type:
        lines.append("#include <cstdint>")
    lines += ["#include <type_traits>", ""]
    if namespace:
        lines += [f"namespace {namespace} {{", "", "using namespace tpudsl;", ""]
    lines.append(f"using {name} = {q}Sequential<")
    for i, (spec, shape) in enumerate(entries):
        code = "    " + qualify(spec) + (">;" if i == len(entries) - 1 else ",")
        lines.append(code.ljust(39) + ("   " if len(code) >= 39 else "") + "// " + shape)
    lines += ["", f"static_assert({name}::param_count == {total:,}".replace(",", "'") + ");",
              f"static_assert(std::is_same_v<{name}::output_shape, {q}Shape<{', '.join(map(str, out_shape))}>>);"]
    if namespace:
        lines += ["", f"}} // namespace {namespace}"]
    lines += ["", f"#endif // !{guard}", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------

def identifier(text, what):
    parts = text.split("::") if what == "namespace" else [text]
    for p in parts:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p) or p in CPP_KEYWORDS:
            raise argparse.ArgumentTypeError(f"'{text}' is not a C++ {what} name")
    return text


def write_atomically(path, text):
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def main(argv=None):
    parser = argparse.ArgumentParser(prog="keras_to_tpudsl.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a .keras file, a whole-model .h5 file, or a model's JSON config")
    parser.add_argument("--name", required=True, type=lambda s: identifier(s, "type"),
                        help="the C++ name of the model type")
    parser.add_argument("--namespace", type=lambda s: identifier(s, "namespace"),
                        help="the namespace to declare it in (default: the global one, names qualified)")
    parser.add_argument("-o", "--output", help="the header to write (default: standard output)")
    args = parser.parse_args(argv)
    try:
        model, version = read_model(args.model)
        text = convert(model, args.name, args.namespace or "", args.model, version)
    except Refused as e:
        print(f"{TOOL}: '{args.model}': {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"{TOOL}: '{args.model}': {e}", file=sys.stderr)
        return 1
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as e:
        print(f"{TOOL}: '{args.model}': not a Keras model config this tool can read ({type(e).__name__}: {e})",
              file=sys.stderr)
        return 1
    if args.output:
        try:
            write_atomically(args.output, text)
        except OSError as e:
            print(f"{TOOL}: cannot write '{args.output}': {e}", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
