#!/usr/bin/python3
"""tpudsl's LSTM and GRU beside PyTorch's, measured in one run on one machine.

  benchmarks/recurrent_peers.py [--build build/release] [--batch 32,128] [--threads 1,2]
                                [--seconds 3] [--rounds 3] [--peers-dir DIR]

The same model on both sides: 300 token ids -> Embedding(30982, 7) -> LSTM(64) or GRU(64), its last
state -> Dense(46) with softmax cross-entropy, Adam, one batch of synthetic ids trained over and over.
tpudsl: build/release/benchmarks/recurrent_bench (one thread OneDeviceStrategy, two TpuStrategy<2>);
PyTorch: Debian's python3-torch (1.13) with torch.set_num_threads(t) and its BLAS held to t threads
(compare_peers.hold_blas_threads), in this interpreter, and
PyTorch 2 (eager, nn.LSTM / nn.GRU) in the environment scripts/peers_env.sh creates (--peers-dir, by
default TPUDSL_PEERS_DIR or ~/.cache/tpudsl-peers: torch2/), through benchmarks/peer_worker.py; where
that environment is missing it is reported and skipped. They take turns, --rounds times over, and
each figure is the median of its rounds. Prints one line per measurement and one per ratio:
  peer framework=<f> model=<m> batch=<b> threads=<t> samples_per_s=<median>
  ratio model=<m> batch=<b> threads=<t> tpudsl_over_torch=<r>
  ratio model=<m> batch=<b> threads=<t> tpudsl_over_torch2=<r>
Run it with Debian's python3 (/usr/bin/python3), which is the one python3-torch installs into.
"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def torch_samples_per_s(cell, batch, threads, seconds):
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(threads)
    from compare_peers import hold_blas_threads
    hold_blas_threads(threads)

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = torch.nn.Embedding(30982, 7)
            self.rnn = (torch.nn.LSTM if cell == "lstm" else torch.nn.GRU)(7, 64, batch_first=True)
            self.dense = torch.nn.Linear(64, 46)

        def forward(self, x):
            h, _ = self.rnn(self.embedding(x))
            return self.dense(h[:, -1])

    model = Model()
    opt = torch.optim.Adam(model.parameters())
    loss = torch.nn.CrossEntropyLoss()
    x = torch.randint(0, 30982, (batch, 300))
    y = torch.randint(0, 46, (batch,))

    def step():
        opt.zero_grad()
        loss(model(x), y).backward()
        opt.step()

    step()
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
        done += batch
    return done / (time.perf_counter() - start)


def tpudsl_samples_per_s(binary, cell, batch, threads, seconds):
    out = subprocess.run([str(binary), "--model", cell, "--batch", str(batch), "--threads", str(threads),
                          "--seconds", str(seconds)], capture_output=True, text=True, check=True).stdout
    return float(re.search(r"samples_per_s=([0-9.]+)", out).group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=str(ROOT / "build" / "release"))
    p.add_argument("--batch", default="32,128")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--peers-dir", default=os.environ.get("TPUDSL_PEERS_DIR") or str(
        pathlib.Path(os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache") / "tpudsl-peers"))
    args = p.parse_args()
    binary = pathlib.Path(args.build) / "benchmarks" / "recurrent_bench"
    sys.dont_write_bytecode = True   # no __pycache__ left in the source tree
    from compare_peers import Worker, venv_python
    torch2 = venv_python(pathlib.Path(args.peers_dir), "pytorch2")
    if torch2 is None:
        print("skipped framework=torch2 reason=no environment %s/torch2 (scripts/peers_env.sh)" % args.peers_dir)
    for batch in (int(b) for b in args.batch.split(",")):
        for threads in (int(t) for t in args.threads.split(",")):
            for cell in ("lstm", "gru"):
                worker = None
                if torch2 is not None:
                    worker = Worker(torch2, "pytorch2", cell, batch, threads)
                    if worker.error:
                        print(f"skipped framework=torch2 model={cell} reason={worker.error}")
                        worker = None
                ours, theirs, theirs2 = [], [], []
                try:
                    for _ in range(args.rounds):
                        ours.append(tpudsl_samples_per_s(binary, cell, batch, threads, args.seconds))
                        theirs.append(torch_samples_per_s(cell, batch, threads, args.seconds))
                        if worker is not None:
                            value = worker.run(args.seconds)
                            if value is not None:
                                theirs2.append(value)
                finally:
                    if worker is not None:
                        worker.close()
                a, b = statistics.median(ours), statistics.median(theirs)
                print(f"peer framework=tpudsl model={cell} batch={batch} threads={threads} samples_per_s={a:.0f}")
                print(f"peer framework=torch model={cell} batch={batch} threads={threads} samples_per_s={b:.0f}")
                if theirs2:
                    c = statistics.median(theirs2)
                    print(f"peer framework=torch2 model={cell} batch={batch} threads={threads} samples_per_s={c:.0f}")
                print(f"ratio model={cell} batch={batch} threads={threads} tpudsl_over_torch={a / b:.1f}", flush=True)
                if theirs2:
                    print(f"ratio model={cell} batch={batch} threads={threads} tpudsl_over_torch2={a / c:.1f}",
                          flush=True)


if __name__ == "__main__":
    main()
