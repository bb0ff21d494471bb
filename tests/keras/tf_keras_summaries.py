"""Writes tf.keras 2.x's summaries of tpudsl's reference models, the fixtures that
tests/unit/summary.test.cpp compares tpudsl's summaries with, byte for byte.

    tf_keras_summaries.py KERAS_2_6_WHEEL OUT_DIR

tpudsl prints the table of tf.keras up to 2.6 (the seeds' tutorials printed it; 2.7 moved to a wider
one). No TensorFlow that old runs on today's Pythons, so the table is printed by tf.keras 2.6's own
print_summary (keras/utils/layer_utils.py, read from the pure-Python wheel keras-2.6.0-py2.py3-none-any.whl
that `pip download keras==2.6.0 --no-deps` fetches) over the models as tf.keras 2.12 builds them
(tensorflow-cpu==2.12.1, the Python running this script): print_summary reads only what both versions
share (model.layers, each layer's inbound nodes, output_shape and count_params, the nodes by depth).
Each model is built after keras.backend.clear_session(), so Keras' auto-names are the ones tpudsl
prints. Writes OUT_DIR/<model>.txt for each model of SUMMARIES.
"""
import io
import os
import sys
import types
import zipfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402  (tf.keras 2.12: keras 2.12 with TensorFlow)

sys.dont_write_bytecode = True   # no __pycache__ left in the source tree by the import below
import keras_models  # noqa: E402

# The seeds (Sequential: the 65-column table) and the functional models (98 columns, Connected to).
SUMMARIES = ("fashion_mnist_cnn", "mnist_mlp", "cifar10_cnn", "reuters_conv1d", "resnet20", "functional_shared",
             "functional_dot", "text_and_metadata")


def print_summary_2_6(wheel):
    """tf.keras 2.6's print_summary, loaded from its wheel."""
    with zipfile.ZipFile(wheel) as z:
        source = z.read("keras/utils/layer_utils.py").decode()
    module = types.ModuleType("layer_utils_2_6")
    # Its public-API registration would clash with tf.keras 2.12's own names: it is not needed here.
    source = source.replace("@keras_export(", "@(lambda *a, **k: (lambda f: f))(")
    exec(compile(source, "keras-2.6.0/keras/utils/layer_utils.py", "exec"), module.__dict__)
    return module.print_summary


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    print_summary = print_summary_2_6(argv[1])
    os.makedirs(argv[2], exist_ok=True)
    for name in SUMMARIES:
        keras.backend.clear_session()
        model = keras_models.MODELS[name]()
        assert model.count_params() == keras_models.PARAMS[name], (name, model.count_params())
        out = io.StringIO()
        print_summary(model, print_fn=lambda line: out.write(line + "\n"))
        with open(os.path.join(argv[2], name + ".txt"), "w") as f:
            f.write(out.getvalue())
        print(f"{name}: tf.keras {keras.__version__}'s model, tf.keras 2.6's table")


if __name__ == "__main__":
    main(sys.argv)
