"""Tests of dpverify.checking.public_data: the "private part only" neighbour relation.

Toy mechanisms with closed-form privacy: randomized response with p = 3/4 has eps* = ln 3; a
mechanism that outputs its private record has eps* = inf; "output the record with probability r"
has delta(0) = r at eps = 0.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
import sympy

from dpverify import Verdict
from dpverify.checking.public_data import PublicDataResult, all_public_samples, verify_with_public_data
from dpverify.errors import InvalidArgument


def randomized_response(bit: int) -> dict:
    return {bit: Fraction(3, 4), 1 - bit: Fraction(1, 4)}  # eps* = ln((3/4)/(1/4)) = ln 3


def leaky_unless_public_is_zero(public: tuple, dataset: tuple) -> dict:
    """Private (randomized response) when the public sample is (0,); outputs the record otherwise."""
    if public == (0,):
        return randomized_response(dataset[0])
    return {dataset[0]: 1}


# -- all_public_samples ---------------------------------------------------------------------------


def test_all_public_samples_ordered_and_multisets():
    ordered = all_public_samples(range(3), 2)
    assert len(ordered) == 9  # 3^2
    assert list(ordered) == list(itertools.product(range(3), repeat=2))
    multisets = all_public_samples(range(3), 2, ordered=False)
    assert len(multisets) == 6  # C(3 + 2 - 1, 2)
    assert list(multisets) == [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]
    assert list(all_public_samples("ab", 0)) == [()]
    assert len(all_public_samples("ab", 0)) == 1


@pytest.mark.parametrize("size", [-1, 1.5, True, "2"])
def test_all_public_samples_rejects_bad_sizes(size):
    with pytest.raises(InvalidArgument, match="size must be an integer >= 0"):
        all_public_samples(range(3), size)


def test_all_public_samples_rejects_bad_universes():
    with pytest.raises(InvalidArgument, match="public universe: records must be a non-empty"):
        all_public_samples([], 1)
    with pytest.raises(InvalidArgument, match="public universe: record 1 appears twice"):
        all_public_samples([1, 1], 1)


# -- verify_with_public_data ----------------------------------------------------------------------


def test_finds_the_violation_and_names_its_public_sample():
    result = verify_with_public_data(
        leaky_unless_public_is_zero, public_samples=all_public_samples((0, 1), 1), records=(0, 1), n=1,
        epsilon=sympy.log(3),
    )
    assert isinstance(result, PublicDataResult) and not result
    assert result.holds is False
    assert result.epsilon == math.inf and result.epsilon_public == (1,)
    assert result.witness.public == (1,)
    assert str(result.witness).startswith("public = (1,)\nD  = (")
    assert result.results[(0,)].holds is True
    assert result.results[(0,)].epsilon == pytest.approx(math.log(3), rel=1e-15)
    assert result.results[(1,)].holds is False
    assert result.pairs == 2  # one substitute pair {(0,), (1,)} per public sample
    assert "VIOLATED for some public sample" in result.summary()
    assert "public = (1,)" in result.summary()


def test_private_mechanism_holds_at_exactly_its_epsilon():
    def rr_ignoring_public(public, dataset):
        return randomized_response(dataset[0])

    result = verify_with_public_data(
        rr_ignoring_public, public_samples=[("a",), ("b", "c")], records=(0, 1), n=1, epsilon=sympy.log(3),
    )
    assert result.holds is True and result.witness is None
    assert result.epsilon == pytest.approx(math.log(3), rel=1e-15)
    assert list(result.results) == [("a",), ("b", "c")]
    assert result.summary().startswith("HOLDS for every public sample")


def test_worst_delta_and_its_public_sample():
    # At eps = 0, delta(0) is the total variation: public (0,) -> 1/10, public (1,) -> 1/5.
    def leak(public, dataset):
        r = Fraction(1, 10) if public == (0,) else Fraction(1, 5)
        return {dataset[0]: r, None: 1 - r}

    samples = all_public_samples((0, 1), 1)
    tight = verify_with_public_data(leak, public_samples=samples, records=(0, 1), n=1, epsilon=0,
                                    delta=Fraction(1, 5))
    assert tight.holds is True  # delta = 1/5 exactly attained: certified
    assert tight.delta == pytest.approx(0.2, rel=1e-15) and tight.delta_public == (1,)
    broken = verify_with_public_data(leak, public_samples=samples, records=(0, 1), n=1, epsilon=0,
                                     delta=Fraction(3, 20))
    assert broken.holds is False and broken.witness.public == (1,)
    assert broken.results[(0,)].holds is True


class FloatRandomizedResponse:
    """Randomized response with p = 5/7 in float64: float(5/7) / float(2/7) is a hair above 5/2, so
    the float values alone violate eps = ln(5/2); the exact values attain it exactly."""

    exchangeable = True

    def __call__(self, public, dataset):
        return {dataset[0]: 5 / 7, 1 - dataset[0]: 2 / 7}


class ExactRandomizedResponse(FloatRandomizedResponse):
    def exact_distribution(self, public, dataset):
        return {dataset[0]: Fraction(5, 7), 1 - dataset[0]: Fraction(2, 7)}


def test_declarations_are_forwarded_to_the_private_part():
    assert Fraction(5 / 7) / Fraction(2 / 7) > Fraction(5, 2)
    claim = {"public_samples": [(0,)], "records": (0, 1), "n": 1, "epsilon": sympy.log(Fraction(5, 2))}
    # In floats 5/7 / 2/7 = 2.5000000000000004 > 5/2 by 2e-16 relative: a violation no larger than
    # the float error model allows (1.16e-10), so within rounding (passes, says so); with
    # float_error=0 the floats taken literally violate; exact values certify HOLDS.
    floats_only = verify_with_public_data(FloatRandomizedResponse(), **claim)
    assert floats_only.verdict is Verdict.HOLDS_WITHIN_ROUNDING and floats_only.holds is True
    assert floats_only.witness.witness.within_rounding
    literal = verify_with_public_data(FloatRandomizedResponse(), float_error=0, **claim)
    assert literal.verdict is Verdict.VIOLATED and literal.holds is False
    result = verify_with_public_data(ExactRandomizedResponse(), **claim)
    assert result.verdict is Verdict.HOLDS
    assert result.holds is True  # certified with exact_distribution(public, dataset)
    assert result.results[(0,)].exchangeable is True
    assert result.results[(0,)].certified_pairs == 2  # both directions of the one pair


def test_repeated_public_samples_are_checked_once():
    calls = []

    def counting(public, dataset):
        calls.append(public)
        return randomized_response(dataset[0])

    result = verify_with_public_data(counting, public_samples=[(0,), (0,)], records=(0, 1), n=1, epsilon=2)
    assert list(result.results) == [(0,)]


# -- bad input ------------------------------------------------------------------------------------


def _never_called(public, dataset):
    raise AssertionError("bad input must be rejected before the mechanism runs")


def test_public_sample_outside_the_public_universe():
    with pytest.raises(InvalidArgument) as error:
        verify_with_public_data(_never_called, public_samples=[(0,), (0, 5)], public_records=(0, 1),
                                records=(0, 1), n=1, epsilon=1)
    message = str(error.value)
    assert "public sample (0, 5) holds the record 5, outside the public universe [0, 1]" in message
    assert "public_records=" in message


def test_explicit_public_records_check_samples_built_elsewhere():
    samples = all_public_samples(range(3), 1)
    with pytest.raises(InvalidArgument, match=r"public sample \(2,\) holds the record 2"):
        verify_with_public_data(_never_called, public_samples=samples, public_records=range(2),
                                records=(0, 1), n=1, epsilon=1)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"public_samples": []}, "public_samples is empty"),
        ({"public_samples": 3}, "public_samples must be an iterable"),
        ({"public_samples": "ab"}, "public_samples must be an iterable"),
        ({"public_samples": [0]}, r"wrap a single record as \(0,\)"),
        ({"public_samples": [([1],)]}, "unhashable record"),
        ({"epsilon": -1}, "epsilon must be >= 0"),
        ({"delta": 2}, r"delta must be in \[0, 1\]"),
        ({"records": ()}, "records must be a non-empty"),
        ({"n": 0}, "n must be an integer >= 1"),
        ({"neighbors": "swap"}, "unknown neighbour relation"),
    ],
)
def test_bad_input_is_rejected_before_any_work(kwargs, match):
    arguments = {"public_samples": [(0,)], "records": (0, 1), "n": 1, "epsilon": 1, **kwargs}
    with pytest.raises(InvalidArgument, match=match):
        verify_with_public_data(_never_called, **arguments)


def test_mechanism_must_be_callable():
    with pytest.raises(InvalidArgument, match="mechanism must be callable"):
        verify_with_public_data(None, public_samples=[(0,)], records=(0, 1), n=1, epsilon=1)
