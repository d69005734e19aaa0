"""Alon–Bassily–Moran 2019 Algorithm 1 (ASSPP), the semi-supervised semi-private learner (C13).

Inputs (the paper's symbols): a private labeled sample ``S_priv`` of ``n_priv`` records ``(x, y)``,
a public unlabeled sample ``T_pub`` of points, a class ``H`` and ``epsilon``.

1. ``T~`` = the distinct points of ``T_pub`` (step 1);
2. ``H~_{T_pub}`` = one representative concept per labeling in ``Pi_H(T~)`` (steps 2-5);
3. the exponential mechanism over ``H~`` with score ``q(S_priv, h) = -err^(h; S_priv)``, the
   fraction of ``S_priv`` that ``h`` mislabels, of sensitivity ``Delta = 1/n_priv`` (step 6):
   ``P(h) ∝ exp(-epsilon * err^(h; S_priv) / (2 Delta)) = exp(-epsilon * mistakes(h) / 2)``.

The output is the chosen concept, as its index in the class order of
:class:`dpverify.finite.records.ConceptClass`. Lemma 3.2: for every fixed ``T_pub``, ``ASSPP(., T_pub)`` is
epsilon-DP w.r.t. ``S_priv`` (neighbours substitute one private example; ``T_pub`` is the same on
both sides) — check it with :func:`dpverify.checking.public_data.verify_with_public_data`.

Where the paper is open, this module chooses:

* step 5 takes "arbitrary h" consistent with the labeling: the ``representative`` rule of
  :meth:`ConceptClass.labelings` (default ``"first"``, the lowest index in class order);
* ``T_pub`` is a tuple in ``X^{n_pub}``; only its set of distinct points is used (step 1), so its
  order and multiplicities do not change the output; ``n_pub = 0`` is allowed (one labeling, the
  empty one: the output is a fixed concept);
* the sensitivity ``Delta = 1/n_priv`` is the replace-one sensitivity of ``err^``; the lemma is about
  that relation (under add/remove the sample size, hence ``Delta``, changes).

Number modes: float (default) or exact (``exact=True``: sympy ``exp`` expressions summing to exactly
1). In float mode :meth:`ASSPP.exact_distribution` offers the exact values, which
:func:`dpverify.verify` uses to certify pairs at exactly the claimed epsilon.

Mutants (docs/claims.md): :class:`MutantCoverWithPrivatePoints` builds ``H~`` from ``T~`` together with
the private points (the candidate set then depends on the private data: not private), and
``ASSPP(..., selector=exponential_mechanism_without_half)`` drops the factor 2 (only 2 epsilon-DP).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from fractions import Fraction
from functools import lru_cache
from typing import Any

from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.finite.mechanism import mutant
from dpverify.finite.records import ConceptClass, Dataset, RepresentativeRule
from dpverify.validation import check_epsilon

from ._memo import BoundedMemo
from .exponential import exponential_mechanism

__all__ = ["ASSPP", "MutantCoverWithPrivatePoints"]


Selector = Callable[..., Distribution]


class ASSPP:
    """Alon–Bassily–Moran 2019 Algorithm 1: EM over the public sample's labelings (C13).

    Call it as ``asspp(T_pub, S_priv)``; it is declared exchangeable in ``S_priv`` (the score is a
    count), which the checker tests before using it.

    Args:
        H: the concept class (the paper's ``H``).
        epsilon: the privacy parameter (>= 0).
        representative: step 5's choice of ``h`` per labeling (``"first"``, ``"last"`` or a rule;
            see :meth:`ConceptClass.labelings`).
        exact: False for float probabilities, True for exact sympy ones.
        selector: the selection step, :func:`dpverify.mechanisms.exponential.exponential_mechanism`; pass
            ``exponential_mechanism_without_half`` for the mutant.

    Raises:
        InvalidArgument: ``H`` not a ConceptClass, or epsilon < 0.
    """

    exchangeable = True

    def __init__(
        self,
        H: ConceptClass,
        *,
        epsilon: Any,
        representative: RepresentativeRule = "first",
        exact: bool = False,
        selector: Selector = exponential_mechanism,
    ) -> None:
        if not isinstance(H, ConceptClass):
            raise InvalidArgument(
                f"H must be a ConceptClass, got H={H!r}; build one with "
                "dpverify.finite.records.concept_class('thresholds', domain_size)."
            )
        check_epsilon(epsilon)
        self.H = H
        self.epsilon = epsilon
        self.representative = representative
        self.exact = exact
        self.selector = selector
        self._outputs: BoundedMemo[Distribution] = BoundedMemo()  # see _distribution
        self.__name__ = type(self).__name__

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.H!r}, epsilon={self.epsilon!r}, "
            f"representative={self.representative!r}, selector={self.selector.__name__})"
        )

    def cover(self, T_pub: Iterable[int]) -> dict[tuple[int, ...], int]:
        """``H~_{T_pub}`` (steps 1-5): labeling of ``T~ = sorted(set(T_pub))`` -> concept index."""
        return self.H.labelings(self._check_public(T_pub), representative=self.representative)

    def candidates(self, T_pub: Iterable[int], S_priv: Dataset) -> tuple[int, ...]:
        """The concept indices the exponential mechanism chooses among (class order)."""
        return tuple(sorted(self.cover(T_pub).values()))

    def __call__(self, T_pub: Iterable[int], S_priv: Dataset) -> Distribution:
        """The output distribution over concept indices (float, or exact if ``exact``)."""
        return self._distribution(T_pub, S_priv, exact=self.exact)

    def exact_distribution(self, T_pub: Iterable[int], S_priv: Dataset) -> Distribution:
        """The exact (sympy) output distribution, whatever the number mode."""
        return self._distribution(T_pub, S_priv, exact=True)

    def _distribution(self, T_pub: Iterable[int], S_priv: Dataset, *, exact: bool) -> Distribution:
        """The selection over the candidates, memoised by what it depends on: the candidates and the
        private sample as a multiset (its mistake counts and size). The checker's transpositions of
        private records (C13: ~23,600 calls per row) share one Distribution."""
        T_pub = self._check_public(T_pub)
        S_priv = self._check_private(S_priv)
        pool = self.candidates(T_pub, S_priv)
        key = (pool, tuple(sorted(S_priv)), exact)
        return self._outputs.get_or_compute(key, lambda: self._select(pool, S_priv, exact))

    def _select(self, pool: tuple[int, ...], S_priv: Dataset, exact: bool) -> Distribution:
        mistakes = self.H.mistakes(S_priv)
        counts = tuple(int(mistakes[h]) for h in pool)
        if exact:
            return _exact_selection(pool, counts, len(S_priv), self.epsilon, self.selector)
        n_priv = len(S_priv)
        scores = {h: m / n_priv for h, m in zip(pool, counts)}  # err^(h; S_priv)
        return self.selector(scores, epsilon=self.epsilon, sensitivity=1 / n_priv)

    def _check_public(self, T_pub: Iterable[int]) -> tuple[int, ...]:
        try:
            points = tuple(T_pub)
        except TypeError:
            raise InvalidArgument(
                f"T_pub must be a sequence of points of X = {{0, ..., {self.H.domain_size - 1}}}, got "
                f"T_pub={T_pub!r}; pass e.g. T_pub=(0, 2)."
            ) from None
        for x in points:
            if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < self.H.domain_size:
                raise InvalidArgument(
                    f"T_pub={points!r} holds the point {x!r}, outside X = {{0, ..., "
                    f"{self.H.domain_size - 1}}} of the class {self.H.name!r}; public points are "
                    "unlabeled integers of the domain."
                )
        return points

    def _check_private(self, S_priv: Dataset) -> Dataset:
        dataset = tuple(S_priv)
        if not dataset:
            raise InvalidArgument(
                "S_priv must hold at least one record (Delta = 1/n_priv), got an empty sample."
            )
        for record in dataset:
            if (
                not isinstance(record, tuple)
                or len(record) != 2
                or not isinstance(record[0], int)
                or not 0 <= record[0] < self.H.domain_size
                or record[1] not in (0, 1)
            ):
                raise InvalidArgument(
                    f"S_priv holds the record {record!r}; private records are labeled examples "
                    f"(x, y) with x in {{0, ..., {self.H.domain_size - 1}}} and y in {{0, 1}}, e.g. "
                    "from dpverify.finite.records.labeled_records(domain_size)."
                )
        return dataset


@mutant(of=ASSPP, broken="the candidate set built with the private points")
class MutantCoverWithPrivatePoints(ASSPP):
    """Mutant of Alon–Bassily–Moran 2019 Alg. 1: ``H~`` built from ``T~`` together with the private points.

    The candidate set then depends on ``S_priv``: substituting one private example can add a
    candidate with positive probability that the neighbour never outputs (eps* = inf).
    """

    def candidates(self, T_pub: Iterable[int], S_priv: Dataset) -> tuple[int, ...]:
        points = tuple(T_pub) + tuple(x for x, _ in S_priv)
        return tuple(sorted(self.H.labelings(points, representative=self.representative).values()))


@lru_cache(maxsize=4096)
def _exact_selection(
    pool: tuple[int, ...], mistakes: tuple[int, ...], n_priv: int, epsilon: Any, selector: Selector
) -> Distribution:
    scores = {h: Fraction(m, n_priv) for h, m in zip(pool, mistakes)}
    return selector(scores, epsilon=epsilon, sensitivity=Fraction(1, n_priv), exact=True)

