"""The certified standard normal CDF (:mod:`dpverify.densities.normal`) against mpmath at 60 digits.

The reference is ``mpmath.ncdf`` (its own erfc, not the module's series and continued fraction).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from dpverify.densities.normal import _erf_series, _erfc_fraction, normal_cdf

from ._gaussian_references import bounds, contains, reference_phi

POINTS = [0, Fraction(1, 3), -Fraction(7, 3), 0.5, -1, 2.9, -2.9, 4.2, -4.2, 4.25, -4.25, 5, -5, -8, -12.3, -38,
          -100, -1000, 7, 40]


# x = -1000 (about 0.7 s, the continued fraction's longest run) under -m slow; -38 and -100 run the same branch.
@pytest.mark.parametrize("x", [pytest.param(x, marks=pytest.mark.slow) if x == -1000 else x for x in POINTS])
def test_normal_cdf_encloses_mpmath_at_60_digits(x):
    # series for |x|/sqrt 2 <= 3, continued fraction beyond (x = +-4.2 and +-4.25 straddle the switch)
    enclosure = bounds(normal_cdf(x))
    reference = reference_phi(x)
    assert contains(enclosure, reference)
    assert enclosure[0] <= enclosure[1]
    # 160 bits: the enclosure is about 1e-46 wide relative, or tighter (measured: at most 9e-47)
    assert (enclosure[1] - enclosure[0]) <= Fraction(1, 10**45) * enclosure[1]


def test_normal_cdf_at_zero_is_exactly_one_half():
    assert bounds(normal_cdf(0)) == (Fraction(1, 2), Fraction(1, 2))


@pytest.mark.parametrize("bits", [24, 53, 400])
def test_normal_cdf_at_other_precisions_still_encloses_and_narrows(bits):
    for x in (Fraction(-61, 10), Fraction(3, 10), Fraction(-43, 10), 9):
        enclosure = bounds(normal_cdf(x, bits=bits))
        assert contains(enclosure, reference_phi(x))
        assert enclosure[1] - enclosure[0] <= Fraction(2) ** (6 - bits) * enclosure[1]


@pytest.mark.parametrize("z", ["0.25", "1", "2.5", "3"])
def test_series_tail_bound_encloses_erf_when_cut_early(z):
    # Cut at 2**-10 relative, the partial sum alone is below erf z (positive terms): only the proved
    # tail bound [0, t_N r/(1 - r)] makes the enclosure contain it. (White box: _erf_series.)
    with mpmath.workprec(200):
        old = mpmath.iv.prec
        mpmath.iv.prec = 200
        try:
            enclosure = _erf_series(mpmath.iv.mpf(z), mpmath.iv.mpf(2) ** -10)
        finally:
            mpmath.iv.prec = old
        reference = mpmath.erf(mpmath.mpf(z))
        assert enclosure.a <= reference <= enclosure.b


@pytest.mark.parametrize("z", ["3.01", "4", "9"])
def test_continued_fraction_hull_encloses_erfc_when_cut_early(z):
    # Cut at 2**-10 relative, one convergent alone misses erfc z; the hull of two consecutive ones
    # contains it (positive partial numerators and denominators). (White box: _erfc_fraction.)
    with mpmath.workprec(200):
        old = mpmath.iv.prec
        mpmath.iv.prec = 200
        try:
            enclosure = _erfc_fraction(mpmath.iv.mpf(z), mpmath.iv.mpf(2) ** -10)
        finally:
            mpmath.iv.prec = old
        reference = mpmath.erfc(mpmath.mpf(z))
        assert enclosure.a <= reference <= enclosure.b
        assert enclosure.b - enclosure.a > reference * mpmath.mpf(2) ** -60  # truly cut early


def test_normal_cdf_of_an_interval_covers_both_ends():
    x = mpmath.iv.mpf([-2.0, 1.5])
    low, high = bounds(normal_cdf(x))
    assert contains((low, low), reference_phi(-2), 1e-40)  # the low end is Phi(-2)
    assert contains((high, high), reference_phi(1.5), 1e-40)


def test_normal_cdf_far_tail_keeps_relative_precision():
    # Phi(-300) ~ 1.0e-19547: computed directly from the continued fraction, never as 1 - Phi(300)
    low, high = bounds(normal_cdf(-300))
    reference = reference_phi(-300)
    assert contains((low, high), reference)
    assert reference < mpmath.mpf("1e-19500")
    assert high - low <= Fraction(1, 10**45) * high
