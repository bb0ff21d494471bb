#!/usr/bin/env bash
# The test command: installs what is missing, configures and builds in Release, runs every ctest
# test (unit, static, compile-fail, package, examples, docs); then builds the unit tests once more
# without -march=native and runs them, so the baseline SIMD path stays correct too.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh
cmake --preset release
cmake --build --preset release -j "$(nproc)"
ctest --preset release -j "$(nproc)"

cmake --preset portable
cmake --build --preset portable -j "$(nproc)" --target tpudsl_unit_tests tpudsl_sanitized_tests tpudsl_alloc_tests
ctest --preset portable -j "$(nproc)" -L unit
