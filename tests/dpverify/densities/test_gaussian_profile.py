"""The Gaussian privacy profile and calibrations (:mod:`dpverify.densities.gaussian_profile`).

References: mpmath at 60 digits (Theorem 8 from ``mpmath.ncdf``), dp_accounting's privacy loss
distributions (pessimistic and optimistic estimates bracket the exact delta) and its closed-form
``GaussianPrivacyLoss``, and hand-computed values.
"""

from __future__ import annotations

import logging
import math
from fractions import Fraction

import mpmath
import pytest

from dpverify.densities.gaussian_profile import analytic_sigma, classical_sigma, delta_for_epsilon, positive_sigma
from dpverify.errors import InvalidArgument

from ._gaussian_references import bounds, contains, reference_delta

PROFILES = [  # (sigma, Delta, eps)
    (1, 1, 1), (2, 1, Fraction(1, 2)), (Fraction(3, 2), 1, 3), (5, 2, Fraction(1, 10)), (Fraction(1, 2), 1, 5),
    (Fraction(37, 10), 1, 1), (1, 3, 0),
]


@pytest.mark.parametrize("sigma, distance, epsilon", PROFILES)
def test_delta_encloses_theorem_8_at_60_digits(sigma, distance, epsilon):
    enclosure = bounds(delta_for_epsilon(epsilon, sigma=sigma, sensitivity=distance))
    reference = reference_delta(epsilon, sigma, Fraction(distance) ** 2)
    assert contains(enclosure, reference, 1e-50)
    assert float(enclosure[1] - enclosure[0]) <= 1e-40 * float(enclosure[1])
    # the midpoint agrees with the 60-digit formula far better than 1e-12 relative
    assert abs(float(sum(enclosure) / 2) - float(reference)) <= 1e-12 * float(reference)


def test_delta_at_eps_0_is_the_total_variation_2_phi_minus_1():
    # eps = 0: delta = Phi(Delta/(2 sigma)) - Phi(-Delta/(2 sigma)) = 2 Phi(1/2) - 1 for Delta = sigma = 1
    enclosure = bounds(delta_for_epsilon(0, sigma=1, sensitivity=1))
    with mpmath.workdps(60):
        assert contains(enclosure, 2 * mpmath.ncdf(mpmath.mpf(1) / 2) - 1, 1e-50)
    assert abs(float(enclosure[0]) - 0.38292492254802624) < 1e-16  # erf(1/(2 sqrt 2))


# sigma = 1/2, eps = 5 (about 0.7 s: dp_accounting's PLD grid is widest there) under -m slow; its delta is
# checked against the 60-digit Theorem 8 by default (test_delta_encloses_theorem_8_at_60_digits).
@pytest.mark.parametrize("sigma, distance, epsilon", [
    pytest.param(*profile, marks=pytest.mark.slow) if profile == (Fraction(1, 2), 1, 5) else profile
    for profile in PROFILES[:5]
])
def test_delta_lies_between_dp_accounting_optimistic_and_pessimistic_plds(sigma, distance, epsilon):
    from dp_accounting.pld import privacy_loss_distribution, privacy_loss_mechanism

    low, high = (float(v) for v in bounds(delta_for_epsilon(epsilon, sigma=sigma, sensitivity=distance)))
    logging.disable(logging.WARNING)  # the optimistic estimate warns that it switches algorithm
    try:
        pessimistic = privacy_loss_distribution.from_gaussian_mechanism(
            float(sigma), sensitivity=float(distance), pessimistic_estimate=True, value_discretization_interval=1e-4,
        ).get_delta_for_epsilon(float(epsilon))
        optimistic = privacy_loss_distribution.from_gaussian_mechanism(
            float(sigma), sensitivity=float(distance), pessimistic_estimate=False, value_discretization_interval=1e-4,
            use_connect_dots=False,
        ).get_delta_for_epsilon(float(epsilon))
    finally:
        logging.disable(logging.NOTSET)
    assert optimistic <= low <= high <= pessimistic
    # connect-the-dots at a 1e-4 grid is within 1e-12 relative above (measured: 3e-14 .. 2e-13)
    assert pessimistic - high <= 1e-12 * high
    assert low - optimistic <= 1e-3 * low  # privacy buckets: about 1e-4 below
    # dp_accounting's closed form in float64 (scipy): within 1e-13 relative (measured: 2e-14)
    closed = privacy_loss_mechanism.GaussianPrivacyLoss(float(sigma), sensitivity=float(distance))
    assert closed.get_delta_for_epsilon(float(epsilon)) == pytest.approx(low, rel=1e-13)


def test_delta_increases_with_delta_and_its_derivative_is_phi():
    # d delta / d r = phi(r/2 - eps/r) with r = Delta/sigma (module docstring): checked by mpmath's
    # numerical derivative at 60 digits, and the certified enclosures strictly increase with Delta
    eps = Fraction(1, 2)
    with mpmath.workdps(60):
        def delta_of(r):
            return mpmath.ncdf(r / 2 - eps.numerator / mpmath.mpf(eps.denominator) / r) - mpmath.exp(
                mpmath.mpf(eps.numerator) / eps.denominator) * mpmath.ncdf(-r / 2 - mpmath.mpf(eps.numerator) / eps.denominator / r)

        for r in (mpmath.mpf("0.3"), mpmath.mpf(1), mpmath.mpf("2.5"), mpmath.mpf(7)):
            derivative = mpmath.diff(delta_of, r)
            expected = mpmath.npdf(r / 2 - mpmath.mpf(1) / 2 / r)
            assert abs(derivative - expected) < mpmath.mpf(10) ** -30
    previous = Fraction(-1)
    for squared in (Fraction(1, 4), Fraction(1), Fraction(2), Fraction(3), Fraction(9)):
        low, high = bounds(delta_for_epsilon(1, sigma=2, sensitivity_squared=squared))
        assert low > previous
        previous = high


# -- calibrations ------------------------------------------------------------------------------------


def test_classical_sigma_is_the_closed_form_rounded_up():
    # Delta sqrt(2 ln(1.25/delta)) / eps = sqrt(2 ln 125000) / 0.5 = 2 sqrt(2 * 11.7361) = 9.68961...
    sigma = classical_sigma(Fraction(1, 2), Fraction(1, 10**5), sensitivity=1)
    with mpmath.workdps(60):
        closed_form = mpmath.sqrt(2 * mpmath.log(mpmath.mpf(125000))) * 2
        assert mpmath.mpf(sigma.numerator) / sigma.denominator >= closed_form
        assert float(sigma) == math.nextafter(float(closed_form), math.inf) or float(sigma) == float(closed_form)
    assert abs(float(sigma) - 9.689610525210778) < 1e-12
    assert sigma == Fraction(float(sigma))  # a float, held exactly


def test_classical_sigma_refuses_eps_at_least_one():
    with pytest.raises(InvalidArgument, match="epsilon < 1"):
        classical_sigma(1, Fraction(1, 10**5), sensitivity=1)


@pytest.mark.parametrize("epsilon, delta, squared", [
    (Fraction(1, 2), Fraction(1, 10**5), Fraction(2)), (Fraction(1), Fraction(1, 10**5), Fraction(1)),
    (Fraction(2), Fraction(1, 10**6), Fraction(1)), (Fraction(1, 10), Fraction(1, 10**3), Fraction(1)),
    (Fraction(8), Fraction(1, 10**9), Fraction(4)),
])
def test_analytic_sigma_is_the_smallest_float_that_holds(epsilon, delta, squared):
    sigma = analytic_sigma(epsilon, delta, sensitivity_squared=squared)
    below = Fraction(math.nextafter(float(sigma), 0.0))
    holds = reference_delta(epsilon, sigma, squared)
    fails = reference_delta(epsilon, below, squared)
    with mpmath.workdps(60):
        claim = mpmath.mpf(delta.numerator) / delta.denominator
        assert holds <= claim < fails


def test_analytic_sigma_agrees_with_dp_accounting():
    from dp_accounting.pld import common, privacy_loss_mechanism

    for epsilon, delta in ((1.0, 1e-5), (0.5, 1e-6), (3.0, 1e-3)):
        ours = analytic_sigma(epsilon, delta, sensitivity=1)
        theirs = privacy_loss_mechanism.GaussianPrivacyLoss.from_privacy_guarantee(
            common.DifferentialPrivacyParameters(epsilon, delta), 1.0).standard_deviation
        # dp_accounting's binary search stops above the boundary: within 1e-7 relative (measured 8e-9)
        assert float(ours) <= theirs <= float(ours) * (1 + 1e-7)


def test_sensitivity_must_be_given_once_and_sigma_be_positive():
    with pytest.raises(InvalidArgument, match="exactly one"):
        delta_for_epsilon(1, sigma=1)
    with pytest.raises(InvalidArgument, match="exactly one"):
        analytic_sigma(1, Fraction(1, 10), sensitivity=1, sensitivity_squared=1)
    with pytest.raises(InvalidArgument, match="sigma must be positive"):
        positive_sigma(0)
    with pytest.raises(InvalidArgument, match="sigma must be positive"):
        delta_for_epsilon(1, sigma=Fraction(-1, 2), sensitivity=1)
    assert positive_sigma(0.5) == Fraction(1, 2)  # a float is read exactly
