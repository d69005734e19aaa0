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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.checking._features import fitted_features, reads_bits
from dpverify.checking._outputs import Outputs, is_number, items_of
from dpverify.checking._sampling import Summary, summarise

__all__ = ["Interval", "OutcomeSet", "Derived", "Candidate", "Selection", "candidates", "choose", "clopper_pearson",
           "log_ratio_bound", "select", "selection", "trimmed", "TESTS"]

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
            value = item if is_number(item) else None
        elif isinstance(item, tuple) and len(item) > self.coordinate and all(is_number(x) for x in item):
            value = item[self.coordinate]
        else:
            value = None
        return value is not None and self.low < value <= self.high

    def count(self, outputs: Outputs, cache: dict | None = None) -> int:
        """How many of ``outputs`` lie in the event."""
        column = self._column(outputs)
        if column is None:
            return sum(1 for item in items_of(outputs) if self._contains(item))
        return int(np.count_nonzero((column > self.low) & (column <= self.high)))

    def __str__(self) -> str:
        return self.text("o")

    def text(self, output: str) -> str:
        """The event with the output named ``output`` (``"o"``, or a feature of it)."""
        name = output if self.coordinate is None else f"{output}[{self.coordinate}]"
        if self.low == -math.inf:
            return f"{name} <= {_shown(self.high)}"
        if self.high == math.inf:
            return f"{name} > {_shown(self.low)}"
        return f"{_shown(self.low)} < {name} <= {_shown(self.high)}"


@dataclass(frozen=True)
class OutcomeSet:
    """The outputs equal to one of ``outcomes`` (numbers, tuples of numbers, or labels)."""

    outcomes: tuple

    def count(self, outputs: Outputs, cache: dict | None = None) -> int:
        """How many of ``outputs`` lie in the event."""
        members = set(self.outcomes)
        if outputs.kind == "real" and outputs.values is not None:
            numbers = [o for o in self.outcomes if is_number(o)]
            return int(np.count_nonzero(np.isin(outputs.values, numbers))) if numbers else 0
        if outputs.kind == "vector" and outputs.values is not None:
            rows = np.ascontiguousarray(outputs.values)
            keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
            _, first, counts = np.unique(keys, return_index=True, return_counts=True)
            return sum(c for i, c in zip(first.tolist(), counts.tolist()) if tuple(rows[i].tolist()) in members)
        return sum(1 for item in items_of(outputs) if item in members)

    def __str__(self) -> str:
        return self.text("o")

    def text(self, output: str) -> str:
        """The event with the output named ``output`` (``"o"``, or a feature of it)."""
        shown = [_shown(o) if is_number(o) else repr(o) for o in self.outcomes[:8]]
        more = len(self.outcomes) - len(shown)
        return f"{output} in {{" + ", ".join(shown) + (f", ... ({more} more)" if more > 0 else "") + "}"


@dataclass(frozen=True)
class Derived:
    """The outputs ``o`` whose feature ``feature(o)`` lies in ``event`` (an :class:`Interval` or
    :class:`OutcomeSet` on the feature's values; :mod:`dpverify.checking._features`). A feature is a
    function of the output alone, fixed before the test draws, so this is an event on ``o``."""

    feature: Any
    event: Interval | OutcomeSet

    def count(self, outputs: Outputs, cache: dict | None = None) -> int:
        """How many of ``outputs`` lie in the event (``cache`` keeps each feature's values across events)."""
        cache = {} if cache is None else cache
        values = cache.get(self.feature)
        if values is None:
            values = cache[self.feature] = self.feature(outputs)
        return self.event.count(values)

    @property
    def reads_bits(self) -> bool:
        """Whether the event reads the output's float representation (a float-structure event)."""
        return reads_bits(self.feature)

    def __str__(self) -> str:
        describe = getattr(self.feature, "describe", None)
        if describe is not None and isinstance(self.event, OutcomeSet):  # each key as the outputs it stands for
            shown = [f"({describe(key)})" for key in self.event.outcomes[:4]]
            more = len(self.event.outcomes) - len(shown)
            return "o with " + " or ".join(shown) + (f" or ... ({more} more keys)" if more > 0 else "")
        return self.event.text(self.feature.name)


Event = Interval | OutcomeSet | Derived


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


def _wilson(p: np.ndarray, size: int, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score bounds on a proportion seen as frequency ``p`` on ``size`` draws."""
    shift = z * z / (2 * size)
    half = z * np.sqrt(p * (1 - p) / size + z * z / (4 * size * size))
    scale = 1 + z * z / size
    return (p + shift - half) / scale, (p + shift + half) / scale


@dataclass(frozen=True)
class Candidate:
    """An event chosen on the selection draws for pair ``pair``: likelier under dataset ``first``
    (the P side) than under ``second``; ``kind`` says how it was ranked (``"ratio"``: by its bound
    on epsilon; ``"margin"``: by its bound on ``P(S) - e^eps Q(S)``, the delta it refutes)."""

    score: float
    event: Event
    pair: int
    first: int
    second: int
    kind: str = "ratio"


class _Family:
    """Events with their counts on the two datasets of a pair (``make(k)`` builds event ``k``), of
    ``n_a`` and ``n_b`` draws."""

    def __init__(self, a: np.ndarray, b: np.ndarray, make: Any, n_a: int, n_b: int,
                 forward: bool | None = None, bits: bool = False) -> None:
        self.a, self.b, self.make, self.forward = a, b, make, forward
        self.n_a, self.n_b = n_a, n_b
        self.bits = bits  # its events read the outputs' float representation

    def derived(self, feature: Any) -> _Family:
        """The same counts, each event read on ``feature``'s values."""
        make = self.make
        return _Family(self.a, self.b, lambda k: Derived(feature, make(k)), self.n_a, self.n_b, self.forward,
                       reads_bits(feature))


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

    return _Family(below_a[high] - below_a[low], below_b[high] - below_b[low], make, first.size, second.size)


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
    if forward:
        return _Family(on_p, on_q, make, n_p, n_q, forward)
    return _Family(on_q, on_p, make, n_q, n_p, forward)


def _plain_families(first: Summary, second: Summary) -> list[_Family]:
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


def _families(first: Summary, second: Summary) -> list[_Family]:
    """Every event family of a pair: on the outputs, on each fixed feature, on each feature fitted
    on the pair's kept draws (:mod:`dpverify.checking._features`)."""
    families = _plain_families(first, second)
    if first.counts is not None and second.counts is not None:
        # outputs with few values: every event on a feature of them is a set of outcomes, and the outcome
        # family already ranks the unions of outcomes by their ratio (the likelihood-ratio order)
        return families
    for feature, summary in first.derived.items():
        if feature in second.derived:
            families.extend(f.derived(feature) for f in _plain_families(summary, second.derived[feature]))
    if first.sample is not None and second.sample is not None and first.kind == second.kind:
        for feature in fitted_features(first.sample, second.sample):
            on_first = summarise(feature(first.sample), with_features=False)
            on_second = summarise(feature(second.sample), with_features=False)
            families.extend(f.derived(feature) for f in _plain_families(on_first, on_second))
    return families


def _ranked(values: np.ndarray, where: tuple[np.ndarray, np.ndarray], families: list[_Family], keep: int,
            pair: int, first: int, second: int, kind: str) -> list[Candidate]:
    """The ``keep`` best events by ``values`` (finite ones; ties in index order), events with the same
    counts on the selection draws counted once."""
    found: list[Candidate] = []
    seen: set[tuple[int, int, int, int]] = set()
    numbers, ks = where
    finite = np.flatnonzero(np.isfinite(values))
    depth = min(finite.size, 8 * keep + 64)
    head = finite
    if 0 < depth < finite.size:  # a partial sort: every value at least the depth-th largest (ties kept)
        cut = np.partition(values[finite], finite.size - depth)[finite.size - depth]
        head = finite[values[finite] >= cut]
    for part in (head, None):
        if part is None:  # the head held fewer distinct events than wanted: the rest, in order
            if head.size == finite.size:
                break
            part = np.setdiff1d(finite, head, assume_unique=True)
        for index in part[np.argsort(-values[part], kind="stable")].tolist():
            if len(found) == keep:
                return found
            family = families[int(numbers[index])]
            k = int(ks[index])
            counts = (int(family.a[k]), family.n_a, int(family.b[k]), family.n_b)
            if counts in seen:
                continue
            seen.add(counts)
            found.append(Candidate(float(values[index]), family.make(k), pair, first, second, kind))
    return found


def _best(pair: int, i: int, j: int, first: Summary, second: Summary, plan: _Plan) -> tuple[list[Candidate], int]:
    """The best events of each direction of one pair (``plan.keep`` by their bound on epsilon,
    ``plan.keep_margin`` by their bound on the refuted delta), and how many events were scored.

    An event's score is its bound at ``plan.level / K`` (``K`` events scored in the direction), as if
    its frequencies had been seen on ``plan.size`` draws (the test's size): a bound holding for all of
    them at once. At ``plan.level`` alone, the best of thousands of scores is often a small event whose
    frequency came out high by chance (the winner's curse: on noisy max returning its value, a narrow
    interval instead of the lower tail, whose bound on the test half is larger)."""
    from scipy.special import ndtri  # scipy.stats takes 1.5 s to import; ndtri(1 - x) is its norm.isf(x)

    chosen: list[Candidate] = []
    scored = 0
    families = _families(first, second)
    for forward in (True, False):
        parts: list[tuple[np.ndarray, int, np.ndarray, int]] = []
        usable: list[_Family] = []
        for family in families:
            if family.forward is not None and family.forward != forward:
                continue
            usable.append(family)
            parts.append((family.a, family.n_a, family.b, family.n_b) if forward else (
                family.b, family.n_b, family.a, family.n_a))
        sizes = [family.a.size for family in usable]
        total = sum(sizes)
        if not total:
            continue
        where = (np.repeat(np.arange(len(usable)), sizes), np.concatenate([np.arange(size) for size in sizes]))
        z = float(-ndtri(plan.level / total))
        p_lower = np.concatenate([_wilson(a / n_a, plan.size, z)[0] for a, n_a, _, _ in parts])
        q_upper = np.concatenate([_wilson(b / n_b, plan.size, z)[1] for _, _, b, n_b in parts])
        scored += p_lower.size
        first_index, second_index = (i, j) if forward else (j, i)
        bits = np.concatenate([np.full(a.size, family.bits) for (a, _, _, _), family in zip(parts, usable)])
        ratio = log_ratio_bound(p_lower, q_upper, plan.delta)
        margin = np.where(p_lower > 0, p_lower - plan.exp_epsilon * q_upper, -np.inf)
        for kind, values, keep in (("ratio", np.where(bits, -np.inf, ratio), plan.keep),
                                   ("margin", np.where(bits, -np.inf, margin), plan.keep_margin),
                                   ("bits", np.where(bits, ratio, -np.inf), plan.keep_bits)):
            if keep:
                chosen.extend(_ranked(values, where, usable, keep, pair, first_index, second_index, kind))
    return chosen, scored


@dataclass(frozen=True)
class _Plan:
    """What selection aims at: the claim, the test's size and level, how many events to keep."""

    delta: float
    exp_epsilon: float
    size: int
    level: float
    keep: int
    keep_margin: int
    keep_bits: int


@dataclass(frozen=True)
class Selection:
    """How a test's events are chosen: the ranking's :class:`_Plan` and how many tests each ranking gets."""

    plan: _Plan
    ratio_tests: int
    margin_tests: int
    bits_tests: int

    @property
    def limits(self) -> dict[str, int]:
        """The most candidates of each ranking that can be tested (a chunk of pairs keeps no more)."""
        return {"ratio": self.ratio_tests + self.bits_tests, "margin": self.margin_tests, "bits": self.bits_tests}


def selection(pairs: int, *, epsilon: float, delta: float, level: float, size: int, tests: int = TESTS) -> Selection:
    """The :class:`Selection` of a test at ``level`` per one-sided interval, of ``size`` draws per
    dataset, over ``pairs`` pairs (see :func:`select`)."""
    margin_tests = tests // 2 if delta > 0 else tests // 4
    bits_tests = tests // 4
    ratio_tests = tests - margin_tests - bits_tests
    per_pair = [max(1, -(-count // (2 * pairs))) if count else 0 for count in (ratio_tests, margin_tests, bits_tests)]
    return Selection(_Plan(delta, math.exp(epsilon), size, level, *per_pair), ratio_tests, margin_tests, bits_tests)


def candidates(pairs: Iterable[tuple[int, int, int]], summaries: Mapping[int, Summary] | Sequence[Summary],
               chosen: Selection) -> tuple[list[Candidate], int]:
    """Every pair's best events (``pairs``: ``(number, i, j)``, in order) and how many were scored."""
    pool: list[Candidate] = []
    scored = 0
    for number, i, j in pairs:
        found, count = _best(number, i, j, summaries[i], summaries[j], chosen.plan)
        pool.extend(found)
        scored += count
    return pool, scored


def _ordered(pool: list[Candidate], kind: str) -> list[Candidate]:
    """The candidates of one ranking, best first (ties in pair order, then as found)."""
    return sorted((c for c in pool if c.kind == kind), key=lambda c: (-c.score, c.pair))


def trimmed(pool: list[Candidate], chosen: Selection) -> list[Candidate]:
    """The candidates :func:`choose` could take from ``pool`` whatever the other pairs give: each
    ranking's best ``limits`` (what a chunk of pairs sends back)."""
    return [c for kind, limit in chosen.limits.items() for c in _ordered(pool, kind)[:limit]]


def choose(pool: list[Candidate], chosen: Selection) -> list[Candidate]:
    """The events to test, of every pair's candidates (see :func:`select`)."""
    ratio_tests = chosen.ratio_tests
    if not any(c.kind == "bits" and c.score > 0 for c in pool):  # no float-structure event stands out:
        ratio_tests += chosen.bits_tests  # its tests go to the value events
    picked: list[Candidate] = []
    for kind, limit in (("ratio", ratio_tests), ("margin", chosen.margin_tests), ("bits", chosen.bits_tests)):
        ordered = _ordered(pool, kind)
        # an event with no positive bound on the selection draws is unlikely to give one on the test
        # draws, and would widen every other interval: only the best is tested when no event has one
        positive = [c for c in ordered if c.score > 0]
        picked.extend((positive or ([] if kind == "bits" else ordered[:1]))[:limit])
    unique: dict[tuple[int, int, Any], Candidate] = {}
    for candidate in picked:
        unique.setdefault((candidate.first, candidate.second, candidate.event), candidate)
    return list(unique.values())


def select(pairs: list[tuple[int, int]], summaries: list[Summary], *, epsilon: float, delta: float, level: float,
           size: int, tests: int = TESTS) -> tuple[list[Candidate], int]:
    """The events the test certifies (at most ``tests``, best first) and how many were scored.

    ``level`` is the test's error per one-sided interval and ``size`` its draws per dataset. Of the
    ``tests``, a quarter (a half when ``delta > 0``) are ranked by the delta they refute at the claimed
    ``epsilon`` (``P(S) - e^eps Q(S)``, the hockey-stick divergence: the events that refute an
    ``(eps, delta)`` claim), a quarter are float-structure events (on the outputs' bits; given to
    the others when none has a positive score), the rest by their bound on epsilon at ``delta``.
    Each pair contributes its best events in each direction (``ceil(k / (2 pairs))`` of each
    ranking, at least one); events with the same counts count once; an event chosen by two rankings
    is tested once. Events with a positive score are kept (the best one alone of a ranking when none
    has).
    """
    chosen = selection(len(pairs), epsilon=epsilon, delta=delta, level=level, size=size, tests=tests)
    pool, scored = candidates(((number, i, j) for number, (i, j) in enumerate(pairs)), summaries, chosen)
    return choose(pool, chosen), scored
