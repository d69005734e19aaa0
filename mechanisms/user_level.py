"""The user-level learner of Li–Wang–Ye 2024, Thm. 4.6 (proof C.4): PrivateMinError, then EM.

1. ``eta^ ~ PrivateMinError(z, eps/2, alpha/6)`` (C.4 runs Lemma 4.5 at privacy ``eps/2`` to
   accuracy ``alpha/6``, so ``T = ceil(log2(12/alpha))``; override with ``min_error_alpha``);
2. ``t = separating_level(m, eta^ + alpha/6, eta^ + alpha/3)`` (C.4, Lemma 4.1), ``s = 0`` (C.4:
   "actually, s = 0");
3. the exponential mechanism at ``eps/2`` over ``H`` with ``q(z, h) = min_c err^t_z(c) +
   dis^s_x(c, h)``, ``Delta = 2/n``. Basic composition: eps-DP at user level.

The learner outputs ``h`` (a labeling of X); ``reveal_estimate=True`` outputs ``(eta^, h)``, which
basic composition also covers (a stronger check). The proofs discard extra samples when
``m > 1/alpha``; we use every sample (privacy is unaffected).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from dpverify.finite.distribution import Distribution
from dpverify.finite.mechanism import TwoNumberModes, mutant
from dpverify.finite.records import ConceptClass

from ._memo import BoundedMemo
from .exponential import exponential_mechanism
from .item_level import hypothesis_families, select_hypothesis
from .private_min_error import PrivateMinError
from .user_data import (
    Selector,
    UserDataset,
    _check_class,
    _check_m,
    _disagreements,
    _level,
    _mistakes,
    _positive_epsilon,
    _positive_fraction,
    check_user_dataset,
    separating_level,
)

__all__ = ["UserLevelLearner", "MutantUserLevelWithoutComposition"]


# -- the user-level learner (Thm. 4.6) ----------------------------------------------------------


class UserLevelLearner(TwoNumberModes):
    """Li–Wang–Ye 2024 Thm. 4.6 (proof C.4): PrivateMinError at eps/2, then EM at eps/2 (C15).

    1. ``eta^ ~ PrivateMinError(z, eps/2, alpha_min)`` with ``alpha_min = alpha/6`` (C.4 asks
       ``|eta^ - eta| <= alpha/6``; override with ``min_error_alpha``);
    2. ``t = separating_level(m, eta^ + alpha/6, eta^ + alpha/3)`` (C.4, Lemma 4.1), ``s = 0``;
    3. the exponential mechanism over ``H`` (one family, or a distribution over families drawn
       independently of ``z``) at ``eps/2`` with ``q(z, h) = min_c err^t_z(c) + dis^s_x(c, h)``,
       ``Delta = 2/n``: weight ``exp(-(eps/2) q / (2 Delta)) = exp(-eps k / 8)``, ``k = n q``.

    Output: the hypothesis ``h`` as a labeling tuple of ``X`` (``(eta^, h)`` with
    ``reveal_estimate=True``). Declared exchangeable (everything is a count over users; each
    user's examples are used as a multiset, so the order inside a block does not matter either).

    Args:
        C: the concept class. H: a ConceptClass or ``[(probability, ConceptClass), ...]``.
        m: examples per user. epsilon: the total privacy parameter. alpha: Thm. 4.6's accuracy.
        s: the disagreement level (0, as in C.4). min_error_alpha: Alg. 2's accuracy (alpha/6).
        reveal_estimate: output ``(eta^, h)`` instead of ``h``. exact: sympy probabilities.
        selector: the EM (``exponential_mechanism_without_half`` for the mutant).
        noise_factor: PrivateCompare's Laplace scale multiplier (1/2 for the mutant).
    """

    exchangeable = True

    def __init__(self, C: ConceptClass, H: Any, *, m: int, epsilon: Any, alpha: Any = 1, s: int = 0,
                 min_error_alpha: Any = None, reveal_estimate: bool = False, exact: bool = False,
                 selector: Selector = exponential_mechanism, noise_factor: Any = 1) -> None:
        self.C = _check_class(C)
        self.H = hypothesis_families(H, domain_size=C.domain_size)
        self.m = _check_m(m)
        self.epsilon = _positive_epsilon(epsilon)
        self.alpha = _positive_fraction("alpha", alpha)
        self.s = _level("s", s, self.m)
        alpha_min = self.alpha / 6 if min_error_alpha is None else min_error_alpha
        min_error_epsilon, self.em_epsilon = self._split_epsilon()
        self.min_error = PrivateMinError(C, m=m, epsilon=min_error_epsilon, alpha=alpha_min,
                                         noise_factor=noise_factor)
        self.reveal_estimate = reveal_estimate
        self.exact = exact
        self.selector = selector
        self._h_labels = [np.array(family, dtype=bool) for family in self.H.families]
        self._levels: dict[Fraction, int] = {}
        self._outputs: BoundedMemo[Distribution] = BoundedMemo()  # see _distribution
        self.__name__ = type(self).__name__

    def _split_epsilon(self) -> tuple[Any, Any]:
        """(PrivateMinError's, the EM's) privacy: ``eps/2`` each (C.4, basic composition)."""
        return self.epsilon / 2, self.epsilon / 2

    def level_for(self, eta_hat: Fraction) -> int:
        """``t`` from ``eta^`` (C.4): ``separating_level(m, eta^ + alpha/6, eta^ + alpha/3)``."""
        if eta_hat not in self._levels:
            self._levels[eta_hat] = separating_level(self.m, eta_hat + self.alpha / 6, eta_hat + self.alpha / 3)
        return self._levels[eta_hat]

    def scores(self, z: Any, *, t: int) -> list[dict[tuple[int, ...], Fraction]]:
        """``q(z, h)`` per family at level ``t`` (exact Fractions)."""
        users = check_user_dataset(z, self.m, range(self.C.domain_size))
        return [{h: Fraction(k, len(users)) for h, k in zip(family, counts)}
                for family, counts in zip(self.H.families, self._counts(users, t))]

    def _counts(self, users: UserDataset, t: int) -> list[tuple[int, ...]]:
        errors = (_mistakes(self.C.matrix, users) > t).sum(axis=0)  # (|C|,)
        out = []
        for labels in self._h_labels:
            dis = (_disagreements(self.C.matrix, labels, users) > self.s).sum(axis=0)  # (|C|, |H|)
            out.append(tuple(int(v) for v in (errors[:, None] + dis).min(axis=0)))
        return out

    def _distribution(self, z: Any, *, exact: bool) -> Distribution:
        """The output given only what it depends on: ``n``, ``n min_c err^t_z(c)`` for every ``t``
        (PrivateMinError's estimate) and the EM's counts at the levels those estimates select.
        Datasets alike in these (the checker's transpositions of users, relabelled blocks) share
        one memoised Distribution: C15 at n = 3 built 4,920 mixtures of 64 outcomes, most repeats."""
        users = check_user_dataset(z, self.m, range(self.C.domain_size))
        n = len(users)
        minima = self.min_error.minima(users)
        estimates = self.min_error.from_minima(minima, n, exact=exact)
        levels = sorted({self.level_for(eta_hat) for eta_hat in estimates})
        counts = {t: self._counts(users, t) for t in levels}
        key = (minima, n, exact, tuple(tuple(counts[t]) for t in levels))
        return self._outputs.get_or_compute(key, lambda: self._mixture(estimates, counts, n, exact))

    def _mixture(self, estimates: Mapping[Fraction, Any], counts: Mapping[int, list[tuple[int, ...]]], n: int,
                 exact: bool) -> Distribution:
        """Mix the EM at each estimate's level ``t`` (counts per family at ``t``) by the estimates' probabilities."""
        by_level: dict[int, Distribution] = {}
        parts: list[tuple[Any, Mapping[Any, Any]]] = []
        for eta_hat, p in estimates.items():
            t = self.level_for(eta_hat)
            if t not in by_level:
                selections = [
                    (w, select_hypothesis(family_counts, family, n, self.em_epsilon, exact, self.selector))
                    for w, family, family_counts in zip(self.H.weights, self.H.families, counts[t])
                    if w != 0
                ]
                by_level[t] = selections[0][1] if len(selections) == 1 else Distribution.mixture(selections)
            if self.reveal_estimate:  # a plain mapping: its values come from a checked Distribution
                parts.append((p, {(eta_hat, h): q for h, q in by_level[t].items()}))
            else:
                parts.append((p, by_level[t]))
        return Distribution.mixture(parts)


@mutant(of=UserLevelLearner, broken="PrivateMinError and the EM both at eps (the budget not split)")
class MutantUserLevelWithoutComposition(UserLevelLearner):
    """Mutant of Li–Wang–Ye 2024 Thm. 4.6: PrivateMinError and the EM both at ``eps`` (no split): up to 2 eps."""

    def _split_epsilon(self) -> tuple[Any, Any]:
        return self.epsilon, self.epsilon
