"""dpverify.estimate on the sparse vector programs in the output shapes public testers return (issue 35).

The programs of :data:`dpverify.mechanisms.suite_shapes.SHAPED_PROGRAMS`: Lyu, Su, Li's Algorithms 1-6 at
c = 1 written as one-draw samplers ``sampler(dataset, rng)`` (a Python loop, one ``rng.laplace`` per
query), returning DP-Sniper's answer vectors with abort markers, StatDP's count of ``⊥`` answers, StatDP's
``(count, last answer)`` for Algorithm 3 (the last answer ``False`` or a noisy real) or DP-Sniper's float
vector with the released answer among markers. Each is claimed 0.7-DP on StatDP's patterns (k = 10,
``InputPairs.statdp(10)``) and run through ``estimate`` at its defaults (a 10 s budget; ``--serial`` for
no executor, else a process pool), seed 0 .. ``--seeds`` - 1. eps* is the suite's exact one on the same
pairs (every shape is a one-to-one encoding of the suite's output; the traced exact mode gives the same
figure from this code: tests/mechanisms/test_suite_shapes.py).

Targets (met / MISSED per row): <= 10 s; correct programs (Algorithms 1, 2): value bound >= 0.9 eps*;
broken ones (3-6): VIOLATED. A bound above eps* (at most a 1 - confidence event) is printed as "ABOVE eps*".

Usage: python benchmarks/bench_shapes.py [--serial] [--seeds S] [--only svt1_answers ...]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpverify import InputPairs, PureDp, Verdict, estimate
from dpverify.mechanisms.audits.benchmark_suite import measure
from dpverify.mechanisms.suite_shapes import SHAPED_PROGRAMS, ShapedSparseVector

EPSILON = Fraction(7, 10)
CORRECT = (1, 2)
SECONDS = 10.0
TIGHT = 0.9


def _targets(variant: int, result, exact: float) -> list[str]:
    found = [("time", result.seconds <= SECONDS, f"{result.seconds:.1f} s > {SECONDS:.0f} s")]
    if variant in CORRECT:
        ratio = result.value_epsilon_lower_bound / exact
        found.append(("tight", ratio >= TIGHT, f"{ratio:.3f} < {TIGHT}"))
    else:
        found.append(("flagged", result.verdict is Verdict.VIOLATED, str(result.verdict)))
    if result.value_epsilon_lower_bound > exact:
        found.append(("sound", False, "ABOVE eps*"))
    return [f"{what} met" if met else f"{what} MISSED ({why})" for what, met, why in found]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serial", action="store_true", help="no executor (default: a process pool)")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--only", nargs="*", default=None, help="program names, e.g. svt1_answers")
    args = parser.parse_args(argv)
    executor = None if args.serial else "processes"
    pairs = InputPairs.statdp(10)
    print(f"estimate(sampler, InputPairs.statdp(10), PureDp(0.7), executor={executor!r}, random_state=seed) at its "
          f"defaults ({os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}); value: the bound from value events "
          "(not float bits), compared with the exact eps*")
    header = (f"{'program':18} {'seed':>4} {'seconds':>7} {'bound':>8} {'by':5} {'value':>7} {'verdict':10} {'eps*':>7} "
              f"{'val/eps*':>8} {'draws':>10}  targets")
    print(header)
    print("-" * len(header))
    rows = met = 0
    for variant, shape in SHAPED_PROGRAMS:
        sampler = ShapedSparseVector(float(EPSILON), variant, shape)
        if args.only and sampler.__name__ not in args.only:
            continue
        exact = measure(f"svt{variant}", EPSILON).epsilon_star
        for seed in range(args.seeds):
            result = estimate(sampler, pairs, PureDp(EPSILON), random_state=seed, executor=executor)
            targets = _targets(variant, result, exact)
            rows, met = rows + 1, met + all(t.endswith(" met") for t in targets)
            leak = "bits" if result.witness is not None and result.witness.float_structure else "value"
            ratio = "-" if math.isinf(exact) else f"{result.value_epsilon_lower_bound / exact:.3f}"
            exact_text = "inf" if math.isinf(exact) else f"{exact:.4f}"
            print(f"{sampler.__name__:18} {seed:>4} {result.seconds:>7.2f} {result.epsilon_lower_bound:>8.4f} {leak:5} "
                  f"{result.value_epsilon_lower_bound:>7.4f} {str(result.verdict):10} {exact_text:>7} {ratio:>8} "
                  f"{result.samples:>10,}  {'met' if all(t.endswith(' met') for t in targets) else 'MISSED'}: "
                  f"{'; '.join(targets)}", flush=True)
    print(f"{met} of {rows} rows met every target")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
