"""PrivateCompare and PrivateMinError: Li–Wang–Ye 2024, App. C (Lemma C.1, Alg. 2).

* :class:`PrivateCompare` (Lemma C.1): answer 0 iff ``min_c err^t_z(c) + Lap(1/(eps n)) <=
  Pr[Bin(m, eta~) > t] + sqrt(m) alpha / 2800``, else 1 — eps-DP at user level.
* :class:`PrivateMinError` (Alg. 2): ``T = ceil(log2(2/alpha))`` rounds of binary search on
  ``[0, 1]``, each a PrivateCompare at ``eps' = eps/T`` on the midpoint; returns ``l``.

**PrivateMinError's branches.** Alg. 2 as printed sets ``r <- mid`` when PrivateCompare returns 1,
but Lemma C.1 (``sigma = 0`` means ``eta~ >= eta - alpha/2``) and the proof of Lemma 4.5 ("if
sigma = 0 then [l, mid] ...") keep the left half on 0. We follow the proof: 0 -> ``r <- mid``,
1 -> ``l <- mid`` (post-processing: privacy does not depend on it). PrivateCompare at ``eta~``
separates ``p = eta~`` from ``q = eta~ + alpha/2`` (:func:`dpverify.mechanisms.user_data.separating_level`).

Every Laplace comparison is exact (:mod:`dpverify.mechanisms.laplace`); float by default, sympy with
``exact=True``; ``exact_distribution(z)`` gives the sympy values in either mode.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

import sympy

from dpverify.finite.distribution import Distribution
from dpverify.finite.mechanism import TwoNumberModes
from dpverify.finite.records import ConceptClass
from dpverify.validation import check_probability, exact_number

from .laplace import prob_noisy_at_most
from .user_data import (
    UserDataset,
    _check_class,
    _check_m,
    _mistakes,
    _positive_epsilon,
    _positive_fraction,
    binomial_tail,
    check_user_dataset,
    rounds_for_accuracy,
    separating_level,
)

__all__ = ["PrivateCompare", "PrivateMinError"]


# -- PrivateCompare and PrivateMinError (App. C) ------------------------------------------------


@lru_cache(maxsize=65536)
def _compare_zero(k: int, n: int, threshold: Any, scale: Any, exact: bool) -> Any:
    """``P(k/n + Lap(scale) <= threshold)``: PrivateCompare answers 0."""
    return prob_noisy_at_most(Fraction(k, n), threshold, scale=scale, exact=exact)


class _Level(Fraction):
    """A level ``l`` returned by PrivateMinError: a Fraction that computes its hash once. The user-level
    learner's outcomes are ``(l, h)`` tuples, hashed at every dict operation of every mixture and
    comparison; Fraction's hash (a modular inverse) was 37% of C15's time at n = 3. Equal to, hashed
    and shown (``Fraction(1, 2)``) as the Fraction it is; arithmetic on it gives plain Fractions."""

    __slots__ = ("_cached_hash",)

    # typeshed declares numbers.Complex.__hash__ as None; its Fraction overrides it the same way
    def __hash__(self) -> int:  # type: ignore[override]
        try:
            return self._cached_hash
        except AttributeError:
            self._cached_hash: int = Fraction.__hash__(self)
            return self._cached_hash

    def __repr__(self) -> str:
        return f"Fraction({self.numerator}, {self.denominator})"


class _CompareSpec:
    """PrivateCompare's data-independent parts at one ``eta~``: ``t`` and the threshold."""

    def __init__(self, m: int, eta_tilde: Fraction, alpha: Fraction) -> None:
        self.t = separating_level(m, eta_tilde, eta_tilde + alpha / 2)
        base = binomial_tail(m, eta_tilde, self.t)
        self.threshold = sympy.Rational(base.numerator, base.denominator) + sympy.sqrt(m) * sympy.Rational(
            alpha.numerator, alpha.denominator * 2800)


class PrivateCompare(TwoNumberModes):
    """Li–Wang–Ye 2024 Lemma C.1: is ``min_c err^t_z(c)`` below the level of ``eta~``? (eps-DP)

    Outputs 0 iff ``min_c err^t_z(c) + Lap(1/(eps n)) <= Pr[Bin(m, eta~) > t] + sqrt(m) alpha/2800``,
    else 1, with ``t = separating_level(m, eta~, eta~ + alpha/2)`` (Lemma 4.1; see the module doc).
    ``min_c err^t_z(c)`` moves by at most ``1/n`` between user-level neighbours, so this is the
    Laplace mechanism followed by a comparison: eps-DP.

    Args:
        C: the concept class over ``X = {0..d-1}``.
        m: examples per user. epsilon: the privacy parameter (the paper's eps; ``eps'`` inside
            Alg. 2). eta_tilde: the guess ``eta~`` in [0, 1]. alpha: the accuracy parameter.
        exact: sympy probabilities instead of floats.
        noise_factor: multiplies the Laplace scale (1; the mutant uses 1/2).
    """

    exchangeable = True

    def __init__(self, C: ConceptClass, *, m: int, epsilon: Any, eta_tilde: Any, alpha: Any,
                 exact: bool = False, noise_factor: Any = 1) -> None:
        self.C = _check_class(C)
        self.m = _check_m(m)
        self.epsilon = _positive_epsilon(epsilon)
        self.eta_tilde = exact_number("eta_tilde", check_probability("eta_tilde", eta_tilde))
        self.alpha = _positive_fraction("alpha", alpha)
        self.spec = _CompareSpec(self.m, self.eta_tilde, self.alpha)
        self.exact = exact
        self.noise_factor = _positive_fraction("noise_factor", noise_factor)
        self._outputs: dict[tuple[int, int, bool], Distribution] = {}  # (k, n, exact) -> the answer
        self.__name__ = type(self).__name__

    @property
    def t(self) -> int:
        return self.spec.t

    @property
    def threshold(self) -> sympy.Expr:
        return self.spec.threshold

    def _distribution(self, z: Any, *, exact: bool) -> Distribution:
        users = check_user_dataset(z, self.m, range(self.C.domain_size))
        n = len(users)
        k = int((_mistakes(self.C.matrix, users) > self.t).sum(axis=0).min())
        found = self._outputs.get((k, n, exact))
        if found is None:  # one object per (k, n): certification converts its sympy values once
            scale = self.noise_factor / (self.epsilon * n)
            zero = _compare_zero(k, n, self.threshold, scale, exact)
            found = self._outputs[(k, n, exact)] = Distribution({0: zero, 1: 1 - zero})
        return found


class PrivateMinError(TwoNumberModes):
    """Li–Wang–Ye 2024 App. C, Alg. 2 (Lemma 4.5): binary search for ``eta`` with PrivateCompare.

    ``l, r = 0, 1``; ``T = ceil(log2(2/alpha))`` rounds, each a :class:`PrivateCompare` at
    ``eps' = eps/T`` on ``mid = (l + r)/2``: 0 -> ``r <- mid``, 1 -> ``l <- mid`` (the orientation
    of Lemma 4.5's proof; Alg. 2 as printed swaps them, see the module doc). Returns ``l`` (a
    dyadic Fraction). Basic composition over the ``T`` rounds: eps-DP.

    Args:
        C: the concept class. m: examples per user. epsilon: the privacy parameter of Alg. 2
            (Thm. 4.6 passes ``eps/2``). alpha: the accuracy parameter of Alg. 2.
        exact: sympy probabilities. noise_factor: as in :class:`PrivateCompare`.

    Raises:
        InvalidArgument: ``T < 1`` (``alpha >= 2``), ``m < 1``, ``epsilon <= 0``.
    """

    exchangeable = True

    def __init__(self, C: ConceptClass, *, m: int, epsilon: Any, alpha: Any, exact: bool = False,
                 noise_factor: Any = 1) -> None:
        self.C = _check_class(C)
        self.m = _check_m(m)
        self.epsilon = _positive_epsilon(epsilon)
        self.alpha = _positive_fraction("alpha", alpha)
        self.T = rounds_for_accuracy(self.alpha)
        self.epsilon_prime = self.epsilon / self.T
        self.exact = exact
        self.noise_factor = _positive_fraction("noise_factor", noise_factor)
        self._specs: dict[Fraction, _CompareSpec] = {}
        self._memo: dict[tuple, dict[Fraction, Any]] = {}
        self.__name__ = type(self).__name__

    def spec(self, mid: Fraction) -> _CompareSpec:
        if mid not in self._specs:
            self._specs[mid] = _CompareSpec(self.m, mid, self.alpha)
        return self._specs[mid]

    def midpoints(self) -> list[Fraction]:
        """Every ``mid`` the search can query (``2^T - 1`` dyadic points)."""
        return [Fraction(2 * j + 1, 2**k) for k in range(1, self.T + 1) for j in range(2 ** (k - 1))]

    def minima(self, z: UserDataset) -> tuple[int, ...]:
        """``n min_c err^t_z(c)`` for ``t = 0..m``."""
        counts = _mistakes(self.C.matrix, z)
        return tuple(int((counts > t).sum(axis=0).min()) for t in range(self.m + 1))

    def _distribution(self, z: Any, *, exact: bool) -> Distribution:
        users = check_user_dataset(z, self.m, range(self.C.domain_size))
        return Distribution(self.from_minima(self.minima(users), len(users), exact=exact))

    def from_minima(self, minima: tuple[int, ...], n: int, *, exact: bool) -> dict[Fraction, Any]:
        """The distribution of the returned ``l`` given ``n min_c err^t`` for every ``t``."""
        key = (minima, n, exact)
        if key not in self._memo:
            self._memo[key] = self._from_minima(minima, n, exact)
        return dict(self._memo[key])

    def _from_minima(self, minima: tuple[int, ...], n: int, exact: bool) -> dict[Fraction, Any]:
        scale = self.noise_factor / (self.epsilon_prime * n)
        one = sympy.Integer(1) if exact else 1.0
        frontier: dict[tuple[Fraction, Fraction], Any] = {(Fraction(0), Fraction(1)): one}
        for _ in range(self.T):
            following: dict[tuple[Fraction, Fraction], Any] = {}
            for (l, r), p in frontier.items():
                mid = (l + r) / 2
                spec = self.spec(mid)
                zero = _compare_zero(minima[spec.t], n, spec.threshold, scale, exact)
                for key, q in (((l, mid), zero), ((mid, r), 1 - zero)):
                    following[key] = following.get(key, 0) + p * q
            frontier = following
        return {_Level(l): p for (l, _), p in frontier.items()}
