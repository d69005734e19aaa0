"""Benchmark: an exactly tight claim against a claim 0.01 above it (issue 16).

At a claim equal to the mechanism's exact eps*, every pair whose float hockey-stick value lies within
the sweep's rounding margin of the claim is a certification candidate: about a million directed
pairs here, though only a handful of distinct (P, Q) row pairs. The claim 0.01 above has no
candidate at all. Instances (substitute neighbours, 30 records, n = 3):

* ``rr_count_exact`` — randomized response (p = 3/4) on each record's bit (record >= 15), the count
  of ones released, exact ``Fraction`` probabilities; black box: 30^3 = 27,000 ordered datasets,
  1,174,500 pairs. Tight claim ``sympy.log(3)`` (every ratio is 1/3, 1 or 3 at worst).
* ``rr_count_float`` — the same mechanism in float64 (the tight claim is then within rounding).
* ``em_count_exact`` — an exponential-mechanism-like selection over h = 0..3 with exact weights
  ``3^-|c - h|`` (c the count), declared exchangeable: 4,960 multisets, 202,275 pairs. Tight claim
  ``sympy.log(r)`` with r its exact worst ratio (computed here by brute force over the counts).

Every time is the best of ``--repeats`` runs (wall and process CPU), the time spent checking an
exchangeability declaration subtracted. "row fetches" is the wall time of the best run spent in
``RowPairs.exact``: the exact rows certification asks for, which a checker run gets by evaluating
the mechanism again on those datasets. A sound verdict on an exact tie needs every such row (rows
whose floats agree may differ exactly), so the last ratio printed leaves them out. The figures of
the tight and the non-tight runs are printed side by side. ``--baseline DIR`` runs the same cases,
in the same run, on the dpverify package in DIR (say the commit before a change:
``git archive <commit> dpverify | tar -x -C DIR``). Nothing is asserted about time.

Run: ``.venv/bin/python benchmarks/bench_tight_claim.py [--baseline DIR]`` (or ``PYTHONPATH=. python3 ...``).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import math
import os
import platform
import subprocess
import sys
import time
from fractions import Fraction

try:
    import dpverify  # noqa: F401
except ImportError:  # run from a checkout without PYTHONPATH / install
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np
import sympy

from dpverify import verify

RECORDS = tuple(range(30))
N = 3
REPEATS = 2
ABOVE = sympy.Rational(1, 100)


def _rr_table(p: Fraction) -> list[dict[int, Fraction]]:
    """Distribution of the count of ones after flipping each of N bits (c of them ones) w.p. 1 - p."""
    table = []
    for c in range(N + 1):
        dist: dict[int, Fraction] = {}
        for bits in itertools.product((0, 1), repeat=N):
            weight = Fraction(1)
            for b, x in zip(bits, [1] * c + [0] * (N - c)):
                weight *= p if b == x else 1 - p
            dist[sum(bits)] = dist.get(sum(bits), Fraction(0)) + weight
        table.append(dist)
    return table


_RR = _rr_table(Fraction(3, 4))
_RR_FLOAT = [{k: float(v) for k, v in row.items()} for row in _RR]


def _count(dataset: tuple) -> int:
    return sum(1 for x in dataset if x >= 15)


def rr_count_exact(dataset: tuple) -> dict:
    return dict(_RR[_count(dataset)])


def rr_count_float(dataset: tuple) -> dict:
    return dict(_RR_FLOAT[_count(dataset)])


def _em_row(c: int) -> dict[int, Fraction]:
    weights = {h: Fraction(1, 3 ** abs(c - h)) for h in range(N + 1)}
    total = sum(weights.values())
    return {h: w / total for h, w in weights.items()}


_EM = [_em_row(c) for c in range(N + 1)]


def em_count_exact(dataset: tuple) -> dict:
    return dict(_EM[_count(dataset)])


def _worst_ratio(table: list[dict]) -> Fraction:
    """max P_c(o) / P_c'(o) over neighbouring counts |c - c'| = 1 (exact)."""
    return max(Fraction(a[o]) / Fraction(b[o]) for c in range(N) for a, b in ((table[c], table[c + 1]), (table[c + 1], table[c]))
               for o in a)


def _symmetry_timer() -> list[float]:
    """Time spent checking exchangeability declarations (``[wall, cpu]``, accumulated): the check
    is someone else's code path and is subtracted from the verify times."""
    import dpverify.checking._analysis as stage

    spent = [0.0, 0.0]
    original = getattr(stage, "check_declaration", None)
    if original is not None and not getattr(original, "_timed", False):
        def timed(*args, **kwargs):
            w0, c0 = time.perf_counter(), time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - w0
                spent[1] += time.process_time() - c0

        timed._timed = True  # type: ignore[attr-defined]
        stage.check_declaration = timed
    return spent


SYMMETRY = _symmetry_timer()


def _fetch_timer() -> list[float]:
    """Wall time spent fetching exact rows for certification (``RowPairs.exact``: for a checker run
    the mechanism evaluated again on that dataset), accumulated."""
    from dpverify.verdict.engine import RowPairs

    spent = [0.0]
    original = RowPairs.exact

    def timed(self, row):
        w0 = time.perf_counter()
        try:
            return original(self, row)
        finally:
            spent[0] += time.perf_counter() - w0

    RowPairs.exact = timed  # type: ignore[method-assign]
    return spent


FETCH = _fetch_timer()


def best_of(repeats: int, function):
    """(best wall, best cpu, last result, row fetches of the best run) over ``repeats`` calls, the
    exchangeability check excluded."""
    wall, cpu, result, fetch = math.inf, math.inf, None, 0.0
    for _ in range(repeats):
        result = None
        gc.collect()
        before, fetched = list(SYMMETRY), FETCH[0]
        w0, c0 = time.perf_counter(), time.process_time()
        result = function()
        cpu = min(cpu, time.process_time() - c0 - (SYMMETRY[1] - before[1]))
        run = time.perf_counter() - w0 - (SYMMETRY[0] - before[0])
        if run < wall:
            wall, fetch = run, FETCH[0] - fetched
    return wall, cpu, result, fetch


def header() -> None:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=os.path.dirname(os.path.abspath(__file__)), check=False).stdout.strip()
    except OSError:
        commit = "?"
    print("bench_tight_claim: an exactly tight claim vs a claim 0.01 above it")
    print(f"  machine: {platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start, commit {commit or '?'} "
          f"(plus uncommitted changes, if any)")


def figures(result) -> str:
    witness = "-" if result.witness is None else f"{result.witness.dataset}~{result.witness.neighbor}"
    return (f"{result.verdict!s:<21} eps*={result.epsilon!r:<20} delta={result.delta!r:<22} "
            f"certified={result.certified_pairs:<3} within={result.within_rounding:<8} witness={witness}")


CASES = {
    "rr_count_exact": (rr_count_exact, sympy.log(3), False),
    "rr_count_float": (rr_count_float, sympy.log(3), False),
    "em_count_exact": (em_count_exact, sympy.log(sympy.Rational(*_worst_ratio(_EM).as_integer_ratio())), True),
}


def run_cases(repeats: int) -> dict:
    """Every case, tight and +0.01: ``{(case, label): (wall, cpu, pairs, figures)}``."""
    out = {}
    for name, (mechanism, claim, exchangeable) in CASES.items():
        for label, epsilon in (("tight", claim), ("+0.01", claim + ABOVE)):
            wall, cpu, result, fetch = best_of(repeats, lambda epsilon=epsilon: verify(
                mechanism, records=RECORDS, n=N, epsilon=epsilon, exchangeable=exchangeable, max_pairs=10**9))
            out[(name, label)] = (wall, cpu, fetch, result.pairs, figures(result))
    return out


def show(title: str, timings: dict) -> None:
    print(title)
    for name, (_, claim, exchangeable) in CASES.items():
        for label, epsilon in (("tight", claim), ("+0.01", claim + ABOVE)):
            wall, cpu, fetch, pairs, shown = timings[(name, label)]
            print(f"  {name:<15} {label:<6} eps={str(epsilon):<20} {wall:7.2f} s wall {cpu:7.2f} s cpu "
                  f"(row fetches {fetch:5.2f} s)  {pairs:>9,} pairs  {shown}")
        tight, above = timings[(name, "tight")], timings[(name, "+0.01")]
        note = " (exchangeability check subtracted)" if exchangeable else ""
        print(f"  {name:<15} ratio tight / +0.01: {tight[0] / above[0]:.2f}x wall, {tight[1] / above[1]:.2f}x cpu{note}; "
              f"without the row fetches {(tight[0] - tight[2]) / (above[0] - above[2]):.2f}x wall")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=REPEATS, help="best of this many runs (default 2)")
    parser.add_argument("--baseline", metavar="DIR",
                        help="also run the cases on the dpverify package in DIR (e.g. made by "
                             "`git archive <commit> dpverify | tar -x -C DIR`), in a subprocess, in this one run")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # the baseline subprocess
    arguments = parser.parse_args()
    if arguments.json:
        timings = run_cases(arguments.repeats)
        print(json.dumps([[name, label, *value] for (name, label), value in timings.items()]))
        return
    header()
    print(f"  {len(RECORDS)} records, n = {N}, substitute neighbours; best of {arguments.repeats}")
    print()
    rounds = [("this tree", None)] + ([("baseline " + arguments.baseline, arguments.baseline)] if arguments.baseline else [])
    for title, path in rounds:
        if path is None:
            timings = run_cases(arguments.repeats)
        else:
            env = dict(os.environ, PYTHONPATH=os.path.abspath(path))
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "--json", "--repeats", str(arguments.repeats)],
                                  capture_output=True, text=True, env=env, check=True)
            timings = {(name, label): tuple(value) for name, label, *value in json.loads(done.stdout.splitlines()[-1])}
        show(f"[{title}]", timings)


if __name__ == "__main__":
    main()
