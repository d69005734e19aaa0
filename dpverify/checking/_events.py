"""Output events, their choice on the selection half, and exact Clopper–Pearson bounds.

An event ``S`` is a set of outputs. For a pair ``(D, D')`` and an event, ``(epsilon, delta)``-DP asks
``P(S) <= e^epsilon Q(S) + delta`` with ``P = M(D)``, ``Q = M(D')``, so
``epsilon >= ln((P(S) - delta) / Q(S))`` for every event with ``P(S) > delta``: a lower confidence bound
on ``P(S)`` and an upper one on ``Q(S)`` give a lower confidence bound on epsilon (the approach of
StatDP, Ding et al. CCS 2018, and DP-Sniper, Bichsel et al. IEEE S&P 2021, with exact binomial
intervals: Clopper, Pearson, Biometrika 26(4), 1934).

The events (:func:`select`), chosen on the selection half only:

* real outputs: ``{o <= t}``, ``{o > t}`` and ``{s < o <= t}`` with ``s, t`` empirical quantiles of
  both datasets' outputs (refined in the tails, where the ratio of a noisy release is largest);
* vector outputs: the same on each coordinate ``o[i]``;
* discrete outputs (and numeric ones with at most :data:`~dpverify.checking._sampling.DISCRETE_CAP`
  distinct values): each outcome, and the unions of the outcomes with the largest ratio of
  frequencies.

Selection ranks events by a Wilson-score version of the bound (fast; any ranking is sound, since
the bound that is reported is computed on the other, independent half with exact intervals).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.checking._sampling import Outputs, Summary, _is_number, items_of

__all__ = ["Interval", "OutcomeSet", "Candidate", "clopper_pearson", "select", "TESTS"]

#: How many (pair, event, direction) the test half certifies: the union bound's divisor.
TESTS = 8
#: Quantile levels (of each dataset's selection half) whose values are the thresholds of real outputs.
_TAILS = (1e-4, 3e-4, 1e-3, 2e-3, 3e-3, 5e-3, 7e-3, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.06, 0.08)
REAL_LEVELS = np.array(sorted({*_TAILS, *(1 - t for t in _TAILS), *(i / 20 for i in range(2, 19))}))
#: The same for each coordinate of vector outputs (fewer: d coordinates each).
_VECTOR_TAILS = (1e-3, 3e-3, 0.01, 0.02, 0.04, 0.07)
VECTOR_LEVELS = np.array(sorted({*_VECTOR_TAILS, *(1 - t for t in _VECTOR_TAILS), *(i / 10 for i in range(1, 10))}))
#: Relative widening of every Clopper–Pearson bound: covers the rounding of the inverse beta function.
_WIDEN = 1e-12


def _shown(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 2**53 else repr(float(value))


@dataclass(frozen=True)
class Interval:
    """The outputs ``o`` with ``low < o <= high`` (``o[coordinate]`` for vector outputs); ``low``
    may be ``-inf`` and ``high`` ``inf``. An output of another kind is not in it."""

    low: float
    high: float
    coordinate: int | None = None

    def _column(self, outputs: Outputs) -> np.ndarray | None:
        values = outputs.values
        if values is None:
            return None
        if self.coordinate is None:
            return values if outputs.kind == "real" else values[:0, 0]
        if outputs.kind != "vector" or values.shape[1] <= self.coordinate:
            return values[:0].reshape(-1)
        return values[:, self.coordinate]

    def _contains(self, item: Any) -> bool:
        if self.coordinate is None:
            value = item if _is_number(item) else None
        elif isinstance(item, tuple) and len(item) > self.coordinate and all(_is_number(x) for x in item):
            value = item[self.coordinate]
        else:
            value = None
        return value is not None and self.low < value <= self.high

    def count(self, outputs: Outputs) -> int:
        """How many of ``outputs`` lie in the event."""
        column = self._column(outputs)
        if column is None:
            return sum(1 for item in items_of(outputs) if self._contains(item))
        return int(np.count_nonzero((column > self.low) & (column <= self.high)))

    def __str__(self) -> str:
        name = "o" if self.coordinate is None else f"o[{self.coordinate}]"
        if self.low == -math.inf:
            return f"{name} <= {_shown(self.high)}"
        if self.high == math.inf:
            return f"{name} > {_shown(self.low)}"
        return f"{_shown(self.low)} < {name} <= {_shown(self.high)}"


@dataclass(frozen=True)
class OutcomeSet:
    """The outputs equal to one of ``outcomes`` (numbers, tuples of numbers, or labels)."""

    outcomes: tuple

    def count(self, outputs: Outputs) -> int:
        """How many of ``outputs`` lie in the event."""
        members = set(self.outcomes)
        if outputs.kind == "real" and outputs.values is not None:
            numbers = [o for o in self.outcomes if _is_number(o)]
            return int(np.count_nonzero(np.isin(outputs.values, numbers))) if numbers else 0
        if outputs.kind == "vector" and outputs.values is not None:
            rows = np.ascontiguousarray(outputs.values)
            keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
            _, first, counts = np.unique(keys, return_index=True, return_counts=True)
            return sum(c for i, c in zip(first.tolist(), counts.tolist()) if tuple(rows[i].tolist()) in members)
        return sum(1 for item in items_of(outputs) if item in members)

    def __str__(self) -> str:
        shown = [_shown(o) if _is_number(o) else repr(o) for o in self.outcomes[:8]]
        more = len(self.outcomes) - len(shown)
        return "o in {" + ", ".join(shown) + (f", ... ({more} more)" if more > 0 else "") + "}"


Event = Interval | OutcomeSet


def clopper_pearson(count: Any, size: Any, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact one-sided binomial bounds: ``P(p < lower) <= level`` and ``P(p > upper) <= level`` for
    ``count`` successes in ``size`` draws (each widened by a relative 1e-12 for rounding)."""
    from scipy.special import betaincinv

    count = np.asarray(count, dtype=np.float64)
    size = np.asarray(size, dtype=np.float64)
    lower = np.where(count > 0, betaincinv(np.maximum(count, 1), size - count + 1, level), 0.0)
    upper = np.where(count < size, betaincinv(count + 1, np.maximum(size - count, 1), 1 - level), 1.0)
    return lower * (1 - _WIDEN), np.minimum(upper * (1 + _WIDEN), 1.0)


def log_ratio_bound(p_lower: Any, q_upper: Any, delta: float) -> np.ndarray:
    """``ln((p_lower - delta) / q_upper)``, ``-inf`` where ``p_lower <= delta``."""
    p_lower = np.asarray(p_lower, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.log(np.maximum(p_lower - delta, 0.0)) - np.log(np.asarray(q_upper, dtype=np.float64))
    return np.where(p_lower > delta, value, -np.inf)


def _wilson(count: np.ndarray, size: int, z: float) -> tuple[np.ndarray, np.ndarray]:
    p = count / size
    shift = z * z / (2 * size)
    half = z * np.sqrt(p * (1 - p) / size + z * z / (4 * size * size))
    scale = 1 + z * z / size
    return (p + shift - half) / scale, (p + shift + half) / scale


def _score(a: np.ndarray, n_a: int, b: np.ndarray, n_b: int, delta: float, z: float) -> np.ndarray:
    """The selection score of events with counts ``a`` of ``n_a`` (P side) and ``b`` of ``n_b``."""
    lower, _ = _wilson(a.astype(np.float64), n_a, z)
    _, upper = _wilson(b.astype(np.float64), n_b, z)
    return log_ratio_bound(lower, upper, delta)


@dataclass(frozen=True)
class Candidate:
    """An event chosen on the selection half for pair ``pair``: likelier under dataset ``first``
    (the P side) than under ``second``."""

    score: float
    event: Event
    pair: int
    first: int
    second: int


class _Family:
    """Events with their counts on the two datasets of a pair (``make(k)`` builds event ``k``)."""

    def __init__(self, a: np.ndarray, b: np.ndarray, make: Any, forward: bool | None = None) -> None:
        self.a, self.b, self.make, self.forward = a, b, make, forward


def _quantiles(ordered: np.ndarray, levels: np.ndarray) -> np.ndarray:
    index = np.minimum((levels * ordered.size).astype(np.int64), ordered.size - 1)
    return ordered[index]


def _intervals(first: np.ndarray, second: np.ndarray, levels: np.ndarray, coordinate: int | None) -> _Family:
    grid = np.unique(np.concatenate([_quantiles(first, levels), _quantiles(second, levels)]))
    edges = np.concatenate(([-np.inf], grid[np.isfinite(grid)], [np.inf]))
    below_a = np.searchsorted(first, edges, side="right")
    below_b = np.searchsorted(second, edges, side="right")
    low, high = np.triu_indices(edges.size, 1)
    keep = ~((low == 0) & (high == edges.size - 1))  # every output: no information
    low, high = low[keep], high[keep]

    def make(k: int) -> Interval:
        return Interval(float(edges[low[k]]), float(edges[high[k]]), coordinate)

    return _Family(below_a[high] - below_a[low], below_b[high] - below_b[low], make)


def _outcomes(p_counts: dict, n_p: int, q_counts: dict, n_q: int, forward: bool) -> _Family:
    """Each outcome, then the unions of the outcomes likeliest under P relative to Q (P = the
    ``forward`` side)."""
    outcomes = list(dict.fromkeys([*p_counts, *q_counts]))
    a = np.array([p_counts.get(o, 0) for o in outcomes], dtype=np.int64)
    b = np.array([q_counts.get(o, 0) for o in outcomes], dtype=np.int64)
    order = np.argsort(-((a + 0.5) / (n_p + 1)) / ((b + 0.5) / (n_q + 1)), kind="stable")
    unions = max(len(outcomes) - 1, 0)  # the union of every outcome is no event

    def make(k: int) -> OutcomeSet:
        if k < len(outcomes):
            return OutcomeSet((outcomes[k],))
        return OutcomeSet(tuple(outcomes[i] for i in order[: k - len(outcomes) + 1].tolist()))

    cumulative_p, cumulative_q = np.cumsum(a[order])[:unions], np.cumsum(b[order])[:unions]
    on_p, on_q = np.concatenate([a, cumulative_p]), np.concatenate([b, cumulative_q])
    # a family's counts are on the pair's first dataset (a) and second (b), whichever side is P
    return _Family(on_p, on_q, make, forward) if forward else _Family(on_q, on_p, make, forward)


def _families(first: Summary, second: Summary) -> list[_Family]:
    families = []
    if first.kind == second.kind == "real" and first.sorted is not None and second.sorted is not None:
        families.append(_intervals(first.sorted, second.sorted, REAL_LEVELS, None))
    if (first.kind == second.kind == "vector" and first.sorted is not None and second.sorted is not None
            and first.sorted.shape[0] == second.sorted.shape[0]):
        for coordinate in range(first.sorted.shape[0]):
            families.append(_intervals(first.sorted[coordinate], second.sorted[coordinate], VECTOR_LEVELS, coordinate))
    if first.counts is not None and second.counts is not None:
        for forward in (True, False):
            p, q = (first, second) if forward else (second, first)
            assert p.counts is not None and q.counts is not None
            families.append(_outcomes(p.counts, p.size, q.counts, q.size, forward))
    return families


def _best(pair: int, i: int, j: int, first: Summary, second: Summary, delta: float, level: float,
          keep: int) -> tuple[list[Candidate], int]:
    """The ``keep`` best events of each direction of one pair, and how many events were scored.

    An event's score is its bound at ``level / K`` (``K`` events scored in the direction): a bound
    holding for all of them at once on the selection half. At ``level`` alone, the best of thousands
    of scores is often a small event whose frequency came out high by chance (the winner's curse:
    on noisy max returning its value, a narrow interval instead of the lower tail, whose bound on
    the test half is larger)."""
    from scipy.stats import norm

    chosen: list[Candidate] = []
    scored = 0
    families = _families(first, second)
    for forward in (True, False):
        parts: list[tuple[np.ndarray, int, np.ndarray, int]] = []
        where: list[tuple[int, int]] = []
        for number, family in enumerate(families):
            if family.forward is not None and family.forward != forward:
                continue
            parts.append((family.a, first.size, family.b, second.size) if forward else (
                family.b, second.size, family.a, first.size))
            where.extend((number, k) for k in range(family.a.size))
        if not where:
            continue
        z = float(norm.isf(level / len(where)))
        values = np.concatenate([_score(a, n_a, b, n_b, delta, z) for a, n_a, b, n_b in parts])
        scored += values.size
        found: list[Candidate] = []
        seen: set[tuple[int, int]] = set()  # (a, b): events alike on the selection half count once
        for index in np.argsort(-values, kind="stable").tolist():
            if len(found) == keep or not np.isfinite(values[index]):
                break
            number, k = where[index]
            counts = (int(families[number].a[k]), int(families[number].b[k]))
            if counts in seen:
                continue
            seen.add(counts)
            found.append(Candidate(float(values[index]), families[number].make(k), pair, i if forward else j,
                                   j if forward else i))
        chosen.extend(found)
    return chosen, scored


def select(pairs: list[tuple[int, int]], summaries: list[Summary], delta: float, confidence: float,
           tests: int = TESTS) -> tuple[list[Candidate], int]:
    """The events the test half certifies (at most ``tests``, best first) and how many were scored.

    Each pair's best events in each direction (``ceil(tests / (2 pairs))``, at least one; events
    with the same counts on the selection half count once) compete; the ``tests`` best overall with
    a positive score are kept (the best one alone when none has). Scores start from the level the test will use, ``(1 -
    confidence) / (2 tests)`` per one-sided interval (see :func:`_best`).
    """
    level = (1 - confidence) / (2 * tests)
    keep = max(1, -(-tests // (2 * len(pairs))))
    pool: list[Candidate] = []
    scored = 0
    for number, (i, j) in enumerate(pairs):
        found, count = _best(number, i, j, summaries[i], summaries[j], delta, level, keep)
        pool.extend(found)
        scored += count
    ordered = sorted(pool, key=lambda c: -c.score)  # stable: ties keep pair order
    # an event with no positive bound on the selection half is unlikely to give one on the test
    # half, and would widen every other interval: only the best is tested when no event has one
    positive = [c for c in ordered if c.score > 0]
    return (positive or ordered[:1])[:tests], scored
