"""Misuse gets InvalidArgument naming the bad value and the fix, before any work starts; never a
verdict."""

from __future__ import annotations

import re
from fractions import Fraction
from math import comb

import pytest
import sympy

from dpverify import EnumerationTooLarge, InvalidArgument, analyze, exchangeable, verify

GOOD = dict(records=[0, 1], n=2, epsilon=1.0)


class Recorder:
    """A mechanism (randomized response on the first record) that records every call."""

    def __init__(self):
        self.calls: list[tuple] = []
        self.__name__ = "recorder"

    def __call__(self, dataset):
        self.calls.append(dataset)
        if not dataset:
            return {0: Fraction(1, 2), 1: Fraction(1, 2)}
        return {dataset[0]: Fraction(3, 4), 1 - dataset[0]: Fraction(1, 4)}


def run(**overrides):
    mechanism = Recorder()
    arguments = {**GOOD, **overrides}
    return mechanism, arguments


def test_the_recorder_is_a_valid_mechanism():
    # eps* = ln 3 = 1.0986...: the claim eps = 1 fails, eps = ln 3 (exact) holds.
    mechanism = Recorder()
    assert not verify(mechanism, records=[0, 1], n=2, epsilon=1.0).holds
    assert verify(mechanism, records=[0, 1], n=2, epsilon=sympy.log(3)).holds
    assert set(mechanism.calls) == {(0, 0), (0, 1), (1, 0), (1, 1)}


@pytest.mark.parametrize(
    "overrides, pattern",
    [
        ({"n": 0}, "n=0"),
        ({"n": -1}, "n=-1"),
        ({"n": 1.5}, "n=1.5"),
        ({"n": "2"}, "n='2'"),
        ({"n": True}, "n=True"),
        ({"n": None}, "n=None"),
        ({"records": []}, "empty"),
        ({"records": [0, 1, 0]}, "record 0 appears twice"),
        ({"records": [(0, 1), (1, 1), (0, 1)]}, r"record \(0, 1\) appears twice"),
        ({"records": [[0, 1]]}, r"record \[0, 1\] is unhashable"),
        ({"epsilon": -1}, "epsilon=-1"),
        ({"epsilon": -1e-9}, "epsilon=-1e-09"),
        ({"epsilon": float("nan")}, "epsilon=nan"),
        ({"epsilon": float("inf")}, "epsilon=inf"),
        ({"epsilon": None}, "epsilon=None"),
        ({"delta": -0.1}, r"delta=-0\.1"),
        ({"delta": 1.5}, r"delta=1\.5"),
        ({"delta": Fraction(3, 2)}, r"delta=Fraction\(3, 2\)"),
        ({"delta": float("nan")}, "delta=nan"),
        ({"neighbors": "swap"}, "neighbors='swap'"),
        ({"neighbors": "replace_one"}, "'add_remove', 'substitute'"),
    ],
)
def test_bad_arguments_raise_before_the_mechanism_runs(overrides, pattern):
    mechanism, arguments = run(**overrides)
    with pytest.raises(InvalidArgument, match=pattern) as info:
        verify(mechanism, **arguments)
    assert isinstance(info.value, ValueError)
    assert mechanism.calls == []


def test_analyze_validates_too():
    mechanism = Recorder()
    with pytest.raises(InvalidArgument, match="n=0"):
        analyze(mechanism, records=[0, 1], n=0)
    with pytest.raises(InvalidArgument, match="neighbors='swap'"):
        analyze(mechanism, records=[0, 1], n=1, neighbors="swap")
    with pytest.raises(InvalidArgument, match="must be callable"):
        analyze(42, records=[0, 1], n=1)  # type: ignore[arg-type]
    assert mechanism.calls == []


@pytest.mark.parametrize(
    "output, pattern",
    [
        ({0: 0.5, 1: 0.4}, r"total of 0\.9"),
        ({0: Fraction(1, 2), 1: Fraction(1, 3)}, "total of 5/6"),
        ({0: -0.25, 1: 1.25}, r"non-negative, got -0\.25"),
        ({0: float("nan"), 1: 1.0}, "got nan"),
        ({0: "half", 1: 0.5}, "got 'half' of type str"),
        ({0: 1 + 0j}, "real number"),
        ({}, "at least one outcome"),
        ([0.5, 0.5], "returned list"),
        (None, "returned NoneType"),
        (0.5, "returned float"),
    ],
)
def test_bad_mechanism_outputs(output, pattern):
    def mechanism(dataset):
        return output

    with pytest.raises(InvalidArgument, match=pattern) as info:
        verify(mechanism, records=[0, 1], n=1, epsilon=1.0)
    assert "on dataset (0,)" in str(info.value)  # names the dataset it happened on


def test_bad_output_on_one_dataset_only_is_found():
    def mechanism(dataset):
        if dataset == (1, 1):
            return {0: 0.5, 1: 0.25}
        return {0: 1.0}

    with pytest.raises(InvalidArgument, match=r"on dataset \(1, 1\).*total of 0\.75"):
        verify(mechanism, records=[0, 1], n=2, epsilon=1.0)


def test_enumeration_too_large_is_raised_before_the_enumeration_runs():
    mechanism = Recorder()
    # 10 records, n = 7, black box: 10^7 * 7 * 9 / 2 = 315,000,000 > DEFAULT_MAX_PAIRS = 5,000,000
    with pytest.raises(EnumerationTooLarge) as info:
        verify(mechanism, records=range(10), n=7, epsilon=1.0)
    message = str(info.value)
    assert "315,000,000 neighbouring pairs" in message
    assert "max_pairs=5,000,000" in message
    assert "lower n or the number of records" in message
    assert "declare the mechanism exchangeable" in message
    # only a rate sample ran (at most 1,000 datasets), to say how long the run would take
    assert len(mechanism.calls) <= 1000 and "the run would take about" in message
    assert isinstance(info.value, InvalidArgument) and isinstance(info.value, ValueError)


def test_enumeration_too_large_when_max_pairs_is_small():
    mechanism = Recorder()
    # 3 records, n = 2: 3^2 * 2 * 2 / 2 = 18 black-box pairs
    with pytest.raises(EnumerationTooLarge, match=re.escape("18 neighbouring pairs")) as info:
        verify(mechanism, records=[0, 1, 2], n=2, epsilon=1.0, max_pairs=10)
    assert "max_pairs=10" in str(info.value)
    assert len(mechanism.calls) <= 9  # the rate sample only: at most every dataset once
    # The limit is inclusive: exactly 18 is allowed.
    verify(Recorder(), records=[0, 1, 2], n=2, epsilon=2.0, max_pairs=18)
    # add/remove: 3^2 * 2 = 18 as well
    with pytest.raises(EnumerationTooLarge, match="18 neighbouring pairs"):
        analyze(mechanism, records=[0, 1, 2], n=2, neighbors="add_remove", max_pairs=17)
    assert len(mechanism.calls) <= 18  # two rate samples of at most the 9 datasets


def test_enumeration_too_large_for_the_exchangeable_count():
    mechanism = Recorder()
    # exchangeable, 10 records, n = 7: C(15, 6) * C(10, 2) = 5005 * 45 = 225,225
    assert comb(15, 6) * comb(10, 2) == 225_225
    with pytest.raises(EnumerationTooLarge, match="225,225 neighbouring pairs") as info:
        verify(mechanism, records=range(10), n=7, epsilon=1.0, exchangeable=True, max_pairs=1000)
    assert "declare the mechanism exchangeable" not in str(info.value)
    assert len(mechanism.calls) <= 64  # the rate sample only


def test_false_exchangeable_declaration_whose_black_box_is_too_large():
    @exchangeable
    def output_first(dataset):
        return {dataset[0]: 1}

    # exchangeable: C(4, 2) * C(3, 2) = 18 pairs fit; black box: 3^3 * 3 * 2 / 2 = 81 do not.
    with pytest.raises(EnumerationTooLarge, match="81 neighbouring pairs"):
        verify(output_first, records=[0, 1, 2], n=3, epsilon=1.0, max_pairs=50)
