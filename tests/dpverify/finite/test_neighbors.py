"""Neighbour relations: pair counts, that every pair is neighbouring, the multiset quotient."""

from __future__ import annotations

import itertools
from collections import Counter
from math import comb

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.errors import EnumerationTooLarge, InvalidArgument
from dpverify.finite.neighbors import RELATIONS, check_enumeration_size, pair_count, relation

SIZES = [(z, n) for z in range(1, 5) for n in range(1, 5)]


def formula(name: str, z: int, n: int, exchangeable: bool) -> int:
    if name == "substitute":
        if exchangeable:
            return comb(z + n - 2, n - 1) * comb(z, 2)
        return z**n * n * (z - 1) // 2
    if exchangeable:
        return comb(z + n - 2, n - 1) * z
    return z**n * n


def pairs_of(name, records, n, exchangeable):
    ps = RELATIONS[name].pairs(records, n, exchangeable=exchangeable)
    return [(ps.datasets[i], ps.datasets[j]) for i, j in zip(ps.left.tolist(), ps.right.tolist())]


def canonical(dataset, records):
    return tuple(sorted(dataset, key=records.index))


@pytest.mark.parametrize("name", ["substitute", "add_remove"])
@pytest.mark.parametrize("exchangeable", [False, True])
@pytest.mark.parametrize("z, n", SIZES)
def test_counts_match_formulas_and_enumeration(name, exchangeable, z, n):
    records = [f"r{i}" for i in range(z)]
    expected = formula(name, z, n, exchangeable)
    assert pair_count(name, z, n, exchangeable=exchangeable) == expected
    assert len(RELATIONS[name].pairs(records, n, exchangeable=exchangeable)) == expected


def test_counts_by_hand():
    # substitute, |Z| = 3, n = 2: 3^2 * 2 * 2 / 2 = 18 black-box; C(3,1) * C(3,2) = 9 exchangeable
    assert pair_count("substitute", 3, 2, exchangeable=False) == 18
    assert pair_count("substitute", 3, 2, exchangeable=True) == 9
    # add_remove, |Z| = 3, n = 2: 3^2 * 2 = 18 black-box; C(3,1) * 3 = 9 exchangeable
    assert pair_count("add_remove", 3, 2, exchangeable=False) == 18
    assert pair_count("add_remove", 3, 2, exchangeable=True) == 9
    # |Z| = 4, n = 3: 64 * 3 * 3 / 2 = 288; C(5, 2) * C(4, 2) = 60
    assert pair_count("substitute", 4, 3, exchangeable=False) == 288
    assert pair_count("substitute", 4, 3, exchangeable=True) == 60


@pytest.mark.parametrize("z, n", SIZES)
def test_substitute_black_box_pairs_differ_in_exactly_one_position(z, n):
    records = [(x, x % 2) for x in range(z)]
    pairs = pairs_of("substitute", records, n, False)
    for a, b in pairs:
        assert len(a) == len(b) == n
        assert sum(u != v for u, v in zip(a, b)) == 1
    unordered = {frozenset(p) for p in pairs}
    assert len(unordered) == len(pairs)  # each unordered pair once
    # ... and every neighbouring pair is there: count all (D, D') by brute force.
    everything = list(itertools.product(records, repeat=n))
    brute = {
        frozenset((a, b))
        for a in everything
        for b in everything
        if sum(u != v for u, v in zip(a, b)) == 1
    }
    assert unordered == brute


@pytest.mark.parametrize("z, n", SIZES)
def test_add_remove_black_box_pairs_remove_one_entry(z, n):
    records = [f"r{i}" for i in range(z)]
    pairs = pairs_of("add_remove", records, n, False)
    for big, small in pairs:
        assert len(big) == n and len(small) == n - 1
        assert any(big[:k] + big[k + 1 :] == small for k in range(n))
    # Each (dataset, position) once: the multiplicity of a pair is the number of positions whose
    # removal gives it, e.g. (a, a) -> (a,) twice.
    for big, small in set(pairs):
        removals = sum(big[:k] + big[k + 1 :] == small for k in range(n))
        assert pairs.count((big, small)) == removals


@pytest.mark.parametrize("z, n", SIZES)
def test_exchangeable_substitute_pairs_are_the_multiset_quotient(z, n):
    records = [f"r{i}" for i in range(z)]
    black_box = pairs_of("substitute", records, n, False)
    quotient = {frozenset((canonical(a, records), canonical(b, records))) for a, b in black_box}
    shortcut = pairs_of("substitute", records, n, True)
    as_sets = [frozenset(p) for p in shortcut]
    assert len(set(as_sets)) == len(as_sets)  # no pair twice
    assert set(as_sets) == quotient
    for a, b in shortcut:
        assert canonical(a, records) == a and canonical(b, records) == b  # stored sorted
        assert sum((Counter(a) - Counter(b)).values()) == 1  # multisets differ by one record


@pytest.mark.parametrize("z, n", SIZES)
def test_exchangeable_add_remove_pairs_are_the_multiset_quotient(z, n):
    records = [f"r{i}" for i in range(z)]
    black_box = pairs_of("add_remove", records, n, False)
    quotient = {(canonical(a, records), canonical(b, records)) for a, b in black_box}
    shortcut = pairs_of("add_remove", records, n, True)
    assert len(set(shortcut)) == len(shortcut)
    assert set(shortcut) == quotient
    for big, small in shortcut:
        assert sum((Counter(big) - Counter(small)).values()) == 1  # one record removed
        assert not Counter(small) - Counter(big)  # and nothing else changed


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.one_of(st.integers(), st.text(max_size=2)), min_size=1, max_size=4, unique=True),
    st.integers(1, 3),
)
def test_datasets_listed_once_and_pairs_index_them(records, n):
    for name in RELATIONS:
        for exchangeable in (False, True):
            ps = RELATIONS[name].pairs(records, n, exchangeable=exchangeable)
            assert len(set(ps.datasets)) == len(ps.datasets)
            if len(ps):
                assert 0 <= ps.left.min() and ps.left.max() < len(ps.datasets)
                assert 0 <= ps.right.min() and ps.right.max() < len(ps.datasets)
                assert (ps.left != ps.right).all()
            assert len(ps) == formula(name, len(records), n, exchangeable)


def test_relation_lookup():
    assert relation("substitute") is RELATIONS["substitute"]
    assert relation(RELATIONS["add_remove"]) is RELATIONS["add_remove"]
    with pytest.raises(InvalidArgument, match="neighbors='swap'"):
        relation("swap")
    with pytest.raises(InvalidArgument, match="neighbors=None"):
        relation(None)  # type: ignore[arg-type]


def test_check_enumeration_size():
    assert check_enumeration_size("substitute", 3, 2, exchangeable=False, max_pairs=18) == 18
    with pytest.raises(EnumerationTooLarge) as info:
        check_enumeration_size("substitute", 3, 2, exchangeable=False, max_pairs=17)
    message = str(info.value)
    assert "18 neighbouring pairs" in message and "max_pairs=17" in message
    assert "lower n" in message and "declare the mechanism exchangeable" in message
    with pytest.raises(EnumerationTooLarge) as info:
        check_enumeration_size("substitute", 3, 2, exchangeable=True, max_pairs=8)
    assert "9 neighbouring pairs" in str(info.value)
    assert "declare the mechanism exchangeable" not in str(info.value)
