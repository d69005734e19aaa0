"""to_interval on sympy values: the decimal approximation is computed once per (value, digits) and
shared by every reading (certification reads one exact row for several pairs and both figures); the
enclosure is the one computed afresh (reference: sympy.N, then the interval around its decimal)."""

from __future__ import annotations

import mpmath
import pytest
import sympy

from dpverify.verdict._certify import _decimal, to_interval

E = sympy.E
VALUES = [
    E / (1 + E),  # 0.7310585786300049
    sympy.exp(-sympy.Rational(245, 1024)) * sympy.exp(sympy.sqrt(2) / 16800) / 16,  # a C15 value: 0.04928...
    1 - sympy.exp(-sympy.Rational(13, 2)) / 2,  # a C6 Laplace value: 0.99924...
]


def _fresh(value, digits):
    iv = mpmath.iv
    centre = iv.mpf(str(sympy.N(value, digits)))
    radius = abs(centre) * iv.mpf(10) ** (5 - digits) + iv.mpf(10) ** (-3 * digits)
    return iv.mpf([(centre - radius).a, (centre + radius).b])


@pytest.mark.parametrize("bits", [120, 240])
@pytest.mark.parametrize("value", VALUES, ids=["logistic", "c15", "c6_laplace"])
def test_enclosure_equals_the_fresh_computation_and_contains_the_value(value, bits):
    old = mpmath.iv.prec
    mpmath.iv.prec = bits
    try:
        digits = int(bits * 0.30103) - 2
        first, again = to_interval(value, digits), to_interval(value, digits)
        reference = _fresh(value, digits)
        assert (first.a, first.b) == (again.a, again.b) == (reference.a, reference.b)
        with mpmath.workdps(digits + 20):
            truth = mpmath.mpf(str(sympy.N(value, digits + 20)))
            assert first.a <= truth <= first.b
    finally:
        mpmath.iv.prec = old


def test_an_equal_value_built_again_reuses_the_decimal():
    value = sympy.exp(-sympy.Rational(3, 8)) / (1 + sympy.exp(-sympy.Rational(1, 8)))
    _decimal(value, 34)
    hits = _decimal.cache_info().hits
    rebuilt = sympy.exp(-sympy.Rational(3, 8)) / (1 + sympy.exp(-sympy.Rational(1, 8)))  # equal, another object
    assert _decimal(rebuilt, 34) == str(sympy.N(value, 34))
    assert _decimal.cache_info().hits == hits + 1
