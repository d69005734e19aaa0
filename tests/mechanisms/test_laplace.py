"""Tests of dpverify.mechanisms.laplace: exact Laplace comparisons (Li–Wang–Ye 2024 App. C, Alg. 1).

References: sympy's own integration of the Laplace densities (exact), a numpy Riemann sum on a
wide grid (floats), and hand-derived values. Notation: ``Lap(b)`` has density
``exp(-|x|/b) / (2b)``; ``P(Lap(b) - Lap(b) > d) = exp(-d/b) (1 + d/(2b)) / 2`` for ``d >= 0``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import Rational as R
from sympy import exp, oo

from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.mechanisms.laplace import (
    argmin_distribution,
    laplace_cdf,
    laplace_tail,
    prob_first_is_smallest,
    prob_noisy_at_most,
    prob_noisy_below,
    prob_noisy_clears,
)

X = sympy.Symbol("x", real=True)
Y = sympy.Symbol("y", real=True)


def _identical(p, q) -> bool:
    """Exact equality of sums of rational multiples of exp(rational) (unique canonical form)."""
    return sympy.expand(p - q) == 0


# -- sympy's exact integration as the reference -----------------------------------------------------


def _density(z, b):
    return sympy.Piecewise((exp(z / b) / (2 * b), z < 0), (exp(-z / b) / (2 * b), True))


def _sympy_tail(z, b):
    return sympy.Piecewise((1 - exp(z / b) / 2, z < 0), (exp(-z / b) / 2, True))


def _sympy_below(a, c, b1, b2):
    """P(a + L1 < c + L2) = int f1(x) int_{y > x + a - c} f2(y) dy dx, integrated by sympy."""
    inner = sympy.integrate(_density(Y, b2), (Y, X + a - c, oo))
    return sympy.integrate(_density(X, b1) * inner, (X, -oo, oo))


def _sympy_first_is_smallest(values, scales):
    integrand = _density(X, scales[0]) * sympy.Mul(
        *[_sympy_tail(X + values[0] - v, b) for v, b in zip(values[1:], scales[1:])]
    )
    return sympy.integrate(integrand, (X, -oo, oo))


# -- numpy discretisation as the float reference ----------------------------------------------------


def _np_tail(z, b):
    return np.where(z >= 0, 0.5 * np.exp(-np.abs(z) / b), 1 - 0.5 * np.exp(-np.abs(z) / b))


def _riemann_first_is_smallest(values, scales, points=400_001):
    """Midpoint rule for int f0(x) prod_i P(Lap(b_i) > x + v0 - v_i) dx on a wide grid."""
    width = 40 * max(scales) + 2 * max(abs(v - values[0]) for v in values)
    edges = np.linspace(-width, width, points)
    x = (edges[1:] + edges[:-1]) / 2
    integrand = np.exp(-np.abs(x) / scales[0]) / (2 * scales[0])
    for v, b in zip(values[1:], scales[1:]):
        integrand = integrand * _np_tail(x + values[0] - v, b)
    return float(np.sum(integrand) * (edges[1] - edges[0]))


floats_values = st.floats(min_value=-5, max_value=5, allow_nan=False)
floats_scales = st.floats(min_value=0.1, max_value=5)


# -- one noisy value --------------------------------------------------------------------------------


def test_tail_and_cdf_hand_values():
    assert laplace_tail(0, 3, exact=True) == R(1, 2)
    assert _identical(laplace_tail(1, 2, exact=True), exp(R(-1, 2)) / 2)  # t >= 0: e^{-t/b}/2
    assert _identical(laplace_tail(-1, 2, exact=True), 1 - exp(R(-1, 2)) / 2)  # t < 0
    assert _identical(laplace_cdf(-1, 2, exact=True), exp(R(-1, 2)) / 2)
    assert laplace_tail(1, 2) == pytest.approx(0.5 * math.exp(-0.5), rel=1e-15)  # 0.30326532985...
    assert laplace_cdf(1, 2) == pytest.approx(1 - 0.5 * math.exp(-0.5), rel=1e-15)


@pytest.mark.parametrize("t, b", [(0, 1), (R(3, 2), 2), (-2, R(1, 3)), (Fraction(-1, 4), 5)])
def test_tail_matches_sympy_integral_and_cdf_complements(t, b):
    reference = sympy.integrate(_density(X, sympy.nsimplify(b)), (X, sympy.nsimplify(t), oo))
    assert _identical(laplace_tail(t, b, exact=True), reference)
    assert _identical(laplace_tail(t, b, exact=True) + laplace_cdf(t, b, exact=True), 1)


def test_noisy_clears_and_at_most():
    # P(2 + Lap(1) > 3) = P(Lap(1) > 1) = e^{-1}/2; "at most" is the complement (ties have mass 0).
    assert _identical(prob_noisy_clears(2, 3, scale=1, exact=True), exp(-1) / 2)
    assert _identical(prob_noisy_at_most(2, 3, scale=1, exact=True), 1 - exp(-1) / 2)
    assert prob_noisy_clears(0.25, 0.75, scale=0.5) == pytest.approx(0.5 * math.exp(-1), rel=1e-15)


def test_float_inputs_in_exact_mode_are_read_as_binary_rationals():
    assert _identical(laplace_tail(0.5, 0.25, exact=True), exp(-2) / 2)
    assert laplace_tail(0.1, 1, exact=True).free_symbols == set()


# -- two noisy values -------------------------------------------------------------------------------

TWO_VALUE_CASES = [
    (0, 1, 1, 1),  # b1 = b2: 1 - e^{-1}(1 + 1/2)/2 = 1 - 3e^{-1}/4
    (R(1, 3), 2, 2, 2),  # b1 = b2, rational gap
    (0, 1, 1, 2),  # b1 != b2
    (1, 0, R(1, 2), 3),  # b1 != b2, d < 0
    (0, 0, 1, 3),  # d = 0: exactly 1/2 by symmetry
]


@pytest.mark.parametrize("a, c, b1, b2", TWO_VALUE_CASES)
def test_noisy_below_matches_sympy_integration(a, c, b1, b2):
    mine = prob_noisy_below(a, c, scale_a=b1, scale_b=b2, exact=True)
    assert _identical(mine, _sympy_below(a, c, b1, b2))
    assert float(mine) == pytest.approx(prob_noisy_below(a, c, scale_a=b1, scale_b=b2), rel=1e-14)


def test_noisy_below_hand_values():
    assert _identical(prob_noisy_below(0, 1, scale_a=1, scale_b=1, exact=True), 1 - 3 * exp(-1) / 4)
    # b1 = 1, b2 = 2, d = 1: 1 - (e^{-1} - 4 e^{-1/2}) / (2 (1 - 4)) = 1 + e^{-1}/6 - 2e^{-1/2}/3
    expected = 1 + exp(-1) / 6 - 2 * exp(R(-1, 2)) / 3
    assert _identical(prob_noisy_below(0, 1, scale_a=1, scale_b=2, exact=True), expected)
    assert prob_noisy_below(3, 3, scale_a=0.7, scale_b=2.5) == 0.5


@pytest.mark.parametrize("gap", [2.0**-20, 2.0**-40, 2.0**-52])
def test_nearly_equal_scales_lose_no_accuracy(gap):
    # The unequal-scale formula cancels as b2 -> b1; the float path raises its precision to match.
    b2 = 1 + gap
    reference = prob_noisy_below(0, 1, scale_a=1, scale_b=Fraction(b2), exact=True)
    assert prob_noisy_below(0, 1, scale_a=1, scale_b=b2) == pytest.approx(
        float(sympy.N(reference, 40)), rel=1e-15
    )


@pytest.mark.parametrize("gap", [Fraction(1, 10**45), Fraction(1, 10**80)])
def test_scales_closer_than_the_working_precision_still_agree_with_the_equal_case(gap):
    # 50 digits alone would leave ~5 (or none): the precision is raised by log10(b / |b1 - b2|).
    equal = prob_noisy_below(0, 1, scale_a=1, scale_b=1)  # 1 - 3e^{-1}/4 = 0.72409041912...
    assert prob_noisy_below(0, 1, scale_a=1, scale_b=1 + gap) == pytest.approx(equal, rel=1e-15)


@settings(max_examples=25, deadline=None)
@given(floats_values, floats_values, floats_scales, floats_scales)
def test_noisy_below_matches_riemann_sum(a, c, b1, b2):
    assert prob_noisy_below(a, c, scale_a=b1, scale_b=b2) == pytest.approx(
        _riemann_first_is_smallest([a, c], [b1, b2]), abs=1e-4
    )


@settings(max_examples=50, deadline=None)
@given(floats_values, floats_values, floats_scales, floats_scales)
def test_noisy_below_symmetry(a, c, b1, b2):
    forward = prob_noisy_below(a, c, scale_a=b1, scale_b=b2)
    backward = prob_noisy_below(c, a, scale_a=b2, scale_b=b1)
    assert forward + backward == pytest.approx(1, abs=1e-15)


@pytest.mark.parametrize("a, c, b1, b2", TWO_VALUE_CASES)
def test_noisy_below_symmetry_exact(a, c, b1, b2):
    forward = prob_noisy_below(a, c, scale_a=b1, scale_b=b2, exact=True)
    backward = prob_noisy_below(c, a, scale_a=b2, scale_b=b1, exact=True)
    assert _identical(forward + backward, 1)


@settings(max_examples=50, deadline=None)
@given(floats_values, floats_values, floats_values, floats_scales, floats_scales)
def test_noisy_below_decreases_in_a(a1, a2, c, b1, b2):
    low, high = sorted([a1, a2])
    p_low = prob_noisy_below(low, c, scale_a=b1, scale_b=b2)
    p_high = prob_noisy_below(high, c, scale_a=b1, scale_b=b2)
    assert p_low >= p_high - 1e-15


# -- several noisy values ---------------------------------------------------------------------------

SEVERAL_CASES = [
    ((0, 1, R(1, 2)), (1, 1, 1)),
    ((R(1, 2), 0, 2), (1, 2, R(1, 2))),
    ((0, 0, 1, -1), (1, 1, 2, 2)),
]


@pytest.mark.parametrize("values, scales", SEVERAL_CASES)
def test_first_is_smallest_matches_sympy_integration(values, scales):
    mine = prob_first_is_smallest(list(values), scales=list(scales), exact=True)
    assert _identical(mine, _sympy_first_is_smallest(values, scales))
    assert float(mine) == pytest.approx(prob_first_is_smallest(list(values), scales=list(scales)), rel=1e-14)


@settings(max_examples=15, deadline=None)
@given(
    st.lists(floats_values, min_size=3, max_size=4).flatmap(
        lambda v: st.tuples(st.just(v), st.lists(floats_scales, min_size=len(v), max_size=len(v)))
    )
)
def test_first_is_smallest_matches_riemann_sum(values_and_scales):
    values, scales = values_and_scales
    assert prob_first_is_smallest(values, scales=scales) == pytest.approx(
        _riemann_first_is_smallest(values, scales), abs=1e-4
    )


@pytest.mark.parametrize("a, c, b1, b2", TWO_VALUE_CASES)
def test_argmin_of_two_is_noisy_below(a, c, b1, b2):
    distribution = argmin_distribution([a, c], scales=[b1, b2], exact=True)
    assert _identical(distribution[0], prob_noisy_below(a, c, scale_a=b1, scale_b=b2, exact=True))
    assert _identical(distribution[1], prob_noisy_below(c, a, scale_a=b2, scale_b=b1, exact=True))


@pytest.mark.parametrize("values, scales", SEVERAL_CASES)
def test_argmin_sums_to_exactly_one(values, scales):
    distribution = argmin_distribution(list(values), scales=list(scales), exact=True)
    assert isinstance(distribution, Distribution) and distribution.is_exact
    assert _identical(sum(distribution.values()), 1)
    assert _identical(distribution[0], prob_first_is_smallest(list(values), scales=list(scales), exact=True))


def test_argmin_of_equal_values_with_a_shared_scale_is_uniform():
    distribution = argmin_distribution([R(1, 2)] * 3, scales=R(3, 2), exact=True)
    assert all(_identical(distribution[i], R(1, 3)) for i in range(3))
    assert argmin_distribution([7], scales=1) == Distribution({0: 1})
    assert prob_first_is_smallest([7], scales=1) == 1.0


@settings(max_examples=25, deadline=None)
@given(
    st.lists(floats_values, min_size=2, max_size=6).flatmap(
        lambda v: st.tuples(st.just(v), st.lists(floats_scales, min_size=len(v), max_size=len(v)))
    )
)
def test_argmin_float_sums_to_one(values_and_scales):
    values, scales = values_and_scales
    distribution = argmin_distribution(values, scales=scales)
    assert math.fsum(distribution.values()) == pytest.approx(1, abs=1e-14)


def test_many_values_with_a_shared_scale_stay_fast_and_accurate():
    values = [i / 4 for i in range(25)]
    distribution = argmin_distribution(values, scales=0.5)
    assert math.fsum(distribution.values()) == pytest.approx(1, abs=1e-14)
    assert distribution[0] == max(distribution.values())


def test_irrational_sympy_inputs_stay_symbolic_and_agree_with_floats():
    # Lemma C.1's threshold has a sqrt(m) in it.
    threshold, scale = sympy.sqrt(2) / 4, sympy.sqrt(3)
    exact = prob_noisy_clears(R(1, 3), threshold, scale=scale, exact=True)
    assert exact.has(sympy.sqrt(3))
    assert float(sympy.N(exact, 30)) == pytest.approx(prob_noisy_clears(R(1, 3), threshold, scale=scale), rel=1e-15)
    mine = prob_first_is_smallest([sympy.sqrt(2), 1, 0], scales=[scale, 1, 1], exact=True)
    assert float(sympy.N(mine, 30)) == pytest.approx(
        prob_first_is_smallest([sympy.sqrt(2), 1, 0], scales=[scale, 1, 1]), rel=1e-14
    )


# -- the DP property of a noisy comparison ----------------------------------------------------------


def _at_most_e_eps_times(p, q, epsilon) -> bool:
    """p <= e^eps q, decided exactly: the difference is 0 in canonical form or provably positive."""
    difference = sympy.expand(exp(epsilon) * q - p)
    return difference == 0 or difference.is_positive is True


@pytest.mark.parametrize("epsilon", [R(1, 2), 1, 2])
@pytest.mark.parametrize("a, a_prime", [(0, 1), (R(1, 3), 0), (2, R(5, 2)), (0, 0)])
@pytest.mark.parametrize("threshold", [-3, R(1, 2), 4])
def test_threshold_test_is_epsilon_dp(epsilon, a, a_prime, threshold):
    # |a - a'| <= 1, scale 1/eps: P(a + Lap > t) <= e^eps P(a' + Lap > t), and the same for <=.
    b = 1 / sympy.sympify(epsilon)
    for prob in (prob_noisy_clears, prob_noisy_at_most):
        p = prob(a, threshold, scale=b, exact=True)
        q = prob(a_prime, threshold, scale=b, exact=True)
        assert _at_most_e_eps_times(p, q, epsilon) and _at_most_e_eps_times(q, p, epsilon)


@pytest.mark.parametrize("epsilon", [R(1, 2), 1, 2])
@pytest.mark.parametrize("threshold", [1, R(7, 2), 10])
def test_threshold_test_is_tight_in_the_tail(epsilon, threshold):
    # t >= a = a' + 1: P(a + Lap > t) = e^{-(t - a) eps}/2 = e^eps P(a' + Lap > t), with equality.
    b = 1 / sympy.sympify(epsilon)
    p = prob_noisy_clears(1, threshold, scale=b, exact=True)
    q = prob_noisy_clears(0, threshold, scale=b, exact=True)
    assert _identical(p, exp(epsilon) * q)


@pytest.mark.parametrize("epsilon", [R(1, 2), 1])
@pytest.mark.parametrize("c, b2", [(0, 1), (3, R(1, 2)), (-2, 4)])
def test_noisy_comparison_is_epsilon_dp_in_a(epsilon, c, b2):
    b1 = 1 / sympy.sympify(epsilon)
    for a, a_prime in [(0, 1), (R(1, 2), -R(1, 2)), (-3, -2)]:
        p = prob_noisy_below(a, c, scale_a=b1, scale_b=b2, exact=True)
        q = prob_noisy_below(a_prime, c, scale_a=b1, scale_b=b2, exact=True)
        assert _at_most_e_eps_times(p, q, epsilon) and _at_most_e_eps_times(q, p, epsilon)


def test_noisy_comparison_approaches_e_eps_in_the_tail():
    # b1 = 2 > b2 = 1: for d -> -inf, P ~ b1^2 e^{d/b1} / (2 (b1^2 - b2^2)), so the ratio -> e^{1/2}.
    p = prob_noisy_below(40, 0, scale_a=2, scale_b=1, exact=True)
    q = prob_noisy_below(41, 0, scale_a=2, scale_b=1, exact=True)
    ratio = sympy.N(p / q, 30)
    assert float(ratio) == pytest.approx(math.exp(0.5), rel=1e-8)
    assert _at_most_e_eps_times(p, q, R(1, 2))


def test_argmin_outcomes_are_k_epsilon_dp():
    # Every value moves by at most 1, each noised at scale 1/eps: post-processing of k eps-DP answers.
    epsilon = R(1, 2)
    before = argmin_distribution([0, 1, R(1, 2)], scales=1 / epsilon, exact=True)
    after = argmin_distribution([1, 0, -R(1, 2)], scales=1 / epsilon, exact=True)
    for i in range(3):
        assert _at_most_e_eps_times(before[i], after[i], 3 * epsilon)
        assert _at_most_e_eps_times(after[i], before[i], 3 * epsilon)
    # Only the first value moves: eps-DP for the event "the first is smallest".
    p = prob_first_is_smallest([0, 1, R(1, 2)], scales=1 / epsilon, exact=True)
    q = prob_first_is_smallest([1, 1, R(1, 2)], scales=1 / epsilon, exact=True)
    assert _at_most_e_eps_times(p, q, epsilon) and _at_most_e_eps_times(q, p, epsilon)


# -- bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [0, -1, 0.0, -2.5, float("nan"), float("inf"), sympy.oo, -sympy.sqrt(2)])
def test_bad_scale_is_rejected(scale):
    with pytest.raises(InvalidArgument, match=r"scale"):
        laplace_tail(1, scale)
    with pytest.raises(InvalidArgument, match=r"scale_b"):
        prob_noisy_below(0, 1, scale_a=1, scale_b=scale)
    with pytest.raises(InvalidArgument, match=r"scales\[1\]"):
        prob_first_is_smallest([0, 1], scales=[1, scale])


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -math.inf, sympy.nan, sympy.zoo])
def test_bad_value_is_rejected(value):
    with pytest.raises(InvalidArgument, match=r"threshold"):
        prob_noisy_clears(0, value, scale=1)
    with pytest.raises(InvalidArgument, match=r"values\[2\].*Drop \+inf"):
        argmin_distribution([0, 1, value], scales=1)
    with pytest.raises(InvalidArgument, match=r"a must be"):
        prob_noisy_below(value, 0, scale_a=1, scale_b=1)


def test_other_misuse_is_rejected():
    with pytest.raises(InvalidArgument, match="positive, got scale=0"):
        laplace_cdf(0, 0)
    with pytest.raises(InvalidArgument, match="substitute numbers"):
        laplace_tail(sympy.Symbol("t"), 1)
    with pytest.raises(InvalidArgument, match="real number"):
        laplace_tail("1", 1)
    with pytest.raises(InvalidArgument, match="real number"):
        laplace_tail(True, 1)
    with pytest.raises(InvalidArgument, match="finite real"):
        laplace_tail(sympy.I, 1)
    with pytest.raises(InvalidArgument, match="one entry per value"):
        prob_first_is_smallest([0, 1, 2], scales=[1, 1])
    with pytest.raises(InvalidArgument, match="non-empty sequence"):
        argmin_distribution([], scales=1)
    with pytest.raises(InvalidArgument, match="exact must be True or False"):
        laplace_tail(0, 1, exact="yes")


def test_float_path_raises_its_precision_when_the_error_bound_is_not_met(monkeypatch):
    # At 20 digits the certified bound (sum of |terms| * 10^(5 - dps)) misses 1e-30: retried at 40.
    import dpverify.mechanisms.laplace as laplace

    expected = prob_first_is_smallest([0, 1, R(1, 2)], scales=[1, 2, 3], exact=True)
    monkeypatch.setattr(laplace, "_DPS", 20)
    assert laplace.prob_first_is_smallest([0, 1, 0.5], scales=[1, 2, 3]) == pytest.approx(
        float(sympy.N(expected, 30)), rel=1e-15
    )
