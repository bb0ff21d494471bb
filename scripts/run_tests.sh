#!/usr/bin/env bash
# The test command: installs what is missing, configures and builds in Release, runs every ctest
# test (unit, static, compile-fail, package, examples, docs).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh
cmake --preset release
cmake --build --preset release -j "$(nproc)"
ctest --preset release -j "$(nproc)"
