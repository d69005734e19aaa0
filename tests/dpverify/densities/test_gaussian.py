"""The Gaussian decision (:mod:`dpverify.densities.gaussian`): the engine's verdicts on half-spaces,
its protocol and its route from :func:`dpverify.checking.input_pairs.verify_pairs`.

References: mpmath at 60 digits (Theorem 8 from ``mpmath.ncdf``), witnesses rechecked from their
half-space's geometry, and hand-computed counts (``_gaussian_references``).
"""

from __future__ import annotations

import dataclasses
import math
import random
from fractions import Fraction

import mpmath
import pytest
import sympy

from dpverify.checking.gaussian import verify_gaussian
from dpverify.checking.input_pairs import InputPairs, all_query_vectors, verify_pairs
from dpverify.densities.gaussian import decide_gaussian
from dpverify.densities.gaussian_profile import analytic_sigma, classical_sigma
from dpverify.errors import InvalidArgument, NondeterministicMechanism
from dpverify.mechanisms.gaussian import GaussianMechanism
from dpverify.verdict.engine import Verdict
from dpverify.verdict.results import PairsResult

from ._gaussian_references import histogram, histogram_pairs, recheck_witness, reference_delta


def test_pairs_are_grouped_by_distance_and_the_largest_is_the_worst():
    # 27 datasets of 3 records, 3 positions x 2 replacements each: 27 * 6 / 2 = 81 pairs. The
    # replaced record pair is {0,1}, {0,2} or {1,2} in 27 pairs each; {1,2} moves both counts
    # (Delta^2 = 2), the others one (Delta^2 = 1).
    mechanism = GaussianMechanism(3, histogram)
    result = decide_gaussian(mechanism, histogram_pairs(), epsilon=1, delta=Fraction(1, 10))
    assert result.pairs == 81 and result.datasets == 27
    assert result.details["pairs_per_distance"] == [27, 54]
    assert result.details["distances"] == [math.sqrt(2), 1.0]
    first, second = result.worst_pair
    assert sum((a - b) ** 2 for a, b in zip(histogram(first), histogram(second))) == 2
    # the engine's delta* is the worst group's delta(eps), and it encloses Theorem 8 at Delta = sqrt 2
    reference = reference_delta(1, 3, 2)
    assert result.delta == pytest.approx(float(reference), rel=1e-12)
    low, high = result.details["delta_interval"]
    assert low <= float(reference) <= high
    assert result.epsilon == math.inf  # the pure eps* of a Gaussian
    # every group is certified in both directions, even far below the claim (delta(1) = 0.0046 here
    # against 1/10): the floats only guide the sweep, the verdict rests on the intervals
    assert result.verdict is Verdict.HOLDS and result.certified_pairs == 2 * 2


@pytest.mark.parametrize("epsilon, delta", [
    (Fraction(1, 2), Fraction(1, 10**5)), (Fraction(1), Fraction(1, 10**5)), (Fraction(2), Fraction(1, 10**6)),
    (Fraction(1, 10), Fraction(1, 10**3)), (Fraction(6), Fraction(1, 10**10)),
])
def test_analytic_calibration_holds_and_the_float_below_is_violated(epsilon, delta):
    # tight: the analytic sigma holds (HOLDS; never VIOLATED), and one float less noise violates the
    # claim by about 1e-21 absolute, which the 160-bit enclosures separate
    sigma = analytic_sigma(epsilon, delta, sensitivity_squared=2)
    holds = decide_gaussian(GaussianMechanism(sigma, histogram), histogram_pairs(), epsilon=epsilon, delta=delta)
    assert holds.verdict in (Verdict.HOLDS, Verdict.HOLDS_WITHIN_ROUNDING)
    assert holds.witness is None
    # slack below 1e-12 relative (the float rounding of sigma); the upper end is rounded outwards
    assert abs(delta - Fraction(holds.details["delta_interval"][1])) < delta * Fraction(1, 10**12)
    below = Fraction(math.nextafter(float(sigma), 0.0))
    fails = decide_gaussian(GaussianMechanism(below, histogram), histogram_pairs(), epsilon=epsilon, delta=delta)
    assert fails.verdict is Verdict.VIOLATED
    recheck_witness(fails.witness, below, epsilon, delta)


def test_classical_calibration_holds_with_slack():
    epsilon, delta = Fraction(1, 2), Fraction(1, 10**5)
    sigma = classical_sigma(epsilon, delta, sensitivity_squared=2)
    result = decide_gaussian(GaussianMechanism(sigma, histogram), histogram_pairs(), epsilon=epsilon, delta=delta)
    assert result.verdict is Verdict.HOLDS
    # delta(1/2) at sigma = 13.703, Delta = sqrt 2 is about 1.6e-8: the claim 1e-5 is 600 times larger
    assert float(reference_delta(epsilon, sigma, 2)) == pytest.approx(result.delta, rel=1e-12)
    assert 1e-8 < result.delta < 2e-8


def test_half_the_analytic_sigma_is_violated_with_a_rechecked_witness():
    epsilon, delta = Fraction(1), Fraction(1, 10**5)
    sigma = analytic_sigma(epsilon, delta, sensitivity_squared=2) / 2
    result = decide_gaussian(GaussianMechanism(sigma, histogram), histogram_pairs(), epsilon=epsilon, delta=delta)
    assert result.verdict is Verdict.VIOLATED and not result.holds
    recheck_witness(result.witness, sigma, epsilon, delta)
    # the witness is the worst pair (Delta = sqrt 2) and its excess is delta(eps) - delta, exactly
    assert result.witness.excess == pytest.approx(float(reference_delta(epsilon, sigma, 2)) - 1e-5, rel=1e-12)
    assert "witness" in result.summary() and "erfc" in result.summary()


@pytest.mark.parametrize("epsilon", [Fraction(0), Fraction(1, 10), Fraction(1), Fraction(5), Fraction(400)])
def test_a_pure_claim_is_violated_with_a_finite_witness_event(epsilon):
    # At eps = 400, sigma = 1, Delta = sqrt 2: P(S*) = Phi(sqrt 2/2 - 400/sqrt 2) = Phi(-282.1), about
    # 1e-17285: it underflows to 0 in float64, so the float sweep alone would see no violation; the
    # intervals decide it (rounding must not hide a leak).
    sigma = Fraction(1)
    result = decide_gaussian(GaussianMechanism(sigma, histogram), histogram_pairs(), epsilon=epsilon, delta=0)
    assert result.verdict is Verdict.VIOLATED
    assert result.epsilon == math.inf and result.epsilon_bounds == (math.inf, math.inf)
    witness = result.witness
    recheck_witness(witness, sigma, epsilon, Fraction(0))
    # at eps = 0 both directions tie (S* and its mirror are complements); either may be the witness
    p, q = (sympy.N(v, 60) for v in (witness.p, witness.q))
    assert 0 < q and p / q > sympy.exp(sympy.Rational(epsilon.numerator, epsilon.denominator))


def test_float_and_sympy_claims_are_read_as_the_engine_reads_them():
    sigma = analytic_sigma(Fraction(1, 2), Fraction(1, 10**5), sensitivity=1)
    mechanism = GaussianMechanism(sigma)
    pairs = all_query_vectors(2, m=2, differ="one")
    # 0.5 is read as 1/2 raised by 2**-50 relative (a float claim stands for itself up to rounding)
    assert decide_gaussian(mechanism, pairs, epsilon=0.5, delta=1e-5).holds
    # ln 2 > 1/2: more room
    result = decide_gaussian(mechanism, pairs, epsilon=sympy.log(2), delta=Fraction(1, 10**5))
    assert result.verdict is Verdict.HOLDS
    assert result.delta == pytest.approx(float(reference_delta(Fraction(math.log(2)), sigma, 1)), rel=1e-9)
    assert result.delta < 1e-5


def test_identical_outputs_hold_at_any_claim():
    mechanism = GaussianMechanism(1, lambda dataset: (sum(dataset) * 0,))
    result = decide_gaussian(mechanism, histogram_pairs(), epsilon=0, delta=0)
    assert result.verdict is Verdict.HOLDS and result.epsilon == 0.0 and result.delta == 0.0
    assert result.details["pairs_per_distance"] == [81]


def test_query_vectors_of_different_lengths_are_refused():
    with pytest.raises(InvalidArgument, match="different lengths"):
        decide_gaussian(GaussianMechanism(1), InputPairs.from_pairs([((0, 0), (1,))]), epsilon=1, delta=0)


# -- the protocol and the route from verify_pairs ---------------------------------------------------

#: Every field of a result but its timing.
_COMPARED = [f.name for f in dataclasses.fields(PairsResult) if f.name != "seconds"]


def _same_fields(first, second) -> None:
    for name in _COMPARED:
        assert getattr(first, name) == getattr(second, name), name


@pytest.mark.parametrize("sigma_factor, claimed_delta, verdict", [
    (1, Fraction(1, 10**5), Verdict.HOLDS),  # the analytic sigma: holds with no room
    (Fraction(1, 2), Fraction(1, 10**5), Verdict.VIOLATED),  # half of it
    (1, 0, Verdict.VIOLATED),  # a pure claim
])
def test_verify_pairs_routes_a_gaussian_mechanism_to_the_same_result(sigma_factor, claimed_delta, verdict):
    epsilon = Fraction(1)
    sigma = analytic_sigma(epsilon, Fraction(1, 10**5), sensitivity_squared=2) * sigma_factor
    mechanism = GaussianMechanism(sigma, histogram)
    given = list(histogram_pairs())
    routed = verify_pairs(mechanism, pairs=given, epsilon=epsilon, delta=claimed_delta)
    keyword = verify_gaussian(mechanism, pairs=given, epsilon=epsilon, delta=claimed_delta)
    assert routed.verdict is keyword.verdict is verdict
    _same_fields(routed, keyword)
    # delta* is Theorem 8 at the worst distance, Delta^2 = 2, through either door
    assert routed.delta == pytest.approx(float(reference_delta(epsilon, sigma, 2)), rel=1e-12)
    assert routed.input_set == "given pairs" and routed.pairs == 81


def test_any_class_declaring_the_protocol_is_decided_alike():
    # not a GaussianMechanism: gaussian_output, sigma and answer are all the checker reads
    class Counts:
        gaussian_output = True
        sigma = Fraction(5, 2)

        def answer(self, dataset):
            return [dataset.count(1), dataset.count(2)]

    ours = verify_pairs(Counts(), pairs=histogram_pairs(), epsilon=Fraction(1, 2), delta=Fraction(1, 100))
    theirs = decide_gaussian(GaussianMechanism(Fraction(5, 2), histogram), histogram_pairs(), epsilon=Fraction(1, 2),
                             delta=Fraction(1, 100))
    _same_fields(ours, theirs)
    assert ours.details["pairs_per_distance"] == [27, 54]


def test_a_mechanism_not_declaring_the_protocol_is_refused():
    class Undeclared:
        sigma = 1

        def answer(self, dataset):
            return dataset

    for mechanism in (Undeclared(), lambda dataset: {0: 1}):
        with pytest.raises(InvalidArgument, match="GaussianOutput protocol"):
            decide_gaussian(mechanism, InputPairs.from_pairs([((0,), (1,))]), epsilon=1, delta=0)


def test_a_query_drawing_random_numbers_is_refused():
    mechanism = GaussianMechanism(1, lambda dataset: (dataset[0] + random.random(),))
    drew = r"gaussian.answer drew from Python's global random generator .* on dataset \(0,\)"
    with pytest.raises(NondeterministicMechanism, match=drew):
        decide_gaussian(mechanism, InputPairs.from_pairs([((0,), (1,))]), epsilon=1, delta=0)


def test_the_privacy_profile_is_the_worst_distance_enclosed():
    # sigma = 3, Delta^2 in {1, 2}: delta(eps) grows with Delta, so the profile is Theorem 8 at sqrt 2;
    # at eps = 0 it is the total variation 2 Phi(sqrt 2/6) - 1 = 0.18643...
    mechanism = GaussianMechanism(3, histogram)
    result = verify_pairs(mechanism, pairs=histogram_pairs(), epsilon=1, delta=Fraction(1, 10),
                          profile=[0, Fraction(1, 2), 1, 4])
    points = result.details["privacy_profile"]
    assert [point["epsilon"] for point in points] == [0.0, 0.5, 1.0, 4.0]
    for point in points:
        reference = float(reference_delta(Fraction(point["epsilon"]), 3, 2))
        assert point["delta_low"] <= reference <= point["delta_high"]
        assert point["delta"] == pytest.approx(reference, rel=1e-14)
    with mpmath.workdps(30):
        assert points[0]["delta"] == pytest.approx(float(2 * mpmath.ncdf(mpmath.sqrt(2) / 6) - 1), rel=1e-14)
    assert points[2]["delta_high"] == result.details["delta_interval"][1]  # eps = 1 is the claim's
    assert points[0]["delta"] > points[1]["delta"] > points[2]["delta"] > points[3]["delta"] > 0
