#!/usr/bin/env bash
# Compile time and peak compiler memory of each seed example at -O2 (GNU time's "Maximum resident
# set size"), best of three. Usage: compile_cost.sh [compiler] [repository root]
set -euo pipefail
cxx=${1:-g++}
root=${2:-$(cd "$(dirname "$0")/.." && pwd)}
if [ ! -x /usr/bin/time ]; then
    echo "compile_cost: needs GNU time (apt-get install time)" >&2
    exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-20s %10s %14s\n' example seconds peak_MiB
for seed in reuters_conv1d mnist_mlp fashion_mnist_cnn cifar10_cnn; do
    best_s=; best_kb=
    for _ in 1 2 3; do
        /usr/bin/time -f '%e %M' -o "$tmp/t" "$cxx" -std=c++20 -O2 -I"$root/include" \
            -c "$root/examples/$seed/main.cpp" -o "$tmp/$seed.o"
        read -r s kb < "$tmp/t"
        if [ -z "$best_s" ] || awk "BEGIN{exit !($s < $best_s)}"; then best_s=$s; fi
        if [ -z "$best_kb" ] || [ "$kb" -gt "$best_kb" ]; then best_kb=$kb; fi
    done
    printf '%-20s %10s %14.1f\n' "$seed" "$best_s" "$(awk "BEGIN{print $best_kb/1024}")"
    echo "compile_cost example=$seed seconds=$best_s peak_kib=$best_kb"
done
