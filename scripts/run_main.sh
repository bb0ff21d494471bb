#!/usr/bin/env bash
# The main job: installs what is missing (the real Fashion-MNIST data set included), builds in
# Release and trains the Fashion-MNIST seed on the real data: 5 full epochs at batch 128 on
# TpuStrategy<8>, ending with "Test accuracy: 0.xxxx". The other seeds are examples/ programs too.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh g++ cmake ninja-build libboost-dev xtensor-dev libxsimd-dev catch2 zlib1g-dev \
    dataset-fashion-mnist
cmake --preset release
cmake --build --preset release -j "$(nproc)" --target fashion_mnist_cnn
build/release/examples/fashion_mnist_cnn --epochs 5 --batch 128
