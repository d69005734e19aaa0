"""Output events and their exact Clopper–Pearson bounds.

An event ``S`` is a set of outputs. For a pair ``(D, D')`` and an event, ``(epsilon, delta)``-DP asks
``P(S) <= e^epsilon Q(S) + delta`` with ``P = M(D)``, ``Q = M(D')``, so
``epsilon >= ln((P(S) - delta) / Q(S))`` for every event with ``P(S) > delta``: a lower confidence bound
on ``P(S)`` and an upper one on ``Q(S)`` give a lower confidence bound on epsilon (the approach of
StatDP, Ding et al. CCS 2018, and DP-Sniper, Bichsel et al. IEEE S&P 2021, with exact binomial
intervals: Clopper, Pearson, Biometrika 26(4), 1934).

The events: :class:`Interval` (``s < o <= t`` on the output or one coordinate), :class:`OutcomeSet`
(a set of outcomes) and :class:`Derived` (either on a feature of the output,
:mod:`dpverify.checking.statistical._features`). Which events a run tests is chosen in
:mod:`dpverify.checking.statistical._selection`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.checking.statistical._features import reads_bits
from dpverify.checking.statistical._outputs import Outputs, is_number, items_of

__all__ = ["Interval", "OutcomeSet", "Derived", "Event", "clopper_pearson", "log_ratio_bound"]

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


#: The cache key of a batch's distinct vector rows and their counts (shared by its outcome events).
_ROWS = ("distinct rows",)


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
            tallied = None if cache is None else cache.get(_ROWS)
            if tallied is None:  # the distinct rows and their counts, once per batch of outputs
                rows = np.ascontiguousarray(outputs.values)
                keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
                _, first, counts = np.unique(keys, return_index=True, return_counts=True)
                tallied = {}
                for row, number in zip(map(tuple, rows[first].tolist()), counts.tolist()):  # -0.0 and 0.0: one row
                    tallied[row] = tallied.get(row, 0) + number
                if cache is not None:
                    cache[_ROWS] = tallied
            return sum(tallied.get(outcome, 0) for outcome in members if isinstance(outcome, tuple))
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
    :class:`OutcomeSet` on the feature's values; :mod:`dpverify.checking.statistical._features`). A feature is a
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
