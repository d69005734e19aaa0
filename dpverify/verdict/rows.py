"""Worst case over pairs of probability rows, for the audit's fast paths — through the one engine.

The audit computes mechanisms' output distributions as rows of a float64 matrix (one row per
dataset, or per conditioned run such as ``A_Relabel(t, w)``). :func:`decide_rows` hands such rows
to :func:`dpverify.verdict.engine.decide` (sweep, certification, verdict state, witness checked against the
relation); :func:`decide_parts` does the same for a claim made of parts (every query, every public
sample, every fixed ``T``) and combines the verdicts. :func:`worst_over_pairs` is the engine's
float sweep alone, for measured figures that carry no verdict (privacy profiles, sweeps).

Rows computed by the fast paths are float64 values of sums, products and quotients of positive
terms: they carry the engine's default float error (:data:`dpverify.verdict.engine.DEFAULT_FLOAT_ERROR`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.finite.neighbors import RELATIONS
from dpverify.verdict.engine import Decision, RowPairs, Sweep, Verdict, decide, sweep
from dpverify.verdict.witness import Witness

__all__ = [
    "PairwiseWorst",
    "PartsDecision",
    "decide_rows",
    "decide_parts",
    "multiset_neighbors",
    "pairwise_worst",
    "worst_over_pairs",
    "log_rows",
]


#: The float sweep's worst case over pairs (eps*, delta*, the pairs attaining them).
PairwiseWorst = Sweep


def log_rows(matrix: np.ndarray) -> np.ndarray:
    """``ln`` of a probability matrix, ``-inf`` at zeros (computed once, gathered per pair)."""
    with np.errstate(divide="ignore"):
        return np.log(matrix)


def worst_over_pairs(
    matrix: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    *,
    epsilon: float,
    symmetric: bool = True,
    logs: np.ndarray | None = None,
    with_delta: bool = True,
) -> PairwiseWorst:
    """The engine's float sweep over index pairs into ``matrix`` (rows = distributions): a
    measurement, not a verdict (use :func:`decide_rows` for that)."""
    rows = RowPairs(matrix, left, right, symmetric=symmetric, _logs=logs)
    return sweep(rows, float(epsilon), with_delta=with_delta)


def pairwise_worst(left: np.ndarray, right: np.ndarray, *, epsilon: float, symmetric: bool = True) -> PairwiseWorst:
    """:func:`worst_over_pairs` over row pairs ``(left[i], right[i])`` of two matrices."""
    count = left.shape[0]
    index = np.arange(count)
    return worst_over_pairs(np.vstack([left, right]), index, index + count, epsilon=epsilon, symmetric=symmetric)


def multiset_neighbors(a: tuple, b: tuple) -> bool:
    """Replace-one neighbours as multisets (the exchangeable relation of the audit's tables)."""
    return RELATIONS["substitute"].is_neighbor(a, b, exchangeable=True)


def decide_rows(
    matrix: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    *,
    epsilon: Any,
    delta: Any = 0.0,
    symmetric: bool = True,
    label: Callable[[int], Any] | None = None,
    is_neighbor: Callable[[Any, Any], bool] | None = None,
    outcomes: Any = None,
    pair_delta: np.ndarray | None = None,
    logs: np.ndarray | None = None,
    executor: Any = None,
) -> Decision:
    """Decide ``(epsilon, delta)`` over row pairs with :func:`dpverify.verdict.engine.decide` (the sweep on
    ``executor``, :mod:`dpverify.parallel.executors`)."""
    rows = RowPairs(
        matrix, left, right, symmetric=symmetric, outcomes=outcomes, label=label, is_neighbor=is_neighbor,
        pair_delta=pair_delta, _logs=logs, executor=executor,
    )
    return decide(rows, epsilon, delta)


@dataclass(frozen=True)
class PartsDecision:
    """A claim decided part by part (queries, public samples, fixed T): the combined verdict, the
    worst figures over parts, and the first violating part's witness (or the first part within
    rounding)."""

    verdict: Verdict
    epsilon_star: float
    delta_star: float
    epsilon_part: Any
    delta_part: Any
    witness_part: Any
    decision: Decision | None  # the decision of the witness part

    @property
    def holds(self) -> bool:
        return self.verdict.passes

    @property
    def witness(self) -> Witness | None:
        """The witness part's witness (None when the claim holds)."""
        return None if self.decision is None else self.decision.witness

    def witness_of(self, describe: Callable[[Any], str] | None = None) -> tuple[Witness | None, str | None]:
        """The witness and ``describe(part)`` of its part (e.g. ``"query x = 2"``), or ``(None, None)``."""
        if self.witness is None:
            return None, None
        return self.witness, None if describe is None else describe(self.witness_part)

    def witness_text(self, describe: Callable[[Any], str] | None = None) -> str | None:
        """The witness as text, prefixed by ``describe(part)`` (e.g. ``"query x = 2"``)."""
        found, part = self.witness_of(describe)
        if found is None:
            return None
        return ("" if part is None else part + "\n") + str(found)


def decide_parts(parts: Iterable[tuple[Any, Decision]]) -> PartsDecision:
    """Combine per-part decisions (each from the engine) into one verdict."""
    best_eps, eps_part, best_delta, delta_part = -np.inf, None, -np.inf, None
    verdicts = []
    chosen: tuple[Any, Decision] | None = None
    for part, decision in parts:
        verdicts.append(decision.verdict)
        if decision.epsilon_star > best_eps:
            best_eps, eps_part = decision.epsilon_star, part
        if decision.delta_star > best_delta:
            best_delta, delta_part = decision.delta_star, part
        if decision.verdict is Verdict.VIOLATED and (chosen is None or chosen[1].verdict is not Verdict.VIOLATED):
            chosen = (part, decision)
        elif decision.verdict is Verdict.HOLDS_WITHIN_ROUNDING and chosen is None:
            chosen = (part, decision)
    verdict = Verdict.combine(verdicts)
    if verdict not in (Verdict.VIOLATED, Verdict.HOLDS_WITHIN_ROUNDING):
        chosen = None
    return PartsDecision(
        verdict, max(best_eps, 0.0), max(best_delta, 0.0), eps_part, delta_part,
        None if chosen is None else chosen[0], None if chosen is None else chosen[1],
    )
