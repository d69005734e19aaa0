"""dpverify.estimate on the benchmark suite's mechanisms written as numpy samplers.

Report noisy max (Laplace; Ding et al. CCS 2018 Alg. 5), SVT Algorithm 1 (Lyu, Su, Li VLDB 2017;
c = 1, T = 0.5) and noisy max returning its value (Laplace; Alg. 7, the incorrect variant: exact
eps* = 1.75 at eps = 0.7), each claimed eps-DP at eps = 0.7 on StatDP's patterns (k = 5 for noisy
max, k = 10 for SVT), sampled ``SAMPLES`` times per dataset. Printed per mechanism: the seconds, the
lower bound on eps at confidence 0.95, the verdict, and the exact eps* of the exact engine on the
same pairs (:func:`dpverify.mechanisms.audits.benchmark_suite.measure`, from the exact mechanisms in
``mechanisms/``), with the targets: the broken one VIOLATED with a bound >= 1.67, the correct ones
not flagged with a bound >= 0.55, each in <= 30 s.

Usage: python benchmarks/bench_sampler.py [--serial] [--samples N] [--seeds S]
(``--seeds S`` repeats each run with random_state 0 .. S-1 and prints every bound; default 1.)

``--exact`` instead times the exact mode, ``from_sampler``'s path enumeration, on the cases of
``benchmarks/_exact_paths.py`` (paths per CPU-second, best of 3); ``--exact --against REF`` runs
them on this checkout and on the commit ``REF`` interleaved and prints the ratios (``_against.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from dpverify import Verdict
from dpverify.checking.estimate import estimate_sampler
from dpverify.checking.input_pairs import statdp_patterns
from dpverify.mechanisms.audits.benchmark_suite import measure

EPSILON = 0.7
SAMPLES = 4_000_000
CONFIDENCE = 0.95


def report_noisy_max(dataset, rng, size):
    """argmax_i (q_i + Lap(2/eps))."""
    q = np.asarray(dataset, dtype=float)
    return np.argmax(q + rng.laplace(0.0, 2 / EPSILON, (size, q.size)), axis=1)


def svt1(dataset, rng, size):
    """Lyu et al. Alg. 1, c = 1, T = 0.5: the index of the first q_i + Lap(4/eps) >= T + Lap(2/eps),
    k when there is none (the answer string ⊥^i ⊤, or ⊥^k)."""
    q = np.asarray(dataset, dtype=float)
    threshold = 0.5 + rng.laplace(0.0, 2 / EPSILON, size)
    above = q + rng.laplace(0.0, 4 / EPSILON, (size, q.size)) >= threshold[:, None]
    return np.where(above.any(axis=1), np.argmax(above, axis=1), q.size)


def noisy_max_value(dataset, rng, size):
    """max_i (q_i + Lap(2/eps)) (incorrect: the value leaks)."""
    q = np.asarray(dataset, dtype=float)
    return (q + rng.laplace(0.0, 2 / EPSILON, (size, q.size))).max(axis=1)


#: (suite name, sampler, k, correct)
ROWS = (
    ("report_noisy_max_laplace", report_noisy_max, 5, True),
    ("svt1", svt1, 10, True),
    ("noisy_max_value_laplace", noisy_max_value, 5, False),
)


def _target(correct: bool, verdict: Verdict, bound: float, seconds: float) -> str:
    if correct:
        met = verdict is not Verdict.VIOLATED and bound >= 0.55
    else:
        met = verdict is Verdict.VIOLATED and bound >= 1.67
    return ("met" if met and seconds <= 30 else "MISSED") + (" (>30 s)" if seconds > 30 else "")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serial", action="store_true", help="sample serially (default: a process pool)")
    parser.add_argument("--samples", type=int, default=SAMPLES)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--exact", action="store_true", help="time from_sampler's path enumeration instead")
    parser.add_argument("--against", metavar="REF", help="with --exact: compare with the commit REF")
    parser.add_argument("--rounds", type=int, default=3, help="with --against: interleaved rounds")
    args = parser.parse_args(argv)
    if args.exact:
        return _exact(args.against, args.rounds)
    executor = None if args.serial else "processes"
    print(f"estimate_sampler at eps = {EPSILON}, confidence {CONFIDENCE}, {args.samples:,} samples per dataset, "
          f"executor {executor or 'serial'} ({os.cpu_count()} cores), load {os.getloadavg()[0]:.2f}")
    header = (f"{'mechanism':26} {'k':>2} {'pairs':>5} {'seed':>4} {'seconds':>8} {'eps lower bd':>12} "
              f"{'verdict':10} {'exact eps*':>10} {'exact s':>7}  target")
    print(header)
    print("-" * len(header))
    for name, sampler, k, correct in ROWS:
        started = time.perf_counter()
        exact = measure(name, Fraction(7, 10))
        exact_seconds = time.perf_counter() - started
        for seed in range(args.seeds):
            result = estimate_sampler(sampler, pairs=statdp_patterns(k), epsilon=EPSILON, samples=args.samples,
                                      confidence=CONFIDENCE, random_state=seed, executor=executor)
            assert result.epsilon_lower_bound <= exact.epsilon_star, "a lower bound above the exact eps*"
            print(f"{name:26} {k:>2} {result.pairs:>5} {seed:>4} {result.seconds:>8.2f} "
                  f"{result.epsilon_lower_bound:>12.4f} {str(result.verdict):10} {exact.epsilon_star:>10.4f} "
                  f"{exact_seconds:>7.2f}  {_target(correct, result.verdict, result.epsilon_lower_bound, result.seconds)}",
                  flush=True)
            if seed == args.seeds - 1 and result.witness is not None:
                print("    " + str(result.witness).replace("\n", "\n    "))
    return 0


def _exact(against: str | None, rounds: int) -> int:
    """Paths per CPU-second of every exact case, here (and on ``against``, with the ratio)."""

    from _against import ROOT, _run, checkout, commit_of
    from _exact_paths import CASES

    def run(tree: str, snippet: str) -> dict:
        return _run(tree, snippet)["check"]

    print(f"from_sampler path enumeration, paths per CPU-second (best of 3 per run); load {os.getloadavg()[0]:.2f}")
    if against is None:
        print(f"{'case':38} {'paths':>7} {'paths/s':>9}")
        for name, snippet in CASES.items():
            found = run(ROOT, snippet)
            print(f"{name:38} {found['paths']:>7} {found['paths_per_s']:>9,}", flush=True)
        return 0
    with checkout(against) as baseline:
        print(f"baseline {against} = {commit_of(baseline)}, current = {commit_of(ROOT)} (+ uncommitted changes); "
              f"best of {rounds} interleaved rounds")
        print(f"{'case':38} {'paths':>7} {'before':>9} {'after':>9} {'ratio':>6}")
        for name, snippet in CASES.items():
            best = {"before": 0, "after": 0}
            digests = set()
            for _ in range(rounds):
                for label, tree in (("before", baseline), ("after", ROOT)):
                    found = run(tree, snippet)
                    best[label] = max(best[label], found["paths_per_s"])
                    digests.add((found["paths"], found["digest"]))
            same = "" if len(digests) == 1 else f"  RESULTS DIFFER: {sorted(digests)}"
            print(f"{name:38} {found['paths']:>7} {best['before']:>9,} {best['after']:>9,} "
                  f"{best['after'] / best['before']:>5.2f}x{same}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
