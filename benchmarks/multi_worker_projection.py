#!/usr/bin/env python3
"""Multi-worker scaling: the measured table and an alpha-beta projection (python3, stdlib only).

    benchmarks/multi_worker_projection.py RAW [--chunk 16384] [--workers 2,8,16,64]

RAW: the lines benchmarks/multi_worker_scaling.sh collected (multi_worker_bench's lines, mpi_pingpong's
with transport=shm|tcp, the pml monitoring's "monitor" lines). Prints (1) the medians over rounds:
samples/s, ratio to one core, the reduce's and the apply's share of a step, bytes the chief's links
send per step; (2) the bytes and messages MPI sent per step and rank; (3) alpha and beta per
transport; (4) the model's K-worker step beside the measured one; (5) projected samples/s and
efficiency for K workers per link, with the best K and the first K under 50%; (6) the bytes the
busiest worker sends per step, by the model.

The model of one training step on K workers (global batch fixed, K dividing the micro-batches), from
MultiWorkerStrategy::chained_step (include/tpudsl/distribute/multi_worker.hpp). One core's step, as
MultiWorkerStrategy<1> on one process times it, is F (forward and backward of the 8 micro-batches),
D (the link: the deferred kernels' weight gradients, which the chain computes, and the arenas' sums)
and A (the optimizer on the sums, which every worker runs on the whole buffer).

  chained (deterministic), n floats in m = ceil(n / c) chunks of c floats, N = 4 n bytes:
    F/K                                        each worker's micro-batches, all at once
  + (m + K - 1) d + (m + K - 2) t              the chain: K links of d = D / (K m) per chunk; the
                                               (K - 1) m messages (one per chunk per link: MPI_Isend
                                               to rank + 1) of t = alpha + 4 c beta; a pipeline of K
                                               stages and m items, the message not overlapped
                                               with the next link (MPI progresses in MPI_Wait)
  + ceil(log2 K) (alpha + N beta)              MPI_Bcast of the whole buffer from the last worker
                                               (binomial tree; it starts after the chain ends)
  + A + O + ceil(log2 K) alpha                 the optimizer on the whole buffer; the rest of the step
                                               (O: fit's loop, the samples' gathering: one process's
                                               step less F + D + A); the scores' MPI_Allgather
  chained, sums sent back per chunk (the code now; the broadcast above was the code before): the last
    worker passes each finished chunk on around a ring (K-1 -> 0 -> 1 -> ... -> K-2) while the chain goes on, instead of one MPI_Bcast
    at the end: each link then carries every chunk twice, (m + K - 1) d + 2 (m + K - 2) t, and the
    last chunk reaches every worker (K - 1) t later
  chained, chunk_floats tuned to K: the chain and broadcast with the power of two (256 to 512K floats)
    that minimises the step: the fill (K - 2) t shrinks with smaller chunks, the m alphas grow
  allreduce (Reduction::allreduce): F/K + D/K + ring all-reduce 2 (K - 1)(alpha + N/K beta) + A + ...

Efficiency = one core's step (OneDeviceStrategy) / (K x the K-worker step). Compute is assumed to
split linearly over workers (optimistic at 64 workers: 2 samples each of a global batch of 128).
"""
import argparse
import math
import re
import statistics
import sys
from collections import defaultdict

ASSUMED_NETWORKS = [
    # name, alpha (s), beta (s per byte), what it stands for
    ("10GbE", 25e-6, 1 / 1.1e9, "TCP over 10 GbE: 25 us, 1.1 GB/s (assumed)"),
    ("25GbE", 15e-6, 1 / 2.8e9, "TCP over 25 GbE: 15 us, 2.8 GB/s (assumed)"),
]


def parse(path):
    runs = defaultdict(list)   # (model, strategy, workers, bind) -> [fields]
    pingpong = {}              # transport -> {"alpha": s, "beta": s/B, "points": [(bytes, s)]}
    comments = []
    monitored = {}             # (model, strategy, workers, rank) -> {steps: [bytes, messages]}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("#"):
                comments.append(line)
                continue
            fields = dict(re.findall(r"(\w+)=(\S+)", line))
            if line.startswith("monitor "):
                key = (fields["model"], fields["strategy"], int(fields["workers"]), int(fields["rank"]))
                per_steps = monitored.setdefault(key, {}).setdefault(int(fields["steps"]), [0, 0])
                per_steps[0] += int(fields["bytes"])
                per_steps[1] += int(fields["msgs"])
            elif "multi_worker_bench" in line:
                key = (fields["model"], fields["strategy"], int(fields["workers"]), fields.get("bind", "?"))
                runs[key].append(fields)
            elif "mpi_pingpong_fit" in line:
                p = pingpong.setdefault(fields["transport"], {"points": []})
                p["alpha"] = float(fields["alpha_us"]) * 1e-6
                p["beta"] = float(fields["beta_ns_per_byte"]) * 1e-9
            elif "mpi_pingpong" in line:
                p = pingpong.setdefault(fields["transport"], {"points": []})
                p["points"].append((int(fields["bytes"]), float(fields["one_way_us"]) * 1e-6))
    return runs, pingpong, comments, monitored


def median(runs, key, field):
    values = [float(r[field]) for r in runs.get(key, []) if field in r]
    return statistics.median(values) if values else None


def log2ceil(k):
    return math.ceil(math.log2(k)) if k > 1 else 0


def step_time(kind, k, n, chunk, f, d, a, alpha, beta, o=0.0):
    """Seconds of one step on k workers (see the module's docstring); o: the rest of a step (fit's
    loop, gathering the micro-batches' samples), kept whole on every worker."""
    if k == 1:
        return f + d + a + o
    big_n = 4 * n
    scores = log2ceil(k) * alpha
    if kind == "allreduce":
        return f / k + d / k + 2 * (k - 1) * (alpha + big_n / k * beta) + a + o + scores
    m = math.ceil(n / chunk)
    link = d / (k * m)
    t = alpha + 4 * min(chunk, n) * beta
    chain = (m + k - 1) * link + (m + k - 2) * t
    if kind == "chained":
        return f / k + chain + log2ceil(k) * (alpha + big_n * beta) + a + o + scores
    if kind == "chained+tuned":   # the code's reduction with the best power-of-two chunk_floats for K
        return min(step_time("chained", k, n, 1 << e, f, d, a, alpha, beta, o) for e in range(8, 20))
    if kind == "chained+return":
        return f / k + (m + k - 1) * link + 2 * (m + k - 2) * t + (k - 1) * t + a + o + scores
    raise ValueError(kind)


def bytes_per_worker(kind, k, n):
    """Most bytes any worker sends in a step (the chain's links, the broadcast's root, the ring)."""
    big_n = 4 * n
    if k == 1:
        return 0
    if kind == "allreduce":
        return 2 * (k - 1) * big_n // k
    # rank 0: its link's N, then N to each of its ceil(log2 K) - 1 children in the binomial tree rooted
    # at the last worker (which sends N to ceil(log2 K) children): ceil(log2 K) N either way
    return max(1, log2ceil(k)) * big_n


MODELS = ["fashion", "reuters", "mnist", "cifar10_cnn", "cifar10_bn", "reuters_lstm"]
KINDS = [("chained", "chained, one broadcast at the end"), ("chained+tuned", "chained and broadcast, chunk_floats tuned to K"), ("chained+return", "chained, sums sent back per chunk (the code)"), ("allreduce", "ring all-reduce")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("raw")
    ap.add_argument("--chunk", type=int, default=16384, help="chunk_floats of the chain (MultiWorkerOptions)")
    ap.add_argument("--workers", default="2,8,16,64")
    args = ap.parse_args()
    runs, pingpong, comments, monitored = parse(args.raw)
    workers = [int(w) for w in args.workers.split(",")]
    for c in comments:
        print(c)
    models = [m for m in MODELS if any(k[0] == m for k in runs) or any(k[0] == m for k in monitored)]
    binds = sorted({k[3] for k in runs if k[2] > 1})
    measured_workers = sorted({k[2] for k in runs if k[2] > 1})
    rounds = max((len(v) for v in runs.values()), default=0)

    print(f"\n## Measured (medians of {rounds} rounds), batch 128\n")
    print("| model | params | configuration | samples/s | ratio to one core | reduce share | apply share | bytes sent per step (chief's links) |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    one_core = {}
    for model in models:
        one = median(runs, (model, "OneDevice", 1, "none"), "samples_per_s")
        one_core[model] = one
        params = next((int(v[0]["params"]) for k, v in runs.items() if k[0] == model), None)
        if params is None:
            continue
        rows = [("OneDevice (1 thread)", (model, "OneDevice", 1, "none")),
                ("TpuStrategy<2> (1 process)", (model, "TpuStrategy<2>", 1, "none")),
                ("MultiWorker<1>, 1 process", (model, "MultiWorker<1>", 1, "none"))]
        for k in measured_workers:
            for b in binds:
                rows.append((f"{k} x MultiWorker<1> chained, bind {b}", (model, "MultiWorker<1>", k, b)))
                rows.append((f"{k} x MultiWorker<1> allreduce, bind {b}", (model, "MultiWorker<1>,allreduce", k, b)))
        for label, key in rows:
            rate = median(runs, key, "samples_per_s")
            if rate is None:
                continue
            ratio = f"{rate / one:.2f}" if one else "-"
            red = median(runs, key, "reduce")
            app = median(runs, key, "apply")
            sent = median(runs, key, "bytes_sent_per_step")
            share = lambda x: f"{100 * x:.0f}%" if x is not None else ""
            sent_text = ""
            if sent is not None and key[2] > 1:   # measured: the chief's links; modelled: the ring's
                k = key[2]
                sent_text = f"{int(sent):,}" if sent else f"{2 * (k - 1) * 4 * params // k:,} (ring, model)"
            print(f"| {model} | {params:,} | {label} | {rate:,.0f} | {ratio} | {share(red)} | {share(app)} | {sent_text} |")

    if monitored:
        print("\n## What MPI sent per step (Open MPI's pml monitoring: a 2-step run less a 1-step run)\n")
        print("| model | workers | reduction | bytes sent per step, by rank | messages per step, by rank |")
        print("|---|---:|---|---|---|")
        for model in models:
            for k in sorted({key[2] for key in monitored if key[0] == model}):
                for strategy in ("chained", "allreduce"):
                    per_rank = []
                    for r in range(k):
                        counts = monitored.get((model, strategy, k, r), {})
                        if 1 in counts and 2 in counts:
                            per_rank.append((counts[2][0] - counts[1][0], counts[2][1] - counts[1][1]))
                    if per_rank:
                        print(f"| {model} | {k} | {strategy} | " + ", ".join(f"{b:,}" for b, _ in per_rank) + " | "
                              + ", ".join(str(m) for _, m in per_rank) + " |")

    print("\n## MPI between two processes (ping-pong, one way)\n")
    print("| transport | alpha (latency) | beta | bandwidth | 64 KiB chunk | 435 KB (Fashion's buffer) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, p in sorted(pingpong.items()):
        if "alpha" not in p:
            continue
        pts = dict(p["points"])
        chunk_t = pts.get(65536)
        print(f"| {name} | {p['alpha'] * 1e6:.2f} us | {p['beta'] * 1e9:.3f} ns/B | {1e-9 / p['beta']:.2f} GB/s | "
              f"{chunk_t * 1e6 if chunk_t else float('nan'):.1f} us | {(p['alpha'] + 435240 * p['beta']) * 1e6:.0f} us (model) |")
    networks = [(name, p["alpha"], p["beta"], f"{name} measured") for name, p in sorted(pingpong.items()) if "alpha" in p]
    networks += ASSUMED_NETWORKS

    # one core's step, split by MultiWorker<1> on one process; scaled to OneDevice's step time
    parts = {}
    for model in models:
        key = (model, "MultiWorker<1>", 1, "none")
        f, d, a = (median(runs, key, x) for x in ("compute_ms", "reduce_ms", "apply_ms"))
        one = one_core[model]
        if None in (f, d, a) or not one:
            continue
        params = next(int(v[0]["params"]) for k, v in runs.items() if k[0] == model)
        step = median(runs, key, "step_ms")
        o = max(step - (f + d + a), 0.0) if step else 0.0
        parts[model] = (params, f * 1e-3, d * 1e-3, a * 1e-3, o * 1e-3, 128 / one)

    print("\n## One core's step, and the model's K-worker step (shm) against the measured one\n")
    print("| model | one core (OneDevice) | F compute | D link | A apply | O rest | K | chained: model / measured | allreduce: model / measured |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    shm = pingpong.get("shm", {})
    for model, (n, f, d, a, o, t1) in parts.items():
        for k in measured_workers:
            cells = []
            for kind, strat in (("chained", "MultiWorker<1>"), ("allreduce", "MultiWorker<1>,allreduce")):
                if "alpha" not in shm:
                    cells.append("-")
                    continue
                predicted = step_time(kind, k, n, args.chunk, f, d, a, shm["alpha"], shm["beta"], o)
                measured = [median(runs, (model, strat, k, b), "step_ms") for b in binds]
                measured = [x for x in measured if x is not None]
                cells.append(f"{predicted * 1e3:.2f} ms / " + ", ".join(f"{x:.2f}" for x in measured) + " ms")
            print(f"| {model} | {t1 * 1e3:.2f} ms | {f * 1e3:.2f} ms | {d * 1e3:.2f} ms | {a * 1e3:.2f} ms | {o * 1e3:.2f} ms | {k} | {cells[0]} | {cells[1]} |")

    print("\n## Projection: samples/s (efficiency against one core), global batch 128\n")
    for net, alpha, beta, what in networks:
        print(f"\n### {what}: alpha {alpha * 1e6:.2f} us, beta {beta * 1e9:.3f} ns/B\n")
        print("| model | reduction | " + " | ".join(f"K={k}" for k in workers) + " | best K (samples/s) | efficiency < 50% from |")
        print("|---|---|" + "---:|" * len(workers) + "---:|---:|")
        for model, (n, f, d, a, o, t1) in parts.items():
            for kind, label in KINDS:
                cells = []
                for k in workers:
                    t = step_time(kind, k, n, args.chunk, f, d, a, alpha, beta, o)
                    cells.append(f"{128 / t:,.0f} ({100 * t1 / (k * t):.0f}%)")
                times = {k: step_time(kind, k, n, args.chunk, f, d, a, alpha, beta, o) for k in range(1, 129)}
                best = min(times, key=times.get)
                half = next((k for k in range(2, 129) if t1 / (k * times[k]) < 0.5), None)
                print(f"| {model} | {label} | " + " | ".join(cells) + f" | {best} ({128 / times[best]:,.0f}) | {half or '> 128'} |")

    print("\n## Summary: efficiency at K workers, per network; where it falls under 50%\n")
    nets = [n[0] for n in networks]
    big = [k for k in workers if k > 2]
    print("| model | reduction | " + " | ".join(f"{net} K={k}" for net in nets for k in big) + " | "
          + " | ".join(f"{net} < 50% from" for net in nets) + " |")
    print("|---|---|" + "---:|" * (len(nets) * len(big) + len(nets)))
    for model, (n, f, d, a, o, t1) in parts.items():
        for kind, label in KINDS:
            cells, stops = [], []
            for net, alpha, beta, _ in networks:
                eff = lambda k: t1 / (k * step_time(kind, k, n, args.chunk, f, d, a, alpha, beta, o))
                cells += [f"{100 * eff(k):.0f}%" for k in big]
                stops.append(str(next((k for k in range(2, 129) if eff(k) < 0.5), "> 128")))
            print(f"| {model} | {label} | " + " | ".join(cells) + " | " + " | ".join(stops) + " |")

    print("\n## Bytes sent per step by the busiest worker (model)\n")
    print("| model | buffer | " + " | ".join(f"chained K={k}" for k in workers) + " | " + " | ".join(f"ring K={k}" for k in workers) + " |")
    print("|---|---:|" + "---:|" * (2 * len(workers)))
    for model, (n, *_rest) in parts.items():
        mb = lambda b: f"{b / 1e6:.2f} MB"
        print(f"| {model} | {mb(4 * n)} | " + " | ".join(mb(bytes_per_worker("chained", k, n)) for k in workers) + " | "
              + " | ".join(mb(bytes_per_worker("allreduce", k, n)) for k in workers) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
