"""tpudsl::TensorBoard's event files, read by the real `tensorboard` package.

    tensorboard_log.py PROGRAM DIR

runs PROGRAM (the Fashion-MNIST seed) for 2 epochs of 3 steps on 512 training images with
--tensorboard DIR/logs and --plot DIR/curves.svg, whose DIR/curves.csv holds the History fit returned
(validated once, after the last epoch), then reads DIR/logs/train and DIR/logs/validation as
TensorBoard reads them and checks:
    framing     each file's records, walked here, both masked CRC-32Cs equal to tensorboard's own
                masked_crc32c; tensorboard's EventFileLoader reads as many Events (it stops at a record
                it cannot read), the first the file version "brain.Event:2";
    scalars     EventAccumulator.Scalars: epoch_loss, epoch_sparse_categorical_accuracy and
                epoch_learning_rate in train/ at steps 0 and 1, epoch_loss and
                epoch_sparse_categorical_accuracy in validation/ at the epoch validation ran on, each the
                History's value as a float32, and nothing else; the same through the reader TensorBoard's
                dashboard uses (plugin_event_accumulator: the scalars plugin's tensors);
    histograms  EventAccumulator.Histograms: each weight's ("conv2d/kernel/histogram", ...) at both
                epochs, its bucket counts adding up to its num, and the nums of an epoch to the model's
                108,810 parameters; the histograms plugin has them too.
Exit status 0 when everything agrees.
"""
import csv
import os
import shutil
import struct
import subprocess
import sys

from tensorboard.backend.event_processing import event_accumulator
from tensorboard.backend.event_processing import event_file_loader
from tensorboard.backend.event_processing import plugin_event_accumulator
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c
from tensorboard.util import tensor_util
import numpy as np

PARAMS = 108810   # the Fashion-MNIST CNN's parameters
EPOCHS = 2
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def only_file(directory):
    names = os.listdir(directory)
    check(len(names) == 1 and "tfevents" in names[0], f"{directory}: one event file, found {names}")
    return os.path.join(directory, sorted(names)[0])


def check_framing(path):
    with open(path, "rb") as f:
        data = f.read()
    records, at = 0, 0
    while at < len(data):
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        record = data[at + 12:at + 12 + length]
        (record_crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        check(header_crc == masked_crc32c(header), f"{path}: record {records}: the length's CRC")
        check(len(record) == length and record_crc == masked_crc32c(record),
              f"{path}: record {records}: the data's CRC")
        records += 1
        at += 16 + length
    check(at == len(data), f"{path}: {len(data) - at} bytes after the last record")
    events = list(event_file_loader.EventFileLoader(path).Load())
    check(len(events) == records, f"{path}: tensorboard reads {len(events)} events of {records} records")
    check(events[0].file_version == "brain.Event:2", f"{path}: the first event is the file version")
    return events


def scalars(run):
    acc = event_accumulator.EventAccumulator(run, size_guidance={event_accumulator.SCALARS: 0,
                                                                 event_accumulator.HISTOGRAMS: 0})
    acc.Reload()
    return acc, {tag: {e.step: e.value for e in acc.Scalars(tag)} for tag in acc.Tags()["scalars"]}


def dashboard_scalars(run):
    """What TensorBoard's scalars dashboard shows: the scalars plugin's tensors."""
    acc = plugin_event_accumulator.EventAccumulator(run, tensor_size_guidance={"scalars": 0, "histograms": 0})
    acc.Reload()
    tags = acc.PluginTagToContent("scalars").keys()
    values = {tag: {e.step: float(tensor_util.make_ndarray(e.tensor_proto)) for e in acc.Tensors(tag)} for tag in tags}
    return acc, values


def main():
    program, work = sys.argv[1], sys.argv[2]
    logs, svg = os.path.join(work, "logs"), os.path.join(work, "curves.svg")
    shutil.rmtree(work, ignore_errors=True)   # each run writes event files of its own: start afresh
    os.makedirs(work)
    run = subprocess.run([program, "--epochs", str(EPOCHS), "--steps", "3", "--train-samples", "512", "--batch", "32",
                          "--tensorboard", logs, "--plot", svg], capture_output=True, text=True)
    print(run.stdout + run.stderr)
    if run.returncode != 0:
        sys.exit(f"{program} exited with {run.returncode}")

    with open(os.path.join(work, "curves.csv")) as f:
        history = list(csv.DictReader(f))
    check([int(r["epoch"]) for r in history] == list(range(EPOCHS)), "the History's epochs")

    train_dir, validation_dir = os.path.join(logs, "train"), os.path.join(logs, "validation")
    for run_dir in (train_dir, validation_dir):
        check_framing(only_file(run_dir))

    expected = {"train": {}, "validation": {}}   # tag -> step -> float32 value
    for row in history:
        for key, text in row.items():
            if key == "epoch" or text == "NA":
                continue
            validation = key.startswith("val_")
            tag = "epoch_" + (key[4:] if validation else key)
            expected["validation" if validation else "train"].setdefault(tag, {})[int(row["epoch"])] = \
                float(np.float32(float(text)))
    for tag in ("epoch_loss", "epoch_sparse_categorical_accuracy", "epoch_learning_rate"):
        check(sorted(expected["train"].get(tag, {})) == list(range(EPOCHS)), f"History has {tag} at every epoch")
    check(sorted(expected["train"]["epoch_learning_rate"].values()) == [float(np.float32(1e-3))] * EPOCHS,
          "the learning rate is Adam's 1e-3")
    for tag in ("epoch_loss", "epoch_sparse_categorical_accuracy"):
        check(sorted(expected["validation"].get(tag, {})) == [EPOCHS - 1], f"History has val {tag} at the last epoch")

    for name, run_dir in (("train", train_dir), ("validation", validation_dir)):
        acc, got = scalars(run_dir)
        check(got == expected[name], f"{name}: EventAccumulator's scalars {got} != the History's {expected[name]}")
        _, shown = dashboard_scalars(run_dir)
        check(shown == expected[name], f"{name}: the scalars plugin's {shown} != the History's {expected[name]}")
        print(f"{name}: {len(got)} scalars, {sum(len(v) for v in got.values())} values, equal to the History")

    acc, _ = scalars(train_dir)
    tags = acc.Tags()["histograms"]
    check(len(tags) > 0 and all(t.endswith("/histogram") for t in tags), f"histogram tags {tags}")
    check("conv2d/kernel/histogram" in tags, f"conv2d/kernel/histogram in {tags}")
    for step in range(EPOCHS):
        total = 0
        for tag in tags:
            events = [e for e in acc.Histograms(tag) if e.step == step]
            check(len(events) == 1, f"{tag}: one histogram at epoch {step}")
            h = events[0].histogram_value
            check(sum(h.bucket) == h.num and h.min <= h.max and list(h.bucket_limit) == sorted(h.bucket_limit),
                  f"{tag} at epoch {step}: buckets {h}")
            total += h.num
        check(total == PARAMS, f"epoch {step}: the histograms count {total} weights, not {PARAMS}")
    plugin_acc, _ = dashboard_scalars(train_dir)
    check(set(plugin_acc.PluginTagToContent("histograms")) == set(tags), "the histograms plugin's tags")
    print(f"train: {len(tags)} weights' histograms at each of {EPOCHS} epochs, {PARAMS} weights each epoch")

    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print("tensorboard reads every epoch's values of the History, and the histograms")


if __name__ == "__main__":
    main()
