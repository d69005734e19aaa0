"""Tests of dpverify.mechanisms.label_flip (Dagan–Feldman 2020 Corollary 2, C10)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

import dpverify
from dpverify import Distribution
from dpverify.errors import InvalidArgument
from dpverify.mechanisms.label_flip import flip, label_flip
from dpverify.mechanisms.randomized_response import randomized_response_mechanism

alphas = st.fractions(min_value=0, max_value=Fraction(1, 2))


@given(alphas)
def test_flip_of_point_mass(alpha):
    assert flip(Distribution.point(1), alpha) == Distribution({1: 1 - alpha, 0: alpha})
    assert flip(Distribution.point(0), alpha) == Distribution({0: 1 - alpha, 1: alpha})


@given(alphas, st.fractions(min_value=0, max_value=1))
def test_flip_closed_form(alpha, r):
    result = flip(Distribution({1: r, 0: 1 - r}), alpha)
    assert result[1] == (1 - alpha) * r + alpha * (1 - r)
    assert sum(result.values()) == 1


def test_flip_hand_computed():
    # r = 3/4, alpha = 1/10: P'(1) = 9/10 * 3/4 + 1/10 * 1/4 = 27/40 + 1/40 = 7/10.
    result = flip({1: Fraction(3, 4), 0: Fraction(1, 4)}, Fraction(1, 10))
    assert result == Distribution({1: Fraction(7, 10), 0: Fraction(3, 10)})
    assert flip(Distribution.point(1), 0) == Distribution.point(1)
    # alpha = 1/2 forgets the input.
    assert flip(Distribution.point(1), Fraction(1, 2)) == Distribution.uniform((0, 1))
    # Floats stay floats: 1 - 0.25 = 0.75.
    assert flip(Distribution.point(0), 0.25) == Distribution({0: 0.75, 1: 0.25})


def test_flipping_a_deterministic_bit_is_randomized_response():
    # A deterministic bit flipped w.p. 1/4 is randomized response with p = 3/4: eps* = ln 3.
    flipped = label_flip(randomized_response_mechanism(p=1), alpha=Fraction(1, 4))
    assert flipped((1,)) == Distribution({1: Fraction(3, 4), 0: Fraction(1, 4)})
    result = dpverify.verify(flipped, records=(0, 1), n=1, epsilon=sympy.log(3))
    assert result.holds
    assert result.epsilon == pytest.approx(math.log(3), abs=1e-12)


def test_stability_becomes_privacy():
    # Inner prediction with additive stability gamma = 1/5: P(1 | 0) = 0, P(1 | 1) = 1/5.
    # alpha = 1/10: P'(1 | 0) = 1/10, P'(1 | 1) = 1/10 + 8/10 * 1/5 = 13/50;
    # P'(0 | 0) = 9/10, P'(0 | 1) = 37/50. eps* = ln max(13/50 / (1/10), (9/10) / (37/50))
    # = ln max(13/5, 45/37) = ln(13/5) <= ln(1 + gamma / alpha) = ln 3 (Corollary 2).
    def stable(dataset):
        return Distribution({1: Fraction(dataset[0], 5), 0: 1 - Fraction(dataset[0], 5)})

    flipped = label_flip(stable, alpha=Fraction(1, 10))
    result = dpverify.verify(flipped, records=(0, 1), n=1, epsilon=sympy.log(3))
    assert result.holds
    assert result.epsilon == pytest.approx(math.log(13 / 5), abs=1e-12)
    assert not dpverify.verify(flipped, records=(0, 1), n=1, epsilon=math.log(2.5)).holds


def test_exchangeable_declaration_is_propagated():
    assert label_flip(randomized_response_mechanism(p=1), alpha=0).exchangeable is True
    assert not getattr(label_flip(lambda d: {d[0]: 1}, alpha=0), "exchangeable", False)


@pytest.mark.parametrize("alpha", [-0.1, 0.6, Fraction(2, 3), 1, math.nan, "0.1", True, None])
def test_invalid_alpha(alpha):
    with pytest.raises(InvalidArgument, match="alpha="):
        flip(Distribution.point(1), alpha)
    with pytest.raises(InvalidArgument, match="alpha="):
        label_flip(lambda d: Distribution.point(1), alpha=alpha)


def test_non_binary_outcome():
    with pytest.raises(InvalidArgument, match="labels 0 and 1"):
        flip(Distribution.point(2), Fraction(1, 4))
    with pytest.raises(InvalidArgument, match="labels 0 and 1"):
        label_flip(lambda d: Distribution.point("yes"), alpha=0)((0,))
