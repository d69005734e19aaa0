"""Tests of dpverify.mechanisms.randomized_response (Warner 1965, the closed-form checker baseline)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import sympy

import dpverify
from dpverify import Distribution
from dpverify.errors import InvalidArgument
from dpverify.mechanisms.randomized_response import (
    randomized_response,
    randomized_response_mechanism,
    subsampled_randomized_response,
)
from dpverify.mechanisms.subsampling import subsampled

P = Fraction(3, 4)


def test_keeps_the_bit_with_probability_p():
    assert randomized_response(1, p=P) == Distribution({1: Fraction(3, 4), 0: Fraction(1, 4)})
    assert randomized_response(0, p=P) == Distribution({0: Fraction(3, 4), 1: Fraction(1, 4)})
    assert randomized_response(1, p=0.75) == Distribution({1: 0.75, 0: 0.25})
    assert randomized_response(0, p=1) == Distribution.point(0)
    assert randomized_response(1, p=Fraction(1, 2)) == Distribution.uniform((0, 1))


@pytest.mark.parametrize(
    "p, expected",
    [
        (Fraction(3, 4), math.log(3)),  # (3/4) / (1/4) = 3
        (Fraction(9, 10), math.log(9)),  # (9/10) / (1/10) = 9
        (Fraction(1, 2), 0.0),  # (1/2) / (1/2) = 1
    ],
)
def test_epsilon_star_is_log_odds(p, expected):
    result = dpverify.verify(randomized_response_mechanism(p=p), records=(0, 1), n=1, epsilon=10)
    assert result.epsilon == pytest.approx(expected, abs=1e-12)


def test_holds_exactly_at_log_3_and_not_below():
    mechanism = randomized_response_mechanism(p=P)
    assert dpverify.verify(mechanism, records=(0, 1), n=1, epsilon=sympy.log(3)).holds
    assert dpverify.verify(mechanism, records=(0, 1), n=1, epsilon=math.log(3)).holds
    below = dpverify.verify(mechanism, records=(0, 1), n=1, epsilon=math.log(3) - 1e-6)
    assert below.holds is False
    assert below.witness is not None
    # The witness compares 3/4 with 1/4 on the bit that was kept.
    assert {below.witness.p, below.witness.q} == {Fraction(3, 4), Fraction(1, 4)}


def test_p_one_is_not_private():
    result = dpverify.verify(randomized_response_mechanism(p=1), records=(0, 1), n=1, epsilon=5)
    assert result.epsilon == math.inf
    assert result.holds is False


def test_subsampled_closed_form_values():
    mechanism = subsampled_randomized_response(p=P)
    # P(1 | (1,1)) = 3/4; P(1 | (0,1)) = 1/2 * 3/4 + 1/2 * 1/4 = 1/2; P(1 | (0,0)) = 1/4.
    assert mechanism((1, 1))[1] == Fraction(3, 4)
    assert mechanism((0, 1))[1] == Fraction(1, 2)
    assert mechanism((1, 0))[1] == Fraction(1, 2)
    assert mechanism((0, 0))[1] == Fraction(1, 4)


def test_subsampled_epsilon_star_n2_is_log_2():
    # Outcome 1: (3/4) / (1/2) = 3/2; outcome 0: P(0 | (0,1)) / P(0 | (1,1)) = (1/2) / (1/4) = 2.
    # So eps* = ln 2 = ln(1 + (e^eps - 1) / n) with e^eps = 3, n = 2, not ln(3/2).
    mechanism = subsampled_randomized_response(p=P)
    result = dpverify.verify(mechanism, records=(0, 1), n=2, epsilon=sympy.log(2))
    assert result.holds
    assert result.epsilon == pytest.approx(math.log(2), abs=1e-12)
    assert not dpverify.verify(mechanism, records=(0, 1), n=2, epsilon=math.log(1.5)).holds
    below = dpverify.verify(mechanism, records=(0, 1), n=2, epsilon=math.log(2) - 1e-6)
    assert below.holds is False and below.witness is not None


def test_subsampled_epsilon_star_n3():
    # P(0 | (1,1,1)) = 1/4; P(0 | (0,1,1)) = 1/3 * 3/4 + 2/3 * 1/4 = 5/12; ratio 5/3
    # = 1 + (3 - 1) / 3, so eps* = ln(5/3).
    mechanism = subsampled_randomized_response(p=P)
    result = dpverify.verify(mechanism, records=(0, 1), n=3, epsilon=sympy.log(Fraction(5, 3)))
    assert result.holds
    assert result.epsilon == pytest.approx(math.log(5 / 3), abs=1e-12)


@pytest.mark.parametrize("dataset", [(0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 0, 0)])
def test_subsampled_matches_generic_subsampling(dataset):
    generic = subsampled(randomized_response_mechanism(p=P), 1, grouped=True)
    assert generic(dataset) == subsampled_randomized_response(p=P)(dataset)


@pytest.mark.parametrize("p", [0.4, Fraction(1, 3), 1.1, -0.5, math.nan, "0.75", True, None])
def test_invalid_p(p):
    with pytest.raises(InvalidArgument, match="p="):
        randomized_response(1, p=p)
    with pytest.raises(InvalidArgument, match="p="):
        randomized_response_mechanism(p=p)
    with pytest.raises(InvalidArgument, match="p="):
        subsampled_randomized_response(p=p)


def test_invalid_bits_and_datasets():
    with pytest.raises(InvalidArgument, match="bit=2"):
        randomized_response(2, p=P)
    with pytest.raises(InvalidArgument, match="exactly one bit"):
        randomized_response_mechanism(p=P)((0, 1))
    with pytest.raises(InvalidArgument, match="non-empty"):
        subsampled_randomized_response(p=P)(())
    with pytest.raises(InvalidArgument, match=r"dataset\[1\]"):
        subsampled_randomized_response(p=P)((0, 5))
