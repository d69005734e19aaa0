"""Tests of dpverify.mechanisms.subsampling (Li–Wang–Ye 2025 Alg. 2 / Dagan–Feldman 2020 Lemma 8; Li–Wang–Ye 2025 Lemma 21, C5)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify import Distribution
from dpverify.errors import InvalidArgument
from dpverify.mechanisms.randomized_response import randomized_response_mechanism, subsampled_randomized_response
from dpverify.mechanisms.subsampling import (
    canonical,
    sample_with_replacement,
    sample_with_replacement_ordered,
    subsample_index_sets,
    subsample_multisets,
    subsampled,
    subsampled_with_replacement,
)

datasets = st.lists(st.sampled_from(["a", "b", "c"]), min_size=0, max_size=6).map(tuple)


@st.composite
def datasets_and_k(draw):
    dataset = draw(datasets)
    return dataset, draw(st.integers(0, len(dataset)))


def count(dataset):
    return Distribution.point(sum(dataset))


count.exchangeable = True


def identity(dataset):
    return Distribution.point(tuple(dataset))


# -- without replacement ----------------------------------------------------------------------


def test_multisets_hand_computed():
    # S = (1, 1, 2, 3), k = 2, C(4, 2) = 6: (1,1): C(2,2) = 1; (1,2): C(2,1) C(1,1) = 2;
    # (1,3): 2; (2,3): C(1,1) C(1,1) = 1.
    expected = Distribution(
        {(1, 1): Fraction(1, 6), (1, 2): Fraction(2, 6), (1, 3): Fraction(2, 6), (2, 3): Fraction(1, 6)}
    )
    assert subsample_multisets((1, 1, 2, 3), 2) == expected
    assert subsample_multisets((3, 1, 2, 1), 2) == expected


def test_index_sets_keep_index_order():
    # C(3, 2) = 3 index sets: {0,1} -> (b, a), {0,2} -> (b, c), {1,2} -> (a, c).
    assert subsample_index_sets(("b", "a", "c"), 2) == Distribution.uniform(
        [("b", "a"), ("b", "c"), ("a", "c")]
    )
    # Equal sub-tuples merge: (x, x, y), k = 1 -> (x,) twice out of 3.
    assert subsample_index_sets(("x", "x", "y"), 1) == Distribution(
        {("x",): Fraction(2, 3), ("y",): Fraction(1, 3)}
    )


def test_edge_sizes():
    assert subsample_index_sets((2, 1), 0) == Distribution.point(())
    assert subsample_multisets((2, 1), 0) == Distribution.point(())
    assert subsample_multisets((2, 1, 2), 3) == Distribution.point((1, 2, 2))
    assert subsample_index_sets((), 0) == Distribution.point(())


@settings(max_examples=80, deadline=None)
@given(datasets_and_k())
def test_both_forms_agree(case):
    dataset, k = case
    assert subsample_index_sets(dataset, k).map(canonical) == subsample_multisets(dataset, k)


@settings(max_examples=40, deadline=None)
@given(datasets_and_k())
def test_multiset_probabilities_are_hypergeometric_fractions(case):
    dataset, k = case
    result = subsample_multisets(dataset, k)
    assert all(isinstance(p, Fraction) for p in result.values())
    assert sum(result.values()) == 1
    assert all(len(outcome) == k for outcome in result)


# -- with replacement -------------------------------------------------------------------------


def test_with_replacement_hand_computed():
    # S = (1, 1, 2), m = 2: (1,1): (2/3)^2 = 4/9; (1,2): 2!/(1!1!) (2/3)(1/3) = 4/9;
    # (2,2): (1/3)^2 = 1/9.
    expected = Distribution({(1, 1): Fraction(4, 9), (1, 2): Fraction(4, 9), (2, 2): Fraction(1, 9)})
    assert sample_with_replacement((1, 1, 2), 2) == expected
    assert sample_with_replacement((2, 1, 1), 2) == expected
    # Ordered reference: 3^2 = 9 index pairs, (1, 2) from (0,2), (1,2): 2/9.
    assert sample_with_replacement_ordered((1, 1, 2), 2)[(1, 2)] == Fraction(2, 9)


def test_with_replacement_edge_sizes():
    assert sample_with_replacement((), 0) == Distribution.point(())
    assert sample_with_replacement_ordered((), 0) == Distribution.point(())
    assert sample_with_replacement(("a",), 3) == Distribution.point(("a", "a", "a"))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=5).map(tuple), st.integers(0, 3))
def test_with_replacement_reference_equals_grouped(dataset, m):
    grouped = sample_with_replacement(dataset, m)
    assert sample_with_replacement_ordered(dataset, m).map(canonical) == grouped
    assert all(isinstance(p, Fraction) for p in grouped.values())


# -- canonical --------------------------------------------------------------------------------


@given(st.lists(st.sampled_from([(0, 1), (1, 0), (2, 1), (0, 0)]), max_size=6), st.randoms())
def test_canonical_ignores_order(records, rng):
    shuffled = list(records)
    rng.shuffle(shuffled)
    assert canonical(records) == canonical(shuffled) == tuple(sorted(records))


def test_canonical_falls_back_to_repr():
    # repr order: "'a'" < "'b'" < "1" (the quote 0x27 sorts before the digit 0x31).
    assert canonical(["b", 1, "a"]) == ("a", "b", 1)
    assert canonical([1, "a"]) == canonical(["a", 1])


# -- wrappers ---------------------------------------------------------------------------------


def test_subsampled_hand_computed():
    # S = (0, 1, 1), k = 2: index sets {0,1}, {0,2} -> sum 1; {1,2} -> sum 2.
    expected = Distribution({1: Fraction(2, 3), 2: Fraction(1, 3)})
    assert subsampled(count, 2, grouped=True)((0, 1, 1)) == expected
    assert subsampled(count, 2, grouped=False)((0, 1, 1)) == expected


def test_ungrouped_wrapper_passes_index_order():
    assert subsampled(identity, 2, grouped=False)(("b", "a", "c")) == Distribution.uniform(
        [("b", "a"), ("b", "c"), ("a", "c")]
    )


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 2), max_size=6).map(tuple), st.data())
def test_grouped_equals_ungrouped(dataset, data):
    k = data.draw(st.integers(0, len(dataset)))
    assert subsampled(count, k, grouped=True)(dataset) == subsampled(count, k, grouped=False)(dataset)
    if dataset:
        m = data.draw(st.integers(0, 3))
        grouped = subsampled_with_replacement(count, m, grouped=True)(dataset)
        assert grouped == subsampled_with_replacement(count, m, grouped=False)(dataset)


def test_grouped_evaluates_once_per_multiset():
    calls = []

    def recorded(dataset):
        calls.append(dataset)
        return Distribution.point(sum(dataset))

    recorded.exchangeable = True
    wrapped = subsampled(recorded, 2, grouped=True)
    wrapped((0, 0, 1, 1))  # sub-multisets (0,0), (0,1), (1,1): three calls, not C(4,2) = 6
    assert sorted(calls) == [(0, 0), (0, 1), (1, 1)]
    wrapped((1, 0, 1, 0))  # same multisets: served from the cache
    assert len(calls) == 3


def test_one_draw_with_replacement_is_subsampled_randomized_response():
    # One uniform draw with or without replacement is the same thing.
    rr = randomized_response_mechanism(p=Fraction(3, 4))
    for dataset in [(0, 1), (1, 1), (0, 0, 1)]:
        expected = subsampled_randomized_response(p=Fraction(3, 4))(dataset)
        assert subsampled_with_replacement(rr, 1, grouped=True)(dataset) == expected
        assert subsampled(rr, 1, grouped=False)(dataset) == expected


def test_exchangeable_declaration_is_propagated():
    assert subsampled(count, 1, grouped=True).exchangeable is True
    assert subsampled(count, 1, grouped=False).exchangeable is True
    assert not getattr(subsampled(identity, 1, grouped=False), "exchangeable", False)


# -- invalid arguments ------------------------------------------------------------------------


@pytest.mark.parametrize("k", [3, -1, 1.5, True, "1"])
def test_invalid_k(k):
    with pytest.raises(InvalidArgument, match="k="):
        subsample_index_sets((1, 2), k)
    with pytest.raises(InvalidArgument, match="k="):
        subsample_multisets((1, 2), k)


def test_k_larger_than_dataset_in_wrapper():
    with pytest.raises(InvalidArgument, match="k=3"):
        subsampled(count, 3, grouped=True)((1, 2))
    with pytest.raises(InvalidArgument, match="k=-1"):
        subsampled(count, -1, grouped=True)


@pytest.mark.parametrize("m", [-1, 0.5, True])
def test_invalid_m(m):
    with pytest.raises(InvalidArgument, match="m="):
        sample_with_replacement((1, 2), m)
    with pytest.raises(InvalidArgument, match="m="):
        sample_with_replacement_ordered((1, 2), m)
    with pytest.raises(InvalidArgument, match="m="):
        subsampled_with_replacement(count, m, grouped=True)


def test_draws_from_empty_dataset():
    with pytest.raises(InvalidArgument, match="empty dataset"):
        sample_with_replacement((), 1)
    with pytest.raises(InvalidArgument, match="empty dataset"):
        sample_with_replacement_ordered((), 2)


def test_grouped_requires_exchangeable():
    with pytest.raises(InvalidArgument, match="exchangeable"):
        subsampled(identity, 1, grouped=True)
    with pytest.raises(InvalidArgument, match="exchangeable"):
        subsampled_with_replacement(identity, 1, grouped=True)


def test_counts_are_multinomial():
    # n = 4 distinct records, m = 3: C(4 + 3 - 1, 3) = 20 multisets.
    assert len(sample_with_replacement((1, 2, 3, 4), 3)) == math.comb(6, 3)
