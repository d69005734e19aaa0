"""Passes by mass on unbounded samplers (issue 37): runs, mass left unexplored and seconds, and the
refusal of a tail out of reach.

Rows (this checkout): a coin loop (heads before the first tail, capped at 3); a uniform draw of 2,000
branches then a coin loop (set aside whole while its branches are light); a loop that branches 16
ways a round (0.9 of the mass kept per pass, 16x the runs), at a tail it reaches and at 1e-9 (refused
early); with diffprivlib installed, its GeometricFolded, Staircase and PermuteAndFlip on the datasets
of tests/interop (the runs summed over them), and GaussianDiscrete at tail 1e-10 (refused: the
seconds to the refusal and the tail it names). Each row: runs, the largest unexplored mass, seconds.

``--against REF`` runs the same enumerations on REF and on this checkout, interleaved, best of 3
(``_against.py``), and compares what must agree whatever the schedule: a refusal's class, or that
every dataset's unexplored mass is within the tail. The runs differ by design where the schedule does.

Usage: python benchmarks/bench_tail.py [--against REF]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: name -> (setup code defining ``sampler`` and ``datasets``, tail, max_paths); run by both sections.
_LOOPS = """
from fractions import Fraction
HALF = Fraction(1, 2)
def until_tails(dataset, rng):
    k = 0
    while rng.random() < HALF:
        k += 1
    return min(k, 3)
def fan_loop(dataset, rng):
    i = int(rng.integers(0, 2000))
    k = 0
    while rng.random() < HALF:
        k += 1
    return i % 2 + min(k, 2)
def branching(dataset, rng):
    k = 0
    while rng.random() < Fraction(9, 10):
        k += int(rng.integers(0, 16))
    return min(k, 3)
"""
_INTEROP = """
import itertools, sys
sys.path.append({root!r})
from tests.interop import _samplers as samplers
from tests.interop._cases import CASES
case = {{c.name: c for c in CASES}}[{name!r}]
sampler, datasets = case.sampler, list(itertools.product(case.records, repeat=case.n))
"""
_GAUSSIAN = """
import sys
sys.path.append({root!r})
from tests.interop import _samplers as samplers
sampler, datasets = samplers.gaussian_discrete, [(0,)]
"""

ROWS: dict[str, tuple[str, float, int]] = {
    "coin loop, tail 1e-12": (_LOOPS + "sampler, datasets = until_tails, [()]", 1e-12, 100_000),
    "2,000-way draw + coin loop, 1e-6": (_LOOPS + "sampler, datasets = fan_loop, [()]", 1e-6, 100_000),
    "16-way branching loop, 0.66": (_LOOPS + "sampler, datasets = branching, [()]", 0.66, 100_000),
    "16-way branching loop, 1e-9": (_LOOPS + "sampler, datasets = branching, [()]", 1e-9, 100_000),
    "GeometricFolded, 1e-12 (2 datasets)": (_INTEROP.format(root=str(ROOT), name="GeometricFolded"), 1e-12, 100_000),
    "Staircase, 1e-12 (2 datasets)": (_INTEROP.format(root=str(ROOT), name="Staircase"), 1e-12, 100_000),
    "PermuteAndFlip, 2^-32 (27 datasets)": (_INTEROP.format(root=str(ROOT), name="PermuteAndFlip"), 2.0**-32, 100_000),
    "PermuteAndFlip, 1e-12 (27 datasets)": (_INTEROP.format(root=str(ROOT), name="PermuteAndFlip"), 1e-12, 100_000),
    "GaussianDiscrete, 1e-10": (_GAUSSIAN.format(root=str(ROOT)), 1e-10, 100_000),
}

#: The enumeration of one row: (runs, largest unexplored, the refusal's class or None, its message).
_ENUMERATE = """
from dpverify import from_sampler
from dpverify.errors import EnumerationTooLarge
def enumerate_row(sampler, datasets, tail, max_paths):
    mechanism = from_sampler(sampler, tail=tail, max_paths=max_paths)
    runs, left = 0, 0.0
    try:
        for dataset in datasets:
            found = mechanism.enumerate(dataset)
            runs += found.paths
            left = max(left, float(found.distribution.unexplored))
    except EnumerationTooLarge as refusal:
        return runs, left, "refused", str(refusal)
    return runs, left, None, ""
"""


def _has_diffprivlib() -> bool:
    try:
        import diffprivlib  # noqa: F401
    except ImportError:
        return False
    return True


def this_checkout() -> None:
    print(f"passes by mass, this checkout (CPython {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f})")
    print(f"{'row':<38} {'runs':>9} {'unexplored':>11} {'seconds':>8}  refusal")
    skipped = []
    for name, (setup, tail, max_paths) in ROWS.items():
        if "tests.interop" in setup and not _has_diffprivlib():
            skipped.append(name)
            continue
        scope: dict = {}
        exec(setup + _ENUMERATE, scope)
        started = time.perf_counter()
        runs, left, refused, message = scope["enumerate_row"](scope["sampler"], scope["datasets"], tail, max_paths)
        seconds = time.perf_counter() - started
        named = ""
        if refused:
            head = message.split("; at this pace")[0].split(". Allow")[0]
            named = "tail named: " + head.rsplit("; ", 1)[-1] if "stops after" in head else message[:80]
        counts = f"{'-':>9} {'-':>11}" if refused else f"{runs:>9,} {left:>11.3g}"
        print(f"{name:<38} {counts} {seconds:>8.2f}  {named}", flush=True)
    if skipped:
        print(f"skipped (pip install diffprivlib): {', '.join(skipped)}")


def against(ref: str) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _against import compare

    workloads = {}
    for name, (setup, tail, max_paths) in ROWS.items():
        if "tests.interop" in setup and not _has_diffprivlib():
            continue
        workloads[name[:34]] = (
            setup + _ENUMERATE
            + f"def run():\n    runs, left, refused, _ = enumerate_row(sampler, datasets, {tail!r}, {max_paths})\n"
            + f"    return refused or (left <= {tail!r})\nreport(run)\n"
        )
    compare(workloads, ref)


if __name__ == "__main__":
    this_checkout()
    if len(sys.argv) > 2 and sys.argv[1] == "--against":
        against(sys.argv[2])
