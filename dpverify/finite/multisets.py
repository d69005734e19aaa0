"""Multisets as count vectors: the fast representation behind exchangeable mechanisms.

A multiset of size ``n`` over a universe of ``z`` records is a vector of ``z`` non-negative counts
summing to ``n``. :class:`MultisetTable` lists all of them (in the order of
``itertools.combinations_with_replacement``) with an integer code per vector, so sub-multisets,
complements and neighbours are found by vectorised look-ups instead of Python loops.

The substitute pairs of an exchangeable mechanism are ``(M + e_a, M + e_b)`` for every multiset
``M`` of size ``n - 1`` and records ``a < b``: ``C(z + n - 2, n - 1) * C(z, 2)`` pairs.
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["MultisetTable", "table", "hypergeometric_weights"]


class MultisetTable:
    """All multisets of size ``n`` over ``z`` records as rows of a count matrix.

    Attributes:
        counts: int array ``(len, z)``; row ``i`` is multiset ``i``.

    Look-ups use the combinatorial number system: a count vector is a placement of ``z - 1`` bars
    among ``n + z - 1`` slots (stars and bars), and the bar positions ``b_0 < ... < b_{z-2}`` give
    the code ``sum_j C(b_j, j + 1)``, a bijection onto ``[0, C(n + z - 1, z - 1))``. Codes are
    therefore below the table's own length and exact in int64 for every table that fits in memory
    (a mixed-radix code ``(n + 1)^z`` would wrap past ``2**63`` and silently alias rows).
    """

    def __init__(self, universe_size: int, n: int) -> None:
        self.universe_size = universe_size
        self.n = n
        self.counts = _count_vectors(universe_size, n)
        self._binomials = _bar_binomials(universe_size, n)
        codes = self._codes(self.counts)
        # The code is a bijection onto [0, len): invert it once, so a look-up is one gather.
        self._row_of_code = np.full(len(codes), -1, dtype=np.int64)
        inside = (codes >= 0) & (codes < len(codes))
        self._row_of_code[codes[inside]] = np.flatnonzero(inside)
        if not inside.all() or (self._row_of_code < 0).any():
            raise AssertionError(f"multiset codes are not a bijection onto the rows for z={universe_size}, n={n}")

    def __len__(self) -> int:
        return self.counts.shape[0]

    def __reduce__(self) -> tuple:
        # A table is a function of (z, n) alone: a worker process rebuilds it once (cached by
        # :func:`table`; a forked worker inherits the driver's) instead of receiving its arrays with
        # every task (2.3 MB for z = 8, n = 11, sent with each of C3's mixture and relabel tasks).
        return table, (self.universe_size, self.n)

    def _codes(self, counts: np.ndarray) -> np.ndarray:
        """Exact combinatorial-number-system codes (see :func:`_bar_binomials`), one per row."""
        z = self.universe_size
        if z == 1:
            return np.zeros(counts.shape[0], dtype=np.int64)
        # Stars and bars: bar j (j = 0..z-2) sits at position c_0 + ... + c_j + j.
        bars = np.cumsum(counts[:, :-1], axis=1) + np.arange(z - 1, dtype=np.int64)
        return self._binomials[np.arange(z - 1), bars].sum(axis=1)

    def index(self, counts: np.ndarray) -> np.ndarray:
        """Row indices of the given count vectors (``(m, z)`` array).

        Raises:
            ValueError: a vector is not a multiset of this table (negative count, wrong size or
                wrong total): looking it up would silently return another row.
        """
        counts = np.asarray(counts, dtype=np.int64)
        if counts.ndim != 2 or counts.shape[1] != self.universe_size:
            raise ValueError(f"expected count vectors of shape (m, {self.universe_size}), got {counts.shape}")
        try:
            codes = self._codes(counts)
        except IndexError:  # a bar past the last slot: a total above n
            codes = np.full(counts.shape[0], -1, dtype=np.int64)
        rows = self._row_of_code[np.clip(codes, 0, len(self) - 1)]
        # The code is a bijection on the table; a vector outside it (a negative count, a total other
        # than n) lands on another row or none, which this comparison catches: never a silent alias.
        if not np.array_equal(self.counts[rows], counts):
            raise ValueError(
                f"count vectors not in the table of multisets of size n={self.n} over "
                f"{self.universe_size} records (each must be non-negative and sum to n={self.n})"
            )
        return rows

    def records(self, row: int, universe: tuple) -> tuple:
        """Multiset ``row`` as a sorted tuple of records."""
        return tuple(r for r, c in zip(universe, self.counts[row]) for _ in range(int(c)))

    def substitute_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Index arrays ``(left, right)`` of the pairs ``(M + e_a, M + e_b)``, ``a < b`` (cached)."""
        cached = getattr(self, "_pairs", None)
        if cached is not None:
            return cached
        smaller = table(self.universe_size, self.n - 1)
        eye = np.eye(self.universe_size, dtype=np.int64)
        members = np.stack([self.index(smaller.counts + eye[a]) for a in range(self.universe_size)], axis=1)
        a, b = np.triu_indices(self.universe_size, k=1)
        self._pairs = (np.take(members, a, axis=1).ravel(), np.take(members, b, axis=1).ravel())
        for indices in self._pairs:  # shared by every caller (and sent to workers once): read-only
            indices.setflags(write=False)
        expected = len(smaller) * math.comb(self.universe_size, 2)  # C(z+n-2, n-1) C(z, 2)
        if self._pairs[0].size != expected:  # invariant: an independent count
            raise AssertionError(f"{self._pairs[0].size} substitute pairs enumerated, {expected} expected")
        return self._pairs


@functools.lru_cache(maxsize=32)
def _count_vectors(universe_size: int, n: int) -> np.ndarray:
    """All count vectors, in ``combinations_with_replacement`` order (read-only, cached).

    That order lists the multisets with the most copies of record 0 first: the table is the blocks
    ``c_0 = n, n - 1, ..., 0``, each ``c_0`` followed by the table of ``n - c_0`` over the other
    records. The tables are built bottom up, one universe size at a time, keeping only the
    previous size's tables: a recursion that kept every sub-table held 8 GB for ``z = 300, n = 2``
    (the final table is 108 MB).
    """
    if universe_size == 0:
        return _read_only(np.zeros((1 if n == 0 else 0, 0), dtype=np.int64))
    # level[m]: the count vectors over the last k records with sum m, for k = 1 .. universe_size
    level = [np.full((1, 1), m, dtype=np.int64) for m in range(n + 1)]
    for k in range(2, universe_size + 1):
        nxt = []
        for m in range(n + 1):
            blocks = []
            for first in range(m, -1, -1):
                rest = level[m - first]
                block = np.empty((rest.shape[0], k), dtype=np.int64)
                block[:, 0] = first
                block[:, 1:] = rest
                blocks.append(block)
            nxt.append(np.concatenate(blocks))
        level = nxt
    return _read_only(level[n])


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@functools.lru_cache(maxsize=64)
def _bar_binomials(universe_size: int, n: int) -> np.ndarray:
    """``B[j, p] = C(p, j + 1)`` for bar ``j`` at slot ``p`` (0 where bar ``j`` cannot be, p > n + j).

    Every used entry is at most ``C(n + z - 2, z - 1)``, below the number of multisets, so int64 is
    exact whenever the table itself can be listed; larger tables are refused loudly.
    """
    z = universe_size
    total = math.comb(n + z - 1, max(z - 1, 0))
    if total >= 2**62:
        raise ValueError(f"{total} multisets of size n={n} over {z} records cannot be tabulated")
    width = n + z - 1
    values = np.zeros((max(z - 1, 0), width), dtype=np.int64)
    for j in range(z - 1):
        for p in range(min(n + j, width - 1) + 1):
            values[j, p] = math.comb(p, j + 1)
    values.setflags(write=False)
    return values


@functools.lru_cache(maxsize=64)
def table(universe_size: int, n: int) -> MultisetTable:
    """A shared (cached) :class:`MultisetTable`."""
    return MultisetTable(universe_size, n)


def hypergeometric_weights(dataset_counts: np.ndarray, sub_counts: np.ndarray) -> np.ndarray:
    """``prod_z C(m_z, t_z) / C(n, k)`` for each dataset row ``m`` and one sub-multiset ``t``.

    Rows where ``t`` is not contained in ``m`` get weight 0. The binomials are exact integers held
    in float64 (exact below 2**53, which :func:`_comb_table` checks), so each weight is the
    correctly rounded quotient of two exact integers up to one rounding of the product.
    """
    n = int(dataset_counts[0].sum())
    k = int(sub_counts.sum())
    subs = np.broadcast_to(sub_counts, dataset_counts.shape)
    if math.comb(n, k) >= 2**53:
        # Exact integers no longer fit float64: log-gamma sums (relative error ~1e-13, far inside
        # the checker's 1e-9 margin), zero where t is not contained in m.
        from scipy.special import gammaln

        contained = np.all(dataset_counts >= subs, axis=1)
        m = np.where(dataset_counts >= subs, dataset_counts, subs)
        log_numerator = (gammaln(m + 1) - gammaln(subs + 1) - gammaln(m - subs + 1)).sum(axis=1)
        log_total = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
        return np.where(contained, np.exp(log_numerator - log_total), 0.0)
    table = _comb_table(n, k)
    # C(m_z, 0) = 1: only the records in t contribute, and every partial product is an exact integer
    # (at most the numerator), so skipping the others changes no bit.
    used = np.flatnonzero(np.asarray(sub_counts))
    numerators = table[dataset_counts[:, used], np.asarray(sub_counts)[used]].prod(axis=1)
    return numerators / math.comb(n, k)


def _comb_table(n: int, k: int) -> np.ndarray:
    # Each numerator is at most C(n, k) (Vandermonde), so exact in float64 while C(n, k) < 2**53.
    if math.comb(n, k) >= 2**53:
        raise ValueError(f"C(n={n}, k={k}) >= 2**53: too large for exact float64 binomials; lower n.")
    return _binomials(n)


@functools.lru_cache(maxsize=16)
def _binomials(n: int) -> np.ndarray:
    """``C(m, t)`` for ``m, t in 0..n`` as float64, read-only: built once per ``n`` (A_Agnostic's
    table called :func:`hypergeometric_weights` 12,341 times at n = 40, each rebuilding these
    1,681 binomials in Python: 80% of the C3 row's time)."""
    values = np.array([[math.comb(m, t) for t in range(n + 1)] for m in range(n + 1)], dtype=float)
    values.setflags(write=False)
    return values
