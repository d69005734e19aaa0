"""Tests of dpverify.densities.piecewise and dpverify.mechanisms.noise: exact closed forms against independent references.

References: sympy's exact integration of the densities, mpmath quadrature with its error estimate
asserted small, dpverify.mechanisms.laplace's closed forms, and hand-derived values.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
import sympy
from sympy import exp, oo

from dpverify.densities.piecewise import ExpSum
from dpverify.mechanisms.laplace import argmin_distribution, prob_noisy_below
from dpverify.mechanisms.noise import (
    Exponential,
    Laplace,
    NoNoise,
    argmax_probabilities,
    max_cdf,
    max_density,
    prob_at_least,
)

X = sympy.Symbol("x", real=True)
F = Fraction


def _lap(z, b):
    return sympy.Piecewise((exp(z / b) / (2 * b), z < 0), (exp(-z / b) / (2 * b), True))


def _lap_cdf(z, b):
    return sympy.Piecewise((exp(z / b) / 2, z < 0), (1 - exp(-z / b) / 2, True))


def _exp_density(z, s):
    return sympy.Piecewise((0, z < 0), (exp(-z / s) / s, True))


def _exp_cdf(z, s):
    return sympy.Piecewise((0, z < 0), (1 - exp(-z / s), True))


def _same(value: ExpSum, expr) -> bool:
    return sympy.simplify(value.to_sympy() - expr) == 0 or abs(sympy.N(value.to_sympy() - expr, 50)) < 1e-45


# -- ExpSum ---------------------------------------------------------------------------------------


def test_expsum_exact_zero_and_sign():
    a = ExpSum.exp(F(1, 2), 3) - ExpSum.exp(F(1, 2), 3)
    assert a.is_zero() and a.sign() == 0
    # e^{1/2} - 1 - 1/2 - 1/8 - 1/48 = 0.000638... > 0 (the next Taylor terms are positive)
    b = ExpSum.exp(F(1, 2)) - ExpSum.constant(F(1) + F(1, 2) + F(1, 8) + F(1, 48))
    assert b.sign() == 1
    assert (-b).sign() == -1
    assert b.to_float() == pytest.approx(float(mpmath.e ** 0.5 - 1 - 0.5 - 0.125 - 1 / 48), rel=1e-15)


def test_expsum_float_is_certified_under_cancellation():
    # 1 - e^{-1e-12} = 1e-12 - 5e-25 + ...: the float must be the exact value rounded, not 0 or noise.
    tiny = ExpSum.constant(1) - ExpSum.exp(F(-1, 10**12))
    with mpmath.workdps(60):
        exact = -mpmath.expm1(-mpmath.mpf(1) / 10**12)
    assert tiny.to_float() == float(exact)


# -- PiecewiseExp ---------------------------------------------------------------------------------


def test_laplace_functions_integrate_to_one_and_match_sympy():
    b = F(20, 7)
    noise = Laplace(b)
    assert noise.density().integral() == 1
    for t in (F(-3, 2), F(0), F(5, 4)):
        expected = sympy.integrate(_lap(X, sympy.Rational(20, 7)), (X, -oo, sympy.Rational(t.numerator, t.denominator)))
        assert _same(noise.cdf().value(t), expected)
        assert noise.cdf().value(t) + noise.tail().value(t) == 1


def test_antiderivative_with_polynomial_terms_matches_sympy():
    # f(x) = Lap(2) density times the Lap(2) CDF shifted by 1: equal rates cancel on (0, 1), giving a
    # constant piece whose antiderivative is linear in x.
    f = Laplace(F(2)).density() * Laplace(F(2)).cdf().shift(F(-1))
    G = f.antiderivative()
    expr = _lap(X, 2) * _lap_cdf(X - 1, 2)
    for point in (F(-2), F(1, 2), F(3)):
        expected = sympy.integrate(expr, (X, -oo, sympy.Rational(point.numerator, point.denominator)))
        assert _same(G.value(point), expected)
    assert f.integral() == G.value(F(100)) + f.integral(F(100), None)


def test_prob_at_least_one_sided_and_point_mass():
    assert prob_at_least(0, 1, Exponential(F(2))) == ExpSum.exp(F(-1, 2))  # P(E >= 1) = e^{-1/2}
    assert prob_at_least(0, -1, Exponential(F(2))) == 1
    assert prob_at_least(2, 1, NoNoise()) == 1 and prob_at_least(0, 1, NoNoise()) == 0


# -- argmax and max -------------------------------------------------------------------------------


@pytest.mark.parametrize("values", [[1, 0, 2, 1, 1], [0, 0, 2], [2, 1]])
def test_laplace_argmax_agrees_with_laplace_module(values):
    # argmax of q + Lap(b) is argmin of -q + Lap(b) (Laplace noise is symmetric)
    b = F(20, 7)
    ours = argmax_probabilities(values, Laplace(b))
    reference = argmin_distribution([-v for v in values], scales=b)
    assert {i: p.to_float() for i, p in ours.items()} == pytest.approx(dict(reference), rel=1e-14)
    assert ExpSum.total(ours.values()) == 1


def test_two_laplace_argmax_closed_form():
    # P(q0 + L0 > q1 + L1) = P(q1 + L1 < q0 + L0): dpverify.mechanisms.laplace's difference formula, exactly.
    ours = argmax_probabilities([0, 1], Laplace(F(3)))[0]
    reference = prob_noisy_below(1, 0, scale_a=3, scale_b=3, exact=True)
    assert sympy.simplify(ours.to_sympy() - reference) == 0


def test_exponential_argmax_against_sympy_integration():
    s = sympy.Rational(2, 1)
    values = [1, 0, 2]
    ours = argmax_probabilities(values, Exponential(F(2)))
    for i, own in enumerate(values):
        integrand = _exp_density(X - own, s)
        for j, other in enumerate(values):
            if j != i:
                integrand *= _exp_cdf(X - other, s)
        expected = sympy.integrate(integrand, (X, -oo, oo))
        assert _same(ours[i], expected)


def test_exponential_argmax_hand_values():
    # Two values, one-sided Exp(s): P(q0 + E0 > q1 + E1) with d = q1 - q0 >= 0 is e^{-d/s}/2.
    ours = argmax_probabilities([0, 1], Exponential(F(2)))
    assert ours[0] == ExpSum.exp(F(-1, 2), F(1, 2))
    assert ours[1] == 1 - ExpSum.exp(F(-1, 2), F(1, 2))


def test_max_density_and_cdf_against_mpmath_quadrature():
    values, b = [1, 0, 2], F(20, 7)
    density = max_density(values, Laplace(b))
    cdf = max_cdf(values, Laplace(b))
    assert density.integral() == 1

    def lap_cdf(z):
        z = mpmath.mpf(z)
        return mpmath.exp(z / 20 * 7) / 2 if z < 0 else 1 - mpmath.exp(-z / 20 * 7) / 2

    def f(x):
        return mpmath.diff(lambda y: lap_cdf(y - 1) * lap_cdf(y) * lap_cdf(y - 2), x)

    with mpmath.workdps(30):
        value, error = mpmath.quad(f, [-mpmath.inf, 0, 1, mpmath.mpf(3) / 2], error=True)
        assert error < 1e-15
        assert float(value) == pytest.approx(cdf.value(F(3, 2)).to_float(), abs=1e-12)
        assert density.integral(None, F(3, 2)) == cdf.value(F(3, 2))


def test_noise_program_distribution_is_built_without_revalidation_but_still_checked():
    from dpverify.errors import InvalidArgument
    from dpverify.finite.distribution import Distribution
    from dpverify.mechanisms.noisy_max import ReportNoisyMax

    mechanism = ReportNoisyMax(Fraction(7, 10), "laplace")
    fast = mechanism((0, 1, 2))
    reference = Distribution({o: p.to_float() for o, p in mechanism.exact_values((0, 1, 2)).items()})  # validated
    assert dict(fast) == dict(reference) and fast == reference and hash(fast) == hash(reference)
    assert fast.support == {0, 1, 2}
    # the fast path still refuses what the full checks refuse, with their message
    for bad, message in (({"a": 0.5, "b": -0.5, "c": 1.0}, "non-negative"), ({"a": 0.5, "b": 0.4}, "sum to 1"),
                         ({"a": float("nan"), "b": 1.0}, "finite")):
        with pytest.raises(InvalidArgument, match=message):
            Distribution._of_positive_floats(bad)
    assert dict(Distribution._of_positive_floats({"a": 0.25, "b": 0.75})) == {"a": 0.25, "b": 0.75}
