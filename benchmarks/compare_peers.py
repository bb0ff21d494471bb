#!/usr/bin/python3
"""tpudsl beside what its users would run instead, measured in one run on one machine.

  benchmarks/compare_peers.py [--build build/release] [--batch 128] [--seconds 3] [--rounds 3]
                              [--threads 1,2] [--models fashion,reuters,mnist,cifar,cifar_bn,reuters_lstm]
                              [--csv FILE]

Trains each seed model for --seconds on synthetic inputs of its shapes (throughput does not depend on
the values), Adam, sparse categorical cross-entropy, the same batch and the same thread count:

  * tpudsl: build/release/benchmarks/tpudsl_bench (one thread: OneDeviceStrategy; two: TpuStrategy<2>);
  * PyTorch (Debian's python3-torch, 1.13) with torch.set_num_threads(t), every model (the CIFAR-10
    one with BatchNormalization too: BatchNorm2d with Keras' epsilon and momentum; the recurrent Reuters
    one with nn.LSTM);
  * tiny-dnn (Debian's tiny-dnn) and dlib (libdlib-dev), the Fashion-MNIST model, built here with g++ -O3
    -march=native (tiny-dnn with its AVX backend; CNN_SINGLE_THREAD for one thread, its own
    std::thread parallel_for otherwise; dlib with OPENBLAS_NUM_THREADS=t).

The frameworks take turns, --rounds times over (tpudsl, PyTorch, tiny-dnn, dlib, tpudsl, ...), so that a
machine whose speed drifts over minutes (a shared or virtual one) slows them alike; each figure is the
median of its rounds. Prints one line per measurement and one per ratio (of the medians):
  peer framework=<f> model=<m> batch=<b> threads=<t> samples_per_s=<median> min=<x> max=<y> rounds=<n>
  ratio model=<m> threads=<t> peer=<f> tpudsl_over_peer=<r>
Run it with Debian's python3 (/usr/bin/python3), which is the one python3-torch installs into.
Peers missing from the machine are reported and skipped; scripts/install_deps.sh installs them:
  scripts/install_deps.sh libopenblas-dev python3-torch tiny-dnn libcereal-dev libstb-dev \
      libgemmlowp-dev libdlib-dev pkg-config
"""
import argparse
import csv
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
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
    raise ValueError(name)


def run_torch(model, batch, threads, seconds):
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
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
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for i in range(steps):
            step(i)
        done += steps * batch
    return done / (time.perf_counter() - start)


# ----------------------------------------------------------------------------------------------
# tiny-dnn and dlib (C++; built here, never part of tpudsl's build)

def build_peer(build, name, threads):
    src = ROOT / "benchmarks" / "peers" / (name + "_fashion.cpp")
    out_dir = build / "benchmarks" / "peers"
    out_dir.mkdir(parents=True, exist_ok=True)
    exe = out_dir / ("%s_fashion%s" % (name, "_1t" if name == "tiny_dnn" and threads == 1 else ""))
    if exe.exists() and exe.stat().st_mtime > src.stat().st_mtime:
        return exe
    cmd = ["g++", "-std=c++17", "-O3", "-march=native", "-DNDEBUG", "-w", str(src), "-o", str(exe), "-pthread"]
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


def run_peer(build, name, batch, threads, seconds):
    exe = build_peer(build, name, threads)
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

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build" / "release"))
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--models", default="fashion,reuters,mnist,cifar,cifar_bn,reuters_lstm")
    ap.add_argument("--csv", default="")
    a = ap.parse_args()
    build = pathlib.Path(a.build)
    if not (build / "benchmarks" / "tpudsl_bench").exists():
        sys.exit("compare_peers: build tpudsl_bench first: cmake --preset release && "
                 "cmake --build --preset release --target tpudsl_bench")
    print("machine: %s, %d cores; python %s" % (
        re.sub(r"\s+", " ", next((l.split(":", 1)[1] for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")).strip(),
        os.cpu_count(), sys.version.split()[0]))
    rows = []
    for model in a.models.split(","):
        for threads in [int(t) for t in a.threads.split(",")]:
            runs = {"tpudsl": lambda: run_tpudsl(build, model, a.batch, threads, a.seconds),
                    "pytorch": lambda: run_torch(model, a.batch, threads, a.seconds)}
            if model == "fashion":
                runs["tiny-dnn"] = lambda: run_peer(build, "tiny_dnn", a.batch, threads, a.seconds)
                runs["dlib"] = lambda: run_peer(build, "dlib", a.batch, threads, a.seconds)
            samples = {framework: [] for framework in runs}
            for _ in range(max(1, a.rounds)):
                for framework, run in runs.items():
                    value = run()
                    if value is not None:
                        samples[framework].append(value)
            results = {}
            for framework, values in samples.items():
                if not values:
                    results[framework] = None
                    print("peer framework=%s model=%s batch=%d threads=%d samples_per_s=unavailable" %
                          (framework, model, a.batch, threads))
                    continue
                results[framework] = statistics.median(values)
                print("peer framework=%s model=%s batch=%d threads=%d samples_per_s=%.1f min=%.1f max=%.1f rounds=%d" %
                      (framework, model, a.batch, threads, results[framework], min(values), max(values), len(values)))
                rows.append((model, threads, framework, results[framework], min(values), max(values), len(values)))
            for framework, value in results.items():
                if framework != "tpudsl" and value and results["tpudsl"]:
                    print("ratio model=%s threads=%d peer=%s tpudsl_over_peer=%.2f" %
                          (model, threads, framework, results["tpudsl"] / value))
            sys.stdout.flush()
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["model", "batch", "threads", "framework", "samples_per_s", "min", "max", "rounds"])
            for model, threads, framework, value, low, high, n in rows:
                w.writerow([model, a.batch, threads, framework, "%.1f" % value, "%.1f" % low, "%.1f" % high, n])


if __name__ == "__main__":
    main()
