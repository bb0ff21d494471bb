#!/usr/bin/env bash
# Multi-worker scaling in one command (docs/benchmarks.md, "Multi-worker scaling"): MPI's latency and
# bandwidth between two processes (benchmarks/mpi_pingpong, over shared memory and over TCP loopback),
# then ROUNDS rounds, each running every configuration once (so a slow spell of the machine hits all of
# them alike), of
#   one process, --bind-to none:   OneDeviceStrategy (1 thread), TpuStrategy<2>, MultiWorkerStrategy<1>
#                                  (one core's step split into compute, link and apply)
#   mpirun -np K, --bind-to $BIND: MultiWorkerStrategy<1> chained (deterministic) and Reduction::allreduce,
#                                  K = 2 (WORKERS: e.g. 2,4,8 on a machine with 8 cores or more)
# then prints the medians, the alpha-beta fits and the projection to 8, 16 and 64 workers
# (benchmarks/multi_worker_projection.py). 3 to 5.5 minutes on a busy 2-core machine with the defaults
# (the bench built: its six models take about a minute of compiler time).
#
#   benchmarks/multi_worker_scaling.sh [BUILD_DIR]         # default build/release, else build/rel
#
# Environment: ROUNDS (3), SECONDS_PER (1.0, per configuration and round), MODELS (all six seeds:
# fashion,reuters,mnist,cifar10_cnn,cifar10_bn,reuters_lstm), BIND (core: each rank on its own core;
# "none", or "core,none" for both), BATCH (128), OUT (a directory for the raw lines; default a new
# one under /tmp), WORKERS (2; each must divide the 8 micro-batches), BYTES (1: count what MPI sends per
# step with Open MPI's pml monitoring, 2 steps less 1, about half a minute; 0: skip), NO_BUILD=1 (use the binaries as they are), MPIRUN_FLAGS (added to every mpirun,
# e.g. --oversubscribe).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-}
if [ -z "$build" ]; then
    if [ -d build/release ]; then build=build/release; else build=build/rel; fi
fi
rounds=${ROUNDS:-3}
seconds=${SECONDS_PER:-1.0}
models=${MODELS:-fashion,reuters,mnist,cifar10_cnn,cifar10_bn,reuters_lstm}
binds=${BIND:-core}
batch=${BATCH:-128}
workers=${WORKERS:-2}
out=${OUT:-$(mktemp -d /tmp/multi_worker_scaling.XXXXXX)}
mkdir -p "$out"
log="$out/raw.txt"
: >"$log"
if [ "$(id -u)" = 0 ]; then   # a container or CI job running as root
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
read -r -a extra <<<"${MPIRUN_FLAGS:-}"
if [ -z "${NO_BUILD:-}" ]; then
    [ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    nice -n 19 cmake --build "$build" --target multi_worker_bench mpi_pingpong >/dev/null
fi
bench=$build/benchmarks/multi_worker_bench
pingpong=$build/benchmarks/mpi_pingpong
{
    echo "# machine: $(uname -n), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# mpirun: $(mpirun --version 2>&1 | head -1)"
    echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ) rounds=$rounds seconds=$seconds batch=$batch bind=$binds workers=$workers"
} | tee -a "$log"
# Can two processes run at once at full speed here? (A VM may show 2 cores that share one physical CPU.)
python3 - <<'PY' | tee -a "$log"
import multiprocessing as mp, os, time
def spin(core, seconds, out):
    if core is not None:
        os.sched_setaffinity(0, {core})
    n, x, end = 0, 1.0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(10000):
            x = x * 1.0000001 + 1e-9
        n += 1
    out.put(n / seconds)
if __name__ == "__main__":
    cores = sorted(os.sched_getaffinity(0))[:2]
    if len(cores) < 2:
        raise SystemExit("# parallel capacity: one core only")
    q = mp.Queue()
    p = mp.Process(target=spin, args=(cores[0], 1.0, q)); p.start(); p.join(); alone = q.get()
    ps = [mp.Process(target=spin, args=(c, 1.0, q)) for c in cores]
    [p.start() for p in ps]; [p.join() for p in ps]
    pair = [q.get() for _ in ps]
    print(f"# parallel capacity: 2 processes on cores {cores[0]},{cores[1]} each ran at "
          f"{min(pair) / alone:.2f} and {max(pair) / alone:.2f} of one process alone "
          f"(1.00: two real cores; 0.50: the two share one)")
PY
echo "pingpong: shared memory (vader), then TCP loopback" >&2
mpirun -np 2 --bind-to core "${extra[@]}" "$pingpong" | sed 's/^/transport=shm /' | tee -a "$log" | grep fit
mpirun -np 2 --bind-to core --mca btl tcp,self "${extra[@]}" "$pingpong" | sed 's/^/transport=tcp /' | tee -a "$log" |
    grep fit
for ((r = 1; r <= rounds; r++)); do
    echo "round $r of $rounds" >&2
    mpirun -np 1 --bind-to none "${extra[@]}" "$bench" --batch "$batch" --seconds "$seconds" --model "$models" \
        --only one,tpu2,chained --round "$r" | sed 's/$/ bind=none/' >>"$log"
    for k in ${workers//,/ }; do
        for b in ${binds//,/ }; do
            mpirun -np "$k" --bind-to "$b" "${extra[@]}" "$bench" --batch "$batch" --seconds "$seconds" \
                --model "$models" --only chained,allreduce --round "$r" | sed "s/\$/ bind=$b/" >>"$log"
        done
    done
done
if [ "${BYTES:-1}" != 0 ]; then   # what MPI itself sends per step: Open MPI's pml monitoring, 2 steps less 1
    echo "bytes: Open MPI's pml monitoring" >&2
    for k in ${workers//,/ }; do
        for m in ${models//,/ }; do
            for s in chained allreduce; do
                for steps in 1 2; do
                    mpirun -np "$k" --bind-to core --mca pml_monitoring_enable 1 --mca pml_monitoring_enable_output 1 \
                        "${extra[@]}" "$bench" --batch "$batch" --model "$m" --only "$s" --steps "$steps" 2>&1 |
                        awk -v m="$m" -v s="$s" -v k="$k" -v n="$steps" \
                            '$1 == "E" { print "monitor model=" m " strategy=" s " workers=" k " steps=" n " rank=" $2 " peer=" $3 " bytes=" $4 " msgs=" $6 }' \
                        >>"$log" || true
                done
            done
        done
    done
fi
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"
echo "raw lines: $log" >&2
python3 benchmarks/multi_worker_projection.py "$log"
