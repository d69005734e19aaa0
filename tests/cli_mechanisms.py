"""Helper mechanisms for tests/dpverify/test_cli.py, loaded by ``dpverify check tests.cli_mechanisms:NAME``.

Each is a callable ``dataset -> {outcome: probability}`` over the record universe ``[0, 1]``.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = [
    "randomized_response", "leak_first", "constant", "divide_by_first", "NOT_CALLABLE", "rr_sampler", "rr_sampler_numpy",
    "geometric_count", "parity_sampler",
]


def randomized_response(dataset: tuple) -> dict:
    """Randomized response on one bit, p = 3/4, exactly: eps* = ln((3/4)/(1/4)) = ln 3 = 1.0986."""
    (bit,) = dataset
    return {bit: Fraction(3, 4), 1 - bit: Fraction(1, 4)}


def leak_first(dataset: tuple) -> dict:
    """Outputs its first record: P = 1 vs Q = 0, eps* = inf, delta*(eps) = 1 for every eps."""
    return {dataset[0]: 1}


def constant(dataset: tuple) -> dict:
    """Ignores the data: eps* = 0."""
    return {"same": 1}


NOT_CALLABLE = 42


def rr_sampler(dataset: tuple, rng) -> int:
    """Randomized response written as sampling code: keep the bit with probability 3/4 (eps* = ln 3),
    for ``check --sampler`` (rng is dpverify's exact random source: the comparison branches exactly)."""
    (bit,) = dataset
    return bit if rng.random() < Fraction(3, 4) else 1 - bit


def rr_sampler_numpy(dataset: tuple, rng, size: int = 1):
    """The same on a real numpy Generator, batched, for ``check --estimate``."""
    (bit,) = dataset
    keep = rng.random(size) < 0.75
    return [bit if k else 1 - bit for k in keep.tolist()]


def geometric_count(dataset: tuple, rng) -> int:
    """The bit plus two-sided geometric noise, clamped to [0, 2], for ``check --sampler --tail``:
    k = geometric(1/2) - 1 >= 0 with P(k) = 2^-(k+1), a fair sign (k = 0 is reached by both signs),
    so P(bit + 0) = 1/2 and P(bit +- 1) = 1/8 each: eps* = ln((1/2) / (1/8)) = ln 4."""
    (bit,) = dataset
    k = int(rng.geometric(Fraction(1, 2))) - 1
    sign = -1 if rng.random() < Fraction(1, 2) else 1
    return max(0, min(2, bit + sign * k))


def branching_loop(dataset: tuple, rng) -> int:
    """The bit plus a loop that goes on with probability 9/10, adding 0..15 a round, capped at 3: its path
    masses shrink by 9/160 a round while the mass left shrinks by 9/10, so every 16x finer pass by mass
    keeps 0.9 of the mass left for 16x the runs (a tail of 1e-9 is out of reach)."""
    (bit,) = dataset
    k = 0
    while rng.random() < Fraction(9, 10):
        k += int(rng.integers(0, 16))
    return min(bit + k, 3)


def parity_sampler(dataset: tuple, rng) -> int:
    """A sampler that draws nothing: the parity of the data (deterministic, not private)."""
    return sum(dataset) % 2


def divide_by_first(dataset: tuple) -> dict:
    """1 / dataset[0]: raises ZeroDivisionError on every dataset starting with 0 (first (0,))."""
    share = Fraction(1, dataset[0])
    return {"out": share / share}



def laplace_count_sampler(dataset: tuple, rng, size: int = 1):
    """sum(dataset) + Laplace(1) in double precision, batched: eps = 1 on real numbers, and the float
    program leaks through its low bits (Mironov 2012)."""
    return sum(dataset) + rng.laplace(0.0, 1.0, size)
