"""Monte-Carlo check of the closed forms against diffprivlib run on a real seeded RandomState.

Not a test (it samples, and takes minutes): run it by hand after changing a closed form,

    .venv/bin/python -m tests.interop.check_closed_forms [draws]

For every case of :mod:`._cases` (and GaussianDiscrete) and each listed dataset it draws ``draws``
(default 200,000) outputs of the sampler with ``np.random.RandomState(seed)`` -- diffprivlib's own
floats and arithmetic -- and compares each output's frequency with the closed form: the standard
error of a frequency is sqrt(p (1 - p) / draws), and every output must agree within 5 of them (an
output outside the closed form's support must never be drawn). It prints one line per case.
"""

from __future__ import annotations

import math
import sys
import time
from collections import Counter

import numpy as np

from . import _closed_forms as forms
from . import _samplers as samplers
from ._cases import CASES

_SEED = 20_260_101
_LIMIT = 5.0  # standard errors


def _datasets(case_records: tuple, n: int) -> list[tuple]:
    if n == 1:
        return [(r,) for r in case_records]
    return [(0, 0, 0), (0, 0, 1), (0, 1, 2)]  # utilities [3, 0, 0], [2, 1, 0], [1, 1, 1]


def _compare(sampler, dataset: tuple, expected: forms.Distribution, draws: int, seed: int) -> tuple[float, int]:
    rng = np.random.RandomState(seed)
    counts = Counter(sampler(dataset, rng) for _ in range(draws))
    unexpected = [o for o in counts if expected.get(o, 0) == 0]
    assert not unexpected, f"drawn outside the closed form's support: {unexpected} on {dataset}"
    worst = 0.0
    for outcome, probability in expected.items():
        p = float(probability)
        if p <= 0:
            continue
        error = math.sqrt(p * (1 - p) / draws)
        z = (counts.get(outcome, 0) / draws - p) / error if error > 0 else 0.0
        worst = max(worst, abs(z))
    return worst, len(expected)


def main(draws: int) -> int:
    failures = 0
    rows = [(case.name, case.sampler, case.records, case.n, case.distribution) for case in CASES]
    scale = samplers.GaussianDiscrete(epsilon=samplers.EPSILON, delta=samplers.GAUSSIAN_DELTA, sensitivity=1, random_state=0)._scale
    rows.append(("GaussianDiscrete", samplers.gaussian_discrete, (0, 1), 1,
                 lambda d: forms.gaussian_discrete_clipped(scale, d[0], *samplers.GAUSSIAN_CLIP)))
    for index, (name, sampler, records, n, closed_form) in enumerate(rows):
        started = time.perf_counter()
        worst, outputs = 0.0, 0
        for offset, dataset in enumerate(_datasets(records, n)):
            z, count = _compare(sampler, dataset, closed_form(dataset), draws, _SEED + 100 * index + offset)
            worst, outputs = max(worst, z), outputs + count
        ok = worst <= _LIMIT
        failures += not ok
        print(f"{name:24s} {outputs:3d} outputs  max |z| = {worst:5.2f}  {'ok' if ok else 'FAIL'}  "
              f"({time.perf_counter() - started:.0f} s)", flush=True)
    return failures


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000))
