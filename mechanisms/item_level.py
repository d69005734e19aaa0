"""Li–Wang–Ye 2024 Theorem 3.4 (proof in App. B): the item-level pure private agnostic learner (C14).

Inputs (the paper's symbols): a labeled dataset ``z = (z_1, ..., z_n)``, ``z_i = (x_i, y_i)``, a
concept class ``C``, a finite hypothesis family ``H`` and ``epsilon``. The learner

1. draws ``H ~ P`` from a probabilistic representation ``P`` of ``C`` — here ``H`` is either one
   given finite family or a finite distribution over families (:class:`HypothesisFamilies`); ``P``
   does not look at ``z``;
2. runs the exponential mechanism over ``H`` with privacy ``epsilon``, sensitivity
   ``Delta = 2/n`` and the surrogate score

       q(z, h) = min_{c in C} err_z(c) + dis_x(c, h),

   ``err_z(c) = (1/n) #{i : c(x_i) != y_i}``, ``dis_x(c, h) = (1/n) #{i : c(x_i) != h(x_i)}``
   (Section 3). Each term moves by at most ``1/n`` when one example is substituted, so ``q`` has
   sensitivity ``2/n`` and the learner is epsilon-DP (App. B; claim C14).

With ``Delta = 2/n`` the EM weight is ``exp(-epsilon q / (2 Delta)) = exp(-epsilon k(h) / 4)``
where ``k(h) = n q(z, h)`` is an integer. The output is the chosen hypothesis *as a function*: the
tuple of its labels on ``X = {0, ..., d-1}``, so equal functions of different families are one
outcome, and for a distribution over families the output distribution is the mixture
``sum_j pi_j EM_{H_j}(z)`` (a mixture of epsilon-DP mechanisms is epsilon-DP).

Number modes: float (default) or exact (``exact=True``: sympy, summing to exactly 1).
:meth:`ItemLevelLearner.exact_distribution` gives the exact values in either mode (used by
:func:`dpverify.verify` to certify tight pairs).

Mutants (docs/claims.md): ``ItemLevelLearner(..., selector=exponential_mechanism_without_half)`` drops
the EM's factor 1/2 (equivalently uses ``Delta = 1/n``: up to 2 epsilon), and
:class:`MutantFamilyFromData` builds ``H`` from the sample's own labels (``H`` then depends on
``z``: not private).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from numbers import Real
from typing import Any

import numpy as np

from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.finite.mechanism import TwoNumberModes, mutant
from dpverify.finite.records import ConceptClass, Dataset
from dpverify.validation import check_epsilon, check_probability, check_type, exact_number

from .exponential import exponential_mechanism

__all__ = [
    "HypothesisFamilies",
    "hypothesis_families",
    "ItemLevelLearner",
    "MutantFamilyFromData",
    "surrogate_counts",
    "select_hypothesis",
    "check_labeled_dataset",
    "exact_epsilon",
]

Selector = Callable[..., Distribution]
Labeling = tuple[int, ...]


@dataclass(frozen=True)
class HypothesisFamilies:
    """A finite distribution over finite hypothesis families (the paper's ``P``, data-independent).

    Attributes:
        families: the families, each a tuple of distinct labelings of ``X`` (tuples of 0/1).
        weights: their probabilities (Fractions summing to 1).
        domain_size: ``|X|``.
    """

    families: tuple[tuple[Labeling, ...], ...]
    weights: tuple[Fraction, ...]
    domain_size: int

    def __len__(self) -> int:
        return len(self.families)

    @property
    def hypotheses(self) -> tuple[Labeling, ...]:
        """Every hypothesis of every family, each once (order of first appearance)."""
        return tuple(dict.fromkeys(h for family in self.families for h in family))


def _rows(family: ConceptClass) -> tuple[Labeling, ...]:
    rows = tuple(tuple(int(v) for v in row) for row in family.matrix)
    return tuple(dict.fromkeys(rows))


def hypothesis_families(H: Any, *, domain_size: int | None = None) -> HypothesisFamilies:
    """Normalise ``H``: one :class:`ConceptClass`, or a distribution over classes.

    Args:
        H: a ConceptClass (one family, probability 1); a sequence of ``(probability, ConceptClass)``
            pairs; or a :class:`HypothesisFamilies` (returned as is).
        domain_size: if given, every family must be over ``X`` of this size.

    Returns:
        The families as labelings with exact (Fraction) probabilities; repeated rows of one family
        count once.

    Raises:
        InvalidArgument: anything else, a probability outside [0, 1] or not summing to 1, or
            families over different domains.
    """
    if isinstance(H, HypothesisFamilies):
        result = H
    elif isinstance(H, ConceptClass):
        result = HypothesisFamilies((_rows(H),), (Fraction(1),), H.domain_size)
    elif isinstance(H, Sequence) and not isinstance(H, (str, bytes)) and H:
        families, weights, sizes = [], [], set()
        for entry in H:
            if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], ConceptClass)):
                raise InvalidArgument(
                    f"a distribution over families is a list of (probability, ConceptClass) pairs, got "
                    f"the entry {entry!r}; pass e.g. [(Fraction(1, 2), H1), (Fraction(1, 2), H2)]."
                )
            weight = _probability(entry[0])
            families.append(_rows(entry[1]))
            weights.append(weight)
            sizes.add(entry[1].domain_size)
        if sum(weights) != 1:
            raise InvalidArgument(
                f"the family probabilities must sum to 1, got {[str(w) for w in weights]} (sum "
                f"{sum(weights)}); use Fractions such as Fraction(1, 3) to avoid rounding."
            )
        if len(sizes) != 1:
            raise InvalidArgument(
                f"every family must be over the same domain X, got domain sizes {sorted(sizes)}."
            )
        result = HypothesisFamilies(tuple(families), tuple(weights), sizes.pop())
    else:
        raise InvalidArgument(
            f"H must be a ConceptClass or a non-empty list of (probability, ConceptClass) pairs, got "
            f"H={H!r}; build a class with dpverify.finite.records.concept_class('thresholds', domain_size)."
        )
    if domain_size is not None and result.domain_size != domain_size:
        raise InvalidArgument(
            f"H is over a domain of size {result.domain_size} but C is over {domain_size} points; "
            "build both over the same X."
        )
    return result


def _probability(value: Any) -> Fraction:
    """A family probability (a rational in [0, 1]), read by :func:`dpverify.validation.exact_number`."""
    check_type("weight", value, Real, what="a family probability")
    return exact_number("weight", check_probability("weight", value, what="a family probability"))


def check_labeled_dataset(z: Any, domain_size: int, *, name: str = "z") -> Dataset:
    """``z`` as a tuple of examples ``(x, y)``, ``x`` in ``{0..domain_size-1}``, ``y`` in {0, 1}."""
    try:
        dataset = tuple(z)
    except TypeError:
        raise InvalidArgument(f"{name} must be a sequence of examples (x, y), got {name}={z!r}.") from None
    if not dataset:
        raise InvalidArgument(f"{name} must hold at least one example (Delta = 2/n), got an empty dataset.")
    for record in dataset:
        if (
            not isinstance(record, tuple)
            or len(record) != 2
            or isinstance(record[0], bool)
            or not isinstance(record[0], (int, np.integer))
            or not 0 <= record[0] < domain_size
            or record[1] not in (0, 1)
        ):
            raise InvalidArgument(
                f"{name} holds the example {record!r}; examples are (x, y) with x in "
                f"{{0, ..., {domain_size - 1}}} and y in {{0, 1}} (dpverify.finite.records.labeled_records)."
            )
    return dataset


def surrogate_counts(C: ConceptClass, family: Sequence[Labeling], z: Dataset) -> tuple[int, ...]:
    """``n q(z, h)`` for each ``h`` of ``family``: ``min_c #mistakes(c) + #disagreements(c, h)``.

    Args:
        C: the concept class.
        family: the hypotheses, as labelings of ``X``.
        z: the labeled dataset.

    Returns:
        One integer per hypothesis (``q(z, h)`` times ``n``).
    """
    mistakes = C.mistakes(z)  # (|C|,)
    xs = np.array([x for x, _ in z], dtype=np.int64)
    c_labels = C.matrix[:, xs]  # (|C|, n)
    h_labels = np.array(family, dtype=bool)[:, xs]  # (|H|, n)
    disagreements = (c_labels[:, None, :] != h_labels[None, :, :]).sum(axis=2)  # (|C|, |H|)
    return tuple(int(v) for v in (mistakes[:, None] + disagreements).min(axis=0))


def exact_epsilon(epsilon: Any) -> Any:
    """``epsilon`` (>= 0) as an exact number (:func:`dpverify.validation.exact_number`): a Fraction
    for int, Fraction and float (the simplest fraction that rounds to it: ``0.1`` is 1/10);
    irrational sympy numbers unchanged."""
    return exact_number("epsilon", check_epsilon(epsilon))


@lru_cache(maxsize=65536)
def select_hypothesis(counts: tuple[int, ...], family: tuple[Labeling, ...], n: int, epsilon: Any,
                      exact: bool, selector: Selector = exponential_mechanism) -> Distribution:
    """The EM step of Li–Wang–Ye 2024 Thm. 3.4 / 4.6: over ``family`` with scores ``q = k/n`` and ``Delta = 2/n``.

    Args:
        counts: ``k(h) = n q(z, h)`` per hypothesis (integers, as :func:`surrogate_counts`).
        family: the hypotheses (labelings), in the order of ``counts``.
        n: the number of examples (item level) or users (user level).
        epsilon: the EM's privacy parameter. exact: sympy probabilities.
        selector: the EM (``exponential_mechanism_without_half`` for the mutant).

    Returns:
        ``P(h) ∝ exp(-epsilon q / (2 Delta)) = exp(-epsilon k(h) / 4)`` (memoised).
    """
    scores = {h: Fraction(k, n) for h, k in zip(family, counts)}
    return selector(scores, epsilon=epsilon, sensitivity=Fraction(2, n), exact=exact)


class ItemLevelLearner(TwoNumberModes):
    """Li–Wang–Ye 2024 Thm. 3.4 / App. B: EM over ``H`` with the surrogate score (C14).

    Call it on a labeled dataset ``z``; it returns the distribution of the chosen hypothesis (a
    labeling tuple of ``X``). Declared exchangeable (the score is made of counts).

    Args:
        C: the concept class (the paper's ``C``).
        H: one finite family (a ConceptClass) or a distribution over families (see
            :func:`hypothesis_families`), drawn independently of the data.
        epsilon: the privacy parameter (>= 0).
        exact: False for float probabilities, True for exact sympy ones.
        selector: the EM (:func:`dpverify.mechanisms.exponential.exponential_mechanism`); pass
            ``exponential_mechanism_without_half`` for the mutant.

    Raises:
        InvalidArgument: C not a ConceptClass, a bad ``H``, or epsilon < 0.
    """

    exchangeable = True

    def __init__(self, C: ConceptClass, H: Any, *, epsilon: Any, exact: bool = False,
                 selector: Selector = exponential_mechanism) -> None:
        if not isinstance(C, ConceptClass):
            raise InvalidArgument(
                f"C must be a ConceptClass, got C={C!r}; build one with "
                "dpverify.finite.records.concept_class('thresholds', domain_size)."
            )
        self.C = C
        self.H = hypothesis_families(H, domain_size=C.domain_size)
        self.epsilon = exact_epsilon(epsilon)
        self.exact = exact
        self.selector = selector
        self.__name__ = type(self).__name__

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(C={self.C!r}, families={len(self.H)}, epsilon={self.epsilon}, "
                f"selector={getattr(self.selector, '__name__', self.selector)})")

    def scores(self, z: Dataset) -> dict[Labeling, Fraction]:
        """``q(z, h)`` for every hypothesis of every family (exact Fractions)."""
        z = check_labeled_dataset(z, self.C.domain_size)
        hypotheses = self.H.hypotheses
        return {h: Fraction(k, len(z)) for h, k in zip(hypotheses, surrogate_counts(self.C, hypotheses, z))}

    def families_for(self, z: Dataset) -> HypothesisFamilies:
        """The distribution over families used on ``z`` (data-independent here)."""
        return self.H

    def _distribution(self, z: Dataset, *, exact: bool) -> Distribution:
        z = check_labeled_dataset(z, self.C.domain_size)
        families = self.families_for(z)
        parts = []
        for weight, family in zip(families.weights, families.families):
            if weight == 0:
                continue
            counts = surrogate_counts(self.C, family, z)
            parts.append((weight, select_hypothesis(counts, family, len(z), self.epsilon, exact, self.selector)))
        if len(parts) == 1:
            return parts[0][1]
        return Distribution.mixture(parts)


@mutant(of=ItemLevelLearner, broken="the hypothesis family is built from the sample")
class MutantFamilyFromData(ItemLevelLearner):
    """Mutant of Li–Wang–Ye 2024 Thm. 3.4: ``H`` is built from the sample (``H ~ P`` must not look at ``z``).

    The family is ``C`` with every concept relabeled, on each point that ``z`` contains, to the
    sample's majority label there (ties: 1). Substituting one example changes the candidate set,
    so an outcome of positive probability on ``z`` can be impossible on a neighbour (eps* = inf).
    """

    def families_for(self, z: Dataset) -> HypothesisFamilies:
        votes: dict[int, int] = {}
        for x, y in z:
            votes[int(x)] = votes.get(int(x), 0) + (1 if y else -1)
        family = tuple(dict.fromkeys(
            tuple(int(votes[x] >= 0) if x in votes else int(row[x]) for x in range(self.C.domain_size))
            for row in self.C.matrix
        ))
        return HypothesisFamilies((family,), (Fraction(1),), self.C.domain_size)
