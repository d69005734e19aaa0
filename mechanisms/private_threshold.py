"""PrivateMedian and PrivateThreshold: Li–Wang–Ye 2024, Sec. 5 (Lemma 5.1, Alg. 1; proofs D.1, D.2).

* :class:`PrivateMedian` (Lemma 5.1): EM at ``eps`` over ``u in {l..r}`` with
  ``q(z, u) = max(dis^s(f_{l-1}, f_{u-1}), dis^s(f_u, f_r))``, ``Delta = 1/n``.
* :class:`PrivateThreshold` (Alg. 1) over the thresholds ``f_u(x) = 1[x > u]``, ``u in {0..N}``,
  on ``X = {1..N}`` (the paper's coordinates): ``T`` rounds at ``eps' = eps/(4T)``, each a
  PrivateMedian and three values ``err^t(.) + Lap(1/(n eps'))``; return ``f_mid``, or continue
  left or right. eps-DP at user level by basic composition (4T steps of eps').

Choices where the paper is open: ``dis^s`` in Lemma 5.1 — D.1 reads "more than ``ms`` samples" in
``[a, b]``; with the Section 4 definition (``m dis > s``) it is "more than ``s`` of the user's
``m`` points", which we use; ``f_{-1}`` (for ``l = 0``) labels every point 1, as ``f_0`` does. The
median's ``s`` separates ``Bin(m, alpha_k/2)`` and ``Bin(m, 2 alpha_k/3)`` (Cor. D.1,
``alpha_k = theta^(k-1)``). ``t`` is an input of Alg. 1 (Thm. 5.2 takes it from PrivateMinError at
``eps/2``); :class:`PrivateThreshold` is Alg. 1 alone with a given ``t``. Every Laplace comparison
is exact (:mod:`dpverify.mechanisms.laplace`).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
import sympy

from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.finite.mechanism import TwoNumberModes, mutant

from ._memo import BoundedMemo
from .exponential import exponential_mechanism
from .laplace import argmin_distribution
from .user_data import (
    Selector,
    UserDataset,
    _check_m,
    _check_rounds,
    _level,
    _mistakes,
    _positive_epsilon,
    _positive_fraction,
    check_user_dataset,
    separating_level,
    threshold_records,
)

__all__ = ["PrivateMedian", "PrivateThreshold", "MutantThresholdWithoutComposition", "MutantThresholdScaleInverted"]


# -- PrivateMedian (Lemma 5.1) and PrivateThreshold (Alg. 1) ------------------------------------


def _threshold_labels(N: int) -> np.ndarray:
    """``labels[u, x] = f_u(x) = 1[x > u]`` for ``u in {-1..N}`` (row ``u + 1``), ``x in {0..N}``
    (column 0 unused: X = {1..N})."""
    u = np.arange(-1, N + 1)[:, None]
    x = np.arange(N + 1)[None, :]
    return x > u


def _median_level(m: int, alpha_k: Fraction) -> int:
    """``s`` of Cor. D.1 at accuracy ``alpha_k``: separates ``Bin(m, alpha_k/2)`` and ``Bin(m, 2 alpha_k/3)``."""
    return separating_level(m, alpha_k / 2, 2 * alpha_k / 3)


def _in_range_counts(users: UserDataset, N: int) -> np.ndarray:
    """``(n, N + 2)`` prefix counts: ``P[i, b + 1]`` = points of user ``i`` that are ``<= b``."""
    out = np.zeros((len(users), N + 2), dtype=np.int64)
    for i, block in enumerate(users):
        for x, _ in block:
            out[i, x + 1:] += 1
    return out


class PrivateMedian(TwoNumberModes):
    """Li–Wang–Ye 2024 Lemma 5.1 (proof D.1): an approximate median of ``[l, r]`` by EM (eps-DP).

    EM over ``u in {l..r}`` with ``q(z, u) = max(dis^s(f_{l-1}, f_{u-1}), dis^s(f_u, f_r))`` —
    ``dis^s(f_{a-1}, f_b)`` is the fraction of users with more than ``s`` of their ``m`` points in
    ``[a, b]`` — at privacy ``eps`` with ``Delta = 1/n``: weight ``exp(-eps k / 2)``, ``k = n q``.
    ``s = separating_level(m, alpha/2, 2 alpha/3)`` (Cor. D.1) unless given.

    Args:
        N: ``|X|``, ``X = {1..N}``. m: examples per user. epsilon: the privacy parameter.
        l, r: the interval, ``0 <= l <= r <= N``. alpha: the accuracy parameter (``theta^(k-1)``
        in Alg. 1). s: the level (default from alpha). exact: sympy. selector: the EM.
    """

    exchangeable = True

    def __init__(self, N: int, *, m: int, epsilon: Any, l: int, r: int, alpha: Any = 1, s: int | None = None,
                 exact: bool = False, selector: Selector = exponential_mechanism) -> None:
        threshold_records(N)
        self.N = N
        self.m = _check_m(m)
        self.epsilon = _positive_epsilon(epsilon)
        if not (isinstance(l, int) and isinstance(r, int) and 0 <= l <= r <= N):
            raise InvalidArgument(f"need integers 0 <= l <= r <= N={N}, got l={l!r}, r={r!r}.")
        self.l, self.r = l, r
        self.alpha = _positive_fraction("alpha", alpha)
        self.s = _median_level(self.m, self.alpha) if s is None else _level("s", s, self.m)
        self.exact = exact
        self.selector = selector
        self.__name__ = type(self).__name__

    def scores(self, z: Any) -> dict[int, Fraction]:
        users = check_user_dataset(z, self.m, range(1, self.N + 1))
        return {u: Fraction(k, len(users)) for u, k in self.counts(_in_range_counts(users, self.N)).items()}

    def counts(self, prefix: np.ndarray) -> dict[int, int]:
        """``n q(z, u)`` for ``u in {l..r}`` from the prefix counts of :func:`_in_range_counts`."""
        def users_over(a: int, b: int) -> int:  # users with more than s points in [a, b]
            if b < a:
                return 0
            return int(((prefix[:, b + 1] - prefix[:, a]) > self.s).sum())
        return {u: max(users_over(self.l, u - 1), users_over(u + 1, self.r)) for u in range(self.l, self.r + 1)}

    def _distribution(self, z: Any, *, exact: bool) -> Distribution:
        users = check_user_dataset(z, self.m, range(1, self.N + 1))
        counts = self.counts(_in_range_counts(users, self.N))
        return _median_selection(tuple(counts.items()), len(users), self.epsilon, exact, self.selector)


@lru_cache(maxsize=65536)
def _median_selection(counts: tuple[tuple[int, int], ...], n: int, epsilon: Any, exact: bool,
                      selector: Selector) -> Distribution:
    scores = {u: Fraction(k, n) for u, k in counts}
    return selector(scores, epsilon=epsilon, sensitivity=Fraction(1, n), exact=exact)


@lru_cache(maxsize=65536)
def _branches(values: tuple[Fraction, ...], scale: Fraction, exact: bool) -> Distribution:
    return argmin_distribution(list(values), scales=scale, exact=exact)


class PrivateThreshold(TwoNumberModes):
    """Li–Wang–Ye 2024 Section 5, Alg. 1: PrivateThreshold over ``f_u``, ``X = {1..N}`` (C16).

    ``l, r = 0, N``; ``eps' = eps/(4T)``; for ``k = 1..T``: stop if ``l = r``;
    ``mid ~ PrivateMedian(z, eps', l, r, theta^(k-1))``; ``v_mid = err^t(f_mid) + Lap(1/(n eps'))``,
    ``v_l = min_{u in [l, mid-1]} err^t(f_u) + Lap(.)``, ``v_r = min_{u in [mid+1, r]} err^t(f_u) + Lap(.)``
    (``+inf`` on an empty range); return ``f_mid`` if ``v_mid < min(v_l, v_r)``, else ``r <- mid - 1``
    if ``v_l < v_r``, else ``l <- mid + 1``. After the loop return ``f_l``. The output is ``u``
    (standing for ``f_u``). Each round spends ``4 eps'`` (one EM, three Laplace values of
    sensitivity ``1/n``): eps-DP by basic composition.

    Which noisy value is smallest is :func:`dpverify.mechanisms.laplace.argmin_distribution` (exact).

    Args:
        N: ``|X|``. m: examples per user. epsilon: total privacy. T: rounds (>= 1). t: the
            user-level error parameter (an input of Alg. 1; Thm. 5.2 takes it from PrivateMinError).
        theta: the decaying factor (2/3 in Thm. 5.2). exact: sympy probabilities.
        selector: PrivateMedian's EM. noise_factor: Laplace scale multiplier (1/2 for the mutant).
    """

    exchangeable = True

    def __init__(self, N: int, *, m: int, epsilon: Any, T: int = 2, t: int = 0, theta: Any = Fraction(2, 3),
                 exact: bool = False, selector: Selector = exponential_mechanism, noise_factor: Any = 1) -> None:
        threshold_records(N)
        self.N = N
        self.m = _check_m(m)
        self.epsilon = _positive_epsilon(epsilon)
        self.T = _check_rounds(T)
        self.t = _level("t", t, self.m)
        self.theta = _positive_fraction("theta", theta)
        self.epsilon_prime = self._round_epsilon()
        self.exact = exact
        self.selector = selector
        self.noise_factor = _positive_fraction("noise_factor", noise_factor)
        self._labels = _threshold_labels(N)
        self._medians: dict[tuple[int, int, int], PrivateMedian] = {}
        self._outputs: BoundedMemo[Distribution] = BoundedMemo()  # see _distribution
        self.__name__ = type(self).__name__

    def _round_epsilon(self) -> Any:
        """``eps' = eps/(4T)``: each round spends ``4 eps'`` (Alg. 1)."""
        return self.epsilon / (4 * self.T)

    def laplace_scale(self, n: int) -> Any:
        """The scale ``1/(n eps')`` of the three Laplace values (times ``noise_factor``)."""
        return self.noise_factor / (n * self.epsilon_prime)

    def errors(self, z: Any) -> dict[int, Fraction]:
        """``err^t_z(f_u)`` for ``u in {0..N}``."""
        users = check_user_dataset(z, self.m, range(1, self.N + 1))
        return {u: Fraction(k, len(users)) for u, k in enumerate(self._error_counts(users))}

    def _error_counts(self, users: UserDataset) -> tuple[int, ...]:
        counts = _mistakes(self._labels[1:], users)  # rows u = 0..N
        return tuple(int(v) for v in (counts > self.t).sum(axis=0))

    def _median(self, k: int, l: int, r: int) -> PrivateMedian:
        """Round ``k``'s PrivateMedian on ``[l, r]`` (data-independent: built once per instance)."""
        median = self._medians.get((k, l, r))
        if median is None:
            median = self._medians[(k, l, r)] = PrivateMedian(
                self.N, m=self.m, epsilon=self.epsilon_prime, l=l, r=r, alpha=self.theta ** (k - 1),
                selector=self.selector)
        return median

    def _distribution(self, z: Any, *, exact: bool) -> Distribution:
        """The output given only what it depends on: ``n``, the error counts ``n err^t(f_u)`` and the
        users' prefix counts as a multiset of rows (PrivateMedian counts users). Datasets alike in
        these (the checker's transpositions of users) share one memoised Distribution."""
        users = check_user_dataset(z, self.m, range(1, self.N + 1))
        errors = self._error_counts(users)
        prefix = _in_range_counts(users, self.N)
        key = (len(users), exact, errors, tuple(sorted(map(tuple, prefix.tolist()))))
        return self._outputs.get_or_compute(key, lambda: self._search(len(users), errors, prefix, exact))

    def _search(self, n: int, errors: tuple[int, ...], prefix: np.ndarray, exact: bool) -> Distribution:
        """Alg. 1's rounds, every branch weighted by its probability."""
        scale = self.laplace_scale(n)
        one = sympy.Integer(1) if exact else 1.0
        memo: dict[tuple[int, int, int], dict[int, Any]] = {}

        def run(k: int, l: int, r: int) -> dict[int, Any]:
            if k > self.T or l == r:
                return {l: one}
            key = (k, l, r)
            if key in memo:
                return memo[key]
            median = self._median(k, l, r)
            result: dict[int, Any] = {}

            def add(u: int, p: Any) -> None:
                result[u] = result[u] + p if u in result else p

            mids = _median_selection(tuple(median.counts(prefix).items()), n, self.epsilon_prime, exact, self.selector)
            for mid, p_mid in mids.items():
                sides = [(0, Fraction(errors[mid], n))]
                if mid > l:
                    sides.append((1, Fraction(min(errors[l:mid]), n)))
                if mid < r:
                    sides.append((2, Fraction(min(errors[mid + 1:r + 1]), n)))
                branch = _branches(tuple(v for _, v in sides), scale, exact)
                for position, (which, _) in enumerate(sides):
                    p = p_mid * branch[position] if position in branch else None
                    if p is None:
                        continue
                    if which == 0:
                        add(mid, p)
                    else:
                        following = run(k + 1, l, mid - 1) if which == 1 else run(k + 1, mid + 1, r)
                        for u, q in following.items():
                            add(u, p * q)
            memo[key] = result
            return result

        return Distribution(run(1, 0, self.N))


@mutant(of=PrivateThreshold, broken="eps' = eps/T: the four steps of a round not composed")
class MutantThresholdWithoutComposition(PrivateThreshold):
    """Mutant of Li–Wang–Ye 2024 Alg. 1: ``eps' = eps/T`` (the four eps'-steps of a round not composed): up to 4 eps."""

    def _round_epsilon(self) -> Any:
        return self.epsilon / self.T


@mutant(of=PrivateThreshold, broken="the Laplace scale written eps'/n instead of 1/(n eps')")
class MutantThresholdScaleInverted(PrivateThreshold):
    """Mutant of Li–Wang–Ye 2024 Alg. 1: the Laplace scale written ``eps'/n`` instead of ``1/(n eps')``."""

    def laplace_scale(self, n: int) -> Any:
        return self.noise_factor * self.epsilon_prime / n
