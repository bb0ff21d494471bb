"""tools/keras_to_tpudsl.py on hostile files (built here from tests/keras/configs/), without Keras:

    convert_hostile.py TOOL CONFIGS_DIR INCLUDE_DIR [CXX]

Each file is either refused, with exit status 1, one line on stderr that starts with the tool's
name and the file's and says the problem, nothing on stdout and an existing -o file left as it was;
or converted to a header whose every line is printable text that cannot leave its // comment, and
that compiles (all the converted headers in one translation unit, each of whose types it checks).

- text from the file in the header: a keras_version (metadata.json, an .h5 attribute, a .json's
  root) or a model name holding a line break, a carriage return, a \\ line splice, */ or ??/, and a
  file name holding a line break; a layer name holding a line break in a refusal;
- a graph's node names, which the header writes as C++ string literals: a layer name holding a
  quote, a line break, a \\, ??/ or */, or of 201 characters, refused; two layers of one name; a
  layer called again whose node's name (name_1) another layer has (converted, another name taken);
- what the tool reads: a corrupt deflate stream, a compression method Python lacks, a config.json
  that declares 3 GB uncompressed (a zip bomb, refused before inflating), one that understates its
  size, JSON nested 100,000 deep and 200 deep, a .json of 17 MB, .h5 attributes that are not one
  string (h5py needed: those cases are skipped, saying so, without it);
- numbers: true and false, integers past 64 bits, Infinity, NaN, floats that float rounds to zero or
  to 1, shapes whose product overflows std::size_t, in every numeric option the tool reads;
- the include guard: no namespace and name give tpudsl's own (TPUDSL_..._HPP), and --name and
  --namespace that are not C++ names of the user's own are a usage error (exit 2, one line, nothing written).

Exit status 0 when every case behaves.
"""
import copy
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import zipfile

TOOL_PREFIX = "keras_to_tpudsl: "
SAFE_LINE = re.compile(r"[\x20-\x7e]*")


def header_problems(text):
    """What is wrong with the text of a written header: any line that is not printable ASCII, that ends
    in a \\ (which splices the next line into a // comment), or that holds ??, */ or /*."""
    problems = []
    lines = text.split("\n")
    for i, line in enumerate(lines, 1):
        if not SAFE_LINE.fullmatch(line):
            problems.append(f"line {i} holds a character outside printable ASCII: {line!r}")
        elif line.endswith("\\") or "??" in line or "*/" in line or "/*" in line:
            problems.append(f"line {i} splices or opens a comment: {line!r}")
    code = [l for l in lines if l and not l.startswith("///")]
    for line in code:
        if not (line.startswith(("#ifndef ", "#define ", "#endif // !", "#include <", "namespace ", "} // namespace ",
                                 "using ", "static_assert(", "    ")) or line == ""):
            problems.append(f"a line the tool does not write: {line!r}")
    guard = re.search(r"^#ifndef (\w+)$", text, re.M)
    if guard and re.fullmatch(r"TPUDSL_\w*_HPP", guard.group(1)):
        problems.append(f"the include guard {guard.group(1)} has the form of tpudsl's own")
    return problems


class Runner:
    def __init__(self, tool, tmp):
        self.tool, self.tmp, self.failures, self.accepted, self.count = tool, tmp, [], [], 0

    def run(self, label, path, args=None, expect="refused", needles=(), namespace=None, name="Reuters"):
        """Runs the tool on `path` with -o over an existing file; checks the outcome `expect`
        ('refused', 'converted' or 'usage')."""
        self.count += 1
        namespace = namespace or f"h{self.count}"
        out = os.path.join(self.tmp, "out", f"case{self.count}.hpp")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w") as f:
            f.write("// left alone\n")
        cmd = [sys.executable, self.tool, path, "--name", name] + (["--namespace", namespace] if namespace != "-" else [])
        cmd += (args or []) + ["-o", out]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=30)
        except subprocess.TimeoutExpired:
            self.failures.append(f"{label}: still running after 30 s (a hang)")
            return
        text = open(out).read()
        leftovers = [n for n in os.listdir(os.path.dirname(out)) if n.endswith(".tmp")]
        lines = r.stderr.splitlines()
        problems = []
        if "Traceback" in r.stderr:
            problems.append("a traceback")
        if expect == "converted":
            if r.returncode != 0 or r.stderr:
                problems.append(f"exit {r.returncode}, stderr {r.stderr.strip()[-300:]!r}")
            else:
                problems += header_problems(text)
                problems += [f"the header lacks {n!r}" for n in needles if n not in text]
                type_name = f"{namespace}::{name}" if namespace != "-" else name
                self.accepted.append((label, out, type_name))
        else:
            want = 1 if expect == "refused" else 2
            if r.returncode != want:
                problems.append(f"exit {r.returncode}, not {want}")
            if expect == "refused" and (len(lines) != 1 or not lines[0].startswith(TOOL_PREFIX + "'")):
                problems.append(f"stderr is not one line starting with the tool's name: {r.stderr[-400:]!r}")
            if expect == "usage" and (len(lines) != 1 or not lines[0].startswith(TOOL_PREFIX)):
                problems.append(f"stderr is not one line starting with the tool's name: {r.stderr[-400:]!r}")
            problems += [f"stderr lacks {n!r}" for n in needles if n not in r.stderr]
            if r.stdout or text != "// left alone\n" or leftovers:
                problems.append("something was written")
        if problems:
            self.failures.append(f"{label}: " + "; ".join(problems))
        else:
            print(f"{label}: {expect}" + (f": {lines[-1]}" if lines and expect != "converted" else ""))


def keras_zip(path, config, metadata=None, method=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", method) as z:
        z.writestr("config.json", json.dumps(config) if not isinstance(config, (str, bytes)) else config)
        if metadata is not None:
            z.writestr("metadata.json", json.dumps(metadata))
    return path


def patch_method(data, method):
    """A zip's bytes with every entry's compression method set to `method` (local and central headers)."""
    data = bytearray(data)
    for sig, at in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        i = data.find(sig)
        while i >= 0:
            data[i + at:i + at + 2] = struct.pack("<H", method)
            i = data.find(sig, i + 4)
    return bytes(data)


def patch_size(data, size):
    """A zip's bytes with every entry's uncompressed size set to `size` (local and central headers)."""
    data = bytearray(data)
    for sig, at in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        i = data.find(sig)
        while i >= 0:
            data[i + at:i + at + 4] = struct.pack("<I", size)
            i = data.find(sig, i + 4)
    return bytes(data)


def write(path, data):
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    return path


def layer(config, name):
    return next(l for l in config["config"]["layers"] if l["config"].get("name") == name)["config"]


def injections(r, tmp, reuters, lstm):
    """Text from the file that reaches the header's first comment, or a refusal's message."""
    evil = {"line feed": "3.3.3\nstruct Injected { Injected() { throw 0; } } injected;",
            "carriage return": "3.3.3\rint injected = 0;",
            "line splice": "3.3.3 \\", "comment end": "3.3.3 */ int injected; /*", "trigraph": "3.3.3 ??/",
            "bidi": "3.3.3\u202e;0 = detcejni tni"}
    for what, text in evil.items():
        path = keras_zip(os.path.join(tmp, f"version {what}.keras"), reuters, {"keras_version": text})
        r.run(f"keras_version with a {what} in metadata.json", path, expect="converted",
              needles=["/// @file Reuters: the tpudsl type of the Keras 3.3.3"])
        config = copy.deepcopy(reuters)
        config["config"]["name"] = "model" + text[5:]
        path = keras_zip(os.path.join(tmp, f"name {what}.keras"), config, {"keras_version": "3.3.3"})
        r.run(f"model name with a {what} in config.json", path, expect="converted", needles=["model 'model"])
    config = copy.deepcopy(reuters)
    config["keras_version"] = "2.15.0\n#error injected"
    r.run("keras_version with a line feed in a .json", write(os.path.join(tmp, "version.json"), json.dumps(config)),
          expect="converted", needles=["Keras 2.15.0%0A"])
    r.run("file name with a line feed", write(os.path.join(tmp, "model\n#error injected.json"), json.dumps(reuters)),
          expect="converted", needles=["in model%0A"])
    config = copy.deepcopy(reuters)
    layer(config, "dense")["use_bias"] = False
    layer(config, "dense")["name"] = "dense\n#error injected"
    r.run("layer name with a line feed, refused", write(os.path.join(tmp, "layer name.json"), json.dumps(config)),
          needles=["layer 'dense\\x0a#error injected' (Dense): use_bias=false"])
    config = copy.deepcopy(reuters)
    layer(config, "dense")["activation"] = "relu\nint injected;"
    r.run("activation with a line feed, refused", write(os.path.join(tmp, "activation.json"), json.dumps(config)),
          needles=["activation 'relu\\x0aint injected;' is not supported"])
    config = copy.deepcopy(reuters)
    config["config"]["layers"][0]["config"]["dtype"] = "int32\n#error injected"
    r.run("input dtype with a line feed, refused", write(os.path.join(tmp, "dtype.json"), json.dumps(config)),
          needles=["dtype 'int32\\x0a#error injected'"])


def reading(r, tmp, reuters):
    """What the tool reads of a zip and of JSON, bounded before it reads."""
    good = keras_zip(os.path.join(tmp, "good.keras"), reuters, {"keras_version": "3.3.3"})
    data = open(good, "rb").read()
    with zipfile.ZipFile(good) as z:
        info = z.getinfo("config.json")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    corrupt = bytearray(data)
    for i in range(start + 2, start + 40):
        corrupt[i] ^= 0x5A
    r.run("corrupt deflate stream", write(os.path.join(tmp, "corrupt.keras"), bytes(corrupt)),
          needles=["config.json", "cannot be read"])
    r.run("compression method 99", write(os.path.join(tmp, "method99.keras"), patch_method(data, 99)),
          needles=["config.json", "NotImplementedError"])
    r.run("compression method 6 (implode)", write(os.path.join(tmp, "implode.keras"), patch_method(data, 6)),
          needles=["config.json"])
    r.run("config.json declaring 3 GB (a zip bomb's header)",
          write(os.path.join(tmp, "bomb_header.keras"), patch_size(data, 3 << 30)), needles=["config.json", "declares"])
    # A real bomb: 200 MB of spaces after the config, a few hundred KB compressed; refused on its
    # declared size, so the test stays fast.
    bomb = os.path.join(tmp, "bomb.keras")
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        with z.open("config.json", "w", force_zip64=True) as f:
            f.write(json.dumps(reuters).encode())
            block = b" " * (1 << 20)
            for _ in range(200):
                f.write(block)
    r.run(f"a zip bomb ({os.path.getsize(bomb):,} bytes, 200 MB inflated)", bomb, needles=["config.json", "declares"])
    r.run("config.json understating its size", write(os.path.join(tmp, "short.keras"), patch_size(data, 100)),
          needles=["config.json"])
    r.run("JSON nested 100,000 deep", write(os.path.join(tmp, "deep.json"), "[" * 100000 + "]" * 100000),
          needles=["nests deeper"])
    config = copy.deepcopy(reuters)
    nested = 0
    for _ in range(200):
        nested = [nested]
    layer(config, "flatten")["something"] = nested
    r.run("JSON nested 200 deep in a layer", write(os.path.join(tmp, "deep200.json"), json.dumps(config)),
          needles=["nests deeper"])
    r.run("config.json nested 100,000 deep", keras_zip(os.path.join(tmp, "deep.keras"), "[" * 100000),
          needles=["nests deeper"])
    big = os.path.join(tmp, "big.json")
    with open(big, "w") as f:
        f.write(json.dumps(reuters) + " " * (17 << 20))
    r.run("a .json of 17 MB", big, needles=["bytes"])
    r.run("an integer of 5,000 digits", write(os.path.join(tmp, "digits.json"),
                                              json.dumps(reuters).replace('"units": 46', '"units": ' + "9" * 5000)),
          needles=["a number this tool does not read"])
    chain = {"class_name": "Functional", "config": {"name": "m", "input_layers": [["a", 0, 0]],
                                                    "output_layers": [["c", 0, 0]], "layers": [
        {"class_name": "InputLayer", "name": "a", "config": {"name": "a", "batch_shape": [None, 4]},
         "inbound_nodes": [[["b", 0, 0, {}]]]},
        {"class_name": "Dense", "name": "b", "config": {"name": "b", "units": 4}, "inbound_nodes": [[["a", 0, 0, {}]]]},
        {"class_name": "Dense", "name": "c", "config": {"name": "c", "units": 4}, "inbound_nodes": []}]}}
    r.run("a functional model whose chain is a cycle", write(os.path.join(tmp, "cycle.json"), json.dumps(chain)),
          needles=["is not reached"])


def graph_names(r, tmp, branching):
    """A graph's node names, written into C++ string literals: only safe ones are taken."""
    def renamed(name):   # layer 'a', in its entry, its config and its reader's keras_history
        return json.dumps(branching).replace('"a"', json.dumps(name))
    for what, name in (("a quote", 'a"; int injected; //'), ("a line feed", "a\n#error injected"),
                       ("a line splice", "a\\"), ("a trigraph", "a??/"), ("a comment end", "a*/"),
                       ("a space", "a b"), ("201 characters", "a" * 201), ("a non-ASCII letter", "\u00e4")):
        r.run(f"graph layer name with {what}, refused", write(os.path.join(tmp, "graph name.json"), renamed(name)),
              needles=["its name is not", "rename the layer"])
    r.run("graph layer name of 200 characters", write(os.path.join(tmp, "graph 200.json"), renamed("a" * 200)),
          expect="converted", needles=['Node<"' + "a" * 200 + '", Dense<4>, "input_layer">,'])
    config = copy.deepcopy(branching)
    config["config"]["layers"][2]["name"] = config["config"]["layers"][2]["config"]["name"] = "a"
    r.run("graph of two layers named alike", write(os.path.join(tmp, "graph twice.json"), json.dumps(config)),
          needles=["two layers of the model are named 'a'"])
    config = copy.deepcopy(branching)
    config["config"]["name"] = "graph\n#error injected */"
    r.run("graph whose model name holds a line feed", write(os.path.join(tmp, "graph model.json"), json.dumps(config)),
          expect="converted", needles=["model 'graph%0A#error injected %2A%2F'", "Functional<"])
    # a = Dense(4); a(x); a_1 = Dense(4)(a(x)); a(a_1): the second call of a cannot be node "a_1".
    layers = config["config"]["layers"]
    layers[2]["config"]["name"] = layers[2]["name"] = "a_1"
    layers[2]["inbound_nodes"][0]["args"][0]["config"]["keras_history"] = ["a", 0, 0]
    again = copy.deepcopy(layers[1]["inbound_nodes"][0])
    again["args"][0]["config"]["keras_history"] = ["a_1", 0, 0]
    layers[1]["inbound_nodes"].append(again)
    merge = layers[3]["inbound_nodes"][0]["args"][0]
    merge[0]["config"]["keras_history"], merge[1]["config"]["keras_history"] = ["a", 0, 0], ["a", 1, 0]
    layers[0]["config"]["batch_shape"] = [None, 4]   # a Dense(4) on its input and on a Dense(4)'s output
    r.run("graph whose shared call's name another layer has", write(os.path.join(tmp, "graph clash.json"),
                                                                    json.dumps(config)),
          expect="converted", needles=['Node<"a_1", Dense<4>, "a">,', 'Node<"a_1_", Shared<"a">>,',
                                      'Node<"add", Add, "a", "a_1_">>;'])


def h5_cases(r, tmp, reuters):
    try:
        import h5py  # noqa: PLC0415
        import numpy as np  # noqa: PLC0415
    except ImportError:
        print("(.h5 cases skipped: this Python has no h5py)")
        return
    text = json.dumps(reuters)

    def h5(name, **attrs):
        path = os.path.join(tmp, name)
        with h5py.File(path, "w") as f:
            for key, value in attrs.items():
                f.attrs[key] = value
        return path
    r.run(".h5 keras_version with a line feed", h5("version.h5", model_config=text,
                                                   keras_version="2.15.0\n#error injected"),
          expect="converted", needles=["Keras 2.15.0%0A"])
    r.run(".h5 model_config a list of strings", h5("list.h5", model_config=np.array([text.encode()] * 3)),
          needles=["model_config attribute is not one string"])
    r.run(".h5 model_config a number", h5("number.h5", model_config=3), needles=["model_config attribute"])
    r.run(".h5 model_config nested 100,000 deep", h5("deep.h5", model_config="[" * 100000), needles=["nests deeper"])
    big = os.path.join(tmp, "big.h5")
    with h5py.File(big, "w", libver="latest") as f:   # dense attribute storage: past 64 KB
        f.attrs["model_config"] = np.bytes_(text.encode() + b" " * (17 << 20))
    r.run(".h5 model_config a fixed-length string of 17 MB", big, needles=["model_config attribute is", "bytes"])
    with h5py.File(big, "w", libver="latest") as f:
        f.attrs["model_config"] = text + " " * (17 << 20)
    r.run(".h5 model_config a variable-length string of 17 MB", big, needles=["model_config attribute is", "bytes"])
    truncated = h5("truncated.h5", model_config=text)
    with open(truncated, "r+b") as f:
        f.truncate(600)
    r.run(".h5 truncated", truncated, needles=["HDF5"])


def numbers(r, tmp, reuters, lstm, chain, bn_base):
    """Every numeric option the tool reads, given what JSON can hold but a C++ template argument cannot."""
    hostile = {"true": True, "false": False, "2^64": 2 ** 64, "2^70": 2 ** 70, "Infinity": float("inf"),
               "-Infinity": float("-inf"), "NaN": float("nan"), "1e999 as text": "1e999"}
    cases = []

    def case(label, base, change, needles):
        cases.append((label, base, change, needles))

    def set_(name, key, at=None):
        def change(c, v):
            target = layer(c, name)
            if at is None:
                target[key] = v
            else:
                target[key][at] = v
        return change
    for label, value in hostile.items():
        case(f"units={label}", reuters, (set_("dense", "units"), value), ["layer 'dense' (Dense)", "units="])
        case(f"filters={label}", reuters, (set_("conv1d", "filters"), value), ["layer 'conv1d' (Conv1D)", "filters="])
        case(f"kernel_size={label}", reuters, (set_("conv1d", "kernel_size", 0), value),
             ["layer 'conv1d' (Conv1D)", "kernel_size="])
        case(f"strides={label}", reuters, (set_("conv1d", "strides", 0), value), ["layer 'conv1d' (Conv1D)", "strides="])
        case(f"pool_size={label}", reuters, (set_("max_pooling1d", "pool_size", 0), value),
             ["layer 'max_pooling1d' (MaxPooling1D)", "pool_size="])
        case(f"input dim={label}", reuters, (lambda c, v: c["config"]["layers"][0]["config"]["batch_input_shape"]
                                             .__setitem__(1, v), value), ["input shape"])
        case(f"input_dim={label}", reuters, (set_("embedding", "input_dim"), value),
             ["layer 'embedding' (Embedding)", "input_dim="])
        case(f"output_dim={label}", reuters, (set_("embedding", "output_dim"), value),
             ["layer 'embedding' (Embedding)", "output_dim="])
        case(f"LSTM units={label}", lstm, (set_("lstm", "units"), value), ["layer 'lstm' (LSTM)", "units="])
        if label not in ("false",):
            case(f"rate={label}", chain_with_dropout(reuters), (set_("drop", "rate"), value),
                 ["layer 'drop' (Dropout)", "rate="])
        if label not in ("false", "true"):   # 0 and 1 are momenta
            case(f"momentum={label}", bn_base, (set_("bn", "momentum"), value),
                 ["layer 'bn' (BatchNormalization)", "momentum="])
        if label not in ("2^64", "2^70"):   # past 64 bits, but a float holds them: converted below
            case(f"epsilon={label}", bn_base, (set_("bn", "epsilon"), value),
                 ["layer 'bn' (BatchNormalization)", "epsilon="])
        if label != "false":
            case(f"groups={label}", reuters, (set_("conv1d", "groups"), value), ["layer 'conv1d' (Conv1D)", "groups="])
            case(f"axis={label}", bn_base, (set_("bn", "axis"), value), ["layer 'bn' (BatchNormalization)", "axis="])
    case("return_sequences=\"false\"", lstm, (set_("lstm", "return_sequences"), "false"),
         ["layer 'lstm' (LSTM)", "return_sequences="])
    case("rate 0.99999999999 (1 as a float)", chain_with_dropout(reuters), (set_("drop", "rate"), 0.99999999999),
         ["layer 'drop' (Dropout)", "rate="])
    case("epsilon 1e-50 (0 as a float)", bn_base, (set_("bn", "epsilon"), 1e-50), ["layer 'bn'", "epsilon="])
    case("epsilon 1e39 (past float)", bn_base, (set_("bn", "epsilon"), 1e39), ["layer 'bn'", "epsilon="])
    case("epsilon 10^400 (past double)", bn_base, (set_("bn", "epsilon"), 10 ** 400), ["layer 'bn'", "epsilon=1000"])
    case("rate 10^400 (past double)", chain_with_dropout(reuters), (set_("drop", "rate"), 10 ** 400),
         ["layer 'drop' (Dropout)", "rate=1000"])
    case("input_length=true", reuters, (set_("embedding", "input_length"), True), ["input_length=true"])
    case("orthogonal gain=\"1\"", lstm, (set_("lstm", "recurrent_initializer"),
                                         {"class_name": "Orthogonal", "config": {"gain": "1"}}), ["recurrent_initializer="])

    def shape(c, v):
        c["config"]["layers"][0]["config"]["batch_input_shape"] = [None] + v
    case("input (2^32, 2^32): its size overflows std::size_t", chain, (shape, [2 ** 32, 2 ** 32, 1]),
         ["input shape", "too large"])
    case("Dense of 2^40 units on 2^30 inputs", reuters,
         (lambda c, v: (layer(c, "dense").__setitem__("units", v[0]),
                        c["config"]["layers"][0]["config"].__setitem__("batch_input_shape", [None, 300]),
                        layer(c, "embedding").__setitem__("output_dim", v[1])), [2 ** 40, 2 ** 21]),
         ["too large"])
    for label, base, (change, value), needles in cases:
        config = copy.deepcopy(base)
        change(config, value)
        text = json.dumps(config)
        if value == "1e999":
            text = text.replace('"1e999"', "1e999")
        r.run(label, write(os.path.join(tmp, re.sub(r"\W+", "_", label) + ".json"), text), needles=needles)
    config = copy.deepcopy(bn_base)
    layer(config, "bn")["epsilon"] = 2 ** 70
    r.run("epsilon=2^70 (a float holds it)", write(os.path.join(tmp, "epsilon_2_70.json"), json.dumps(config)),
          expect="converted", needles=["BatchNormalization<0.99f, 1.1805916207174113e+21f>"])


def chain_with_dropout(reuters):
    config = copy.deepcopy(reuters)
    layers = config["config"]["layers"]
    at = next(i for i, l in enumerate(layers) if l["config"].get("name") == "flatten") + 1
    layers.insert(at, {"class_name": "Dropout", "config": {"name": "drop", "trainable": True, "dtype": "float32",
                                                           "rate": 0.5}})
    return config


def batch_norm(reuters):
    config = copy.deepcopy(reuters)
    layers = config["config"]["layers"]
    at = next(i for i, l in enumerate(layers) if l["config"].get("name") == "conv1d") + 1
    layers.insert(at, {"class_name": "BatchNormalization", "config": {
        "name": "bn", "trainable": True, "dtype": "float32", "axis": -1, "momentum": 0.99, "epsilon": 0.001,
        "center": True, "scale": True}})
    return config


def guards(r, tmp, reuters):
    """The include guard, --name and --namespace."""
    path = write(os.path.join(tmp, "guard.json"), json.dumps(reuters))
    r.run("--name TpudslCore (no namespace)", path, namespace="-", name="TpudslCore", expect="converted")
    r.run("--namespace tpudsl_core --name Model", path, namespace="tpudsl_core", name="Model", expect="converted")
    r.run("--namespace a::b --name Model", path, namespace="a::b", name="Model", expect="converted",
          needles=["namespace a::b {"])
    for namespace, name, needle in (("tpudsl", "Core", "tpudsl"), ("t", "_Model", "reserves"),
                                    ("t", "My__Model", "reserves"), ("_T", "Model", "reserves"),
                                    ("t", "class", "not a C++"), ("t", "Dense", "tpudsl's Dense"),
                                    ("t", "std", "std"), ("std", "Model", "std"), ("a::tpudsl", "Model", "tpudsl"),
                                    ("t", "INT32_MAX", "macro"), ("t", "stdout", "macro"),
                                    ("t", "DBL_MAX", "macro"), ("-", "size_t", "global"), ("t", "TPUDSL_CORE", "macro"), ("-", "main", "main"),
                                    ("a::", "Model", "not a C++"), ("t", "Mod\nel", "not a C++")):
        r.run(f"--namespace {namespace!r} --name {name!r}", path, namespace=namespace, name=name, expect="usage",
              needles=[needle])


def compile_accepted(r, include, cxx, tmp):
    """One translation unit that includes tpudsl first (so that a guard of tpudsl's form would hide the
    header), then every converted header, and checks that each declared its type."""
    if not r.accepted:
        return
    tu = os.path.join(tmp, "accepted.cpp")
    with open(tu, "w") as f:
        f.write("#include <tpudsl/model.hpp>\n")
        for _, out, _ in r.accepted:
            f.write(f'#include "{out}"\n')
        for label, _, type_name in r.accepted:
            f.write(f"static_assert({type_name}::param_count > 0);   // {re.sub(r'[^ -~]|[?*/]', '_', label)}\n")
    c = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-I" + include, tu], capture_output=True, text=True)
    if c.returncode != 0:
        r.failures.append(f"the {len(r.accepted)} converted headers do not compile:\n{c.stderr[:3000]}")
    else:
        print(f"the {len(r.accepted)} converted headers compile, each declaring its type")


def main(argv):
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    tool, configs, include = argv[1:4]
    cxx = argv[4] if len(argv) == 5 else os.environ.get("CXX", "c++")
    load = lambda name: json.load(open(os.path.join(configs, name)))  # noqa: E731
    reuters, lstm, chain = load("tf2_reuters.json"), load("keras3_lstm.json"), load("tf2_functional_chain.json")
    with tempfile.TemporaryDirectory() as tmp:
        r = Runner(tool, tmp)
        injections(r, tmp, reuters, lstm)
        graph_names(r, tmp, load("keras3_branching.json"))
        reading(r, tmp, reuters)
        h5_cases(r, tmp, reuters)
        numbers(r, tmp, reuters, lstm, chain, batch_norm(reuters))
        guards(r, tmp, reuters)
        compile_accepted(r, include, cxx, tmp)
    for f in r.failures:
        print("FAILED " + f)
    print(f"{r.count} cases, {len(r.failures)} failed")
    return 1 if r.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
