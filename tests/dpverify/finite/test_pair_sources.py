"""Streamed pairs and lazy ordered datasets against the plain enumeration they replace."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpverify.finite.pair_sources import ArrayPairs, OrderedDatasets, SubstitutePairs, TiledPairs
from dpverify.mechanisms.exponential import threshold_learner

RECORDS = ((0, 0), (0, 1), (1, 0), (1, 1), (2, 0))


@pytest.mark.parametrize(("z", "n"), [(1, 1), (1, 3), (2, 1), (3, 2), (5, 3), (4, 4)])
def test_ordered_datasets_are_itertools_product(z, n):
    records = RECORDS[:z]
    expected = list(itertools.product(records, repeat=n))
    datasets = OrderedDatasets(records, n)
    assert len(datasets) == z**n
    assert list(datasets) == expected
    assert [datasets[i] for i in range(len(datasets))] == expected
    assert datasets[-1] == expected[-1]


def test_indices_are_the_base_z_digits_of_the_dataset_index():
    datasets = OrderedDatasets(RECORDS[:3], 3)  # 27 datasets; index 14 = 1*9 + 1*3 + 2
    assert datasets.indices()[14].tolist() == [1, 1, 2]
    assert datasets[14] == (RECORDS[1], RECORDS[1], RECORDS[2])
    block = datasets[10:20]  # a slice keeps its offset: its row 4 is dataset 14
    assert block.indices().shape == (10, 3)
    assert block.indices()[4].tolist() == [1, 1, 2]
    assert [tuple(RECORDS[i] for i in row) for row in block.indices()] == list(block)


def test_iteration_crosses_its_internal_blocks_in_order():
    datasets = OrderedDatasets(tuple(range(4)), 8)  # 65,536 datasets: four internal blocks of 2**14
    middle = datasets[16380:16390]  # straddles the first block boundary
    assert list(middle) == [datasets[i] for i in range(16380, 16390)]
    assert sum(1 for _ in datasets) == 4**8
    assert list(datasets[5:5]) == []


def test_substitute_pairs_are_the_replace_one_pairs_in_relation_order():
    z, n = 3, 3
    datasets = list(itertools.product(range(z), repeat=n))
    expected = []  # position p, shift s, then every dataset whose digit p is below z - s
    for p in range(n):
        for s in range(1, z):
            for i, d in enumerate(datasets):
                if d[p] < z - s:
                    expected.append((i, datasets.index(d[:p] + (d[p] + s,) + d[p + 1 :])))
    source = SubstitutePairs(z, n)
    left, right = source.materialise()
    assert len(source) == len(expected) == z**n * n * (z - 1) // 2  # 27 * 3 * 2 / 2 = 81
    assert list(zip(left.tolist(), right.tolist())) == expected
    pieces = [source.chunk(start, start + 7) for start in range(0, len(source), 7)]
    assert np.concatenate([a for a, _ in pieces]).tolist() == left.tolist()
    assert np.concatenate([b for _, b in pieces]).tolist() == right.tolist()


def test_tiled_pairs_shift_each_copy_by_the_stride():
    base = ArrayPairs(np.array([0, 1]), np.array([1, 2]))
    left, right = TiledPairs(base, copies=3, stride=10).chunk(1, 5)
    # pairs 1..4 of [(0,1), (1,2), (10,11), (11,12), (20,21), (21,22)]
    assert left.tolist() == [1, 10, 11, 20]
    assert right.tolist() == [2, 11, 12, 21]


def test_threshold_learner_rows_from_indices_equal_rows_from_tuples():
    learner = threshold_learner(4, epsilon=1.0)
    records = [(x, y) for x in range(4) for y in (0, 1)]
    block = OrderedDatasets(records, 3)[100:300]
    outcomes, from_indices = learner.distributions(block)
    same_outcomes, from_tuples = learner.distributions(list(block))
    assert outcomes == same_outcomes == [0, 1, 2, 3, 4]
    np.testing.assert_array_equal(from_indices, from_tuples)
    expected = learner(block[0])  # and both are the per-dataset mechanism's rows
    np.testing.assert_allclose(from_indices[0], [float(expected[u]) for u in outcomes], rtol=1e-15)


@pytest.mark.parametrize(("z", "n"), [(2, 1), (3, 1), (3, 4), (8, 3), (5, 6), (1, 3)])
def test_multiset_pairs_stream_the_table_pairs_in_order(z, n):
    from math import comb

    from dpverify.finite.multisets import table
    from dpverify.finite.pair_sources import MultisetPairs

    source = MultisetPairs(z, n)
    left, right = table(z, n).substitute_pairs()
    assert len(source) == left.size == comb(z + n - 2, n - 1) * comb(z, 2)  # e.g. z = 8, n = 3: 36 * 28 = 1,008
    for size in (1, 5, 28, 1000):  # chunks that start and stop inside one M's (a, b) run
        pieces = [source.chunk(start, start + size) for start in range(0, len(source), size)]
        got_left = np.concatenate([np.zeros(0, np.int64), *(p[0] for p in pieces)])
        got_right = np.concatenate([np.zeros(0, np.int64), *(p[1] for p in pieces)])
        np.testing.assert_array_equal(got_left, left)
        np.testing.assert_array_equal(got_right, right)
    assert source.chunk(len(source), len(source) + 10)[0].size == 0


# -- lazy multisets ---------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 2, 4])
def test_multiset_datasets_are_the_sorted_tuples_in_table_order(n):
    import itertools
    import pickle

    from dpverify.finite.pair_sources import MultisetDatasets

    records = ("a", (0, 1), 7)
    datasets = MultisetDatasets(records, n)
    expected = [tuple(records[i] for i in m) for m in itertools.combinations_with_replacement(range(3), n)]
    assert list(datasets) == expected  # C(n + 2, 2) multisets: 1, 3, 6, 15
    assert [datasets[i] for i in range(len(datasets))] == expected
    assert list(datasets[1:4]) == expected[1:4] and list(pickle.loads(pickle.dumps(datasets[1:4]))) == expected[1:4]
    counts = datasets.counts()
    assert [tuple(r for r, c in zip(records, row) for _ in range(c)) for row in counts.tolist()] == expected


def test_ordered_datasets_compute_their_positions():
    from dpverify.finite.pair_sources import OrderedDatasets

    datasets = OrderedDatasets(("x", "y", "z"), 3)
    assert [datasets.position(d) for d in datasets] == list(range(27))
    assert datasets[5:9].position(("x", "z", "y")) == 7 - 5  # x z y is 0*9 + 2*3 + 1 = 7
    for missing in [("x", "y"), ("x", "y", "w"), ("x", "x", "x", "x")]:
        with pytest.raises(KeyError):
            datasets.position(missing)
    with pytest.raises(KeyError):
        datasets[5:9].position(("x", "x", "x"))  # index 0: outside the slice


def test_the_threshold_learner_reads_multiset_counts_as_it_reads_tuples():
    from dpverify.finite.pair_sources import MultisetDatasets
    from dpverify.finite.records import labeled_records
    from dpverify.mechanisms.exponential import threshold_learner

    mechanism = threshold_learner(3, epsilon=1.0)
    datasets = MultisetDatasets(labeled_records(3), 4)
    outcomes, from_counts = mechanism.distributions(datasets)
    same_outcomes, from_tuples = mechanism.distributions(list(datasets))
    assert outcomes == same_outcomes and np.array_equal(from_counts, from_tuples)  # bit for bit


@pytest.mark.parametrize("z, n", [(1, 3), (2, 1), (3, 4), (5, 0), (7, 3), (8, 4)])
def test_ordered_indices_are_the_base_z_digits_of_every_block(z, n):
    # reference: the digits by division, (i // z^(n-1-p)) % z, on blocks starting and ending anywhere
    full = OrderedDatasets(list(range(z)), n)
    weights = z ** np.arange(n - 1, -1, -1, dtype=np.int64)
    for start, stop in [(0, len(full)), (3, 17), (5, 5), (max(len(full) - 2, 0), len(full)), (1, 2)]:
        block = full[start:stop]
        expected = (np.arange(block.start, block.start + len(block), dtype=np.int64)[:, None] // weights) % z
        assert block.indices().shape == expected.shape and np.array_equal(block.indices(), expected)
