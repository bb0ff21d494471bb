#!/usr/bin/env bash
# Compile time and peak compiler memory (GNU time's "Maximum resident set size") of each seed (and the
# examples beyond them: reuters_lstm, cifar10_bn, and the functional ResNet-20 and Transformer classifier,
# cifar10_resnet and reuters_transformer) at -O2,
# best of three: the model declaration alone (its model.hpp, with the static_asserts on its shapes and
# counts) and the whole training program (its main.cpp).
# Usage: [SEEDS="fashion_mnist_cnn reuters_transformer"] compile_cost.sh [compiler] [repository root]
set -euo pipefail
cxx=${1:-g++}
root=${2:-$(cd "$(dirname "$0")/.." && pwd)}
if [ ! -x /usr/bin/time ]; then
    echo "compile_cost: needs GNU time (apt-get install time)" >&2
    exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

measure() {   # measure <label> <seed> <compiler arguments...>
    local label=$1 seed=$2
    shift 2
    local best_s="" best_kb=""
    for _ in 1 2 3; do
        /usr/bin/time -f '%e %M' -o "$tmp/t" "$cxx" -std=c++20 -O2 -I"$root/include" -I"$root/examples" "$@" \
            -o "$tmp/out.o"
        read -r s kb < "$tmp/t"
        if [ -z "$best_s" ] || awk "BEGIN{exit !($s < $best_s)}"; then best_s=$s; fi
        if [ -z "$best_kb" ] || [ "$kb" -gt "$best_kb" ]; then best_kb=$kb; fi
    done
    printf '%-20s %-12s %8s %12.1f\n' "$seed" "$label" "$best_s" "$(awk "BEGIN{print $best_kb/1024}")"
    echo "compile_cost example=$seed part=$label seconds=$best_s peak_kib=$best_kb"
}

printf '%-20s %-12s %8s %12s\n' example part seconds peak_MiB
for seed in ${SEEDS:-reuters_conv1d mnist_mlp fashion_mnist_cnn cifar10_cnn reuters_lstm cifar10_bn cifar10_resnet reuters_transformer}; do
    measure declaration "$seed" -x c++ -c "$root/examples/$seed/model.hpp"
    measure program "$seed" -c "$root/examples/$seed/main.cpp"
done
