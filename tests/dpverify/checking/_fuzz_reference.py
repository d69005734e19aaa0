"""An independent brute-force reference for the differential fuzz (test_fuzz_differential.py).

Nothing here imports dpverify: datasets come from ``itertools.product``, neighbours from plain
predicates, and every privacy figure is computed in ``Fraction`` arithmetic from a lookup table
``dataset (tuple) -> {outcome: Fraction}``. A claim ``epsilon = log(r)`` for a rational ``r`` makes
``e^eps Q = r Q`` exact, so "the claim holds" is decided exactly: ``delta(r) <= claimed delta``.

Relations (the definitions dpverify documents; implemented here from scratch):

* ``"substitute"``: two datasets of size ``n`` that differ in exactly one position.
* ``"add_remove"``: a dataset of size ``n`` and a dataset of size ``n - 1`` obtained from it by
  deleting one position (only these two sizes are compared).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from fractions import Fraction

Table = dict  # dataset (tuple) -> {outcome: Fraction}

__all__ = [
    "datasets",
    "is_neighbor",
    "is_multiset_neighbor",
    "neighbour_pairs",
    "worst_ratio",
    "argmax_ratio",
    "hockey_stick",
    "delta_at",
    "mass",
    "log_ratio",
]


def datasets(records: Iterable, n: int, relation: str) -> list[tuple]:
    """Every dataset the relation compares: size ``n``, and size ``n - 1`` for add/remove."""
    records = tuple(records)
    sizes = [n] if relation == "substitute" else [n, n - 1]
    return [d for size in sizes for d in itertools.product(records, repeat=size)]


def is_neighbor(first: tuple, second: tuple, relation: str) -> bool:
    """Ordered datasets: same length and one differing position (substitute), or one is the other
    with one position deleted (add/remove, either order)."""
    if relation == "substitute":
        return len(first) == len(second) and sum(a != b for a, b in zip(first, second)) == 1
    big, small = (first, second) if len(first) > len(second) else (second, first)
    return len(big) == len(small) + 1 and any(big[:i] + big[i + 1 :] == small for i in range(len(big)))


def is_multiset_neighbor(first: tuple, second: tuple, relation: str) -> bool:
    """The same relations read on multisets (for witnesses of an exchangeable check)."""
    a, b = Counter(first), Counter(second)
    if relation == "substitute":
        return len(first) == len(second) and sum((a - b).values()) == 1
    big, small = (a, b) if len(first) > len(second) else (b, a)
    return abs(len(first) - len(second)) == 1 and sum((big - small).values()) == 1 and not small - big


def neighbour_pairs(records: Iterable, n: int, relation: str) -> list[tuple[tuple, tuple]]:
    """Every unordered neighbouring pair of ordered datasets, once, by filtering all pairs."""
    records = tuple(records)
    if relation == "substitute":
        everything = list(itertools.product(records, repeat=n))
        return [
            (d, e) for i, d in enumerate(everything) for e in everything[i + 1 :] if is_neighbor(d, e, relation)
        ]
    return [
        (d, e)
        for d in itertools.product(records, repeat=n)
        for e in itertools.product(records, repeat=n - 1)
        if is_neighbor(d, e, relation)
    ]


def _directions(pairs):
    for d, e in pairs:
        yield d, e
        yield e, d


def _prob(dist: Mapping, outcome) -> Fraction:
    return Fraction(dist.get(outcome, 0))


def argmax_ratio(table: Table, pairs) -> tuple[Fraction | None, tuple | None]:
    """``(r*, (D, D', o))``: the largest ``P(o) / Q(o)`` over both directions of every pair, with
    a place it is reached (the first in the enumeration order); ``r*`` is None when some outcome
    has ``P(o) > 0 = Q(o)`` (an infinite loss)."""
    best, where = Fraction(1), None
    for d, e in _directions(pairs):
        p, q = table[d], table[e]
        for o in sorted(p, key=repr):
            value = _prob(p, o)
            if value == 0:
                continue
            if _prob(q, o) == 0:
                return None, (d, e, o)
            ratio = value / _prob(q, o)
            if ratio > best or where is None and ratio == best:
                best, where = ratio, (d, e, o)
    return best, where


def worst_ratio(table: Table, pairs) -> Fraction | None:
    """``e^{eps*}`` exactly (None: eps* is infinite)."""
    return argmax_ratio(table, pairs)[0]


def hockey_stick(p: Mapping, q: Mapping, ratio: Fraction) -> Fraction:
    """``sum_o max(0, P(o) - ratio Q(o))``."""
    outcomes = set(p) | set(q)
    return sum((max(Fraction(0), _prob(p, o) - ratio * _prob(q, o)) for o in outcomes), Fraction(0))


def delta_at(table: Table, pairs, ratio: Fraction) -> Fraction:
    """``delta(eps)`` at ``e^eps = ratio``: the largest hockey-stick value over both directions."""
    return max((hockey_stick(table[d], table[e], ratio) for d, e in _directions(pairs)), default=Fraction(0))


def mass(dist: Mapping, outcomes: Iterable) -> Fraction:
    return sum((_prob(dist, o) for o in outcomes), Fraction(0))


def log_ratio(ratio: Fraction | None) -> float:
    """``ln(ratio)`` as a float, accurate near 1 (``inf`` for None)."""
    if ratio is None:
        return math.inf
    return math.log1p(float(ratio - 1)) if ratio < 2 else math.log(float(ratio))
