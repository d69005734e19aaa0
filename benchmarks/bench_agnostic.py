"""Benchmark: the exhaustive C3 audit of A_Agnostic (Li–Wang–Ye 2025, Lemma 15).

Three parts (thresholds, exponential inner learner, replace-one neighbours, eps = 0.2):

(a) ``measure_agnostic(domain_size=4, n=10, epsilon=0.2)`` without and with the proof steps
    C3a/C3b: the first run in a fresh process ("cold": the count-vector tables are cached per
    process) and the best of 3 in this process (warm).
(b) Fast path vs naive at |X| = 3, n = 6: the naive path runs the literal A_Agnostic
    (``agnostic_reference``: every one of the C(6, k) index sets of an ORDERED dataset) on each of
    the 6^6 = 46,656 ordered datasets through ``dpverify.analyze(..., exchangeable=False)`` and
    takes eps* over all 699,840 substitute pairs; the fast path is ``relabel_tables`` +
    ``agnostic_table`` + ``pairwise_worst`` over ``table.substitute_pairs()``. Asserted: identical
    eps* (to 1e-12) and, for every ordered dataset, the naive distribution equals the fast row of
    its multiset (to 1e-12). If the naive path is estimated (from a 200-dataset sample) to take
    more than NAIVE_BUDGET seconds, only a fixed random sample is run and its time EXTRAPOLATED
    (printed as such).
(c) The largest n whose exhaustive C3 audit (|X| = 4, with proof steps) finishes within 60 s:
    n = 10, 12, 14, ..., each in a fresh process (cold), stopping after the first n over 60 s.

Run: ``.venv/bin/python benchmarks/bench_agnostic.py``. Times are
printed as wall and process CPU time; nothing is asserted about time.
"""

from __future__ import annotations

import gc
import json
import math
import os
import platform
import random
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
try:
    import dpverify  # noqa: F401
except ImportError:  # run from a checkout without PYTHONPATH / install
    sys.path.insert(0, ROOT)

import numpy as np

from dpverify import analyze
from dpverify.finite.records import concept_class, labeled_records
from dpverify.mechanisms.audits.realizable_to_agnostic import lemma15_constants, measure_agnostic
from dpverify.mechanisms.learners import learner as make_learner
from dpverify.mechanisms.relabeling import agnostic_reference, agnostic_table, relabel_tables, subsample_size
from dpverify.verdict.rows import pairwise_worst

EPSILON = 0.2
NAIVE_BUDGET = 300.0  # seconds: above this the naive path is sampled and extrapolated
NAIVE_SAMPLE = 2_000  # datasets in the sampled fallback
AUDIT_LIMIT = 60.0  # (c): seconds
AUDIT_HARD_TIMEOUT = 900.0  # (c): a run past this is killed and reported as "> timeout"
MEMORY_CAP = 16 * 2**30  # address-space cap of each fresh-process audit (bytes)
TOLERANCE = 1e-12

# Runs one exhaustive C3 audit in a fresh interpreter and prints its timings as JSON.
_CHILD = r"""
import json, resource, sys, time
limit = int(sys.argv[5])  # address-space cap (bytes): fail with MemoryError rather than exhaust a shared machine
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
t0, c0 = time.perf_counter(), time.process_time()
from dpverify.mechanisms.audits.realizable_to_agnostic import measure_agnostic
t1, c1 = time.perf_counter(), time.process_time()
m = measure_agnostic(domain_size=int(sys.argv[1]), n=int(sys.argv[2]), epsilon=float(sys.argv[3]),
                     proof_steps=sys.argv[4] == "1")
t2, c2 = time.perf_counter(), time.process_time()
print(json.dumps({"wall": t2 - t1, "cpu": c2 - c1, "import_wall": t1 - t0,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "epsilon_star": m.epsilon_star,
                  "claimed_epsilon": m.claimed_epsilon, "holds": m.holds, "k": m.details["k"],
                  "details": m.details}))
"""


class Timing:
    def __init__(self, wall: float, cpu: float) -> None:
        self.wall, self.cpu = wall, cpu

    def __str__(self) -> str:
        return f"{self.wall:8.3f} s wall / {self.cpu:8.3f} s cpu"


def best_of(repeats: int, function):
    """(best Timing, first Timing, last result) over ``repeats`` calls."""
    wall, cpu, first, result = math.inf, math.inf, None, None
    for _ in range(repeats):
        result = None
        gc.collect()
        w0, c0 = time.perf_counter(), time.process_time()
        result = function()
        t = Timing(time.perf_counter() - w0, time.process_time() - c0)
        first = first or t
        wall, cpu = min(wall, t.wall), min(cpu, t.cpu)
    return Timing(wall, cpu), first, result


def fresh_process_audit(domain_size: int, n: int, epsilon: float, proof_steps: bool, timeout: float | None = None):
    """Run one audit in a fresh interpreter (cold caches); None on timeout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(domain_size), str(n), repr(epsilon), "1" if proof_steps else "0",
             str(MEMORY_CAP)],
            capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout, check=False,
        )
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        if "MemoryError" in done.stderr:
            return {"memory_error": True}
        raise RuntimeError(f"audit n={n} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def header() -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT, check=False).stdout.strip()
    print("bench_agnostic: exhaustive C3 audit of A_Agnostic (thresholds, exponential learner, eps=0.2)")
    print(f"  machine: {platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start, commit {commit or '?'}")
    print()


def part_a() -> None:
    print("[a] measure_agnostic(domain_size=4, n=10, epsilon=0.2) (MEASURED)")
    results = {}
    for proof_steps in (False, True):
        cold = fresh_process_audit(4, 10, EPSILON, proof_steps)
        best, first, m = best_of(3, lambda: measure_agnostic(domain_size=4, n=10, epsilon=EPSILON, proof_steps=proof_steps))
        results[proof_steps] = m
        label = "with proof steps   " if proof_steps else "without proof steps"
        print(f"  {label}: cold (fresh process) {cold['wall']:.3f} s wall / {cold['cpu']:.3f} s cpu; "
              f"best of 3 (this process) {best.wall:.3f} s wall / {best.cpu:.3f} s cpu")
    plain, full = results[False], results[True]
    assert (plain.epsilon_star, plain.delta_star, plain.holds) == (full.epsilon_star, full.delta_star, full.holds)
    d = full.details
    print(f"  result: k={d['k']}, eps*={full.epsilon_star!r} (eps*/eps={d['epsilon_star_over_epsilon']:.4f}), "
          f"claimed eps'={full.claimed_epsilon!r}, holds={full.holds}")
    print(f"  proof steps: C3a worst eps={d['C3a_worst_epsilon']!r} (slack {d['C3a_slack']:.4g}), "
          f"C3b worst eps={d['C3b_worst_epsilon']!r} (slack to ln(4e^2) {d['C3b_epsilon_slack']:.4g}), "
          f"C3b worst delta at ln(4e^2)={d['C3b_worst_delta_at_ln4e2']!r}")
    print()


def part_b() -> None:
    domain_size, n = 3, 6
    cc = concept_class("thresholds", domain_size)
    inner = make_learner("exponential", cc)
    records = labeled_records(domain_size)
    z = len(records)
    k = subsample_size(EPSILON, n)
    claimed_epsilon, _ = lemma15_constants(EPSILON, n, inner.delta, k)
    print(f"[b] fast vs naive A_Agnostic, |X|={domain_size}, n={n}, eps={EPSILON}, k={k} (C({n},{k}) = "
          f"{math.comb(n, k)} index sets), {z} records")

    def fast():
        tables = relabel_tables(cc, EPSILON, n, k, inner)
        table, probs = agnostic_table(tables, n)
        left, right = table.substitute_pairs()
        worst = pairwise_worst(probs[left], probs[right], epsilon=claimed_epsilon)
        return table, probs, worst, len(left)

    fast_best, fast_cold, (table, probs, worst, fast_pairs) = best_of(5, fast)
    print(f"  fast  MEASURED: first call {fast_cold.wall:.4f} s wall / {fast_cold.cpu:.4f} s cpu; best of 5 "
          f"{fast_best.wall:.4f} s wall / {fast_best.cpu:.4f} s cpu; {len(table):,} multisets, {fast_pairs:,} pairs, "
          f"eps*={worst.epsilon_star!r}")

    def naive_mechanism(S):
        return agnostic_reference(cc, EPSILON, S, inner)

    naive_mechanism.__name__ = "agnostic_reference"
    datasets_total = z**n
    rng = random.Random(0)
    probe = [tuple(rng.choice(records) for _ in range(n)) for _ in range(200)]
    probe_time, _, _ = best_of(1, lambda: [naive_mechanism(S) for S in probe])
    estimate = probe_time.wall / len(probe) * datasets_total
    print(f"  naive estimate from 200 random datasets: {probe_time.wall / len(probe) * 1e3:.2f} ms/dataset -> "
          f"~{estimate:.0f} s for all {datasets_total:,} (budget {NAIVE_BUDGET:.0f} s)")
    position = {r: i for i, r in enumerate(records)}

    def fast_rows(datasets):
        idx = np.array([[position[r] for r in S] for S in datasets], dtype=np.int64)
        counts = np.zeros((len(datasets), z), dtype=np.int64)
        np.add.at(counts, (np.repeat(np.arange(len(datasets)), n), idx.ravel()), 1)
        return probs[table.index(counts)]

    if estimate <= NAIVE_BUDGET:
        naive_time, _, analysis = best_of(1, lambda: _naive_full(naive_mechanism, records, n))
        naive_eps = analysis.epsilon_star()
        naive = np.zeros((len(analysis.distributions), probs.shape[1]))
        assert all(isinstance(o, (int, np.integer)) and 0 <= o < probs.shape[1] for o in analysis.outcomes)
        naive[:, np.array(analysis.outcomes)] = analysis.matrix
        fast_view = fast_rows(analysis.pairs.datasets)
        row_error = float(np.abs(naive - fast_view).max())
        assert row_error <= TOLERANCE, f"per-dataset distributions differ by {row_error}"
        assert abs(naive_eps - worst.epsilon_star) <= TOLERANCE, f"eps* naive {naive_eps!r} vs fast {worst.epsilon_star!r}"
        print(f"  naive MEASURED (all {len(analysis.distributions):,} ordered datasets, {len(analysis.pairs):,} pairs, "
              f"one run): {naive_time.wall:.1f} s wall / {naive_time.cpu:.1f} s cpu; eps*={naive_eps!r}")
        print(f"  equal: eps* |naive - fast| = {abs(naive_eps - worst.epsilon_star):.3g}; every ordered dataset's "
              f"distribution vs its multiset's fast row: max |diff| = {row_error:.3g} (tolerance {TOLERANCE:g})")
        kind = "MEASURED"
        naive_wall, naive_cpu = naive_time.wall, naive_time.cpu
    else:
        sample = [tuple(rng.choice(records) for _ in range(n)) for _ in range(NAIVE_SAMPLE)]
        sample_time, _, dists = best_of(1, lambda: [naive_mechanism(S) for S in sample])
        naive = np.zeros((len(sample), probs.shape[1]))
        for i, dist in enumerate(dists):
            for o, p in dist.items():
                naive[i, o] = float(p)
        row_error = float(np.abs(naive - fast_rows(sample)).max())
        assert row_error <= TOLERANCE, f"per-dataset distributions differ by {row_error}"
        naive_wall = sample_time.wall / len(sample) * datasets_total
        naive_cpu = sample_time.cpu / len(sample) * datasets_total
        kind = "EXTRAPOLATED"
        print(f"  naive EXTRAPOLATED from a fixed random sample of {len(sample):,} datasets (pair sweep not "
              f"included): {naive_wall:.0f} s wall / {naive_cpu:.0f} s cpu; sample rows equal the fast rows "
              f"(max |diff| {row_error:.3g}); eps* not compared (needs every dataset)")
    print(f"  speed ratio naive ({kind}) / fast (best of 5): {naive_wall / fast_best.wall:,.0f}x wall, "
          f"{naive_cpu / fast_best.cpu:,.0f}x cpu; vs the fast path's first call: "
          f"{naive_wall / fast_cold.wall:,.0f}x wall (target >= 100x)")
    print()


def _naive_full(mechanism, records, n):
    analysis = analyze(mechanism, records=records, n=n, exchangeable=False)
    analysis.epsilon_star()  # the pair sweep is part of the naive time
    return analysis


def part_c() -> None:
    print(f"[c] largest n whose exhaustive C3 audit (|X|=4, eps={EPSILON}, with proof steps) finishes in "
          f"{AUDIT_LIMIT:.0f} s; each n in a fresh process (MEASURED)")
    print(f"  {'n':>3} {'k':>3} {'with proof steps':>29} {'peak RSS':>9} {'without proof steps':>29} "
          f"{'peak RSS':>9}  eps*            holds")
    best_n = None
    n = 10

    def show(result):
        if result is None:
            return f"{'> %.0f s (killed)' % AUDIT_HARD_TIMEOUT:>29} {'':>9}"
        if result.get("memory_error"):
            return f"{'MemoryError (cap %d GiB)' % (MEMORY_CAP // 2**30):>29} {'':>9}"
        return f"{result['wall']:8.2f} s wall / {result['cpu']:7.2f} s cpu {result['peak_rss_mb']:>6,.0f} MB"

    while True:
        full = fresh_process_audit(4, n, EPSILON, True, timeout=AUDIT_HARD_TIMEOUT)
        plain = fresh_process_audit(4, n, EPSILON, False, timeout=AUDIT_HARD_TIMEOUT)
        ok = full is not None and not full.get("memory_error")
        k = full["k"] if ok else subsample_size(EPSILON, n)
        tail = f"  {full['epsilon_star']:<15.10g} {full['holds']}" if ok else ""
        print(f"  {n:>3} {k:>3} {show(full)} {show(plain)}{tail}")
        if not ok or full["wall"] > AUDIT_LIMIT:
            break
        best_n = n
        n += 2
    print(f"  largest n within {AUDIT_LIMIT:.0f} s (wall, with proof steps): {best_n}")


def main() -> None:
    header()
    part_a()
    part_b()
    part_c()


if __name__ == "__main__":
    main()
