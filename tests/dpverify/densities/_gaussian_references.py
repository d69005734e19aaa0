"""Independent references for the Gaussian tests: mpmath at 60 digits and hand-built inputs.

``mpmath.ncdf`` (its own erfc, not the series and continued fraction of :mod:`dpverify.densities.normal`)
evaluates ``Phi`` and Balle–Wang's Theorem 8; a witness is rechecked from its half-space's geometry.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import sympy

from dpverify.checking.input_pairs import InputPairs
from dpverify.densities.gaussian import HalfSpace
from dpverify.finite.neighbors import relation


def exact(point) -> Fraction:
    """An interval endpoint as the exact binary Fraction it is."""
    sign, man, exp, _ = point._mpi_[0]
    value = Fraction(int(man)) * Fraction(2) ** int(exp)
    return -value if sign else value


def bounds(interval) -> tuple[Fraction, Fraction]:
    return exact(interval.a), exact(interval.b)


def reference_phi(x) -> mpmath.mpf:
    with mpmath.workdps(60):
        fraction = Fraction(x)
        return mpmath.ncdf(mpmath.mpf(fraction.numerator) / fraction.denominator)


def reference_delta(epsilon, sigma, distance_squared) -> mpmath.mpf:
    """Theorem 8 evaluated independently at 60 digits (mpmath's ncdf)."""
    with mpmath.workdps(60):
        def num(v):
            v = Fraction(v)
            return mpmath.mpf(v.numerator) / v.denominator

        distance, s, e = mpmath.sqrt(num(distance_squared)), num(sigma), num(epsilon)
        a, b = distance / (2 * s), e * s / distance
        return mpmath.ncdf(a - b) - mpmath.exp(e) * mpmath.ncdf(-a - b)


def contains(enclosure: tuple[Fraction, Fraction], reference: mpmath.mpf, slack: float = 1e-55) -> bool:
    """``reference`` (a 60-digit value, itself within about 1e-60 relative) lies in the enclosure."""
    with mpmath.workdps(60):
        low = mpmath.mpf(enclosure[0].numerator) / enclosure[0].denominator
        high = mpmath.mpf(enclosure[1].numerator) / enclosure[1].denominator
        margin = abs(reference) * slack
        return bool(low - margin <= reference <= high + margin)


def histogram(dataset):
    """``f(D) = (#1s, #2s)`` over records ``{0, 1, 2}``: l2 sensitivity ``sqrt 2``."""
    return (dataset.count(1), dataset.count(2))


HISTOGRAM = {"records": (0, 1, 2), "n": 3}


def histogram_pairs() -> InputPairs:
    """Every substitute pair of 3 records from ``{0, 1, 2}``: 27 datasets, 27 * 3 * 2 / 2 = 81 pairs."""
    substitute = relation("substitute")
    enumerated = substitute.pairs(HISTOGRAM["records"], HISTOGRAM["n"], exchangeable=False)
    return InputPairs("substitute, 3 records, n=3", list(enumerated.datasets), enumerated.left, enumerated.right,
                      substitute)


def recheck_witness(witness, sigma, epsilon, delta):
    """P(S) - e^eps Q(S) > delta for the witness, rechecked independently: the exact sympy values at 50
    digits, and P(S), Q(S) recomputed with mpmath's ncdf from the half-space's geometry and the
    witness's own datasets (under M(D), z = <y - f(D'), u> is normal with mean <f(D) - f(D'), u>)."""
    assert witness is not None and not witness.within_rounding
    assert relation("substitute").is_neighbor(witness.dataset, witness.neighbor, exchangeable=False)
    (halfspace,) = witness.output_set
    assert isinstance(halfspace, HalfSpace)
    assert {halfspace.toward, halfspace.away} == {histogram(witness.dataset), histogram(witness.neighbor)}
    p, q = (sympy.N(v, 50) for v in (witness.p, witness.q))
    assert p - sympy.exp(sympy.Rational(epsilon.numerator, epsilon.denominator)) * q > sympy.Rational(
        delta.numerator, delta.denominator)
    squared = sum(Fraction(a - b) ** 2 for a, b in zip(halfspace.toward, halfspace.away))
    with mpmath.workdps(60):
        distance = mpmath.sqrt(mpmath.mpf(squared.numerator) / squared.denominator)
        s = mpmath.mpf(sigma.numerator) / sigma.denominator
        e = mpmath.mpf(epsilon.numerator) / epsilon.denominator
        threshold = distance / 2 + e * s * s / distance
        assert abs(float(threshold) - halfspace.threshold) <= 1e-12 * float(threshold)

        def mass(dataset):
            dot = sum((Fraction(a - b) * (c - b) for a, b, c in zip(halfspace.toward, halfspace.away, histogram(dataset))),
                      Fraction(0))
            mean = mpmath.mpf(dot.numerator) / dot.denominator / distance
            return mpmath.ncdf((threshold - mean) / s) if halfspace.complement else mpmath.ncdf((mean - threshold) / s)

        p_ref, q_ref = mass(witness.dataset), mass(witness.neighbor)
        assert abs(p_ref / mpmath.mpf(str(p)) - 1) < mpmath.mpf(10) ** -45
        assert abs(q_ref / mpmath.mpf(str(q)) - 1) < mpmath.mpf(10) ** -45
        assert p_ref - mpmath.exp(e) * q_ref > mpmath.mpf(delta.numerator) / delta.denominator
