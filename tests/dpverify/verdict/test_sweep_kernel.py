"""The sweep kernel reads the matrix outcome-major; its floats are the row-major sweep's, bit for bit.

The reference here is the row-major kernel the sweep used before (fancy-index row gathers,
``fmax.reduce`` over the outcome axis, ``sum(axis=1)``): every loss, hockey-stick value and
stability must be the same float, so every verdict, figure and witness choice is unchanged.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpverify.finite.pair_sources import ArrayPairs, MultisetPairs, SubstitutePairs
from dpverify.verdict import _sweep
from dpverify.verdict._sweep import row_sums


def _matrix(rows: int, outcomes: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    matrix = rng.dirichlet(np.ones(outcomes), size=rows)
    matrix[rng.random(matrix.shape) < 0.15] = 0.0  # zeros: +-inf and nan log differences
    matrix[0] = 0.0
    matrix[0, 0] = 1.0  # a point mass
    return matrix


def _row_major(matrix, li, ri, factor):
    """The previous kernel, verbatim in effect."""
    with np.errstate(divide="ignore"):
        logs = np.log(matrix)
    a, b = matrix[li], matrix[ri]
    with np.errstate(invalid="ignore"):
        difference = logs[li] - logs[ri]
    forward = np.fmax.reduce(difference, axis=1, initial=-np.inf)
    backward = -np.fmin.reduce(difference, axis=1, initial=np.inf)
    if math.isfinite(factor):
        values = [np.maximum(p - factor * q, 0.0).sum(axis=1) for p, q in ((a, b), (b, a))]
    else:
        values = [np.where(q > 0, 0.0, p).sum(axis=1) for p, q in ((a, b), (b, a))]
    stability = float(np.abs(a - b).max()) if a.size else 0.0
    return forward, backward, values, stability


def _same(x: np.ndarray, y: np.ndarray) -> bool:
    return x.shape == y.shape and np.array_equal(x.view(np.int64), y.view(np.int64))  # bits, nan included


@pytest.mark.parametrize("outcomes", [1, 2, 5, 8, 9, 17, 130])
@pytest.mark.parametrize("factor", [1.0, math.e, 3.7, math.inf])
def test_column_kernel_is_the_row_major_kernel_bit_for_bit(outcomes, factor):
    matrix = _matrix(64, outcomes, seed=outcomes)
    rng = np.random.default_rng(7)
    li, ri = rng.integers(0, 64, size=3000), rng.integers(0, 64, size=3000)
    forward, backward, values, stability = _row_major(matrix, li, ri, factor)
    columns = np.ascontiguousarray(matrix.T)
    with np.errstate(divide="ignore"):
        logs = np.log(columns)
    got_forward, got_backward, got_stability, terms = _sweep._chunk_columns(
        columns, logs, li, ri, True, factor, True, True)
    assert _same(got_forward, forward) and _same(got_backward, backward)
    assert _same(row_sums(terms[0]), values[0]) and _same(row_sums(terms[1]), values[1])
    assert got_stability == stability


@pytest.mark.parametrize("count", [*range(1, 40), 64, 127, 128, 129, 136, 255, 256, 300])
def test_row_sums_add_in_numpys_order(count):
    # numpy sums a short row left to right, 8..128 terms with 8 accumulators, longer ones in halves;
    # a different order gives different floats on these wide-ranging terms.
    rng = np.random.default_rng(count)
    rows = rng.random((400, count)) * 10.0 ** rng.integers(-12, 4, size=(400, count))
    expected = rows.sum(axis=1)
    got = row_sums([np.ascontiguousarray(rows[:, k]) for k in range(count)])
    assert _same(got, expected)


def test_a_left_to_right_sum_is_not_numpys_order_at_many_terms():
    # the mutant the test above must catch: a plain left fold differs from numpy at 9+ terms
    rng = np.random.default_rng(3)
    rows = rng.random((400, 20)) * 10.0 ** rng.integers(-12, 4, size=(400, 20))
    fold = rows[:, 0].copy()
    for k in range(1, 20):
        fold += rows[:, k]
    assert not _same(fold, rows.sum(axis=1))


@pytest.mark.parametrize("source", [SubstitutePairs(3, 4), MultisetPairs(3, 5), None], ids=["substitute", "multiset", "arrays"])
@pytest.mark.parametrize("claim_delta", [None, 0.05])
def test_sweep_shard_matches_the_row_major_sweep(source, claim_delta):
    from dpverify.verdict.engine import RowPairs, sweep

    if source is None:
        rng = np.random.default_rng(11)
        source = ArrayPairs(rng.integers(0, 81, size=500), rng.integers(0, 81, size=500))
    rows = 81 if not isinstance(source, MultisetPairs) else 21
    matrix = _matrix(rows, 4, seed=rows)
    result = sweep(RowPairs(matrix, None, None, source=source, symmetric=True), 0.5, claim_delta=claim_delta,
                   with_stability=True)
    li, ri = source.chunk(0, len(source))
    forward, backward, values, stability = _row_major(matrix, li, ri, math.exp(0.5))
    losses = np.maximum(forward, backward)
    assert result.epsilon_star == max(float(losses.max()), 0.0) and result.stability == stability
    best = np.maximum(values[0], values[1])
    assert result.delta_star == max(float(best.max()), 0.0)
    # the first pair attaining each maximum: one chunk, so forward's first maximum unless the
    # backward direction's is strictly larger
    assert result.epsilon_pair == int(np.argmax(losses))
    forward_wins = values[0].max() >= values[1].max()
    assert result.delta_forward == forward_wins
    assert result.delta_pair == int(np.argmax(values[0] if forward_wins else values[1]))


@pytest.mark.parametrize("z, n", [(2, 1), (3, 3), (4, 3), (2, 9), (5, 4)])
@pytest.mark.parametrize("factor", [math.e, math.inf])
def test_box_kernel_reads_the_same_pairs_as_the_gathers(z, n, factor):
    # strided views over the datasets (no index arrays) against 1-D gathers of the chunk's pairs,
    # on ranges that start and stop inside segments, boxes and rows
    source = SubstitutePairs(z, n)
    matrix = _matrix(z**n, 4, seed=z * n)
    columns = np.ascontiguousarray(matrix.T)
    with np.errstate(divide="ignore"):
        logs = np.log(columns)
    total = len(source)
    rng = np.random.default_rng(z + n)
    cuts = sorted({0, total, *rng.integers(0, total, size=5).tolist()})
    for start, stop in zip(cuts, cuts[1:]):
        li, ri = source.chunk(start, stop)
        expected = _sweep._chunk_columns(columns, logs, li, ri, True, factor, True, True)
        got = _sweep._chunk_boxes(columns, logs, source, start, stop, True, factor, True, True)
        assert _same(got[0], expected[0]) and _same(got[1], expected[1]) and got[2] == expected[2]
        for direction in (0, 1):
            assert all(_same(a, b) for a, b in zip(got[3][direction], expected[3][direction]))


def test_boxes_cover_a_range_in_pair_order():
    # SubstitutePairs(3, 2): segments (p, s) = (0,1): 6 pairs, (0,2): 3, (1,1): 6, (1,2): 3 -> 18.
    # Pairs 4..10: (0,1)'s last two (i = 4, 5 -> +3), (0,2)'s three (0, 1, 2 -> +6), (1,1)'s first two
    # (0 -> 1, 1 -> 2).
    source = SubstitutePairs(3, 2)
    ids = np.arange(9)
    left, right = [], []
    for offset, shape, lows, highs in source.boxes(4, 11):
        view = ids.reshape(shape)
        assert offset == len(left)
        left += view[lows].ravel().tolist()
        right += view[highs].ravel().tolist()
    assert left == [4, 5, 0, 1, 2, 0, 1]
    assert right == [7, 8, 6, 7, 8, 1, 2]


def test_the_sweep_uses_boxes_where_rows_are_long_and_agrees(monkeypatch):
    # z = 2, n = 17: 17 segments of 2^16 pairs, one chunk each; digit p's runs are 2^(16 - p)
    # datasets long, so the chunks of digits 0..10 go through boxes and those of 11..16 through
    # gathers. The sweep's figures and pairs are the row-major kernel's.
    from dpverify.verdict.engine import RowPairs, sweep

    source = SubstitutePairs(2, 17)
    boxed = []
    real = _sweep._chunk_boxes
    monkeypatch.setattr(_sweep, "_chunk_boxes", lambda *args: boxed.append(args[3]) or real(*args))
    matrix = _matrix(2**17, 3, seed=5)
    result = sweep(RowPairs(matrix, None, None, source=source, symmetric=True), 0.3, claim_delta=0.01)
    assert boxed == [p * 2**16 for p in range(11)]
    li, ri = source.chunk(0, len(source))
    forward, backward, values, _ = _row_major(matrix, li, ri, math.exp(0.3))
    losses = np.maximum(forward, backward)
    assert result.epsilon_star == max(float(losses.max()), 0.0)
    assert result.epsilon_pair == int(np.argmax(losses))
    assert result.delta_star == max(float(np.maximum(*values).max()), 0.0)
