"""Module-level (picklable) mechanisms for the executor tests: worker processes import them."""

from __future__ import annotations

from fractions import Fraction
from typing import Any


def randomized_response_bits(dataset: tuple) -> dict:
    """Each bit kept with probability 3/4 (exact): ln 3-DP, every pair tight."""
    out: dict = {(): Fraction(1)}
    for bit in dataset:
        out = {key + (b,): p * (Fraction(3, 4) if b == bit else Fraction(1, 4)) for key, p in out.items() for b in (0, 1)}
    return out


class ClampedGeometric:
    """The sum of the bits plus two-sided geometric noise clamped to [0, n], in float64: epsilon-DP
    exactly at ``epsilon``, so a float claim at it holds only within rounding."""

    def __init__(self, epsilon: float) -> None:
        self.epsilon = epsilon

    def __call__(self, dataset: tuple) -> dict[Any, float]:
        import math

        a = math.exp(-self.epsilon)
        n, c = len(dataset), sum(dataset)
        inside = (1 - a) / (1 + a)
        dist = {k: inside * a ** abs(k - c) for k in range(1, n)}
        dist[0] = a**c / (1 + a)
        dist[n] = a ** (n - c) / (1 + a)
        return dist


def count_with_secret(dataset: tuple) -> dict:
    """Leaks whether the first record is 2: violated at any epsilon."""
    return {"first is 2": Fraction(1)} if dataset and dataset[0] == 2 else {"no": Fraction(1)}


#: The environment variable naming the marker file of :func:`dies_once_on_ones`: a worker that sees
#: the dataset (1, 1, 1) and finds no marker writes it and kills itself with SIGKILL, so the first
#: attempt dies and the re-run (which finds the marker) computes.
MARKER = "DPVERIFY_TEST_DEATH_MARKER"


def _kill_this_worker() -> None:
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


def dies_once_on_ones(dataset: tuple) -> dict:
    """:func:`randomized_response_bits`, whose worker dies (SIGKILL) the first time it meets (1, 1, 1)."""
    import os

    if dataset == (1, 1, 1) and os.environ.get(MARKER):
        try:
            with open(os.environ[MARKER], "x"):
                pass
        except FileExistsError:
            return randomized_response_bits(dataset)
        _kill_this_worker()
    return randomized_response_bits(dataset)


def always_dies_on_ones(dataset: tuple) -> dict:
    """:func:`randomized_response_bits`, whose worker dies (SIGKILL) every time it meets (1, 1, 1)."""
    import multiprocessing

    if dataset == (1, 1, 1) and multiprocessing.parent_process() is not None:  # never the test's own process
        _kill_this_worker()
    return randomized_response_bits(dataset)


def hangs_on_ones(dataset: tuple) -> dict:
    """:func:`randomized_response_bits`, which never returns on (1, 1, 1)."""
    import time

    if dataset == (1, 1, 1):
        time.sleep(10**6)
    return randomized_response_bits(dataset)
