"""One peer configuration of benchmarks/compare_peers.py, run by that peer's own interpreter.

  <venv>/bin/python benchmarks/peer_worker.py --framework torch|torch-compile|keras|keras-xla
                                              --model M --batch B --threads T

Builds the seed model M in that framework (the same definitions as compare_peers.py: PyTorch's from
its torch_model, Keras' below, written as the seeds declare them), sets the thread count, trains a few
warm-up steps (where torch.compile and XLA compile) and prints one line:
  ready framework=<f> version=<v> params=<n> warmup_s=<s>
or, where the configuration cannot run here,
  error framework=<f> reason=<one line>
and exits. Once ready it reads commands from its standard input, one a line:
  run SECONDS   trains for SECONDS and prints  result samples_per_s=<x> steps=<n> cpu_per_wall=<c>
                (c: the process's CPU time over the wall time, all its threads: about the threads it used)
  quit          exits
so that compare_peers.py keeps one warm, compiled worker per configuration and interleaves its rounds
with the other frameworks'. Inputs are synthetic (throughput does not depend on the values): four
batches of the model's shapes, trained in turn, Adam (learning rate 1e-3), sparse categorical
cross-entropy. Models lstm and gru are recurrent_peers.py's (PyTorch only).
"""
import argparse
import os
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
STEPS = 4   # distinct batches, trained in turn

# input shape (channels-last, as Keras declares it), classes, integer ids (vocabulary) or None
SHAPES = {
    "fashion": ((28, 28, 1), 10, None),
    "mnist": ((784,), 10, None),
    "cifar": ((32, 32, 3), 10, None),
    "cifar_bn": ((32, 32, 3), 10, None),
    "resnet20": ((32, 32, 3), 10, None),
    "reuters": ((300,), 46, 30982),
    "reuters_lstm": ((200,), 46, 30982),
    "reuters_transformer": ((200,), 46, 30982),
    "lstm": ((300,), 46, 30982),
    "gru": ((300,), 46, 30982),
}

# the parameter counts that examples/*/model.hpp asserts: a check that both sides train one model
PARAMS = {"fashion": 108810, "mnist": 669706, "cifar": 1250858, "cifar_bn": 66986, "reuters": 332856,
          "reuters_lstm": 30982 * 32 + 4 * 64 * (32 + 64 + 1) + 46 * (64 + 1), "resnet20": 274442,
          "reuters_transformer": 1010106}


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def one_line(e):
    text = ("%s: %s" % (type(e).__name__, e)).replace("\n", " ").replace("\r", " ")
    return " ".join(text.split())[:300]


# ----------------------------------------------------------------------------------------------
# PyTorch 2: eager, or the model through torch.compile (Inductor's C++ code on CPU)

def torch_recurrent(torch, cell):
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = torch.nn.Embedding(30982, 7)
            self.rnn = (torch.nn.LSTM if cell == "lstm" else torch.nn.GRU)(7, 64, batch_first=True)
            self.dense = torch.nn.Linear(64, 46)

        def forward(self, x):
            h, _ = self.rnn(self.embedding(x))
            return self.dense(h[:, -1])
    return Model()


def torch_setup(model, batch, threads, compiled):
    import torch
    sys.path.insert(0, str(HERE))
    from compare_peers import torch_model

    torch.set_num_threads(threads)
    torch.manual_seed(1)
    if model in ("lstm", "gru"):
        net, shape = torch_recurrent(torch, model), SHAPES[model][0]
    else:
        net, shape = torch_model(torch, model)
    _, classes, vocabulary = SHAPES[model]
    if vocabulary:
        x = torch.randint(0, vocabulary, (STEPS, batch) + shape)
    else:
        x = torch.rand((STEPS, batch) + shape)
    y = torch.randint(0, classes, (STEPS, batch))
    # as Keras counts: the moving statistics too (its non-trainable weights), and nn.LSTM's second
    # bias vector (PyTorch keeps b_ih and b_hh, Keras one bias) taken out
    params = sum(p.numel() for p in net.parameters()) + sum(
        b.numel() for b in net.buffers() if b.dtype.is_floating_point)
    params -= sum(m.bias_hh_l0.numel() for m in net.modules() if isinstance(m, torch.nn.LSTM))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()   # softmax + sparse categorical cross-entropy
    net.train()
    forward = torch.compile(net) if compiled else net

    def step(i):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(forward(x[i]), y[i])
        loss.backward()
        opt.step()
    return step, params, "torch-" + torch.__version__.split("+")[0]


# ----------------------------------------------------------------------------------------------
# Keras 3 on TensorFlow: model.compile + train_on_batch (the compiled train step that fit runs),
# with jit_compile False (TensorFlow's graph and its oneDNN kernels) or True (XLA)

def keras_resnet20(keras):
    """ResNet-20 v1, the layers of tests/keras/keras_side.py's resnet20() (examples/cifar10_resnet)."""
    L = keras.layers

    def conv(x, filters, kernel=3, strides=1):
        return L.Conv2D(filters, kernel, strides=strides, padding="same")(x)

    def block(x, filters, strides):
        y = L.Activation("relu")(L.BatchNormalization()(conv(x, filters, strides=strides)))
        y = L.BatchNormalization()(conv(y, filters))
        if strides != 1:
            x = conv(x, filters, kernel=1, strides=strides)
        return L.Activation("relu")(L.Add()([x, y]))

    inputs = keras.Input(SHAPES["resnet20"][0])
    x = L.Activation("relu")(L.BatchNormalization()(conv(inputs, 16)))
    for stage, filters in enumerate((16, 32, 64)):
        for b in range(3):
            x = block(x, filters, 2 if stage > 0 and b == 0 else 1)
    x = L.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, L.Dense(10, activation="softmax")(x))


def keras_transformer(keras):
    """keras.io's "Text classification with Transformer" (examples/reuters_transformer): its
    TokenAndPositionEmbedding and TransformerBlock layers, as that page writes them."""
    L, ops = keras.layers, keras.ops

    class TokenAndPositionEmbedding(L.Layer):
        def __init__(self):
            super().__init__()
            self.token_emb, self.pos_emb = L.Embedding(30982, 32), L.Embedding(200, 32)

        def call(self, x):
            return self.token_emb(x) + self.pos_emb(ops.arange(0, 200, 1))

    class TransformerBlock(L.Layer):
        def __init__(self):
            super().__init__()
            self.att = L.MultiHeadAttention(num_heads=2, key_dim=32)
            self.ffn = keras.Sequential([L.Dense(32, activation="relu"), L.Dense(32)])
            self.norm1, self.norm2 = L.LayerNormalization(epsilon=1e-6), L.LayerNormalization(epsilon=1e-6)
            self.drop1, self.drop2 = L.Dropout(0.1), L.Dropout(0.1)

        def call(self, x):
            out1 = self.norm1(x + self.drop1(self.att(x, x)))
            return self.norm2(out1 + self.drop2(self.ffn(out1)))

    inputs = keras.Input((200,), dtype="int32")
    x = TransformerBlock()(TokenAndPositionEmbedding()(inputs))
    x = L.Dropout(0.1)(L.GlobalAveragePooling1D()(x))
    x = L.Dropout(0.1)(L.Dense(20, activation="relu")(x))
    return keras.Model(inputs, L.Dense(46, activation="softmax")(x))


def keras_model(keras, name):
    L = keras.layers
    shape = SHAPES[name][0]
    if name == "resnet20":
        return keras_resnet20(keras)
    if name == "reuters_transformer":
        return keras_transformer(keras)
    if name == "fashion":
        body = [L.Conv2D(64, 3), L.MaxPooling2D(2), L.Activation("relu"), L.Flatten(), L.Dense(10),
                L.Activation("softmax")]
    elif name == "mnist":
        body = [L.Dense(512, activation="relu"), L.Dropout(0.2), L.Dense(512, activation="relu"), L.Dropout(0.2),
                L.Dense(10, activation="softmax")]
    elif name == "cifar":
        body = [L.Conv2D(32, 3, activation="relu", padding="same"), L.Conv2D(32, 3, activation="relu"),
                L.MaxPooling2D(2), L.Dropout(0.25),
                L.Conv2D(64, 3, activation="relu", padding="same"), L.Conv2D(64, 3, activation="relu"),
                L.MaxPooling2D(2), L.Dropout(0.25),
                L.Flatten(), L.Dense(512, activation="relu"), L.Dropout(0.5), L.Dense(10, activation="softmax")]
    elif name == "cifar_bn":
        def block(filters, padding):
            return [L.Conv2D(filters, 3, padding=padding), L.BatchNormalization(), L.Activation("relu")]
        body = (block(32, "same") + block(32, "valid") + [L.MaxPooling2D(2)] + block(64, "same") +
                block(64, "valid") + [L.GlobalAveragePooling2D(), L.Dropout(0.25), L.Dense(10, activation="softmax")])
    elif name == "reuters":
        body = [L.Embedding(30982, 7), L.Conv1D(64, 5, activation="relu"), L.MaxPooling1D(2),
                L.Conv1D(32, 3, activation="relu"), L.MaxPooling1D(2), L.Flatten(), L.Dense(46, activation="softmax")]
    elif name == "reuters_lstm":
        body = [L.Embedding(30982, 32), L.LSTM(64), L.Dense(46, activation="softmax")]
    else:
        raise ValueError("no Keras model %s" % name)
    dtype = "int32" if SHAPES[name][2] else "float32"
    return keras.Sequential([keras.Input(shape, dtype=dtype)] + body)


def keras_setup(model, batch, threads, xla):
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    # TensorFlow's own default on a machine of `threads` cores: as many intra-op and inter-op threads
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    import keras

    keras.utils.set_random_seed(1)
    net = keras_model(keras, model)
    net.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3), loss="sparse_categorical_crossentropy",
                jit_compile=xla)
    shape, classes, vocabulary = SHAPES[model]
    rng = np.random.default_rng(1)
    if vocabulary:
        xs = [tf.constant(rng.integers(0, vocabulary, (batch,) + shape, dtype=np.int32)) for _ in range(STEPS)]
    else:
        xs = [tf.constant(rng.random((batch,) + shape, dtype=np.float32)) for _ in range(STEPS)]
    ys = [tf.constant(rng.integers(0, classes, (batch,), dtype=np.int32)) for _ in range(STEPS)]

    def step(i):
        net.train_on_batch(xs[i], ys[i])
    return step, net.count_params(), "tensorflow-%s+keras-%s" % (tf.__version__, keras.__version__)


# ----------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--framework", required=True, choices=["torch", "torch-compile", "keras", "keras-xla"])
    ap.add_argument("--model", required=True, choices=sorted(SHAPES))
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    start = time.perf_counter()
    try:
        if a.framework.startswith("torch"):
            step, params, version = torch_setup(a.model, a.batch, a.threads, a.framework == "torch-compile")
        else:
            step, params, version = keras_setup(a.model, a.batch, a.threads, a.framework == "keras-xla")
        if a.model in PARAMS and params != PARAMS[a.model]:
            raise RuntimeError("%d parameters, the seed model has %d" % (params, PARAMS[a.model]))
        for _ in range(2):
            for i in range(STEPS):
                step(i)
    except Exception as e:   # a configuration that cannot run here is reported, never fatal
        say("error framework=%s reason=%s" % (a.framework, one_line(e)))
        return 1
    say("ready framework=%s version=%s params=%d warmup_s=%.1f" %
        (a.framework, version, params, time.perf_counter() - start))
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        if words[0] == "run":
            seconds = float(words[1])
            done = steps = 0
            cpu0 = time.process_time()
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < seconds:
                for i in range(STEPS):
                    step(i)
                done += STEPS * a.batch
                steps += STEPS
            wall = time.perf_counter() - t0
            say("result samples_per_s=%.1f steps=%d cpu_per_wall=%.2f" % (done / wall, steps,
                                                                         (time.process_time() - cpu0) / wall))
    return 0


if __name__ == "__main__":
    sys.exit(main())
