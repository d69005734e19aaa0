"""Privacy loss: pure eps*, hockey-stick delta(eps), the privacy profile, dp_accounting export."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.verdict.privacy_loss import (
    PrivacyProfile,
    additive_stability,
    check_delta,
    check_epsilon,
    delta_for_epsilon,
    directed_epsilon_star,
    epsilon_star,
    hockey_stick,
    optimal_output_set,
    to_dp_accounting_pmfs,
)

# Randomized response: P = M(0), Q = M(1).
P = {0: Fraction(3, 4), 1: Fraction(1, 4)}
Q = {0: Fraction(1, 4), 1: Fraction(3, 4)}
LN3 = math.log(3)


# -- randomized response, closed forms --------------------------------------------------------------


def test_rr_epsilon_star_is_ln3():
    # max(ln((3/4)/(1/4)), ln((1/4)/(3/4))) = ln 3
    assert directed_epsilon_star(P, Q) == pytest.approx(LN3, abs=1e-15)
    assert directed_epsilon_star(Q, P) == pytest.approx(LN3, abs=1e-15)
    assert epsilon_star(P, Q) == pytest.approx(LN3, abs=1e-15)


def test_rr_hockey_stick():
    # eps = 0: (3/4 - 1/4) + max(0, 1/4 - 3/4) = 1/2
    assert hockey_stick(P, Q, 0) == 0.5
    # eps = 1: 3/4 - e * 1/4 = 0.75 - 0.67957... = 0.0704295...
    assert hockey_stick(P, Q, 1.0) == pytest.approx(0.75 - math.e / 4, abs=1e-15)
    assert hockey_stick(P, Q, 1.0) == pytest.approx(0.07042954, abs=1e-8)
    assert abs(hockey_stick(P, Q, LN3)) <= 1e-15  # 3/4 - 3 * 1/4 = 0
    assert delta_for_epsilon(P, Q, 1.0) == hockey_stick(Q, P, 1.0) == hockey_stick(P, Q, 1.0)
    assert optimal_output_set(P, Q, 0.0) == frozenset({0})  # only 3/4 > 1/4
    assert optimal_output_set(P, Q, LN3 + 1e-9) == frozenset()
    assert additive_stability(P, Q) == 0.5  # |3/4 - 1/4|


def test_infinite_loss_when_p_positive_and_q_zero():
    half = {0: 0.5, 1: 0.5}
    point = {0: 1.0}
    assert directed_epsilon_star(half, point) == math.inf  # P(1) = 1/2 > 0 = Q(1)
    assert directed_epsilon_star(point, half) == pytest.approx(math.log(2))  # 1 / (1/2)
    assert epsilon_star(half, point) == math.inf
    # The mass at +inf never goes away: delta(eps) >= P(1) = 1/2 for every eps.
    assert hockey_stick(half, point, 50.0) == 0.5
    assert hockey_stick(half, point, 1000.0) == 0.5  # e^1000 overflows float64: still 1/2
    assert optimal_output_set(half, point, 1000.0) == frozenset({1})
    profile = PrivacyProfile.from_distributions(half, point)
    assert profile.infinity_mass == 0.5
    assert profile.delta_for_epsilon(1000.0) == 0.5


def test_identical_distributions():
    assert epsilon_star(P, P) == 0.0
    assert hockey_stick(P, P, 0.0) == 0.0
    assert additive_stability(P, P) == 0.0


# -- privacy profile --------------------------------------------------------------------------------


def test_rr_profile_fields_and_values():
    profile = PrivacyProfile.from_distributions(P, Q)
    # losses ln(1/4 / 3/4) = -ln 3 (outcome 1) and ln 3 (outcome 0), increasing
    assert profile.losses == pytest.approx((-LN3, LN3), abs=1e-15)
    assert profile.p_masses == (0.25, 0.75)
    assert profile.q_masses == (0.75, 0.25)
    assert profile.infinity_mass == 0.0
    assert profile.delta_for_epsilon(0) == 0.5  # 3/4 - 1/4
    assert profile.delta_for_epsilon(1) == pytest.approx(0.75 - math.e / 4, abs=1e-15)
    assert abs(profile.delta_for_epsilon(LN3)) <= 1e-12
    assert profile.epsilon_for_delta(0.75 - math.e / 4) == pytest.approx(1.0, abs=1e-12)
    assert profile.epsilon_for_delta(0.0) == pytest.approx(LN3, abs=1e-12)
    assert profile.epsilon_for_delta(0.5) == 0.0  # delta(0) = 1/2 already
    assert profile.epsilon_for_delta(1.0) == 0.0


def test_profile_with_infinite_mass():
    # Outcome 2 has P = 1/4 and Q = 0; outcome 0: loss 0; outcome 1: loss ln(1/4 / 1/2) = -ln 2.
    p = {0: 0.5, 1: 0.25, 2: 0.25}
    q = {0: 0.5, 1: 0.5}
    profile = PrivacyProfile.from_distributions(p, q)
    assert profile.infinity_mass == 0.25
    assert profile.losses == pytest.approx((-math.log(2), 0.0))
    assert profile.delta_for_epsilon(0) == 0.25  # 1/4 at +inf; 1/2 - 1/2 = 0
    assert profile.delta_for_epsilon(7) == 0.25
    assert profile.epsilon_for_delta(0.2) == math.inf  # below the mass at +inf
    assert profile.epsilon_for_delta(0.25) == 0.0


def _float_distribution(weights):
    total = sum(weights)
    return {i: w / total for i, w in enumerate(weights) if w > 0}


pair_weights = st.integers(1, 5).flatmap(
    lambda k: st.tuples(
        st.lists(st.integers(0, 9), min_size=k, max_size=k).filter(any),
        st.lists(st.integers(0, 9), min_size=k, max_size=k).filter(any),
    )
)


@settings(max_examples=100, deadline=None)
@given(pair_weights, st.lists(st.floats(0, 5), min_size=2, max_size=8))
def test_profile_is_non_increasing_and_matches_hockey_stick(weights, epsilons):
    p, q = _float_distribution(weights[0]), _float_distribution(weights[1])
    profile = PrivacyProfile.from_distributions(p, q)
    values = [profile.delta_for_epsilon(e) for e in sorted(epsilons)]
    assert all(a >= b for a, b in zip(values, values[1:]))
    for e in epsilons:
        assert profile.delta_for_epsilon(e) == pytest.approx(hockey_stick(p, q, e), abs=1e-12)
        assert 0.0 <= profile.delta_for_epsilon(e) <= 1.0 + 1e-12


@settings(max_examples=100, deadline=None)
@given(pair_weights, st.floats(0, 4))
def test_delta_vanishes_at_epsilon_star_and_epsilon_for_delta_inverts(weights, epsilon):
    p, q = _float_distribution(weights[0]), _float_distribution(weights[1])
    profile = PrivacyProfile.from_distributions(p, q)
    star = directed_epsilon_star(p, q)
    if star == math.inf:
        assert profile.infinity_mass > 0
        assert profile.epsilon_for_delta(profile.infinity_mass / 2) == math.inf
        return
    assert profile.infinity_mass == 0.0
    assert abs(profile.delta_for_epsilon(max(star, 0.0))) <= 1e-12
    delta = profile.delta_for_epsilon(epsilon)
    inverse = profile.epsilon_for_delta(delta)
    assert inverse <= epsilon + 1e-9  # epsilon itself achieves delta
    assert profile.delta_for_epsilon(inverse) <= delta + 1e-12
    assume(delta > 1e-6)
    # ... and nothing noticeably smaller does (delta is strictly decreasing where positive).
    assert inverse == 0.0 or profile.delta_for_epsilon(max(inverse - 1e-6, 0.0)) > delta


# -- dp_accounting export --------------------------------------------------------------------------

P3 = {"a": 0.5, "b": 0.3, "c": 0.2}
Q3 = {"a": 0.2, "b": 0.3, "c": 0.4, "d": 0.1}


def test_to_dp_accounting_pmfs_keys_and_values():
    pmfs = to_dp_accounting_pmfs({**P3, "z": 0.0}, Q3)
    assert set(pmfs) == {"log_probability_mass_function_upper", "log_probability_mass_function_lower"}
    upper = pmfs["log_probability_mass_function_upper"]
    lower = pmfs["log_probability_mass_function_lower"]
    assert set(upper) == {"a", "b", "c"}  # "z" has probability 0: left out
    assert set(lower) == {"a", "b", "c", "d"}
    assert upper["a"] == math.log(0.5) and upper["c"] == math.log(0.2)
    assert lower["d"] == math.log(0.1)
    # privacy loss ln(P/Q) recovered from the export: ln(0.5 / 0.2) = 0.916...
    assert upper["a"] - lower["a"] == pytest.approx(math.log(2.5))
    # Distribution objects with exact numbers export the same floats.
    exact = to_dp_accounting_pmfs(Distribution(P), Distribution(Q))
    assert exact["log_probability_mass_function_upper"] == {0: math.log(0.75), 1: math.log(0.25)}


def test_dp_accounting_pld_agrees():
    pld_module = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    for p, q in ((P3, Q3), (Q3, P3), (P, Q)):
        pld = pld_module.from_two_probability_mass_functions(**to_dp_accounting_pmfs(p, q))
        for epsilon in (0.0, 0.3, 0.5, 1.0, 2.0):
            ours = hockey_stick(p, q, epsilon)
            theirs = float(pld.get_delta_for_epsilon(epsilon))
            # dp_accounting's default estimate is pessimistic (losses rounded up by 1e-4).
            assert ours - 1e-12 <= theirs <= ours + 1e-3


# -- argument checks --------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [-1, -1e-12, float("nan"), float("inf"), "x", None])
def test_check_epsilon_rejects(bad):
    with pytest.raises(InvalidArgument, match="epsilon"):
        check_epsilon(bad)


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), float("inf"), "x", None])
def test_check_delta_rejects(bad):
    with pytest.raises(InvalidArgument, match="delta"):
        check_delta(bad)


def test_checks_accept_valid_values():
    for value in (0, 0.0, 1, Fraction(1, 2), 1000.0):
        check_epsilon(value)
    for value in (0, 1, 0.5, Fraction(1, 10**6)):
        check_delta(value)
    with pytest.raises(InvalidArgument):
        hockey_stick(P, Q, -1)
    with pytest.raises(InvalidArgument):
        PrivacyProfile.from_distributions(P, Q).epsilon_for_delta(2)
