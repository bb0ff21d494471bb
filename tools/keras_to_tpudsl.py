#!/usr/bin/env python3
"""Writes a Keras model's architecture as a tpudsl model type: a C++ header with its Sequential<...>
or, for a functional model that is not one chain, its Functional<Node<...>...>.

    tools/keras_to_tpudsl.py MODEL --name NAME [--namespace NS] [-o OUT.hpp]

MODEL is a Keras 3 `.keras` file (a zip holding config.json), a whole-model `.h5` (Keras 2 or 3:
the JSON in its root attribute `model_config`), or that JSON itself (`model.to_json()`, `.json`).
Keras 3 and tf-keras 2 spellings are both read. For a Sequential model, or a functional one that is
one chain of layers, the header declares `using NAME = Sequential<...>`, one layer per Keras layer in
Keras' order (so that weights files match layer for layer); for any other functional model (branches,
a layer called more than once, several inputs or outputs), `using NAME = Functional<...>`: a
Node<"name", Layer, "source"...> per layer under its Keras name (the summary's and weights files'),
the Inputs first in the model's order, then the layers in Keras' order as far as the data flow allows;
the sources named unless the node continues a chain (it reads the node just before it and is its only
reader); Keras' merges (Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate, Dot); a
layer's further calls as Node<"name_K", Shared<"name">, "source"> (K: Keras' node index; an _ more
while another node has that name); Outputs<...> unless the one output is the last node. A graph may
have an Embedding on each of its inputs of token ids (two texts: two Embeddings), and an Embedding
called on several of them (Keras' layer reuse) is Shared, as any other layer. Either has a shape
comment per layer and static_asserts of the parameter count and the output shape(s) that this tool
computes from the Keras config itself. Without -o the header goes to standard output; with -o it is
written to a temporary file beside OUT and renamed over it.

What tpudsl cannot express is refused, naming the layer (its Keras name and class) and the option:
layers tpudsl lacks (SimpleRNN, Conv3D, ...), options it lacks (dilation, groups, causal
padding, channels_first, use_bias=False, initializers other than Keras' defaults, regularizers,
constraints, frozen layers, mixed precision; for LSTM and GRU: other activations, return_state,
go_backwards, stateful, dropout, reset_after=False), nested models; in a graph: merges of shapes that
differ, a Dot on inputs of rank 3 or more, a layer's output other than its first, calls with keyword
arguments (training=True), a BatchNormalization or merge called more than once, an Embedding (any of
its calls) that does not read an Input directly, token ids that feed other layers than Embeddings,
layers and inputs no output needs, and layer names that are not 1 to 200 of A-Z a-z 0-9 _ . / - (node
names are written as C++ string literals, never escaped). Exit status 0 on success, 1 when the model
is refused or unreadable, 2 for a bad command line.

A file from elsewhere can make the tool refuse it, never write anything else: it reads at most
16 MiB of config (checked against a zip entry's declared size before inflating, an .h5 attribute's
before reading it, and again while reading) and JSON nested at most 100 deep; every number it
writes is checked (an integer that is not true or false, positive, its shapes' and parameter counts'
products under 2^48; a finite float that float holds); and the only text from the file in the header
is a graph's node names (checked as above) and, in its first comment, the Keras version and the
model's and file's names, written as they are when they are made of characters that cannot leave a
// comment, percent-encoded (%0A) otherwise. Refusals are one line on stderr. The include guard is
never one of tpudsl's (TPUDSL_..._HPP).

Needs only Python's standard library (and h5py for `.h5` files); not Keras.
"""
import argparse
import heapq
import json
import math
import os
import re
import struct
import sys
import tempfile
import zipfile
import zlib

TOOL = "keras_to_tpudsl"
# What the tool reads of a file from elsewhere, whatever the file declares: a model's config (a
# .keras' config.json, an .h5's model_config, a .json file), its metadata, and how deep its JSON nests.
MAX_CONFIG_BYTES = 16 << 20
MAX_METADATA_BYTES = 1 << 20
MAX_JSON_DEPTH = 100
# The most elements of any tensor, parameters of any layer, and parameters in all: a model past it is
# refused rather than written with sizes that overflow tpudsl's std::size_t arithmetic.
MAX_ELEMENTS = 1 << 48
FLT_MIN, FLT_MAX = 1.1754943508222875e-38, 3.4028234663852886e38   # float's smallest normal and largest
# Keras' merges (layers of several inputs, in a graph only): the element-wise ones, then the others.
ELEMENTWISE = ("Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum")
MERGES = ELEMENTWISE + ("Concatenate", "Dot")
SUPPORTED = ("InputLayer", "Dense", "Conv1D", "Conv2D", "MaxPooling1D", "MaxPooling2D", "AveragePooling1D",
             "AveragePooling2D", "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D",
             "GlobalMaxPooling2D", "Embedding", "Flatten", "Dropout", "Activation", "BatchNormalization",
             "LayerNormalization", "TimeDistributed", "LSTM", "GRU", "Reshape", "Permute", "RepeatVector", "Identity",
             "MultiHeadAttention", "Attention", "AdditiveAttention", "PositionEmbedding") + MERGES
# The attention layers: read several sequences, and take use_causal_mask at their call.
ATTENTIONS = ("MultiHeadAttention", "Attention", "AdditiveAttention")
# MultiHeadAttention's call arguments besides the query and value: the key (a tensor), the causal mask,
# and those tpudsl takes only unset (masks) or that change nothing it computes.
ATTENTION_KEYWORDS = ("key", "use_causal_mask", "return_attention_scores", "query_mask", "value_mask", "key_mask",
                      "attention_mask", "training")
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
    """Returns (the model's config as a dict, the Keras version that wrote it or None). Reads at most
    MAX_CONFIG_BYTES of config and MAX_METADATA_BYTES of metadata, whatever the file declares."""
    if os.path.isdir(path):
        raise Refused("it is a directory (a TensorFlow SavedModel?): save the model with "
                      "model.save(\"m.keras\") or model.save(\"m.h5\")")
    if not os.path.isfile(path):
        raise Refused("no such file")
    with open(path, "rb") as f:
        magic = f.read(8)
    if magic.startswith(b"PK"):
        return read_keras_zip(path)
    if magic == b"\x89HDF\r\n\x1a\n":
        return read_h5(path)
    size = os.path.getsize(path)
    if size > MAX_CONFIG_BYTES:
        raise Refused(f"the file is {size:,} bytes, more than this tool reads as a model config "
                      f"({MAX_CONFIG_BYTES:,}): not a Keras model's JSON")
    with open(path, "rb") as f:
        raw = f.read(MAX_CONFIG_BYTES + 1)
    if len(raw) > MAX_CONFIG_BYTES:
        raise Refused(f"the file holds more than {MAX_CONFIG_BYTES:,} bytes: not a Keras model's JSON")
    config = parse_json(raw, "the file")
    return config, config.get("keras_version")   # model.to_json() of tf-keras 2 names its version


# What reading a zip entry can raise on a damaged or hostile zip: a bad CRC or header (BadZipFile), a
# corrupt deflate, bzip2 or lzma stream (zlib.error, OSError, LZMAError, EOFError), a compression
# method Python lacks (NotImplementedError), an encrypted entry (RuntimeError).
ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, EOFError, OSError, ValueError)
try:
    import lzma
    ZIP_ERRORS += (lzma.LZMAError,)
except ImportError:   # a Python without lzma refuses lzma entries with NotImplementedError
    pass


def read_keras_zip(path):
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            if "config.json" not in names:
                raise Refused("a zip without config.json, not a Keras 3 .keras file")
            config = parse_json(zip_entry(z, "config.json", MAX_CONFIG_BYTES), "its config.json")
            version = None
            if "metadata.json" in names:
                try:
                    metadata = parse_json(zip_entry(z, "metadata.json", MAX_METADATA_BYTES), "its metadata.json",
                                          model=False)
                    version = metadata.get("keras_version") if isinstance(metadata, dict) else None
                except Refused as e:
                    if not str(e).startswith("its metadata.json is not"):   # unreadable, not merely odd
                        raise
            return config, version
    except ZIP_ERRORS as e:
        raise Refused(f"not a readable zip ({type(e).__name__}: {e})") from None


def zip_entry(z, name, limit):
    """The bytes of one entry, refused before inflating when it declares more than `limit` bytes, and
    read in bounded chunks so that a header that understates the size cannot make it read more."""
    info = z.getinfo(name)
    if info.file_size > limit:
        raise Refused(f"its {name} declares {info.file_size:,} bytes uncompressed, more than this tool reads "
                      f"({limit:,}): a damaged or hostile .keras file")
    chunks, total = [], 0
    try:
        with z.open(info) as f:
            while True:
                chunk = f.read(min(1 << 16, limit + 1 - total))
                if not chunk:
                    break
                total += len(chunk)
                if total > limit:
                    raise Refused(f"its {name} inflates to more than {limit:,} bytes: a damaged or hostile "
                                  ".keras file")
                chunks.append(chunk)
    except ZIP_ERRORS as e:
        raise Refused(f"its {name} cannot be read from the zip ({type(e).__name__}: {e})") from None
    return b"".join(chunks)


def read_h5(path):
    try:
        import h5py  # noqa: PLC0415
    except ImportError:
        raise Refused("an HDF5 file: reading it needs h5py (pip install h5py)") from None
    try:
        with h5py.File(path, "r") as f:
            if "model_config" not in f.attrs:
                raise Refused("an HDF5 file without a model_config attribute: a weights-only file, not a "
                              "whole model saved with model.save(\"x.h5\")")
            config = parse_json(h5_text(f, "model_config", MAX_CONFIG_BYTES), "its model_config")
            version = None
            if "keras_version" in f.attrs:
                try:
                    version = h5_text(f, "keras_version", MAX_METADATA_BYTES)
                except Refused:   # an odd version attribute does not stop the conversion
                    version = None
            return config, version
    except (OSError, RuntimeError, ValueError, KeyError, TypeError) as e:
        raise Refused(f"not a readable HDF5 file ({type(e).__name__}: {e})") from None


def h5_text(f, key, limit):
    """A string attribute, its size checked before it is read where HDF5 says it (fixed-length strings)
    and after (variable-length ones, which HDF5 holds in the file itself)."""
    attr = f.attrs.get_id(key)
    if attr.shape not in ((), (1,)) or attr.dtype.kind not in "SOU":
        raise Refused(f"its {key} attribute is not one string (shape {attr.shape}, type {attr.dtype})")
    if attr.dtype.kind in "SU" and attr.dtype.itemsize > limit:
        raise Refused(f"its {key} attribute is {attr.dtype.itemsize:,} bytes, more than this tool reads "
                      f"({limit:,})")
    value = f.attrs[key]
    if getattr(value, "shape", ()) == (1,):
        value = value[0]
    if hasattr(value, "item") and not isinstance(value, (bytes, str)):
        value = value.item()
    if not isinstance(value, (bytes, str)):
        raise Refused(f"its {key} attribute is not a string")
    if len(value) > limit:
        raise Refused(f"its {key} attribute is {len(value):,} bytes, more than this tool reads ({limit:,})")
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value


def parse_json(raw, where, model=True):
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", errors="replace")
    try:
        config = json.loads(raw)
    except RecursionError:
        raise Refused(f"{where} is not a Keras model config: its JSON nests deeper than "
                      f"{MAX_JSON_DEPTH} levels") from None
    except json.JSONDecodeError as e:
        raise Refused(f"{where} is not JSON, so not a Keras model config ({e})") from None
    except ValueError as e:   # an integer of more digits than Python converts
        raise Refused(f"{where} is not a Keras model config: it holds a number this tool does not read "
                      f"({str(e).split(':')[0]})") from None
    if json_depth(config) > MAX_JSON_DEPTH:
        raise Refused(f"{where} is not a Keras model config: its JSON nests deeper than {MAX_JSON_DEPTH} levels")
    if model and (not isinstance(config, dict) or "class_name" not in config):
        raise Refused(f"{where} is not a Keras model config (no class_name at its root)")
    return config


def json_depth(value):
    """How deep lists and objects nest in a parsed JSON value, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, depth)
            if depth <= MAX_JSON_DEPTH:
                stack.extend((c, depth + 1) for c in (v.values() if isinstance(v, dict) else v))
    return deepest


def layer_chain(model):
    """The model's layers in data-flow order, as (class_name, config) pairs, InputLayer included
    when the model has one; None for a functional model that is not one chain (a graph)."""
    cls = model.get("class_name")
    cfg = model.get("config")
    if cfg is not None and not isinstance(cfg, (dict, list)) or isinstance(cfg, list) and cls != "Sequential":
        raise Refused("the model's config is not a JSON object: not a Keras model config")
    if cls == "Sequential":
        layers = cfg if isinstance(cfg, list) else (cfg or {}).get("layers", [])
        if not isinstance(layers, list):
            raise Refused("the model's layers are not a JSON list: not a Keras model config")
        chain = [entry(l, i) for i, l in enumerate(layers)]
        build = None if isinstance(cfg, list) else (cfg or {}).get("build_input_shape")
        return chain, build, (cfg or {}).get("name", "sequential") if isinstance(cfg, dict) else "sequential"
    if cls in ("Functional", "Model"):
        return functional_chain(cfg or {}), None, (cfg or {}).get("name", "model")
    raise Refused(f"the model is a '{name_of(cls)}': only Sequential and functional models can be written as "
                  "tpudsl types")


def entry(l, i):
    """(class name, config) of one layer of the config's list, Keras' aliases read as their classes."""
    if not isinstance(l, dict) or not isinstance(l.get("config") or {}, dict):
        raise Refused(f"layer #{i} of the config is not a JSON object with a config object: not a Keras model "
                      "config")
    cls = l.get("class_name")
    return ALIASES.get(cls, cls) if isinstance(cls, str) else cls, l.get("config") or {}


def inbound_names(node):
    """The layer names a node reads, in Keras 3's (keras_history) or tf-keras 2's spelling."""
    names = []

    def walk(x):
        if isinstance(x, dict):
            config = x.get("config")
            hist = config.get("keras_history") if x.get("class_name") == "__keras_tensor__" and \
                isinstance(config, dict) else None
            if hist:
                if not isinstance(hist, list):
                    raise Refused(f"an inbound node's keras_history {shown(hist)} is not a list: not a Keras "
                                  "model config")
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
    if spec and not (isinstance(spec, list) and all(isinstance(s, list) and s and isinstance(s[0], str) for s in spec)):
        raise Refused(f"the functional model's inputs or outputs {shown(spec)} are not layer names")
    return [s[0] for s in spec or []]


def listed(names, most=5):
    """Names for a message: quoted, the first few."""
    shown_names = ", ".join(repr(name_of(n)) for n in names[:most])
    return shown_names + (f", ... ({len(names)} in all)" if len(names) > most else "")


def functional_chain(cfg):
    """The layers of a functional model that is one chain, in order; None when it is not one (several
    inputs or outputs, a layer called more than once, one that reads or feeds several): a graph."""
    layers = cfg.get("layers", [])
    if not isinstance(layers, list):
        raise Refused("the model's layers are not a JSON list: not a Keras model config")
    by_name = {}
    for i, l in enumerate(layers):
        entry(l, i)
        name = l.get("name") or (l.get("config") or {}).get("name")
        if not isinstance(name, str):
            raise Refused(f"layer #{i} of the functional model has no name ({shown(name)}): not a Keras model config")
        by_name[name] = l
    inputs = endpoint_names(cfg.get("input_layers"))
    outputs = endpoint_names(cfg.get("output_layers"))
    if len(inputs) != 1 or len(outputs) != 1:
        return None
    readers = {name: [] for name in by_name}
    for name, l in by_name.items():
        nodes = l.get("inbound_nodes") or []
        label = f"layer '{name_of(name)}' ({name_of(l.get('class_name'))})"
        if not isinstance(nodes, list):
            raise Refused(f"{label} has inbound nodes {shown(nodes)}, not a list: not a Keras model config")
        if len(nodes) > 1:
            return None
        feeds = inbound_names(nodes[0]) if nodes else []
        if len(feeds) > 1:
            return None
        if feeds:
            if not isinstance(feeds[0], str) or feeds[0] not in by_name:
                raise Refused(f"{label} reads {shown(feeds[0])}, which is not a layer of the model")
            readers[feeds[0]].append(name)
    if any(len(rs) > 1 for rs in readers.values()):
        return None
    for end in inputs + outputs:
        if end not in by_name:
            raise Refused(f"the functional model's input or output '{name_of(end)}' is not one of its layers")
    order, seen = [inputs[0]], {inputs[0]}
    while order[-1] != outputs[0]:
        nxt = readers.get(order[-1], [])
        if not nxt or nxt[0] in seen:
            raise Refused(f"the output '{name_of(outputs[0])}' is not reached from the input '{name_of(inputs[0])}' "
                          "through one chain of layers")
        order.append(nxt[0])
        seen.add(nxt[0])
    unused = [n for n in by_name if n not in seen]
    if unused:
        raise Refused(f"layer '{name_of(unused[0])}' ({name_of(by_name[unused[0]].get('class_name'))}) is not on "
                      "the chain from the input to the output")
    return [entry(by_name[n], i) for i, n in enumerate(order)]


# A node's name in the header: Keras' layer name, written into a C++ string literal as it is, so only
# characters that need no escaping there (and that no comment or trigraph is made of).
NODE_NAME = re.compile(r"[A-Za-z0-9_./-]{1,200}")


class GraphLayer:
    """One layer of a functional model's config: its name, class, config, place in the config's list,
    and its calls (Keras' inbound nodes), each a list of the tensors it reads as (layer, call, output)."""

    def __init__(self, name, cls, cfg, index, calls, options=None):
        self.name, self.cls, self.cfg, self.index, self.calls = name, cls, cfg, index, calls
        self.options = options or [{} for _ in calls]   # per call: a MultiHeadAttention's use_causal_mask

    def label(self):
        return f"layer '{name_of(self.name)}' ({name_of(self.cls)})"


class GraphNode:
    """One call of a layer (an Input is one call of its InputLayer): what it reads, its name in the header."""

    def __init__(self, layer, call, sources):
        self.layer, self.call, self.sources = layer, call, sources
        self.key = (layer.name, call)
        self.readers = []
        self.name = self.spec = self.shape = None

    def label(self):
        return self.layer.label() + (f" (its call #{self.call + 1})" if self.call else "")


def tensor_refs(node, label, cls=None):
    """The tensors one call reads, as (layer, call, output), in Keras 3's spelling ({"args": [...],
    "kwargs": {...}}, each tensor a __keras_tensor__ with its keras_history) or tf-keras 2's ([[layer,
    call, output, kwargs], ...]). Refuses keyword arguments that are set (training=True, a mask), but
    a MultiHeadAttention's key (read after the query and the value) and use_causal_mask."""
    refs = []

    def reference(hist, where):
        if not (isinstance(hist, list) and len(hist) >= 3 and isinstance(hist[0], str) and is_int(hist[1])
                and is_int(hist[2]) and hist[1] >= 0 and hist[2] >= 0):
            raise Refused(f"{label} reads {shown(hist)} ({where}), not a reference to a layer's output: not a Keras "
                          "model config")
        refs.append((hist[0], hist[1], hist[2]))

    def keywords(kwargs, where):
        if not isinstance(kwargs, dict):
            raise Refused(f"{label} is called with keyword arguments {shown(kwargs)}, not a JSON object: not a "
                          "Keras model config")
        for key, value in kwargs.items():
            if cls in ATTENTIONS and key in ATTENTION_KEYWORDS:
                continue   # attention_call reads them
            if value is not None:
                raise Refused(f"{label} is called with {name_of(key)}={shown(value)} ({where}): tpudsl calls its "
                              "layers on their inputs alone")

    if isinstance(node, dict):   # Keras 3
        args, kwargs = node.get("args", []), node.get("kwargs", {})
        if not isinstance(args, list):
            raise Refused(f"{label} has arguments {shown(args)}, not a list: not a Keras model config")
        keywords(kwargs, "a keyword argument")
        if cls == "MultiHeadAttention" and isinstance(kwargs, dict) and kwargs.get("key") is not None:
            args = args + [kwargs["key"]]
        stack = [args]
        while stack:   # the tensors in order, through the lists that hold them (a merge's)
            x = stack.pop()
            if isinstance(x, list):
                stack.extend(reversed(x))
            elif isinstance(x, dict) and x.get("class_name") == "__keras_tensor__":
                config = x.get("config")
                reference(config.get("keras_history") if isinstance(config, dict) else None, "a keras_history")
            elif x is not None:
                raise Refused(f"{label} is called with the argument {shown(x)}: tpudsl calls its layers on "
                              "their inputs alone")
    elif isinstance(node, list):   # tf-keras 2
        for x in node:
            reference(x, "an inbound node")
            keywords(x[3] if len(x) > 3 else {}, "an inbound node's keyword argument")
    else:
        raise Refused(f"{label} has an inbound node {shown(node)}, not a JSON object or list: not a Keras "
                      "model config")
    return refs


def endpoint_refs(spec, what):
    """input_layers/output_layers as (layer, call, output): ['a', 0, 0] (Keras 3, one) or [['a', 0, 0], ...]."""
    entries = [spec] if isinstance(spec, list) and spec and isinstance(spec[0], str) else spec
    if not isinstance(entries, list) or not all(isinstance(e, list) and len(e) >= 3 and isinstance(e[0], str) and
                                                is_int(e[1]) and is_int(e[2]) and e[1] >= 0 and e[2] >= 0
                                                for e in entries):
        raise Refused(f"the functional model's {what} {shown(spec)} are not references to layers' outputs")
    return [(e[0], e[1], e[2]) for e in entries]


def read_graph(cfg):
    """A functional model's graph: its nodes in data-flow order (the Inputs first, in the model's order,
    then Keras' order of the layers where the data flow allows), and its outputs, as nodes. Refuses
    what a tpudsl Functional cannot hold."""
    layers = cfg.get("layers", [])
    if not isinstance(layers, list):
        raise Refused("the model's layers are not a JSON list: not a Keras model config")
    by_name = {}
    for i, l in enumerate(layers):
        cls, lcfg = entry(l, i)
        name = l.get("name") or lcfg.get("name")
        if not isinstance(name, str):
            raise Refused(f"layer #{i} of the functional model has no name ({shown(name)}): not a Keras model config")
        label = f"layer '{name_of(name)}' ({name_of(cls)})"
        if name in by_name:
            raise Refused(f"{label}: two layers of the model are named '{name_of(name)}'")
        if not NODE_NAME.fullmatch(name):
            raise Refused(f"{label}: its name is not 1 to 200 letters, digits and _ . / - (a graph's node names are "
                          "Keras' layer names, written into the header as C++ string literals): rename the layer")
        nodes = l.get("inbound_nodes") or []
        if not isinstance(nodes, list):
            raise Refused(f"{label} has inbound nodes {shown(nodes)}, not a list: not a Keras model config")
        if cls == "InputLayer" and nodes:
            raise Refused(f"{label} has inbound nodes: an input reads nothing")
        if not isinstance(cls, str):
            raise Refused(f"{label}: the layer has no class_name: this is not a Keras model config")
        if cls in ("Sequential", "Functional", "Model"):
            raise Refused(f"{label}: a nested model is not supported: write its layers into the outer model")
        by_name[name] = GraphLayer(name, cls, lcfg, i, [tensor_refs(n, label, cls) for n in nodes],
                                   [attention_call(n, label) if cls in ATTENTIONS else {} for n in nodes])
    nodes = {}
    for layer in by_name.values():
        for k, refs in enumerate(layer.calls or ([[]] if layer.cls == "InputLayer" else [])):
            nodes[(layer.name, k)] = GraphNode(layer, k, refs)
        if not layer.calls and layer.cls != "InputLayer":
            raise Refused(f"{layer.label()} is not called in the model: a tpudsl graph holds the layers its "
                          "outputs need")

    def node_of(ref, whose):
        name, call, output = ref
        layer = by_name.get(name)
        if layer is None:
            raise Refused(f"{whose} reads '{name_of(name)}', which is not a layer of the model")
        if output != 0:
            raise Refused(f"{whose} reads output #{output} of {layer.label()}: tpudsl's layers have one output each")
        if (name, call) not in nodes:
            raise Refused(f"{whose} reads call #{call + 1} of {layer.label()}, which is called "
                          f"{len(layer.calls)} time(s)")
        return nodes[(name, call)]

    for node in nodes.values():
        node.sources = [node_of(ref, node.label()) for ref in node.sources]
        for source in node.sources:
            source.readers.append(node)
    inputs = [node_of(ref, "the model's inputs") for ref in endpoint_refs(cfg.get("input_layers"), "inputs")]
    outputs = [node_of(ref, "the model's outputs") for ref in endpoint_refs(cfg.get("output_layers"), "outputs")]
    if not inputs or not outputs:
        raise Refused(f"the functional model has {len(inputs)} inputs and {len(outputs)} outputs")
    for node in inputs:
        if node.layer.cls != "InputLayer":
            raise Refused(f"the model's input {node.layer.label()} is not an InputLayer")
    for node in outputs:
        if node.layer.cls == "InputLayer":
            raise Refused(f"the model's output '{name_of(node.layer.name)}' is one of its inputs: a tpudsl graph's "
                          "outputs are layers")
    for ends, what in ((inputs, "input"), (outputs, "output")):
        if len(set(n.key for n in ends)) != len(ends):
            raise Refused(f"the model names one {what} twice: a tpudsl graph names each once")
    input_keys = set(n.key for n in inputs)
    for node in nodes.values():
        if node.layer.cls == "InputLayer" and node.key not in input_keys:
            raise Refused(f"{node.label()} is not one of the model's inputs")
        if node.layer.cls != "InputLayer" and not node.sources:
            raise Refused(f"{node.label()} reads nothing")

    # Every node must lead to an output (tpudsl refuses a node that no output needs).
    needed, stack = set(), list(outputs)
    while stack:
        node = stack.pop()
        if node.key not in needed:
            needed.add(node.key)
            stack.extend(node.sources)
    for node in nodes.values():
        if node.key not in needed:
            what = f"the model's input '{name_of(node.layer.name)}'" if node.layer.cls == "InputLayer" else node.label()
            raise Refused(f"{what} leads to none of the model's outputs: a tpudsl graph holds only what its outputs "
                          "need")

    # Data-flow order: the Inputs, then whichever node is ready first in Keras' order (a layer's calls in
    # turn, each after its first, which declares the layer).
    order = list(inputs)
    waiting = {node.key: len(node.sources) + (node.call > 0) for node in nodes.values()
               if node.layer.cls != "InputLayer"}
    later_calls = {}
    for node in nodes.values():
        if node.call:
            later_calls.setdefault(node.layer.name, []).append(node)
    ready = []

    def release(node):
        for reader in node.readers + (later_calls.get(node.layer.name, []) if node.call == 0 else []):
            waiting[reader.key] -= 1
            if waiting[reader.key] == 0:
                heapq.heappush(ready, (reader.layer.index, reader.call, reader))
    for node in inputs:
        release(node)
    while ready:
        node = heapq.heappop(ready)[-1]
        order.append(node)
        release(node)
    if len(order) != len(nodes):
        placed = set(n.key for n in order)
        stuck = next(n for n in nodes.values() if n.key not in placed)
        raise Refused(f"{stuck.label()} is on a cycle of the graph, or reads one: the outputs are not reached "
                      "from the inputs")
    return order, outputs


# ---------------------------------------------------------------------------------------------
# Converting the layers
# ---------------------------------------------------------------------------------------------

def is_int(value):
    """A JSON integer (Python's bool is an int: true and false are not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_real(value):
    """A finite JSON number (not true or false, not Infinity or NaN)."""
    return is_int(value) or isinstance(value, float) and math.isfinite(value)


def float32(value):
    """`value` rounded to float, as the C++ compiler rounds a float literal."""
    return struct.unpack("f", struct.pack("f", value))[0]


def float_literal(value, key, layer):
    """A C++ float literal of a finite `value` that float holds: neither past its range nor so small that
    the literal rounds to zero or to a denormal (the compiler warns of both)."""
    if value != 0 and not FLT_MIN <= abs(value) <= FLT_MAX:   # before float(): an integer may be past double's range
        layer.refuse(f"{key}={shown(value)} is outside float's range: tpudsl takes it as a float")
    return f"{float(value)!r}f"


def shown(value, limit=120):
    """A value of the input file as messages quote it: JSON, cut short."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def name_of(value, limit=80):
    """A name from the input file as messages quote it: a string as it is, anything else as JSON, cut short;
    the whole message is made one line when it is printed."""
    text = value if isinstance(value, str) else shown(value, limit)
    return text if len(text) <= limit else text[:limit] + "..."


class Layer:
    """One Keras layer being converted: its config, and refusals that name it."""

    def __init__(self, cls, cfg, index):
        self.cls, self.cfg, self.index = cls, cfg, index
        self.name = name_of(cfg.get("name") or f"#{index}")
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
            self.refuse(f"{key}={shown(value)} is not supported: {why}")
        return value

    def ints(self, key, rank, default=None):
        value = self.get(key, default)
        if is_int(value):
            value = [value] * rank
        if not (isinstance(value, list) and len(value) == rank and all(is_int(v) and v > 0 for v in value)):
            self.refuse(f"{key}={shown(value)} is not {rank} positive integer(s)")
        if any(v > MAX_ELEMENTS for v in value):
            self.refuse(f"{key}={shown(value)} is too large: tpudsl's sizes stay under 2^48")
        return value

    def count(self, key, default=None):
        """A positive integer option (units, filters, ...) that a std::size_t template argument takes."""
        value = self.get(key, default)
        if not is_int(value) or value <= 0:
            self.refuse(f"{key}={shown(value)} is not a positive integer")
        if value > MAX_ELEMENTS:
            self.refuse(f"{key}={shown(value)} is too large: tpudsl's sizes stay under 2^48")
        return value

    def real(self, key, default=None):
        """A finite number option (a rate, momentum, epsilon)."""
        value = self.get(key, default)
        if not is_real(value):
            self.refuse(f"{key}={shown(value)} is not a finite number")
        return value

    def sizes(self, shape, params):
        """Refuses a layer whose output or weights are past what tpudsl's std::size_t arithmetic holds."""
        if math.prod(shape) > MAX_ELEMENTS or params > MAX_ELEMENTS:
            self.refuse(f"its output {fmt_shape(shape)} or its {params:,} parameters are too large: tpudsl's "
                        "sizes stay under 2^48")

    def common(self):
        if self.cfg.get("trainable", True) is not True:
            self.refuse("trainable=false is not supported: tpudsl trains every layer's weights")
        dtype = self.cfg.get("dtype")
        if isinstance(dtype, dict):
            config = dtype.get("config")
            dtype = config.get("name", dtype.get("class_name")) if isinstance(config, dict) else dtype.get("class_name")
        if dtype not in (None, "float32"):
            self.refuse(f"dtype policy '{name_of(dtype)}' is not supported: tpudsl computes in float32")

    def finish(self):
        """Refuses options this tool does not know that are set to something other than off."""
        for key, value in self.cfg.items():
            if key not in self.used and value not in (None, False, 0, "", [], {}):
                self.refuse(f"option {name_of(key)}={shown(value)} is not supported by tpudsl (or not known to "
                            "this tool)")

    def activation(self, key="activation"):
        act = self.get(key, "linear")
        if act is None:
            act = "linear"
        if isinstance(act, dict):   # Keras 3 may write {"class_name": "function", "config": "relu"}
            act = act.get("config") if isinstance(act.get("config"), str) else act.get("class_name")
        if not isinstance(act, str) or act not in ACTIVATIONS:
            self.refuse(f"activation '{name_of(act)}' is not supported: tpudsl has {', '.join(ACTIVATIONS)}")
        return ACTIVATIONS[act]

    def initializer(self, key, want):
        init = self.get(key)
        if init is None:
            return
        cls, cfg = (init, {}) if isinstance(init, str) else \
            (init.get("class_name"), init.get("config") or {}) if isinstance(init, dict) else (None, {})
        norm = re.sub(r"[^a-z]", "", cls.lower()) if isinstance(cls, str) else ""

        def number(k, default):   # a number equal to Keras' default, not a string, true, NaN, ...
            v = cfg.get(k, default)
            return is_real(v) and v == default
        if not isinstance(cfg, dict):
            ok = False
        elif want == "glorot_uniform":
            ok = norm == "glorotuniform" and not cfg.get("input_axes") and not cfg.get("output_axes")
        elif want == "zeros":
            ok = norm in ("zeros", "zero")
        elif want == "orthogonal":
            ok = norm == "orthogonal" and number("gain", 1.0)
        else:   # Embedding: RandomUniform(-0.05, 0.05)
            ok = norm in ("uniform", "randomuniform") and number("minval", -0.05) and number("maxval", 0.05)
        if not ok:
            self.refuse(f"{key}={shown(init)} is not supported: tpudsl starts it with Keras' default, {want}")

    def no_extras(self, *keys):
        for key in keys:
            value = self.get(key)
            if value not in (None, False):
                self.refuse(f"{key}={shown(value)} is not supported by tpudsl")

    def channels_last(self):
        fmt = self.get("data_format", "channels_last")
        if fmt not in (None, "channels_last"):
            self.refuse(f"data_format='{name_of(fmt)}' is not supported: tpudsl's tensors are channels_last")


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
        units = layer.count("units")
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
        filters = layer.count("filters")
        kernel = layer.ints("kernel_size", n)
        strides = layer.ints("strides", n, [1] * n)
        padding = layer.expect("padding", ("valid", "same"), "tpudsl pads 'valid' or 'same'", "valid")
        if any(d != 1 for d in layer.ints("dilation_rate", n, [1] * n)):
            layer.refuse(f"dilation_rate={shown(layer.get('dilation_rate'))} is not supported: tpudsl's "
                         "convolutions are not dilated")
        if layer.get("groups", 1) is not None and layer.count("groups", 1) != 1:
            layer.refuse(f"groups={shown(layer.get('groups'))} is not supported: tpudsl's convolutions are not grouped")
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
        vocab, dim = layer.count("input_dim"), layer.count("output_dim")
        layer.initializer("embeddings_initializer", "uniform(-0.05, 0.05)")
        layer.no_extras("embeddings_regularizer", "activity_regularizer", "embeddings_constraint",
                        "quantization_config", "lora_rank", "lora_alpha", "sparse")
        if layer.get("mask_zero"):
            layer.refuse("mask_zero=true is not supported: tpudsl has no masks")
        length = layer.get("input_length")
        if length is not None and not (is_int(length) and length == shape[0] or length == list(shape)):
            layer.refuse(f"input_length={shown(length)} differs from the input's shape {fmt_shape(shape)}")
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
        rate = layer.real("rate")
        if not 0 <= rate < 1 or float32(rate) >= 1:
            layer.refuse(f"rate={shown(rate)} is not in [0, 1) as a float")
        layer.no_extras("noise_shape")
        return f"Dropout<{float_literal(rate, 'rate', layer)}>", shape, 0
    if cls == "Activation":
        return f"Activation<{layer.activation()}>", shape, 0
    if cls == "BatchNormalization":
        return batch_normalization(layer, shape)
    if cls == "LayerNormalization":
        return layer_normalization(layer, shape)
    if cls == "PositionEmbedding":
        return position_embedding(layer, shape)
    if cls in ATTENTIONS:
        layer.refuse(f"a {cls} reads a query and a value: it is written in a graph (Functional)")
    if cls in ("Reshape", "Permute", "RepeatVector", "Identity"):
        return reshaping(layer, shape)
    if cls == "InputLayer":
        layer.refuse("an InputLayer can only come first")
    if cls in MERGES:
        layer.refuse(f"a {cls} merges several inputs: it is written in a graph (Functional), where it reads "
                     "two or more layers")
    hint = ""
    if cls in ("ReLU", "Softmax"):
        hint = f" (Activation('{cls.lower()}') is)"
    layer.refuse(f"tpudsl has no {cls} layer{hint}; it has Dense, Conv1D, Conv2D, MaxPooling1D, "
                 "MaxPooling2D, AveragePooling1D, AveragePooling2D, GlobalAveragePooling1D, "
                 "GlobalAveragePooling2D, GlobalMaxPooling1D, GlobalMaxPooling2D, Embedding, LSTM, GRU, "
                 "Flatten, Dropout, Activation, BatchNormalization, LayerNormalization, PositionEmbedding, "
                 "TimeDistributed(Dense), Reshape, Permute, "
                 "RepeatVector, Identity and the merges Add, Subtract, Multiply, Average, Maximum, Minimum, "
                 "Concatenate and Dot, and MultiHeadAttention")


def reshaping(layer, shape):
    """Reshape, Permute, RepeatVector and Identity: no weights, the elements rearranged."""
    cls = layer.cls
    if cls == "Identity":
        return "Identity", shape, 0
    if cls == "RepeatVector":
        n = layer.count("n")
        if len(shape) != 1:
            layer.refuse(f"a RepeatVector takes a rank-1 input (features), not {fmt_shape(shape)}")
        return f"RepeatVector<{n}>", (n, shape[0]), 0
    if cls == "Permute":
        dims = layer.get("dims")
        if not (isinstance(dims, list) and all(is_int(d) for d in dims) and
                sorted(dims) == list(range(1, len(shape) + 1))):
            layer.refuse(f"dims={shown(dims)} is not a permutation of 1..{len(shape)}, the axes of its input "
                         f"{fmt_shape(shape)} (Keras' dims count from 1)")
        return f"Permute<{', '.join(map(str, dims))}>", tuple(shape[d - 1] for d in dims), 0
    target = layer.get("target_shape")
    if not (isinstance(target, list) and target and all(is_int(d) and (d > 0 or d == -1) for d in target)
            and target.count(-1) <= 1):
        layer.refuse(f"target_shape={shown(target)} is not positive integers (one of them -1 at most)")
    if any(d > MAX_ELEMENTS for d in target):
        layer.refuse(f"target_shape={shown(target)} is too large: tpudsl's sizes stay under 2^48")
    known = math.prod(d for d in target if d != -1)
    size = math.prod(shape)
    if -1 in target:
        if size % known:
            layer.refuse(f"target_shape={shown(target)} does not fit its input {fmt_shape(shape)}")
        target = [size // known if d == -1 else d for d in target]
    if math.prod(target) != size:
        layer.refuse(f"target_shape={shown(target)} holds other than the {size:,} elements of its input "
                     f"{fmt_shape(shape)}")
    return f"Reshape<{', '.join(map(str, target))}>", tuple(target), 0


def sample_axis(axis, rank):
    """The per-sample axis of Keras' `axis`, which counts the batch axis (-1 the last, 1 the first
    per-sample one), or None when it names none of the `rank` per-sample axes."""
    if not is_int(axis):
        return None
    if -rank <= axis < 0:
        return rank + axis
    return axis - 1 if 0 < axis <= rank else None


def convert_merge(layer, shapes, sources):
    """Returns (tpudsl spec, output shape) of a merge on inputs of `shapes`, read from the nodes `sources`."""
    cls = layer.cls
    layer.common()
    named = [f"'{name_of(src)}' {fmt_shape(shape)}" for src, shape in zip(sources, shapes)]
    if len(shapes) < 2 or cls in ("Subtract", "Dot") and len(shapes) != 2:
        layer.refuse(f"it reads {len(shapes)} input(s): a {cls} takes " +
                     ("two" if cls in ("Subtract", "Dot") else "two or more"))
    if cls in ELEMENTWISE:
        for k in range(1, len(shapes)):
            if shapes[k] != shapes[0]:
                layer.refuse(f"it merges {named[0]} and {named[k]}: tpudsl's {cls} takes inputs of one shape "
                             "(no broadcasting)")
        return cls, shapes[0]
    if cls == "Concatenate":
        axis = layer.get("axis", -1)
        a = sample_axis(axis, len(shapes[0]))
        if a is None:
            layer.refuse(f"axis={shown(axis)} is not a per-sample axis of its rank-{len(shapes[0])} input "
                         f"{named[0]} (Keras' axis counts the batch axis: -1 the last, 1 the first after it)")
        for k in range(1, len(shapes)):
            if len(shapes[k]) != len(shapes[0]) or any(d != e for i, (d, e) in enumerate(zip(shapes[0], shapes[k]))
                                                       if i != a):
                layer.refuse(f"it concatenates {named[0]} and {named[k]} on axis {axis}: they differ on "
                             "another axis")
        out = list(shapes[0])
        out[a] = sum(shape[a] for shape in shapes)
        return ("Concatenate<>" if axis == -1 else f"Concatenate<{axis}>"), tuple(out)
    # Dot: Keras' batch_dot on inputs of rank 1 or 2 (per sample).
    if layer.get("normalize"):
        layer.refuse("normalize=true is not supported: tpudsl's Dot is the plain sum of products")
    axes = layer.get("axes")
    pair = axes if isinstance(axes, list) and len(axes) == 2 else [axes, axes]
    if not all(is_int(x) for x in pair):
        layer.refuse(f"axes={shown(axes)} is not an axis or a pair of axes")
    for shape, label in zip(shapes, named):
        if len(shape) not in (1, 2):
            layer.refuse(f"a Dot on the rank-{len(shape)} input {label} is not supported: tpudsl's Dot takes "
                         "inputs of rank 1 or 2")
    a, b = sample_axis(pair[0], len(shapes[0])), sample_axis(pair[1], len(shapes[1]))
    if a is None or b is None:
        layer.refuse(f"axes={shown(axes)} are not per-sample axes of {named[0]} and {named[1]} (Keras' axes count "
                     "the batch axis)")
    if shapes[0][a] != shapes[1][b]:
        layer.refuse(f"axes={shown(axes)} pair extents that differ: {shapes[0][a]} of {named[0]}, {shapes[1][b]} "
                     f"of {named[1]}")
    out = tuple(d for i, d in enumerate(shapes[0]) if i != a) + tuple(d for i, d in enumerate(shapes[1]) if i != b)
    spec = f"Dot<{pair[0]}, {pair[1]}>" if isinstance(axes, list) else f"Dot<{axes}>"
    return spec, out or (1,)


def initializer_is(layer, key, want):
    """True when the layer's initializer `key` is Keras' `want` (or not given)."""
    init = layer.get(key)
    cls = init if isinstance(init, str) or init is None else init.get("class_name") if isinstance(init, dict) else ""
    return cls is None or re.sub(r"[^a-z]", "", str(cls).lower()) in (want, want[:-1])


def last_axis_normalization(layer, shape, initializers):
    """What BatchNormalization and LayerNormalization share: the last axis, centred and scaled, the
    given initializers Keras' defaults, a positive epsilon (returned)."""
    axis = layer.get("axis", -1)
    if isinstance(axis, list) and len(axis) == 1:
        axis = axis[0]
    if not is_int(axis) or axis not in (-1, len(shape)):
        layer.refuse(f"axis={shown(axis)} is not supported: tpudsl normalises the last (channel) axis")
    epsilon = layer.real("epsilon", 1e-3)
    if not epsilon > 0:
        layer.refuse(f"epsilon={shown(epsilon)} is not positive")
    for key in ("center", "scale"):
        if layer.get(key, True) is not True:
            layer.refuse(f"{key}=false is not supported: tpudsl's {layer.cls} has gamma and beta")
    for key, want in initializers:
        if not initializer_is(layer, key, want):
            layer.refuse(f"{key}={shown(layer.get(key))} is not supported: tpudsl starts it with Keras' default, {want}")
    layer.no_extras("beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint")
    return epsilon


def batch_normalization(layer, shape):
    """BatchNormalization over the last axis, with Keras' initializers, centred and scaled."""
    epsilon = last_axis_normalization(layer, shape, (("beta_initializer", "zeros"), ("gamma_initializer", "ones"),
                                                     ("moving_mean_initializer", "zeros"),
                                                     ("moving_variance_initializer", "ones")))
    momentum = layer.real("momentum", 0.99)
    if not 0 <= momentum <= 1:
        layer.refuse(f"momentum={shown(momentum)} is not in [0, 1]")
    if layer.get("synchronized"):
        layer.refuse("synchronized=true is not supported: tpudsl normalises each fixed micro-batch on its own")
    if layer.get("renorm"):
        layer.refuse("renorm=true is not supported by tpudsl")
    layer.no_extras("virtual_batch_size", "adjustment", "renorm_clipping")
    layer.get("fused")            # an implementation choice of TensorFlow's: the same results
    layer.get("renorm_momentum")  # read only with renorm
    args = trim_defaults([float_literal(momentum, "momentum", layer), float_literal(epsilon, "epsilon", layer)],
                         ["0.99f", "0.001f"])
    return f"BatchNormalization<{', '.join(args)}>" if args else "BatchNormalization<>", shape, 4 * shape[-1]


def position_embedding(layer, shape):
    """keras-hub's PositionEmbedding: a learned table of sequence_length rows, glorot_uniform."""
    length = layer.get("sequence_length")
    if not is_int(length) or length < 1:
        layer.refuse(f"sequence_length={shown(length)} is not a whole number of at least 1")
    if len(shape) != 2 or shape[0] > length:
        layer.refuse(f"it reads {fmt_shape(shape)}: tpudsl's PositionEmbedding reads a sequence (timesteps, "
                     f"features) of at most sequence_length={length} timesteps")
    if not initializer_is(layer, "initializer", "glorotuniform"):
        layer.refuse(f"initializer={shown(layer.get('initializer'))} is not supported: tpudsl starts it with "
                     "keras-hub's default, glorot_uniform")
    return f"PositionEmbedding<{length}>", shape, length * shape[-1]


def layer_normalization(layer, shape):
    """LayerNormalization over the last axis, centred and scaled, with Keras' initializers."""
    epsilon = last_axis_normalization(layer, shape, (("beta_initializer", "zeros"), ("gamma_initializer", "ones")))
    if layer.get("rms_scaling"):
        layer.refuse("rms_scaling=true is not supported by tpudsl")
    args = trim_defaults([float_literal(epsilon, "epsilon", layer)], ["0.001f"])
    return f"LayerNormalization<{', '.join(args)}>" if args else "LayerNormalization<>", shape, 2 * shape[-1]


def time_distributed(layer, shape):
    """TimeDistributed(Dense) on (timesteps, features): the Dense converted as on one timestep."""
    inner = layer.get("layer")
    if not isinstance(inner, dict):
        layer.refuse("its config holds no wrapped layer")
    inner_cls = inner.get("class_name")
    inner_cls = ALIASES.get(inner_cls, inner_cls) if isinstance(inner_cls, str) else name_of(inner_cls)
    if inner_cls != "Dense":
        layer.refuse(f"TimeDistributed({name_of(inner_cls)}) is not supported: tpudsl's TimeDistributed wraps a Dense only")
    if len(shape) != 2:
        layer.refuse(f"a TimeDistributed(Dense) on a rank-{len(shape)} input {fmt_shape(shape)} is not supported: "
                     "tpudsl's takes a rank-2 input (timesteps, features)")
    if not isinstance(inner.get("config") or {}, dict):
        layer.refuse("its wrapped layer's config is not a JSON object")
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
    units = layer.count("units")
    for key, want in (("activation", "tanh"), ("recurrent_activation", "sigmoid")):
        act = layer.get(key, want)
        if isinstance(act, dict):   # Keras 3 may write {"class_name": "function", "config": "tanh"}
            act = act.get("config") if isinstance(act.get("config"), str) else act.get("class_name")
        if act != want:
            layer.refuse(f"{key}={shown(act)} is not supported: tpudsl's {cls} uses {want}")
    for key, why in (("return_state", "tpudsl's layers have one output"),
                     ("go_backwards", "tpudsl reads sequences from the first step"),
                     ("stateful", "tpudsl starts every batch from a zero state"),
                     ("time_major", "tpudsl's sequences are (batch, timesteps, features)")):
        if layer.get(key):
            layer.refuse(f"{key}=true is not supported: {why}")
    for key in ("dropout", "recurrent_dropout"):
        if layer.get(key, 0.0) not in (None, 0, 0.0):
            layer.refuse(f"{key}={shown(layer.get(key))} is not supported: tpudsl's {cls} has no dropout "
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
    sequences = layer.get("return_sequences", False)
    if sequences is not None and not isinstance(sequences, bool):
        layer.refuse(f"return_sequences={shown(sequences)} is not true or false")
    sequences = bool(sequences)
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
        shape, dtype = input_layer(Layer(cls, cfg, 0))
    if shape is None and layers:
        first = layers[0][1]
        shape = first.get("batch_input_shape") or first.get("batch_shape")
        dtype = dtype or (first.get("dtype") if isinstance(first.get("dtype"), str) else None)
    if shape is None:
        shape = build_shape
    if shape is None:
        raise Refused("the model does not say its input shape: declare it with keras.Input(shape) before "
                      "saving it")
    dims, dtype = sample_input(shape, dtype)
    return dims, dtype, layers


def input_layer(layer):
    """An InputLayer's batch shape (None when it has none) and dtype."""
    cfg = layer.cfg
    shape = cfg.get("batch_shape") or cfg.get("batch_input_shape")
    if shape is None and cfg.get("shape") is not None:
        shape = [None] + cfg["shape"] if isinstance(cfg["shape"], list) else cfg["shape"]
    if cfg.get("sparse") or cfg.get("ragged"):
        layer.refuse("sparse or ragged inputs are not supported by tpudsl")
    return shape, cfg.get("dtype")


def sample_input(shape, dtype):
    """The per-sample shape of a batch shape, and the name of its element type, both checked."""
    if not isinstance(shape, list):
        raise Refused(f"the input shape {shown(shape)} is not a list of dimensions")
    dims = list(shape[1:])
    if not dims or None in dims:
        raise Refused(f"the input shape {shown(shape[1:])} is not fully known: tpudsl needs every "
                      "dimension of a sample (no None)")
    if any(not is_int(d) or d <= 0 for d in dims):
        raise Refused(f"the input shape {shown(shape[1:])} is not positive integers")
    if math.prod(dims) > MAX_ELEMENTS:
        raise Refused(f"the input shape {shown(shape[1:])} is too large: tpudsl's sizes stay under 2^48")
    if isinstance(dtype, dict):
        dtype = dtype.get("config").get("name") if isinstance(dtype.get("config"), dict) else None
    dtype = dtype or "float32"
    if not isinstance(dtype, str) or dtype not in INPUT_TYPES:
        raise Refused(f"the input's dtype '{name_of(dtype)}' is not supported by tpudsl")
    return tuple(dims), dtype


def convert(model, name, namespace, source, version):
    chain, build_shape, model_name = layer_chain(model)
    if chain is None:
        return convert_graph(model.get("config") or {}, name, namespace, source, version, model_name)
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
        layer.sizes(shape, params)
        total += params
        if total > MAX_ELEMENTS:
            layer.refuse(f"the model's {total:,} parameters up to it are too many: tpudsl's sizes stay under 2^48")
        entries.append((spec, fmt_shape(shape)))
    return header(name, namespace, entries, total, shape, source, version, model_name, cpp_type)


def attention_call(node, label):
    """A MultiHeadAttention call's options: {"use_causal_mask": bool}. Refuses masks it is given (tpudsl's
    masking is Embedding's mask_zero), a mask or a training flag set, and an argument of another type."""
    kwargs = node.get("kwargs", {}) if isinstance(node, dict) else {}
    if not isinstance(kwargs, dict):
        return {}
    for key in ("query_mask", "value_mask", "key_mask", "attention_mask", "training"):
        if kwargs.get(key) is not None:
            raise Refused(f"{label} is called with {key}={shown(kwargs[key])}: tpudsl's MultiHeadAttention takes "
                          "no mask at its call")
    causal = kwargs.get("use_causal_mask", False)
    scores = kwargs.get("return_attention_scores", False)
    for key, value in (("use_causal_mask", causal), ("return_attention_scores", scores)):
        if not isinstance(value, bool):
            raise Refused(f"{label} is called with {key}={shown(value)}, not true or false")
    return {"use_causal_mask": causal}


def convert_attention(layer, shapes, options):
    """MultiHeadAttention on (query, value[, key]) shapes: its spec, output shape and parameter count."""
    if len(shapes) not in (2, 3):
        layer.refuse(f"it reads {len(shapes)} tensors: a MultiHeadAttention reads a query, a value and maybe a key")
    for what, shape in zip(("query", "value", "key"), shapes):
        if len(shape) != 2:
            layer.refuse(f"its {what} is {fmt_shape(shape)}: tpudsl attends over sequences (timesteps, features)")
    if len(shapes) == 3 and shapes[2][0] != shapes[1][0]:
        layer.refuse(f"its key {fmt_shape(shapes[2])} and value {fmt_shape(shapes[1])} have other lengths")
    heads, key_dim = layer.get("num_heads"), layer.get("key_dim")
    value_dim = layer.get("value_dim") if layer.get("value_dim") is not None else key_dim
    for key, v in (("num_heads", heads), ("key_dim", key_dim), ("value_dim", value_dim)):
        if not is_int(v) or v < 1:
            layer.refuse(f"{key}={shown(v)} is not a whole number of at least 1")
    dropout = layer.real("dropout", 0.0)
    if not 0 <= dropout < 1 or float32(dropout) >= 1:
        layer.refuse(f"dropout={shown(dropout)} is not in [0, 1) as a float")
    if layer.get("use_bias", True) is not True:
        layer.refuse("use_bias=false is not supported: tpudsl's MultiHeadAttention has its biases")
    for key in ("output_shape", "sliding_window"):
        if layer.get(key) is not None:
            layer.refuse(f"{key}={shown(layer.get(key))} is not supported by tpudsl's MultiHeadAttention")
    if layer.get("use_gate", False):
        layer.refuse("use_gate=true is not supported by tpudsl's MultiHeadAttention")
    axes = layer.get("attention_axes")
    if axes is not None and axes not in ([1], [-2], 1, -2):
        layer.refuse(f"attention_axes={shown(axes)} is not supported: tpudsl attends over the timesteps")
    for key, want in (("kernel_initializer", "glorotuniform"), ("bias_initializer", "zeros")):
        if not initializer_is(layer, key, want):
            layer.refuse(f"{key}={shown(layer.get(key))} is not supported: tpudsl starts it with Keras' default")
    layer.no_extras("kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
                    "bias_constraint")
    layer.get("flash_attention")   # how Keras computes it: the same results
    layer.get("seed")              # dropout's seed: tpudsl draws its masks from the model's
    q, v = shapes[0], shapes[1]
    k = shapes[2] if len(shapes) == 3 else v
    fields = ([f".dropout = {float_literal(dropout, 'dropout', layer)}"] if dropout else []) + \
        ([".use_causal_mask = true"] if options.get("use_causal_mask") else [])
    args = [str(heads), str(key_dim)]
    if value_dim != key_dim or fields:
        args.append(str(value_dim))
    if fields:
        args.append("attention_options{" + ", ".join(fields) + "}")
    params = (q[1] * heads * key_dim + heads * key_dim) + (k[1] * heads * key_dim + heads * key_dim) + \
        (v[1] * heads * value_dim + heads * value_dim) + (heads * value_dim * q[1] + q[1])
    return f"MultiHeadAttention<{', '.join(args)}>", tuple(q), params


def convert_scored_attention(layer, shapes, options):
    """Attention (dot scores) or AdditiveAttention on [query, value(, key)]: spec, output shape, parameters."""
    cls = layer.cls
    if len(shapes) not in (2, 3):
        layer.refuse(f"it reads {len(shapes)} tensors: an {cls} reads [query, value] or [query, value, key]")
    for what, shape in zip(("query", "value", "key"), shapes):
        if len(shape) != 2:
            layer.refuse(f"its {what} is {fmt_shape(shape)}: tpudsl attends over sequences (timesteps, features)")
    key = shapes[2] if len(shapes) == 3 else shapes[1]
    if key[0] != shapes[1][0] or key[1] != shapes[0][1]:
        layer.refuse(f"its key {fmt_shape(key)} needs the value's length and the query's features {fmt_shape(shapes[0])}")
    additive = cls == "AdditiveAttention"
    use_scale = layer.get("use_scale", additive)
    if not isinstance(use_scale, bool):
        layer.refuse(f"use_scale={shown(use_scale)} is not true or false")
    if not additive and layer.get("score_mode", "dot") != "dot":
        layer.refuse(f"score_mode={shown(layer.get('score_mode'))} is not supported: tpudsl's Attention scores by dot "
                     "products")
    dropout = layer.real("dropout", 0.0)
    if not 0 <= dropout < 1 or float32(dropout) >= 1:
        layer.refuse(f"dropout={shown(dropout)} is not in [0, 1) as a float")
    layer.get("seed")   # dropout's seed: tpudsl draws its masks from the model's
    fields = ([f".dropout = {float_literal(dropout, 'dropout', layer)}"] if dropout else []) + \
        ([".use_causal_mask = true"] if options.get("use_causal_mask") else [])
    args = [("true" if use_scale else "false")] if use_scale != additive or fields else []
    if fields:
        args.append("attention_options{" + ", ".join(fields) + "}")
    params = (shapes[0][1] if additive else 1) if use_scale else 0
    return f"{cls}<{', '.join(args)}>", (shapes[0][0], shapes[1][1]), params


def convert_graph(cfg, name, namespace, source, version, model_name):
    """A functional model that is not one chain, as a tpudsl Functional: a Node per layer call."""
    order, outputs = read_graph(cfg)
    several_inputs = sum(node.layer.cls == "InputLayer" for node in order) > 1
    total, cpp_types = 0, set()
    params_of, names = {}, set(node.layer.name for node in order)
    for node in order:
        layer = Layer(node.layer.cls, node.layer.cfg, node.layer.index)
        layer.name = name_of(node.layer.name)
        cls = layer.cls
        if cls == "InputLayer":
            shape, dtype = input_layer(layer)
            if shape is None:
                layer.refuse("the input does not say its shape: declare it with keras.Input(shape)")
            try:
                node.shape, dtype = sample_input(shape, dtype)
            except Refused as e:
                layer.refuse(str(e))
            # An Input that Embeddings read holds integer ids; one that other layers read, floats.
            embedded = [r.layer.cls == "Embedding" for r in node.readers]
            if any(embedded) and not all(embedded):
                other = node.readers[embedded.index(False)]
                layer.refuse(f"it feeds an Embedding and {other.label()}: a tpudsl Input holds token ids or floats, "
                             "not both; give the other layer an input of its own")
            cpp_type = (INPUT_TYPES[dtype] or "std::int32_t") if any(embedded) else None
            cpp_types.add(cpp_type)
            node.name = node.layer.name
            node.spec = f"Input<Shape<{', '.join(map(str, node.shape))}>" + (f", {cpp_type}>" if cpp_type else ">")
            continue
        shapes = [source.shape for source in node.sources]
        if node.call and cls in MERGES + ("BatchNormalization",) + ATTENTIONS:
            why = {"BatchNormalization": "a BatchNormalization is not shared (its moving statistics are one call's)",
                   **{a: f"a {a} is not shared; declare another" for a in ATTENTIONS}}
            layer.refuse(f"it is called {len(node.layer.calls)} times: in tpudsl " +
                         why.get(cls, "a merge is not shared (Shared calls a layer again); make a new merge"))
        if cls in MERGES:
            node.spec, node.shape = convert_merge(layer, shapes, [source.name for source in node.sources])
            params = 0
        elif cls == "MultiHeadAttention":
            node.spec, node.shape, params = convert_attention(layer, shapes, node.layer.options[node.call])
        elif cls in ("Attention", "AdditiveAttention"):
            node.spec, node.shape, params = convert_scored_attention(layer, shapes, node.layer.options[node.call])
        else:
            if len(shapes) != 1:
                layer.refuse(f"it reads {len(shapes)} inputs ({listed([s.name for s in node.sources])}): tpudsl's "
                             f"{cls} takes one")
            # Token ids are a tpudsl graph's Inputs: each call of an Embedding reads one (the first call
            # declares the layer, a further one is Shared; any number of Embeddings in a graph).
            if cls == "Embedding" and node.sources[0].layer.cls != "InputLayer":
                layer.refuse((f"its call #{node.call + 1} reads {node.sources[0].label()}: " if node.call else "") +
                             "an Embedding must read one of the model's inputs directly in tpudsl")
            node.spec, node.shape, params = convert_layer(layer, shapes[0], first=True)
            if cls == "Embedding" and several_inputs and layer.cfg["input_dim"] > 1 << 24:
                layer.refuse(f"input_dim={layer.cfg['input_dim']} is too large for a graph of several inputs: tpudsl "
                             "carries their token ids as float32, exact up to 16,777,216")
        layer.finish()
        layer.sizes(node.shape, params)
        if node.call == 0:
            node.name = node.layer.name
            params_of[node.layer.name] = params
            total += params
            if total > MAX_ELEMENTS:
                layer.refuse(f"the model's {total:,} parameters up to it are too many: tpudsl's sizes stay under "
                             "2^48")
        else:   # Keras' layer reuse: the layer of its first call, called again with the same weights
            if params != params_of[node.layer.name]:
                layer.refuse(f"its call #{node.call + 1} reads {fmt_shape(shapes[0])}, on which its weights would "
                             "have other shapes than on its first call's input")
            node.name = f"{node.layer.name}_{node.call}"
            while node.name in names:
                node.name += "_"
            node.spec = None   # Shared<"the layer's name">
        names.add(node.name)
    return graph_header(name, namespace, order, outputs, total, source, version, model_name,
                        cpp_types - {None})


def qualify(spec, q):
    """A spec's tpudsl names with `q` before them (tpudsl:: outside a namespace)."""
    return re.sub(r"\b(Input|Shape|Dense|Conv1D|Conv2D|MaxPool1D|MaxPool2D|AveragePooling1D|AveragePooling2D|"
                  r"GlobalAveragePooling1D|GlobalAveragePooling2D|GlobalMaxPooling1D|GlobalMaxPooling2D|"
                  r"Embedding|LSTM|GRU|Flatten|Dropout|Activation|BatchNormalization|LayerNormalization|TimeDistributed|"
                  r"Linear|Relu|"
                  r"Softmax|Sigmoid|Tanh|Same|Valid|Size2|Reshape|Permute|RepeatVector|Identity|Add|Subtract|"
                  r"Multiply|Average|Maximum|Minimum|Concatenate|Dot|MultiHeadAttention|attention_options|"
                  r"Attention|AdditiveAttention|"
                  r"PositionEmbedding)\b",
                  q + r"\1", spec)


def header(name, namespace, entries, total, out_shape, source, version, model_name, cpp_type):
    q = "" if namespace else "tpudsl::"
    lines, guard = opening(name, namespace, source, version, model_name,
                           "Its layers are Keras', one for one and in order.", ["tpudsl/model.hpp"], cpp_type)
    lines.append(f"using {name} = {q}Sequential<")
    for i, (spec, shape) in enumerate(entries):
        code = "    " + qualify(spec, q) + (">;" if i == len(entries) - 1 else ",")
        lines.append(code.ljust(39) + ("   " if len(code) >= 39 else "") + "// " + shape)
    lines += ["", f"static_assert({name}::param_count == {total:,}".replace(",", "'") + ");",
              f"static_assert(std::is_same_v<{name}::output_shape, {q}Shape<{', '.join(map(str, out_shape))}>>);"]
    return closing(lines, guard, namespace)


def graph_header(name, namespace, order, outputs, total, source, version, model_name, cpp_types):
    q = "" if namespace else "tpudsl::"
    lines, guard = opening(name, namespace, source, version, model_name,
                           "Its nodes are Keras' layers, named as in Keras; a layer called again is Shared.",
                           ["tpudsl/functional.hpp", "tpudsl/model.hpp"], bool(cpp_types))
    # A node names its sources unless it continues a chain: it reads the node just before it, and is
    # that node's only reader. A merge names them all.
    codes = []
    for i, node in enumerate(order):
        implicit = len(node.sources) == 1 and node.layer.cls not in MERGES + ATTENTIONS and \
            order[i - 1] is node.sources[0] \
            and len(node.sources[0].readers) == 1
        sources = "".join(f', "{s.name}"' for s in ([] if implicit else node.sources))
        spec = qualify(node.spec, q) if node.spec else f'{q}Shared<"{node.layer.name}">'
        codes.append(f'{q}Node<"{node.name}", {spec}{sources}>')
    last = len(outputs) == 1 and outputs[0] is order[-1]
    if not last:
        codes.append(f"{q}Outputs<" + ", ".join(f'"{n.name}"' for n in outputs) + ">")
    width = min(max(len(c) for c in codes) + 8, 80)   # "    " and "," or ">;", then three spaces
    lines.append(f"using {name} = {q}Functional<")
    for i, code in enumerate(codes):
        code = "    " + code + (">;" if i == len(codes) - 1 else ",")
        shape = fmt_shape(order[i].shape) if i < len(order) else ""
        lines.append(code.ljust(width) + ("   " if len(code) >= width else "") + "// " + shape if shape else code)
    lines += ["", f"static_assert({name}::param_count == {total:,}".replace(",", "'") + ");"]
    for k, node in enumerate(outputs):
        what = "output_shape" if len(outputs) == 1 else f"output_shape_at<{k}>"
        lines.append(f"static_assert(std::is_same_v<{name}::{what}, {q}Shape<{', '.join(map(str, node.shape))}>>);")
    return closing(lines, guard, namespace)


def opening(name, namespace, source, version, model_name, about, includes, cstdint):
    """The header's first lines, through the namespace's opening; and its include guard."""
    guard = include_guard(name, namespace)
    by = f"Keras {comment_text(version, VERSION)}" if version else "Keras"
    lines = [f"/// @file {name}: the tpudsl type of the {by} model '{comment_text(model_name, MODEL_NAME)}' in "
             f"{comment_text(os.path.basename(source), FILE_NAME)},",
             f"/// written by tools/keras_to_tpudsl.py. {about}",
             f"#ifndef {guard}", f"#define {guard}", ""] + [f"#include <{i}>" for i in includes] + [""]
    if cstdint:
        lines.append("#include <cstdint>")
    lines += ["#include <type_traits>", ""]
    if namespace:
        lines += [f"namespace {namespace} {{", "", "using namespace tpudsl;", ""]
    return lines, guard


def closing(lines, guard, namespace):
    """The header's text: `lines`, the namespace and guard closed, every line checked."""
    if namespace:
        lines += ["", f"}} // namespace {namespace}"]
    lines += ["", f"#endif // !{guard}", ""]
    for line in lines:   # what came from the file went through comment_text and the checks above
        if not SAFE_LINE.fullmatch(line) or "??" in line or "*/" in line or "/*" in line:
            raise Refused(f"internal error: the header's line {line!r} holds text it should not; please report it")
    return "\n".join(lines)


# Text from the input file that the header's first comment quotes: a Keras version as Keras spells
# them (3.3.3, 2.15.0, 3.4.0.dev2024061403, 2.13.1+tf), a model's name and a file's name as printable
# characters that cannot end or leave a // comment. Anything else is percent-encoded (its UTF-8 bytes,
# %0A for a line feed), so that the header's text stays what this tool wrote.
VERSION = re.compile(r"[0-9]+(?:\.[0-9]+){0,5}(?:[.+-]?[A-Za-z0-9]+){0,6}")
MODEL_NAME = re.compile(r"[A-Za-z0-9_.,:;+=@#$&!~^()\[\]{}' -]{1,200}")
FILE_NAME = MODEL_NAME
SAFE_LINE = re.compile(r"[\x20-\x7e]*(?<![\\ ])")   # printable ASCII; no \ (a line splice) or space at its end


def comment_text(value, pattern, limit=120):
    """`value` as the header's comment may quote it: itself when it matches `pattern`, otherwise
    percent-encoded and cut to `limit` characters."""
    text = value if isinstance(value, str) else json.dumps(value)
    if pattern.fullmatch(text) and len(text) <= limit:
        return text
    out = []
    for ch in text:
        piece = ch if MODEL_NAME.fullmatch(ch) and ch not in "%" else "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        if sum(map(len, out)) + len(piece) > limit:
            out.append("...")
            break
        out.append(piece)
    return "".join(out)


def include_guard(name, namespace):
    """The header's include guard: NS_NAME_HPP from the namespace and name (as the tool has always
    written it), unless that has the form of tpudsl's own guards (TPUDSL_..._HPP), which it would
    silently switch off: then KERAS_<that>_, a form no namespace and name spell (they never end in _)."""
    guard = re.sub(r"[^A-Za-z0-9]+", "_", (namespace + "_" if namespace else "") +
                   re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)).upper().strip("_") + "_HPP"
    return "KERAS_" + guard + "_" if guard.startswith("TPUDSL_") else guard


# ---------------------------------------------------------------------------------------------

# Names the header uses unqualified inside a --namespace (through `using namespace tpudsl;`): a model
# type of one of these names would hide tpudsl's, or clash with it.
HEADER_NAMES = set("""Sequential Input Shape Dense Conv1D Conv2D MaxPool1D MaxPool2D AveragePooling1D AveragePooling2D
GlobalAveragePooling1D GlobalAveragePooling2D GlobalMaxPooling1D GlobalMaxPooling2D Embedding LSTM GRU Flatten
Dropout Activation BatchNormalization TimeDistributed Linear Relu Softmax Sigmoid Tanh Same Valid Size2 Reshape
Permute RepeatVector Identity Functional Node Shared Outputs Add Subtract Multiply Average Maximum Minimum
Concatenate Dot""".split())
# Macros that a name would be replaced by: tpudsl's (TPUDSL_...), <cstdint>'s, and the common ones of
# the C library headers tpudsl includes (<climits>, <cfloat>, <cmath>, <cstdio>, <cstdlib>, <cerrno>,
# <cassert>, <cstddef>), and GCC's unix and linux outside strict ISO modes.
MACRO = re.compile(r"TPUDSL_\w*|U?INT(?:_LEAST|_FAST)?[0-9]+_(?:MAX|MIN|C)|U?INT(?:MAX|PTR)_(?:MAX|MIN|C)|"
                   r"(?:PTRDIFF|SIZE|SIG_ATOMIC|WCHAR|WINT)_(?:MAX|MIN)|(?:S|U)?CHAR_(?:MAX|MIN)|CHAR_BIT|"
                   r"U?(?:SHRT|INT|LONG|LLONG)_(?:MAX|MIN)|MB_LEN_MAX|(?:FLT|DBL|LDBL)_[A-Z0-9_]+|FP_[A-Z]+|"
                   r"HUGE_VAL[FL]?|INFINITY|NAN|MATH_ERR\w*|math_errhandling|EXIT_(?:SUCCESS|FAILURE)|RAND_MAX|"
                   r"MB_CUR_MAX|BUFSIZ|EOF|FILENAME_MAX|FOPEN_MAX|TMP_MAX|L_tmpnam|SEEK_(?:SET|CUR|END)|"
                   r"_IO[FLN]BF|stdin|stdout|stderr|E(?:DOM|RANGE|ILSEQ)|NULL|assert|errno|offsetof|"
                   r"CLOCKS_PER_SEC|SIG(?:ABRT|FPE|ILL|INT|SEGV|TERM|_DFL|_ERR|_IGN)|unix|linux|i386")


def identifier(text, what):
    """--name: a C++ identifier; --namespace: one or a::b::c. Neither a keyword, a reserved name (_X, __,
    _ at the start), std or tpudsl (whose names the header uses), nor a macro of the headers it includes."""
    parts = text.split("::") if what == "namespace" else [text]
    text = one_line(text, 200)
    for p in parts:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p) or p in CPP_KEYWORDS:
            raise argparse.ArgumentTypeError(f"'{text}' is not a C++ {what} name")
        if p.startswith("_") or "__" in p:
            raise argparse.ArgumentTypeError(f"'{text}' is a name C++ reserves (it starts with _ or holds __)")
        if p in ("std", "tpudsl"):
            raise argparse.ArgumentTypeError(f"'{text}' names {p}'s namespace, whose names the header uses: "
                                             f"give the model a {'name' if what == 'type' else what} of its own")
        if MACRO.fullmatch(p):
            raise argparse.ArgumentTypeError(f"'{text}' is the name of a macro the header's includes define")
    if what == "type" and text in HEADER_NAMES:
        raise argparse.ArgumentTypeError(f"'{text}' is the name of tpudsl's {text}, which the header uses: "
                                         "give the model a name of its own")
    if what == "type" and text == "main":
        raise argparse.ArgumentTypeError("'main' is the program's main function: give the model a name of its own")
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


def one_line(text, limit=2000):
    """A message as one line: control characters (line breaks among them) escaped, cut to `limit`."""
    text = re.sub(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]",
                  lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}", text)
    return text if len(text) <= limit else text[:limit] + "..."


def refuse(message):
    print(one_line(f"{TOOL}: {message}"), file=sys.stderr)
    return 1


class OneLineParser(argparse.ArgumentParser):
    """A bad command line is one line on stderr, as a refused model is (exit status 2, not 1)."""

    def error(self, message):
        usage = "keras_to_tpudsl.py MODEL --name NAME [--namespace NS] [-o OUT.hpp]"
        self.exit(2, one_line(f"{TOOL}: {message} (usage: {usage})") + "\n")


def main(argv=None):
    parser = OneLineParser(prog="keras_to_tpudsl.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a .keras file, a whole-model .h5 file, or a model's JSON config")
    parser.add_argument("--name", required=True, type=lambda s: identifier(s, "type"),
                        help="the C++ name of the model type")
    parser.add_argument("--namespace", type=lambda s: identifier(s, "namespace"),
                        help="the namespace to declare it in (default: the global one, names qualified)")
    parser.add_argument("-o", "--output", help="the header to write (default: standard output)")
    args = parser.parse_args(argv)
    if not args.namespace and (args.name.endswith("_t") or args.name in ("FILE", "DIR", "div", "abs", "exit")):
        parser.error(f"argument --name: '{args.name}' is a name of the C library's global namespace (or of the "
                     "kind POSIX reserves, ..._t): give the model a name of its own, or a --namespace")
    try:
        model, version = read_model(args.model)
        text = convert(model, args.name, args.namespace or "", args.model, version)
    except Refused as e:
        return refuse(f"'{args.model}': {e}")
    except OSError as e:
        return refuse(f"'{args.model}': {e}")
    except RecursionError:   # parse_json bounds the nesting; this is the last guard
        return refuse(f"'{args.model}': not a Keras model config this tool can read (it nests too deeply)")
    except (KeyError, IndexError, TypeError, AttributeError, ValueError, ArithmeticError) as e:
        return refuse(f"'{args.model}': not a Keras model config this tool can read ({type(e).__name__}: {e})")
    if args.output:
        try:
            write_atomically(args.output, text)
        except OSError as e:
            return refuse(f"cannot write '{args.output}': {e}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
