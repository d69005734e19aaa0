"""Pairs of rows as streams: index pairs produced chunk by chunk, never all at once.

The engine sweeps pairs in chunks of ``2**16``. A *pair source* tells how many pairs there are and
gives the index arrays ``(left, right)`` of any range of them on demand, so the memory of a sweep is
that of one chunk, whatever the pair count (black-box substitute pairs at ``n = 8`` over 8 records
are 470 M pairs: 7 GiB of indices if materialised). A source is a small picklable value: a worker
of an executor rebuilds its own chunks from it.

* :class:`ArrayPairs` — pairs already held as two index arrays.
* :class:`SubstitutePairs` — the black-box replace-one pairs over ordered datasets in lexicographic
  order (dataset index ``sum_p digit_p z^(n-1-p)``), computed arithmetically.
* :class:`MultisetPairs` — the exchangeable replace-one pairs over a multiset table, looked up chunk
  by chunk.
* :class:`TiledPairs` — a base source repeated over stacked copies of the rows (claims' projections).

:class:`OrderedDatasets` is the matching lazy list of the ``z**n`` ordered datasets.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ArrayPairs", "SubstitutePairs", "MultisetPairs", "TiledPairs", "OrderedDatasets", "MultisetDatasets",
           "as_source"]


@dataclass(frozen=True)
class ArrayPairs:
    """Pairs held as index arrays ``(left[i], right[i])``."""

    left: np.ndarray
    right: np.ndarray

    def __len__(self) -> int:
        return int(self.left.size)

    def chunk(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Index arrays of pairs ``start .. stop - 1``."""
        return self.left[start:stop], self.right[start:stop]

    def materialise(self) -> tuple[np.ndarray, np.ndarray]:
        return self.left, self.right


@dataclass(frozen=True)
class SubstitutePairs:
    """Black-box replace-one pairs over the ``z**n`` ordered datasets, in the order of
    :meth:`dpverify.finite.neighbors.Substitute.pairs`: for each position ``p`` (weight ``w = z^(n-1-p)``)
    and shift ``s = 1 .. z-1``, every dataset ``i`` whose digit ``p`` is below ``z - s``, paired with
    ``i + s w``. Segment ``(p, s)`` holds ``z^(n-1) (z - s)`` pairs; its ``k``-th pair has
    ``i = (k // ((z - s) w)) z w + k % ((z - s) w)``.

    Attributes:
        z: the number of records.
        n: the dataset size.
    """

    z: int
    n: int
    _starts: tuple[int, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        starts = [0]
        for _position in range(self.n):
            for shift in range(1, self.z):
                starts.append(starts[-1] + self.z ** (self.n - 1) * (self.z - shift))
        object.__setattr__(self, "_starts", tuple(starts))

    def __len__(self) -> int:
        return self._starts[-1]

    def _segments(self) -> Iterator[tuple[int, int, int]]:
        index = 0
        for position in range(self.n):
            for shift in range(1, self.z):
                yield index, position, shift
                index += 1

    def chunk(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Index arrays of pairs ``start .. stop - 1`` (computed, nothing stored)."""
        stop = min(stop, len(self))
        lefts, rights = [], []
        for segment, position, shift in self._segments():
            low, high = self._starts[segment], self._starts[segment + 1]
            if high <= start or low >= stop:
                continue
            k = np.arange(max(start, low) - low, min(stop, high) - low, dtype=np.int64)
            weight = self.z ** (self.n - 1 - position)
            run = (self.z - shift) * weight
            ids = (k // run) * (self.z * weight) + k % run
            lefts.append(ids)
            rights.append(ids + shift * weight)
        return _joined(lefts, rights)

    def materialise(self) -> tuple[np.ndarray, np.ndarray]:
        return self.chunk(0, len(self))

    def at(self, numbers: Any) -> tuple[np.ndarray, np.ndarray]:
        """Index arrays of the pairs numbered ``numbers`` (any order): what :meth:`chunk` gives at
        those places, without making the rest of the chunk."""
        numbers = np.asarray(numbers, dtype=np.int64)
        if numbers.size and (numbers.min() < 0 or numbers.max() >= len(self)):
            raise IndexError(f"pair numbers must be in 0..{len(self) - 1}, got {numbers.min()}..{numbers.max()}")
        starts = np.asarray(self._starts, dtype=np.int64)
        segment = np.searchsorted(starts, numbers, side="right") - 1
        position, shift = np.divmod(segment, self.z - 1)
        shift += 1
        weight = np.power(np.int64(self.z), self.n - 1 - position)
        k = numbers - starts[segment]
        run = (self.z - shift) * weight
        left = (k // run) * (self.z * weight) + k % run
        return left, left + shift * weight

    def boxes(self, start: int, stop: int) -> Iterator[tuple[int, tuple[int, int, int], tuple[slice, ...], tuple[slice, ...]]]:
        """Pairs ``start .. stop - 1`` as boxes of a dataset-indexed array viewed 3-D, no index arrays.

        Segment ``(p, s)`` pairs ``i = (o, m, r)`` with ``i + s w`` in the view ``(z^p, z, w)`` of
        the datasets (``o`` the digits before ``p``, ``m`` digit ``p`` below ``z - s``, ``r`` the
        digits after): its pairs in order are the view's ``[:, :z - s, :]`` read in C order, against
        ``[:, s:, :]``. A range of them is at most five boxes. Yields ``(offset, shape, left, right)``:
        the box's first pair relative to ``start``, the view's shape, and the slices of the view
        holding the box's left and right datasets (C order within the box is pair order).
        """
        stop = min(stop, len(self))
        for segment, position, shift in self._segments():
            low, high = self._starts[segment], self._starts[segment + 1]
            if high <= start or low >= stop:
                continue
            weight = self.z ** (self.n - 1 - position)
            shape = (self.z**position, self.z, weight)
            first, last = max(start, low) - low, min(stop, high) - low
            offset = max(start, low) - start
            for lows, highs in _rectangles(first, last, (shape[0], self.z - shift, weight)):
                left = tuple(slice(a, b) for a, b in zip(lows, highs))
                right = (left[0], slice(lows[1] + shift, highs[1] + shift), left[2])
                yield offset, shape, left, right
                offset += math.prod(b - a for a, b in zip(lows, highs))


def _rectangles(first: int, last: int, dims: tuple[int, ...]) -> Iterator[tuple[list[int], list[int]]]:
    """The flat C-order range ``first .. last - 1`` of an array of shape ``dims`` as boxes
    ``(lows, highs)`` in order (at most ``2 len(dims) - 1``)."""
    if first >= last:
        return
    if len(dims) == 1:
        yield [first], [last]
        return
    inner = math.prod(dims[1:])
    top, rest = divmod(first, inner)
    end, tail = divmod(last, inner)
    if top == end:
        for lows, highs in _rectangles(rest, tail, dims[1:]):
            yield [top, *lows], [top + 1, *highs]
        return
    if rest:
        for lows, highs in _rectangles(rest, inner, dims[1:]):
            yield [top, *lows], [top + 1, *highs]
        top += 1
    if end > top:
        yield [top, *(0 for _ in dims[1:])], [end, *dims[1:]]
    if tail:
        for lows, highs in _rectangles(0, tail, dims[1:]):
            yield [end, *lows], [end + 1, *highs]


@dataclass(frozen=True)
class MultisetPairs:
    """Exchangeable replace-one pairs ``(M + e_a, M + e_b)``, ``a < b``, over the table of multisets
    of size ``n`` (:mod:`dpverify.finite.multisets`), in the order of
    :meth:`~dpverify.finite.multisets.MultisetTable.substitute_pairs`: ``M`` in the order of the size
    ``n - 1`` table, then ``(a, b)`` in ``numpy.triu_indices`` order. Pair ``k`` is ``M`` number
    ``k // C(z, 2)``; a chunk looks up only its own ``M + e_a`` rows (the tables are cached per
    process, so a worker builds them once), so no index array of all pairs is ever held: at
    ``|X| = 4, n = 20`` that array pair would be 18.4 M pairs, 295 MB.

    Attributes:
        z: the number of records.
        n: the multiset size (>= 1).
    """

    z: int
    n: int

    def __len__(self) -> int:
        return math.comb(self.z + self.n - 2, self.n - 1) * math.comb(self.z, 2)

    def chunk(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Index arrays (rows of the size-``n`` table) of pairs ``start .. stop - 1``."""
        from dpverify.finite.multisets import table

        stop = min(stop, len(self))
        per = math.comb(self.z, 2)
        if stop <= start or per == 0:
            return _joined([], [])
        first, last = start // per, (stop - 1) // per + 1
        smaller = table(self.z, self.n - 1).counts[first:last]
        full = table(self.z, self.n)
        eye = np.eye(self.z, dtype=np.int64)
        members = np.stack([full.index(smaller + eye[a]) for a in range(self.z)], axis=1)  # checked look-ups
        a, b = np.triu_indices(self.z, k=1)
        offset = first * per
        left = np.take(members, a, axis=1).ravel()[start - offset : stop - offset]
        right = np.take(members, b, axis=1).ravel()[start - offset : stop - offset]
        if left.size != stop - start:  # invariant: every pair of the range, once
            raise AssertionError(f"{left.size} multiset pairs made for the range {start}..{stop}")
        return left, right

    def materialise(self) -> tuple[np.ndarray, np.ndarray]:
        from dpverify.finite.multisets import table

        return table(self.z, self.n).substitute_pairs()


@dataclass(frozen=True)
class TiledPairs:
    """``copies`` copies of a base source, copy ``v`` shifted by ``v * stride`` rows (copy-major)."""

    base: Any
    copies: int
    stride: int

    def __len__(self) -> int:
        return len(self.base) * self.copies

    def chunk(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        size = len(self.base)
        stop = min(stop, len(self))
        lefts, rights = [], []
        for copy in range(start // size if size else 0, self.copies):
            low = copy * size
            if low >= stop:
                break
            left, right = self.base.chunk(max(start - low, 0), min(stop - low, size))
            lefts.append(left + copy * self.stride)
            rights.append(right + copy * self.stride)
        return _joined(lefts, rights)

    def materialise(self) -> tuple[np.ndarray, np.ndarray]:
        return self.chunk(0, len(self))


def _joined(lefts: list[np.ndarray], rights: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The pieces of a chunk as one ``(left, right)`` pair of int64 arrays (empty when none)."""
    if not lefts:
        nothing = np.zeros(0, dtype=np.int64)
        return nothing, nothing
    return np.concatenate(lefts), np.concatenate(rights)


def as_source(left: Any, right: Any) -> ArrayPairs:
    """Index arrays as a pair source."""
    return ArrayPairs(np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64))


class _DatasetRange(Sequence):
    """A lazy range ``start .. stop - 1`` of an enumeration of datasets over ``records``: a slice is
    another range (cheap to pickle: a worker rebuilds its own block), a dataset is made on demand
    (:meth:`_dataset`), and iteration builds the tuples block by block from every dataset's record
    positions (:meth:`_record_positions`)."""

    def __init__(self, records: Sequence[Hashable], n: int, start: int = 0, stop: int | None = None) -> None:
        self.records = tuple(records)
        self.n = n
        total = self._total()
        self.start = start
        self.stop = total if stop is None else min(stop, total)

    def _total(self) -> int:
        raise NotImplementedError

    def _dataset(self, index: int) -> tuple:
        """Dataset ``index`` of the whole enumeration."""
        raise NotImplementedError

    def _record_positions(self) -> np.ndarray:
        """Every dataset of the range as the positions of its records in :attr:`records`, one row each."""
        raise NotImplementedError

    def __len__(self) -> int:
        return max(self.stop - self.start, 0)

    def __reduce__(self) -> tuple:
        return (type(self), (self.records, self.n, self.start, self.stop))

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            first, last, step = index.indices(len(self))
            if step != 1:
                return [self[i] for i in range(first, last, step)]
            return type(self)(self.records, self.n, self.start + first, self.start + max(last, first))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"dataset index {index} out of range")
        return self._dataset(self.start + index)

    def __iter__(self) -> Iterator[tuple]:
        records = np.empty(len(self.records), dtype=object)
        records[:] = self.records  # element-wise: records are often tuples themselves
        if self.n == 0:
            yield from [()] * len(self)
            return
        for first in range(0, len(self), _ITERATION_BLOCK):
            positions = self[first : first + _ITERATION_BLOCK]._record_positions()
            yield from zip(*(records[positions[:, p]].tolist() for p in range(self.n)))


_ITERATION_BLOCK = 1 << 14


class OrderedDatasets(_DatasetRange):
    """The ordered datasets ``records^n`` in lexicographic order, computed on demand.

    ``datasets[i]`` is ``itertools.product(records, repeat=n)``'s ``i``-th tuple; a slice is
    another lazy range (cheap to pickle: a worker rebuilds its own block).
    """

    def _total(self) -> int:
        return len(self.records) ** self.n

    def _dataset(self, value: int) -> tuple:
        z, digits = len(self.records), []
        for _ in range(self.n):
            value, digit = divmod(value, z)
            digits.append(self.records[digit])
        return tuple(reversed(digits))

    def position(self, dataset: tuple) -> int:
        """The index of ``dataset`` here, computed from its records' positions (base-``z`` digits),
        no look-up table of every dataset; ``KeyError`` if it is not one of them."""
        where = self.__dict__.get("_where_table")
        if where is None:
            where = self.__dict__["_where_table"] = {record: j for j, record in enumerate(self.records)}
        if len(dataset) != self.n:
            raise KeyError(dataset)
        value = 0
        try:
            for record in dataset:
                value = value * len(self.records) + where[record]
        except (KeyError, TypeError):
            raise KeyError(dataset) from None
        index = value - self.start
        if not 0 <= index < len(self):
            raise KeyError(dataset)
        return index

    def indices(self) -> np.ndarray:
        """Every dataset as the positions of its records in :attr:`records`: an ``int64`` array with
        one row of ``n`` positions per dataset (row ``i`` is dataset ``start + i``'s base-``z``
        digits). A vectorised ``distributions(datasets)`` can read these instead of the tuples."""
        z, count = len(self.records), len(self)
        positions = np.empty((count, self.n), dtype=np.int64)
        if not count:
            return positions
        stop = self.start + count
        for p in range(self.n):  # digit p runs through 0..z-1, each held weight times: no division per dataset
            weight = z ** (self.n - 1 - p)
            runs = np.arange(self.start // weight, (stop - 1) // weight + 1, dtype=np.int64)  # the block's runs
            lengths = np.minimum(stop, (runs + 1) * weight) - np.maximum(self.start, runs * weight)
            positions[:, p] = np.repeat(runs % z, lengths)
        return positions

    def _record_positions(self) -> np.ndarray:
        return self.indices()


class MultisetDatasets(_DatasetRange):
    """The multisets of size ``n`` over ``records`` as sorted tuples, in the order of the multiset
    table (:mod:`dpverify.finite.multisets`; that of ``itertools.combinations_with_replacement``),
    computed on demand.

    ``datasets[i]`` is multiset ``start + i`` as a tuple; a slice is another lazy range (cheap to
    pickle). A vectorised ``distributions(datasets)`` can read :meth:`counts` instead of the tuples:
    building a tuple per multiset, which the mechanism turned straight back into record codes, was
    half the exchangeable path's evaluation at n = 14.
    """

    def _total(self) -> int:
        from dpverify.finite.multisets import table

        return len(table(len(self.records), self.n))

    def _dataset(self, index: int) -> tuple:
        from dpverify.finite.multisets import table

        return table(len(self.records), self.n).records(index, self.records)

    def counts(self) -> np.ndarray:
        """Every multiset as its count vector: an ``int64`` array, one row per multiset, column
        ``j`` the multiplicity of ``records[j]`` (read-only: the table's own rows)."""
        from dpverify.finite.multisets import table

        return table(len(self.records), self.n).counts[self.start : self.stop]

    def positions(self) -> np.ndarray:
        """Every multiset as the sorted positions of its records in :attr:`records`: an ``int64``
        array, one row of ``n`` positions per multiset."""
        counts = self.counts()
        z = len(self.records)
        return np.repeat(np.tile(np.arange(z, dtype=np.int64), len(counts)), counts.ravel()).reshape(len(counts), self.n)

    def _record_positions(self) -> np.ndarray:
        return self.positions()
