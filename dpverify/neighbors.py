"""Neighbour relations over a finite record universe, enumerated as index pairs.

Two relations ship with the core:

* ``"substitute"`` (replace-one, the default): datasets of size ``n`` differing in one entry.
* ``"add_remove"``: a dataset of size ``n`` and the same dataset with one entry removed
  (size ``n - 1``).

Each relation enumerates its pairs two ways. The *black-box* way visits every ordered dataset and
every neighbour; it assumes nothing about the mechanism. The *exchangeable* way is for mechanisms
whose output distribution does not depend on the order of the records: datasets are multisets
(stored as tuples sorted by position in the record universe) and the pairs are ``(M + z, M + z')``
(substitute) or ``(M + z, M)`` (add/remove) for a multiset ``M`` of size ``n - 1``.

A :class:`PairSet` lists the datasets once and the pairs as two integer index arrays, each
unordered pair once: the checker evaluates both directions of the privacy inequality.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from dpverify.errors import EnumerationTooLarge, InvalidArgument

__all__ = ["PairSet", "NeighborRelation", "RELATIONS", "relation", "pair_count"]


@dataclass(frozen=True)
class PairSet:
    """Datasets and the neighbouring pairs among them.

    Attributes:
        datasets: every dataset the pairs mention, each once.
        left, right: index arrays into ``datasets``; pair ``i`` is
            ``(datasets[left[i]], datasets[right[i]])``.
    """

    datasets: list[tuple]
    left: np.ndarray
    right: np.ndarray

    def __len__(self) -> int:
        return int(self.left.size)


class NeighborRelation:
    """A neighbour relation: counts and enumerates pairs, black-box or exchangeable."""

    name: str = ""
    description: str = ""

    def count(self, universe_size: int, n: int, *, exchangeable: bool) -> int:
        raise NotImplementedError

    def pairs(self, records: Sequence[Hashable], n: int, *, exchangeable: bool) -> PairSet:
        raise NotImplementedError


def _multisets(size: int, universe_size: int) -> list[tuple[int, ...]]:
    return list(itertools.combinations_with_replacement(range(universe_size), size))


def _sorted_insert(multiset: tuple[int, ...], element: int) -> tuple[int, ...]:
    position = 0
    while position < len(multiset) and multiset[position] <= element:
        position += 1
    return multiset[:position] + (element,) + multiset[position:]


class Substitute(NeighborRelation):
    name = "substitute"
    description = "replace-one: same size n, one entry substituted"

    def count(self, universe_size: int, n: int, *, exchangeable: bool) -> int:
        z = universe_size
        if exchangeable:
            return math.comb(z + n - 2, n - 1) * math.comb(z, 2)
        return z**n * n * (z - 1) // 2

    def pairs(self, records: Sequence[Hashable], n: int, *, exchangeable: bool) -> PairSet:
        z = len(records)
        if exchangeable:
            from dpverify.multisets import table

            full = table(z, n)
            left, right = full.substitute_pairs()
            datasets = [tuple(records[i] for i in m) for m in _multisets(n, z)]
            return PairSet(datasets, left, right)
        # Ordered datasets in lexicographic order: index = sum_p digit_p * z^(n-1-p).
        total = z**n
        ids = np.arange(total, dtype=np.int64)
        lefts, rights = [], []
        for position in range(n):
            weight = z ** (n - 1 - position)
            digit = (ids // weight) % z
            for shift in range(1, z):
                keep = digit + shift < z
                lefts.append(ids[keep])
                rights.append(ids[keep] + shift * weight)
        datasets = list(itertools.product(records, repeat=n))
        left = np.concatenate(lefts) if lefts else np.zeros(0, np.int64)
        right = np.concatenate(rights) if rights else np.zeros(0, np.int64)
        return PairSet(datasets, left, right)


class AddRemove(NeighborRelation):
    name = "add_remove"
    description = "add/remove-one: a dataset of size n and the same with one entry removed"

    def count(self, universe_size: int, n: int, *, exchangeable: bool) -> int:
        z = universe_size
        if exchangeable:
            return math.comb(z + n - 2, n - 1) * z
        return z**n * n

    def pairs(self, records: Sequence[Hashable], n: int, *, exchangeable: bool) -> PairSet:
        z = len(records)
        if exchangeable:
            big = _multisets(n, z)
            small = _multisets(n - 1, z)
            index = {m: i for i, m in enumerate(big)}
            offset = len(big)
            left, right = [], []
            for j, rest in enumerate(small):
                for a in range(z):
                    left.append(index[_sorted_insert(rest, a)])
                    right.append(offset + j)
            datasets = [tuple(records[i] for i in m) for m in big + small]
            return PairSet(datasets, np.array(left, np.int64), np.array(right, np.int64))
        big = list(itertools.product(range(z), repeat=n))
        small = list(itertools.product(range(z), repeat=n - 1))
        small_index = {m: i for i, m in enumerate(small)}
        offset = len(big)
        left, right = [], []
        for i, dataset in enumerate(big):
            for position in range(n):
                left.append(i)
                right.append(offset + small_index[dataset[:position] + dataset[position + 1 :]])
        datasets = [tuple(records[i] for i in m) for m in big + small]
        return PairSet(datasets, np.array(left, np.int64), np.array(right, np.int64))


RELATIONS: dict[str, NeighborRelation] = {r.name: r for r in (Substitute(), AddRemove())}


def relation(name: str | NeighborRelation) -> NeighborRelation:
    """Look up a neighbour relation by name (or pass one through)."""
    if isinstance(name, NeighborRelation):
        return name
    try:
        return RELATIONS[name]
    except (KeyError, TypeError):
        raise InvalidArgument(
            f"unknown neighbour relation neighbors={name!r}; choose one of {sorted(RELATIONS)}."
        ) from None


def pair_count(
    neighbors: str | NeighborRelation, universe_size: int, n: int, *, exchangeable: bool
) -> int:
    """Number of unordered neighbouring pairs the enumeration would visit."""
    return relation(neighbors).count(universe_size, n, exchangeable=exchangeable)


def check_enumeration_size(
    neighbors: str | NeighborRelation,
    universe_size: int,
    n: int,
    *,
    exchangeable: bool,
    max_pairs: int,
) -> int:
    """Raise :class:`EnumerationTooLarge` (with the count and what to lower) past ``max_pairs``."""
    count = pair_count(neighbors, universe_size, n, exchangeable=exchangeable)
    if count > max_pairs:
        hint = (
            "declare the mechanism exchangeable if its output ignores record order, "
            if not exchangeable
            else ""
        )
        raise EnumerationTooLarge(
            f"exhaustive enumeration would visit {count:,} neighbouring pairs "
            f"({universe_size} records, n={n}, neighbors={relation(neighbors).name!r}, "
            f"exchangeable={exchangeable}), more than max_pairs={max_pairs:,}; lower n or the "
            f"number of records, {hint}raise max_pairs, or use dpverify.strategies for a "
            "targeted search."
        )
    return count
