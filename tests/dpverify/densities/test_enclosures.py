"""The memoised enclosures of dpverify.densities._enclosures against freshly built ones."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np

from dpverify.densities import _enclosures
from dpverify.densities._enclosures import _Enclosure, _enclosure_of, float_branch_and_bound


def _terms(shift: Fraction) -> list:
    # p(x) = 1/4 e^(-|x - shift|/2) as the terms of its right piece plus a polynomial term
    return [(Fraction(-1, 2), shift / 2, 0, Fraction(1, 4)), (Fraction(-1), Fraction(0), 1, Fraction(1, 8))]


def test_memoised_enclosure_encloses_exactly_as_a_fresh_one():
    _enclosures._ENCLOSURES.clear()
    x1, x2 = np.array([0.0, 0.5, 1.0, 3.0]), np.array([0.5, 1.0, 3.0, 3.0])
    r0 = np.array([-0.5, -0.5, -1.0, 0.0])
    for shift in (Fraction(0), Fraction(1), Fraction(0)):
        memo, fresh = _enclosure_of(_terms(shift)), _Enclosure(_terms(shift))
        for got, want in zip(memo.enclose(x1, x2, r0), fresh.enclose(x1, x2, r0)):
            assert np.array_equal(got, want)
    assert _enclosure_of(_terms(Fraction(0))) is _enclosure_of(_terms(Fraction(0)))
    assert _enclosure_of(_terms(Fraction(0))) is not _enclosure_of(_terms(Fraction(1)))
    assert len(_enclosures._ENCLOSURES) == 2


def test_branch_and_bound_is_the_same_cold_and_memoised():
    # p/q on [0, 2] for p = e^(-x/2)/4 + x e^(-x)/8 and q the same shifted by 1: a bounded ratio
    fp, fq = _terms(Fraction(0)), _terms(Fraction(1))
    _enclosures._ENCLOSURES.clear()
    cold = float_branch_and_bound(fp, fq, Fraction(0), Fraction(2), {}, 0.0)
    warm = float_branch_and_bound(fp, fq, Fraction(0), Fraction(2), {}, 0.0)
    assert cold == warm
    # p = e^(-x/2)/4 + x e^(-x)/8, q = e^(1/2 - x/2)/4 + x e^(-x)/8: the sup of p/q on [0, 2], found
    # independently by mpmath on a fine grid (p/q = 0.6065 at 0, e^(-1/2), rising with x), is bracketed
    upper, lower, _point = cold
    with mpmath.workdps(30):
        def ratio(x):
            return (mpmath.exp(-x / 2) / 4 + x * mpmath.exp(-x) / 8) / (mpmath.exp((1 - x) / 2) / 4 + x * mpmath.exp(-x) / 8)
        grid = max(ratio(mpmath.mpf(i) / 1000) for i in range(2001))
    assert lower <= float(grid) * (1 + 1e-12) and float(grid) <= upper
    assert upper - lower <= upper * 2e-6  # within the search's relative tolerance (1e-6, twice)
