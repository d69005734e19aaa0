"""Domains: records, concept classes as boolean matrices, labelings and VC dimension."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.errors import InvalidArgument
from dpverify.finite.records import (
    CONCEPT_CLASSES,
    ConceptClass,
    all_functions,
    check_records,
    concept_class,
    intervals,
    labeled_records,
    point_functions,
    thresholds,
    unions_of_two_intervals,
    vc_dimension,
)


def rows(c: ConceptClass) -> list[list[int]]:
    return c.matrix.astype(int).tolist()


# -- rows of each class at d = 3 ------------------------------------------------------------------


def test_thresholds_rows():
    # c_u(x) = 1 iff x >= u, u = 0, 1, 2, 3
    assert rows(thresholds(3)) == [[1, 1, 1], [0, 1, 1], [0, 0, 1], [0, 0, 0]]


def test_intervals_rows():
    # empty, then [a, b] for (a, b) = (0,0) (0,1) (0,2) (1,1) (1,2) (2,2)
    assert rows(intervals(3)) == [
        [0, 0, 0],
        [1, 0, 0],
        [1, 1, 0],
        [1, 1, 1],
        [0, 1, 0],
        [0, 1, 1],
        [0, 0, 1],
    ]


def test_point_functions_rows():
    assert rows(point_functions(3)) == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]


def test_all_functions_rows():
    # concept i labels x with bit x of i: 1 = 0b001 -> [1,0,0], 6 = 0b110 -> [0,1,1]
    table = rows(all_functions(3))
    assert len(table) == 8
    assert table[0] == [0, 0, 0]
    assert table[1] == [1, 0, 0]
    assert table[6] == [0, 1, 1]
    assert table[7] == [1, 1, 1]
    assert {tuple(r) for r in table} == set(itertools.product((0, 1), repeat=3))


def test_unions_of_two_intervals_rows():
    # The 7 intervals, then the first new union in combination order: {0} | {2} = [1, 0, 1].
    assert rows(unions_of_two_intervals(3)) == rows(intervals(3)) + [[1, 0, 1]]


# -- sizes ----------------------------------------------------------------------------------------


def _strings_with_at_most_two_runs(d: int) -> int:
    # Binary strings of length d with exactly k runs of ones: C(d + 1, 2k).
    return sum(math.comb(d + 1, 2 * k) for k in range(3))


@pytest.mark.parametrize("d", range(1, 7))
def test_sizes(d):
    assert len(thresholds(d)) == d + 1
    assert len(intervals(d)) == 1 + d * (d + 1) // 2
    assert len(point_functions(d)) == d
    assert len(all_functions(d)) == 2**d
    # d = 3: 1 + 6 + 1 = 8; d = 5: 1 + 15 + 15 = 31 (all but 10101); d = 6: 1 + 21 + 35 = 57
    assert len(unions_of_two_intervals(d)) == _strings_with_at_most_two_runs(d)
    for c in (thresholds(d), intervals(d), unions_of_two_intervals(d), all_functions(d)):
        assert c.domain_size == d
        assert len({r.tobytes() for r in c.matrix}) == len(c)  # no duplicate concepts


def test_unions_sizes_by_hand():
    assert [len(unions_of_two_intervals(d)) for d in (3, 4, 5, 6)] == [8, 16, 31, 57]


# -- VC dimension ---------------------------------------------------------------------------------


@pytest.mark.parametrize("d", range(2, 7))
def test_vc_dimensions(d):
    assert vc_dimension(thresholds(d)) == 1
    assert vc_dimension(intervals(d)) == 2
    assert vc_dimension(point_functions(d)) == 1
    assert vc_dimension(all_functions(d)) == d
    assert vc_dimension(unions_of_two_intervals(d)) == min(4, d)


def test_vc_dimension_on_one_point():
    assert vc_dimension(thresholds(1)) == 1  # {[1], [0]} shatters {0}
    assert vc_dimension(intervals(1)) == 1
    assert vc_dimension(point_functions(1)) == 0  # the single concept [1] cannot label 0 with 0


def _vc_reference(matrix: np.ndarray) -> int:
    """Independent brute force: the largest subset (any size) whose patterns number 2^|S|."""
    d = matrix.shape[1]
    best = 0
    for size in range(d + 1):
        for subset in itertools.combinations(range(d), size):
            if len({tuple(r) for r in matrix[:, list(subset)].tolist()}) == 2**size:
                best = max(best, size)
    return best


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 5).flatmap(
        lambda d: st.lists(st.lists(st.booleans(), min_size=d, max_size=d), min_size=1, max_size=12)
    )
)
def test_vc_dimension_agrees_with_reference(table):
    matrix = np.array(table, dtype=bool)
    c = ConceptClass("random", matrix)
    vc = vc_dimension(c)
    assert vc == _vc_reference(matrix)
    assert 2**vc <= len({r.tobytes() for r in matrix})  # a shattered set needs 2^vc concepts


# -- labelings ------------------------------------------------------------------------------------


def test_labelings_first_and_last():
    c = thresholds(3)
    # Columns (0, 2): u=0 -> (1,1), u=1 -> (0,1), u=2 -> (0,1), u=3 -> (0,0).
    assert c.labelings([2, 0, 2]) == {(1, 1): 0, (0, 1): 1, (0, 0): 3}
    assert list(c.labelings([0, 2])) == [(1, 1), (0, 1), (0, 0)]  # order of first appearance
    assert c.labelings([0, 2], representative="last") == {(1, 1): 0, (0, 1): 2, (0, 0): 3}


def test_labelings_with_a_callable_rule():
    seen = []

    def widest(concept_class, labeling, candidates):
        seen.append((labeling, candidates))
        return max(candidates, key=lambda c: (int(concept_class.matrix[c].sum()), -c))

    c = intervals(3)
    # Point 1 labelled 1: intervals containing 1 are [0,1] (2), [0,2] (3), [1,1] (4), [1,2] (5);
    # the widest is [0,2] = concept 3. Labelled 0: empty (0), [0,0] (1), [2,2] (6); widest 1.
    assert c.labelings([1], representative=widest) == {(0,): 1, (1,): 3}
    assert ((1,), (2, 3, 4, 5)) in seen
    assert ((0,), (0, 1, 6)) in seen


def test_labelings_rule_returning_a_non_candidate():
    with pytest.raises(InvalidArgument, match="not one of the concepts"):
        thresholds(3).labelings([0, 2], representative=lambda cc, labeling, candidates: 99)
    with pytest.raises(InvalidArgument, match="'middle'"):
        thresholds(3).labelings([0], representative="middle")


def test_labelings_of_no_points():
    assert thresholds(3).labelings([]) == {(): 0}


def test_labelings_result_does_not_alias_the_cache():
    c = thresholds(3)
    first = c.labelings([0, 2])
    first.pop((1, 1))
    assert c.labelings([0, 2]) == {(1, 1): 0, (0, 1): 1, (0, 0): 3}


def test_mistakes_and_consistent():
    c = thresholds(3)
    data = [(0, 0), (2, 1)]
    # u=0 mislabels x=0; u=1, u=2 are right on both; u=3 mislabels x=2.
    assert c.mistakes(data).tolist() == [1, 0, 0, 1]
    assert c.consistent(data).tolist() == [1, 2]
    assert c.label(1, 0) == 0 and c.label(1, 2) == 1


# -- records and construction ---------------------------------------------------------------------


def test_labeled_records():
    assert labeled_records(2) == ((0, 0), (0, 1), (1, 0), (1, 1))
    assert len(labeled_records(5)) == 10


def test_concept_class_by_name():
    assert set(CONCEPT_CLASSES) == {
        "thresholds",
        "intervals",
        "point_functions",
        "all_functions",
        "unions_of_two_intervals",
    }
    assert rows(concept_class("thresholds", 2)) == [[1, 1], [0, 1], [0, 0]]
    with pytest.raises(InvalidArgument, match="'halfspaces'"):
        concept_class("halfspaces", 3)


@pytest.mark.parametrize("bad", [0, -1, 2.0, True, "3", None])
def test_bad_domain_size(bad):
    with pytest.raises(InvalidArgument, match=f"domain_size={bad!r}"):
        thresholds(bad)


def test_all_functions_refuses_huge_domains():
    with pytest.raises(InvalidArgument, match="2\\^17"):
        all_functions(17)


def test_concept_class_matrix_is_a_frozen_copy():
    source = np.array([[True, False], [False, True]])
    c = ConceptClass("mine", source)
    source[0, 0] = False
    assert c.matrix[0, 0]
    with pytest.raises(ValueError):
        c.matrix[0, 0] = False
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.name = "other"  # type: ignore[misc]
    for bad in (np.zeros((0, 3), bool), np.zeros(3, bool), np.zeros((2, 0), bool)):
        with pytest.raises(InvalidArgument, match="shape"):
            ConceptClass("bad", bad)


def test_check_records():
    assert check_records([(0, 1), (1, 1)]) == ((0, 1), (1, 1))
    with pytest.raises(InvalidArgument, match="empty"):
        check_records([])
    with pytest.raises(InvalidArgument, match="\\(0, 1\\) appears twice"):
        check_records([(0, 1), (1, 0), (0, 1)])
    with pytest.raises(InvalidArgument, match="unhashable"):
        check_records([[0, 1]])
