"""The sweep kernel reads the matrix outcome-major; its floats are the row-major sweep's, bit for bit.

The reference here is the row-major kernel the sweep used before (fancy-index row gathers,
``fmax.reduce`` over the outcome axis, ``sum(axis=1)``): every loss, hockey-stick value and
stability must be the same float, so every verdict, figure and witness choice is unchanged.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpverify.finite.pair_sources import ArrayPairs, MultisetPairs, SubstitutePairs, TiledPairs
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

    monkeypatch.setenv(_sweep.KERNEL_VARIABLE, "numpy")  # the numpy kernel's choice of boxes
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


def test_substitute_pairs_at_gives_the_chunks_pairs():
    for z, n in [(2, 1), (3, 3), (4, 3), (8, 3)]:
        source = SubstitutePairs(z, n)
        left, right = source.chunk(0, len(source))
        numbers = np.random.default_rng(z * n).permutation(len(source))[: max(1, len(source) // 3)]
        got_left, got_right = source.at(numbers)
        assert np.array_equal(got_left, left[numbers]) and np.array_equal(got_right, right[numbers])
    with pytest.raises(IndexError, match="pair numbers must be in 0..17"):
        SubstitutePairs(3, 2).at([18])


# --- the compiled kernel (numba, the ``fast`` extra) against the numpy kernel, bit for bit ---------


def _wide_matrix(rows: int, outcomes: int, seed: int) -> np.ndarray:
    """Probabilities over 12 orders of magnitude, zeros, point masses and repeated rows: the sum
    order shows in the last bits, ties in the first-maximum rule."""
    rng = np.random.default_rng(seed)
    matrix = rng.random((rows, outcomes)) * 10.0 ** rng.integers(-12, 1, size=(rows, outcomes))
    matrix[rng.random(matrix.shape) < 0.15] = 0.0
    matrix[:, 0] += (matrix.sum(axis=1) == 0)  # no empty row
    matrix /= matrix.sum(axis=1, keepdims=True)
    matrix[0] = 0.0
    matrix[0, -1] = 1.0
    matrix[1::7] = matrix[2]  # ties: equal rows, equal losses, equal values
    return matrix


def _chunks(compiled, matrix, source, cuts, symmetric, factor, with_delta, with_stability):
    columns = np.ascontiguousarray(matrix.T)
    with np.errstate(divide="ignore"):
        logs = np.log(columns)
    out = None if compiled is None else compiled.buffers(max(b - a for a, b in zip(cuts, cuts[1:])))
    results = []
    for start, stop in zip(cuts, cuts[1:]):
        _, forward, backward, stability, sums = _sweep._chunk(
            compiled, columns, logs, source, start, stop, symmetric, factor, with_delta, with_stability, out)
        results.append((forward.copy(), None if backward is None else backward.copy(), stability,
                        [s.copy() for s in sums]))
    return results


def _assert_same_chunks(got, expected):
    assert len(got) == len(expected)
    for (f1, b1, s1, v1), (f2, b2, s2, v2) in zip(got, expected):
        assert _same(f1, f2)
        assert (b1 is None and b2 is None) or _same(b1, b2)
        assert s1 == s2
        assert len(v1) == len(v2) and all(_same(a, b) for a, b in zip(v1, v2))


def _sources():
    rng = np.random.default_rng(5)
    return {
        "substitute": (SubstitutePairs(4, 5), 4**5),
        "substitute-z2": (SubstitutePairs(2, 11), 2**11),
        "multiset": (MultisetPairs(4, 6), 84),
        "arrays": (ArrayPairs(rng.integers(0, 90, size=3000), rng.integers(0, 90, size=3000)), 90),
        "tiled": (TiledPairs(SubstitutePairs(3, 3), 3, 27), 81),
    }


@pytest.mark.parametrize("name", ["substitute", "substitute-z2", "multiset", "arrays", "tiled"])
@pytest.mark.parametrize("outcomes", [1, 2, 5, 7, 8, 9, 17, 130])
def test_compiled_kernel_is_the_numpy_kernel_bit_for_bit(name, outcomes):
    compiled = pytest.importorskip("dpverify.verdict._compiled")  # the ``fast`` extra (numba)
    source, rows = _sources()[name]
    matrix = _wide_matrix(rows, outcomes, seed=outcomes)
    total = len(source)
    rng = np.random.default_rng(outcomes)
    cuts = sorted({0, total, *rng.integers(0, total, size=4).tolist()})  # ranges inside segments and boxes
    for factor in (1.0, math.e, 3.7, math.inf):
        for symmetric, with_delta, with_stability in ((True, True, True), (False, True, False), (True, False, True)):
            args = (matrix, source, cuts, symmetric, factor, with_delta, with_stability)
            _assert_same_chunks(_chunks(compiled, *args), _chunks(None, *args))


def test_compiled_kernel_sums_in_numpys_order_not_left_to_right():
    # the wide matrix makes the order of the hockey-stick sum visible: numpy's pairwise order (which
    # both kernels use) and a plain left fold disagree on some pair at 17 outcomes
    matrix = _wide_matrix(4**5, 17, seed=17)
    li, ri = SubstitutePairs(4, 5).chunk(0, 3000)
    terms = np.maximum(matrix[li] - math.e * matrix[ri], 0.0)
    fold = terms[:, 0].copy()
    for k in range(1, 17):
        fold += terms[:, k]
    assert not _same(fold, terms.sum(axis=1))


@pytest.mark.parametrize("bad", [math.nan, -1e-300, math.inf])
def test_compiled_kernel_leaves_broken_matrices_to_numpy(bad):
    compiled = pytest.importorskip("dpverify.verdict._compiled")
    matrix = _wide_matrix(4**5, 5, seed=3)
    matrix[17, 2] = bad
    columns = np.ascontiguousarray(matrix.T)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(columns)
    assert compiled.interleaved(columns, logs) is None
    source = SubstitutePairs(4, 5)
    cuts = [0, 1000, len(source)]
    with np.errstate(invalid="ignore"):
        _assert_same_chunks(_chunks(compiled, matrix, source, cuts, True, math.e, True, True),
                            _chunks(None, matrix, source, cuts, True, math.e, True, True))


def test_interleaved_rows_are_made_once_per_matrix():
    compiled = pytest.importorskip("dpverify.verdict._compiled")
    columns = np.ascontiguousarray(_wide_matrix(50, 3, seed=1).T)
    with np.errstate(divide="ignore"):
        logs = np.log(columns)
    rows = compiled.interleaved(columns, logs)
    assert compiled.interleaved(columns, logs) is rows
    assert np.array_equal(rows[:, :3], columns.T) and np.array_equal(rows[:, 3:], logs.T)
    assert compiled.interleaved(columns.copy(), logs) is not rows


@pytest.mark.parametrize("name", ["substitute", "multiset", "arrays"])
@pytest.mark.parametrize("claim_delta", [None, 0.0, 0.05, "per pair"])
@pytest.mark.parametrize("symmetric", [True, False])
def test_the_sweep_finds_the_same_figures_and_pairs_with_either_kernel(monkeypatch, name, claim_delta, symmetric):
    pytest.importorskip("dpverify.verdict._compiled")
    from dpverify.verdict.engine import RowPairs, sweep

    source, rows = _sources()[name]
    matrix = _wide_matrix(rows, 5, seed=rows)
    pair_delta = None
    if claim_delta == "per pair":  # a delta per pair (data-dependent claims)
        pair_delta = np.random.default_rng(2).random(len(source)) * 0.1
        claim_delta = 0.0
    results = {}
    for kernel in ("numpy", "numba"):
        monkeypatch.setenv(_sweep.KERNEL_VARIABLE, kernel)
        pairs = RowPairs(matrix, None, None, source=source, symmetric=symmetric, pair_delta=pair_delta)
        found = sweep(pairs, 0.4, claim_delta=claim_delta, with_stability=True, error=1e-6)
        results[kernel] = found
    if claim_delta is not None:  # the comparison below is not vacuous: candidates and near pairs exist
        kept = results["numpy"].figures
        assert results["numpy"].candidates.slack.size + kept.near_values[2].size + kept.near_losses[2].size > 0
    a, b = results["numpy"], results["numba"]
    assert (a.epsilon_star, a.epsilon_pair, a.epsilon_forward, a.delta_star, a.delta_pair, a.delta_forward,
            a.stability) == (b.epsilon_star, b.epsilon_pair, b.epsilon_forward, b.delta_star, b.delta_pair,
                             b.delta_forward, b.stability)
    for field in ("slack", "first", "second", "pair", "value", "loss"):
        assert _same(np.asarray(getattr(a.candidates, field), dtype=float),
                     np.asarray(getattr(b.candidates, field), dtype=float))
    assert (a.figures is None) == (b.figures is None)
    if a.figures is not None:
        assert a.figures.passing_best == b.figures.passing_best
        for x, y in zip([*a.figures.near_values, *a.figures.near_losses], [*b.figures.near_values, *b.figures.near_losses]):
            assert _same(np.asarray(x, dtype=float), np.asarray(y, dtype=float))


def test_the_kernel_variable(monkeypatch):
    from dpverify.errors import InvalidArgument

    monkeypatch.setenv(_sweep.KERNEL_VARIABLE, "numpy")
    assert _sweep.compiled_kernel(10**9) is None
    monkeypatch.setenv(_sweep.KERNEL_VARIABLE, "fortran")
    with pytest.raises(InvalidArgument, match="DPVERIFY_KERNEL='fortran' is not a sweep kernel; use 'numpy'"):
        _sweep.compiled_kernel()
    monkeypatch.setenv(_sweep.KERNEL_VARIABLE, "numba")
    try:
        import numba  # noqa: F401
    except ImportError:
        monkeypatch.setattr(_sweep, "_MISSING", [])
        with pytest.raises(InvalidArgument, match=r"pip install 'dpverify\[fast\]'"):
            _sweep.compiled_kernel()
    else:
        assert _sweep.compiled_kernel(1) is not None  # forced: even for a small shard


def test_importing_dpverify_does_not_import_numba():
    import subprocess
    import sys

    code = "import sys, dpverify, dpverify.verdict.engine, dpverify.verdict._sweep; print('numba' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
