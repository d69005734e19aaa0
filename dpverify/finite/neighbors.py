"""Neighbour relations over a finite record universe, enumerated as index pairs.

Three relations ship with the core:

* ``"substitute"`` (replace-one, the default): datasets of size ``n`` differing in one entry.
* ``"add_remove"``: a dataset of size ``n`` and the same dataset with one entry removed
  (size ``n - 1``).
* ``"user_level"`` (:class:`UserLevel`, Li–Wang–Ye 2024 Section 4): a dataset is a tuple of
  ``n`` users, each a block of ``m`` records, and neighbours replace one user's whole block. Its
  "records" are the user blocks: build the block universe with :func:`user_blocks`, then pass it as
  ``records`` with ``n`` = the number of users (``neighbors="user_level"``, or
  ``relation(("user_level", m))`` / :func:`user_level` to have every block checked to hold ``m``
  records).

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
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from dpverify.errors import EnumerationTooLarge, InvalidArgument
from dpverify.finite.records import check_records
from dpverify.validation import check_choice, check_integer

__all__ = [
    "PairSet",
    "NeighborRelation",
    "UserLevel",
    "RELATIONS",
    "PARAMETRISED_RELATIONS",
    "relation",
    "pair_count",
    "user_level",
    "user_blocks",
]


class PairSet:
    """Datasets and the neighbouring pairs among them.

    Attributes:
        datasets: every dataset the pairs mention, each once (a list, or for black-box replace-one
            pairs a lazy :class:`~dpverify.finite.pair_sources.OrderedDatasets`).
        source: the pairs as a stream (:mod:`dpverify.finite.pair_sources`): ``source.chunk(start, stop)``
            gives the index arrays of a range of pairs; the engine sweeps them chunk by chunk.
        left, right: index arrays into ``datasets``; pair ``i`` is
            ``(datasets[left[i]], datasets[right[i]])``. Materialised on first use (their memory
            grows with the pair count; the checker never asks for them).
    """

    def __init__(self, datasets: Sequence[tuple], left: Any = None, right: Any = None, *, source: Any = None) -> None:
        from dpverify.finite.pair_sources import as_source

        self.datasets = datasets
        self.source = as_source(left, right) if source is None else source
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None
        self._positions: dict[tuple, int] | None = None

    def position(self, dataset: tuple) -> int:
        """The index of ``dataset`` in ``datasets``: computed by lazy datasets that can
        (:class:`~dpverify.finite.pair_sources.OrderedDatasets`, ``MultisetDatasets``), else from a
        look-up table built on first use, once."""
        computed = getattr(self.datasets, "position", None)
        if computed is not None:
            return computed(dataset)
        if self._positions is None:
            self._positions = {d: i for i, d in enumerate(self.datasets)}
        return self._positions[dataset]

    @property
    def left(self) -> np.ndarray:
        return self.index_arrays()[0]

    @property
    def right(self) -> np.ndarray:
        return self.index_arrays()[1]

    def index_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Every pair's ``(left, right)`` indices (materialised once)."""
        if self._arrays is None:
            self._arrays = self.source.materialise()
        return self._arrays

    def __len__(self) -> int:
        return len(self.source)


class NeighborRelation:
    """A neighbour relation: counts and enumerates pairs, black-box or exchangeable."""

    name: str = ""
    description: str = ""

    def count(self, universe_size: int, n: int, *, exchangeable: bool) -> int:
        raise NotImplementedError

    def pairs(self, records: Sequence[Hashable], n: int, *, exchangeable: bool) -> PairSet:
        raise NotImplementedError

    def is_neighbor(self, first: tuple, second: tuple, *, exchangeable: bool) -> bool:
        """Whether ``(first, second)`` is a neighbouring pair (either order) — an independent check
        the engine runs on every witness. Exchangeable pairs are compared as multisets."""
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

    def is_neighbor(self, first: tuple, second: tuple, *, exchangeable: bool) -> bool:
        return _differ_in_one(first, second, exchangeable=exchangeable)

    def pairs(self, records: Sequence[Hashable], n: int, *, exchangeable: bool) -> PairSet:
        z = len(records)
        if exchangeable:
            from dpverify.finite.pair_sources import MultisetDatasets, MultisetPairs

            # the multiset table's order, tuples made on demand; pairs streamed, chunk by chunk
            return PairSet(MultisetDatasets(records, n), source=MultisetPairs(z, n))
        # Ordered datasets in lexicographic order (index = sum_p digit_p * z^(n-1-p)), pairs streamed.
        from dpverify.finite.pair_sources import OrderedDatasets, SubstitutePairs

        return PairSet(OrderedDatasets(records, n), source=SubstitutePairs(z, n))


def _differ_in_one(first: tuple, second: tuple, *, exchangeable: bool) -> bool:
    if len(first) != len(second):
        return False
    if exchangeable:
        extra = Counter(first) - Counter(second)
        return sum(extra.values()) == 1
    return sum(a != b for a, b in zip(first, second)) == 1


def _one_removed(first: tuple, second: tuple, *, exchangeable: bool) -> bool:
    big, small = (first, second) if len(first) == len(second) + 1 else (second, first)
    if len(big) != len(small) + 1:
        return False
    if exchangeable:
        extra = Counter(big) - Counter(small)
        return sum(extra.values()) == 1 and not (Counter(small) - Counter(big))
    return any(big[:i] + big[i + 1 :] == small for i in range(len(big)))


class AddRemove(NeighborRelation):
    name = "add_remove"
    description = "add/remove-one: a dataset of size n and the same with one entry removed"

    def count(self, universe_size: int, n: int, *, exchangeable: bool) -> int:
        z = universe_size
        if exchangeable:
            return math.comb(z + n - 2, n - 1) * z
        return z**n * n

    def is_neighbor(self, first: tuple, second: tuple, *, exchangeable: bool) -> bool:
        return _one_removed(first, second, exchangeable=exchangeable)

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


def _check_block_size(m: object) -> None:
    check_integer("m", m, at_least=1, fix="m is the number of records each user holds; pass e.g. m=2")


def user_blocks(records: Sequence[Hashable], m: int, *, ordered: bool = True) -> tuple[tuple, ...]:
    """The universe of user blocks: every tuple of ``m`` records one user can hold.

    Args:
        records: the record universe (hashable, distinct), e.g. ``labeled_records(2)``.
        m: the number of records per user (>= 1).
        ordered: True (default) for every tuple in ``records^m``; False for one block per multiset
            of ``m`` records (sorted by position in ``records``). Use ``ordered=False`` only for
            mechanisms that ignore the order of the records *within* a user's block: the checker's
            exchangeability test permutes users, not the records inside a block.

    Returns:
        The blocks, to be passed as ``records`` with ``neighbors="user_level"``.

    Raises:
        InvalidArgument: ``m`` is not an integer >= 1, or ``records`` is empty or repeats a record.
    """
    _check_block_size(m)
    universe = check_records(records)
    if ordered:
        return tuple(itertools.product(universe, repeat=m))
    return tuple(itertools.combinations_with_replacement(universe, m))


class UserLevel(NeighborRelation):
    """User-level neighbours (Li–Wang–Ye 2024 Section 4): replace one user's whole block.

    A dataset ``z`` is a tuple of ``n`` users, each a block (tuple) of ``m`` records; ``z ~ z'``
    iff they differ in exactly one user's block (any number of that user's records may change).
    This is replace-one over the universe of blocks, so the relation takes the *blocks* as its
    records (:func:`user_blocks`) and ``n`` as the number of users: the black-box enumeration
    visits every ordered tuple of users, the exchangeable one every multiset of users (for
    mechanisms that ignore the order of the users), and counts are those of ``"substitute"`` over
    ``len(blocks)`` records.

    Args:
        m: the block size every user must have, or None to accept any common block size (the size
            of the first block).

    Raises:
        InvalidArgument: ``m`` given but not an integer >= 1.
    """

    name = "user_level"
    description = "user-level: n users of m records each, one user's whole block replaced"

    def __init__(self, m: int | None = None) -> None:
        if m is not None:
            _check_block_size(m)
        self.m = m

    def __repr__(self) -> str:
        return f"UserLevel(m={self.m!r})"

    def count(self, universe_size: int, n: int, *, exchangeable: bool) -> int:
        """Pairs over ``universe_size`` blocks and ``n`` users (as ``"substitute"``)."""
        return _SUBSTITUTE.count(universe_size, n, exchangeable=exchangeable)

    def count_for_records(self, record_count: int, n: int, *, exchangeable: bool, ordered: bool = True) -> int:
        """Pairs when the blocks are :func:`user_blocks` of ``record_count`` records (needs ``m``)."""
        if self.m is None:
            raise InvalidArgument(
                "count_for_records needs the block size: use user_level(m) or relation(('user_level', m))."
            )
        blocks = record_count**self.m if ordered else math.comb(record_count + self.m - 1, self.m)
        return self.count(blocks, n, exchangeable=exchangeable)

    def check_blocks(self, blocks: Sequence[Hashable]) -> int:
        """Check that every block is a tuple of the same size (``m`` if given); return that size."""
        size = self.m
        for block in blocks:
            if not isinstance(block, tuple):
                raise InvalidArgument(
                    f"user-level records must be user blocks (tuples of m records), got {block!r}; "
                    "build them with dpverify.finite.neighbors.user_blocks(records, m)."
                )
            if size is None:
                size = len(block)
                if size < 1:
                    raise InvalidArgument(
                        "user blocks must hold m >= 1 records, got the empty block (); build them with "
                        "user_blocks(records, m) with m >= 1."
                    )
            if len(block) != size:
                raise InvalidArgument(
                    f"every user must hold m={size} records, got the block {block!r} of size "
                    f"{len(block)}; build the blocks with user_blocks(records, m={size})."
                )
        return int(size or 0)

    def is_neighbor(self, first: tuple, second: tuple, *, exchangeable: bool) -> bool:
        """One user's whole block differs (blocks compared as records)."""
        return _differ_in_one(first, second, exchangeable=exchangeable)

    def pairs(self, records: Sequence[Hashable], n: int, *, exchangeable: bool) -> PairSet:
        self.check_blocks(records)
        return _SUBSTITUTE.pairs(records, n, exchangeable=exchangeable)


def user_level(m: int) -> UserLevel:
    """The user-level relation with blocks of exactly ``m`` records (Li–Wang–Ye 2024 Section 4)."""
    return UserLevel(m)


_SUBSTITUTE = Substitute()

#: The relations over plain records, by name.
RELATIONS: dict[str, NeighborRelation] = {r.name: r for r in (_SUBSTITUTE, AddRemove())}

#: Relations over structured records that take a parameter: ``relation((name, parameter))``, or
#: ``relation(name)`` for the default (``UserLevel()`` accepts any common block size).
PARAMETRISED_RELATIONS: dict[str, Callable[..., NeighborRelation]] = {"user_level": UserLevel}


def relation(name: str | tuple | NeighborRelation) -> NeighborRelation:
    """Look up a neighbour relation by name (or pass one through).

    ``("user_level", m)`` gives the user-level relation with blocks of exactly ``m`` records.
    """
    if isinstance(name, NeighborRelation):
        return name
    if isinstance(name, tuple) and len(name) == 2 and name[0] in PARAMETRISED_RELATIONS:
        return PARAMETRISED_RELATIONS[name[0]](name[1])
    if isinstance(name, str) and name in PARAMETRISED_RELATIONS:
        return PARAMETRISED_RELATIONS[name]()
    choices = sorted(RELATIONS) + sorted(PARAMETRISED_RELATIONS)  # a parametrised name returned above
    check_choice("neighbors", name, choices, what="neighbour relation", fix="(or ('user_level', m))")
    assert isinstance(name, str)  # check_choice accepted it: one of the plain relations' names
    return RELATIONS[name]


def pair_count(
    neighbors: str | tuple | NeighborRelation, universe_size: int, n: int, *, exchangeable: bool
) -> int:
    """Number of unordered neighbouring pairs the enumeration would visit."""
    return relation(neighbors).count(universe_size, n, exchangeable=exchangeable)


def check_enumeration_size(
    neighbors: str | tuple | NeighborRelation,
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
            f"number of records, {hint}raise max_pairs, or use dpverify.integrations.strategies for a "
            "targeted search."
        )
    return count
