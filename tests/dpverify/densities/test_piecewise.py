"""The exact arithmetic shortcuts of dpverify.densities.piecewise against the naive computations."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath

from dpverify.densities import piecewise
from dpverify.densities.piecewise import ExpSum, PiecewiseExp


def _naive_total(values: list[ExpSum]) -> dict[Fraction, Fraction]:
    """The sum as before: one Fraction addition per term, zeros dropped."""
    terms: dict[Fraction, Fraction] = {}
    for value in values:
        for e, a in value.terms.items():
            terms[e] = terms.get(e, 0) + a
    return {e: a for e, a in terms.items() if a}


def test_total_by_common_denominator_equals_the_fraction_sum():
    rng = random.Random(21)
    exponents = [Fraction(rng.randint(-9, 9), rng.randint(1, 7)) for _ in range(6)]
    for _ in range(200):
        values = [ExpSum({rng.choice(exponents): Fraction(rng.randint(-50, 50), rng.randint(1, 60)) for _ in range(4)})
                  for _ in range(rng.randint(1, 6))]
        assert ExpSum.total(values).terms == _naive_total(values)


def test_total_hand_values_and_cancellation():
    # 1/2 e^1 + 1/3 e^1 + 1/6 e^1 = e^1;  (1/4 - 1/4) e^(-1/2) = 0 is dropped
    values = [ExpSum({Fraction(1): Fraction(1, 2), Fraction(-1, 2): Fraction(1, 4)}),
              ExpSum({Fraction(1): Fraction(1, 3)}),
              ExpSum({Fraction(1): Fraction(1, 6), Fraction(-1, 2): Fraction(-1, 4)})]
    assert ExpSum.total(values).terms == {Fraction(1): Fraction(1)}
    assert ExpSum.total([]).terms == {}
    assert ExpSum.total(values[1:2]).terms == {Fraction(1): Fraction(1, 3)}


def test_constructors_drop_zeros_and_copy():
    source = {Fraction(1, 3): Fraction(0), Fraction(2): Fraction(5, 7), Fraction(-1): Fraction(0)}
    value = ExpSum(source)
    assert value.terms == {Fraction(2): Fraction(5, 7)}
    source[Fraction(2)] = Fraction(1)  # the ExpSum keeps its own copy
    assert value.terms == {Fraction(2): Fraction(5, 7)}
    piece = {(Fraction(1), Fraction(0), 0): Fraction(0), (Fraction(-1), Fraction(0), 0): Fraction(1, 2)}
    function = PiecewiseExp([Fraction(0)], [piece, {}])
    assert function.pieces == [{(Fraction(-1), Fraction(0), 0): Fraction(1, 2)}, {}]
    assert ExpSum(None).terms == {} and ExpSum({}).is_zero()


def test_interval_with_memoised_exponentials_equals_the_direct_enclosure():
    value = ExpSum({Fraction(-7, 20): Fraction(3, 8), Fraction(7, 5): Fraction(-1, 9), Fraction(0): Fraction(2, 3)})
    iv = mpmath.iv
    for bits in (64, 128, 256):
        piecewise._EXP_IV_CACHE.clear()
        for _ in range(2):  # cold, then from the memo
            old = iv.prec
            try:
                iv.prec = bits
                direct = iv.mpf(0)
                for e, a in value.terms.items():
                    direct += iv.mpf(a.numerator) / a.denominator * iv.exp(iv.mpf(e.numerator) / e.denominator)
            finally:
                iv.prec = old
            enclosure = value.interval(bits)
            assert (enclosure.a, enclosure.b) == (direct.a, direct.b)
            # 3/8 e^(-0.35) - 1/9 e^(1.4) + 2/3 = 0.264258... - 0.450577... + 0.666667... = 0.4803469262...
            assert abs(float(enclosure.a) - 0.4803469262173315) < 1e-15  # the float64 evaluation's value
            assert enclosure.b - enclosure.a < mpmath.mpf(2) ** (10 - bits)


def test_interval_memo_is_per_precision_and_per_value():
    value = ExpSum({Fraction(1, 2): Fraction(1, 3)})
    other = ExpSum({Fraction(1, 2): Fraction(2, 3)})
    narrow, wide = value.interval(256), value.interval(64)
    assert value.interval(64) is wide  # kept
    assert value.interval(256) is not wide and value.interval(256).b - value.interval(256).a < narrow.b - narrow.a + 1
    assert wide.b - wide.a > value.interval(256).b - value.interval(256).a  # 64 bits is wider than 256
    # 2/3 e^(1/2) = 2 x (1/3 e^(1/2)): a different value is enclosed on its own
    assert other.interval(128).a > value.interval(128).b
    assert abs(float(other.interval(128).a) - 2 * float(value.interval(128).a)) < 1e-15


def test_arithmetic_on_owned_dicts_equals_the_copying_constructor():
    # each operation against the same operation spelt with the copying constructor (the old code):
    # equal terms in the same order, zeros dropped, the operands unchanged
    x = ExpSum({Fraction(1): Fraction(1, 2), Fraction(-1, 3): Fraction(2, 5), Fraction(0): Fraction(-1)})
    y = ExpSum({Fraction(-1, 3): Fraction(2, 5), Fraction(2): Fraction(7, 9)})
    before = (dict(x.terms), dict(y.terms))
    naive_add = ExpSum({**x.terms, **{e: x.terms.get(e, 0) + a for e, a in y.terms.items()}})
    naive_sub = ExpSum({**x.terms, **{e: x.terms.get(e, 0) - a for e, a in y.terms.items()}})
    assert list((x + y).terms.items()) == list(naive_add.terms.items())
    assert list((x - y).terms.items()) == list(naive_sub.terms.items())
    # 2/5 e^(-1/3) - 2/5 e^(-1/3) = 0 is dropped: x - y = 1/2 e - 1 - 7/9 e^2
    assert (x - y).terms == {Fraction(1): Fraction(1, 2), Fraction(0): Fraction(-1), Fraction(2): Fraction(-7, 9)}
    assert (x - x).is_zero() and (x * 0).is_zero() and (-x).terms == {e: -a for e, a in x.terms.items()}
    assert (x * y).terms == _naive_total([ExpSum({e1 + e2: a1 * a2}) for e1, a1 in x.terms.items()
                                          for e2, a2 in y.terms.items()])
    assert x.times_exp(Fraction(1, 2)).terms == {e + Fraction(1, 2): a for e, a in x.terms.items()}
    assert (dict(x.terms), dict(y.terms)) == before


def test_interval_memo_by_content_keeps_the_summation_order():
    # equal values as new objects share the enclosure; the same terms in another order are enclosed
    # on their own (summed in that order), and both contain the value
    terms = [(Fraction(1, 3), Fraction(5, 7)), (Fraction(-2), Fraction(-1, 11)), (Fraction(0), Fraction(1, 2))]
    piecewise._INTERVALS.clear()
    first, again = ExpSum(dict(terms)), ExpSum(dict(terms))
    reversed_order = ExpSum(dict(reversed(terms)))
    assert first.interval(128) is again.interval(128)
    assert reversed_order.interval(128) is not first.interval(128)
    assert len(piecewise._INTERVALS) == 2
    # 5/7 e^(1/3) - 1/11 e^(-2) + 1/2 = 0.996866... - 0.012303... + 0.5 = 1.484563...
    value = 5 / 7 * math.exp(1 / 3) - math.exp(-2) / 11 + 0.5
    for enclosure in (first.interval(128), reversed_order.interval(128)):
        assert abs(float(enclosure.a) - value) < 1e-15 and enclosure.a <= enclosure.b


def test_float_memo_by_content_equals_the_certified_float():
    terms = {Fraction(1, 3): Fraction(5, 7), Fraction(-2): Fraction(-1, 11), Fraction(0): Fraction(1, 2)}
    piecewise._FLOATS.clear()
    direct = piecewise._certified_float(terms)
    assert ExpSum(terms).to_float() == direct and ExpSum(terms).to_float() == direct  # cold, then memoised
    assert len(piecewise._FLOATS) == 1
    assert ExpSum({Fraction(0): Fraction(1, 3)}).to_float() == 1 / 3  # a different value is not the memo's
    assert abs(direct - 1.4845628103516706) < 1e-15
