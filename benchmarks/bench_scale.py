"""Benchmark: the same verification serially, on a process pool and on a Dask LocalCluster.

Instances (issue 10):

(a) black-box exponential mechanism over thresholds, |X| = 4 (8 labeled records), n = 6:
    262,144 ordered datasets, 5,505,024 replace-one pairs, ``verify(..., exchangeable=False)``.
(b) exhaustive C3 (A_Agnostic, Lemma 15) with proof steps, |X| = 4, n = 14, eps = 0.2:
    ``measure_agnostic(domain_size=4, n=14, epsilon=0.2)``.
(c) with ``--largest``: the largest n whose C3 audit (|X| = 4, eps = 0.2, proof steps) finishes in
    60 s, per executor, n = 16, 17, ... each in a fresh process, stopping after the first n over 60 s.
(d) with ``--n8``: instance (a) at n = 8 (16,777,216 datasets, 469,762,048 pairs), swept in row
    blocks (:mod:`dpverify.checking._blocks`), on the pool and the Dask LocalCluster only (serially it
    is the pool's CPU time, printed).

Executors: ``None`` (serial), ``"processes"`` (a pool of 2 processes on this 2-core machine) and a
Dask ``LocalCluster`` of 2 single-threaded worker processes, started (and its workers' imports
done) before the timed run: its start is printed apart, a user with a cluster pays it once. Every run is a fresh interpreter; its wall
time, the driver's peak RSS and the largest worker's peak RSS are printed, with the load average
before the runs (ratios only mean something on a quiet machine). The results (eps*, verdict) of all
executors are asserted equal.

Every run also prints its CPU seconds: the driver's and its workers' (a pool's reaped children, a
Dask cluster's worker processes).

Run: ``.venv/bin/python benchmarks/bench_scale.py [--largest] [--n7] [--n8] [--repeat 1] [--only a|b]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT = 60.0

_CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, {root!r})
kind, instance, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
executor, start_seconds, cluster = None, 0.0, None
if kind == "processes":
    executor = "processes"
elif kind == "dask":
    from distributed import Client
    from dpverify.parallel.executors import local_cluster
    started = time.perf_counter()
    cluster = local_cluster(2)
    executor = Client(cluster)
    executor.run(lambda: [__import__(m) for m in ("dpverify.checking.checker", "dpverify.mechanisms.exponential",
                                                  "dpverify.mechanisms.audits.realizable_to_agnostic")])
    start_seconds = time.perf_counter() - started
from dpverify import verify
from dpverify.mechanisms.audits.realizable_to_agnostic import measure_agnostic
from dpverify.mechanisms.exponential import threshold_learner
usage = lambda: (lambda u: (u.ru_maxrss, u.ru_utime + u.ru_stime))(__import__("resource").getrusage(0))
workers_before = executor.run(usage) if cluster is not None else {{}}  # their start and imports, not counted
started = time.perf_counter()
if instance == "em":
    records = [(x, y) for x in range(4) for y in (0, 1)]
    result = verify(threshold_learner(4, epsilon=1.0), records=records, n=n, epsilon=1.0, exchangeable=False,
                    max_pairs=10**9, executor=executor)
    answer = [result.epsilon, result.delta, str(result.verdict), result.pairs]
else:
    result = measure_agnostic(domain_size=4, n=n, epsilon=0.2, executor=executor)
    answer = [result.epsilon_star, result.delta_star, str(result.verdict), sorted(result.details.items())[:4]]
seconds = time.perf_counter() - started
workers_peak, workers_cpu = 0.0, 0.0
if cluster is not None:
    info = executor.run(usage)
    workers_peak = max(peak for peak, _ in info.values()) / 1024
    workers_cpu = sum(cpu - workers_before[address][1] for address, (_, cpu) in info.items())
    executor.close(); cluster.close()
import multiprocessing
while kind == "processes" and multiprocessing.active_children():  # a pool's workers end after the call
    time.sleep(0.01)                                               # returns: wait, so RUSAGE_CHILDREN has them
children = resource.getrusage(resource.RUSAGE_CHILDREN)
own = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({{"seconds": seconds, "start": start_seconds, "answer": answer,
                  "driver_mib": own.ru_maxrss / 1024, "worker_mib": max(workers_peak, children.ru_maxrss / 1024),
                  # a Dask cluster's workers counted from before the run (their start excluded): once
                  # closed they are also among this process's children, so those are left out
                  "cpu": own.ru_utime + own.ru_stime + (workers_cpu if cluster is not None
                                                        else children.ru_utime + children.ru_stime)}},
                 default=str))
"""


def run(kind: str, instance: str, n: int, timeout: float = 900.0) -> dict | None:
    code = _CHILD.format(root=ROOT)
    try:
        done = subprocess.run([sys.executable, "-c", code, kind, instance, str(n)], capture_output=True, text=True,
                              timeout=timeout, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    except subprocess.TimeoutExpired:
        return None
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} ({os.cpu_count()} cores)"


def table(title: str, instance: str, n: int, repeat: int, kinds: tuple[str, ...] = ("serial", "processes", "dask")) -> None:
    print(f"\n{title}  [{load()}]")
    print(f"  {'executor':<10} {'seconds':>8} {'CPU s':>7} {'vs serial':>10} {'vs processes':>13} {'driver MiB':>11} "
          f"{'worker MiB':>11}")
    best: dict[str, dict] = {}
    for _ in range(repeat):
        for kind in kinds:
            figures = run(kind, instance, n)
            assert figures is not None
            if kind not in best or figures["seconds"] < best[kind]["seconds"]:
                best[kind] = figures
    answers = {kind: json.dumps(f["answer"]) for kind, f in best.items()}
    assert len(set(answers.values())) == 1, answers  # the same result on every executor
    for kind, figures in best.items():
        serial = f"{best['serial']['seconds'] / figures['seconds']:>9.2f}x" if "serial" in best else f"{'-':>10}"
        print(f"  {kind:<10} {figures['seconds']:>8.2f} {figures['cpu']:>7.1f} {serial} "
              f"{figures['seconds'] / best['processes']['seconds']:>12.2f}x {figures['driver_mib']:>11.0f} "
              f"{figures['worker_mib']:>11.0f}")
    print(f"  (Dask LocalCluster start, not timed above: {best['dask']['start']:.2f} s; "
          f"answer: {best['processes']['answer'][:3]})")


def largest(kind: str, first: int = 16) -> None:
    reached, n = None, first
    while True:
        figures = run(kind, "c3", n, timeout=LIMIT * 3)
        seconds = None if figures is None else figures["seconds"]
        print(f"  {kind:<10} n={n}: " + (f"{seconds:.1f} s" if seconds is not None else f"> {LIMIT * 3:.0f} s (stopped)"))
        if seconds is None or seconds > LIMIT:
            break
        reached, n = n, n + 1
    print(f"  {kind:<10} largest n in {LIMIT:.0f} s: {reached}  [{load()}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--largest", action="store_true", help="also find the largest C3 n in 60 s per executor")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many runs per executor")
    parser.add_argument("--only", choices=("a", "b"), help="run only instance (a) or (b)")
    parser.add_argument("--n7", action="store_true", help="also run (a) at n = 7 (51 M pairs: ~3 s serially with the "
                                                          "compiled kernel, where n = 6 is too short to spread)")
    parser.add_argument("--n8", action="store_true", help="also run (a) at n = 8 in row blocks (pool and Dask)")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.only != "b":
        table("(a) black-box EM over thresholds, |X| = 4, n = 6 (5,505,024 pairs)", "em", 6, args.repeat)
    if args.only != "a":
        table("(b) C3 with proof steps, |X| = 4, n = 14, eps = 0.2", "c3", 14, args.repeat)
    if args.n7:
        table("(a7) black-box EM over thresholds, |X| = 4, n = 7 (51,380,224 pairs)", "em", 7, args.repeat)
    if args.n8:
        table("(d) black-box EM over thresholds, |X| = 4, n = 8 (469,762,048 pairs, row blocks)", "em", 8, args.repeat,
              ("processes", "dask"))
    if args.largest:
        print(f"\n(c) largest n for C3 with proof steps in {LIMIT:.0f} s (|X| = 4, eps = 0.2)")
        for kind in ("serial", "processes", "dask"):
            largest(kind)
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
