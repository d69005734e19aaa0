"""The privacy profile ``delta(eps)`` of the Gaussian mechanism (Balle and Wang 2018, Theorem 8), certified.

For ``M(D) = f(D) + N(0, sigma^2 I)`` and two datasets at l2 distance
``Delta = ||f(D) - f(D')||_2 > 0`` (Balle, Wang: "Improving the Gaussian Mechanism for Differential
Privacy: Analytical Calibration and Optimal Denoising", ICML 2018, Thm. 8)

    delta(eps) = Phi(Delta/(2 sigma) - eps sigma/Delta) - e^eps Phi(-Delta/(2 sigma) - eps sigma/Delta).

**Where it comes from.** The pair reduces to ``N(Delta, sigma^2)`` against ``N(0, sigma^2)`` on the
line ``z = <y - f(D'), u>``, ``u = (f(D) - f(D'))/Delta`` (an isometry; proved in
:mod:`dpverify.densities.gaussian`). The privacy loss ``L(z) = (Delta z - Delta^2/2)/sigma^2``
increases in ``z``, so the hockey-stick divergence ``sup_S P(S) - e^eps Q(S)`` is attained by
``S* = {L > eps} = {z >= t*}``, ``t* = Delta/2 + eps sigma^2/Delta``. With ``a = Delta/(2 sigma)`` and
``b = eps sigma/Delta``: ``P(S*) = Phi(a - b)``, ``Q(S*) = Phi(-a - b)``, and Theorem 8 is exactly
``P(S*) - e^eps Q(S*)``. :func:`pair_profile` encloses the four probabilities of ``S*`` and its
complement, each a tail computed directly (``P(not S*) = Phi(b - a)``, never ``1 - Phi(a - b)``),
by :func:`dpverify.densities.normal.normal_cdf`.

**It grows with Delta.** ``delta`` depends on ``r = Delta/sigma`` only, and with
``phi(-a - b) = phi(a - b) e^-eps`` (the exponents differ by ``((a + b)^2 - (a - b)^2)/2 = 2ab = eps``),
``d delta / d r = phi(r/2 - eps/r) (1/2 + eps/r^2) - e^eps phi(-r/2 - eps/r) (-1/2 + eps/r^2)
= phi(r/2 - eps/r) > 0``: increasing in ``Delta``, decreasing in ``sigma``. The calibrations below
bisect on ``sigma`` by it; the checker does not rely on it (it decides every distinct ``Delta``).

**Calibrations.** :func:`classical_sigma` is Dwork and Roth's closed form (2014, Thm. A.1, proved for
``eps < 1``), rounded up to a float; :func:`analytic_sigma` is Balle and Wang's Algorithm 1, the
smallest float ``sigma`` whose certified ``delta(eps)`` is at most the target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath

from dpverify.densities.normal import BITS, as_interval, float_at_least, fraction_of, normal_cdf, precision
from dpverify.densities.piecewise import as_fraction
from dpverify.errors import InvalidArgument
from dpverify.validation import check_delta, check_epsilon

__all__ = ["PairProfile", "pair_profile", "positive_sigma", "delta_for_epsilon", "classical_sigma", "analytic_sigma"]

iv = mpmath.iv


def _sensitivity_squared(sensitivity: Any, sensitivity_squared: Any) -> Fraction:
    if (sensitivity is None) == (sensitivity_squared is None):
        raise InvalidArgument(
            "give the l2 sensitivity as exactly one of sensitivity= (a rational) or sensitivity_squared= "
            f"(for an irrational one such as sqrt 2); got sensitivity={sensitivity!r}, "
            f"sensitivity_squared={sensitivity_squared!r}."
        )
    if sensitivity is not None:
        value = as_fraction("sensitivity", sensitivity)
        if value <= 0:
            raise InvalidArgument(f"sensitivity must be positive, got sensitivity={sensitivity!r}.")
        return value * value
    value = as_fraction("sensitivity_squared", sensitivity_squared)
    if value <= 0:
        raise InvalidArgument(f"sensitivity_squared must be positive, got sensitivity_squared={sensitivity_squared!r}.")
    return value


def positive_sigma(sigma: Any) -> Fraction:
    """The noise's standard deviation as an exact positive Fraction (a float read exactly).

    Raises:
        InvalidArgument: ``sigma`` is not a rational number, or not positive.
    """
    value = as_fraction("sigma", sigma)
    if value <= 0:
        raise InvalidArgument(f"sigma must be positive, got sigma={sigma!r}; sigma is the noise's standard deviation.")
    return value


@dataclass(frozen=True)
class PairProfile:
    """The two-outcome post-processing ``{S*, not S*}`` of one pair at one epsilon (intervals).

    Attributes:
        p_in, q_in: ``P(S*) = Phi(a - b)`` and ``Q(S*) = Phi(-a - b)``.
        p_out, q_out: ``P(not S*) = Phi(b - a)`` and ``Q(not S*) = Phi(a + b)``.
        threshold: ``t* = Delta/2 + eps sigma^2/Delta``.
    """

    p_in: Any
    q_in: Any
    p_out: Any
    q_out: Any
    threshold: Any

    def delta(self, epsilon: Any) -> Any:
        """``P(S*) - e^eps Q(S*)`` (Theorem 8) as an interval."""
        return self.p_in - iv.exp(epsilon) * self.q_in


def pair_profile(distance_squared: Fraction, sigma: Fraction, epsilon: Any, bits: int = BITS) -> PairProfile:
    """``P`` and ``Q`` of ``S*`` and its complement for ``Delta^2 = distance_squared`` (exact) at the
    exact ``epsilon``, enclosed at ``bits`` bits."""
    with precision(bits + 16):  # the arguments a little wider than the result needs
        distance = iv.sqrt(as_interval(distance_squared))
        s = as_interval(sigma)
        eps = as_interval(epsilon)
        a = distance / (2 * s)
        b = eps * s / distance
        threshold = distance / 2 + eps * s * s / distance
        arguments = (a - b, -a - b, b - a, a + b)
    p_in, q_in, p_out, q_out = (normal_cdf(x, bits=bits) for x in arguments)
    return PairProfile(p_in, q_in, p_out, q_out, threshold)


def _delta_bounds(distance_squared: Fraction, sigma: Fraction, epsilon: Any, bits: int = BITS) -> Any:
    profile = pair_profile(distance_squared, sigma, epsilon, bits)
    with precision(bits):
        return profile.delta(as_interval(epsilon))


def delta_for_epsilon(
    epsilon: Any, *, sigma: Any, sensitivity: Any = None, sensitivity_squared: Any = None, bits: int = BITS,
) -> Any:
    """A certified enclosure of the Gaussian mechanism's ``delta(eps)`` (Balle–Wang Thm. 8).

    Args:
        epsilon: eps >= 0, exact (int, Fraction, a float read exactly, or a sympy number).
        sigma: the noise's standard deviation (rational; a float is read exactly).
        sensitivity, sensitivity_squared: the l2 sensitivity ``Delta`` (rational) or ``Delta^2``
            (for an irrational ``Delta``); exactly one.
        bits: working precision.

    Returns:
        An ``mpmath.iv`` interval containing ``delta(eps)``.
    """
    check_epsilon(epsilon)
    squared = _sensitivity_squared(sensitivity, sensitivity_squared)
    exact = epsilon if not isinstance(epsilon, float) else Fraction(epsilon)
    return _delta_bounds(squared, positive_sigma(sigma), exact, bits)


def classical_sigma(epsilon: Any, delta: Any, *, sensitivity: Any = None, sensitivity_squared: Any = None) -> Fraction:
    """Dwork and Roth 2014, Theorem A.1: ``sigma = Delta sqrt(2 ln(1.25/delta)) / eps`` for ``0 < eps < 1``,
    rounded up to a float (returned as the exact Fraction of that float).

    Raises:
        InvalidArgument: ``eps`` not in (0, 1) (the theorem's condition; :func:`analytic_sigma` has none),
            ``delta`` not in (0, 1), or a bad sensitivity.
    """
    check_epsilon(epsilon, positive=True)
    check_delta(delta)
    eps, bound = as_fraction("epsilon", epsilon), as_fraction("delta", delta)
    if not eps < 1:
        raise InvalidArgument(
            f"the classical calibration is proved for epsilon < 1 (Dwork-Roth Thm. A.1), got epsilon={epsilon!r}; "
            "use analytic_sigma, which holds for every epsilon."
        )
    if not 0 < bound < 1:
        raise InvalidArgument(f"delta must be in (0, 1) for a Gaussian calibration, got delta={delta!r}.")
    squared = _sensitivity_squared(sensitivity, sensitivity_squared)
    with precision(128):
        sigma = iv.sqrt(as_interval(squared) * 2 * iv.log(as_interval(Fraction(5, 4) / bound))) / as_interval(eps)
        return Fraction(float_at_least(fraction_of(sigma.b)))


def analytic_sigma(epsilon: Any, delta: Any, *, sensitivity: Any = None, sensitivity_squared: Any = None) -> Fraction:
    """Balle and Wang 2018, Algorithm 1 (analytic calibration): the smallest float ``sigma`` whose
    certified ``delta(eps)`` is at most ``delta``, as the exact Fraction of that float.

    ``delta(eps)`` decreases in ``sigma`` (module docstring), so a bisection over floats on the
    formula (mpmath at 40 digits) finds the boundary; the float returned is then certified: its
    enclosure of ``delta(eps)`` lies at or below ``delta`` (so the claim holds: rounded up), and the
    float just below it has its enclosure above ``delta`` (so it is the smallest) — each checked in
    interval arithmetic, stepping a float at a time until both are proved.
    """
    check_epsilon(epsilon, positive=True)
    check_delta(delta)
    eps, bound = as_fraction("epsilon", epsilon), as_fraction("delta", delta)
    if not 0 < bound < 1:
        raise InvalidArgument(f"delta must be in (0, 1) for a Gaussian calibration, got delta={delta!r}.")
    squared = _sensitivity_squared(sensitivity, sensitivity_squared)

    def approximate(sigma: float) -> Any:
        with mpmath.workdps(40):
            distance, s = mpmath.sqrt(mpmath.mpf(squared.numerator) / squared.denominator), mpmath.mpf(sigma)
            e = mpmath.mpf(eps.numerator) / eps.denominator
            a, b = distance / (2 * s), e * s / distance
            return mpmath.ncdf(a - b) - mpmath.exp(e) * mpmath.ncdf(-a - b) - mpmath.mpf(bound.numerator) / bound.denominator

    low, high = 1.0, 1.0
    while approximate(high) > 0:
        high *= 2
    while approximate(low) <= 0:
        low /= 2
    while math.nextafter(low, math.inf) < high:  # approximate(low) > 0 >= approximate(high)
        middle = low + (high - low) / 2
        if middle in (low, high):
            break
        if approximate(middle) > 0:
            low = middle
        else:
            high = middle
    sigma = high
    for _ in range(64):
        if fraction_of(_delta_bounds(squared, Fraction(sigma), eps).b) > bound:
            sigma = math.nextafter(sigma, math.inf)  # not proved to hold: one float up
            continue
        below = math.nextafter(sigma, 0.0)
        if fraction_of(_delta_bounds(squared, Fraction(below), eps).b) <= bound:
            sigma = below  # the float below holds too
            continue
        return Fraction(sigma)
    raise AssertionError(f"internal error: the analytic sigma for eps={epsilon}, delta={delta} did not settle")

