"""Which events a sampled run tests: families of events scored on the selection draws.

The families of a pair (:func:`_families`), built on the selection draws only:

* real outputs: ``{o <= t}``, ``{o > t}`` and ``{s < o <= t}`` with ``s, t`` empirical quantiles of
  both datasets' outputs (refined in the tails, where the ratio of a noisy release is largest);
* vector outputs: the same on each coordinate ``o[i]``;
* discrete outputs (and numeric ones whose values repeat, :func:`dpverify.checking.statistical._sampling._repeats`):
  each outcome, and the unions of the outcomes with the largest ratio of frequencies;
* the same on each feature of the output (:mod:`dpverify.checking.statistical._features`), when its values do
  not repeat (a few values' events are all unions of outcomes already).

Selection ranks events by a Wilson-score version of their bound at the test's size and level (fast;
any ranking is sound, since the bound that is reported is computed on other, independent draws with
exact intervals), two ways (their bound on epsilon, and the delta they refute at the claimed
epsilon), and keeps float-structure events apart (:func:`select`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.checking.statistical._events import Derived, Event, Interval, OutcomeSet, log_ratio_bound
from dpverify.checking.statistical._features import fitted_features, reads_bits
from dpverify.checking.statistical._sampling import Summary, summarise

__all__ = ["Candidate", "Selection", "candidates", "choose", "event_load", "focused", "merged_events", "select", "selection",
           "trimmed", "TESTS"]

#: How many (pair, event, direction) the test half certifies: the union bound's divisor.
TESTS = 8
#: Quantile levels (of each dataset's selection half) whose values are the thresholds of real outputs.
_TAILS = (1e-4, 3e-4, 1e-3, 2e-3, 3e-3, 5e-3, 7e-3, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.06, 0.08)
REAL_LEVELS = np.array(sorted({*_TAILS, *(1 - t for t in _TAILS), *(i / 20 for i in range(2, 19))}))
#: The same for each coordinate of vector outputs (fewer: d coordinates each).
_VECTOR_TAILS = (1e-3, 3e-3, 0.01, 0.02, 0.04, 0.07)
VECTOR_LEVELS = np.array(sorted({*_VECTOR_TAILS, *(1 - t for t in _VECTOR_TAILS), *(i / 10 for i in range(1, 10))}))


def _wilson(p: np.ndarray, size: int | np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
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
    #: The event's counts on the selection draws of ``first`` (P) and ``second`` (Q), and their sizes.
    counts: tuple[int, int, int, int] = (0, 1, 0, 1)


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
    on the pair's kept draws (:mod:`dpverify.checking.statistical._features`)."""
    families = _plain_families(first, second)
    if first.counts is not None and second.counts is not None and first.kind != "vector":
        # numbers with few values: every event on a feature of them is a set of outcomes, and the outcome
        # family already ranks the unions of outcomes by their ratio (the likelihood-ratio order). Not so
        # for vectors: among SVT 6's 1,024 answer strings each rare string's ratio is noisy, and prefixes
        # and the fitted score, which pool strings, bound more (2.6-2.7 against 2.3 for the unions alone)
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
            pair: int, first: int, second: int, kind: str, sides: tuple[np.ndarray, ...]) -> list[Candidate]:
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
            found.append(Candidate(float(values[index]), family.make(k), pair, first, second, kind,
                                   tuple(int(side[index]) for side in sides)))  # type: ignore[arg-type]
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
        p_count, p_size, q_count, q_size = (np.concatenate([np.broadcast_to(part[side], part[0].shape) for part in parts])
                                            for side in range(4))
        sides = (p_count, p_size, q_count, q_size)
        p_rate, q_rate = _rates(p_count, p_size, q_count, q_size, plan.shrink)
        p_lower, q_upper = _wilson(p_rate, plan.size, z)[0], _wilson(q_rate, plan.size, z)[1]
        scored += p_lower.size
        first_index, second_index = (i, j) if forward else (j, i)
        bits = np.concatenate([np.full(a.size, family.bits) for (a, _, _, _), family in zip(parts, usable)])
        ratio = log_ratio_bound(p_lower, q_upper, plan.delta)
        margin = np.where(p_lower > 0, p_lower - plan.exp_epsilon * q_upper, -np.inf)
        for kind, values, keep in (("ratio", np.where(bits, -np.inf, ratio), plan.keep),
                                   ("margin", np.where(bits, -np.inf, margin), plan.keep_margin),
                                   ("bits", np.where(bits, ratio, -np.inf), plan.keep_bits)):
            if keep:
                chosen.extend(_ranked(values, where, usable, keep, pair, first_index, second_index, kind, sides))
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
    shrink: float = 0.0


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


def selection(pairs: int, *, epsilon: float, delta: float, level: float, size: int, tests: int = TESTS,
              shrink: float = 0.0) -> Selection:
    """The :class:`Selection` of a test at ``level`` per one-sided interval, of ``size`` draws per
    dataset, over ``pairs`` pairs (see :func:`select`). With ``shrink`` (a focused last round: its
    float-structure events were tested in earlier rounds) no test goes to float-structure events, and
    each pair and direction may supply every test of a ranking (the best of one direction may all win)."""
    margin_tests = tests // 2 if delta > 0 else (0 if shrink else tests // 4)
    bits_tests = 0 if shrink else tests // 4
    ratio_tests = tests - margin_tests - bits_tests
    share = 1 if shrink else 2 * pairs
    per_pair = [max(1, -(-count // share)) if count else 0 for count in (ratio_tests, margin_tests, bits_tests)]
    keep, keep_margin, keep_bits = per_pair
    return Selection(_Plan(delta, math.exp(epsilon), size, level, keep, keep_margin, keep_bits, shrink), ratio_tests,
                     margin_tests, bits_tests)


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
           size: int, tests: int = TESTS, shrink: float = 0.0) -> tuple[list[Candidate], int]:
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
    chosen = selection(len(pairs), epsilon=epsilon, delta=delta, level=level, size=size, tests=tests, shrink=shrink)
    pool, scored = candidates(((number, i, j) for number, (i, j) in enumerate(pairs)), summaries, chosen)
    return choose(pool, chosen), scored


def event_load(chosen: Sequence[Candidate]) -> tuple[int, int]:
    """How many datasets ``chosen`` draws and how many (dataset, event) counts it makes."""
    counted = {(side, c.event) for c in chosen for side in (c.first, c.second)}
    return len({side for side, _ in counted}), len(counted)


#: Standard errors a chosen event's selection frequencies are moved towards less ratio by when a last
#: round is focused (:func:`focused`, and its events chosen again): the best of many events came out
#: high on the selection draws by chance, a rare one most, and a larger test favours rarer events.
SHRINK = 1.0


def _rates(p_count: np.ndarray, p_size: np.ndarray, q_count: np.ndarray, q_size: np.ndarray,
           shrink: float) -> tuple[np.ndarray, np.ndarray]:
    """The frequencies of events on P's and Q's selection draws, each moved ``shrink`` standard errors
    (Wilson's) towards less ratio: down on P, up on Q (unmoved when ``shrink`` is 0)."""
    p_rate, q_rate = p_count / p_size, q_count / q_size
    if not shrink:
        return p_rate, q_rate
    return _wilson(p_rate, p_size, shrink)[0], _wilson(q_rate, q_size, shrink)[1]


def _predicted(validated: Sequence[Candidate], size: int, level: float, delta: float) -> float:
    """The largest bound on epsilon the events of ``validated`` are expected to give when tested on
    ``size`` draws per dataset at ``level`` per one-sided interval: their ``counts`` (on earlier test
    draws) moved one standard error towards less ratio, Wilson's interval for Clopper--Pearson's."""
    from scipy.special import ndtri

    values = [c for c in validated if c.kind != "bits"]
    if not values or size <= 0:
        return -math.inf
    counts = np.array([c.counts for c in values], dtype=np.float64)
    p_rate, q_rate = _rates(counts[:, 0], counts[:, 1], counts[:, 2], counts[:, 3], SHRINK)
    z = float(-ndtri(level))
    p_lower = _wilson(p_rate, size, z)[0]
    q_upper = _wilson(q_rate, size, z)[1]
    return float(np.max(log_ratio_bound(p_lower, q_upper, delta)))


def focused(chosen: list[Candidate], validated: list[Candidate], room: Any, *, level: float,
            delta: float) -> set[int] | None:
    """The pairs a last round should test alone, when fewer datasets drawn deeper are expected to bound
    more than all of ``chosen``; None when all of them are.

    A last round under a time budget draws only the datasets its events are on, as many times as the
    time left allows (``room(datasets, events)``: draws per dataset), and splits its level over its
    events: events spread over many pairs make every dataset's sample small. What an event will give
    is read off ``validated``: the previous round's value events with their counts on that round's
    TEST draws (drawn after they were chosen, so unbiased, unlike frequencies on the draws that chose
    them: the best of many events, a union of rare outcomes most, came out high there by chance). The
    pairs are ordered by their best validated event's expected bound at the full choice's size, and
    each prefix of that order is scored by the best bound its validated events are expected to give at
    the size and level that round would have (its events: ``chosen``'s and the validated ones on those
    pairs); the best prefix wins over the full choice only when strictly better. Everything here reads
    earlier draws and timings only, never the round's own test draws, so its bounds stay valid.
    """
    validated = [c for c in validated if c.kind != "bits"]
    if not validated or len({c.pair for c in chosen} | {c.pair for c in validated}) < 2:
        return None
    full_events = len(chosen)
    full = _predicted(validated, room(*event_load(chosen)), level / (2 * max(full_events, 1)), delta)
    best_of: dict[int, float] = {}
    for candidate in validated:
        bound = _predicted([candidate], room(*event_load(chosen)), level / (2 * max(full_events, 1)), delta)
        best_of[candidate.pair] = max(best_of.get(candidate.pair, -math.inf), bound)
    order = sorted(best_of, key=lambda pair: (-best_of[pair], pair))
    best, kept = full, None
    for length in range(1, len(order) + 1):
        pairs = set(order[:length])
        option = merged_events([c for c in chosen if c.pair in pairs], [c for c in validated if c.pair in pairs])
        expected = _predicted([c for c in validated if c.pair in pairs], room(*event_load(option)),
                              level / (2 * len(option)), delta)
        if expected > best:
            best, kept = expected, pairs
    return kept


def merged_events(first: list[Candidate], second: list[Candidate]) -> list[Candidate]:
    """``first``, then the events of ``second`` not already in it (one test per (P, Q, event))."""
    unique: dict[tuple[int, int, Any], Candidate] = {}
    for candidate in [*first, *second]:
        unique.setdefault((candidate.first, candidate.second, candidate.event), candidate)
    return list(unique.values())
