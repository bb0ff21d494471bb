#!/usr/bin/env bash
# Compares what the four seed models (and a VGG-style block of Same convolutions) compute at two
# revisions, bit for bit: builds benchmarks/same_bits.cpp (of the working tree) against the headers of
# REV and against the working tree's, with the same flags, runs both and compares their digests
# (weights after one epoch on one core and on TpuStrategy<2>, predictions, losses).
#
#   benchmarks/same_bits.sh REV [CXXFLAGS...]      # e.g. benchmarks/same_bits.sh origin/main
#
# The default flags add -ffp-contract=off: GCC may fuse a * b + c into one FMA (one rounding, not
# two) wherever its inlining brings the two operations together, so at its default a change that only
# moves code between functions can move a fusion and change a digest. With contraction off, the
# digests compare the library's arithmetic as written (the kernels' FMAs are explicit and stay).
#
# Exit status 0 when every line agrees.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: benchmarks/same_bits.sh REV [CXXFLAGS...]}
shift
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(-O3 -march=native -DNDEBUG -ffp-contract=off)
work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --detach "$work/base" "$rev" >/dev/null 2>&1
build() {   # build ROOT OUT: same_bits.cpp of this tree against ROOT's headers and examples
    g++ -std=c++20 "${flags[@]}" -I"$1/include" -I"$1/examples" benchmarks/same_bits.cpp -o "$2" -lz -pthread
}
build "$work/base" "$work/before" &
build . "$work/after" &
wait
# the digest lines only (a model may print warnings on the same stream)
"$work/before" 2>/dev/null | grep -E '^[a-z0-9_]+ [a-z0-9]+ weights=' >"$work/before.txt"
"$work/after" 2>/dev/null | grep -E '^[a-z0-9_]+ [a-z0-9]+ weights=' >"$work/after.txt"
if diff "$work/before.txt" "$work/after.txt"; then
    echo "same_bits: identical to $rev ($(wc -l <"$work/after.txt") digests)"
    cat "$work/after.txt"
else
    echo "same_bits: DIFFERENT from $rev" >&2
    exit 1
fi
