"""The Keras side of tpudsl's checks against real Keras (Keras 3 on JAX's CPU backend).

    keras_side.py MODEL write DIR   builds the seed model in Keras (the same layers in the same order,
                                    so Keras' auto-names are the ones tpudsl's summary prints), gives it
                                    Keras' own random initial weights, and writes MODEL.weights.h5
                                    (Keras 3), MODEL.h5 (a whole model, Keras 2's legacy layout under
                                    model_weights/), MODEL.legacy.h5 (Keras 2's weights-only layout, by
                                    Keras' legacy writer), fixed inputs MODEL.x.bin and Keras'
                                    predictions on them MODEL.keras_pred.bin.
    keras_side.py MODEL inputs DIR  writes the fixed inputs MODEL.x.bin only.
    keras_side.py MODEL check DIR   loads MODEL.tpudsl.weights.h5 and MODEL.tpudsl.h5 (written by
                                    tpudsl) into the Keras model and compares Keras' predictions on
                                    MODEL.x.bin with tpudsl's, MODEL.tpudsl_pred.bin, to 1e-5.
    keras_side.py MODEL step DIR    for the layer models (one layer each that the seeds lack) and the
                                    functional ones (ResNet-20, a shared layer): writes
                                    Keras' initial weights MODEL.weights.h5, a batch MODEL.x.bin with
                                    labels MODEL.y.bin, Keras' predictions on it MODEL.keras_pred.bin,
                                    then trains one step on that batch (SGD, sparse categorical
                                    crossentropy) and writes the weights after it, MODEL.step.weights.h5.
                                    A model of several inputs or outputs (step_parts): a file per part
                                    (MODEL.x<k>.bin, MODEL.y<h>.bin, MODEL.keras_pred<h>.bin), a loss per
                                    output and the step's logs, MODEL.logs.txt.
    keras_side.py MODEL step_check DIR  loads tpudsl's weights after the same step,
                                    MODEL.tpudsl_step.weights.h5 and MODEL.tpudsl_step.h5, and compares
                                    them with Keras' (1e-5).
Arrays are raw little-endian float32 (int32 token ids for Reuters, and labels), row-major. Exit status
0 when everything agrees.
"""
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import keras  # noqa: E402
from keras.src.legacy.saving import legacy_h5_format  # noqa: E402

sys.dont_write_bytecode = True   # no __pycache__ left in the source tree by the import below
from keras_models import LAYER_MODELS, LOSS_WEIGHTS, MODELS, PARAMS  # noqa: E402

TOLERANCE = 1e-5
SAMPLES = 8

LEARNING_RATE = 0.5


def inputs(name):
    """Fixed inputs: pixels in [0, 1), token ids over the whole vocabulary."""
    rng = np.random.RandomState(2024)
    model = MODELS[name]()
    shape = (SAMPLES,) + tuple(model.input_shape[1:])
    if name == "reuters_conv1d":
        return rng.randint(0, 30982, size=shape).astype(np.int32)
    return rng.uniform(0.0, 1.0, size=shape).astype(np.float32)


def predict(model, x):
    return np.asarray(model.predict(x, batch_size=SAMPLES, verbose=0), dtype=np.float32)


def write(name, out):
    keras.utils.set_random_seed(1)
    model = MODELS[name]()
    assert model.count_params() == PARAMS[name], (name, model.count_params())
    # Biases start at zero in Keras: give them values too, so that a bias read into the wrong
    # place shows.
    for layer in model.layers:
        for v in layer.weights:
            if "bias" in v.path:
                v.assign(np.random.RandomState(len(v.path)).uniform(-0.1, 0.1, v.shape).astype(np.float32))
    x = inputs(name)
    x.tofile(os.path.join(out, name + ".x.bin"))
    predict(model, x).tofile(os.path.join(out, name + ".keras_pred.bin"))
    model.save_weights(os.path.join(out, name + ".weights.h5"))
    model.save(os.path.join(out, name + ".h5"))
    # Keras 3 writes weights-only files in its own layout only; its legacy writer (the one
    # model.save uses for model_weights/) gives Keras 2's weights-only layout at the root.
    with h5py.File(os.path.join(out, name + ".legacy.h5"), "w") as f:
        legacy_h5_format.save_weights_to_hdf5_group(f, model)
    print(f"{name}: Keras {keras.__version__} wrote {name}.weights.h5, {name}.h5, {name}.legacy.h5")
    return 0


def step(name, out):
    keras.utils.set_random_seed(1)
    model = MODELS[name]()   # the first of its layers' classes in this process: Keras' auto-names are tpudsl's
    assert model.count_params() == PARAMS[name], (name, model.count_params())
    for layer in model.layers:
        for v in layer.weights:
            if "bias" in v.path:
                v.assign(np.random.RandomState(len(v.path)).uniform(-0.1, 0.1, v.shape).astype(np.float32))
            # BatchNormalization's four: away from ones and zeros too, the variances positive.
            low, high = (0.5, 1.5) if v.path.endswith(("gamma", "moving_variance")) else (-0.1, 0.1)
            if v.path.endswith(("gamma", "beta", "moving_mean", "moving_variance")):
                v.assign(np.random.RandomState(len(v.path)).uniform(low, high, v.shape).astype(np.float32))
    if len(model.inputs) > 1 or len(model.outputs) > 1:
        return step_parts(name, model, out)
    rng = np.random.RandomState(2024)
    shape = (SAMPLES,) + tuple(model.input_shape[1:])
    if "int" in str(model.inputs[0].dtype):   # token ids, below the first Embedding's vocabulary
        vocabulary = next(l.input_dim for l in model.layers if isinstance(l, keras.layers.Embedding))
        x = rng.randint(0, vocabulary, size=shape).astype(np.int32)
    else:
        x = rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)
    # A class id per sample, or per timestep of a (timesteps, classes) output.
    y_shape = (SAMPLES,) + tuple(model.output_shape[1:-1])
    y = (np.arange(int(np.prod(y_shape))) % model.output_shape[-1]).reshape(y_shape).astype(np.int32)
    x.tofile(os.path.join(out, name + ".x.bin"))
    y.tofile(os.path.join(out, name + ".y.bin"))
    model.save_weights(os.path.join(out, name + ".weights.h5"))
    predict(model, x).tofile(os.path.join(out, name + ".keras_pred.bin"))
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=LEARNING_RATE),
                  loss=keras.losses.SparseCategoricalCrossentropy())
    loss = model.train_on_batch(x, y)
    model.save_weights(os.path.join(out, name + ".step.weights.h5"))
    print(f"{name}: Keras {keras.__version__} wrote {name}.weights.h5, its predictions and, after one step "
          f"(loss {float(loss):.6f}), {name}.step.weights.h5")
    return 0


def step_parts(name, model, out):
    """step for a model of several inputs or outputs: each input MODEL.x<k>.bin (token ids for an int32
    input), each output's labels MODEL.y<h>.bin and Keras' predictions MODEL.keras_pred<h>.bin, a loss
    per output (LOSS_WEIGHTS), and the step's logs (Keras' names and values) in MODEL.logs.txt."""
    rng = np.random.RandomState(2024)
    xs = []
    for k, t in enumerate(model.inputs):
        shape = (SAMPLES,) + tuple(t.shape[1:])
        if "int" in str(t.dtype):
            xs.append(rng.randint(0, 100, size=shape).astype(np.int32))
        else:
            xs.append(rng.uniform(-1.0, 1.0, size=shape).astype(np.float32))
        xs[-1].tofile(os.path.join(out, f"{name}.x{k}.bin"))
    ys, losses = [], []
    for h, t in enumerate(model.outputs):
        if t.shape[-1] > 1:   # a softmax: a class id per sample
            ys.append((np.arange(SAMPLES) % t.shape[-1]).astype(np.int32))
            losses.append(keras.losses.SparseCategoricalCrossentropy())
        else:
            ys.append(rng.uniform(-1.0, 1.0, size=(SAMPLES,) + tuple(t.shape[1:])).astype(np.float32))
            losses.append(keras.losses.MeanSquaredError())
        ys[-1].tofile(os.path.join(out, f"{name}.y{h}.bin"))
    model.save_weights(os.path.join(out, name + ".weights.h5"))
    for h, p in enumerate(model.predict(xs, batch_size=SAMPLES, verbose=0)):
        np.asarray(p, dtype=np.float32).tofile(os.path.join(out, f"{name}.keras_pred{h}.bin"))
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=LEARNING_RATE), loss=losses,
                  loss_weights=list(LOSS_WEIGHTS[:len(losses)]))
    logs = model.train_on_batch(xs, ys, return_dict=True)
    with open(os.path.join(out, name + ".logs.txt"), "w") as f:
        for key, value in logs.items():
            f.write(f"{key} {float(value):.9g}\n")
    model.save_weights(os.path.join(out, name + ".step.weights.h5"))
    print(f"{name}: Keras {keras.__version__} wrote {name}.weights.h5, its predictions and, after one step "
          f"({logs}), {name}.step.weights.h5")
    return 0


def check(name, out):
    x = inputs(name)
    expected = np.fromfile(os.path.join(out, name + ".tpudsl_pred.bin"), dtype=np.float32)
    failures = 0
    for suffix in (".tpudsl.weights.h5", ".tpudsl.h5"):
        keras.utils.set_random_seed(99)
        model = MODELS[name]()
        before = predict(model, x).ravel()
        model.load_weights(os.path.join(out, name + suffix))
        got = predict(model, x).ravel()
        diff = float(np.max(np.abs(got - expected))) if got.shape == expected.shape else float("inf")
        moved = float(np.max(np.abs(before - expected))) if before.shape == expected.shape else float("inf")
        ok = diff <= TOLERANCE and moved > TOLERANCE
        print(f"{name}{suffix}: max |keras - tpudsl| = {diff:.3g}" + (" ok" if ok else " MISMATCH"))
        failures += not ok
    return 1 if failures else 0


# ResNet-20's step is held to 2e-3 of its largest move: float rounding tips a ReLU input or so of the
# million in a step, and that position's gradients change (keras_interop.cpp's step() says more).
KINKED_STEP = {"resnet20"}


def step_check(name, out):
    """Keras reads tpudsl's weights after the step, both layouts, and finds its own."""
    expected = MODELS[name]()
    expected.load_weights(os.path.join(out, name + ".step.weights.h5"))
    tolerance = TOLERANCE
    if name in KINKED_STEP:
        initial = MODELS[name]()
        initial.load_weights(os.path.join(out, name + ".weights.h5"))
        tolerance = 2e-3 * max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
                               for a, b in zip(initial.weights, expected.weights))
    failures = 0
    for suffix in (".tpudsl_step.weights.h5", ".tpudsl_step.h5"):
        model = MODELS[name]()
        model.load_weights(os.path.join(out, name + suffix))
        diff = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) for a, b in zip(model.weights, expected.weights))
        ok = diff <= tolerance
        print(f"{name}{suffix}: Keras reads it, max |tpudsl - keras| over the weights = {diff:.3g}" +
              (" ok" if ok else " MISMATCH"))
        failures += not ok
    return 1 if failures else 0


def main(argv):
    steps = ("step", "step_check")
    if len(argv) != 4 or argv[1] not in MODELS or argv[2] not in ("write", "inputs", "check") + steps or \
            (argv[2] in steps) != (argv[1] in LAYER_MODELS):
        print(__doc__, file=sys.stderr)
        return 2
    name, mode, out = argv[1], argv[2], argv[3]
    os.makedirs(out, exist_ok=True)
    if mode == "step":
        return step(name, out)
    if mode == "step_check":
        return step_check(name, out)
    if mode == "inputs":
        inputs(name).tofile(os.path.join(out, name + ".x.bin"))
        return 0
    return write(name, out) if mode == "write" else check(name, out)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
