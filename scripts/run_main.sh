#!/usr/bin/env bash
# The main job: installs what is missing (the real Fashion-MNIST data set included), builds in
# Release, prints the seed models' summaries and trains the Fashion-MNIST seed on the real data:
# 5 full epochs at batch 128, ending with "Test accuracy: 0.xxxx".
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh g++ cmake ninja-build libboost-dev xtensor-dev libxsimd-dev catch2 zlib1g-dev \
    dataset-fashion-mnist
cmake --preset release
cmake --build --preset release -j "$(nproc)" --target reuters_conv1d mnist_mlp fashion_mnist_cnn cifar10_cnn
for seed in reuters_conv1d mnist_mlp cifar10_cnn; do
    echo "== ${seed}"
    build/release/examples/"${seed}"
done
echo "== fashion_mnist_cnn"
build/release/examples/fashion_mnist_cnn --epochs 5 --batch 128
