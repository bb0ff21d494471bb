"""A time-bounded fuzz loop over tools/keras_to_tpudsl.py's readers and conversion, in process:

    fuzz_converter.py TOOL CONFIGS_DIR INCLUDE_DIR OUT_DIR [--seconds N] [--seed S] [--case I]
                      [--cxx CXX] [--compile N]

Each case mutates a seed (the configs in CONFIGS_DIR and a few variants of them) into a .json, a
.keras zip or, with h5py, an .h5 file: hostile values in its fields (true, 2^70, Infinity, NaN,
strings with line breaks, */, ??/, deep nesting), layers renamed, dropped, duplicated or of other
classes, the JSON text's bytes, the zip's bytes (compression methods, declared sizes, flipped bytes,
truncation) and the file's name. The tool's main() runs on it under a time limit and a memory limit
(RLIMIT_AS), and must either write a header whose every line is safe text of the forms the tool
writes (exit 0, nothing on stderr), or refuse it in exactly one stderr line starting with the tool's
name and the file's, writing nothing (exit 1). Anything else (an exception out of main(), a
timeout, several lines, an internal error) is a failure: its input is saved under OUT_DIR/failures/
and named. Case I of seed S is the same input on every run (`--seed S --case I` reruns it alone).
At the end a sample of the accepted headers (--compile, 30 by default) is compiled in one
translation unit after <tpudsl/model.hpp>, each checked to declare its type.

--seconds defaults to $FUZZ_SECONDS or 30; --seed to $FUZZ_SEED or one from the clock, printed.
Exit status 0 when every case behaves.
"""
import argparse
import contextlib
import copy
import importlib.util
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import time
import traceback
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from convert_hostile import batch_norm, chain_with_dropout, header_problems  # noqa: E402

CASE_SECONDS = 10
MEMORY_LIMIT = 4 << 30
HOSTILE_VALUES = [True, False, None, 0, -1, 1, 2, 3, 2 ** 31, 2 ** 48, 2 ** 63, 2 ** 64, 2 ** 70, 10 ** 30, 10 ** 400,
                  float("inf"), float("-inf"), float("nan"), 1e-50, 1e39, 0.99999999999, -0.0, 5e-324, 0.5, 1.0,
                  "", "relu", "same", "valid", "float32", "int32", "channels_first", "a\nb", "x\r", "x\\", "*/",
                  "/*", "??/", "\u202e", "\x00", "\u2028", "%0A", [], {}, [1, 2], [None, 4], [True],
                  {"class_name": "x"}, {"class_name": "Dense", "config": {}}, "x" * 5000, list(range(300))]
HOSTILE_TEXT = ["3.3.3\n#error injected", "m\r\nint x;", "a\\", "*/", "??/", "\u202e", "\x85x", "x" * 3000, "%",
                "'", "3.3.3", "sequential", "\ud800", "name with spaces"]
CLASSES = ["InputLayer", "Dense", "Conv1D", "Conv2D", "MaxPooling1D", "MaxPool2D", "AveragePooling1D",
           "AvgPool2D", "GlobalAveragePooling1D", "GlobalMaxPool2D", "Embedding", "Flatten", "Dropout", "Activation",
           "BatchNormalization", "TimeDistributed", "LSTM", "GRU", "Add", "SimpleRNN", "Sequential", "Functional",
           "", None, 3, ["Dense"]]
TEXT_TOKENS = ["[", "]", "{", "}", ",", ":", "1e999", "NaN", "-Infinity", "true", "false", "null", '"\\n"',
               "9" * 30, "9" * 5000, '"\\ud800"', "[" * 3000, "\x00", "\\", '"']


class CaseTimeout(BaseException):
    """Raised by the alarm in a case that runs past CASE_SECONDS (not an Exception: the tool does not catch it)."""


def load_tool(path):
    spec = importlib.util.spec_from_file_location("keras_to_tpudsl", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def seeds(configs):
    """The seed configs: every one in CONFIGS_DIR, and variants that hold the layers they lack."""
    out = {}
    for name in sorted(os.listdir(configs)):
        if name.endswith(".json"):
            with open(os.path.join(configs, name)) as f:
                out[name[:-5]] = json.load(f)
    reuters = out["tf2_reuters"]
    out["reuters_dropout"] = chain_with_dropout(reuters)
    out["reuters_batch_norm"] = batch_norm(reuters)
    gru = copy.deepcopy(out["keras3_lstm"])
    for l in gru["config"]["layers"]:
        if l["class_name"] == "LSTM":
            l["class_name"] = "GRU"
            l["config"].pop("unit_forget_bias", None)
            l["config"]["return_sequences"] = True
    gru["config"]["layers"].insert(3, {"class_name": "TimeDistributed", "config": {
        "name": "td", "trainable": True, "dtype": "float32",
        "layer": {"class_name": "Dense", "config": {"name": "inner", "units": 8, "activation": "relu"}}}})
    gru["config"]["layers"].insert(4, {"class_name": "GlobalAveragePooling1D", "config": {
        "name": "pool", "data_format": "channels_last", "keepdims": False}})
    out["gru_time_distributed"] = gru
    return out


def nodes(value):
    """Every (container, key) in a parsed JSON value, without recursion."""
    found, stack = [], [value]
    while stack:
        v = stack.pop()
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        for k, c in items:
            found.append((v, k))
            stack.append(c)
    return found


def layers_of(config):
    cfg = config.get("config") if isinstance(config, dict) else None
    layers = cfg.get("layers") if isinstance(cfg, dict) else cfg
    return layers if isinstance(layers, list) else None


def mutate_config(rng, config):
    """A few structured changes to a parsed config."""
    for _ in range(rng.choice([0, 1, 1, 1, 2, 2, 3, 5])):
        kind = rng.randrange(7)
        layers = layers_of(config)
        if kind <= 2:   # a hostile value somewhere
            found = nodes(config)
            if found:
                parent, key = rng.choice(found)
                parent[key] = copy.deepcopy(rng.choice(HOSTILE_VALUES))
        elif kind == 3:   # a key gone
            found = [(p, k) for p, k in nodes(config) if isinstance(p, dict)]
            if found:
                parent, key = rng.choice(found)
                del parent[key]
        elif kind == 4 and layers:   # a layer renamed, or of another class
            l = rng.choice(layers)
            if isinstance(l, dict):
                if rng.random() < 0.5 and isinstance(l.get("config"), dict):
                    l["config"]["name"] = rng.choice(HOSTILE_TEXT)
                else:
                    l["class_name"] = rng.choice(CLASSES)
        elif kind == 5 and layers:   # a layer dropped, duplicated or moved
            i, j = rng.randrange(len(layers)), rng.randrange(len(layers))
            op = rng.randrange(3)
            if op == 0:
                del layers[i]
            elif op == 1:
                layers.insert(j, copy.deepcopy(layers[i]))
            else:
                layers[i], layers[j] = layers[j], layers[i]
        else:   # the text the header quotes
            where = config.get("config") if isinstance(config.get("config"), dict) else config
            target, key = rng.choice([(config, "keras_version"), (where, "name")])
            target[key] = rng.choice(HOSTILE_TEXT + HOSTILE_VALUES[:8])
    if rng.random() < 0.1:   # deep nesting, last (the changes above copy values, recursively)
        found = nodes(config)
        if found:
            parent, key = rng.choice(found)
            deep = 0
            for _ in range(rng.choice([20, 98, 99, 100, 101, 150, 500])):
                deep = [deep] if rng.random() < 0.5 else {"k": deep}
            parent[key] = deep
    return config


def mutate_bytes(rng, data, tokens=()):
    data = bytearray(data)
    for _ in range(rng.randrange(1, 6)):
        op = rng.randrange(5 if tokens else 4)
        at = rng.randrange(len(data) + 1)
        if op == 0 and data:
            data[min(at, len(data) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:
            del data[at:at + rng.randrange(1, 64)]
        elif op == 2 and data:
            start = rng.randrange(len(data))
            data[at:at] = data[start:start + rng.randrange(1, 256)]
        elif op == 3:
            del data[rng.randrange(len(data) + 1):]
        elif op == 4:
            data[at:at] = rng.choice(tokens).encode("utf-8", "surrogatepass")
    return bytes(data)


def patch_headers(rng, data):
    """A zip's bytes with a header field of its entries changed: the method, the sizes, the CRC."""
    data = bytearray(data)
    field = rng.choice([("method", 8, 10, "<H", [0, 6, 9, 12, 14, 93, 98, 99, 0xFFFF]),
                        ("size", 22, 24, "<I", [0, 1, 100, 1 << 24, (1 << 24) + 1, 3 << 30, 0xFFFFFFFF]),
                        ("compressed size", 18, 20, "<I", [0, 1, 100, 1 << 30, 0xFFFFFFFF]),
                        ("crc", 14, 16, "<I", [0, 0xFFFFFFFF])])
    _, local, central, fmt, values = field
    value = rng.choice(values)
    for sig, at in ((b"PK\x03\x04", local), (b"PK\x01\x02", central)):
        if rng.random() < 0.8:
            i = data.find(sig)
            while i >= 0:
                if i + at + struct.calcsize(fmt) <= len(data):
                    data[i + at:i + at + struct.calcsize(fmt)] = struct.pack(fmt, value)
                i = data.find(sig, i + 4)
    return bytes(data)


def make_input(rng, seed_configs, have_h5):
    """(file name, bytes or None, h5 attributes or None, what) of one case."""
    name, config = rng.choice(sorted(seed_configs.items()))
    config = mutate_config(rng, copy.deepcopy(config))
    text = json.dumps(config).encode("utf-8", "surrogatepass")
    what = [name]
    if rng.random() < 0.25:
        text = mutate_bytes(rng, text, TEXT_TOKENS)
        what.append("text mutated")
    fmt = rng.choices(["json", "keras", "h5"], [4, 5, 1 if have_h5 else 0])[0]
    what.append(fmt)
    filename = "case." + fmt
    if rng.random() < 0.1:
        filename = rng.choice(["m\n#error x", "m\r", "m\\", "m*", "m??=", "m\u202e", "m%0A", "m'", "-m", " m"]) + \
            "." + fmt
        what.append("hostile file name")
    if fmt == "json":
        return filename, text, None, what
    version = rng.choice(["3.3.3", "2.15.0", None] + HOSTILE_TEXT + HOSTILE_VALUES[:6])
    if fmt == "h5":
        return filename, None, {"model_config": text.decode("utf-8", "replace"), "keras_version": version}, what
    buf = io.BytesIO()
    method = rng.choice([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
    with zipfile.ZipFile(buf, "w", method) as z:
        z.writestr("config.json", text)
        if version is not None or rng.random() < 0.5:
            metadata = {"keras_version": version} if rng.random() < 0.9 else rng.choice(HOSTILE_VALUES)
            z.writestr("metadata.json", json.dumps(metadata).encode("utf-8", "surrogatepass"))
        if rng.random() < 0.2:
            z.writestr("model.weights.h5", os.urandom(64) if rng.random() < 0.5 else b"")
    data = buf.getvalue()
    op = rng.random()
    if op < 0.15:
        data = patch_headers(rng, data)
        what.append("zip header patched")
    elif op < 0.25:
        data = mutate_bytes(rng, data)
        what.append("zip bytes mutated")
    return filename, data, None, what


def write_input(path, data, attrs):
    if attrs is None:
        with open(path, "wb") as f:
            f.write(data)
        return
    import h5py  # noqa: PLC0415
    with h5py.File(path, "w") as f:
        for key, value in attrs.items():
            if value is None:
                continue
            try:
                f.attrs[key] = value
            except (TypeError, ValueError, UnicodeEncodeError):
                f.attrs[key] = json.dumps(value)


def run_case(tool, path, out, namespace):
    """The tool's main() on one file: (exit status, stdout, stderr, exception or None)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    error = None
    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            rc = tool.main([path, "--name", "M", "--namespace", namespace, "-o", out])
    except SystemExit as e:
        rc = e.code
    except CaseTimeout:
        rc, error = None, f"still running after {CASE_SECONDS} s"
    except BaseException as e:   # noqa: BLE001 -- anything out of main() is what the loop looks for
        rc, error = None, "".join(traceback.format_exception(e))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return rc, stdout.getvalue(), stderr.getvalue(), error


def check(rc, stdout, stderr, error, out, workdir, namespace):
    """What is wrong with one case's outcome (an empty list when it behaved), and its header."""
    written = os.path.exists(out)
    text = open(out, encoding="utf-8", errors="replace").read() if written else None
    leftovers = [n for n in os.listdir(workdir) if n.endswith(".tmp")]
    if error:
        return [error], None
    problems = []
    if rc == 0:
        if stderr or stdout:
            problems.append(f"exit 0 with output on stderr or stdout: {(stderr or stdout)[:300]!r}")
        if not written:
            problems.append("exit 0 and no header written")
        else:
            problems += header_problems(text)
            if f"namespace {namespace} {{" not in text:
                problems.append("the header lacks its namespace")
    elif rc == 1:
        lines = stderr.split("\n")
        if lines[-1] == "":
            lines.pop()
        if len(lines) != 1 or not lines[0].startswith("keras_to_tpudsl: '") or len(stderr.splitlines()) != 1:
            problems.append(f"stderr is not one line starting with the tool's name: {stderr[:500]!r}")
        elif "internal error" in stderr:
            problems.append(f"an internal error: {stderr.strip()}")
        elif re.search(r"can read \((OverflowError|ZeroDivisionError|ArithmeticError|it nests too deeply)", stderr):
            # the catch-all's last guards: a number or a nesting no check bounded
            problems.append(f"a refusal by the catch-all that a check should have made: {stderr.strip()[:300]}")
        if written or stdout:
            problems.append("refused, yet something was written")
    else:
        problems.append(f"exit status {rc!r}: {stderr[:300]!r}")
    if leftovers:
        problems.append(f"temporary files left: {leftovers}")
    return problems, (text if rc == 0 and not problems else None)


def compile_sample(accepted, include, cxx, outdir, count, rng):
    """Compiles up to `count` of the accepted headers (distinct ones) in one translation unit."""
    chosen = rng.sample(sorted(accepted.items()), min(count, len(accepted)))
    if not chosen:
        return []
    folder = os.path.join(outdir, "compiled")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    tu = os.path.join(folder, "accepted.cpp")
    with open(tu, "w") as f:
        f.write("#include <tpudsl/model.hpp>\n")
        for _, (case, text) in chosen:
            with open(os.path.join(folder, f"case{case}.hpp"), "w") as h:
                h.write(text)
            f.write(f'#include "case{case}.hpp"\n')
        for _, (case, _) in chosen:
            f.write(f"static_assert(f{case}::M::param_count > 0);\n")
    started = time.time()
    c = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-I" + include, "-I" + folder, tu],
                       capture_output=True, text=True)
    print(f"compiled {len(chosen)} of the {len(accepted)} distinct accepted headers in one translation unit "
          f"({time.time() - started:.1f} s): " + ("ok" if c.returncode == 0 else "FAILED"))
    if c.returncode != 0:
        return [f"the accepted headers in {folder} do not compile:\n{c.stderr[:4000]}"]
    return []


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tool")
    parser.add_argument("configs")
    parser.add_argument("include")
    parser.add_argument("outdir")
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("FUZZ_SECONDS", 30)))
    parser.add_argument("--seed", type=int, default=int(os.environ.get("FUZZ_SEED", 0)) or None)
    parser.add_argument("--case", type=int, help="rerun this one case of --seed")
    parser.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    parser.add_argument("--compile", type=int, default=30, help="how many accepted headers to compile (0: none)")
    args = parser.parse_args(argv[1:])
    seed = args.seed if args.seed is not None else int(time.time() * 1000) % 1_000_000_007
    tool = load_tool(args.tool)
    seed_configs = seeds(args.configs)
    try:
        import h5py  # noqa: F401, PLC0415
        have_h5 = True
    except ImportError:
        have_h5 = False
    print(f"fuzz.converter: seed {seed}, {args.seconds:g} s" + ("" if have_h5 else " (no h5py: no .h5 cases)") +
          f"; rerun a case with --seed {seed} --case I")
    sys.stdout.flush()
    workdir = os.path.join(args.outdir, "work")
    faildir = os.path.join(args.outdir, "failures")
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(CaseTimeout()))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard > MEMORY_LIMIT:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, hard))
    counts = {"run": 0, "accepted": 0, "refused": 0, "generic refusals": 0}
    by_format = {}
    failures, accepted, generic = [], {}, {}
    started = time.time()
    cases = [args.case] if args.case is not None else None
    i = -1
    while True:
        if cases is not None:
            if not cases:
                break
            i = cases.pop()
        else:
            i += 1
            if time.time() - started >= args.seconds:
                break
        rng = random.Random(f"{seed}:{i}")
        filename, data, attrs, what = make_input(rng, seed_configs, have_h5)
        case_dir = os.path.join(workdir, "case")
        shutil.rmtree(case_dir, ignore_errors=True)
        os.makedirs(case_dir)
        path = os.path.join(case_dir, filename)
        write_input(path, data, attrs)
        out_dir = os.path.join(workdir, "out")
        shutil.rmtree(out_dir, ignore_errors=True)
        os.makedirs(out_dir)
        out = os.path.join(out_dir, "model.hpp")
        namespace = f"f{i}"
        rc, stdout, stderr, error = run_case(tool, path, out, namespace)
        problems, header = check(rc, stdout, stderr, error, out, out_dir, namespace)
        counts["run"] += 1
        fmt = next(w for w in what if w in ("json", "keras", "h5"))
        by_format[fmt] = by_format.get(fmt, 0) + 1
        if problems:
            os.makedirs(faildir, exist_ok=True)
            saved = os.path.join(faildir, f"seed{seed}-case{i}" + os.path.splitext(filename)[1])
            shutil.copyfile(path, saved)
            failures.append(f"case {i} ({', '.join(what)}), saved as {saved}: " + "; ".join(problems)[:3000])
            print("FAILED " + failures[-1])
            sys.stdout.flush()
        elif rc == 0:
            counts["accepted"] += 1
            key = header.replace(f"f{i}", "NS").replace(f"F{i}", "NS")
            if key not in accepted and len(accepted) < 2000:
                accepted[key] = (i, header)
        else:
            counts["refused"] += 1
            if "not a Keras model config this tool can read (" in stderr:
                counts["generic refusals"] += 1
                generic.setdefault(re.sub(r"^.*can read \((\w+).*$", r"\1", stderr.strip()), i)
        if args.case is not None:
            print(f"case {i} ({', '.join(what)}): exit {rc}, {stderr.strip() or 'a header'}")
    elapsed = time.time() - started
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    print(f"{counts['run']} inputs in {elapsed:.0f} s ({', '.join(f'{v} {k}' for k, v in sorted(by_format.items()))}): "
          f"{counts['accepted']} converted ({len(accepted)} distinct headers), {counts['refused']} refused "
          f"({counts['generic refusals']} by the catch-all 'not a Keras model config this tool can read'), "
          f"{len(failures)} failures")
    if generic:
        print("catch-all refusals, first case of each: " + ", ".join(f"{k} (case {v})" for k, v in generic.items()))
    if args.compile and not failures:
        failures += compile_sample(accepted, args.include, args.cxx, args.outdir, args.compile,
                                   random.Random(f"{seed}:compile"))
    shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
