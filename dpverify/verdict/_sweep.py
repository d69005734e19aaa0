"""The sweep's worker kernel: one shard of chunk-aligned pairs, its partial worst case.

Run by :func:`dpverify.verdict.engine.sweep` on every executor (serially too), so every executor computes the
same floats in the same order; the engine merges the shards and certifies.

With a claim (``claim_delta``) a shard also returns what the engine needs for exact figures
(:func:`dpverify.verdict.engine.decide`, "Exact figures"): each candidate's float hockey-stick value and
directed pure loss, the largest value over the directed pairs that pass the loss filter, and the
non-candidate directed pairs within twice the sweep's margins of the shard's largest value and loss
(the ``FIGURE_CAP + 1`` largest of each: :class:`_Near`).
"""

from __future__ import annotations

import math
import os
import sys
from typing import Any

import numpy as np

from dpverify.errors import InvalidArgument
from dpverify.finite.pair_sources import ArrayPairs, SubstitutePairs

__all__ = ["sweep_shard", "row_sums", "compiled_kernel", "CHUNK", "FIGURE_CAP", "KERNEL_VARIABLE"]

#: Pairs per chunk (the engine's shards are whole chunks).
CHUNK = 1 << 16
_CHUNK = CHUNK
#: Near-largest non-candidate directed pairs an exact figure may need (more: the float figure).
FIGURE_CAP = 1 << 12


class _Near:
    """The largest ``FIGURE_CAP + 1`` directed pairs ``(first, second, value)`` by value, pruned to
    within ``width`` of the largest value seen. Whatever the sharding, the merged shards then hold
    every pair within ``width`` of the overall largest value, or more than ``FIGURE_CAP`` of them
    (if a shard's kept pairs are all that close, there are more than the cap; if one is not, every
    closer pair of that shard is kept): the engine's count is the same on every executor. Once
    ``FIGURE_CAP + 1`` pairs are kept, a pair no larger than the smallest of them (``floor``) is not
    taken: it could not be among the largest, and ties there do not change that count."""

    def __init__(self, width: float) -> None:
        self.width = width
        self.floor = -math.inf
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.count = 0

    def add(self, first: np.ndarray | _Side, second: np.ndarray | _Side, value: np.ndarray, others: np.ndarray,
            top: float) -> None:
        """Take the pairs of ``others`` (a mask) that may be among the largest."""
        self.take(first, second, value, np.flatnonzero(others & (value >= top - self.width) & (value > self.floor)), top)

    def take(self, first: np.ndarray | _Side, second: np.ndarray | _Side, value: np.ndarray, keep: np.ndarray,
             top: float) -> None:
        """Take the pairs at ``keep`` (positions that :meth:`add` would pick)."""
        if keep.size:
            self.parts.append((first[keep], second[keep], value[keep]))
            self.count += keep.size
            if self.count > 4 * (FIGURE_CAP + 1):
                self.result(top)

    def result(self, top: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.parts:
            nothing = np.zeros(0, dtype=np.int64)
            return nothing, nothing, np.zeros(0)
        first, second, value = (np.concatenate(column) for column in zip(*self.parts))
        keep = value >= top - self.width
        first, second, value = first[keep], second[keep], value[keep]
        if value.size > FIGURE_CAP:
            if value.size > FIGURE_CAP + 1:
                largest = np.argpartition(-value, FIGURE_CAP)[: FIGURE_CAP + 1]
                first, second, value = first[largest], second[largest], value[largest]
            self.floor = float(value.min())
        self.parts, self.count = [(first, second, value)], value.size
        return first, second, value


def _chunk_columns(
    columns: np.ndarray, log_columns: np.ndarray, li: np.ndarray, ri: np.ndarray, symmetric: bool, factor: float,
    with_delta: bool, with_stability: bool,
) -> tuple[np.ndarray, np.ndarray | None, float, tuple[list[np.ndarray], list[np.ndarray]]]:
    """One chunk of pairs, outcome by outcome: the directed pure losses ``max_k ln P_k - ln Q_k``
    (forward; backward when ``symmetric``), the chunk's stability ``max |P_k - Q_k|``, and each
    direction's hockey-stick terms ``max(P_k - e^eps Q_k, 0)``, one array per outcome.

    Each outcome's column is gathered for the chunk with a 1-D ``take`` and the maxima are taken by
    an explicit chain over the outcomes: a row-major gather copies rows of a few floats one by one,
    and ``fmax.reduce`` over a short axis pays numpy's per-row overhead (5-10x slower at 5 outcomes).
    Maxima are exact whatever their order, so the losses are the same floats as the row-major
    ``fmax.reduce``; the terms are summed by :func:`row_sums` in numpy's own order.
    """
    size = li.size
    forward = np.full(size, -np.inf)
    low = np.full(size, np.inf) if symmetric else None
    stability = 0.0
    forward_terms: list[np.ndarray] = []
    backward_terms: list[np.ndarray] = []
    with np.errstate(invalid="ignore"):
        for k in range(columns.shape[0]):
            difference = log_columns[k].take(li)
            difference -= log_columns[k].take(ri)  # +inf where P > 0 = Q, -inf where P = 0 < Q, nan where both 0
            np.fmax(forward, difference, out=forward)  # fmax/fmin skip the nans
            if low is not None:
                np.fmin(low, difference, out=low)
            if not (with_delta or with_stability):
                continue
            p, q = columns[k].take(li), columns[k].take(ri)
            if with_stability and size:
                stability = max(stability, float(np.abs(p - q).max()))
            if with_delta:
                forward_terms.append(_term(p, q, factor))
                if symmetric:
                    backward_terms.append(_term(q, p, factor))
    backward = None if low is None else np.negative(low)
    return forward, backward, stability, (forward_terms, backward_terms)


def _chunk_boxes(
    columns: np.ndarray, log_columns: np.ndarray, source: SubstitutePairs, start: int, stop: int, symmetric: bool,
    factor: float, with_delta: bool, with_stability: bool,
) -> tuple[np.ndarray, np.ndarray | None, float, tuple[list[np.ndarray], list[np.ndarray]]]:
    """:func:`_chunk_columns` for black-box substitute pairs, reading the columns through strided
    views (:meth:`SubstitutePairs.boxes`) instead of gathering them: no index arrays at all. The
    same operations on the same floats in the same pair order, so the same results bit for bit."""
    size = stop - start
    forward = np.full(size, -np.inf)
    low = np.full(size, np.inf) if symmetric else None
    scratch = np.empty(size)
    outcomes = columns.shape[0]
    forward_terms = np.empty((outcomes, size)) if with_delta else None
    backward_terms = np.empty((outcomes, size)) if with_delta and symmetric else None
    boxes = [(offset, shape, left, right, tuple(b.stop - b.start for b in left))
             for offset, shape, left, right in source.boxes(start, stop)]
    stability = 0.0
    with np.errstate(invalid="ignore"):
        for k in range(outcomes):
            for offset, shape, left, right, extent in boxes:
                part = slice(offset, offset + math.prod(extent))
                logs = log_columns[k].reshape(shape)
                difference = scratch[part].reshape(extent)
                np.subtract(logs[left], logs[right], out=difference)
                target = forward[part].reshape(extent)
                np.fmax(target, difference, out=target)
                if low is not None:
                    target = low[part].reshape(extent)
                    np.fmin(target, difference, out=target)
                if not (with_delta or with_stability):
                    continue
                values = columns[k].reshape(shape)
                p, q = values[left], values[right]
                if with_stability and p.size:
                    stability = max(stability, float(np.abs(p - q).max()))
                if forward_terms is not None:
                    _term_into(p, q, factor, forward_terms[k, part].reshape(extent))
                    if backward_terms is not None:
                        _term_into(q, p, factor, backward_terms[k, part].reshape(extent))
    backward = None if low is None else np.negative(low)
    terms = (list(forward_terms) if forward_terms is not None else [],
             list(backward_terms) if backward_terms is not None else [])
    return forward, backward, stability, terms


def _term_into(p: np.ndarray, q: np.ndarray, factor: float, out: np.ndarray) -> None:
    """:func:`_term` written into ``out``: ``p - factor * q`` as numpy evaluates it, then ``max(., 0)``."""
    if math.isfinite(factor):
        np.multiply(q, factor, out=out)
        np.subtract(p, out, out=out)
        np.maximum(out, 0.0, out=out)
    else:
        out[...] = np.where(q > 0, 0.0, p)


#: The box kernel pays numpy's per-row overhead on every contiguous run of a box: below this many
#: datasets per run (the last digits' segments) a 1-D gather is faster.
_LONG_RUN = 64


def _long_rows(source: SubstitutePairs, start: int, stop: int) -> bool:
    """Whether every box of the chunk reads contiguous runs of at least ``_LONG_RUN`` datasets."""
    return all(left[2].stop - left[2].start >= _LONG_RUN for _, _, left, _ in source.boxes(start, stop))


class _Indices:
    """A chunk's ``(left, right)`` index arrays, made on first use (the box kernel needs none; the
    candidates and exact figures index a few of them)."""

    def __init__(self, source: Any, start: int, stop: int, arrays: tuple[np.ndarray, np.ndarray] | None) -> None:
        self.source, self.start, self.stop, self.arrays = source, start, stop, arrays

    def side(self, which: int) -> _Side:
        return _Side(self, which)

    def get(self) -> tuple[np.ndarray, np.ndarray]:
        if self.arrays is None:
            self.arrays = self.source.chunk(self.start, self.stop)
        return self.arrays


class _Side:
    """One side of :class:`_Indices`, indexable like the array it stands for."""

    def __init__(self, indices: _Indices, which: int) -> None:
        self.indices, self.which = indices, which

    def __getitem__(self, key: Any) -> np.ndarray:
        indices, key = self.indices, np.asarray(key)
        if indices.arrays is None and isinstance(indices.source, SubstitutePairs) and key.ndim == 1 \
                and key.dtype.kind in "iu" and key.size <= (indices.stop - indices.start) // 16:
            return indices.source.at(indices.start + key.astype(np.int64))[self.which]  # a few pairs: no chunk
        return indices.get()[self.which][key]


def _term(p: np.ndarray, q: np.ndarray, factor: float) -> np.ndarray:
    """``max(p - e^eps q, 0)``; with ``e^eps`` overflowed, only outcomes with ``Q = 0`` count."""
    if math.isfinite(factor):
        return np.maximum(p - factor * q, 0.0)
    return np.where(q > 0, 0.0, p)


#: numpy's pairwise summation: blocks of this many terms are summed with 8 accumulators.
_PAIRWISE_BLOCK = 128


def row_sums(terms: list[np.ndarray]) -> np.ndarray:
    """``sum_k terms[k]`` elementwise, in the order ``numpy.sum(axis=1)`` adds the row
    ``(terms[0][i], ..., terms[K-1][i])`` of a C-contiguous matrix (its pairwise summation: fewer
    than 8 terms left to right; up to 128 with 8 accumulators, combined as a tree, then the rest;
    more: halves, each a multiple of 8). The same floats as the row-major sweep's, bit for bit
    (checked against numpy for every count up to 300 in the tests)."""
    count = len(terms)
    if count == 0:
        raise AssertionError("internal error: a hockey-stick sum over no outcomes")
    if count < 8:
        total = terms[0].copy()
        for term in terms[1:]:
            total += term
        return total
    if count <= _PAIRWISE_BLOCK:
        accumulators = [term.copy() for term in terms[:8]]
        i = 8
        while i < count - count % 8:
            for j in range(8):
                accumulators[j] += terms[i + j]
            i += 8
        r = accumulators
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for term in terms[i:]:
            total += term
        return total
    half = count // 2
    half -= half % 8
    return row_sums(terms[:half]) + row_sums(terms[half:])


def _chunk(
    compiled: Any, columns: np.ndarray, log_columns: np.ndarray, source: Any, start: int, stop: int, symmetric: bool,
    factor: float, with_delta: bool, with_stability: bool, out: Any = None,
) -> tuple[_Indices, np.ndarray, np.ndarray | None, float, list[np.ndarray]]:
    """Pairs ``start .. stop - 1``: their indices (made when needed), forward and backward losses,
    stability, and each direction's hockey-stick values (none without ``with_delta``), from the
    compiled kernel when given and it takes the matrix (:func:`dpverify.verdict._compiled.interleaved`),
    else from the numpy kernel: the same floats either way."""
    substitute = isinstance(source, SubstitutePairs)
    rows = None if compiled is None else compiled.interleaved(columns, log_columns)
    if rows is not None:
        if substitute:
            indices = _Indices(source, start, stop, None)
            done = compiled.chunk_boxes(rows, _box_rows(source, start, stop), stop - start, symmetric, factor,
                                        with_delta, with_stability, out)
        else:
            indices = _Indices(source, start, stop, source.chunk(start, stop))
            done = compiled.chunk_pairs(rows, *indices.get(), symmetric, factor, with_delta, with_stability, out)
        if done is not None:
            return (indices, *done)
    if substitute and _long_rows(source, start, stop):
        indices = _Indices(source, start, stop, None)
        forward, backward, stability, terms = _chunk_boxes(
            columns, log_columns, source, start, stop, symmetric, factor, with_delta, with_stability)
    else:
        indices = _Indices(source, start, stop, source.chunk(start, stop))
        forward, backward, stability, terms = _chunk_columns(
            columns, log_columns, *indices.get(), symmetric, factor, with_delta, with_stability)
    sums = [row_sums(direction) for direction in terms if direction] if with_delta else []
    return indices, forward, backward, stability, sums


def _box_rows(source: SubstitutePairs, start: int, stop: int) -> np.ndarray:
    """The boxes of :meth:`SubstitutePairs.boxes` as the compiled kernel's int64 rows
    ``(first slot, o0, o1, m0, m1, r0, r1, z w, w, s w)``."""
    rows = [(offset, left[0].start, left[0].stop, left[1].start, left[1].stop, left[2].start, left[2].stop,
             shape[1] * shape[2], shape[2], (right[1].start - left[1].start) * shape[2])
            for offset, shape, left, right in source.boxes(start, stop)]
    return np.array(rows, dtype=np.int64).reshape(len(rows), 10)


#: The environment variable choosing the sweep kernel: ``numpy`` (the reference, always
#: available), ``numba`` (the compiled kernel of the ``fast`` extra; an error without numba), or
#: ``auto`` / unset (the compiled kernel for sweeps of at least ``COMPILED_MIN_PAIRS`` pairs when
#: numba is importable, and for every sweep once it is loaded).
KERNEL_VARIABLE = "DPVERIFY_KERNEL"
#: Pairs in a sweep from which ``auto`` imports numba: its import and the kernels' load from
#: numba's cache take ~0.3-0.5 s once per process, ~10 M pairs' worth of the numpy kernel.
COMPILED_MIN_PAIRS = 1 << 22
_MISSING: list[bool] = []


def compiled_kernel(pairs: int = COMPILED_MIN_PAIRS) -> Any:
    """The compiled kernel module (:mod:`dpverify.verdict._compiled`) for a sweep of ``pairs`` pairs,
    or None for the numpy kernel, as :data:`KERNEL_VARIABLE` says. Call it with no argument to
    load numba ahead of time (a long-running process, a benchmark's warm-up)."""
    choice = os.environ.get(KERNEL_VARIABLE, "").strip().lower() or "auto"
    if choice == "numpy":
        return None
    if choice not in ("auto", "numba"):
        raise InvalidArgument(
            f"{KERNEL_VARIABLE}={choice!r} is not a sweep kernel; use 'numpy' (the reference), 'numba' (the "
            "compiled kernel) or 'auto' (numba when installed, for large sweeps).")
    module = sys.modules.get("dpverify.verdict._compiled")
    if module is not None:
        return module
    if choice == "auto" and (pairs < COMPILED_MIN_PAIRS or _MISSING):
        return None
    try:
        from dpverify.verdict import _compiled
    except ImportError as error:
        _MISSING.append(True)
        if choice == "numba":
            raise InvalidArgument(
                f"{KERNEL_VARIABLE}=numba but numba cannot be imported ({error}); install the extra with "
                "pip install 'dpverify[fast]', or unset the variable for the numpy kernel.") from error
        return None
    return _compiled


def sweep_shard(task: tuple[int, int], shared: Any) -> tuple:
    """The sweep over pairs ``task[0] .. task[1] - 1`` (chunk-aligned): the shard's partial worst
    case ``(eps, eps pair, forward, delta, delta pair, forward, stability, candidate arrays,
    figures)``; ``figures`` is None without a claim, else ``(largest value over the pairs passing the
    loss filter, near-largest non-candidate values, near-largest non-candidate losses)``."""
    columns, log_columns, source = shared["columns"], shared["log_columns"], shared["source"]
    if source is None:
        source = ArrayPairs(shared["left"], shared["right"])
    symmetric, epsilon, factor = shared["symmetric"], shared["epsilon"], shared["factor"]
    claim_delta, with_delta, with_stability = shared["claim_delta"], shared["with_delta"], shared["with_stability"]
    delta_margin, epsilon_margin = shared["delta_margin"], shared["epsilon_margin"]
    pair_delta = shared.arrays.get("pair_delta")
    figures = claim_delta is not None and with_delta
    best_eps, eps_at, eps_forward = -math.inf, -1, True
    best_delta, delta_at, delta_forward = -math.inf, -1, True
    passing_best = -math.inf
    near_values, near_losses = _Near(2 * delta_margin), _Near(2 * epsilon_margin)
    stability = 0.0
    found: list[tuple[np.ndarray, ...]] = []
    compiled = compiled_kernel(len(source))
    out = None if compiled is None else compiled.buffers(min(_CHUNK, task[1] - task[0]))  # nothing keeps them
    for start in range(task[0], task[1], _CHUNK):
        stop = min(start + _CHUNK, task[1])
        indices, forward, backward, stability_here, sums = _chunk(
            compiled, columns, log_columns, source, start, stop, symmetric, factor, with_delta, with_stability, out)
        li, ri = indices.side(0), indices.side(1)
        rows = forward if backward is None else np.maximum(forward, backward)
        i = int(np.argmax(rows)) if rows.size else 0
        if rows.size and rows[i] > best_eps:
            best_eps, eps_at, eps_forward = float(rows[i]), start + i, bool(forward[i] >= rows[i])
        stability = max(stability, stability_here)
        if not with_delta:
            continue
        directions = [(sums[0], forward, li, ri, True)]
        if backward is not None:  # symmetric
            directions.append((sums[1], backward, ri, li, False))
        for values, eps_rows, first, second, is_forward in directions:
            if compiled is not None and values.size:  # the same steps in one compiled pass
                bound = claim_delta if pair_delta is None else np.asarray(pair_delta[start:stop])
                j, near, top, value_keep, loss_keep = compiled.scan(
                    values, eps_rows, 0.0 if claim_delta is None else bound, epsilon - epsilon_margin, delta_margin,
                    passing_best, figures, near_values, near_losses, best_eps)
                if values[j] > best_delta:
                    best_delta, delta_at, delta_forward = float(values[j]), start + j, is_forward
                if claim_delta is not None:
                    if near.size:
                        slack = values[near] - (bound if np.ndim(bound) == 0 else bound[near])
                        found.append((slack, first[near], second[near], start + near,
                                      values[near], eps_rows[near]))
                    if figures:
                        passing_best = top
                        near_values.take(first, second, values, value_keep, passing_best)
                        near_losses.take(first, second, eps_rows, loss_keep, best_eps)
                continue
            j = int(np.argmax(values)) if values.size else 0
            if values.size and values[j] > best_delta:
                best_delta, delta_at, delta_forward = float(values[j]), start + j, is_forward
            if claim_delta is not None:
                bound = claim_delta if pair_delta is None else np.asarray(pair_delta[start:stop])
                passing = eps_rows > epsilon - epsilon_margin
                selected = passing & (values > bound - delta_margin)
                near = np.flatnonzero(selected)
                if near.size:
                    slack = values[near] - (bound if np.ndim(bound) == 0 else bound[near])
                    found.append((slack, first[near], second[near], start + near,
                                  values[near], eps_rows[near]))
                if figures:
                    passing_best = max(passing_best, float(np.max(values, where=passing, initial=-np.inf)))
                    others = ~selected
                    near_values.add(first, second, values, others & passing, passing_best)
                    near_losses.add(first, second, eps_rows, others, best_eps)
    extra = (passing_best, near_values.result(passing_best), near_losses.result(best_eps)) if figures else None
    return best_eps, eps_at, eps_forward, best_delta, delta_at, delta_forward, stability, found, extra
