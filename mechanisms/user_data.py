"""User-level data of Li–Wang–Ye 2024 (pure private agnostic learning, item and user level), Sec. 4.

``n`` users, user ``i`` holding a block ``z_i`` of ``m`` examples ``(x, y)``; neighbours replace
one user's whole block (:class:`dpverify.finite.neighbors.UserLevel`), or add/remove one (the paper's own
relation).

* ``err^t_z(c) = (1/n) #{i : m err_{z_i}(c) > t}``: the fraction of users on whose examples ``c``
  makes more than ``t`` mistakes; ``dis^s_x(c, h) = (1/n) #{i : m dis_{x_i}(c, h) > s}``. Each
  moves by at most ``1/n`` between user-level neighbours.
* Lemma 4.1's binomial separation: :func:`separating_level` picks the level ``t`` that best
  separates two binomials. Lemma C.1 and Thm. 4.6 only say "there exists some t"; we take the
  smallest ``l in {0..m-1}`` maximising ``Pr[Bin(m, q) > l] - Pr[Bin(m, p) > l]`` (success
  probabilities above 1 clipped to 1). Any data-independent choice keeps the privacy proofs.

The mechanisms built on these are in :mod:`dpverify.mechanisms.private_min_error` (PrivateCompare,
PrivateMinError), :mod:`dpverify.mechanisms.user_level` (the Thm. 4.6 learner) and
:mod:`dpverify.mechanisms.private_threshold` (PrivateMedian, PrivateThreshold).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.finite.records import ConceptClass
from dpverify.validation import check_epsilon, check_integer, check_positive, exact_number

from .item_level import exact_epsilon

__all__ = [
    "check_user_dataset",
    "threshold_records",
    "binomial_tail",
    "separating_level",
    "user_error",
    "user_disagreement",
    "rounds_for_accuracy",
]

Selector = Callable[..., Distribution]
UserDataset = tuple[tuple[tuple[int, int], ...], ...]


# -- user-level datasets ------------------------------------------------------------------------


def _check_m(m: Any) -> int:
    return check_integer("m", m, at_least=1, fix="m is the number of examples each user holds; pass e.g. m=2")


def check_user_dataset(z: Any, m: int, points: Sequence[int]) -> UserDataset:
    """``z`` as a tuple of ``n >= 1`` users, each a tuple of exactly ``m`` examples ``(x, y)``.

    Args:
        z: the dataset (Li–Wang–Ye 2024 Section 4: ``z in Z^{nm}`` grouped by user).
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
    """The labeled records ``(x, y)``, ``x in X = {1..N}`` (Li–Wang–Ye 2024 Section 5), ``y in {0, 1}``."""
    check_integer("N", N, at_least=1, what="N = |X|, the number of points")
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
    """``err^t_z(c)`` (Li–Wang–Ye 2024 Section 4): the fraction of users on whose examples ``c`` errs more than ``t`` times.

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
    """``dis^s_x(c, h)`` (Li–Wang–Ye 2024 Section 4): the fraction of users on whose points ``c`` and ``h``
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
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= m:  # the rule names m
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
    """A rational ``value > 0``, read by :func:`dpverify.validation.exact_number` (``0.1`` is 1/10)."""
    number = exact_number(name, check_positive(name, value))
    if not isinstance(number, Fraction):
        raise InvalidArgument(f"{name} must be a rational number (int, float or Fraction), got {name}={value!r}.")
    return number


def _check_rounds(T: Any) -> int:
    return check_integer("T", T, at_least=1, what="the number of rounds", fix="pass e.g. T=2")


# -- shared checks ------------------------------------------------------------------------------


def _check_class(C: Any) -> ConceptClass:
    if not isinstance(C, ConceptClass):
        raise InvalidArgument(
            f"C must be a ConceptClass, got C={C!r}; build one with "
            "dpverify.finite.records.concept_class('thresholds', domain_size)."
        )
    return C


def _positive_epsilon(epsilon: Any) -> Any:
    check_epsilon(epsilon, positive=True, fix="the Laplace scale is 1/(n eps)")
    return exact_epsilon(epsilon)
