"""Tests of dpverify.finite.multisets: count-vector tables, neighbour pairs and hypergeometric weights.

Every expected value is either a closed-form count (stars and bars) or a brute-force enumeration
over index sets / ordered tuples that does not share code with the module under test.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from dpverify.finite.multisets import MultisetTable, hypergeometric_weights, table

SIZES = [(1, 0), (1, 4), (2, 1), (2, 3), (3, 2), (3, 3), (4, 2), (6, 5)]


# -- table sizes and layout ----------------------------------------------------------------------


@pytest.mark.parametrize(("z", "n"), SIZES)
def test_table_size_is_stars_and_bars(z, n):
    table = MultisetTable(z, n)
    # Multisets of size n over z records: C(z + n - 1, n) (stars and bars).
    assert len(table) == math.comb(z + n - 1, n)
    assert table.counts.shape == (math.comb(z + n - 1, n), z)
    assert (table.counts >= 0).all()
    assert (table.counts.sum(axis=1) == n).all()
    # Rows are distinct multisets.
    assert len({tuple(r) for r in table.counts.tolist()}) == len(table)


def test_table_sizes_by_hand():
    # C(6 + 5 - 1, 5) = C(10, 5) = 252 (thresholds(3): 6 labeled records, n = 5).
    assert len(MultisetTable(6, 5)) == 252
    # C(6 + 6 - 1, 6) = C(11, 6) = 462 (the default C3 instance, n = 6).
    assert len(MultisetTable(6, 6)) == 462
    # n = 0: only the empty multiset.
    assert len(MultisetTable(4, 0)) == 1
    assert MultisetTable(4, 0).counts.tolist() == [[0, 0, 0, 0]]


def test_rows_follow_combinations_with_replacement_order():
    table = MultisetTable(3, 2)
    # (0,0), (0,1), (0,2), (1,1), (1,2), (2,2) as count vectors:
    assert table.counts.tolist() == [[2, 0, 0], [1, 1, 0], [1, 0, 1], [0, 2, 0], [0, 1, 1], [0, 0, 2]]


def test_records_lists_the_multiset_sorted():
    table = MultisetTable(3, 2)
    universe = ("a", "b", "c")
    # row 4 is [0, 1, 1] = {b, c}; row 0 is [2, 0, 0] = {a, a}
    assert table.records(4, universe) == ("b", "c")
    assert table.records(0, universe) == ("a", "a")
    assert table.records(5, universe) == ("c", "c")


# -- index() ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("z", "n"), SIZES)
def test_index_round_trips_every_row(z, n):
    table = MultisetTable(z, n)
    assert table.index(table.counts).tolist() == list(range(len(table)))


def test_index_round_trips_in_any_row_order():
    table = MultisetTable(6, 5)
    order = np.random.default_rng(0).permutation(len(table))
    assert table.index(table.counts[order]).tolist() == order.tolist()


def test_index_of_hand_vectors():
    table = MultisetTable(3, 2)
    # [0, 2, 0] = {1, 1} is the 4th combination (index 3); [1, 0, 1] = {0, 2} is index 2.
    assert table.index(np.array([[0, 2, 0], [1, 0, 1], [0, 0, 2]])).tolist() == [3, 2, 5]


# -- substitute_pairs -------------------------------------------------------------------------------


def test_substitute_pairs_by_hand():
    # z = 3, n = 2: M ranges over {0}, {1}, {2}; (a, b) over (0,1), (0,2), (1,2).
    # M = {0}: ({0,0}, {0,1}) = (0, 1), ({0,0}, {0,2}) = (0, 2), ({0,1}, {0,2}) = (1, 2)
    # M = {1}: ({0,1}, {1,1}) = (1, 3), ({0,1}, {1,2}) = (1, 4), ({1,1}, {1,2}) = (3, 4)
    # M = {2}: ({0,2}, {1,2}) = (2, 4), ({0,2}, {2,2}) = (2, 5), ({1,2}, {2,2}) = (4, 5)
    left, right = MultisetTable(3, 2).substitute_pairs()
    assert left.tolist() == [0, 0, 1, 1, 1, 3, 2, 2, 4]
    assert right.tolist() == [1, 2, 2, 3, 4, 4, 4, 5, 5]


@pytest.mark.parametrize(("z", "n"), [(2, 1), (2, 3), (3, 2), (3, 3), (4, 2), (6, 5)])
def test_substitute_pairs_count_and_shape(z, n):
    table = MultisetTable(z, n)
    left, right = table.substitute_pairs()
    # C(z + n - 2, n - 1) multisets M of size n - 1, times C(z, 2) record pairs a < b.
    expected = math.comb(z + n - 2, n - 1) * math.comb(z, 2)
    assert len(left) == len(right) == expected
    diff = table.counts[left] - table.counts[right]
    # Each pair moves exactly one unit: one +1 (at a), one -1 (at b), a < b, zeros elsewhere.
    assert ((diff == 1).sum(axis=1) == 1).all()
    assert ((diff == -1).sum(axis=1) == 1).all()
    assert ((diff == 0).sum(axis=1) == z - 2).all()
    assert (np.argmax(diff == 1, axis=1) < np.argmax(diff == -1, axis=1)).all()


@pytest.mark.parametrize(("z", "n"), [(2, 3), (3, 3), (4, 2)])
def test_substitute_pairs_are_exactly_the_replace_one_neighbours(z, n):
    # Brute force: unordered pairs of distinct multisets at L1 distance 2.
    table = MultisetTable(z, n)
    left, right = table.substitute_pairs()
    got = {frozenset((int(a), int(b))) for a, b in zip(left, right)}
    assert len(got) == len(left)  # no pair listed twice
    brute = {
        frozenset((i, j))
        for i, j in itertools.combinations(range(len(table)), 2)
        if np.abs(table.counts[i] - table.counts[j]).sum() == 2
    }
    assert got == brute


def test_substitute_pairs_match_ordered_substitution_brute_force():
    # Ordered datasets of size 3 over 3 records, replace one entry: their multiset pairs.
    z, n = 3, 3
    table = MultisetTable(z, n)
    brute = set()
    for dataset in itertools.product(range(z), repeat=n):
        for i in range(n):
            for r in range(z):
                if r != dataset[i]:
                    other = dataset[:i] + (r,) + dataset[i + 1 :]
                    a = table.index(np.bincount(dataset, minlength=z)[None, :])[0]
                    b = table.index(np.bincount(other, minlength=z)[None, :])[0]
                    brute.add(frozenset((int(a), int(b))))
    left, right = table.substitute_pairs()
    assert {frozenset((int(a), int(b))) for a, b in zip(left, right)} == brute
    # C(3 + 3 - 2, 2) * C(3, 2) = 6 * 3 = 18
    assert len(brute) == 18


# -- hypergeometric weights ---------------------------------------------------------------------


def test_hypergeometric_weights_by_hand():
    # S = {a, a, b} (counts [2, 1]), k = 2 of the C(3, 2) = 3 index sets:
    #   t = {a, a}: C(2,2) C(1,0) / 3 = 1/3;  t = {a, b}: C(2,1) C(1,1) / 3 = 2/3;
    #   t = {b, b}: C(2,0) C(1,2) / 3 = 0 (not contained in S).
    S = np.array([[2, 1]])
    assert hypergeometric_weights(S, np.array([2, 0])).tolist() == [1 / 3]
    assert hypergeometric_weights(S, np.array([1, 1])).tolist() == [2 / 3]
    assert hypergeometric_weights(S, np.array([0, 2])).tolist() == [0.0]


def test_hypergeometric_weights_vectorised_over_rows():
    # t = {a} (k = 1) in S1 = {a, a, b} -> 2/3, in S2 = {b, b, b} -> 0, in S3 = {a, b, b} -> 1/3.
    rows = np.array([[2, 1], [0, 3], [1, 2]])
    assert hypergeometric_weights(rows, np.array([1, 0])).tolist() == [2 / 3, 0.0, 1 / 3]


@pytest.mark.parametrize(("z", "n", "k"), [(2, 3, 1), (2, 4, 2), (3, 4, 2), (3, 5, 3), (4, 4, 2), (6, 5, 3)])
def test_hypergeometric_weights_sum_to_one_and_match_index_set_counts(z, n, k):
    datasets = MultisetTable(z, n)
    subs = MultisetTable(z, k)
    weights = np.stack([hypergeometric_weights(datasets.counts, t) for t in subs.counts], axis=1)
    # Sum over all sub-multisets t of size k: 1 for every dataset (Vandermonde).
    assert np.abs(weights.sum(axis=1) - 1).max() < 1e-15
    # Brute force: count the index sets I, |I| = k, with multiset(S_I) = t.
    total = math.comb(n, k)
    for row in range(len(datasets)):
        ordered = [r for r, c in enumerate(datasets.counts[row]) for _ in range(int(c))]
        counts = Counter(
            tuple(np.bincount([ordered[i] for i in I], minlength=z).tolist())
            for I in itertools.combinations(range(n), k)
        )
        for col, t in enumerate(subs.counts.tolist()):
            # Both are (exact integer) / C(n, k) in float64: equal to the last bit.
            assert weights[row, col] == counts.get(tuple(t), 0) / total


def test_binomial_table_is_built_once_per_n_read_only_and_exact():
    # The C(m, t) table is cached per n (it was rebuilt in Python at every call): one shared,
    # read-only array, whatever k asked for it; every weight still equals the exact quotient
    # prod_z C(m_z, t_z) / C(n, k) of math.comb integers (reference), here at n = 40 (C3's size).
    from dpverify.finite.multisets import _comb_table

    assert _comb_table(40, 3) is _comb_table(40, 20)
    assert not _comb_table(40, 3).flags.writeable
    rows = np.array([[20, 20, 0], [13, 13, 14], [40, 0, 0], [1, 0, 39]])
    for t in ([1, 1, 1], [2, 0, 1], [0, 0, 3], [20, 0, 0], [5, 5, 10]):
        k = sum(t)
        expected = [math.prod(math.comb(m, j) for m, j in zip(row, t)) / math.comb(40, k) for row in rows.tolist()]
        assert hypergeometric_weights(rows, np.array(t)).tolist() == expected  # every bit


def test_hypergeometric_weights_past_2_53_match_exact_fractions():
    # C(60, 30) = 118264581564861424 >= 2**53: the binomials no longer fit float64 exactly, so the
    # weights come from log-gamma sums. Compare with exact rationals:
    # t = [15, 15] in S = [30, 30]: C(30, 15)^2 / C(60, 30) = 155117520^2 / 118264581564861424.
    S = np.array([[30, 30]])
    got = hypergeometric_weights(S, np.array([15, 15]))[0]
    assert got == pytest.approx(float(Fraction(155117520**2, 118264581564861424)), rel=1e-12)
    # Sum over every t of size 30 is 1 (Vandermonde: sum_j C(30, j) C(30, 30 - j) = C(60, 30)).
    total = sum(hypergeometric_weights(S, np.array([j, 30 - j]))[0] for j in range(31))
    assert total == pytest.approx(1.0, abs=1e-12)
    # Not contained: t = [0, 30] in S = [40, 20] needs C(20, 30) = 0.
    assert hypergeometric_weights(np.array([[40, 20]]), np.array([0, 30])).tolist() == [0.0]


def test_hypergeometric_weights_just_below_2_53_are_exact():
    # C(50, 25) = 126410606437752 < 2**53: exact path; t = [25, 0] in [25, 25]: 1 / C(50, 25).
    value = hypergeometric_weights(np.array([[25, 25]]), np.array([25, 0]))[0]
    assert value == 1 / 126410606437752


# -- regression: codes must not wrap on large universes (issue 7, finding 1) ---------------------
# The old mixed-radix code sum_z c_z (n + 1)^z wrapped past 2**63 once (n + 1)^(z - 1) >= 2**63,
# e.g. z = 40, n = 3: 4**39 = 2**78. Rows then aliased and "neighbours" differed in every record.


@pytest.mark.parametrize(("z", "n"), [
    (48, 2),  # 3**47: past 2**74; the default twin of [300-2] (0.02 s)
    (60, 3),
    # About 25 s and 8 GB: building the table memoizes every (k, m) sub-table of its recursion in
    # multisets._count_vectors' LRU cache (issue 17). Same bug class as [48-2], a larger radix.
    pytest.param(300, 2, marks=pytest.mark.slow),
])
def test_huge_radix_codes_round_trip(z, n):
    # (n + 1)^(z - 1) = 3**47, 4**59 and 3**299: far past 2**63, where the old codes wrapped.
    table = MultisetTable(z, n)
    assert len(table) == math.comb(z + n - 1, n)
    assert np.array_equal(table.index(table.counts), np.arange(len(table)))
    assert np.array_equal(table.index(table.counts[::-1]), np.arange(len(table))[::-1])


@pytest.mark.parametrize(("z", "n"), [(40, 3), (64, 2), (12, 6)])
def test_large_universe_codes_round_trip_and_pairs_are_neighbours(z, n):
    table = MultisetTable(z, n)
    assert len(table) == math.comb(z + n - 1, n)
    assert np.array_equal(table.index(table.counts), np.arange(len(table)))
    left, right = table.substitute_pairs()
    # Replace-one neighbours: the count vectors differ by +1 in one record, -1 in another.
    difference = np.abs(table.counts[left] - table.counts[right]).sum(axis=1)
    assert (difference == 2).all()
    # C(z + n - 2, n - 1) * C(z, 2) pairs, each once.
    assert left.size == math.comb(z + n - 2, n - 1) * math.comb(z, 2)
    assert len(set(zip(left.tolist(), right.tolist()))) == left.size


def test_index_rejects_vectors_outside_the_table():
    table = MultisetTable(3, 2)
    with pytest.raises(ValueError, match="not in the table"):
        table.index(np.array([[1, 1, 1]]))  # total 3, not 2
    with pytest.raises(ValueError, match="not in the table"):
        table.index(np.array([[3, -1, 0]]))  # a negative count
    with pytest.raises(ValueError, match="not in the table"):
        table.index(np.array([[0, 0, 1]]))  # total 1
    with pytest.raises(ValueError, match="not in the table"):
        table.index(np.array([[9, 0, 0]]))


def test_a_table_travels_as_its_size_and_is_rebuilt_the_same():
    import pickle

    cached = table(8, 11)
    data = pickle.dumps(cached)
    assert len(data) < 200  # (z, n), not the 31,824 x 8 counts (2.3 MB with its arrays)
    assert pickle.loads(data) is cached  # the cached table of this process
    fresh = MultisetTable(4, 3)
    rebuilt = pickle.loads(pickle.dumps(fresh))
    np.testing.assert_array_equal(rebuilt.counts, fresh.counts)
    np.testing.assert_array_equal(rebuilt.index(fresh.counts), np.arange(len(fresh)))
