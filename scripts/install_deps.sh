#!/usr/bin/env bash
# Installs, from Debian 12's packages, whatever of the given packages is missing (all of tpudsl's
# build and test needs when called with no argument). Safe to run again: it installs nothing twice.
set -euo pipefail

packages=("$@")
if [ ${#packages[@]} -eq 0 ]; then
    packages=(g++ cmake ninja-build libboost-dev xtensor-dev libxsimd-dev catch2 zlib1g-dev dataset-fashion-mnist
              clang-19 libclang-rt-19-dev    # clang: the fuzzers (libFuzzer) only
              libhdf5-dev python3-venv       # Keras' .h5 files; real Keras in a venv (tests/keras)
              pkgconf                        # the fuzzers find HDF5 through pkg-config
              libopenmpi-dev openmpi-bin     # MultiWorkerStrategy (optional: tpudsl::multi_worker, ctest -L mpi)
              iproute2                       # ip netns: ctest's mpi.two_hosts (two network namespaces, a veth pair)
              dict-freedict-eng-spa)         # English-Spanish pairs: tpudsl::data::freedict's test
fi

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install_deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
fi
echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
