"""004_a14259b5d8cc6cca.txt Sections 4-5 and App. C-D: user-level pure private learners (C15, C16).

User-level data (Section 4): ``n`` users, user ``i`` holding a block ``z_i`` of ``m`` examples
``(x, y)``; neighbours replace one user's whole block (:class:`dpverify.neighbors.UserLevel`).

* ``err^t_z(c) = (1/n) #{i : m err_{z_i}(c) > t}``: the fraction of users on whose examples ``c``
  makes more than ``t`` mistakes; ``dis^s_x(c, h) = (1/n) #{i : m dis_{x_i}(c, h) > s}``. Each
  moves by at most ``1/n`` between user-level neighbours.
* :class:`PrivateCompare` (Lemma C.1): answer 0 iff ``min_c err^t_z(c) + Lap(1/(eps n)) <=
  Pr[Bin(m, eta~) > t] + sqrt(m) alpha / 2800``, else 1 — eps-DP.
* :class:`PrivateMinError` (App. C, Alg. 2): ``T = ceil(log2(2/alpha))`` rounds of binary search
  on ``[0, 1]``, each a PrivateCompare at ``eps' = eps/T`` on the midpoint; returns ``l``.
* :class:`UserLevelLearner` (Thm. 4.6, proof C.4; claim C15): PrivateMinError at ``eps/2``, then
  the exponential mechanism at ``eps/2`` over ``H`` with
  ``q(z, h) = min_c err^t_z(c) + dis^s_x(c, h)``, ``Delta = 2/n``. Basic composition: eps-DP.
* :class:`PrivateMedian` (Lemma 5.1, proof D.1): EM at ``eps`` over ``u in {l..r}`` with
  ``q(z, u) = max(dis^s(f_{l-1}, f_{u-1}), dis^s(f_u, f_r))``, ``Delta = 1/n``.
* :class:`PrivateThreshold` (Section 5, Alg. 1; claim C16) over the thresholds
  ``f_u(x) = 1[x > u]``, ``u in {0..N}``, on ``X = {1..N}`` (the paper's coordinates): ``T``
  rounds at ``eps' = eps/(4T)``, each a PrivateMedian and three values
  ``err^t(.) + Lap(1/(n eps'))``; return ``f_mid``, or continue left or right. eps-DP by basic
  composition (4T steps of eps').

Every Laplace comparison is computed exactly by :mod:`mechanisms.laplace` (closed forms; never
sampled). Outputs are finite, so every mechanism returns its exact output distribution: float by
default, sympy with ``exact=True``; ``exact_distribution(z)`` gives the sympy values in either mode
(the checker certifies tight pairs with them).

Choices where the paper is open (each repeated where it is made):

* **t and s from Lemma 4.1.** Lemma C.1 and Thm. 4.6 only say "there exists some t" separating two
  binomials. We take the smallest ``l in {0..m-1}`` maximising
  ``Pr[Bin(m, q) > l] - Pr[Bin(m, p) > l]`` (:func:`separating_level`; success probabilities
  above 1 are clipped to 1). PrivateCompare at ``eta~``: ``p = eta~``, ``q = eta~ + alpha/2``.
  Thm. 4.6 (C.4): ``p = eta^ + alpha/6``, ``q = eta^ + alpha/3``. PrivateMedian (Cor. D.1):
  ``p = alpha_k/2``, ``q = 2 alpha_k/3`` with ``alpha_k = theta^(k-1)``. The Thm. 4.6 score uses
  ``s = 0`` (C.4: "actually, s = 0"). Any data-independent choice keeps the privacy proofs.
* **PrivateMinError's branches.** Alg. 2 as printed sets ``r <- mid`` when PrivateCompare returns
  1, but Lemma C.1 (``sigma = 0`` means ``eta~ >= eta - alpha/2``) and the proof of Lemma 4.5
  ("if sigma = 0 then [l, mid] ...") keep the left half on 0. We follow the proof: 0 -> ``r <- mid``,
  1 -> ``l <- mid``. (Privacy does not depend on it: it is post-processing.)
* **How eta^ feeds t (Thm. 4.6).** C.4 runs Lemma 4.5 at privacy ``eps/2`` to accuracy
  ``alpha/6``, so PrivateMinError gets ``alpha/6`` (``T = ceil(log2(12/alpha))``; override with
  ``min_error_alpha``), and ``t = separating_level(m, eta^ + alpha/6, eta^ + alpha/3)``.
* **Output.** The learner outputs ``h`` (a labeling of X); ``reveal_estimate=True`` outputs
  ``(eta^, h)``, which basic composition also covers (a stronger check).
* **dis^s in Lemma 5.1.** D.1 reads "more than ``ms`` samples" in ``[a, b]``; with the Section 4
  definition (``m dis > s``) it is "more than ``s`` of the user's ``m`` points" — we use that.
  ``f_{-1}`` (for ``l = 0``) labels every point of ``X`` 1, as ``f_0`` does.
* **Alg. 1's inputs.** ``t`` is an input of Alg. 1 (Thm. 5.2 takes it from PrivateMinError at
  ``eps/2`` and runs Alg. 1 at ``eps/2``; D.2's "PrivateCompare as the one in Lemma 5.1" means
  PrivateMedian). :class:`PrivateThreshold` is Alg. 1 alone with a given ``t`` (claim C16).
* **m <= 1/alpha (D.1, C.4).** The proofs discard extra samples when ``m`` is large; we use every
  sample (privacy is unaffected).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
import sympy

from dpverify.distribution import Distribution
from dpverify.domains import ConceptClass
from dpverify.errors import InvalidArgument
from mechanisms.exponential import exponential_mechanism
from mechanisms.laplace import argmin_distribution, prob_noisy_at_most
from mechanisms.pure_agnostic import exact_epsilon, hypothesis_families, mix, select_hypothesis

__all__ = [
    "check_user_dataset",
    "threshold_records",
    "binomial_tail",
    "separating_level",
    "user_error",
    "user_disagreement",
    "rounds_for_accuracy",
    "PrivateCompare",
    "PrivateMinError",
    "UserLevelLearner",
    "PrivateMedian",
    "PrivateThreshold",
    "MutantUserLevelWithoutComposition",
    "MutantThresholdWithoutComposition",
    "MutantThresholdScaleInverted",
]

Selector = Callable[..., Distribution]
UserDataset = tuple[tuple[tuple[int, int], ...], ...]


# -- user-level datasets ------------------------------------------------------------------------


def _check_m(m: Any) -> int:
    if not isinstance(m, int) or isinstance(m, bool) or m < 1:
        raise InvalidArgument(
            f"m must be an integer >= 1 (the number of examples each user holds), got m={m!r}; pass "
            "e.g. m=2."
        )
    return m


def check_user_dataset(z: Any, m: int, points: Sequence[int]) -> UserDataset:
    """``z`` as a tuple of ``n >= 1`` users, each a tuple of exactly ``m`` examples ``(x, y)``.

    Args:
        z: the dataset (004 Section 4: ``z in Z^{nm}`` grouped by user).
        m: the number of examples per user (>= 1).
        points: the domain ``X`` (every ``x`` must be one of them).

    Raises:
        InvalidArgument: ``m < 1``, no users, a block that is not of size ``m``, or an example
            outside ``X x {0, 1}`` — the message names the value and the fix.
    """
    _check_m(m)
    valid = set(points)
    try:
        users = tuple(tuple(block) for block in z)
    except TypeError:
        raise InvalidArgument(
            f"z must be a tuple of users, each a tuple of m={m} examples (x, y), got z={z!r}."
        ) from None
    if not users:
        raise InvalidArgument("z must hold at least one user (Delta = 1/n), got no users.")
    for i, block in enumerate(users):
        if len(block) != m:
            raise InvalidArgument(
                f"every user must hold m={m} examples, but user {i} holds {len(block)}: {block!r}; "
                f"give each user exactly {m} examples (or set m={len(block)} if all blocks have that size)."
            )
        for record in block:
            if (not isinstance(record, tuple) or len(record) != 2 or isinstance(record[0], bool)
                    or record[0] not in valid or record[1] not in (0, 1)):
                raise InvalidArgument(
                    f"user {i} holds the example {record!r}; examples are (x, y) with x in "
                    f"{sorted(valid)} and y in {{0, 1}}."
                )
    return users


def threshold_records(N: int) -> tuple[tuple[int, int], ...]:
    """The labeled records ``(x, y)``, ``x in X = {1..N}`` (004 Section 5), ``y in {0, 1}``."""
    if not isinstance(N, int) or isinstance(N, bool) or N < 1:
        raise InvalidArgument(f"N = |X| must be an integer >= 1, got N={N!r}.")
    return tuple((x, y) for x in range(1, N + 1) for y in (0, 1))


def _mistakes(labels: np.ndarray, z: UserDataset) -> np.ndarray:
    """``(n, |C|)``: mistakes of each concept (rows of ``labels``, indexed by point) per user."""
    out = np.zeros((len(z), labels.shape[0]), dtype=np.int64)
    for i, block in enumerate(z):
        for x, y in block:
            out[i] += labels[:, x] != bool(y)
    return out


def _disagreements(c_labels: np.ndarray, h_labels: np.ndarray, z: UserDataset) -> np.ndarray:
    """``(n, |C|, |H|)``: per user, the number of its points where ``c`` and ``h`` disagree."""
    out = np.zeros((len(z), c_labels.shape[0], h_labels.shape[0]), dtype=np.int64)
    for i, block in enumerate(z):
        for x, _ in block:
            out[i] += c_labels[:, x][:, None] != h_labels[:, x][None, :]
    return out


def _labels(c: Sequence[int]) -> np.ndarray:
    return np.asarray([int(v) for v in c], dtype=bool)[None, :]


def user_error(c: Sequence[int], z: Any, *, t: int) -> Fraction:
    """``err^t_z(c)`` (004 Section 4): the fraction of users on whose examples ``c`` errs more than ``t`` times.

    Args:
        c: the concept as its labels, ``c[x]`` for every point ``x`` of ``X = {0..len(c)-1}``.
        z: the user-level dataset (users of equal size ``m``).
        t: the mistake threshold (an integer in ``{0..m}``).

    Returns:
        ``(1/n) #{i : m err_{z_i}(c) > t}`` as a Fraction.
    """
    users = _users(z, len(c))
    counts = _mistakes(_labels(c), users)[:, 0]
    return Fraction(int((counts > _level("t", t, len(users[0]))).sum()), len(users))


def user_disagreement(c: Sequence[int], h: Sequence[int], z: Any, *, s: int) -> Fraction:
    """``dis^s_x(c, h)`` (004 Section 4): the fraction of users on whose points ``c`` and ``h``
    disagree more than ``s`` times (labels of ``z`` are ignored: ``x`` is the unlabeled data)."""
    if len(c) != len(h):
        raise InvalidArgument(f"c and h must label the same X, got {len(c)} and {len(h)} labels.")
    users = _users(z, len(c))
    counts = _disagreements(_labels(c), _labels(h), users)[:, 0, 0]
    return Fraction(int((counts > _level("s", s, len(users[0]))).sum()), len(users))


def _users(z: Any, domain_size: int) -> UserDataset:
    try:
        m = len(next(iter(z)))
    except (TypeError, StopIteration):
        raise InvalidArgument(f"z must be a non-empty tuple of users (tuples of m examples), got z={z!r}.") from None
    return check_user_dataset(z, m, range(domain_size))


def _level(name: str, value: Any, m: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= m:
        raise InvalidArgument(f"{name} must be an integer in {{0, ..., m={m}}}, got {name}={value!r}.")
    return value


# -- binomial separation (Lemma 4.1) ------------------------------------------------------------


def binomial_tail(m: int, p: Any, level: int) -> Fraction:
    """``Pr[Bin(m, p) > level]`` exactly (``p`` clipped to ``[0, 1]``)."""
    p = min(max(Fraction(p), Fraction(0)), Fraction(1))
    return sum((math.comb(m, j) * p**j * (1 - p) ** (m - j) for j in range(level + 1, m + 1)), Fraction(0))


def separating_level(m: int, p: Any, q: Any) -> int:
    """The ``t`` of Lemma 4.1 used here: the smallest ``l in {0..m-1}`` maximising
    ``Pr[Bin(m, q) > l] - Pr[Bin(m, p) > l]`` (data-independent, so privacy does not depend on it)."""
    _check_m(m)
    return _separating_level(m, Fraction(p), Fraction(q))


@lru_cache(maxsize=4096)
def _separating_level(m: int, p: Fraction, q: Fraction) -> int:
    gaps = [binomial_tail(m, q, level) - binomial_tail(m, p, level) for level in range(m)]
    return gaps.index(max(gaps))


def rounds_for_accuracy(alpha: Any) -> int:
    """``T = ceil(log2(2/alpha))`` (Alg. 2), computed exactly: the least ``T`` with ``2^T alpha >= 2``.

    Raises:
        InvalidArgument: ``alpha <= 0``, or ``alpha >= 2`` (then ``T < 1``: no round).
    """
    a = _positive_fraction("alpha", alpha)
    T = 0
    while 2**T * a < 2:
        T += 1
    if T < 1:
        raise InvalidArgument(
            f"T = ceil(log2(2/alpha)) must be >= 1 round, got T={T} from alpha={alpha!r}; pass an "
            "accuracy alpha < 2 (alpha <= 1 in the paper)."
        )
    return T


def _positive_fraction(name: str, value: Any) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        raise InvalidArgument(f"{name} must be a rational number (int, float or Fraction), got {name}={value!r}.")
    if not (isinstance(value, float) and not math.isfinite(value)) and Fraction(value) > 0:
        return Fraction(value)
    raise InvalidArgument(f"{name} must be > 0, got {name}={value!r}.")


def _check_rounds(T: Any) -> int:
    if not isinstance(T, int) or isinstance(T, bool) or T < 1:
        raise InvalidArgument(f"T (the number of rounds) must be an integer >= 1, got T={T!r}; pass e.g. T=2.")
    return T


# -- PrivateCompare and PrivateMinError (App. C) ------------------------------------------------


@lru_cache(maxsize=65536)
def _compare_zero(k: int, n: int, threshold: Any, scale: Any, exact: bool) -> Any:
    """``P(k/n + Lap(scale) <= threshold)``: PrivateCompare answers 0."""
    return prob_noisy_at_most(Fraction(k, n), threshold, scale=scale, exact=exact)


class _CompareSpec:
    """PrivateCompare's data-independent parts at one ``eta~``: ``t`` and the threshold."""

    def __init__(self, m: int, eta_tilde: Fraction, alpha: Fraction) -> None:
        self.t = separating_level(m, eta_tilde, eta_tilde + alpha / 2)
        base = binomial_tail(m, eta_tilde, self.t)
        self.threshold = sympy.Rational(base.numerator, base.denominator) + sympy.sqrt(m) * sympy.Rational(
            alpha.numerator, alpha.denominator * 2800)


class PrivateCompare:
    """004_a14259b5d8cc6cca.txt Lemma C.1: is ``min_c err^t_z(c)`` below the level of ``eta~``? (eps-DP)

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
        self.eta_tilde = Fraction(eta_tilde)
        self.alpha = _positive_fraction("alpha", alpha)
        self.spec = _CompareSpec(self.m, self.eta_tilde, self.alpha)
        self.exact = exact
        self.noise_factor = Fraction(noise_factor)
        self.__name__ = type(self).__name__

    @property
    def t(self) -> int:
        return self.spec.t

    @property
    def threshold(self) -> sympy.Expr:
        return self.spec.threshold

    def __call__(self, z: Any) -> Distribution:
        return self._distribution(z, exact=self.exact)

    def exact_distribution(self, z: Any) -> Distribution:
        return self._distribution(z, exact=True)

    def _distribution(self, z: Any, *, exact: bool) -> Distribution:
        users = check_user_dataset(z, self.m, range(self.C.domain_size))
        n = len(users)
        k = int((_mistakes(self.C.matrix, users) > self.t).sum(axis=0).min())
        scale = self.noise_factor / (self.epsilon * n)
        zero = _compare_zero(k, n, self.threshold, scale, exact)
        return Distribution({0: zero, 1: 1 - zero})


class PrivateMinError:
    """004_a14259b5d8cc6cca.txt App. C, Alg. 2 (Lemma 4.5): binary search for ``eta`` with PrivateCompare.

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
        self.noise_factor = Fraction(noise_factor)
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

    def __call__(self, z: Any) -> Distribution:
        return self._distribution(z, exact=self.exact)

    def exact_distribution(self, z: Any) -> Distribution:
        return self._distribution(z, exact=True)

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
        return {l: p for (l, _), p in frontier.items()}


# -- the user-level learner (Thm. 4.6) ----------------------------------------------------------


class UserLevelLearner:
    """004_a14259b5d8cc6cca.txt Thm. 4.6 (proof C.4): PrivateMinError at eps/2, then EM at eps/2 (C15).

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

    def __call__(self, z: Any) -> Distribution:
        return self._distribution(z, exact=self.exact)

    def exact_distribution(self, z: Any) -> Distribution:
        return self._distribution(z, exact=True)

    def _distribution(self, z: Any, *, exact: bool) -> Distribution:
        users = check_user_dataset(z, self.m, range(self.C.domain_size))
        n = len(users)
        estimates = self.min_error.from_minima(self.min_error.minima(users), n, exact=exact)
        by_level: dict[int, Distribution] = {}
        parts = []
        for eta_hat, p in estimates.items():
            t = self.level_for(eta_hat)
            if t not in by_level:
                selections = [
                    (w, select_hypothesis(counts, family, n, self.em_epsilon, exact, self.selector))
                    for w, family, counts in zip(self.H.weights, self.H.families, self._counts(users, t))
                    if w != 0
                ]
                by_level[t] = selections[0][1] if len(selections) == 1 else mix(selections, exact=exact)
            if self.reveal_estimate:
                parts.append((p, Distribution({(eta_hat, h): q for h, q in by_level[t].items()})))
            else:
                parts.append((p, by_level[t]))
        return mix(parts, exact=exact)


class MutantUserLevelWithoutComposition(UserLevelLearner):
    """Mutant of 004 Thm. 4.6: PrivateMinError and the EM both at ``eps`` (no split): up to 2 eps."""

    def _split_epsilon(self) -> tuple[Any, Any]:
        return self.epsilon, self.epsilon


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


class PrivateMedian:
    """004_a14259b5d8cc6cca.txt Lemma 5.1 (proof D.1): an approximate median of ``[l, r]`` by EM (eps-DP).

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

    def __call__(self, z: Any) -> Distribution:
        return self._distribution(z, exact=self.exact)

    def exact_distribution(self, z: Any) -> Distribution:
        return self._distribution(z, exact=True)

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


class PrivateThreshold:
    """004_a14259b5d8cc6cca.txt Section 5, Alg. 1: PrivateThreshold over ``f_u``, ``X = {1..N}`` (C16).

    ``l, r = 0, N``; ``eps' = eps/(4T)``; for ``k = 1..T``: stop if ``l = r``;
    ``mid ~ PrivateMedian(z, eps', l, r, theta^(k-1))``; ``v_mid = err^t(f_mid) + Lap(1/(n eps'))``,
    ``v_l = min_{u in [l, mid-1]} err^t(f_u) + Lap(.)``, ``v_r = min_{u in [mid+1, r]} err^t(f_u) + Lap(.)``
    (``+inf`` on an empty range); return ``f_mid`` if ``v_mid < min(v_l, v_r)``, else ``r <- mid - 1``
    if ``v_l < v_r``, else ``l <- mid + 1``. After the loop return ``f_l``. The output is ``u``
    (standing for ``f_u``). Each round spends ``4 eps'`` (one EM, three Laplace values of
    sensitivity ``1/n``): eps-DP by basic composition.

    Which noisy value is smallest is :func:`mechanisms.laplace.argmin_distribution` (exact).

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
        self.noise_factor = Fraction(noise_factor)
        self._labels = _threshold_labels(N)
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

    def __call__(self, z: Any) -> Distribution:
        return self._distribution(z, exact=self.exact)

    def exact_distribution(self, z: Any) -> Distribution:
        return self._distribution(z, exact=True)

    def _distribution(self, z: Any, *, exact: bool) -> Distribution:
        users = check_user_dataset(z, self.m, range(1, self.N + 1))
        n = len(users)
        errors = self._error_counts(users)
        prefix = _in_range_counts(users, self.N)
        scale = self.laplace_scale(n)
        one = sympy.Integer(1) if exact else 1.0
        memo: dict[tuple[int, int, int], dict[int, Any]] = {}

        def run(k: int, l: int, r: int) -> dict[int, Any]:
            if k > self.T or l == r:
                return {l: one}
            key = (k, l, r)
            if key in memo:
                return memo[key]
            median = PrivateMedian(self.N, m=self.m, epsilon=self.epsilon_prime, l=l, r=r,
                                   alpha=self.theta ** (k - 1), selector=self.selector)
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


class MutantThresholdWithoutComposition(PrivateThreshold):
    """Mutant of 004 Alg. 1: ``eps' = eps/T`` (the four eps'-steps of a round not composed): up to 4 eps."""

    def _round_epsilon(self) -> Any:
        return self.epsilon / self.T


class MutantThresholdScaleInverted(PrivateThreshold):
    """Mutant of 004 Alg. 1: the Laplace scale written ``eps'/n`` instead of ``1/(n eps')``."""

    def laplace_scale(self, n: int) -> Any:
        return self.noise_factor * self.epsilon_prime / n


# -- shared checks ------------------------------------------------------------------------------


def _check_class(C: Any) -> ConceptClass:
    if not isinstance(C, ConceptClass):
        raise InvalidArgument(
            f"C must be a ConceptClass, got C={C!r}; build one with "
            "dpverify.domains.concept_class('thresholds', domain_size)."
        )
    return C


def _positive_epsilon(epsilon: Any) -> Any:
    value = exact_epsilon(epsilon)
    if not value > 0:
        raise InvalidArgument(
            f"epsilon must be > 0 here (the Laplace scale is 1/(n eps)), got epsilon={epsilon!r}."
        )
    return value
