#!/usr/bin/env bash
# Creates (or reuses) the virtual environments of benchmarks/compare_peers.py's modern peers:
#   scripts/peers_env.sh [PEERS_DIR] [torch2] [keras3-tf]
# PEERS_DIR defaults to TPUDSL_PEERS_DIR, else ~/.cache/tpudsl-peers (outside the repository); with no
# environment named, both are made:
#   PEERS_DIR/torch2     PyTorch 2 from PyPI          (scripts/peers-torch2-requirements.txt)
#   PEERS_DIR/keras3-tf  TensorFlow 2 CPU with Keras 3 (scripts/peers-keras3-tf-requirements.txt)
# Every package is pinned (Python 3.11, Debian 12's python3). The wheels are kept outside the
# repository, in TPUDSL_PIP_CACHE (by default ~/.cache/tpudsl-pip), under peers-torch2/ and
# peers-keras3-tf/: a second run, or a new PEERS_DIR, installs from there and downloads nothing. An
# environment that already holds its pins is kept as it is.
#
# Sizes. PyPI's PyTorch wheel for Linux x86-64 is built for CUDA and requires NVIDIA's CUDA libraries
# as packages (cuDNN, cuBLAS, NCCL, cuSPARSELt, NVSHMEM, ... and Triton): 2.8 GB of wheels to download
# once (the torch wheel itself 0.5 GB) and 5.3 GB installed, the CUDA part unused by these CPU runs. The CPU-only wheel lives on
# PyTorch's own package index, not on PyPI; where that index is reachable, pin its build instead
# (torch==X+cpu with --index-url set to it) and drop the nvidia-*, cuda-* and triton lines. Without
# the CUDA packages PyPI's wheel does not import (libtorch_cuda.so is linked against them).
# TensorFlow's CPU build is a package of its own on PyPI (tensorflow-cpu, 260 MB); with its
# dependencies the keras3-tf wheels are 320 MB, 1.6 GB installed.
#
# Needs Debian's python3, python3-venv and python3-dev (torch.compile builds C++ against Python.h)
# and g++ (scripts/install_deps.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
peers="${1:-${TPUDSL_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tpudsl-peers}}"
shift || true
envs=("$@")
[ ${#envs[@]} -gt 0 ] || envs=(torch2 keras3-tf)
cache="${TPUDSL_PIP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tpudsl-pip}"
python=/usr/bin/python3   # Debian's, for which python3-venv is installed
[ -x "$python" ] || python="$(command -v python3)"
export PIP_DISABLE_PIP_VERSION_CHECK=1

make_env() {
    local name="$1" check="$2"
    local venv="$peers/$name" requirements="$here/peers-$name-requirements.txt"
    local stamp="$venv/tpudsl-requirements.txt" wheels="$cache/peers-$name"
    if [ -x "$venv/bin/python" ] && cmp -s "$requirements" "$stamp" &&
       "$venv/bin/python" -c "$check" 2>/dev/null; then
        echo "peers_env: $venv is up to date"
        return 0
    fi
    local start; start=$(date +%s)
    rm -rf "$venv"
    mkdir -p "$wheels" "$peers"
    "$python" -m venv "$venv"
    local pip=("$venv/bin/python" -m pip)
    # pip's own cache keeps no wheel that an index serves uncacheable, so the wheels are downloaded
    # into a folder of their own and installed from it; only what is missing there is downloaded.
    if ! "${pip[@]}" install --quiet --no-index --find-links "$wheels" -r "$requirements" 2>/dev/null; then
        echo "peers_env: downloading the $name wheels into $wheels"
        "${pip[@]}" download --quiet --only-binary=:all: --no-deps --dest "$wheels" -r "$requirements"
        "${pip[@]}" install --quiet --no-index --find-links "$wheels" -r "$requirements"
    fi
    "$venv/bin/python" -c "$check" 2>/dev/null || "$venv/bin/python" -c "$check"   # quiet unless it fails
    cp "$requirements" "$stamp"
    echo "peers_env: created $venv in $(( $(date +%s) - start )) s ($(du -sh "$wheels" | cut -f1) of wheels in $wheels)"
}

for name in "${envs[@]}"; do
    case "$name" in
        torch2) make_env torch2 "import torch; torch.zeros(1)" ;;
        keras3-tf) make_env keras3-tf "import os; os.environ['TF_CPP_MIN_LOG_LEVEL'] = '2'; import tensorflow, keras" ;;
        *) echo "peers_env: no environment $name (torch2, keras3-tf)" >&2; exit 2 ;;
    esac
done
