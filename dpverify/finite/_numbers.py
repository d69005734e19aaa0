"""Numbers as the exact random source reads them: parameters and thresholds as exact Fractions,
and :class:`Enclosure`, a real number known only by certified rational bounds.

Helpers shared by :mod:`dpverify.finite.sampler._exact_random` (the ``rng``) and
:mod:`dpverify.finite.sampler._lazy` (lazy uniforms and the values computed from them).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Real
from typing import Any

import numpy as np

from dpverify.errors import InvalidArgument

__all__ = ["Enclosure", "WAYS_ON"]

WAYS_ON = (
    "Two ways on: write the noise with the exact noise programs of mechanisms/ (dpverify.mechanisms.noise: Laplace, "
    "Exponential, Geometric; dpverify.mechanisms.laplace for comparisons of noisy values) and return the mechanism's "
    "distribution, or check the sampler statistically with dpverify.estimate."
)



@dataclass(frozen=True)
class Enclosure:
    """A real number ``x`` known by rational bounds ``lo <= x <= hi`` (a certified enclosure, as
    interval arithmetic gives for ``exp(-1/2)``); ``lo == hi`` only when ``x`` is that rational.

    The probability of a branch whose threshold is irrational is an Enclosure: the path's mass is
    then carried as bounds, and the distribution is a float one whose rounding (the engine's float
    error model) covers the width of the bounds."""

    lo: Fraction
    hi: Fraction

    def __post_init__(self) -> None:
        if not self.lo <= self.hi:
            raise ValueError(f"an Enclosure needs lo <= hi, got lo={self.lo}, hi={self.hi}.")


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _arguments(args: tuple, kwargs: dict) -> str:
    return ", ".join([*(_describe(a) for a in args), *(f"{k}={_describe(v)}" for k, v in kwargs.items())])


def _number(call: str, name: str, value: Any) -> tuple[Fraction, bool]:
    """``value`` as an exact Fraction and whether it was a float (its binary value, inexact)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        raise InvalidArgument(f"{call}: {name} must be a number, got the bool {name}={value!r}; pass 0 or 1.")
    if isinstance(value, Fraction):
        return value, False
    if isinstance(value, Integral):
        return Fraction(int(value)), False
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidArgument(f"{call}: {name} must be a finite number, got {name}={value!r}.")
        return Fraction(value), True
    if type(value).__name__ == "Decimal" and value.is_finite():
        return Fraction(value), False
    basic: Any = getattr(sys.modules.get("sympy"), "Basic", ())
    if isinstance(value, basic):
        if value.is_Rational:
            return Fraction(int(value.p), int(value.q)), False
        if value.is_Float:
            return _number(call, name, float(value))
        raise InvalidArgument(
            f"{call}: {name} must be rational or a float, got the irrational {name}={value}; pass floats (the "
            "distribution is then a float one) or write the mechanism's exact distribution directly (e.g. "
            "dpverify.mechanisms.exponential.exponential_mechanism(..., exact=True))."
        )
    if isinstance(value, Real):
        return _number(call, name, float(value))
    raise InvalidArgument(f"{call}: {name} must be a real number, got {name}={value!r} of type {type(value).__name__}.")


def _integer(call: str, name: str, value: Any, *, at_least: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (Integral, np.integer)):
        raise InvalidArgument(f"{call}: {name} must be an integer, got {name}={value!r}.")
    number = int(value)
    if at_least is not None and number < at_least:
        raise InvalidArgument(f"{call}: {name} must be an integer >= {at_least}, got {name}={number}.")
    return number



#: Working precision (bits) of the enclosures computed here.
_PRECISION = 320


def enclosure_of(interval: Any) -> Enclosure:
    """The rational bounds of an ``mpmath.iv`` interval (its endpoints are binary floats: exact)."""
    from mpmath.libmp import to_rational

    low, high = interval._mpi_
    return Enclosure(Fraction(*to_rational(low)), Fraction(*to_rational(high)))


def poisson_hazard(lam: Fraction, k: int) -> Enclosure:
    """``P(X = k) / P(X >= k)`` for X ~ Poisson(``lam``), enclosed in interval arithmetic at
    :data:`_PRECISION` bits: ``e^-lam lam^k / k!`` over ``1 - sum_{j<k} e^-lam lam^j / j!``."""
    import mpmath

    iv = mpmath.iv
    old_precision = iv.prec
    iv.prec = _PRECISION
    try:
        rate = iv.mpf(lam.numerator) / lam.denominator
        term = iv.exp(-rate)
        below = iv.mpf(0)
        for j in range(k):
            below += term
            term = term * rate / (j + 1)
        share = term / (1 - below)
        if not share.a > 0 or not share.b < 1 or share.delta > share.a * 2**-200:
            raise ValueError(f"Poisson({lam}) at k={k}: the hazard cannot be enclosed at {_PRECISION} bits.")
        return enclosure_of(share)
    finally:
        iv.prec = old_precision
