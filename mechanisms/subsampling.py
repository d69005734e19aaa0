"""Uniform subsampling, without and with replacement, as exact distributions over subsamples.

Without replacement (Li–Wang–Ye 2025 Alg. 2 step 1: ``I ⊆ [n]`` uniform of size
``k = ⌈εn⌉``; Dagan–Feldman 2020 Lemma 8: a uniform subset of size ``n' = ηn``), two forms:

* :func:`subsample_index_sets` — the naive reference: each of the ``C(n, k)`` index sets ``I`` has
  probability ``1 / C(n, k)`` and yields the sub-tuple ``S_I`` in index order;
* :func:`subsample_multisets` — grouped by content: a sub-multiset with ``t_z`` copies of each
  distinct record ``z`` (which occurs ``m_z`` times in ``S``) has the multivariate hypergeometric
  probability ``prod_z C(m_z, t_z) / C(n, k)``.

With replacement (Li–Wang–Ye 2025 Lemma 21, claim C5: ``m`` independent uniform draws
from ``S``): :func:`sample_with_replacement` gives the multinomial probability
``m! / prod_z t_z! * prod_z (m_z / n)^{t_z}`` of each canonical multiset, and
:func:`sample_with_replacement_ordered` the reference over all ``n^m`` ordered draws.

Sub-multisets are represented canonically by :func:`canonical` (a sorted tuple). The wrappers
:func:`subsampled` and :func:`subsampled_with_replacement` run a mechanism on the subsample and
return the mixture; in grouped form the inner mechanism must be exchangeable and is evaluated once
per distinct sub-multiset (cached). All probabilities are Fractions.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any

from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.validation import check_callable, check_integer

__all__ = [
    "canonical",
    "subsample_index_sets",
    "subsample_multisets",
    "sample_with_replacement",
    "sample_with_replacement_ordered",
    "subsampled",
    "subsampled_with_replacement",
]

Mechanism = Callable[[tuple], Mapping[Hashable, Any]]


def canonical(multiset: Iterable[Hashable]) -> tuple:
    """The canonical form of a multiset of records: the sorted tuple.

    Records that cannot be compared with each other (``1`` and ``'a'``) are sorted by ``repr``
    instead, which is canonical as long as distinct records have distinct ``repr``.
    """
    items = tuple(multiset)
    try:
        return tuple(sorted(items))
    except TypeError:
        return tuple(sorted(items, key=repr))


def _check_k(k: Any, n: int) -> None:
    check_integer(
        "k", k, at_least=0, at_most=n,
        fix=f"n={n} is the dataset size: sampling without replacement cannot take more entries than there are",
    )


def _check_m(m: Any) -> None:
    check_integer("m", m, at_least=0, fix="m is the number of draws")


def _as_tuple(dataset: Sequence[Hashable]) -> tuple:
    try:
        return tuple(dataset)
    except TypeError:
        raise InvalidArgument(
            f"dataset must be a sequence of records, got {type(dataset).__name__}."
        ) from None


def subsample_index_sets(dataset: Sequence[Hashable], k: int) -> Distribution:
    """Li–Wang–Ye 2025 Alg. 2 step 1 / Dagan–Feldman 2020 Lemma 8: naive reference.

    Args:
        dataset: the dataset S (n records).
        k: the subsample size, in [0, n].

    Returns:
        The distribution of ``S_I`` (records in index order) for ``I`` uniform among the
        ``C(n, k)`` index sets of size ``k``; equal sub-tuples are merged.

    Raises:
        InvalidArgument: ``k`` not an integer in [0, n].
    """
    records = _as_tuple(dataset)
    _check_k(k, len(records))
    share = Fraction(1, math.comb(len(records), k))
    return Distribution(
        (tuple(records[i] for i in index_set), share)
        for index_set in itertools.combinations(range(len(records)), k)
    )


def _bounded_compositions(total: int, bounds: Sequence[int | None]) -> Iterator[tuple[int, ...]]:
    """Vectors ``t >= 0`` with ``sum(t) = total`` and ``t[i] <= bounds[i]`` (None: unbounded)."""
    if not bounds:
        if total == 0:
            yield ()
        return
    first, rest = bounds[0], bounds[1:]
    room = sum(b for b in rest if b is not None) if None not in rest else total
    top = total if first is None else min(first, total)
    for count in range(max(0, total - room), top + 1):
        for tail in _bounded_compositions(total - count, rest):
            yield (count, *tail)


def _expand(distinct: Sequence[Hashable], counts: Sequence[int]) -> tuple:
    return canonical(z for z, t in zip(distinct, counts) for _ in range(t))


def subsample_multisets(dataset: Sequence[Hashable], k: int) -> Distribution:
    """Li–Wang–Ye 2025 Alg. 2 step 1 / Dagan–Feldman 2020 Lemma 8: grouped form.

    Args:
        dataset: the dataset S (n records; ``m_z`` copies of record ``z``).
        k: the subsample size, in [0, n].

    Returns:
        The distribution of the canonical sub-multiset: ``t_z`` copies of each ``z`` with
        probability ``prod_z C(m_z, t_z) / C(n, k)`` (multivariate hypergeometric).

    Raises:
        InvalidArgument: ``k`` not an integer in [0, n].
    """
    records = _as_tuple(dataset)
    _check_k(k, len(records))
    multiplicities = Counter(records)
    distinct = list(multiplicities)
    denominator = math.comb(len(records), k)
    return Distribution(
        (
            _expand(distinct, counts),
            Fraction(math.prod(math.comb(multiplicities[z], t) for z, t in zip(distinct, counts)),
                     denominator),
        )
        for counts in _bounded_compositions(k, [multiplicities[z] for z in distinct])
    )


def sample_with_replacement(dataset: Sequence[Hashable], m: int) -> Distribution:
    """Li–Wang–Ye 2025 Lemma 21 (C5): m uniform draws with replacement, grouped form.

    Args:
        dataset: the dataset S (n records, ``m_z`` copies of record ``z``); non-empty if m > 0.
        m: the number of draws (>= 0).

    Returns:
        The distribution of the canonical multiset of draws: ``t_z`` copies of each ``z`` with
        probability ``m! / prod_z t_z! * prod_z (m_z / n)^{t_z}`` (multinomial).

    Raises:
        InvalidArgument: ``m`` not an integer >= 0, or an empty dataset with m > 0.
    """
    records = _as_tuple(dataset)
    _check_m(m)
    if m == 0:
        return Distribution({(): Fraction(1)})
    if not records:
        raise InvalidArgument(
            f"cannot draw m={m!r} records from an empty dataset; pass a non-empty dataset or m=0."
        )
    multiplicities = Counter(records)
    distinct = list(multiplicities)
    n = len(records)
    outcomes = []
    for counts in _bounded_compositions(m, [None] * len(distinct)):
        arrangements = math.factorial(m)
        weight = Fraction(1)
        for z, t in zip(distinct, counts):
            arrangements //= math.factorial(t)
            weight *= Fraction(multiplicities[z], n) ** t
        outcomes.append((_expand(distinct, counts), arrangements * weight))
    return Distribution(outcomes)


def sample_with_replacement_ordered(dataset: Sequence[Hashable], m: int) -> Distribution:
    """Li–Wang–Ye 2025 Lemma 21 (C5): the naive reference over all n^m ordered draws.

    Args:
        dataset: the dataset S (n records); non-empty if m > 0.
        m: the number of draws (>= 0).

    Returns:
        The distribution of the tuple of draws in draw order (each index sequence has
        probability ``1 / n^m``; equal tuples merged).

    Raises:
        InvalidArgument: ``m`` not an integer >= 0, or an empty dataset with m > 0.
    """
    records = _as_tuple(dataset)
    _check_m(m)
    if m > 0 and not records:
        raise InvalidArgument(
            f"cannot draw m={m!r} records from an empty dataset; pass a non-empty dataset or m=0."
        )
    share = Fraction(1, len(records) ** m)
    return Distribution(
        (tuple(records[i] for i in indices), share)
        for indices in itertools.product(range(len(records)), repeat=m)
    )


def _as_distribution(value: Any) -> Distribution:
    return value if isinstance(value, Distribution) else Distribution(value)


def _wrap(
    mechanism: Mechanism,
    grouped: bool,
    sampler: Callable[[tuple], Distribution],
    name: str,
) -> Callable[[tuple], Distribution]:
    check_callable("mechanism", mechanism, fix="pass a function dataset -> distribution")
    inner_exchangeable = bool(getattr(mechanism, "exchangeable", False))
    if grouped and not inner_exchangeable:
        raise InvalidArgument(
            f"grouped=True evaluates the mechanism once per sub-multiset, which is only correct "
            f"for an exchangeable mechanism, and {getattr(mechanism, '__name__', mechanism)!r} is "
            "not declared exchangeable; mark it with @dpverify.exchangeable if its output ignores "
            "the order of the records, or pass grouped=False."
        )
    cache: dict[tuple, Distribution] = {}

    def evaluate(subsample: tuple) -> Distribution:
        if not grouped:
            return _as_distribution(mechanism(subsample))
        result = cache.get(subsample)
        if result is None:
            result = _as_distribution(mechanism(subsample))
            cache[subsample] = result
        return result

    def wrapped(dataset: tuple) -> Distribution:
        return sampler(_as_tuple(dataset)).bind(evaluate)

    wrapped.__name__ = f"{name}_{getattr(mechanism, '__name__', 'mechanism')}"
    if inner_exchangeable:
        wrapped.exchangeable = True  # type: ignore[attr-defined]
    return wrapped


def subsampled(
    mechanism: Mechanism, k: int, *, grouped: bool
) -> Callable[[tuple], Distribution]:
    """Li–Wang–Ye 2025 Alg. 2 / Dagan–Feldman 2020 Lemma 8: run M on a k-subset.

    Args:
        mechanism: the inner mechanism ``M`` (sub-dataset -> distribution).
        k: the subsample size (checked against each dataset's size on call).
        grouped: True to run ``M`` once per canonical sub-multiset (requires ``M`` to be declared
            exchangeable; results cached by multiset); False for the reference over all index
            sets (``M`` sees sub-tuples in index order).

    Returns:
        A callable ``dataset -> mixture over subsamples of M(subsample)``, marked exchangeable
        when ``M`` is.

    Raises:
        InvalidArgument: ``k`` not an integer >= 0, or grouped=True with ``M`` not exchangeable
            (here); ``k > len(dataset)`` (on call).
    """
    check_integer("k", k, at_least=0, fix="k is the subsample size")
    sampler = subsample_multisets if grouped else subsample_index_sets
    return _wrap(mechanism, grouped, lambda dataset: sampler(dataset, k), "subsampled")


def subsampled_with_replacement(
    mechanism: Mechanism, m: int, *, grouped: bool
) -> Callable[[tuple], Distribution]:
    """Li–Wang–Ye 2025 Lemma 21 (C5): run M on m draws with replacement.

    Args:
        mechanism: the inner mechanism ``A`` on datasets of size ``m``.
        m: the number of draws (>= 0).
        grouped: True to run ``A`` once per canonical multiset of draws (requires ``A`` to be
            declared exchangeable; cached); False for the reference over all ``n^m`` ordered draws.

    Returns:
        A callable ``dataset -> mixture of A(draws)``, marked exchangeable when ``A`` is.

    Raises:
        InvalidArgument: ``m`` not an integer >= 0, or grouped=True with ``A`` not exchangeable.
    """
    _check_m(m)
    sampler = sample_with_replacement if grouped else sample_with_replacement_ordered
    return _wrap(mechanism, grouped, lambda dataset: sampler(dataset, m), "subsampled_with_replacement")
