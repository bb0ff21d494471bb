#!/usr/bin/env bash
# The main job: installs what is missing, builds the seed examples in Release and runs them.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh g++ cmake ninja-build libboost-dev xtensor-dev libxsimd-dev catch2 zlib1g-dev \
    dataset-fashion-mnist
cmake --preset release
cmake --build --preset release -j "$(nproc)" --target reuters_conv1d mnist_mlp fashion_mnist_cnn cifar10_cnn
for seed in reuters_conv1d mnist_mlp fashion_mnist_cnn cifar10_cnn; do
    echo "== ${seed}"
    build/release/examples/"${seed}"
done
