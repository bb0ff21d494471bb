#!/usr/bin/python3
"""tpudsl beside what its users would run instead, measured in one run on one machine.

  benchmarks/compare_peers.py [--build build/release] [--batch 128] [--seconds 3] [--rounds 3]
                              [--threads 1,2] [--models fashion,reuters,mnist,cifar,cifar_bn,reuters_lstm]
                              [--isa native|avx2]
                              [--frameworks all|tpudsl,pytorch,...] [--peers-dir DIR]
                              [--csv FILE] [--svg FILE] [--table A.csv,B.csv]

Trains each seed model for --seconds on synthetic inputs of its shapes (throughput does not depend on
the values), Adam, sparse categorical cross-entropy, the same batch and the same thread count. The
default --models are the seeds and the two Sequential models beside them; --models resnet20 adds
examples/cifar10_resnet's ResNet-20 (a functional model: tpudsl on one or two threads only; --models
resnet20 --threads 1,2 --rounds 3 takes about 5.5 minutes on 2 cores, 2.3 of them the peers' warm-up;
--models reuters_transformer adds keras.io's Transformer classifier, examples/reuters_transformer, a
functional model too):

  * tpudsl: build/release/benchmarks/tpudsl_bench (one thread: OneDeviceStrategy; two: TpuStrategy<2>);
  * pytorch: Debian's python3-torch (1.13) with torch.set_num_threads(t) and the OpenBLAS it calls
    (where that is its BLAS) held to t threads too (hold_blas_threads), in this interpreter, every
    model (the CIFAR-10 one with BatchNormalization too: BatchNorm2d with Keras' epsilon and
    momentum; the recurrent Reuters one with nn.LSTM; ResNet-20 as residual nn.Modules);
  * pytorch2, pytorch2-compile: PyTorch 2 from PyPI, eager, and with the model through torch.compile
    (Inductor's C++ code for the CPU), the same definitions, torch.set_num_threads(t);
  * keras3, keras3-xla: Keras 3 on TensorFlow 2 (CPU), the models written as the seeds declare them,
    model.compile(jit_compile=False or True) and train_on_batch (the compiled train step model.fit
    runs: TensorFlow's graph with its oneDNN kernels, or one XLA program); t intra-op and t inter-op
    threads (TensorFlow's own default on a t-core machine);
  * tiny-dnn (Debian's tiny-dnn) and dlib (libdlib-dev), the Fashion-MNIST model, built here with g++ -O3
    -march=native (tiny-dnn with its AVX backend; CNN_SINGLE_THREAD for one thread, its own
    std::thread parallel_for otherwise; dlib with OPENBLAS_NUM_THREADS=t).

The PyTorch 2 and Keras 3 peers run in the virtual environments that scripts/peers_env.sh creates
(--peers-dir, by default TPUDSL_PEERS_DIR or ~/.cache/tpudsl-peers: torch2/ and keras3-tf/), each
configuration in its own interpreter (benchmarks/peer_worker.py), started once per model and thread
count and warmed up (compiled) before the first round; its warm-up time is printed, not measured.

The frameworks take turns, --rounds times over (tpudsl, PyTorch, ..., tpudsl, ...), so that a machine
whose speed drifts over minutes (a shared or virtual one) slows them alike; each figure is the median
of its rounds. Prints one line per measurement and one per ratio (of the medians):
  peer framework=<f> model=<m> batch=<b> threads=<t> samples_per_s=<median> min=<x> max=<y> rounds=<n>
       [cpu_per_wall=<c>: for the PyTorch and Keras peers, their process's CPU time over wall time,
       about the threads they really kept busy]
  ratio model=<m> threads=<t> peer=<f> tpudsl_over_peer=<r>
  fastest model=<m> threads=<t> peer=<f> tpudsl_over_fastest_peer=<r>
--isa avx2 holds every framework to AVX2 and FMA on a machine that has AVX-512 (an AVX2 machine's code
on this core): tpudsl from build/avx2 (cmake --preset avx2: -march=x86-64-v3), tiny-dnn and dlib built
with -march=x86-64-v3, PyTorch's kernels and Inductor's generated code through ATEN_CPU_CAPABILITY=avx2,
oneDNN (in PyTorch and TensorFlow) through ONEDNN_MAX_CPU_ISA=AVX2, XLA through
XLA_FLAGS=--xla_cpu_max_isa=AVX2, OpenBLAS (dlib's BLAS) through OPENBLAS_CORETYPE=Haswell.
--csv writes the medians (with each peer's version), --svg a picture of them: each peer's samples/s
as a share of tpudsl's, per model and thread count. --table A.csv,B.csv prints the Markdown table of
earlier runs' CSVs (samples/s, tpudsl's ratio to each peer and to the fastest; a later CSV's model and
thread count replaces an earlier one's) and runs nothing.
Run it with Debian's python3 (/usr/bin/python3), which is the one python3-torch installs into.
The peers inherit the environment: on a machine that other jobs share, OMP_WAIT_POLICY=PASSIVE keeps
PyTorch's OpenMP threads from spinning at each barrier while a descheduled thread holds it up (which
took PyTorch 2's MLP on two threads from about 9,000 samples/s to about 340 on a busy 2-core machine).
Peers missing from the machine are reported and skipped; scripts/install_deps.sh installs the Debian
ones and scripts/peers_env.sh the others:
  scripts/install_deps.sh libopenblas-dev python3-torch tiny-dnn libcereal-dev libstb-dev \
      libgemmlowp-dev libdlib-dev pkg-config
  scripts/peers_env.sh
"""
import argparse
import csv
import html
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def parse_line(line):
    return dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)


# ----------------------------------------------------------------------------------------------
# tpudsl

def run_tpudsl(build, model, batch, threads, seconds):
    exe = build / "benchmarks" / "tpudsl_bench"
    strategy = "one" if threads == 1 else "tpu%d" % threads
    out = subprocess.run([str(exe), "--model", model, "--batch", str(batch), "--strategy", strategy,
                          "--kernels", "off", "--seconds", str(seconds), "--rounds", "1"],
                         check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("tpudsl_bench "):
            return float(parse_line(line)["samples_per_s"])
        if line.startswith("tpudsl_bench: %s skipped" % model):   # a Functional model beyond two threads
            return None
    raise RuntimeError("tpudsl_bench printed no result:\n" + out)


# ----------------------------------------------------------------------------------------------
# PyTorch: the seed models as Keras declares them (channels-last there, NCHW here: each framework's
# native layout)

def torch_model(torch, name):
    nn = torch.nn
    if name == "fashion":
        return nn.Sequential(nn.Conv2d(1, 64, 3), nn.MaxPool2d(2), nn.ReLU(), nn.Flatten(), nn.Linear(13 * 13 * 64, 10)), (1, 28, 28)
    if name == "mnist":
        return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Dropout(0.2), nn.Linear(512, 512), nn.ReLU(),
                             nn.Dropout(0.2), nn.Linear(512, 10)), (784,)
    if name == "cifar":
        return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Dropout(0.25), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(), nn.Linear(6 * 6 * 64, 512), nn.ReLU(),
                             nn.Dropout(0.5), nn.Linear(512, 10)), (3, 32, 32)
    if name == "cifar_bn":
        def block(i, o, padding):
            return [nn.Conv2d(i, o, 3, padding=padding), nn.BatchNorm2d(o, eps=1e-3, momentum=0.01), nn.ReLU()]
        return nn.Sequential(*block(3, 32, 1), *block(32, 32, 0), nn.MaxPool2d(2), *block(32, 64, 1),
                             *block(64, 64, 0), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.25),
                             nn.Linear(64, 10)), (3, 32, 32)
    if name == "reuters":
        class Reuters(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(30982, 7)
                self.body = nn.Sequential(nn.Conv1d(7, 64, 5), nn.ReLU(), nn.MaxPool1d(2), nn.Conv1d(64, 32, 3), nn.ReLU(),
                                          nn.MaxPool1d(2), nn.Flatten(), nn.Linear(73 * 32, 46))

            def forward(self, x):
                return self.body(self.embed(x).transpose(1, 2))
        return Reuters(), (300,)
    if name == "reuters_lstm":
        class ReutersLstm(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(30982, 32)
                self.lstm = nn.LSTM(32, 64, batch_first=True)
                self.out = nn.Linear(64, 46)

            def forward(self, x):
                _, (h, _) = self.lstm(self.embed(x))
                return self.out(h[-1])
        return ReutersLstm(), (200,)
    if name == "reuters_transformer":
        # examples/reuters_transformer (keras.io's Transformer classifier): Keras' MultiHeadAttention(2,
        # key_dim=32) projects to 2 heads of 32 (nn.MultiheadAttention's heads would be 16 wide), so the
        # projections are Linear layers and the attention is scaled_dot_product_attention (PyTorch 2) or
        # its three operations (PyTorch 1.13); LayerNorm(eps=1e-6), dropout 0.1 where keras.io has it.
        class ReutersTransformer(nn.Module):
            def __init__(self):
                super().__init__()
                self.tokens, self.positions = nn.Embedding(30982, 32), nn.Parameter(torch.zeros(200, 32))
                self.q, self.k, self.v, self.o = nn.Linear(32, 64), nn.Linear(32, 64), nn.Linear(32, 64), nn.Linear(64, 32)
                self.norm1, self.norm2 = nn.LayerNorm(32, eps=1e-6), nn.LayerNorm(32, eps=1e-6)
                self.ffn = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 32))
                self.drop = nn.Dropout(0.1)
                self.head = nn.Sequential(nn.Dropout(0.1), nn.Linear(32, 20), nn.ReLU(), nn.Dropout(0.1), nn.Linear(20, 46))

            def heads(self, x):   # (batch, 200, 64) -> (batch, 2, 200, 32)
                return x.view(x.shape[0], 200, 2, 32).transpose(1, 2)

            def forward(self, ids):
                x = self.tokens(ids) + self.positions
                q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
                if hasattr(torch.nn.functional, "scaled_dot_product_attention"):
                    a = torch.nn.functional.scaled_dot_product_attention(q, k, v)
                else:
                    a = torch.softmax(q @ k.transpose(-2, -1) / 32 ** 0.5, dim=-1) @ v
                x = self.norm1(x + self.drop(self.o(a.transpose(1, 2).reshape(x.shape[0], 200, 64))))
                x = self.norm2(x + self.drop(self.ffn(x)))
                return self.head(x.mean(dim=1))
        return ReutersTransformer(), (200,)
    if name == "resnet20":
        # examples/cifar10_resnet (tests/keras/keras_side.py's resnet20()): every convolution "same" with
        # its bias, BatchNormalization after each 3x3 one, a 1x1 stride-2 projection shortcut without it.
        # Keras' "same" of a 3x3 stride-2 convolution on an even input pads 0 rows and columns above and
        # left, 1 below and right; padding=1 pads 1 on every side, and its windows, one pixel up and left
        # of Keras', never reach the bottom and right padding: the same output shape and the same
        # multiply-adds (FLOPs), which is all a speed benchmark needs; the values are not Keras'.
        def bn(channels):
            return nn.BatchNorm2d(channels, eps=1e-3, momentum=0.01)

        class Block(nn.Module):
            def __init__(self, inputs, filters, stride):
                super().__init__()
                self.body = nn.Sequential(nn.Conv2d(inputs, filters, 3, stride, padding=1), bn(filters), nn.ReLU(),
                                          nn.Conv2d(filters, filters, 3, padding=1), bn(filters))
                self.shortcut = nn.Conv2d(inputs, filters, 1, stride) if stride != 1 else nn.Identity()

            def forward(self, x):
                return torch.relu(self.shortcut(x) + self.body(x))

        blocks = [nn.Conv2d(3, 16, 3, padding=1), bn(16), nn.ReLU()]
        inputs = 16
        for stage, filters in enumerate((16, 32, 64)):
            for b in range(3):
                blocks.append(Block(inputs, filters, 2 if stage > 0 and b == 0 else 1))
                inputs = filters
        return nn.Sequential(*blocks, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)), (3, 32, 32)
    raise ValueError(name)


def hold_blas_threads(threads):
    """Holds the OpenBLAS that this process loaded, if any, to `threads` threads; returns how many
    loaded libraries took the call (0 without OpenBLAS: the reference BLAS runs on the calling thread).
    Debian's PyTorch 1.13 runs its matrix products on the system's BLAS (OpenBLAS where installed),
    whose own thread pool torch.set_num_threads does not reach: on one thread its MNIST MLP kept 1.8
    cores busy."""
    import ctypes
    paths = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)   # address perms offset dev inode [path]
            path = fields[5].strip() if len(fields) == 6 else ""
            if path.endswith(" (deleted)"):
                path = path[: -len(" (deleted)")]
            if path.startswith("/") and "blas" in pathlib.Path(path).name:
                paths.add(path)
    held = 0
    for path in sorted(paths):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("openblas_set_num_threads", "openblas_set_num_threads64_"):
            if hasattr(library, name):
                getattr(library, name)(ctypes.c_int(threads))
                held += 1
                break
    return held


def run_torch(model, batch, threads, seconds, cpu=None):
    """PyTorch 1.13's samples/s; its CPU time over wall time appended to `cpu`."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    hold_blas_threads(threads)
    torch.manual_seed(1)
    net, shape = torch_model(torch, model)
    classes = 46 if model.startswith("reuters") else 10
    steps = 4
    if model.startswith("reuters"):
        x = torch.randint(0, 30982, (steps, batch) + shape)
    else:
        x = torch.rand((steps, batch) + shape)
    y = torch.randint(0, classes, (steps, batch))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()   # softmax + sparse categorical cross-entropy, as the fused path

    def step(i):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(x[i]), y[i])
        loss.backward()
        opt.step()

    net.train()
    for i in range(steps):
        step(i)   # warm-up
    done = 0
    cpu0 = time.process_time()
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for i in range(steps):
            step(i)
        done += steps * batch
    wall = time.perf_counter() - start
    if cpu is not None:
        cpu.append((time.process_time() - cpu0) / wall)
    return done / wall


# ----------------------------------------------------------------------------------------------
# tiny-dnn and dlib (C++; built here, never part of tpudsl's build)

# --isa: what each framework is held to (the environment its process inherits, the -march of the C++ peers)
ISA_LIMITS = {
    "native": ({}, "-march=native"),
    "avx2": ({"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "DNNL_MAX_CPU_ISA": "AVX2",
              "XLA_FLAGS": "--xla_cpu_max_isa=AVX2", "OPENBLAS_CORETYPE": "Haswell"}, "-march=x86-64-v3"),
}


def build_peer(build, name, threads, march="-march=native"):
    src = ROOT / "benchmarks" / "peers" / (name + "_fashion.cpp")
    out_dir = build / "benchmarks" / "peers"
    out_dir.mkdir(parents=True, exist_ok=True)
    exe = out_dir / ("%s_fashion%s" % (name, "_1t" if name == "tiny_dnn" and threads == 1 else ""))
    if exe.exists() and exe.stat().st_mtime > src.stat().st_mtime:
        return exe
    cmd = ["g++", "-std=c++17", "-O3", march, "-DNDEBUG", "-w", str(src), "-o", str(exe), "-pthread"]
    if name == "tiny_dnn":
        if not pathlib.Path("/usr/include/tiny_dnn/tiny_dnn.h").exists():
            return None
        # tiny-dnn includes stb as third_party/stb/...; Debian's libstb-dev installs it as stb/...
        shim = out_dir / "include" / "third_party"
        shim.mkdir(parents=True, exist_ok=True)
        if not (shim / "stb").exists():
            (shim / "stb").symlink_to("/usr/include/stb")
        cmd += ["-I", str(out_dir / "include"), "-DCNN_USE_AVX"] + (["-DCNN_SINGLE_THREAD"] if threads == 1 else [])
    else:
        if not pathlib.Path("/usr/include/dlib/dnn.h").exists() or not shutil.which("pkg-config"):
            return None
        cmd += subprocess.run(["pkg-config", "--libs", "dlib-1"], check=True, capture_output=True,
                              text=True).stdout.split()
    print("building %s: %s" % (exe.name, " ".join(cmd)), file=sys.stderr)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr[-2000:], file=sys.stderr)
        return None
    return exe


def run_peer(build, name, batch, threads, seconds, march="-march=native"):
    exe = build_peer(build, name, threads, march)
    if exe is None:
        return None
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run([str(exe), str(batch), str(seconds)], check=True, capture_output=True, text=True,
                         env=env).stdout
    for line in out.splitlines():
        if line.startswith("peer "):
            return float(parse_line(line)["samples_per_s"])
    return None


# ----------------------------------------------------------------------------------------------
# PyTorch 2 and Keras 3: one worker process per configuration, in its virtual environment

VENV_PEERS = {   # framework -> (environment under --peers-dir, peer_worker.py --framework)
    "pytorch2": ("torch2", "torch"),
    "pytorch2-compile": ("torch2", "torch-compile"),
    "keras3": ("keras3-tf", "keras"),
    "keras3-xla": ("keras3-tf", "keras-xla"),
}
FRAMEWORKS = ["tpudsl", "pytorch", "pytorch2", "pytorch2-compile", "keras3", "keras3-xla", "tiny-dnn", "dlib"]


class Worker:
    """benchmarks/peer_worker.py in a peer's interpreter, warm between rounds."""

    def __init__(self, python, framework, model, batch, threads):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow",
                   PYTHONDONTWRITEBYTECODE="1")
        self.stderr = tempfile.TemporaryFile(mode="w+")   # read only if it fails; a pipe could fill up
        self.proc = subprocess.Popen([str(python), str(ROOT / "benchmarks" / "peer_worker.py"), "--framework",
                                      VENV_PEERS[framework][1], "--model", model, "--batch", str(batch),
                                      "--threads", str(threads)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                     text=True, env=env)
        self.version = None
        self.error = None
        self.cpu = []   # each round's CPU time over wall time: about the threads the peer really used
        line = self._line()
        fields = parse_line(line) if line else {}
        if line.startswith("ready "):
            self.version = fields.get("version")
            self.warmup = fields.get("warmup_s")
        else:
            self.close()
            self.stderr.seek(0)
            self.error = line.split("reason=", 1)[1] if "reason=" in line else (
                "exited: " + " ".join(self.stderr.read().split()[-40:]))

    def _line(self):
        while True:
            line = self.proc.stdout.readline()
            if not line or line.startswith(("ready ", "error ", "result ")):
                return line.strip()

    def run(self, seconds):
        if self.error:
            return None
        self.proc.stdin.write("run %g\n" % seconds)
        self.proc.stdin.flush()
        line = self._line()
        if not line.startswith("result "):
            self.error = "the worker stopped"
            self.close()
            return None
        fields = parse_line(line)
        if "cpu_per_wall" in fields:
            self.cpu.append(float(fields["cpu_per_wall"]))
        return float(fields["samples_per_s"])

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
            except BrokenPipeError:
                pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def venv_python(peers_dir, framework):
    python = peers_dir / VENV_PEERS[framework][0] / "bin" / "python"
    return python if python.exists() else None


# ----------------------------------------------------------------------------------------------
# The picture: each peer's samples/s as a share of tpudsl's, one group of bars per model and threads

COLOURS = {"tpudsl": "#1f77b4", "pytorch": "#ff7f0e", "pytorch2": "#d62728", "pytorch2-compile": "#9467bd",
           "keras3": "#2ca02c", "keras3-xla": "#17becf", "tiny-dnn": "#8c564b", "dlib": "#7f7f7f"}


NAMES = {"tpudsl": "tpudsl", "pytorch": "PyTorch 1.13", "pytorch2": "PyTorch 2", "pytorch2-compile": "PyTorch 2 compile",
         "keras3": "Keras 3", "keras3-xla": "Keras 3 XLA", "tiny-dnn": "tiny-dnn", "dlib": "dlib"}


def markdown_table(csv_files):
    """The medians of one or more CSVs of this script as a Markdown table: samples/s, and tpudsl's
    ratio to each peer and to the fastest."""
    groups = {}
    for name in csv_files:   # a later run's model and thread count replaces an earlier one's whole
        run = {}
        with open(name, newline="") as f:
            for r in csv.DictReader(f):
                run.setdefault((r["model"], int(r["threads"]), r["batch"]), {})[r["framework"]] = float(r["samples_per_s"])
        groups.update(run)
    frameworks = [f for f in FRAMEWORKS if any(f in g for g in groups.values())]
    lines = ["| model | batch | threads | " + " | ".join(NAMES[f] for f in frameworks) + " | fastest peer |",
             "|---" * (len(frameworks) + 4) + "|"]
    for (model, threads, batch), g in groups.items():
        base = g.get("tpudsl")
        cells = []
        for f in frameworks:
            if f not in g:
                cells.append("")
            elif f == "tpudsl" or not base:
                cells.append("{:,.0f}".format(g[f]))
            else:
                cells.append("{:,.0f} ({:.2f}x)".format(g[f], base / g[f]))
        peers = {f: v for f, v in g.items() if f != "tpudsl"}
        fastest = max(peers, key=peers.get) if peers else None
        best = "%s, **%.2fx**" % (NAMES[fastest], base / peers[fastest]) if fastest and base else ""
        lines.append("| %s | %s | %d | %s | %s |" % (model, batch, threads, " | ".join(cells), best))
    return "\n".join(lines)


def write_svg(path, rows, batch, machine):
    groups = []
    for model, threads, framework, value, *_ in rows:
        key = (model, threads)
        if key not in [g[0] for g in groups]:
            groups.append((key, {}))
        dict(groups)[key][framework] = value
    frameworks = [f for f in FRAMEWORKS if any(f in bars for _, bars in groups)]
    shares = [v / bars["tpudsl"] for _, bars in groups if bars.get("tpudsl") for v in bars.values()]
    top = max([1.0] + shares) * 1.15
    bar, gap, left, width = 11, 14, 190, 560
    height = 70 + sum(len(bars) * bar + gap for _, bars in groups) + 24 * ((len(frameworks) + 3) // 4)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="11">' % (left + width + 120, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="18" font-size="13">Training samples/s as a share of tpudsl\'s (batch %d, same '
           'threads; medians of interleaved rounds)</text>' % batch,
           '<text x="10" y="34" fill="#555">%s</text>' % html.escape(machine)]
    y = 50
    scale = width / top
    for (model, threads), bars in groups:
        out.append('<text x="10" y="%d">%s, %d thread%s</text>' % (y + bar, html.escape(model), threads,
                                                                   "" if threads == 1 else "s"))
        base = bars.get("tpudsl")
        for framework in frameworks:
            if framework not in bars:
                continue
            value = bars[framework]
            share = value / base if base else 0
            out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s %s %d threads: %.0f '
                       'samples/s</title></rect>' % (left, y, max(share * scale, 1), bar - 2, COLOURS[framework],
                                                      framework, model, threads, value))
            label = "%.0f/s" % value if framework == "tpudsl" else "%.0f/s (tpudsl %.1fx)" % (
                value, base / value if base else 0)
            out.append('<text x="%.1f" y="%d" fill="#333" font-size="9">%s</text>' % (
                left + max(share * scale, 1) + 4, y + bar - 3, label))
            y += bar
        y += gap
    x1 = left + scale
    out.append('<line x1="%.1f" y1="46" x2="%.1f" y2="%d" stroke="#000" stroke-dasharray="3,3"/>' % (x1, x1, y - gap))
    for k, framework in enumerate(frameworks):
        lx, ly = 10 + (k % 4) * 200, y + 8 + (k // 4) * 22
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>' % (
            lx, ly, COLOURS[framework], lx + 16, ly + 10, framework))
    out.append("</svg>")
    pathlib.Path(path).write_text("\n".join(out) + "\n")


# ----------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="", help="tpudsl's build (build/release; build/avx2 with --isa avx2)")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--models", default="fashion,reuters,mnist,cifar,cifar_bn,reuters_lstm",
                    help="those, resnet20 and reuters_transformer too (not by default)")
    ap.add_argument("--frameworks", default="all", help="all, or some of " + ",".join(FRAMEWORKS))
    ap.add_argument("--peers-dir", default=os.environ.get("TPUDSL_PEERS_DIR") or str(
        pathlib.Path(os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache") / "tpudsl-peers"))
    ap.add_argument("--csv", default="")
    ap.add_argument("--svg", default="")
    ap.add_argument("--isa", default="native", choices=sorted(ISA_LIMITS),
                    help="avx2: hold every framework to AVX2 and FMA (see above)")
    ap.add_argument("--table", default="", help="print the Markdown table of these CSVs (comma-separated) and exit")
    a = ap.parse_args()
    if a.table:
        print(markdown_table(a.table.split(",")))
        return
    isa_env, march = ISA_LIMITS[a.isa]
    os.environ.update(isa_env)   # before torch is imported: the workers and the C++ peers inherit it
    build = pathlib.Path(a.build or ROOT / "build" / ("avx2" if a.isa == "avx2" else "release"))
    peers_dir = pathlib.Path(a.peers_dir)
    wanted = FRAMEWORKS if a.frameworks == "all" else a.frameworks.split(",")
    unknown = [f for f in wanted if f not in FRAMEWORKS]
    if unknown:
        sys.exit("compare_peers: no framework %s (%s)" % (",".join(unknown), ",".join(FRAMEWORKS)))
    if "tpudsl" in wanted and not (build / "benchmarks" / "tpudsl_bench").exists():
        preset = "avx2" if a.isa == "avx2" else "release"
        sys.exit("compare_peers: build tpudsl_bench first: cmake --preset %s && "
                 "cmake --build --preset %s --target tpudsl_bench" % (preset, preset))
    cpu = re.sub(r"\s+", " ", next((l.split(":", 1)[1] for l in open("/proc/cpuinfo") if l.startswith("model name")),
                                   "?")).strip()
    flags = next((l.split(":", 1)[1].split() for l in open("/proc/cpuinfo") if l.startswith("flags")), [])
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    machine = "%s, %s, %d cores" % (cpu, isa, os.cpu_count())
    if a.isa == "avx2":
        machine += ", every framework held to AVX2"
    print("machine: %s; python %s%s" % (machine, sys.version.split()[0], "; OMP_WAIT_POLICY=" +
                                        os.environ["OMP_WAIT_POLICY"] if "OMP_WAIT_POLICY" in os.environ else ""))
    for framework in wanted:
        if framework in VENV_PEERS and venv_python(peers_dir, framework) is None:
            print("skipped framework=%s reason=no environment %s (scripts/peers_env.sh %s)" % (
                framework, peers_dir / VENV_PEERS[framework][0], peers_dir))
    versions = {"tpudsl": "", "pytorch": "", "tiny-dnn": "", "dlib": ""}
    try:
        import torch
        versions["pytorch"] = "torch-" + torch.__version__
    except ImportError:
        pass
    rows = []
    for model in a.models.split(","):
        for threads in [int(t) for t in a.threads.split(",")]:
            cpu_of = {"pytorch": []}   # framework -> each round's CPU time over wall time, where measured
            runs = {"tpudsl": lambda: run_tpudsl(build, model, a.batch, threads, a.seconds),
                    "pytorch": lambda: run_torch(model, a.batch, threads, a.seconds, cpu_of["pytorch"])}
            if model == "fashion":
                runs["tiny-dnn"] = lambda: run_peer(build, "tiny_dnn", a.batch, threads, a.seconds, march)
                runs["dlib"] = lambda: run_peer(build, "dlib", a.batch, threads, a.seconds, march)
            workers = {}
            for framework in VENV_PEERS:
                python = venv_python(peers_dir, framework)
                if framework not in wanted or python is None:
                    continue
                worker = Worker(python, framework, model, a.batch, threads)
                if worker.error:
                    print("skipped framework=%s model=%s threads=%d reason=%s" % (framework, model, threads,
                                                                                  worker.error))
                    continue
                print("warm framework=%s model=%s threads=%d version=%s warmup_s=%s" % (
                    framework, model, threads, worker.version, worker.warmup))
                sys.stdout.flush()
                versions[framework] = worker.version
                workers[framework] = worker
                cpu_of[framework] = worker.cpu
                runs[framework] = lambda w=worker: w.run(a.seconds)
            runs = {f: runs[f] for f in FRAMEWORKS if f in runs and f in wanted}
            samples = {framework: [] for framework in runs}
            try:
                for _ in range(max(1, a.rounds)):
                    for framework, run in runs.items():
                        value = run()
                        if value is not None:
                            samples[framework].append(value)
            finally:
                for worker in workers.values():
                    worker.close()
            results = {}
            for framework, values in samples.items():
                if not values:
                    results[framework] = None
                    print("peer framework=%s model=%s batch=%d threads=%d samples_per_s=unavailable" %
                          (framework, model, a.batch, threads))
                    continue
                results[framework] = statistics.median(values)
                cpu = cpu_of.get(framework, [])
                print("peer framework=%s model=%s batch=%d threads=%d samples_per_s=%.1f min=%.1f max=%.1f rounds=%d%s" %
                      (framework, model, a.batch, threads, results[framework], min(values), max(values), len(values),
                       " cpu_per_wall=%.2f" % statistics.median(cpu) if cpu else ""))
                rows.append((model, threads, framework, results[framework], min(values), max(values), len(values)))
            peers = {f: v for f, v in results.items() if f != "tpudsl" and v}
            if results.get("tpudsl"):
                for framework, value in peers.items():
                    print("ratio model=%s threads=%d peer=%s tpudsl_over_peer=%.2f" %
                          (model, threads, framework, results["tpudsl"] / value))
                if peers:
                    fastest = max(peers, key=peers.get)
                    print("fastest model=%s threads=%d peer=%s tpudsl_over_fastest_peer=%.2f" %
                          (model, threads, fastest, results["tpudsl"] / peers[fastest]))
            sys.stdout.flush()
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["model", "batch", "threads", "framework", "samples_per_s", "min", "max", "rounds", "version"])
            for model, threads, framework, value, low, high, n in rows:
                w.writerow([model, a.batch, threads, framework, "%.1f" % value, "%.1f" % low, "%.1f" % high, n,
                            versions.get(framework, "")])
    if a.svg and rows:
        write_svg(a.svg, rows, a.batch, machine)

if __name__ == "__main__":
    main()
