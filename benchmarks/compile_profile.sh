#!/usr/bin/env bash
# Where a program's compile time goes, per function of the program: GCC's instructions (callgrind's
# count, which a busy machine does not change) before code generation (parsing, instantiation, the
# interprocedural passes) and in the code generation of each function it emits (`cgraph_node::expand`,
# the RTL passes and the assembly). Prints the total, the share before code generation, the functions
# that cost most and the sums by part of the library. Slow: callgrind runs GCC about 50 times slower
# (reuters_lstm: 54 G instructions, 15 minutes).
# Usage: compile_profile.sh <source.cpp> [top] [extra compiler arguments...]
#   e.g. benchmarks/compile_profile.sh examples/reuters_lstm/main.cpp 40
set -euo pipefail
src=${1:?usage: compile_profile.sh <source.cpp> [top] [compiler arguments...]}
top=${2:-40}
shift $(( $# >= 2 ? 2 : 1 ))
root=$(cd "$(dirname "$0")/.." && pwd)
cxx=${CXX:-g++}
for tool in valgrind callgrind_annotate c++filt python3; do
    command -v "$tool" > /dev/null || { echo "compile_profile: needs $tool (apt-get install valgrind binutils python3)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(-std=c++20 -O2 -I"$root/include" -I"$root/examples" "$@" -S "$src")

# The order in which GCC generates the functions' code: its expand dump, one compile without valgrind.
"$cxx" "${args[@]}" -o "$tmp/order.s" -fdump-rtl-expand="$tmp/expand"
# The instructions between one function's code generation and the next: a callgrind dump before each.
valgrind --tool=callgrind --trace-children=yes --dump-before='cgraph_node::expand()' \
    --callgrind-out-file="$tmp/cg.%p" "$cxx" "${args[@]}" -o "$tmp/profiled.s" 2> "$tmp/valgrind.log"

python3 - "$tmp" "$top" <<'EOF'
import collections, glob, os, re, subprocess, sys
tmp, top = sys.argv[1], int(sys.argv[2])
order = [re.search(r'\((\S+), funcdef', l).group(1) for l in open(os.path.join(tmp, 'expand'))
         if l.startswith(';; Function')]
# cc1plus is the child whose profile has parts (cg.<pid>.<n>); its last part is cg.<pid>.
parts = {}
for f in glob.glob(os.path.join(tmp, 'cg.*.*')):
    pid, n = f.rsplit('.', 2)[-2:]
    for line in open(f):
        if line.startswith('summary:'):
            parts.setdefault(pid, {})[int(n)] = int(line.split()[1])
            break
if len(parts) != 1:
    sys.exit('compile_profile: expected one compiler process with parts, found %d' % len(parts))
pid, p = parts.popitem()
last = next(int(l.split()[1]) for l in open(os.path.join(tmp, 'cg.' + pid)) if l.startswith('summary:'))
costs = [p[k] for k in range(2, max(p) + 1)] + [last]
if len(costs) != len(order):
    sys.exit('compile_profile: %d functions generated, %d in the expand dump' % (len(costs), len(order)))
names = subprocess.run(['c++filt'], input='\n'.join(order), capture_output=True, text=True).stdout.split('\n')
before, total = p[1], p[1] + sum(costs)
print('instructions: %.2f G; before code generation (parsing, instantiation, IPA) %.2f G (%.0f%%); '
      'code generation of %d functions %.2f G' % (total / 1e9, before / 1e9, 100 * before / total, len(costs),
                                                   sum(costs) / 1e9))
def part(n):
    if 'kernels::' in n and 'scratch_arena' not in n: return 'kernels (GEMM tiles and drivers)'
    if 'replica_steps' in n or 'reduce_and_update' in n: return 'replica steps, fused reduce and update'
    if re.search(r'_ops<|ops::graph|bound_layer', n): return 'layers and graph'
    if re.search(r'weights|training_state|replace_file|resume|Backup|file', n): return 'files (weights, backups)'
    if re.search(r'check_|model_arrays|convert|array_ref|dataset', n): return 'data boundary'
    if 'trainer<' in n: return 'trainer (fit, evaluate, compile)'
    if re.search(r'summary|progbar|Progbar|History|Logs|Callback|callback', n): return 'summary, progress, History, callbacks'
    if n.startswith(('std::', 'void std::', '__gnu_cxx')): return 'standard library'
    if n.startswith('tpudsl::'): return 'other tpudsl'
    return 'the program and the rest'
by = collections.Counter()
for c, n in zip(costs, names):
    by[part(n)] += c
print('\nby part (code generation):')
for g, v in by.most_common():
    print('  %6.2f G %5.1f%%  %s' % (v / 1e9, 100 * v / total, g))
print('\nthe %d functions whose code generation costs most:' % top)
for c, n in sorted(zip(costs, names), reverse=True)[:top]:
    print('  %6.0f M  %s' % (c / 1e6, n[:160]))
EOF
