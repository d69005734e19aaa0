"""Tests of dpverify.mechanisms.noisy_max and dpverify.densities.continuous: continuous outputs decided exactly.

Hand-derived values (b = the Laplace scale):
* noisy histogram, Lap(b), one bin moved by 1: the density ratio is e^{|x-a|/b - |x-a-1|/b} <= e^{1/b},
  attained on a half-line, so eps* = 1/b exactly: eps for Lap(1/eps), 1/eps for Lap(eps).
* noisy max value, Lap(2/eps), [1]*k against [2]*k: the second output is the first shifted by 1; as
  x -> -inf the density of the max behaves as k f(x - q) F(x - q)^{k-1} ~ e^{k (x - q)/b}, so the
  ratio tends to e^{k/b} = e^{k eps/2} (its supremum): 1.75 at eps = 0.7, k = 5.
* SVT Algorithm 3 (c = 1, rho ~ Lap(2/eps), nu ~ Lap(2/eps)), [0]*k against [1]*k, output ⊥^{k-1} then
  v: as v -> -inf the density is f_nu(v - q_k) int_{-inf}^{v-T} f_rho prod_{j<k} F_nu(T + r - q_j) dr
  and each of the k factors that involve a q carries e^{-q/b}: the ratio tends to e^{k/b} = e^{k eps/2}.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy

from dpverify import Verdict
from dpverify.checking.input_pairs import all_query_vectors, statdp_patterns, verify_pairs
from dpverify.checking.pair_cover import covering_pairs
from dpverify.densities.continuous import MixedOutput, pair_loss, sup_ratio
from dpverify.densities.piecewise import ExpSum, PiecewiseExp
from dpverify.errors import InvalidArgument
from dpverify.mechanisms.noise import Laplace
from dpverify.mechanisms.noisy_max import NoisyHistogram, NoisyMaxValue
from dpverify.mechanisms.sparse_vector import svt

EPS = Fraction(7, 10)


def test_histogram_is_exactly_tight():
    # Lap(1/eps): eps* = 1/b = eps exactly; the tie is proved exactly (HOLDS, not within rounding).
    result = verify_pairs(NoisyHistogram(EPS), pairs=statdp_patterns(5, differ="one"), epsilon=EPS)
    assert result.verdict is Verdict.HOLDS
    assert result.epsilon == 0.7
    low, high = result.epsilon_bounds
    assert low <= 0.7 <= high and high - low < 1e-12


@pytest.mark.parametrize("eps", [EPS, Fraction(1, 10)])
def test_histogram_wrong_scale(eps):
    # Lap(eps): eps* = 1/eps (1.428571... at 0.7, 10 at 0.1).
    result = verify_pairs(NoisyHistogram(eps, wrong_scale=True), pairs=statdp_patterns(5, differ="one"), epsilon=eps)
    assert result.verdict is Verdict.VIOLATED
    assert result.epsilon == pytest.approx(float(1 / eps), rel=1e-14)
    assert result.witness.excess > 0
    assert frozenset((result.witness.dataset, result.witness.neighbor)) in {frozenset(p) for p in statdp_patterns(5, differ="one")}


@pytest.mark.parametrize("eps", [EPS, Fraction(1, 10)])
def test_noisy_max_value_laplace_all_above(eps):
    # eps* = k eps / 2 on [1]*5 vs [2]*5 (module docstring): 1.75 at 0.7, 0.25 at 0.1.
    result = verify_pairs(NoisyMaxValue(eps), pairs=[((1,) * 5, (2,) * 5)], epsilon=eps)
    low, high = result.epsilon_bounds
    assert low == pytest.approx(5 * float(eps) / 2, rel=1e-12)
    assert low <= 5 * float(eps) / 2 * (1 + 1e-12) and high >= 5 * float(eps) / 2 * (1 - 1e-12)
    assert high - low < 1e-6
    assert result.verdict is Verdict.VIOLATED and result.witness.excess > 0


def test_noisy_max_value_exponential_is_infinite():
    # one-sided noise: max >= max_i q_i, so [1]*5 puts mass on [1, 2) where [2, 1, ...] has none... both
    # ways round an interval of positive probability under one input has zero under the other.
    result = verify_pairs(NoisyMaxValue(EPS, "exponential"), pairs=statdp_patterns(5), epsilon=EPS)
    assert result.verdict is Verdict.VIOLATED and result.epsilon == float("inf")
    assert float(result.witness.q) == 0.0 and float(result.witness.p) > 0


def test_svt3_tail_limit():
    # k eps / 2 with k = 4: 1.4 (module docstring).
    result = verify_pairs(svt(3, epsilon=EPS), pairs=[((0,) * 4, (1,) * 4)], epsilon=EPS)
    assert result.epsilon_bounds[0] == pytest.approx(1.4, rel=1e-12)
    assert result.epsilon_bounds[1] < 1.4 * (1 + 1e-6)
    assert result.verdict is Verdict.VIOLATED


def test_svt3_output_is_a_distribution_and_matches_quadrature():
    output = svt(3, epsilon=EPS).output_density((1, 0, 2))
    assert isinstance(output, MixedOutput) and output.total() == 1  # atoms + densities, exactly 1
    # the density of "⊥v" (first answer below, second released) at v = 1/2, by nested quadrature
    b = mpmath.mpf(20) / 7  # 2/eps for both noises (c = 1)

    def f(x):
        return mpmath.exp(-abs(x) / b) / (2 * b)

    def F(x):
        return mpmath.exp(x / b) / 2 if x < 0 else 1 - mpmath.exp(-x / b) / 2

    v, T, q = mpmath.mpf(1) / 2, 1, (1, 0, 2)
    with mpmath.workdps(30):
        inner, error = mpmath.quad(lambda r: f(r) * F(T + r - q[0]), [-mpmath.inf, -1, 0, v - T], error=True)
        assert error < 1e-15
        expected = f(v - q[1]) * inner
    assert output.densities["⊥v"].value(Fraction(1, 2)).to_float() == pytest.approx(float(expected), rel=1e-12)


def test_sup_ratio_interior_maximum_against_a_grid():
    # p = mixture of two Laplace bumps, q = one: an interior maximum of p/q; the certified enclosure
    # must contain the largest value on a fine float grid (a loose check of the bound).
    lap = Laplace(Fraction(1)).density()
    p = lap.shift(Fraction(-1)).scale(Fraction(1, 2)) + lap.shift(Fraction(1)).scale(Fraction(1, 2))
    q = lap.shift(Fraction(-1, 2))
    result = sup_ratio(p, q)
    xs = np.linspace(-30, 30, 600_001)

    def density(center, x):
        return np.exp(-np.abs(x - center)) / 2

    grid = ((density(1, xs) + density(-1, xs)) / 2 / density(0.5, xs)).max()
    assert result.low <= grid * (1 + 1e-12) and result.high >= grid * (1 - 1e-9)
    assert result.high - result.low < 1e-7 * result.high


def test_pair_loss_atom_only_in_one_output():
    first = MixedOutput({"a": ExpSum.constant(Fraction(1, 2))}, {"x": Laplace(Fraction(1)).density().scale(Fraction(1, 2))})
    second = MixedOutput({}, {"x": Laplace(Fraction(1)).density()})
    assert pair_loss(first, second).infinite


# -- (eps, delta) claims (dpverify.densities.hockey_stick) ------------------------------------------
#
# A Laplace count (one bin of the histogram, b = 1/eps = 10/7, Delta = 1) claimed at eps' = 7/20:
# delta(eps') = 1 - e^((eps' - Delta/b)/2) = 1 - e^(-7/40) = 0.1605429792..., attained by the set
# x < x* = (Delta - eps' b)/2 = 1/4: P = 1 - e^(-7/40)/2, Q = e^((1/4 - 1)/b)/2 = e^(-21/40)/2.

COUNT_PAIRS = [((0,), (1,)), ((1,), (2,))]
HALF = Fraction(7, 20)
COUNT_DELTA = 1 - mpmath.exp(-mpmath.mpf(7) / 40)


def _excess(witness) -> mpmath.mpf:
    """P(S) - e^eps Q(S) - delta of a witness, from its exact sympy masses at 50 digits."""
    with mpmath.workdps(50):
        p, q = mpmath.mpf(str(sympy.N(witness.p, 50))), mpmath.mpf(str(sympy.N(witness.q, 50)))
        eps, delta = (mpmath.mpf(Fraction(v).numerator) / Fraction(v).denominator for v in (witness.epsilon, witness.delta))
        return p - mpmath.exp(eps) * q - delta


def test_laplace_count_delta_claims_either_side_of_the_closed_form():
    holds = verify_pairs(NoisyHistogram(EPS), pairs=COUNT_PAIRS, epsilon=HALF, delta=Fraction(1606, 10000))
    assert holds.verdict is Verdict.HOLDS and holds.witness is None
    assert abs(holds.delta - float(COUNT_DELTA)) <= 1e-15
    low, high = holds.delta_bounds
    assert low <= COUNT_DELTA <= high
    assert holds.epsilon == 0.7  # eps* is still reported: Delta/b
    violated = verify_pairs(NoisyHistogram(EPS), pairs=COUNT_PAIRS, epsilon=HALF, delta=Fraction(1605, 10000))
    assert violated.verdict is Verdict.VIOLATED
    witness = violated.witness
    assert frozenset((witness.dataset, witness.neighbor)) in {frozenset(pair) for pair in COUNT_PAIRS}
    assert _excess(witness) > 0  # P(S) > e^eps' Q(S) + delta, exactly
    # the set is the closed form's half-line, its masses the closed forms (direction-free: mirror images)
    assert sympy.simplify(witness.p - (1 - sympy.exp(sympy.Rational(-7, 40)) / 2)) == 0
    assert sympy.simplify(witness.q - sympy.exp(sympy.Rational(-21, 40)) / 2) == 0


def test_half_scale_mutant_is_violated_on_the_claim_of_its_parent():
    # Lap(1/(2 eps)): Delta/b = 7/5, delta(7/20) = 1 - e^((7/20 - 7/5)/2) = 1 - e^(-21/40) = 0.4084 > 0.1606
    mutant = NoisyHistogram(EPS, scale_factor=Fraction(1, 2))
    result = verify_pairs(mutant, pairs=statdp_patterns(5, differ="one"), epsilon=HALF, delta=Fraction(1606, 10000))
    assert result.verdict is Verdict.VIOLATED
    assert abs(result.delta - float(1 - mpmath.exp(-mpmath.mpf(21) / 40))) <= 1e-12
    witness = result.witness
    assert frozenset((witness.dataset, witness.neighbor)) in {frozenset(p) for p in statdp_patterns(5, differ="one")}
    assert _excess(witness) > 0.24  # 0.4084 - 0.1606, less nothing: the set is the exact region
    assert witness.excess > 0.24


def test_delta_claim_inside_the_certified_bounds_is_undecided():
    # the float nearest the irrational delta lies within the bounds: neither proved nor refuted
    first = verify_pairs(NoisyHistogram(EPS), pairs=COUNT_PAIRS, epsilon=HALF, delta=Fraction(1606, 10000))
    claim = Fraction(first.delta)
    low, high = first.delta_bounds
    assert Fraction(low) <= claim < Fraction(high)
    result = verify_pairs(NoisyHistogram(EPS), pairs=COUNT_PAIRS, epsilon=HALF, delta=claim)
    assert result.verdict is Verdict.UNDECIDED and not result.holds and result.witness is None


def test_delta_is_exactly_zero_at_a_tie():
    # eps = Delta/b: p = e^eps q on a half-line, below it elsewhere: delta(eps) = 0 exactly, proved
    result = verify_pairs(NoisyHistogram(EPS), pairs=statdp_patterns(5, differ="one"), epsilon=EPS,
                          delta=Fraction(1, 10**30))
    assert result.verdict is Verdict.HOLDS and result.delta == 0.0 and result.delta_bounds == (0.0, 0.0)


def test_float_delta_claims_are_read_as_the_engine_reads_them():
    result = verify_pairs(NoisyHistogram(EPS), pairs=COUNT_PAIRS, epsilon=0.35, delta=0.1606)
    assert result.verdict is Verdict.HOLDS
    with pytest.raises(InvalidArgument, match="rational"):
        verify_pairs(NoisyHistogram(EPS), pairs=COUNT_PAIRS, epsilon=sympy.log(2), delta=0.1)


def test_pure_claims_report_delta_star_and_its_bounds():
    # noisy max value, [1]*5 against [2]*5 at eps = 7/10: delta* = 0.0510313462417883 (mpmath quadrature
    # in tests/dpverify/densities); the pure claim is violated, delta* reported beside eps*
    result = verify_pairs(NoisyMaxValue(EPS), pairs=statdp_patterns(5), epsilon=EPS)
    assert result.verdict is Verdict.VIOLATED
    assert abs(result.delta - 0.0510313462417883) <= 1e-12
    low, high = result.delta_bounds
    assert low <= result.delta <= high and high - low < 1e-15
    assert result.delta_pair in {((1,) * 5, (2,) * 5), ((0,) * 5, (1,) * 5)}  # one shift of the other: equal


def test_privacy_profile_of_the_laplace_count():
    grid = [EPS * i / 4 for i in range(9)]
    result = verify_pairs(NoisyHistogram(EPS), pairs=COUNT_PAIRS, epsilon=EPS, profile=grid)
    profile = result.details["privacy_profile"]
    assert [point["epsilon"] for point in profile] == [float(e) for e in grid]
    for point, eps in zip(profile, grid):
        expected = max(0.0, 1 - math.exp((float(eps) - 0.7) / 2))
        assert abs(point["delta"] - expected) <= 1e-12
        assert point["delta_low"] <= point["delta"] <= point["delta_high"]
        if eps >= EPS:
            assert point["delta_high"] == 0.0  # proved 0, not small
    # the same figures as separate claims at each eps
    for point, eps in zip(profile[:4], grid[:4]):
        assert verify_pairs(NoisyHistogram(EPS), pairs=COUNT_PAIRS, epsilon=eps).delta == point["delta"]


def test_privacy_profile_of_a_discrete_mechanism_is_the_engine_sweep():
    from dpverify.mechanisms.noisy_max import ReportNoisyMax

    grid = [Fraction(0), Fraction(7, 20), Fraction(7, 10)]
    result = verify_pairs(ReportNoisyMax(EPS), pairs=statdp_patterns(3), epsilon=EPS, profile=grid)
    profile = result.details["privacy_profile"]
    for point, eps in zip(profile, grid):
        assert point["delta"] == pytest.approx(verify_pairs(ReportNoisyMax(EPS), pairs=statdp_patterns(3), epsilon=eps).delta,
                                               abs=1e-15)
    assert profile[-1]["delta"] == 0.0 and profile[0]["delta"] > profile[1]["delta"] > 0


def test_delta_on_a_cover_equals_delta_on_every_pair():
    # noisy max value has one loss component per pair (its density): delta* over the cover is the whole set's
    mechanism = NoisyMaxValue(EPS)
    full = all_query_vectors(4, m=1)
    cover = covering_pairs(full, mechanism)
    assert len(cover) < len(full)
    on_cover = verify_pairs(mechanism, pairs=cover, epsilon=Fraction(7, 20), delta=Fraction(1, 10), cover="assume", seed=0)
    on_full = verify_pairs(mechanism, pairs=full, epsilon=Fraction(7, 20), delta=Fraction(1, 10))
    assert on_cover.delta == on_full.delta and on_cover.verdict is on_full.verdict is Verdict.HOLDS


def test_delta_on_a_cover_of_several_components_is_refused():
    # SVT Algorithm 3: an atom and one density per position, delta adds over them: a cover cannot stand for it
    mechanism = svt(3, epsilon=EPS)
    cover = covering_pairs(all_query_vectors(3, m=1), mechanism)
    with pytest.raises(InvalidArgument, match="at most one loss component"):
        verify_pairs(mechanism, pairs=cover, epsilon=EPS, delta=Fraction(1, 10), cover="assume", seed=0)
    pure = verify_pairs(mechanism, pairs=cover, epsilon=EPS, cover="assume", seed=0)
    assert math.isnan(pure.delta) and pure.details["delta"].startswith("not computed")
    assert pure.verdict is Verdict.VIOLATED  # the pure verdict does not need delta


def test_two_bins_moved_use_the_law_of_the_summed_loss():
    # both bins of a 2-bin histogram move by 1 (Delta/b = eps in each): delta(eps) = 1 - (1 + eps/4) e^(-eps/2)
    result = verify_pairs(NoisyHistogram(EPS), pairs=[((1, 1), (2, 2)), ((1, 1), (0, 0))], epsilon=EPS,
                          delta=Fraction(172, 1000))
    expected = 1 - (1 + 0.7 / 4) * math.exp(-0.35)
    assert result.verdict is Verdict.HOLDS and abs(result.delta - expected) <= 1e-12
    below = verify_pairs(NoisyHistogram(EPS), pairs=[((1, 1), (2, 2))], epsilon=EPS, delta=Fraction(171, 1000))
    assert below.verdict is Verdict.VIOLATED and _excess(below.witness) > 0
    assert "sum of ln(p_i(x_i)/q_i(x_i))" in next(iter(below.witness.output_set))


def test_unsupported_products_are_refused_for_delta_claims_only():
    from dpverify.densities.continuous import ProductOutput

    class TwoScales:
        """Two coordinates whose noise scale depends on the input: no rational loss law."""

        continuous_output = True

        def output_density(self, dataset):
            return ProductOutput(tuple(Laplace(Fraction(1 + v)).density() for v in dataset))

    pairs = [((0, 0), (1, 1))]
    with pytest.raises(InvalidArgument, match="log-linear with a rational loss"):
        verify_pairs(TwoScales(), pairs=pairs, epsilon=Fraction(1, 2), delta=Fraction(1, 10))
    pure = verify_pairs(TwoScales(), pairs=pairs, epsilon=Fraction(1, 2))
    assert math.isnan(pure.delta) and "log-linear" in pure.details["delta"]


def test_float_claim_is_read_up_to_its_rounding():
    # the float 0.7 against the exact Lap(1/eps) histogram at eps = 7/10: still exactly tight.
    result = verify_pairs(NoisyHistogram(EPS), pairs=[((1, 1), (0, 1))], epsilon=0.7)
    assert result.verdict is Verdict.HOLDS


def test_piecewise_constant_zero_density_region():
    assert PiecewiseExp.constant(0).pieces == [{}]


def test_holds_through_the_certified_bound_and_honest_at_an_unattained_tie():
    # Lap(10/eps) instead of Lap(2/eps): on [1]*5 vs [2]*5 the ratio tends to e^{k/b} = e^{5 eps/10}
    # = e^{eps/2} (0.35 at eps = 0.7), below the claim: HOLDS from the branch-and-bound enclosure.
    mechanism = NoisyMaxValue(EPS, scale_factor=10)
    result = verify_pairs(mechanism, pairs=statdp_patterns(5), epsilon=EPS)
    assert result.verdict is Verdict.HOLDS
    assert result.epsilon_bounds[0] == pytest.approx(0.35, rel=1e-12) and result.epsilon_bounds[1] < 0.35 + 1e-5
    # claimed exactly at the limit 0.35, which is approached but not attained: the enclosure cannot
    # separate them and the verdict says so (never HOLDS without proof).
    tie = verify_pairs(mechanism, pairs=[((1,) * 5, (2,) * 5)], epsilon=Fraction(35, 100))
    assert tie.verdict is Verdict.UNDECIDED and not tie.holds
