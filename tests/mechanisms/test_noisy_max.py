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

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from dpverify import Verdict
from dpverify.checking.input_pairs import statdp_patterns, verify_pairs
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


def test_continuous_claims_are_pure_only():
    with pytest.raises(InvalidArgument, match="pure"):
        verify_pairs(NoisyHistogram(EPS), pairs=[((1,), (0,))], epsilon=EPS, delta=0.01)


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
