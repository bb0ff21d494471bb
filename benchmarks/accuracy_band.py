#!/usr/bin/python3
"""Test accuracy of examples/reuters_transformer beside Keras 3's, same data, same recipe, several seeds.

  benchmarks/accuracy_band.py [--build build/release] [--seeds 1,2,3,4,5] [--keras-python PYTHON]
                              [--data DIR] [--epochs 2] [--batch 32]

Trains keras.io's "Text classification with Transformer" (the model of examples/reuters_transformer:
token and position embeddings, a Transformer block of 2 heads and feed-forward 32, pooling, Dense(20),
Dense(46)) with keras.io's recipe (Adam, sparse categorical cross-entropy, batch 32, 2 epochs) once per
seed on each side, and prints each run's test accuracy and loss, then each side's mean, standard
deviation, minimum and maximum of both (where the accuracy saturates, as on the stand-in, the loss
still tells the sides apart):
  run side=<tpudsl|keras> seed=<s> test_accuracy=<a> test_loss=<l> seconds=<t>
  band side=<tpudsl|keras> <accuracy|loss> runs=<n> mean=<m> sd=<d> min=<x> max=<y>

The data is Keras' Reuters as tools/export_keras_dataset.py writes it (--data DIR, else
$TPUDSL_REUTERS_DIR, else ./reuters) where it exists; otherwise the synthetic stand-in that the example
trains on without it (examples/common/synthetic.hpp's synthetic_sequences, made here again bit for bit:
numpy's RandomState draws std::mt19937's numbers from the same integer seed), padded as Keras'
pad_sequences(maxlen=200) pads. The tpudsl side runs build/.../examples/reuters_transformer --strategy
one --seed s; the Keras side runs under --keras-python (by default the test command's Keras venv,
build/release/keras-venv), its seeds through keras.utils.set_random_seed. Both sides print which data
they used. A figure, never a test.
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
HERE = pathlib.Path(__file__).resolve().parent


def synthetic_sequences(n, classes, vocab, seed):
    """examples/common/synthetic.hpp's synthetic_sequences, draw for draw."""
    import numpy as np
    rs = np.random.RandomState(seed)

    def gen():
        return int(rs.randint(0, 2 ** 32, dtype=np.uint64))
    xs, ys = [], []
    for _ in range(n):
        label = gen() % classes
        ys.append(label)
        tokens = [1]
        length = 20 + gen() % 280
        for _ in range(length):
            if gen() % 4 == 0:
                tokens.append(4 + gen() % (vocab - 4))
            else:
                tokens.append(100 + label * 40 + gen() % 40)
        xs.append(tokens)
    return xs, ys


def read_sequences(path):
    """tpudsl's sequence format (include/tpudsl/data/sequences.hpp)."""
    lines = pathlib.Path(path).read_text().splitlines()
    if not lines or not lines[0].startswith("tpudsl-sequences"):
        raise ValueError("%s: not a tpudsl-sequences file" % path)
    xs, ys = [], []
    for line in lines[2:]:
        label, tokens = line.split("\t")
        ys.append(int(label))
        xs.append([int(t) for t in tokens.split()])
    return xs, ys


def keras_side(args):
    """Runs in the Keras interpreter: one line per seed."""
    os.environ.setdefault("KERAS_BACKEND", "jax")
    import numpy as np
    import keras
    sys.path.insert(0, str(HERE))
    from peer_worker import keras_transformer

    data = pathlib.Path(args.data)
    if (data / "reuters_train.txt").exists():
        (xtr, ytr), (xte, yte) = read_sequences(data / "reuters_train.txt"), read_sequences(data / "reuters_test.txt")
        print("data: Keras' Reuters newswires from %s" % data, flush=True)
    else:
        (xtr, ytr), (xte, yte) = synthetic_sequences(8982, 46, 30982, 1), synthetic_sequences(2246, 46, 30982, 2)
        print("data: the synthetic stand-in (examples/common/synthetic.hpp)", flush=True)
    pad = keras.utils.pad_sequences
    xtr, xte = pad(xtr, maxlen=200), pad(xte, maxlen=200)
    ytr, yte = np.array(ytr, dtype=np.int32), np.array(yte, dtype=np.int32)
    for seed in args.seeds:
        keras.utils.set_random_seed(seed)
        model = keras_transformer(keras)
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        start = time.perf_counter()
        model.fit(xtr, ytr, batch_size=args.batch, epochs=args.epochs, verbose=0)
        loss, accuracy = model.evaluate(xte, yte, batch_size=256, verbose=0)
        print("run side=keras seed=%d test_accuracy=%.4f test_loss=%.4f seconds=%.1f" %
              (seed, accuracy, loss, time.perf_counter() - start), flush=True)


def tpudsl_side(args):
    exe = pathlib.Path(args.build) / "examples" / "reuters_transformer"
    lines = []
    for seed in args.seeds:
        start = time.perf_counter()
        out = subprocess.run([str(exe), "--strategy", "one", "--seed", str(seed), "--epochs", str(args.epochs),
                              "--batch", str(args.batch), "--data", args.data],
                             check=True, capture_output=True, text=True).stdout
        if seed == args.seeds[0]:
            print("data: " + out.splitlines()[0], flush=True)
        accuracy = float(re.search(r"Test accuracy: ([0-9.]+)", out).group(1))
        losses = re.findall(r" val_loss: ([0-9.]+)", out)
        line = "run side=tpudsl seed=%d test_accuracy=%.4f test_loss=%s seconds=%.1f" % (
            seed, accuracy, losses[-1] if losses else "nan", time.perf_counter() - start)
        print(line, flush=True)
        lines.append(line)
    return lines


def band(side, lines):
    for what in ("accuracy", "loss"):
        values = [float(re.search(r"test_%s=([0-9.naN]+)" % what, line).group(1)) for line in lines]
        if values:
            print("band side=%s %s runs=%d mean=%.4f sd=%.4f min=%.4f max=%.4f" % (
                side, what, len(values), statistics.mean(values),
                statistics.stdev(values) if len(values) > 1 else 0.0, min(values), max(values)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build" / "release"))
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--keras-python", default="")
    ap.add_argument("--data", default=os.environ.get("TPUDSL_REUTERS_DIR") or "reuters")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--keras-side", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.seeds = [int(s) for s in args.seeds.split(",")]
    if args.keras_side:
        return keras_side(args)
    tpudsl_lines = tpudsl_side(args)
    python = args.keras_python or str(pathlib.Path(args.build) / "keras-venv" / "bin" / "python")
    out = subprocess.run([python, __file__, "--keras-side", "--seeds", ",".join(map(str, args.seeds)),
                          "--data", args.data, "--epochs", str(args.epochs), "--batch", str(args.batch)],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    sys.stdout.write(out)
    band("tpudsl", tpudsl_lines)
    band("keras", [line for line in out.splitlines() if line.startswith("run side=keras")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
