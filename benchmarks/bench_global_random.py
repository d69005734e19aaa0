"""The cost of reading Python's and numpy's global generators around every evaluation of a mechanism.

dpverify refuses a mechanism that draws from ``random.*`` or ``np.random.*`` (an error, never a
verdict: :mod:`dpverify.finite._global_random`): the states are read before and after each call of
a plain mechanism outside the run's blocks (``call_mechanism``: rechecks, symmetry, input pairs),
once per block of the run's evaluation (``_evaluate_block``, 4,096 datasets) and once per call of
a vectorised ``distributions(datasets)`` (both full readings, numpy's cached Gaussian included), and
``estimate_sampler`` runs the sampler twice on 1,000 samples of its first dataset under one seed.

Printed: the readings themselves (this checkout), then with ``--against REF`` the same workloads
on ``REF`` and on this checkout, interleaved, best of 3 (``benchmarks/_against.py``), results
compared:

* ``call_mechanism`` on a mechanism returning one cached Distribution (the cheapest possible call:
  the whole difference is the check), 100,000 calls;
* ``_evaluate_block`` on a plain mechanism (a float dict per dataset) and on a vectorised one,
  blocks of 4,096 datasets;
* black-box ``verify`` of the exponential mechanism over thresholds (|X| = 4, n = 6, 5.5 M pairs);
* ``estimate_sampler`` on randomized response at 100,000 samples per dataset (2 datasets).

Usage: python benchmarks/bench_global_random.py [--against REF]
"""

from __future__ import annotations

import os
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

_CALLS = """
from fractions import Fraction
from dpverify.checking._evaluation import call_mechanism
from dpverify.finite.distribution import Distribution
CACHED = Distribution({0: Fraction(3, 4), 1: Fraction(1, 4)})
def cached(dataset):
    return CACHED
def run():
    for _ in range(100_000):
        found = call_mechanism(cached, (1, 0, 1))
    return repr(found)
report(run)
"""

_BLOCKS = """
import numpy as np
from dpverify.checking._evaluation import _evaluate_block
def plain(dataset):
    s = sum(dataset)
    return {0: 1 / (1 + s), 1: s / (1 + s)}
class Vectorised:
    __name__ = "vectorised"
    def __call__(self, dataset):
        return plain(dataset)
    def distributions(self, datasets):
        s = np.array([sum(d) for d in datasets], dtype=float)
        return [0, 1], np.stack([1 / (1 + s), s / (1 + s)], axis=1)
blocks = [[tuple((i >> k) & 1 for k in range(12)) for i in range(4096 * b, 4096 * (b + 1))] for b in range(%d)]
def run():
    total = 0.0
    for block in blocks:
        total += float(_evaluate_block(block, {"mechanism": %s})[1].sum())
    return repr(total)
report(run)
"""

_VERIFY = """
from dpverify import verify
from dpverify.finite.records import labeled_records
from dpverify.mechanisms.exponential import threshold_learner
m, r = threshold_learner(4, epsilon=1.0), labeled_records(4)
verify(m, records=r, n=3, epsilon=1.0)
def run():
    result = verify(m, records=r, n=6, epsilon=1.0, exchangeable=False, max_pairs=10**10)
    return [repr(result.epsilon), str(result.verdict), result.pairs]
report(run)
"""

_ESTIMATE = """
import numpy as np
from dpverify.checking.statistical.estimate import estimate_sampler
def rr(dataset, rng, size):
    keep = rng.random(size) < 0.75
    return np.where(keep, dataset[0], 1 - dataset[0])
def run():
    for seed in range(20):
        result = estimate_sampler(rr, records=(0, 1), n=1, epsilon=1, samples=100_000, random_state=seed)
    return repr(result.epsilon_lower_bound)
report(run)
"""

WORKLOADS = {
    "call_mechanism x 100,000 (cached)": _CALLS,
    "_evaluate_block plain x 16": _BLOCKS % (16, "plain"),
    "_evaluate_block vectorised x 16": _BLOCKS % (16, "Vectorised()"),
    "verify black-box EM n=6": _VERIFY,
    "estimate_sampler rr x 20 runs": _ESTIMATE,
}


def readings() -> None:
    from dpverify.finite import _global_random as g

    before = g.global_states()
    full = g.global_states(full=True)
    figures = {
        "Python's state (ctypes view)": g._python_state,
        "numpy's state (ctypes view)": g._numpy_state,
        "both, fast (global_states())": g.global_states,
        "both, full (numpy get_state)": lambda: g.global_states(full=True),
        "one check, fast (read + compare)": lambda: g.global_states() == before,
        "one check, full (read + compare)": lambda: g.global_states(full=True) == full,
        "run_unchanged(int) (2 readings)": lambda: g.run_unchanged(int, None),
    }
    print(f"readings (CPython {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}), best of 5:")
    for name, function in figures.items():
        seconds = min(timeit.repeat(function, number=20_000, repeat=5)) / 20_000
        print(f"  {name:<34} {seconds * 1e6:8.3f} us")


if __name__ == "__main__":
    readings()
    if len(sys.argv) > 2 and sys.argv[1] == "--against":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from _against import compare

        compare(WORKLOADS, sys.argv[2])
