"""The Gaussian mechanism (:mod:`dpverify.mechanisms.gaussian`): certified Phi, Balle–Wang delta(eps),
calibrations and the engine's verdicts, against independent references.

References: mpmath at 60 digits (``mpmath.ncdf``, its own erfc, not the series and continued fraction
of the module), dp_accounting's privacy loss distributions (pessimistic and optimistic estimates
bracket the exact delta) and its closed-form ``GaussianPrivacyLoss``, and hand-computed counts.
"""

from __future__ import annotations

import logging
import math
from fractions import Fraction

import mpmath
import pytest
import sympy

from dpverify.checking.input_pairs import all_query_vectors
from dpverify.errors import InvalidArgument
from dpverify.finite.neighbors import relation
from dpverify.mechanisms.gaussian import (
    GaussianMechanism,
    HalfSpace,
    analytic_sigma,
    classical_sigma,
    delta_for_epsilon,
    normal_cdf,
    verify_gaussian,
)
from dpverify.verdict.engine import Verdict


def _exact(point) -> Fraction:
    """An interval endpoint as the exact binary Fraction it is."""
    sign, man, exp, _ = point._mpi_[0]
    value = Fraction(int(man)) * Fraction(2) ** int(exp)
    return -value if sign else value


def _bounds(interval) -> tuple[Fraction, Fraction]:
    return _exact(interval.a), _exact(interval.b)


def _reference_phi(x) -> mpmath.mpf:
    with mpmath.workdps(60):
        fraction = Fraction(x)
        return mpmath.ncdf(mpmath.mpf(fraction.numerator) / fraction.denominator)


def _reference_delta(epsilon, sigma, distance_squared) -> mpmath.mpf:
    """Theorem 8 evaluated independently at 60 digits (mpmath's ncdf)."""
    with mpmath.workdps(60):
        def num(v):
            v = Fraction(v)
            return mpmath.mpf(v.numerator) / v.denominator

        distance, s, e = mpmath.sqrt(num(distance_squared)), num(sigma), num(epsilon)
        a, b = distance / (2 * s), e * s / distance
        return mpmath.ncdf(a - b) - mpmath.exp(e) * mpmath.ncdf(-a - b)


def _contains(bounds: tuple[Fraction, Fraction], reference: mpmath.mpf, slack: float = 1e-55) -> bool:
    """``reference`` (a 60-digit value, itself within about 1e-60 relative) lies in the enclosure."""
    with mpmath.workdps(60):
        low = mpmath.mpf(bounds[0].numerator) / bounds[0].denominator
        high = mpmath.mpf(bounds[1].numerator) / bounds[1].denominator
        margin = abs(reference) * slack
        return bool(low - margin <= reference <= high + margin)


# -- certified Phi --------------------------------------------------------------------------------

POINTS = [0, Fraction(1, 3), -Fraction(7, 3), 0.5, -1, 2.9, -2.9, 4.2, -4.2, 4.25, -4.25, 5, -5, -8, -12.3, -38,
          -100, -1000, 7, 40]


# x = -1000 (about 0.7 s, the continued fraction's longest run) under -m slow; -38 and -100 run the same branch.
@pytest.mark.parametrize("x", [pytest.param(x, marks=pytest.mark.slow) if x == -1000 else x for x in POINTS])
def test_normal_cdf_encloses_mpmath_at_60_digits(x):
    # series for |x|/sqrt 2 <= 3, continued fraction beyond (x = +-4.2 and +-4.25 straddle the switch)
    bounds = _bounds(normal_cdf(x))
    reference = _reference_phi(x)
    assert _contains(bounds, reference)
    assert bounds[0] <= bounds[1]
    # 160 bits: the enclosure is about 1e-46 wide relative, or tighter (measured: at most 9e-47)
    assert (bounds[1] - bounds[0]) <= Fraction(1, 10**45) * bounds[1]


def test_normal_cdf_at_zero_is_exactly_one_half():
    assert _bounds(normal_cdf(0)) == (Fraction(1, 2), Fraction(1, 2))


@pytest.mark.parametrize("bits", [24, 53, 400])
def test_normal_cdf_at_other_precisions_still_encloses_and_narrows(bits):
    for x in (Fraction(-61, 10), Fraction(3, 10), Fraction(-43, 10), 9):
        bounds = _bounds(normal_cdf(x, bits=bits))
        assert _contains(bounds, _reference_phi(x))
        assert bounds[1] - bounds[0] <= Fraction(2) ** (6 - bits) * bounds[1]


@pytest.mark.parametrize("z", ["0.25", "1", "2.5", "3"])
def test_series_tail_bound_encloses_erf_when_cut_early(z):
    # Cut at 2**-10 relative, the partial sum alone is below erf z (positive terms): only the proved
    # tail bound [0, t_N r/(1 - r)] makes the enclosure contain it. (White box: _erf_series.)
    from dpverify.mechanisms.gaussian import _erf_series

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
    from dpverify.mechanisms.gaussian import _erfc_fraction

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
    low, high = _bounds(normal_cdf(x))
    assert _contains((low, low), _reference_phi(-2), 1e-40)  # the low end is Phi(-2)
    assert _contains((high, high), _reference_phi(1.5), 1e-40)


def test_normal_cdf_far_tail_keeps_relative_precision():
    # Phi(-300) ~ 1.0e-19547: computed directly from the continued fraction, never as 1 - Phi(300)
    low, high = _bounds(normal_cdf(-300))
    reference = _reference_phi(-300)
    assert _contains((low, high), reference)
    assert reference < mpmath.mpf("1e-19500")
    assert high - low <= Fraction(1, 10**45) * high


# -- delta(eps): Theorem 8, dp_accounting ----------------------------------------------------------

PROFILES = [  # (sigma, Delta, eps)
    (1, 1, 1), (2, 1, Fraction(1, 2)), (Fraction(3, 2), 1, 3), (5, 2, Fraction(1, 10)), (Fraction(1, 2), 1, 5),
    (Fraction(37, 10), 1, 1), (1, 3, 0),
]


@pytest.mark.parametrize("sigma, distance, epsilon", PROFILES)
def test_delta_encloses_theorem_8_at_60_digits(sigma, distance, epsilon):
    bounds = _bounds(delta_for_epsilon(epsilon, sigma=sigma, sensitivity=distance))
    reference = _reference_delta(epsilon, sigma, Fraction(distance) ** 2)
    assert _contains(bounds, reference, 1e-50)
    assert float(bounds[1] - bounds[0]) <= 1e-40 * float(bounds[1])
    # the midpoint agrees with the 60-digit formula far better than 1e-12 relative
    assert abs(float(sum(bounds) / 2) - float(reference)) <= 1e-12 * float(reference)


def test_delta_at_eps_0_is_the_total_variation_2_phi_minus_1():
    # eps = 0: delta = Phi(Delta/(2 sigma)) - Phi(-Delta/(2 sigma)) = 2 Phi(1/2) - 1 for Delta = sigma = 1
    bounds = _bounds(delta_for_epsilon(0, sigma=1, sensitivity=1))
    with mpmath.workdps(60):
        assert _contains(bounds, 2 * mpmath.ncdf(mpmath.mpf(1) / 2) - 1, 1e-50)
    assert abs(float(bounds[0]) - 0.38292492254802624) < 1e-16  # erf(1/(2 sqrt 2))


# sigma = 1/2, eps = 5 (about 0.7 s: dp_accounting's PLD grid is widest there) under -m slow; its delta is
# checked against the 60-digit Theorem 8 by default (test_delta_encloses_theorem_8_at_60_digits).
@pytest.mark.parametrize("sigma, distance, epsilon", [
    pytest.param(*profile, marks=pytest.mark.slow) if profile == (Fraction(1, 2), 1, 5) else profile
    for profile in PROFILES[:5]
])
def test_delta_lies_between_dp_accounting_optimistic_and_pessimistic_plds(sigma, distance, epsilon):
    from dp_accounting.pld import privacy_loss_distribution, privacy_loss_mechanism

    low, high = (float(v) for v in _bounds(delta_for_epsilon(epsilon, sigma=sigma, sensitivity=distance)))
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
        low, high = _bounds(delta_for_epsilon(1, sigma=2, sensitivity_squared=squared))
        assert low > previous
        previous = high


# -- calibrations ------------------------------------------------------------------------------------


def test_classical_sigma_is_the_closed_form_rounded_up():
    # Delta sqrt(2 ln(1.25/delta)) / eps = sqrt(2 ln 125000) / 0.5 = 2 sqrt(2 * 11.7361) = 9.68961...
    sigma = classical_sigma(Fraction(1, 2), Fraction(1, 10**5), sensitivity=1)
    with mpmath.workdps(60):
        exact = mpmath.sqrt(2 * mpmath.log(mpmath.mpf(125000))) * 2
        assert mpmath.mpf(sigma.numerator) / sigma.denominator >= exact
        assert float(sigma) == math.nextafter(float(exact), math.inf) or float(sigma) == float(exact)
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
    holds = _reference_delta(epsilon, sigma, squared)
    fails = _reference_delta(epsilon, below, squared)
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


def test_sensitivity_must_be_given_once():
    with pytest.raises(InvalidArgument, match="exactly one"):
        delta_for_epsilon(1, sigma=1)
    with pytest.raises(InvalidArgument, match="exactly one"):
        analytic_sigma(1, Fraction(1, 10), sensitivity=1, sensitivity_squared=1)
    with pytest.raises(InvalidArgument, match="sigma must be positive"):
        GaussianMechanism(0)


# -- verdicts ------------------------------------------------------------------------------------------


def histogram(dataset):
    return (dataset.count(1), dataset.count(2))


HISTOGRAM = {"records": (0, 1, 2), "n": 3}


def test_pairs_are_grouped_by_distance_and_the_largest_is_the_worst():
    # 27 datasets of 3 records, 3 positions x 2 replacements each: 27 * 6 / 2 = 81 pairs. The
    # replaced record pair is {0,1}, {0,2} or {1,2} in 27 pairs each; {1,2} moves both counts
    # (Delta^2 = 2), the others one (Delta^2 = 1).
    mechanism = GaussianMechanism(3, histogram)
    result = verify_gaussian(mechanism, epsilon=1, delta=Fraction(1, 10), **HISTOGRAM)
    assert result.pairs == 81 and result.datasets == 27
    assert result.details["pairs_per_distance"] == [27, 54]
    assert result.details["distances"] == [math.sqrt(2), 1.0]
    first, second = result.worst_pair
    assert sum((a - b) ** 2 for a, b in zip(histogram(first), histogram(second))) == 2
    # the engine's delta* is the worst group's delta(eps), and it encloses Theorem 8 at Delta = sqrt 2
    reference = _reference_delta(1, 3, 2)
    assert result.delta == pytest.approx(float(reference), rel=1e-12)
    low, high = result.details["delta_interval"]
    assert low <= float(reference) <= high
    assert result.epsilon == math.inf  # the pure eps* of a Gaussian
    # every group is certified in both directions, even far below the claim (delta(1) = 0.0046 here
    # against 1/10): the floats only guide the sweep, the verdict rests on the intervals
    assert result.verdict is Verdict.HOLDS and result.certified_pairs == 2 * 2


def test_function_of_datasets_and_explicit_pairs_agree():
    mechanism = GaussianMechanism(Fraction(5, 2), histogram)
    enumerated_pairs = relation("substitute").pairs(HISTOGRAM["records"], 3, exchangeable=False)
    datasets = list(enumerated_pairs.datasets)
    pairs = [(datasets[i], datasets[j]) for i, j in zip(enumerated_pairs.left.tolist(), enumerated_pairs.right.tolist())]
    by_pairs = verify_gaussian(mechanism, epsilon=Fraction(1, 2), delta=Fraction(1, 100), pairs=pairs)
    enumerated = verify_gaussian(mechanism, epsilon=Fraction(1, 2), delta=Fraction(1, 100), **HISTOGRAM)
    assert by_pairs.verdict is enumerated.verdict
    assert by_pairs.delta == enumerated.delta
    assert by_pairs.details["pairs_per_distance"] == enumerated.details["pairs_per_distance"] == [27, 54]


@pytest.mark.parametrize("epsilon, delta", [
    (Fraction(1, 2), Fraction(1, 10**5)), (Fraction(1), Fraction(1, 10**5)), (Fraction(2), Fraction(1, 10**6)),
    (Fraction(1, 10), Fraction(1, 10**3)), (Fraction(6), Fraction(1, 10**10)),
])
def test_analytic_calibration_holds_and_the_float_below_is_violated(epsilon, delta):
    # tight: the analytic sigma holds (HOLDS; never VIOLATED), and one float less noise violates the
    # claim by about 1e-21 absolute, which the 160-bit enclosures separate
    sigma = analytic_sigma(epsilon, delta, sensitivity_squared=2)
    holds = verify_gaussian(GaussianMechanism(sigma, histogram), epsilon=epsilon, delta=delta, **HISTOGRAM)
    assert holds.verdict in (Verdict.HOLDS, Verdict.HOLDS_WITHIN_ROUNDING)
    assert holds.witness is None
    # slack below 1e-12 relative (the float rounding of sigma); the upper end is rounded outwards
    assert abs(delta - Fraction(holds.details["delta_interval"][1])) < delta * Fraction(1, 10**12)
    below = Fraction(math.nextafter(float(sigma), 0.0))
    fails = verify_gaussian(GaussianMechanism(below, histogram), epsilon=epsilon, delta=delta, **HISTOGRAM)
    assert fails.verdict is Verdict.VIOLATED
    _recheck_witness(fails.witness, below, epsilon, delta)


def test_classical_calibration_holds_with_slack():
    epsilon, delta = Fraction(1, 2), Fraction(1, 10**5)
    sigma = classical_sigma(epsilon, delta, sensitivity_squared=2)
    result = verify_gaussian(GaussianMechanism(sigma, histogram), epsilon=epsilon, delta=delta, **HISTOGRAM)
    assert result.verdict is Verdict.HOLDS
    # delta(1/2) at sigma = 13.703, Delta = sqrt 2 is about 1.6e-8: the claim 1e-5 is 600 times larger
    assert float(_reference_delta(epsilon, sigma, 2)) == pytest.approx(result.delta, rel=1e-12)
    assert 1e-8 < result.delta < 2e-8


def _recheck_witness(witness, sigma, epsilon, delta):
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


def test_half_the_analytic_sigma_is_violated_with_a_rechecked_witness():
    epsilon, delta = Fraction(1), Fraction(1, 10**5)
    sigma = analytic_sigma(epsilon, delta, sensitivity_squared=2) / 2
    result = verify_gaussian(GaussianMechanism(sigma, histogram), epsilon=epsilon, delta=delta, **HISTOGRAM)
    assert result.verdict is Verdict.VIOLATED and not result.holds
    _recheck_witness(result.witness, sigma, epsilon, delta)
    # the witness is the worst pair (Delta = sqrt 2) and its excess is delta(eps) - delta, exactly
    assert result.witness.excess == pytest.approx(float(_reference_delta(epsilon, sigma, 2)) - 1e-5, rel=1e-12)
    assert "witness" in result.summary() and "erfc" in result.summary()


@pytest.mark.parametrize("epsilon", [Fraction(0), Fraction(1, 10), Fraction(1), Fraction(5), Fraction(400)])
def test_a_pure_claim_is_violated_with_a_finite_witness_event(epsilon):
    # At eps = 400, sigma = 1, Delta = sqrt 2: P(S*) = Phi(sqrt 2/2 - 400/sqrt 2) = Phi(-282.1), about
    # 1e-17285: it underflows to 0 in float64, so the float sweep alone would see no violation; the
    # intervals decide it (rounding must not hide a leak).
    sigma = Fraction(1)
    result = verify_gaussian(GaussianMechanism(sigma, histogram), epsilon=epsilon, delta=0, **HISTOGRAM)
    assert result.verdict is Verdict.VIOLATED
    assert result.epsilon == math.inf and result.epsilon_bounds == (math.inf, math.inf)
    witness = result.witness
    _recheck_witness(witness, sigma, epsilon, Fraction(0))
    # at eps = 0 both directions tie (S* and its mirror are complements); either may be the witness
    p, q = (sympy.N(v, 60) for v in (witness.p, witness.q))
    assert 0 < q and p / q > sympy.exp(sympy.Rational(epsilon.numerator, epsilon.denominator))


def test_float_and_sympy_claims_are_read_as_the_engine_reads_them():
    sigma = analytic_sigma(Fraction(1, 2), Fraction(1, 10**5), sensitivity=1)
    mechanism = GaussianMechanism(sigma)
    pairs = all_query_vectors(2, m=2, differ="one")
    # 0.5 is read as 1/2 raised by 2**-50 relative (a float claim stands for itself up to rounding)
    assert verify_gaussian(mechanism, epsilon=0.5, delta=1e-5, pairs=pairs).holds
    # ln 2 > 1/2: more room
    result = verify_gaussian(mechanism, epsilon=sympy.log(2), delta=Fraction(1, 10**5), pairs=pairs)
    assert result.verdict is Verdict.HOLDS
    assert result.delta == pytest.approx(float(_reference_delta(Fraction(math.log(2)), sigma, 1)), rel=1e-9)
    assert result.delta < 1e-5


def test_identical_outputs_hold_at_any_claim():
    mechanism = GaussianMechanism(1, lambda dataset: (sum(dataset) * 0,))
    result = verify_gaussian(mechanism, epsilon=0, delta=0, **HISTOGRAM)
    assert result.verdict is Verdict.HOLDS and result.epsilon == 0.0 and result.delta == 0.0
    assert result.details["pairs_per_distance"] == [81]


def test_misuse_is_refused():
    mechanism = GaussianMechanism(1)
    with pytest.raises(InvalidArgument, match="different lengths"):
        verify_gaussian(mechanism, epsilon=1, delta=0, pairs=[((0, 0), (1,))])
    with pytest.raises(InvalidArgument, match="not both"):
        verify_gaussian(mechanism, epsilon=1, pairs=[((0,), (1,))], records=(0, 1), n=1)
    with pytest.raises(InvalidArgument, match="give the inputs"):
        verify_gaussian(mechanism, epsilon=1)
    with pytest.raises(InvalidArgument, match="more than max_pairs"):
        verify_gaussian(GaussianMechanism(1, histogram), epsilon=1, records=(0, 1, 2), n=3, max_pairs=80)
    with pytest.raises(InvalidArgument, match="not a neighbour pair"):
        verify_gaussian(mechanism, epsilon=1, pairs=[((0, 0), (1, 1))], neighbors="substitute")


def test_report_noisy_max_refuses_gaussian_noise_rather_than_guess():
    from dpverify.mechanisms.noisy_max import NoisyMaxValue, ReportNoisyMax

    for build in (ReportNoisyMax, NoisyMaxValue):
        with pytest.raises(InvalidArgument, match="no uncertified quadrature in a verdict"):
            build(Fraction(1, 2), "gaussian")
