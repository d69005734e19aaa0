"""The sweep kernel compiled with numba (the ``fast`` extra): one pass over a chunk's pairs.

:func:`chunk_pairs` and :func:`chunk_boxes` compute, pair by pair, what the numpy kernels of
:mod:`dpverify.verdict._sweep` compute column by column: the directed pure losses (an ``fmax`` /
``fmin`` chain over the outcomes from ``-inf`` / ``+inf``, NaN differences skipped), the largest
``|P_k - Q_k|``, and each direction's hockey-stick value ``sum_k max(P_k - e^eps Q_k, 0)`` summed in
numpy's pairwise order (:func:`dpverify.verdict._sweep.row_sums`). Every operation is the same IEEE
operation in the same order (numba compiles without fast-math, so no fused multiply-add and no
reassociation): the results are the numpy kernel's bit for bit, which the tests check. The numpy
kernel stays the reference; this one reads each pair's two rows once instead of making a
temporary per outcome and operation (numpy's per-call overhead on 64 K-long columns).

A chunk whose probabilities include a NaN, a negative number or an infinity is reported back
(``False``) and swept by the numpy kernel instead: its NaN propagation through ``max`` is tied to
the numpy kernel's block structure, and such a matrix is a broken mechanism anyway.

Importing this module imports numba and compiles (or loads from numba's cache, ``cache=True``) the
kernels: :mod:`dpverify.verdict._sweep` imports it only for a large sweep and only when numba is
installed.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numba
import numpy as np

__all__ = ["chunk_pairs", "chunk_boxes", "interleaved", "buffers", "scan", "INTERLEAVED_MAX_BYTES"]

_INF = math.inf


@numba.njit(cache=True, nogil=True, inline="always")
def _block_sum(buffer, low, count):  # pragma: no cover - compiled
    """``sum(buffer[low:low + count])``, ``count <= 128``, in numpy's order: left to right below 8
    terms, else 8 accumulators combined as a tree, then the rest."""
    if count < 8:
        total = buffer[low]
        for k in range(low + 1, low + count):
            total += buffer[k]
        return total
    r0, r1, r2, r3 = buffer[low], buffer[low + 1], buffer[low + 2], buffer[low + 3]
    r4, r5, r6, r7 = buffer[low + 4], buffer[low + 5], buffer[low + 6], buffer[low + 7]
    i = 8
    end = count - count % 8
    while i < end:
        r0 += buffer[low + i]
        r1 += buffer[low + i + 1]
        r2 += buffer[low + i + 2]
        r3 += buffer[low + i + 3]
        r4 += buffer[low + i + 4]
        r5 += buffer[low + i + 5]
        r6 += buffer[low + i + 6]
        r7 += buffer[low + i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for k in range(low + i, low + count):
        total += buffer[k]
    return total


@numba.njit(cache=True, nogil=True, inline="always")
def _row_sum(buffer, count, tasks, partial):  # pragma: no cover - compiled
    """``sum(buffer[:count])`` in numpy's pairwise order (``row_sums``): up to 128 terms one block,
    more the sum of two halves (the first a multiple of 8 terms), evaluated here with an explicit
    stack (``tasks``: rows ``(low, count, combine?)``; ``partial``: the finished sums), as numba's
    cache cannot hold a recursive function."""
    if count <= 128:
        return _block_sum(buffer, 0, count)
    top, done = 0, 0
    tasks[0, 0], tasks[0, 1], tasks[0, 2] = 0, count, 0
    top = 1
    while top:
        top -= 1
        low, size, combine = tasks[top, 0], tasks[top, 1], tasks[top, 2]
        if combine:
            done -= 1
            partial[done - 1] = partial[done - 1] + partial[done]
        elif size <= 128:
            partial[done] = _block_sum(buffer, low, size)
            done += 1
        else:
            half = size // 2
            half -= half % 8
            tasks[top, 0], tasks[top, 1], tasks[top, 2] = low, size, 1  # after both halves: left + right
            tasks[top + 1, 0], tasks[top + 1, 1], tasks[top + 1, 2] = low + half, size - half, 0
            tasks[top + 2, 0], tasks[top + 2, 1], tasks[top + 2, 2] = low, half, 0  # popped first
            top += 3
    return partial[0]


@numba.njit(cache=True, nogil=True)
def _pair_long(rows, i, j, t, factor, finite, forward, backward, forward_values, backward_values, terms,
               tasks, partial):  # pragma: no cover - compiled
    """:func:`_pair` for 8 outcomes or more: the terms are kept and summed in numpy's pairwise order."""
    outcomes = rows.shape[1] // 2
    high, low, spread = -_INF, _INF, 0.0
    for k in range(outcomes):
        p, q = rows[i, k], rows[j, k]
        difference = rows[i, outcomes + k] - rows[j, outcomes + k]
        high = difference if difference > high else high
        low = difference if difference < low else low
        gap = abs(p - q)
        spread = gap if gap > spread else spread
        if finite:
            term = p - q * factor
            terms[0, k] = term if term > 0.0 else 0.0
            term = q - p * factor
            terms[1, k] = term if term > 0.0 else 0.0
        else:
            terms[0, k] = 0.0 if q > 0 else p
            terms[1, k] = 0.0 if p > 0 else q
    forward[t], backward[t] = high, -low
    forward_values[t] = _row_sum(terms[0], outcomes, tasks, partial)
    backward_values[t] = _row_sum(terms[1], outcomes, tasks, partial)
    return spread


@numba.njit(cache=True, nogil=True, inline="always")
def _pair(rows, i, j, t, factor, finite, forward, backward, forward_values, backward_values, terms,
          tasks, partial):  # pragma: no cover - compiled
    """Pair ``(i, j)`` into slot ``t`` (both directions, whether asked or not: they cost little);
    returns its largest ``|P_k - Q_k|``. ``rows`` holds row ``i``'s probabilities then their logs
    (``2 K`` floats): two rows are two streams of cache lines, where the outcome-major columns
    would be ``4 K`` streams ``2**m`` bytes apart, all in one cache set. Written with selects, not
    branches on the data, and with the sums in registers below 8 outcomes."""
    outcomes = rows.shape[1] // 2
    if outcomes >= 8:
        return _pair_long(rows, i, j, t, factor, finite, forward, backward, forward_values, backward_values, terms,
                          tasks, partial)
    high, low, spread = -_INF, _INF, 0.0
    forward_value, backward_value = 0.0, 0.0
    for k in range(outcomes):
        p, q = rows[i, k], rows[j, k]
        difference = rows[i, outcomes + k] - rows[j, outcomes + k]
        high = difference if difference > high else high  # fmax: a NaN difference (both zero) is skipped
        low = difference if difference < low else low  # fmin
        gap = abs(p - q)
        spread = gap if gap > spread else spread
        if finite:
            term = p - q * factor
            forward_term = term if term > 0.0 else 0.0
            term = q - p * factor
            backward_term = term if term > 0.0 else 0.0
        else:
            forward_term = 0.0 if q > 0 else p
            backward_term = 0.0 if p > 0 else q
        if k == 0:  # left to right, as numpy sums fewer than 8 terms
            forward_value, backward_value = forward_term, backward_term
        else:
            forward_value += forward_term
            backward_value += backward_term
    forward[t], backward[t] = high, -low
    forward_values[t], backward_values[t] = forward_value, backward_value
    return spread


@numba.njit(cache=True, nogil=True)
def _pairs_kernel(rows, left, right, factor, finite, forward, backward, forward_values, backward_values):  # pragma: no cover - compiled
    terms = np.empty((2, rows.shape[1] // 2))
    tasks, partial = np.empty((192, 3), dtype=np.int64), np.empty(64)
    stability = 0.0
    for t in range(left.size):
        spread = _pair(rows, left[t], right[t], t, factor, finite, forward, backward, forward_values,
                       backward_values, terms, tasks, partial)
        stability = spread if spread > stability else stability
    return stability


@numba.njit(cache=True, nogil=True)
def _boxes_kernel(rows, boxes, factor, finite, forward, backward, forward_values, backward_values):  # pragma: no cover - compiled
    terms = np.empty((2, rows.shape[1] // 2))
    tasks, partial = np.empty((192, 3), dtype=np.int64), np.empty(64)
    stability = 0.0
    for b in range(boxes.shape[0]):
        t, o0, o1, m0, m1 = boxes[b, 0], boxes[b, 1], boxes[b, 2], boxes[b, 3], boxes[b, 4]
        r0, r1, plane, width, shift = boxes[b, 5], boxes[b, 6], boxes[b, 7], boxes[b, 8], boxes[b, 9]
        for o in range(o0, o1):
            for m in range(m0, m1):
                base = o * plane + m * width
                for r in range(r0, r1):
                    i = base + r
                    spread = _pair(rows, i, i + shift, t, factor, finite, forward, backward, forward_values,
                                   backward_values, terms, tasks, partial)
                    stability = spread if spread > stability else stability
                    t += 1
    return stability


@numba.njit(cache=True, nogil=True)
def _interleave(columns, logs, rows):  # pragma: no cover - compiled
    """``rows[i] = (columns[:, i], logs[:, i])``, by blocks of rows; False at a probability that is
    NaN, negative or infinite."""
    outcomes, count = columns.shape
    lowest, broken = _INF, 0.0
    for first in range(0, count, 512):
        last = min(first + 512, count)
        for k in range(outcomes):
            for i in range(first, last):
                p = columns[k, i]
                lowest = p if p < lowest else lowest
                broken += p - p  # NaN once a NaN or an infinity passed (no branch: the copy stays fast)
                rows[i, k] = p
                rows[i, outcomes + k] = logs[k, i]
    return broken == 0.0 and lowest >= 0.0


@numba.njit(cache=True, nogil=True)
def _scan(values, losses, bounds, per_pair, bound, passing_above, delta_margin, passing_best, figures, value_width,
          value_floor, loss_top, loss_width, loss_floor):  # pragma: no cover - compiled
    size = values.size
    best = 0
    for t in range(1, size):
        best = t if values[t] > values[best] else best
    near = np.empty(size, dtype=np.int64)
    value_keep = np.empty(size if figures else 0, dtype=np.int64)
    loss_keep = np.empty(size if figures else 0, dtype=np.int64)
    selected = np.zeros(size, dtype=np.bool_)
    count, chunk_best = 0, -_INF
    for t in range(size):
        passing = losses[t] > passing_above
        above = (bounds[t] if per_pair else bound) - delta_margin
        if passing and values[t] > above:
            near[count] = t
            count += 1
            selected[t] = True
        if passing and values[t] > chunk_best:
            chunk_best = values[t]
    top = chunk_best if chunk_best > passing_best else passing_best  # Python's max(passing_best, chunk_best)
    values_kept = losses_kept = 0
    if figures:
        value_low, loss_low = top - value_width, loss_top - loss_width
        for t in range(size):
            if selected[t]:
                continue
            if losses[t] > passing_above and values[t] >= value_low and values[t] > value_floor:
                value_keep[values_kept] = t
                values_kept += 1
            if losses[t] >= loss_low and losses[t] > loss_floor:
                loss_keep[losses_kept] = t
                losses_kept += 1
    return best, near[:count], top, value_keep[:values_kept], loss_keep[:losses_kept]


def scan(values: np.ndarray, losses: np.ndarray, bound: Any, passing_above: float, delta_margin: float,
         passing_best: float, figures: bool, values_near: Any, losses_near: Any,
         loss_top: float) -> tuple[int, np.ndarray, float, np.ndarray, np.ndarray]:
    """One direction of a chunk after the kernel, in one pass instead of a dozen numpy calls
    (``sweep_shard`` does the same with numpy): the first pair of largest value; the pairs whose loss
    passes (``> passing_above``) and whose value exceeds ``bound - delta_margin`` (``bound`` a number
    or one per pair); the largest value over the passing pairs, with ``passing_best`` (Python's
    ``max``); and with ``figures`` the other pairs each :class:`dpverify.verdict._sweep._Near` would
    take (``values_near`` around that largest value among the passing pairs, ``losses_near`` around
    ``loss_top``). Every comparison is the numpy code's, on the same floats."""
    per_pair = np.ndim(bound) != 0
    bounds = np.asarray(bound, dtype=np.float64) if per_pair else np.zeros(0)
    return _scan(values, losses, bounds, per_pair, 0.0 if per_pair else float(bound), passing_above, delta_margin,
                 passing_best, figures, values_near.width, values_near.floor, loss_top, losses_near.width,
                 losses_near.floor)


#: The largest interleaved copy (:func:`interleaved`) made; a larger matrix is swept by numpy.
INTERLEAVED_MAX_BYTES = 1 << 28
_LAST: list = []  # [(columns, log_columns) weak references, their interleaved rows or None]


def interleaved(columns: np.ndarray, log_columns: np.ndarray) -> np.ndarray | None:
    """The rows the kernels read: row ``i`` is ``P_i`` then ``ln P_i`` (``(rows, 2 K)`` float64),
    made once per matrix and kept while ``columns`` lives; None (sweep with numpy) when the matrix
    holds a NaN, a negative number or an infinity (the numpy kernel's NaN propagation through
    ``max`` then depends on its blocks: it alone is the reference there), or when the copy would
    exceed :data:`INTERLEAVED_MAX_BYTES`."""
    if _LAST and _LAST[0]() is columns and _LAST[1]() is log_columns:
        return _LAST[2]
    outcomes, count = columns.shape
    rows = None
    if 2 * columns.nbytes <= INTERLEAVED_MAX_BYTES:
        rows = np.empty((count, 2 * outcomes))
        if not _interleave(columns, log_columns, rows):
            rows = None
    _LAST[:] = [weakref.ref(columns), weakref.ref(log_columns), rows]
    weakref.finalize(columns, _LAST.clear)
    return rows


Buffers = tuple[np.ndarray, np.ndarray, np.ndarray]


def buffers(size: int) -> Buffers:
    """Output arrays for chunks of up to ``size`` pairs, to reuse from chunk to chunk (each chunk's
    results are then views of them, valid until the next chunk)."""
    return np.empty(size), np.empty(size), np.empty((2, size))


def _outputs(size: int, out: Buffers | None) -> Buffers:
    if out is None or out[0].size < size:
        return buffers(size)
    return out[0][:size], out[1][:size], out[2][:, :size]  # each row of the last one C-contiguous


Result = tuple[np.ndarray, np.ndarray | None, float, list[np.ndarray]] | None


def _result(stability: float, forward: np.ndarray, backward: np.ndarray, values: np.ndarray, symmetric: bool,
            with_delta: bool, with_stability: bool) -> Result:
    sums = ([values[0], values[1]] if symmetric else [values[0]]) if with_delta else []
    return forward, backward if symmetric else None, stability if with_stability else 0.0, sums


def chunk_pairs(rows: np.ndarray, left: np.ndarray, right: np.ndarray, symmetric: bool, factor: float,
                with_delta: bool, with_stability: bool, out: Buffers | None = None) -> Result:
    """The chunk of pairs ``(left[t], right[t])``: ``(forward, backward or None, stability,
    [forward values, backward values]...)`` (the hockey-stick values only ``with_delta``, the
    backward ones only when ``symmetric``), written into ``out`` when given (:func:`buffers`);
    None when there are no outcomes (the numpy kernel raises)."""
    if rows.shape[1] == 0:  # no outcomes: the numpy kernel says what is wrong
        return None
    forward, backward, values = _outputs(left.size, out)
    stability = _pairs_kernel(rows, np.ascontiguousarray(left, dtype=np.int64),
                              np.ascontiguousarray(right, dtype=np.int64), factor, math.isfinite(factor), forward,
                              backward, values[0], values[1])
    return _result(stability, forward, backward, values, symmetric, with_delta, with_stability)


def chunk_boxes(rows: np.ndarray, boxes: np.ndarray, size: int, symmetric: bool, factor: float, with_delta: bool,
                with_stability: bool, out: Buffers | None = None) -> Result:
    """:func:`chunk_pairs` for black-box substitute pairs given as boxes: one int64 row
    ``(first slot, o0, o1, m0, m1, r0, r1, z w, w, s w)`` per box, pair ``(i, i + s w)`` with
    ``i = o z w + m w + r`` (:meth:`dpverify.finite.pair_sources.SubstitutePairs.boxes`)."""
    if rows.shape[1] == 0:
        return None
    forward, backward, values = _outputs(size, out)
    stability = _boxes_kernel(rows, boxes, factor, math.isfinite(factor), forward, backward, values[0], values[1])
    return _result(stability, forward, backward, values, symmetric, with_delta, with_stability)
