#!/usr/bin/env bash
# One check against real Keras, for one model:
#   run.sh VENV INTEROP MODEL keras_to_tpudsl|tpudsl_to_keras|one_step DIR
# keras_to_tpudsl: Keras writes its weights files and predictions, tpudsl reads them and predicts the same.
# tpudsl_to_keras: tpudsl trains a few steps and writes its files and predictions, Keras reads them and
# predicts the same.
# one_step (the layer models): Keras writes its initial weights, a batch, its predictions on it and its
# weights after one training step on it; tpudsl predicts the same and reaches the same weights, and
# Keras reads them from tpudsl's files.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$1" interop="$2" model="$3" direction="$4" dir="$5"
export KERAS_BACKEND=jax JAX_PLATFORMS=cpu TF_CPP_MIN_LOG_LEVEL=3
rm -rf "$dir"
mkdir -p "$dir"
case "$direction" in
    keras_to_tpudsl)
        "$venv/bin/python" "$here/keras_side.py" "$model" write "$dir"
        "$interop" "$model" load "$dir" ;;
    tpudsl_to_keras)
        "$venv/bin/python" "$here/keras_side.py" "$model" inputs "$dir"
        "$interop" "$model" save "$dir"
        "$venv/bin/python" "$here/keras_side.py" "$model" check "$dir" ;;
    one_step)
        "$venv/bin/python" "$here/keras_side.py" "$model" step "$dir"
        "$interop" "$model" step "$dir"
        "$venv/bin/python" "$here/keras_side.py" "$model" step_check "$dir" ;;
    *) echo "run.sh: unknown direction '$direction'" >&2; exit 2 ;;
esac
