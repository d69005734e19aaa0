"""Tests of dpverify.mechanisms.sparse_vector (Lyu, Su, Li, VLDB 2017, Algorithms 1-6): exact distributions
against quadrature and sympy, and the privacy each algorithm has."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy
from sympy import exp, oo

from dpverify import Verdict
from dpverify.checking.input_pairs import all_query_vectors, statdp_patterns, verify_pairs
from dpverify.densities.piecewise import ExpSum
from dpverify.errors import InvalidArgument
from dpverify.mechanisms.sparse_vector import BOTTOM, TOP, SparseVector, svt

EPS = Fraction(7, 10)
R = sympy.Symbol("r", real=True)


def _lap_tail(z, b):
    """P(Lap(b) >= z), in mpmath."""
    return mpmath.exp(-z / b) / 2 if z >= 0 else 1 - mpmath.exp(z / b) / 2


def _quadrature(mechanism: SparseVector, q, sequence):
    """int f_rho(r) prod P(a_i | r) dr by mpmath quadrature, split at every breakpoint."""
    def mp(x):
        x = Fraction(x)
        return mpmath.mpf(x.numerator) / x.denominator

    b_rho, b_nu, T = mp(mechanism.threshold_noise().scale), mp(mechanism.query_noise().scale), mp(mechanism.T)

    def integrand(r):
        value = mpmath.exp(-abs(r) / b_rho) / (2 * b_rho)
        for qi, a in zip(q, sequence):
            tail = _lap_tail(T + r - qi, b_nu)
            value *= tail if a == TOP else 1 - tail
        return value

    points = sorted({0.0, *[float(qi - Fraction(mechanism.T)) for qi in q]})
    with mpmath.workdps(30):
        return mpmath.quad(integrand, [-mpmath.inf, *points, mpmath.inf], error=True)


@pytest.mark.parametrize("variant", [1, 4, 6])
@pytest.mark.parametrize("q", [(1, 0, 2), (2, 2, 0)])
def test_sequence_probabilities_against_quadrature(variant, q):
    mechanism = svt(variant, epsilon=EPS)
    probabilities = mechanism.exact_probabilities(q)
    for sequence, p in probabilities.items():
        value, error = _quadrature(mechanism, q, sequence)
        assert error < 1e-15
        assert p.to_float() == pytest.approx(float(value), rel=1e-12, abs=1e-15)


def test_svt2_hand_values_scale_free():
    # T = q: P(⊤) = P(nu >= rho) = 1/2 by symmetry; P(⊥⊤) = int f_rho F_nu (1 - F_nu), rho ~ Lap(b),
    # nu ~ Lap(2b), which does not depend on b: sympy gives 5/24.
    b = 1
    f = sympy.Piecewise((exp(R / b) / (2 * b), R < 0), (exp(-R / b) / (2 * b), True))
    F = sympy.Piecewise((exp(R / (2 * b)) / 2, R < 0), (1 - exp(-R / (2 * b)) / 2, True))
    expected = sympy.integrate(f * F * (1 - F), (R, -oo, oo))
    assert sympy.nsimplify(expected) == sympy.Rational(5, 24)
    for eps in (EPS, Fraction(1, 10)):
        p = svt(2, epsilon=eps).exact_probabilities((1, 1, 1))
        assert p[TOP] == Fraction(1, 2) and p[BOTTOM + TOP] == Fraction(5, 24)


def test_svt5_hand_values():
    # No query noise, T = 1: [1, 1] answers ⊤⊤ iff rho <= 0 (1/2), ⊥⊥ otherwise.
    p = svt(5, epsilon=EPS).exact_probabilities((1, 1))
    assert p == {TOP + TOP: Fraction(1, 2), BOTTOM + BOTTOM: Fraction(1, 2)}
    # [0, 1]: ⊥⊤ iff -1 < rho <= 0: P = 1/2 - e^{-1/b}/2 with b = 2/eps.
    p = svt(5, epsilon=EPS).exact_probabilities((0, 1))
    assert p[BOTTOM + TOP] == ExpSum.constant(Fraction(1, 2)) - ExpSum.exp(-EPS / 2, Fraction(1, 2))


def test_sequences_with_cutoff():
    assert svt(1, epsilon=EPS).sequences(3) == [BOTTOM * 3, BOTTOM * 2 + TOP, BOTTOM + TOP, TOP]
    two = svt(1, epsilon=EPS, c=2).sequences(3)
    assert len(two) == 7 and TOP + TOP in two and BOTTOM + TOP + TOP in two  # 2^3 - 1 (⊤⊤ stops)
    assert len(svt(6, epsilon=EPS).sequences(3)) == 8


def test_cutoff_two_and_refresh_sum_to_one():
    for variant in (1, 2, 4):
        total = ExpSum.total(svt(variant, epsilon=EPS, c=2).exact_probabilities((0, 2, 1, 1)).values())
        assert total == 1


@pytest.mark.parametrize("eps", [EPS, Fraction(1, 10)])
def test_privacy_of_each_variant_on_the_patterns(eps):
    patterns = statdp_patterns(10)
    for variant in (1, 2):
        result = verify_pairs(svt(variant, epsilon=eps), pairs=patterns, epsilon=eps)
        assert result.verdict is Verdict.HOLDS, variant
        assert result.epsilon < float(eps)
    # Algorithm 4 is not eps-DP, but it is ((1 + 6c)/4) eps = 1.75 eps-DP (c = 1).
    four = svt(4, epsilon=eps)
    assert verify_pairs(four, pairs=patterns, epsilon=eps).verdict is Verdict.VIOLATED
    assert verify_pairs(four, pairs=patterns, epsilon=eps * Fraction(7, 4)).verdict is Verdict.HOLDS
    five = verify_pairs(svt(5, epsilon=eps), pairs=patterns, epsilon=eps)
    assert five.verdict is Verdict.VIOLATED and five.epsilon == float("inf")


def test_svt6_violated_with_witness():
    result = verify_pairs(svt(6, epsilon=EPS), pairs=statdp_patterns(6), epsilon=EPS)
    assert result.verdict is Verdict.VIOLATED and result.witness.excess > 0


def test_full_enumeration_small():
    result = verify_pairs(svt(1, epsilon=EPS), pairs=all_query_vectors(3), epsilon=EPS)
    assert result.verdict is Verdict.HOLDS and result.pairs == (7**3 - 3**3) // 2


def test_bad_arguments():
    with pytest.raises(InvalidArgument, match="variant"):
        SparseVector(EPS, 7)
    with pytest.raises(InvalidArgument, match="cutoff"):
        SparseVector(EPS, 1, 0)
    with pytest.raises(InvalidArgument, match="continuous"):
        svt(3, epsilon=EPS)((1, 1))


@pytest.mark.slow
def test_monte_carlo_sanity_svt1():
    """A loose sampling sanity check of the closed forms (never part of a verdict)."""
    rng = np.random.default_rng(0)
    q, T, eps, n = np.array([1.0, 0.0, 2.0, 1.0]), 0.5, 0.7, 200_000
    rho = rng.laplace(scale=2 / eps, size=(n, 1))
    nu = rng.laplace(scale=4 / eps, size=(n, q.size))
    above = q + nu >= T + rho
    first = np.where(above.any(axis=1), above.argmax(axis=1), q.size)
    exact = svt(1, epsilon=EPS).exact_probabilities((1, 0, 2, 1))
    for index in range(q.size + 1):
        label = BOTTOM * index + (TOP if index < q.size else "")
        assert np.mean(first == index) == pytest.approx(exact[label].to_float(), abs=0.01)
