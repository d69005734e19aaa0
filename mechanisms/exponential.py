"""The exponential mechanism (Li–Wang–Ye 2025, Lemma 11; claim C1 of docs/claims.md).

Over a finite candidate set ``H`` with a *loss* ``q(S, h)`` (lower is better) of sensitivity
``Delta`` (``max_h |q(S1, h) - q(S2, h)| <= Delta`` on neighbours), the mechanism outputs ``h``
with probability

    P(h) = exp(-epsilon * q(S, h) / (2 * Delta)) / sum_f exp(-epsilon * q(S, f) / (2 * Delta)),

and Lemma 11 states it is epsilon-DP (McSherry and Talwar, 2007). Two number modes:

* float (default): the weights are computed after subtracting the smallest score, so the best
  candidate has weight 1 and nothing overflows; a weight far below the best one can underflow to
  0, which drops that candidate from the support.
* exact (``exact=True``): sympy expressions ``exp(-epsilon * q / (2 * Delta)) / Z`` with rational
  ``epsilon``, ``q`` and ``Delta`` (floats are read as the binary rationals they are), checked to
  sum to exactly 1.

:func:`exponential_mechanism_without_half` is the known-broken mutant of docs/claims.md (the factor 2
dropped: ``P ∝ exp(-epsilon * q / Delta)``), which the checker must catch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import sympy

from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.finite.mechanism import mutant
from dpverify.finite.pair_sources import MultisetDatasets, OrderedDatasets
from dpverify.finite.records import Dataset, thresholds
from dpverify.validation import check_callable, check_epsilon, check_number, check_positive, check_type, exact_number

__all__ = [
    "exponential_mechanism",
    "exponential_rows",
    "exponential_mechanism_without_half",
    "exponential_mechanism_over",
    "threshold_learner",
    "ThresholdLearner",
]

Selector = Callable[..., Distribution]


def _check_sensitivity(sensitivity: Any) -> None:
    check_positive(
        "sensitivity", sensitivity,
        what="it is Delta, the largest change of the score between neighbouring datasets",
        fix="pass the score's sensitivity bound, e.g. sensitivity=1 for a count of mistakes",
    )


def _to_sympy(value: Any) -> sympy.Expr:
    """The exact sympy number for ``value``, read by :func:`dpverify.validation.exact_number` (a
    float is the simplest fraction that rounds to it: ``0.1`` is 1/10)."""
    if isinstance(value, sympy.Basic):
        return value
    number = exact_number("value", value)
    return sympy.Rational(number.numerator, number.denominator)


def _checked_scores(scores: Mapping[Hashable, Any]) -> dict[Hashable, Any]:
    check_type("scores", scores, Mapping, what="candidate -> score", fix="pass e.g. {'a': 0, 'b': 1}")
    if not scores:
        raise InvalidArgument("scores must hold at least one candidate, got an empty mapping.")
    for candidate, score in scores.items():
        check_number(f"scores[{candidate!r}]", score)
    return dict(scores)


def _select(
    scores: Mapping[Hashable, Any], epsilon: Any, sensitivity: Any, exact: bool, divisor: int
) -> Distribution:
    """P(h) ∝ exp(-epsilon * q(h) / (divisor * sensitivity)); ``divisor`` is 2 in the paper."""
    check_epsilon(epsilon)
    _check_sensitivity(sensitivity)
    checked = _checked_scores(scores)
    if exact:
        return _select_exact(checked, epsilon, sensitivity, divisor)
    scale = float(epsilon) / (divisor * float(sensitivity))
    best = min(float(score) for score in checked.values())
    weights = {h: math.exp(-scale * (float(score) - best)) for h, score in checked.items()}
    total = math.fsum(weights.values())
    return Distribution({h: weight / total for h, weight in weights.items()})


def _select_exact(
    scores: Mapping[Hashable, Any], epsilon: Any, sensitivity: Any, divisor: int
) -> Distribution:
    scale = _to_sympy(epsilon) / (divisor * _to_sympy(sensitivity))
    weights = {h: sympy.exp(-scale * _to_sympy(score)) for h, score in scores.items()}
    normaliser = sympy.Add(*weights.values())
    probabilities = {h: weight / normaliser for h, weight in weights.items()}
    total = sympy.Add(*probabilities.values())
    if sympy.together(total) != 1 and sympy.simplify(total - 1) != 0:
        raise ArithmeticError(
            f"exact exponential mechanism: the probabilities sum to {total}, not provably 1; "
            "this is a bug in dpverify, please report it with the scores."
        )
    return Distribution(probabilities)


def exponential_rows(log_weights: np.ndarray) -> np.ndarray:
    """The exponential mechanism on every row at once: ``P[..., h] ∝ exp(log_weights[..., h])``.

    ``log_weights`` is ``-epsilon * q / (2 Delta)`` for each candidate (last axis); the largest is
    subtracted first, so nothing overflows (float64; the vectorised form of
    :func:`exponential_mechanism` used by the fast tables).
    """
    weights = np.exp(log_weights - log_weights.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True)


def exponential_mechanism(
    scores: Mapping[Hashable, Any], *, epsilon: Any, sensitivity: Any, exact: bool = False
) -> Distribution:
    """Li–Wang–Ye 2025 Lemma 11 (C1): the exponential mechanism over a loss.

    ``P(h) ∝ exp(-epsilon * q(h) / (2 * Delta))``: lower scores are more likely.

    Args:
        scores: candidate -> loss ``q(S, h)`` on the dataset at hand (finite reals).
        epsilon: the privacy parameter (>= 0).
        sensitivity: Delta, the score's sensitivity (> 0).
        exact: False for float probabilities (stable: the minimum score is subtracted); True for
            sympy expressions ``exp(-epsilon * q / (2 * Delta)) / Z`` that sum to exactly 1.

    Returns:
        The output distribution over the candidates.

    Raises:
        InvalidArgument: empty or non-numeric scores, epsilon < 0, or sensitivity <= 0.
    """
    return _select(scores, epsilon, sensitivity, exact, divisor=2)


@mutant(of=exponential_mechanism, broken="the factor 1/2 dropped: P ∝ exp(-eps q / Delta), up to 2 eps")
def exponential_mechanism_without_half(
    scores: Mapping[Hashable, Any], *, epsilon: Any, sensitivity: Any, exact: bool = False
) -> Distribution:
    """Mutant of Li–Wang–Ye 2025 Lemma 11 (docs/claims.md, mutants): the factor 2 dropped.

    ``P(h) ∝ exp(-epsilon * q(h) / Delta)``: only (2 * epsilon)-DP in general, so an epsilon-DP
    claim about it must be reported violated. Arguments as :func:`exponential_mechanism`.
    """
    return _select(scores, epsilon, sensitivity, exact, divisor=1)


def exponential_mechanism_over(
    candidates: Iterable[Hashable],
    score: Callable[[Dataset, Hashable], Any],
    *,
    epsilon: Any,
    sensitivity: Any,
    exact: bool = False,
    exchangeable: bool = False,
    selector: Selector = exponential_mechanism,
) -> Callable[[Dataset], Distribution]:
    """Li–Wang–Ye 2025 Lemma 11 (C1): the exponential mechanism as a dataset mechanism.

    Args:
        candidates: the finite output set H (hashable, non-empty).
        score: ``score(dataset, h)``, the loss q(S, h) (lower is better).
        epsilon: the privacy parameter (>= 0).
        sensitivity: Delta, the score's sensitivity (> 0).
        exact: as in :func:`exponential_mechanism`.
        exchangeable: True only if ``score`` ignores the order of the records; the returned
            callable is then marked ``.exchangeable = True`` for the checker (which tests it).
        selector: the selection step, :func:`exponential_mechanism` by default; pass
            :func:`exponential_mechanism_without_half` to build the mutant.

    Returns:
        A callable ``dataset -> Distribution`` over ``candidates``.

    Raises:
        InvalidArgument: no candidates, epsilon < 0 or sensitivity <= 0 (checked here, before any
            dataset is seen).
    """
    pool = tuple(candidates)
    if not pool:
        raise InvalidArgument("candidates must be non-empty, got an empty collection.")
    check_callable("score", score, fix="pass a function (dataset, candidate) -> loss")
    check_epsilon(epsilon)
    _check_sensitivity(sensitivity)

    def mechanism(dataset: Dataset) -> Distribution:
        scores = {h: score(dataset, h) for h in pool}
        return selector(scores, epsilon=epsilon, sensitivity=sensitivity, exact=exact)

    mechanism.__name__ = f"{getattr(selector, '__name__', 'selector')}_over"
    if exchangeable:
        mechanism.exchangeable = True  # type: ignore[attr-defined]
    return mechanism


class ThresholdLearner:
    """Li–Wang–Ye 2025 Lemma 11 (C1) as a picklable value: EM over thresholds, score = mistakes.

    Calling it on a dataset gives the distribution over threshold indices; ``distributions(datasets)``
    (float mode only) gives every dataset's row at once, the vectorised form the checker uses.
    Being a module-level class, it travels to worker processes (``verify(..., executor=...)``).
    """

    exchangeable = True

    def __init__(self, domain_size: int, epsilon: Any, exact: bool, selector: Selector) -> None:
        self.domain_size, self.epsilon, self.exact, self.selector = domain_size, epsilon, exact, selector
        self.concepts = thresholds(domain_size)
        check_epsilon(epsilon)
        self.__name__ = f"threshold_learner_{getattr(selector, '__name__', 'selector')}"
        # one row per record (x, y): which thresholds mislabel it
        records = [(x, y) for x in range(domain_size) for y in (0, 1)]
        self._record_index: dict[Hashable, int] = {record: i for i, record in enumerate(records)}
        self._record_mistakes = np.array(
            [[int(self.concepts.label(u, x) != y) for u in range(len(self.concepts))] for x, y in records], dtype=np.int64
        )

    def __call__(self, dataset: Dataset) -> Distribution:
        scores = {u: sum(1 for x, y in dataset if self.concepts.label(u, x) != y) for u in range(len(self.concepts))}
        return self.selector(scores, epsilon=self.epsilon, sensitivity=1, exact=self.exact)

    @property
    def distributions(self) -> Callable[[Sequence[tuple]], tuple[list, np.ndarray]] | None:
        """``datasets -> (threshold indices, float64 rows)`` (None in exact mode: the checker then
        calls the mechanism per dataset). The ``divisor`` is 2 for :func:`exponential_mechanism`
        and 1 for its mutant."""
        if self.exact or self.selector not in (exponential_mechanism, exponential_mechanism_without_half):
            return None
        return self._rows

    def _rows(self, datasets: Sequence[tuple]) -> tuple[list, np.ndarray]:
        divisor = 2 if self.selector is exponential_mechanism else 1
        index = self._record_index
        scores: np.ndarray
        if isinstance(datasets, MultisetDatasets):  # count vectors: mistakes weighted by multiplicity
            own = np.array([index[record] for record in datasets.records], dtype=np.int64)
            scores = datasets.counts() @ self._record_mistakes[own]  # integers: exact
        else:
            if isinstance(datasets, OrderedDatasets):  # positions in their record universe, no tuples
                codes = np.array([index[record] for record in datasets.records], dtype=np.int64)[datasets.indices()]
            else:
                codes = np.array([[index[record] for record in dataset] for dataset in datasets], dtype=np.int64)
            scores = self._record_mistakes[codes].sum(axis=1) if len(datasets) else np.zeros((0, len(self.concepts)))
        return list(range(len(self.concepts))), exponential_rows(-float(self.epsilon) / divisor * scores)


def threshold_learner(
    domain_size: int,
    *,
    epsilon: Any,
    exact: bool = False,
    selector: Selector = exponential_mechanism,
) -> Callable[[Dataset], Distribution]:
    """Li–Wang–Ye 2025 Lemma 11 (C1): EM over thresholds, score = number of mistakes.

    The candidates are the threshold indices ``u = 0, ..., domain_size`` of
    :func:`dpverify.finite.records.thresholds` (``c_u(x) = 1`` iff ``x >= u``); the score of ``u`` is the
    number of records ``(x, y)`` with ``c_u(x) != y``, which changes by at most 1 when one record is
    substituted, so Delta = 1. Declared exchangeable (the count ignores order).

    Args:
        domain_size: ``|X|`` (>= 1).
        epsilon: the privacy parameter (>= 0).
        exact: as in :func:`exponential_mechanism`.
        selector: :func:`exponential_mechanism` (default) or the mutant
            :func:`exponential_mechanism_without_half`.

    Returns:
        A callable ``dataset -> Distribution`` over threshold indices, ``.exchangeable = True``.
    """
    from dpverify.finite.records import labeled_records

    labeled_records(domain_size)  # checks domain_size
    return ThresholdLearner(domain_size, epsilon, exact, selector)
