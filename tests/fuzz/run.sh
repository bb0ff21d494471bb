#!/usr/bin/env bash
# Builds every libFuzzer harness (tests/fuzz/fuzz_*.cpp) with clang 19 and runs each, one after the
# other, for a while on a scratch copy of its seed corpus (tests/fuzz/corpus/<name without fuzz_>/),
# so the repository's corpus is never changed. Exits non-zero if a harness fails to build or finds a
# crash, a timeout, an out-of-memory or a broken contract, saying where the input was saved.
#
#   tests/fuzz/run.sh [seconds-per-harness] [build-dir]        (defaults: 30, build/fuzz)
#
# Environment: FUZZ_CXX (default clang++-19); FUZZ_ONLY="idx sequences" runs only those harnesses;
# FUZZ_ARGS adds libFuzzer flags (e.g. "-jobs=4 -workers=4" or "-fork=1 -ignore_crashes=1" to go on
# after a crash); FUZZ_INCLUDE_DIRS adds directories to look for xtensor and xtl in.
# Without clang++-19 it says fuzzing is skipped and exits 0. See tests/fuzz/README.md.
set -euo pipefail
shopt -s nullglob

usage() {
    echo "usage: tests/fuzz/run.sh [seconds-per-harness] [build-dir]   (defaults: 30, build/fuzz)" >&2
    exit 2
}
seconds=${1:-30}
build=${2:-}
[[ $# -le 2 && $seconds =~ ^[0-9]+$ && $seconds -ge 1 ]] || usage
[[ -z $build || $build == /* ]] || build=$PWD/$build   # one given: relative to where it was called from
cd "$(dirname "${BASH_SOURCE[0]}")/../.."               # the repository root
root=$PWD
build=${build:-$root/build/fuzz}                        # the default: in the repository's build/

cxx=${FUZZ_CXX:-clang++-19}
if ! command -v "$cxx" >/dev/null 2>&1; then
    echo "tests/fuzz/run.sh: $cxx not found: fuzzing skipped (install clang-19 and libclang-rt-19-dev)"
    exit 0
fi

# xtensor and xtl: /usr/include needs no flag (and naming it with -isystem would break libstdc++'s
# #include_next); another directory is added with -isystem.
includes=(-Iinclude)
for lib in xtensor/xtensor.hpp xtl/xtl_config.hpp; do
    where=
    for dir in ${FUZZ_INCLUDE_DIRS:-} ${CONDA_PREFIX:+$CONDA_PREFIX/include} /usr/local/include /usr/include; do
        if [[ -f $dir/$lib ]]; then
            where=$dir
            break
        fi
    done
    if [[ -z $where ]]; then
        echo "tests/fuzz/run.sh: ${lib%%/*} not found (looked in FUZZ_INCLUDE_DIRS, \$CONDA_PREFIX/include," \
            "/usr/local/include, /usr/include)" >&2
        exit 1
    fi
    if [[ $where != /usr/include && " ${includes[*]} " != *" $where "* ]]; then
        includes+=(-isystem "$where")
    fi
done
# shellcheck disable=SC2054 # the commas are clang's
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)

sources=()
for src in tests/fuzz/fuzz_*.cpp; do
    name=$(basename "$src" .cpp)
    if [[ -z ${FUZZ_ONLY:-} || " $FUZZ_ONLY " == *" ${name#fuzz_} "* || " $FUZZ_ONLY " == *" $name "* ]]; then
        sources+=("$src")
    fi
done
if [[ ${#sources[@]} -eq 0 ]]; then
    echo "tests/fuzz/run.sh: no harness to run (tests/fuzz/fuzz_*.cpp${FUZZ_ONLY:+, FUZZ_ONLY=$FUZZ_ONLY})" >&2
    exit 1
fi

mkdir -p "$build"
extra=()
read -r -a extra <<<"${FUZZ_ARGS:-}"
failed=()
for src in "${sources[@]}"; do
    name=$(basename "$src" .cpp)
    bin=$build/$name
    # built again when the harness, a header it may include or this script is newer than it
    stale=yes
    if [[ -x $bin ]]; then
        stale=$(find include tests/fuzz -newer "$bin" \( -name '*.hpp' -o -name '*.cpp' -o -name run.sh \) -print -quit)
    fi
    # libraries a harness names on its `// run.sh:` line as pkg-config=NAME (HDF5 for fuzz_keras_weights)
    pkg_cflags=()
    pkg_libs=()
    for pkg in $(sed -n 's|^// run.sh:.*pkg-config=\([A-Za-z0-9_.-]*\).*|\1|p' "$src"); do
        if ! pkg-config --exists "$pkg" 2>/dev/null; then
            echo "== $name: BUILD FAILED (pkg-config finds no $pkg: install it, e.g. scripts/install_deps.sh)"
            failed+=("$name (build)")
            continue 2
        fi
        read -r -a more <<<"$(pkg-config --cflags "$pkg")"
        pkg_cflags+=(${more[@]+"${more[@]}"})
        read -r -a more <<<"$(pkg-config --libs "$pkg")"
        pkg_libs+=(${more[@]+"${more[@]}"})
    done
    if [[ -n $stale ]]; then
        echo "== building $name"
        if ! "$cxx" "${flags[@]}" "${includes[@]}" ${pkg_cflags[@]+"${pkg_cflags[@]}"} "$src" \
            ${pkg_libs[@]+"${pkg_libs[@]}"} -lz -o "$bin.new"; then
            echo "== $name: BUILD FAILED"
            failed+=("$name (build)")
            continue
        fi
        mv -f "$bin.new" "$bin"
    fi

    corpus=tests/fuzz/corpus/${name#fuzz_}
    work=$build/corpus/$name
    artifacts=$build/artifacts/$name
    rm -rf "$work"
    mkdir -p "$work" "$artifacts"
    if [[ -d $corpus ]]; then
        cp -R "$corpus/." "$work/"
    else
        echo "   (no seed corpus $corpus: starting empty)"
    fi
    max_len=$(sed -n 's|^// run.sh:.*-max_len=\([0-9][0-9]*\).*|\1|p' "$src" | head -n 1)
    max_len=${max_len:-4096}
    # -len_control=N on the same line (0: inputs of up to -max_len from the start, for a harness whose
    # input is a program that needs its length to say anything)
    len_control=$(sed -n 's|^// run.sh:.*-len_control=\([0-9][0-9]*\).*|\1|p' "$src" | head -n 1)
    log=$build/$name.log
    marker=$build/.started-$name
    touch "$marker"
    echo "== fuzzing $name for ${seconds}s (seeds: $corpus, -max_len=$max_len, log: $log)"
    rc=0
    # run in the build directory, where -jobs writes its fuzz-N.log files
    (cd "$build" && "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
        ${len_control:+-len_control="$len_control"} \
        -use_value_profile=1 -print_final_stats=1 -artifact_prefix="$artifacts/" ${extra[@]+"${extra[@]}"} "$work") \
        >"$log" 2>&1 || rc=$?

    grep -E '^INFO: Seed:' "$log" | head -n 1 | sed 's/^/   /' || true
    grep -E '^#[0-9]+(: cov:|[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED))' "$log" | tail -n 1 | sed 's/^/   /' || true
    grep -E '^(stat::|Done [0-9]+ runs)' "$log" | sed 's/^/   /' || true
    if [[ $rc -ne 0 ]]; then
        echo "== $name: FAILED (exit $rc)"
        grep -E "^$name: |^SUMMARY: |ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error: " "$log" |
            head -n 6 | sed 's/^/   /' || true
        # the inputs it saved: named in the log, or (-fork) only found in the artifacts directory
        saved=$( (sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log"
            find "$artifacts" -type f -newer "$marker") | awk '!seen[$0]++')
        if [[ -n $saved ]]; then
            while read -r path; do
                echo "   input saved to $path"
            done <<<"$saved"
            echo "   reproduce: $bin $(tail -n 1 <<<"$saved")"
        else
            echo "   no input saved; see $log"
        fi
        failed+=("$name")
    else
        echo "== $name: ok"
    fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "tests/fuzz/run.sh: failed: ${failed[*]}"
    exit 1
fi
echo "tests/fuzz/run.sh: all ${#sources[@]} harnesses ran ${seconds}s without a failure"
