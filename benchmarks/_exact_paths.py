"""The exact cases of ``bench_sampler.py --exact``: samplers enumerated by ``from_sampler``, each a
self-contained snippet (it runs unchanged on an older checkout, see ``_against.py``).

Each snippet enumerates its sampler on every dataset of its instance, best of ``REPEATS``, and
prints the paths per second; ``check`` is the number of paths and a digest of every distribution,
which must be the same on both trees.
"""

from __future__ import annotations

REPEATS = 3

_HEADER = """
import hashlib, itertools, math, time
from fractions import Fraction
import numpy as np
from dpverify import from_sampler

def measure(sampler, datasets):
    mechanism = from_sampler(sampler)
    best = math.inf
    for _ in range(%d):
        started = time.process_time()
        found = [mechanism.enumerate(d) for d in datasets]
        best = min(best, time.process_time() - started)
    paths = sum(e.paths for e in found)
    digest = hashlib.sha256(repr([sorted(e.distribution.items(), key=repr) for e in found]).encode()).hexdigest()[:12]
    return {"paths": paths, "digest": digest, "paths_per_s": round(paths / best)}
""" % REPEATS

#: name -> snippet; the snippet ends with report(lambda: measure(sampler, datasets)).
CASES: dict[str, str] = {
    "randomized response, 8 coins": _HEADER + """
def sampler(dataset, rng):
    return tuple(x if rng.random() < Fraction(3, 4) else 1 - x for x in dataset)
datasets = list(itertools.product((0, 1), repeat=8))[:16]
report(lambda: measure(sampler, datasets))
""",
    "subsample 3 of 6, then count": _HEADER + """
def sampler(dataset, rng):
    chosen = rng.choice(len(dataset), size=3, replace=False)
    return sum(dataset[i] for i in chosen)
datasets = list(itertools.product((0, 1), repeat=6))
report(lambda: measure(sampler, datasets))
""",
    "integer draws, 10 of 0..2": _HEADER + """
def sampler(dataset, rng):
    return sum(rng.integers(3) for _ in range(10)) % 5
datasets = [(0,)]
report(lambda: measure(sampler, datasets))
""",
    "permutation of 7": _HEADER + """
def sampler(dataset, rng):
    return tuple(rng.permutation(len(dataset)))[:2]
datasets = [tuple(range(7))]
report(lambda: measure(sampler, datasets))
""",
    "exponential mechanism, float weights": _HEADER + """
def sampler(dataset, rng):
    scores = np.array([sum(1 for x in dataset if x == c) for c in range(4)], dtype=float)
    weights = np.exp(scores / 2)
    first = rng.choice(4, p=weights / weights.sum())
    return first, rng.choice(4, p=weights / weights.sum())
datasets = list(itertools.product(range(4), repeat=4))
report(lambda: measure(sampler, datasets))
""",
    "A_Agnostic as a sampler, n = 3": _HEADER + """
from dpverify.finite.records import labeled_records, thresholds
from dpverify.mechanisms.relabeling import subsample_size
C, EPS, LEARNER_EPS = thresholds(2), 0.5, 1.0

def sampler(S, rng):
    n = len(S)
    k = subsample_size(EPS, n)
    I = sorted(rng.choice(n, size=k, replace=False))
    T = [S[i] for i in I]
    W = [S[i] for i in range(n) if i not in I]
    points = [x for x, _ in T]
    H = list(C.labelings(points).values())
    err_w = C.mistakes(W) / len(W)
    weights = []
    for h in H:
        dis = np.array([sum(C.matrix[h, x] != C.matrix[f, x] for x in points) for f in range(len(C))]) / k
        weights.append(math.exp(-EPS * len(W) * float(np.min(dis + err_w)) / 2))
    h = H[rng.choice(len(H), p=[w / sum(weights) for w in weights])]
    relabeled = tuple((x, int(C.matrix[h, x])) for x in points)
    learner = np.exp(-LEARNER_EPS * C.mistakes(relabeled) / 2)
    return rng.choice(len(C), p=learner / learner.sum())
datasets = list(itertools.product(labeled_records(2), repeat=3))
report(lambda: measure(sampler, datasets))
""",
}
