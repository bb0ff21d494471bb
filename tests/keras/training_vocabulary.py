"""tpudsl's built-in losses, metrics, optimizers, learning-rate schedules and optimizer options against
real Keras' on the same inputs.

    training_vocabulary.py PROGRAM

runs PROGRAM (training_vocabulary.cpp built), which prints a JSON array of cases, each naming the Keras
class and arguments that mean the same configuration, its fixed inputs and tpudsl's answers; Keras
redoes each case and the two are compared, to 1e-6 relative:
    loss       the batch's mean loss (Keras' default reduction) to itself, and its gradient with respect
               to y_pred (tpudsl's evaluate scaled by 1/n) to the largest of Keras' (its batch's scale);
    metric     result() after update_state on each of two batches (with sample weights in some), to
               itself;
    schedule   keras.optimizers.schedules' value at each step, to itself; Keras in float64 and in
               float32, as the optimizers below, both from the float32 values of the arguments (tpudsl
               holds them as floats, and a power of many steps magnifies the difference), compiled (as
               fit runs them). CosineDecay's float64 keeps float32's cosine (keras.ops.cos returns float32
               for a float64 argument), and near the end of the decay 1 + cos cancels: Keras' compiled
               float32 is 2.5e-6 from it there, and held only by the float64 comparison;
    optimizer  the weights after each of three apply_gradients on keras.Variables, a new gradient each
               step, each weight to itself or 0.1, whichever is larger; Keras in float64 (its update
               rules without float32's rounding) and in float32. Some cases take steps as large as the
               weights, so that a wrong update shows; there Keras in float32 can be further than 1e-6
               from its own float64 (1 - beta_2^t cancels in float32, and Adam weighs v by
               float32(1 - 0.999) but corrects it by 1 - float32(0.999)^t, 6.4e-6 apart in the step):
               such a case's float32 distance is printed, with Keras' own, and held only by the float64
               comparison. A learning_rate given as {"schedule": class, "args": ...} is that schedule
               (Keras calls it with the iterations before the step). A case with the optimizer's options
               (clipnorm, clipvalue, global_clipnorm, weight_decay, use_ema) steps several Variables of
               the sizes it lists, as a model's weights (clipnorm clips each one's gradient); with
               use_ema the weights after finalize_variable_values (the moving average, which the end of
               fit leaves) are compared too.
Keras computes in float32, as it does by default, except in the float64 comparisons. Those need a
backend that computes Python's floats in the variable's dtype: JAX's (the default here, on the CPU);
TensorFlow's turns them into float32 tensors first, so that its float64 run keeps float32's constants
(AdamW with large steps is then 1.3e-5 from tpudsl). Exit status 0 when everything agrees.
"""
import contextlib
import json
import os
import subprocess
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import keras  # noqa: E402

TOLERANCE = 1e-6
WEIGHT_FLOOR = 0.1   # a weight nearer 0 than this is compared at 1e-7 absolute


def float64():
    """A context in which the backend computes in float64 when asked (JAX needs x64 switched on)."""
    if keras.backend.backend() == "jax":
        import jax
        return jax.enable_x64(True)
    return contextlib.nullcontext()


def value_and_grad(fn, x):
    """fn(x) and its gradient with respect to x, by the backend's own differentiation."""
    backend = keras.backend.backend()
    if backend == "jax":
        import jax
        value, grad = jax.value_and_grad(fn)(jax.numpy.asarray(x))
    elif backend == "tensorflow":
        import tensorflow as tf
        x = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(x)
            value = fn(x)
        grad = tape.gradient(value, x)
    elif backend == "torch":
        import torch
        x = torch.tensor(x, requires_grad=True)
        value = fn(x)
        value.backward()
        grad = x.grad
    else:
        raise SystemExit(f"training_vocabulary.py: no gradient for Keras' {backend} backend")
    return float(keras.ops.convert_to_numpy(value)), np.asarray(keras.ops.convert_to_numpy(grad), dtype=np.float64)


def relative(a, b, floor=1e-30):
    """max |a - b| / max(|b|, floor) over the elements (b Keras')."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), floor)))


def batch_relative(a, b):
    """max |a - b| / max |b|: an array's difference at the scale of its largest element."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


def arguments(args):
    """Keyword arguments as Python spells them, a schedule as its call."""
    def value(v):
        if isinstance(v, dict) and "schedule" in v:
            return f"{v['schedule']}({arguments(v['args'])})"
        return repr(v)
    return ", ".join(f"{k}={value(v)}" for k, v in args.items())


def label(case):
    weighted = "sample_weight" in (case["batches"][0] if case["kind"] == "metric" else case)
    sizes = case.get("variables")
    return f"{case['keras']}({arguments(case['args'])})" + (" weighted" if weighted else "") + \
        (" on a Softmax's logits" if case.get("logits_of_softmax") else "") + \
        (f" on weights of {sizes}" if sizes else "") + \
        (", then finalize_variable_values" if "finalized" in case else "")


def check_loss(case):
    """{comparison: relative error}, all held to the tolerance."""
    shape = tuple(case["shape"])
    sparse = case["sparse_labels"]
    y_true = np.asarray(case["y_true"], dtype=np.int32 if sparse else np.float32)
    if not sparse:
        y_true = y_true.reshape(shape)
    y_pred = np.asarray(case["y_pred"], dtype=np.float32).reshape(shape)
    weight = case.get("sample_weight")
    sw = None if weight is None else np.asarray(weight, dtype=np.float32)
    loss = getattr(keras.losses, case["keras"])(**case["args"])
    value, grad = value_and_grad(lambda p: loss(y_true, p, sample_weight=sw), y_pred)
    errors = {"value": relative(case["value"], value),
              "grad": batch_relative(np.asarray(case["grad"]).reshape(shape), grad)}
    return errors, {}, ""


def check_metric(case):
    width = case["width"]
    metric = getattr(keras.metrics, case["keras"])(**case["args"])
    per_output = case["keras"] in ("Precision", "Recall", "AUC")   # confusion counts over every output
    errors, values = {}, []
    for k, (batch, expected) in enumerate(zip(case["batches"], case["results"])):
        y_pred = np.asarray(batch["y_pred"], dtype=np.float32).reshape(-1, width)
        if case["sparse_labels"]:
            y_true = np.asarray(batch["y_true"], dtype=np.int32)
        else:
            y_true = np.asarray(batch["y_true"], dtype=np.float32).reshape(-1, width)
        sw = batch.get("sample_weight")
        if sw is not None:
            sw = np.asarray(sw, dtype=np.float32)
            if per_output:   # a sample's weight on each of its outputs
                sw = np.broadcast_to(sw[:, None], y_pred.shape)
        metric.update_state(y_true, y_pred, sample_weight=sw)
        values.append(float(keras.ops.convert_to_numpy(metric.result())))
        errors[f"after batch {k + 1}"] = relative(expected, values[-1])
    return errors, {}, " (Keras: " + ", ".join(f"{v:.6g}" for v in values) + ")"


def as_float32(value):
    """value with each Python float rounded to float32, as tpudsl holds it."""
    if isinstance(value, float):
        return float(np.float32(value))
    if isinstance(value, list):
        return [as_float32(v) for v in value]
    return value


def schedule_values(case):
    """Keras' schedule at each of the case's steps, on the float32 values of its float arguments (the
    floats tpudsl holds: 0.96^333 is 7.4e-6 from float32(0.96)^333). Compiled on JAX, as fit runs it
    (eagerly, CosineDecay's warmup, a cond, is traced anew at each call)."""
    args = {k: as_float32(v) for k, v in case["args"].items()}
    schedule = getattr(keras.optimizers.schedules, case["keras"])(**args)
    if keras.backend.backend() == "jax":
        import jax
        schedule = jax.jit(schedule)
    return [float(keras.ops.convert_to_numpy(schedule(step))) for step in case["steps"]]


def held(ours, exact, rounded, worst):
    """{comparison: error}, {shown only: error}, note: tpudsl's to Keras' float64 and float32, the
    float32 one held only where Keras' own float32 is within the tolerance of its float64."""
    errors = {"float64": worst(ours, exact)}
    keras_own = worst(rounded, exact)
    if keras_own <= TOLERANCE:
        errors["float32"] = worst(ours, rounded)
        return errors, {}, ""
    shown = {"float32": worst(ours, rounded)}
    return errors, shown, f" (Keras' float32 is {keras_own:.2g} from its float64: not held to {TOLERANCE:g})"


def check_schedule(case):
    with float64():
        exact = schedule_values(case)
    rounded = schedule_values(case)
    errors, shown, note = held(case["values"], exact, rounded, relative)
    return errors, shown, f" at steps {case['steps']}" + note


def make_optimizer(case):
    """The case's optimizer; a learning_rate {"schedule": class, "args": ...} is that schedule."""
    args = dict(case["args"])
    lr = args.get("learning_rate")
    if isinstance(lr, dict):
        args["learning_rate"] = getattr(keras.optimizers.schedules, lr["schedule"])(**lr["args"])
    return getattr(keras.optimizers, case["keras"])(**args)


def keras_steps(case, dtype):
    """The weights after each of Keras' steps, on Variables of dtype (one, or the case's `variables`,
    their elements one after the other in w0, the gradients and the weights), then, for a case with
    `finalized`, after finalize_variable_values."""
    optimizer = make_optimizer(case)
    cuts = np.cumsum(case.get("variables", [len(case["w0"])]))[:-1]
    split = lambda flat: np.split(np.asarray(flat, dtype=np.float32).astype(dtype), cuts)  # noqa: E731
    variables = [keras.Variable(part, dtype=dtype) for part in split(case["w0"])]
    flat = lambda: np.concatenate([np.asarray(keras.ops.convert_to_numpy(v), dtype=np.float64)  # noqa: E731
                                   for v in variables])
    weights = []
    for grad in case["grads"]:
        optimizer.apply_gradients([(keras.ops.convert_to_tensor(g), v) for g, v in zip(split(grad), variables)])
        weights.append(flat())
    if "finalized" in case:
        optimizer.finalize_variable_values(variables)
        weights.append(flat())
    return weights


def check_optimizer(case):
    with float64():
        exact = keras_steps(case, "float64")
    rounded = keras_steps(case, "float32")
    ours = case["weights"] + ([case["finalized"]] if "finalized" in case else [])
    worst = lambda a, b: max(relative(x, y, WEIGHT_FLOOR) for x, y in zip(a, b))  # noqa: E731
    return held(ours, exact, rounded, worst)


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    cases = json.loads(subprocess.run([argv[1]], check=True, capture_output=True, text=True).stdout)
    print(f"Keras {keras.__version__} on {keras.backend.backend()}: {len(cases)} cases, tolerance {TOLERANCE:g}")
    checks = {"loss": check_loss, "metric": check_metric, "schedule": check_schedule, "optimizer": check_optimizer}
    failures = 0
    for case in cases:
        errors, shown, note = checks[case["kind"]](case)
        ok = max(errors.values()) <= TOLERANCE
        failures += not ok
        detail = ", ".join(f"{k} {v:.2g}" for k, v in errors.items())
        detail += "".join(f", {k} {v:.2g}" for k, v in shown.items())
        print(f"{case['kind']:9} {label(case)}: {detail}{note}" + (" ok" if ok else " MISMATCH"))
    print(f"{len(cases) - failures} of {len(cases)} cases agree" + (f", {failures} do not" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
