"""The standard normal CDF ``Phi``, certified: interval enclosures with proved truncation bounds.

``mpmath.iv`` has no erfc, so :func:`normal_cdf` evaluates ``Phi(x) = erfc(-x/sqrt 2)/2`` in interval
arithmetic:

* for ``0 <= z <= 3`` the positive series ``erf z = (2/sqrt pi) e^{-z^2} sum_n z (2z^2)^n/(2n+1)!!``
  (DLMF 7.6.2), whose term ratios ``2z^2/(2n+3)`` decrease, so the tail after a term ``t_N`` is at
  most ``t_N r/(1 - r)`` with ``r = 2z^2/(2N+3) < 1``, added as ``[0, bound]``;
* for ``z > 3`` Laplace's continued fraction
  ``sqrt(pi) e^{z^2} erfc z = 1/(z + (1/2)/(z + 1/(z + (3/2)/(z + ...))))`` (DLMF 7.9.2), whose
  partial numerators and denominators are positive, so the value lies between any two consecutive
  convergents (computed as intervals);
* ``erfc(-z) = 2 - erfc(z)``.

An interval argument (``x/sqrt 2`` is irrational) is handled by monotonicity: ``erfc`` is
decreasing, so the enclosure is ``[erfc(high end), erfc(low end)]`` at the two exact endpoints.
Callers compute tails directly (``Phi(-a)``, never ``1 - Phi(a)``), so tiny probabilities keep their
relative precision; at the default 160 bits the enclosures are about ``1e-45`` wide relative.

The module also holds the small interval tools the Gaussian modules share: a precision context,
exact numbers (and sympy claims) as intervals, and interval endpoints read back as exact Fractions
or rounded outwards to floats.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

import mpmath

__all__ = ["BITS", "normal_cdf", "precision", "as_interval", "fraction_of", "float_at_least", "float_at_most"]

iv = mpmath.iv

#: Working precision (bits) of the certified enclosures.
BITS = 160
#: Below this argument erfc is summed as a series, above it as a continued fraction.
_SERIES_LIMIT = 3


@contextmanager
def precision(bits: int) -> Iterator[None]:
    """``mpmath.iv`` at ``bits`` bits inside the block, the old precision restored after it."""
    old = iv.prec
    iv.prec = bits
    try:
        yield
    finally:
        iv.prec = old


def _erf_series(z: Any, target: Any) -> Any:
    """``erf z`` for a point interval ``0 <= z <= 3`` (module docstring: positive series, tail bound),
    the tail bound below ``target`` relative."""
    two_z2 = 2 * z * z
    term, total, n = z, z, 0
    while True:
        ratio = two_z2 / (2 * n + 3)  # t_{n+1} / t_n, and every later ratio is smaller
        if ratio.b < iv.mpf(1) / 2:
            tail = term * ratio / (1 - ratio)  # >= sum_{m > n} t_m
            if tail.b <= (total * target).a:
                total += iv.mpf([0, tail.b])
                break
        term = term * ratio
        total += term
        n += 1
    return 2 / iv.sqrt(iv.pi) * iv.exp(-z * z) * total


def _erfc_fraction(z: Any, target: Any) -> Any:
    """``erfc z`` for a point interval ``z > 3`` (module docstring: DLMF 7.9.2, consecutive convergents),
    stopped when two consecutive convergents agree to ``target`` relative."""
    # K = a_1/(b_1 + a_2/(b_2 + ...)), a_1 = 1, a_m = (m - 1)/2, b_m = z; A_m/B_m is the m-th convergent.
    a_prev, a_now = iv.mpf(1), iv.mpf(0)  # A_{-1}, A_0
    b_prev, b_now = iv.mpf(0), iv.mpf(1)  # B_{-1}, B_0
    last = None
    m = 1
    while True:
        numerator = iv.mpf(1) if m == 1 else iv.mpf(m - 1) / 2
        a_prev, a_now = a_now, z * a_now + numerator * a_prev
        b_prev, b_now = b_now, z * b_now + numerator * b_prev
        value = a_now / b_now
        if last is not None:
            low, high = min(last.a, value.a), max(last.b, value.b)
            if high - low <= low * target:
                hull = iv.mpf([low, high])
                return iv.exp(-z * z) / iv.sqrt(iv.pi) * hull
        last = value
        m += 1
        if m > 100_000:  # unreachable: about 160 terms at z = 3 and 160 bits, fewer for larger z
            raise AssertionError(f"internal error: the continued fraction of erfc({z}) did not settle")


def _erfc_point(z: Any, target: Any) -> Any:
    """``erfc z`` for a point interval ``z`` (an exact number); truncation below ``target`` relative."""
    if z.a < 0:
        return 2 - _erfc_point(-z, target)
    if z.b <= _SERIES_LIMIT:
        return 1 - _erf_series(z, target)
    return _erfc_fraction(z, target)


def normal_cdf(x: Any, *, bits: int = BITS) -> Any:
    """A certified enclosure of ``Phi(x)``, the standard normal CDF, as an ``mpmath.iv`` interval.

    Args:
        x: an ``mpmath.iv`` interval or an exact number (int, Fraction, float read exactly).
        bits: working precision; the result is about ``2**-bits`` wide relative to ``Phi(x)``
            (plus what the width of ``x`` itself carries).

    Returns:
        An interval containing ``Phi(y)`` for every ``y`` in ``x``, in ``iv.prec = bits``.
    """
    # 32 guard bits: the convergents and partial sums each carry a few roundings per term, and the
    # truncation is stopped at 2**-(bits + 8) relative, so their sum stays well below 2**-bits
    with precision(bits + 32):
        target = iv.mpf(2) ** (-bits - 8)
        y = -as_interval(x) / iv.sqrt(2)
        low = _erfc_point(y.b, target)  # erfc is decreasing: its smallest value on y is at the high end
        high = _erfc_point(y.a, target) if y.a != y.b else low
        return iv.mpf([low.a, high.b]) / 2


def as_interval(value: Any) -> Any:
    """An interval containing an exact number (an interval is returned as it is)."""
    if isinstance(value, mpmath.ctx_iv.ivmpf):
        return value
    if isinstance(value, float):
        return iv.mpf(value)  # a float is an exact binary rational
    if isinstance(value, Fraction) or isinstance(value, int):
        fraction = Fraction(value)
        return iv.mpf(fraction.numerator) / iv.mpf(fraction.denominator)
    return _sympy_interval(value)


def _sympy_interval(value: Any) -> Any:
    """A sympy number (a claim such as ``sympy.log(3)``) in an interval: its rationals exactly, others
    by sympy's adaptive evalf to ``prec + 40`` bits, widened by ``2**-(prec + 20)`` relative (the same
    policy as the engine's :func:`dpverify.verdict.engine.decide` certification)."""
    import sympy

    number = sympy.sympify(value)
    if number.is_Rational:
        return iv.mpf(int(number.p)) / iv.mpf(int(number.q))
    digits = int((iv.prec + 40) * 0.30103) + 2
    approx = iv.mpf(str(sympy.N(number, digits)))
    radius = abs(approx) * iv.mpf(2) ** (-iv.prec - 20) + iv.mpf(2) ** (-4 * iv.prec)
    return iv.mpf([(approx - radius).a, (approx + radius).b])


def fraction_of(value: Any) -> Fraction:
    """A point interval (an interval's endpoint ``x.a`` or ``x.b``) as the exact Fraction it is, read
    from its binary digits (``mpmath.mpf(x)`` would round it to the ``mp`` context's 53 bits)."""
    sign, man, exp, _ = value._mpi_[0]
    if not man and exp:
        raise AssertionError(f"internal error: an interval endpoint is not finite: {value}")
    number = Fraction(int(man)) * Fraction(2) ** int(exp)
    return -number if sign else number


def float_at_least(value: Fraction) -> float:
    """The smallest float ``>= value``."""
    number = float(value)
    return number if Fraction(number) >= value else math.nextafter(number, math.inf)


def float_at_most(value: Fraction) -> float:
    """The largest float ``<= value``."""
    number = float(value)
    return number if Fraction(number) <= value else math.nextafter(number, -math.inf)
