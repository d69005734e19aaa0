"""Private prediction: Li–Wang–Ye 2025 Lemma 19 (C6) and Section 4 / Theorem 20 (C7).

Realizable private prediction (after Dwork-Feldman 2018): split S into ``r`` disjoint parts, train
``g_i`` = a consistent concept on part ``i`` (representative rule, default ``first``; the first
empirical-risk minimiser if no concept is consistent), and answer a query ``x`` by aggregating the
votes ``g_1(x), ..., g_r(x)``. The paper leaves the aggregation open; the default is the
exponential mechanism over ``{0, 1}`` with score = vote count (sensitivity 1),
``P(y) ∝ exp(eps * votes(y) / 2)``, and ``"laplace"`` is the documented alternative: output 1 iff
``votes(1) + Lap(1/eps) > r/2``. Each record lies in exactly one part, so the answer is eps-DP for
every query. ``r = ceil(6 ln(4/alpha) / eps)`` (Lemma 19) unless given; parts are contiguous
(``numpy.array_split`` sizes); with parts of size 1 the answer ignores record order.

C7 runs A_Agnostic with this predictor at privacy 1 as the inner learner (:class:`PredictionLearner`,
parts of size 1 on the relabeled sample).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.special import expit

from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.finite.records import ConceptClass
from dpverify.validation import check_choice, check_integer, check_number, exact_number

__all__ = ["parts_for", "RealizablePredictor", "PredictionLearner", "AGGREGATIONS"]

AGGREGATIONS = ("exponential", "laplace", "mutant_exponential_without_half")


def parts_for(epsilon: float, alpha: float) -> int:
    """``r = ceil(6 ln(4 / alpha) / epsilon)`` (Li–Wang–Ye 2025, Lemma 19)."""
    check_number("alpha", alpha, above=0, at_most=1)
    return math.ceil(6 * math.log(4 / alpha) / epsilon)


def vote_answer(votes_for_one: Any, parts: int, epsilon: float, aggregation: str = "exponential") -> np.ndarray:
    """The aggregated answer's ``[..., (P(0), P(1))]`` for every vote count in ``votes_for_one``.

    ``"exponential"``: EM over {0, 1} with score = votes (sensitivity 1), ``P(y) ∝ exp(eps v_y / 2)``,
    i.e. ``P(1) = expit(eps (2 v - r) / 2)``; the mutant ``"mutant_exponential_without_half"`` drops
    the 1/2. ``"laplace"``: ``P(v + Lap(1/eps) > r/2)``, ``1/2 e^{-eps t}`` for ``t = r/2 - v >= 0``
    and ``1 - 1/2 e^{eps t}`` below.
    """
    votes = np.asarray(votes_for_one, dtype=float)
    if aggregation == "laplace":
        t = parts / 2 - votes
        one = np.where(t >= 0, 0.5 * np.exp(-np.abs(t) * epsilon), 1 - 0.5 * np.exp(-np.abs(t) * epsilon))
    else:
        scale = epsilon / 2 if aggregation == "exponential" else epsilon
        one = expit(scale * (2 * votes - parts))
    return np.stack([1 - one if aggregation == "laplace" else expit(-scale * (2 * votes - parts)), one], axis=-1)


def _aggregate(votes_for_one: float, parts: int, epsilon: float, aggregation: str) -> tuple[float, float]:
    """(P(0), P(1)) of the aggregated answer (:func:`vote_answer` on one count)."""
    p0, p1 = vote_answer(votes_for_one, parts, epsilon, aggregation)
    return float(p0), float(p1)


@functools.lru_cache(maxsize=4096)
def _exact_answer(votes_for_one: int, parts: int, epsilon: float, aggregation: str) -> Distribution:
    p0, p1 = _aggregate_exact(votes_for_one, parts, epsilon, aggregation)
    return Distribution({0: p0, 1: p1})


def _aggregate_exact(votes_for_one: int, parts: int, epsilon: float, aggregation: str) -> tuple:
    """(P(0), P(1)) as exact sympy numbers (epsilon read by :func:`dpverify.validation.exact_number`)."""
    import sympy

    eps = epsilon if isinstance(epsilon, sympy.Basic) else exact_number("epsilon", epsilon)
    eps = sympy.Rational(eps.numerator, eps.denominator) if isinstance(eps, Fraction) else eps
    if aggregation == "laplace":
        t = sympy.Rational(parts, 2) - votes_for_one
        one = sympy.exp(-t * eps) / 2 if t >= 0 else 1 - sympy.exp(t * eps) / 2
        return 1 - one, one
    scale = eps / 2 if aggregation == "exponential" else eps
    w0, w1 = sympy.exp(scale * (parts - votes_for_one)), sympy.exp(scale * votes_for_one)
    return w0 / (w0 + w1), w1 / (w0 + w1)


#: Distinct parts whose vote one predictor remembers (parts of one record: at most 2 |X|).
_PART_MEMO = 1 << 16


def _consistent_concept(concept_class: ConceptClass, part: tuple) -> int:
    mistakes = concept_class.mistakes(part)
    return int(np.argmin(mistakes))  # first consistent concept (or first ERM)


@dataclass(frozen=True)
class RealizablePredictor:
    """C6: an eps-DP prediction for one query ``x`` (Li–Wang–Ye 2025, Lemma 19): a callable dataset -> {0, 1}."""

    concept_class: ConceptClass
    epsilon: float
    query: int
    parts: int
    aggregation: str = "exponential"
    # Memos, outside equality, hashing and repr. The checker calls the predictor on every dataset and
    # every transposition of sampled ones (C6: 66,768 calls per row); a call was ~190 us of numpy per
    # part and a validated Distribution per call.
    _bounds: dict[int, tuple[tuple[int, int], ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False)  # len(dataset) -> part boundaries
    _part_votes: dict[tuple, int] = field(
        default_factory=dict, init=False, repr=False, compare=False)  # part -> g_i(query)
    _answers: dict[int, Distribution] = field(
        default_factory=dict, init=False, repr=False, compare=False)  # votes for 1 -> the answer

    def __post_init__(self) -> None:
        check_choice("aggregation", self.aggregation, AGGREGATIONS)
        check_integer("parts", self.parts)
        check_number("parts", self.parts, at_least=1, fix="split the sample into at least one part")

    @property
    def exchangeable(self) -> bool:
        return False

    def __call__(self, dataset: tuple) -> Distribution:
        votes = self._votes(dataset)
        answer = self._answers.get(votes)
        if answer is None:
            p0, p1 = _aggregate(votes, self.parts, self.epsilon, self.aggregation)
            answer = self._answers[votes] = Distribution({0: p0, 1: p1})  # immutable: shared safely
        return answer

    def exact_distribution(self, dataset: tuple) -> Distribution:
        """The same distribution in exact sympy numbers (used to certify near-tight pairs)."""
        return _exact_answer(self._votes(dataset), self.parts, self.epsilon, self.aggregation)

    def _votes(self, dataset: tuple) -> int:
        """``sum_i g_i(query)``, ``g_i`` the first consistent concept (or ERM) on part ``i``: each
        part's vote computed once per distinct part (:meth:`part_vote`)."""
        bounds = self._bounds.get(len(dataset))
        if bounds is None:
            if len(dataset) < self.parts:
                raise InvalidArgument(
                    f"the dataset has {len(dataset)} records but r={self.parts} parts were asked for; use n >= r."
                )
            sizes = [len(a) for a in np.array_split(np.arange(len(dataset)), self.parts)]
            ends = np.cumsum([0, *sizes]).tolist()
            bounds = self._bounds[len(dataset)] = tuple(zip(ends[:-1], ends[1:]))
        memo = self._part_votes
        votes = 0
        for lo, hi in bounds:
            part = tuple(dataset[lo:hi])
            vote = memo.get(part)
            if vote is None:
                vote = self.part_vote(part)
                if len(memo) < _PART_MEMO:
                    memo[part] = vote
            votes += vote
        return votes

    def part_vote(self, part: tuple) -> int:
        """``g(query)`` for the concept ``g`` trained on ``part``: the first consistent concept (or
        the first ERM) labels the query."""
        return self.concept_class.label(_consistent_concept(self.concept_class, part), self.query)


@dataclass(frozen=True)
class PredictionLearner:
    """C6 at privacy ``learner_epsilon`` with one part per record, answering ``query``: the inner
    learner of C7 (outcome = the predicted bit)."""

    concept_class: ConceptClass
    query: int
    learner_epsilon: float = 1.0
    aggregation: str = "exponential"
    name = "private_prediction"

    @property
    def delta(self) -> float:
        return 0.0

    def __call__(self, dataset: tuple) -> Distribution:
        return RealizablePredictor(self.concept_class, self.learner_epsilon, self.query, len(dataset), self.aggregation)(dataset)

    def on_labelings(self, point_counts: np.ndarray, representatives: np.ndarray, mistakes: np.ndarray) -> np.ndarray:
        C = self.concept_class.matrix
        k = int(point_counts.sum())
        # g for the single example (x, label): first concept with that label at x; its vote at query.
        vote_of = {
            (x, y): int(C[int(np.flatnonzero(C[:, x] == bool(y))[0]), self.query])
            for x in np.flatnonzero(point_counts).tolist() for y in (0, 1)
            if np.any(C[:, x] == bool(y))
        }
        out = np.zeros((len(representatives), 2))
        for row, rep in enumerate(representatives):
            votes = sum(int(point_counts[x]) * vote_of[(x, int(C[rep, x]))] for x in np.flatnonzero(point_counts).tolist())
            out[row] = _aggregate(votes, k, self.learner_epsilon, self.aggregation)
        return out
