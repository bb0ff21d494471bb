#!/usr/bin/env bash
# Creates (or reuses) a Python virtual environment with real Keras for the interoperability tests:
#   scripts/keras_env.sh VENV_DIR
# Keras 3 on JAX's CPU backend with h5py, and tensorboard, every version pinned in
# scripts/keras-requirements.txt.
# The wheels are kept outside the build tree, in TPUDSL_PIP_CACHE (by default ~/.cache/tpudsl-pip):
# a new build tree installs from there without the network. An environment that already holds these
# pins is kept as it is. Needs Debian's python3 and python3-venv (scripts/install_deps.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${1:?usage: keras_env.sh VENV_DIR}"
requirements="$here/keras-requirements.txt"
stamp="$venv/tpudsl-requirements.txt"

if [ -x "$venv/bin/python" ] && cmp -s "$requirements" "$stamp" &&
   KERAS_BACKEND=jax "$venv/bin/python" -c "import keras, jax, h5py, numpy, tensorboard" 2>/dev/null; then
    echo "keras_env: $venv is up to date ($(grep -E '^keras==' "$requirements"))"
    exit 0
fi

python=/usr/bin/python3   # Debian's, for which python3-venv is installed
[ -x "$python" ] || python="$(command -v python3)"
cache="${TPUDSL_PIP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tpudsl-pip}"
wheels="$cache/wheels"
export PIP_DISABLE_PIP_VERSION_CHECK=1
start=$(date +%s)
rm -rf "$venv"
mkdir -p "$wheels"
"$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip)
# pip's own cache keeps no wheel that an index serves uncacheable, so the wheels are downloaded into
# a folder of their own and installed from it; a download happens only for what is missing there.
if ! "${pip[@]}" install --quiet --no-index --find-links "$wheels" -r "$requirements" 2>/dev/null; then
    "${pip[@]}" download --quiet --only-binary=:all: --dest "$wheels" -r "$requirements"
    "${pip[@]}" install --quiet --no-index --find-links "$wheels" -r "$requirements"
fi
cp "$requirements" "$stamp"
echo "keras_env: created $venv in $(( $(date +%s) - start )) s (wheels from $wheels)"
