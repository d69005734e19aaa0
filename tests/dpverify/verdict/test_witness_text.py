"""How a witness reads: decimals always; the exact masses only when they say more than the decimals
(a short fraction, or a value not made of floats); the JSON keeps every exact value."""

from __future__ import annotations

from fractions import Fraction

import sympy

from dpverify.integrations import contract
from dpverify.verdict.witness import SHORT_FRACTION, Witness

#: The masses of the exponential mechanism's no-half mutant (audit row C1): float masses summed
#: exactly, so fractions over powers of two (2^57 and 2^59) with 17-digit numerators.
FLOAT_SUM_P = Fraction(65363572799968715, 144115188075855872)
FLOAT_SUM_Q = Fraction(58213577787941287, 576460752303423488)


def _text(p, q) -> str:
    return str(Witness((0,), (1,), frozenset({1}), p, q, epsilon=Fraction(1, 2), delta=0))


def _exact_line(p, q) -> str | None:
    return next((line for line in _text(p, q).splitlines() if line.startswith("exact: ")), None)


def test_short_fractions_are_shown_exactly():
    assert _exact_line(Fraction(3, 4), Fraction(1, 4)) == "exact: P[M(D) in S] is 3/4, P[M(D') in S] is 1/4"


def test_sums_of_float_masses_show_as_decimals_only():
    text = _text(FLOAT_SUM_P, FLOAT_SUM_Q)
    assert "exact:" not in text and "65363572799968715" not in text
    assert "P[M(D) in S] = 0.453550896839" in text  # 65363572799968715 / 2^57 = 0.45355089683...
    assert "P[M(D') in S] = 0.100984460009" in text  # 58213577787941287 / 2^59 = 0.10098446000...
    document = contract.witness(Witness((0,), (1,), frozenset({1}), FLOAT_SUM_P, FLOAT_SUM_Q, 1, 0))
    assert document["p"]["exact"] == "65363572799968715/144115188075855872"  # the JSON keeps the exact value


def test_floats_have_no_exact_line():
    assert _exact_line(0.75, 0.25) is None and _exact_line(0.75, 0) is None


def test_the_short_bound_and_powers_of_two():
    # 1/2^19 = 1/524288: both parts below 10^6, shown; 1/2^20 = 1/1048576: a long power-of-two fraction, not
    assert SHORT_FRACTION == 10**6
    assert _exact_line(Fraction(1, 2**19), 0) == "exact: P[M(D) in S] is 1/524288, P[M(D') in S] is 0"
    assert _exact_line(Fraction(1, 2**20), 0) is None
    # a sympy rational reads as its Fraction
    assert _exact_line(sympy.Rational(1, 2**20), 0) is None
    assert _exact_line(sympy.Rational(3, 4), 0) == "exact: P[M(D) in S] is 3/4, P[M(D') in S] is 0"


def test_long_values_not_made_of_floats_are_shown():
    # 1/3^13 = 1/1594323: long, but no float has it; the decimal 6.27225e-07 would lose it
    assert _exact_line(Fraction(1, 3**13), 0) == "exact: P[M(D) in S] is 1/1594323, P[M(D') in S] is 0"
    p = sympy.exp(6) / (sympy.exp(6) + sympy.exp(7))
    assert _exact_line(p, Fraction(1, 4)) == "exact: P[M(D) in S] is exp(6)/(exp(6) + exp(7)), P[M(D') in S] is 1/4"


def test_a_mixed_pair_shows_the_float_sum_by_its_shortest_repr():
    line = _exact_line(Fraction(3, 4), FLOAT_SUM_Q)
    assert line == f"exact: P[M(D) in S] is 3/4, P[M(D') in S] is {float(FLOAT_SUM_Q)!r}"


def test_sums_of_exponentials_of_a_float_scale_show_as_decimals_only():
    # a traced program's scale 2.0 / 0.7 is the double 2.857142857142857 = 6433713753386423/2251799813685248:
    # its exponents are fractions of 16 digits in every term (the float text is left, the JSON keeps them)
    rate = sympy.Rational(2251799813685248, 6433713753386423)
    p = 1 - sympy.exp(-2 * rate) / 2
    q = sympy.exp(-3 * rate) / 2
    text = _text(p, q)
    assert "exact:" not in text and "6433713753386423" not in text
    assert document_exact(p) == str(p)
    # readable exponents (a rational scale) keep their line, however long
    readable = sum(sympy.exp(-sympy.Rational(k, 40)) / (k + 1) for k in range(1, 9))
    assert _exact_line(readable / 10, sympy.exp(-sympy.Rational(7, 4)) / 40) is not None


def document_exact(value) -> str:
    return contract.witness(Witness((0,), (1,), frozenset({1}), value, value / 4, 1, 0))["p"]["exact"]
