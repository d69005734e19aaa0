"""Tests of dpverify.mechanisms.exponential (Li–Wang–Ye 2025 Lemma 11, C1)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import sympy
from hypothesis import example, given, settings
from hypothesis import strategies as st

import dpverify
from dpverify.errors import InvalidArgument
from dpverify.finite.records import labeled_records
from dpverify.mechanisms.exponential import (
    exponential_mechanism,
    exponential_mechanism_over,
    exponential_mechanism_without_half,
    threshold_learner,
)

THREE = {"a": 0, "b": 1, "c": 2}
# e^{-1/2} = 0.6065306597126334, e^{-1} = 0.36787944117144233,
# Z = 1 + 0.6065306597126334 + 0.36787944117144233 = 1.9744101008840757.
EXPECTED_THREE = {
    "a": 0.5064803910556540,  # 1 / 1.9744101008840757
    "b": 0.3071958857184984,  # 0.6065306597126334 / 1.9744101008840757
    "c": 0.1863237232258476,  # 0.36787944117144233 / 1.9744101008840757
}


def test_three_candidates_float_values():
    result = exponential_mechanism(THREE, epsilon=1, sensitivity=1)
    assert set(result) == {"a", "b", "c"}
    for candidate, expected in EXPECTED_THREE.items():
        assert result[candidate] == pytest.approx(expected, rel=1e-14, abs=0)


def test_three_candidates_exact_values():
    result = exponential_mechanism(THREE, epsilon=1, sensitivity=1, exact=True)
    half = sympy.Rational(1, 2)
    normaliser = 1 + sympy.exp(-half) + sympy.exp(-1)
    expected = {"a": 1 / normaliser, "b": sympy.exp(-half) / normaliser, "c": sympy.exp(-1) / normaliser}
    for candidate, value in expected.items():
        assert isinstance(result[candidate], sympy.Basic)
        assert sympy.simplify(result[candidate] - value) == 0
    # P(b) / P(a) = e^{-1 * 1 / (2 * 1)} = e^{-1/2}, exactly.
    assert sympy.simplify(result["b"] / result["a"] - sympy.exp(-half)) == 0


def test_exact_sums_to_exactly_one_and_matches_float():
    exact = exponential_mechanism(THREE, epsilon=1, sensitivity=1, exact=True)
    floating = exponential_mechanism(THREE, epsilon=1, sensitivity=1)
    assert sympy.together(sympy.Add(*exact.values())) == 1
    for candidate in THREE:
        assert abs(float(exact[candidate]) - floating[candidate]) <= 1e-12


@settings(max_examples=40, deadline=None)
@given(
    scores=st.dictionaries(
        st.integers(0, 5), st.fractions(min_value=0, max_value=4, max_denominator=5),
        min_size=1, max_size=4,
    ),
    epsilon=st.fractions(min_value=0, max_value=3, max_denominator=4),
    sensitivity=st.fractions(min_value=Fraction(1, 4), max_value=2, max_denominator=4),
)
@example(scores={0: Fraction(1, 1), 1: Fraction(1, 3), 2: Fraction(7, 3)}, epsilon=Fraction(1, 1),
         sensitivity=Fraction(7, 4))  # found by a run: together() did not reduce the total to 1
def test_exact_and_float_agree(scores, epsilon, sensitivity):
    exact = exponential_mechanism(scores, epsilon=epsilon, sensitivity=sensitivity, exact=True)
    floating = exponential_mechanism(scores, epsilon=epsilon, sensitivity=sensitivity)
    assert exact.support == floating.support == set(scores)
    # The total is exactly 1: numerator - denominator of the sum over one denominator expands to 0
    # (together() alone can leave (1 + e^(8/21) + e^(4/7)) e^(8/21) / (e^(8/21) + e^(16/21) + e^(20/21))).
    numerator, denominator = sympy.fraction(sympy.together(sympy.Add(*exact.values())))
    assert sympy.expand(numerator - denominator) == 0
    for candidate in scores:
        assert abs(float(exact[candidate]) - floating[candidate]) <= 1e-12


def test_exact_mode_reads_float_inputs_as_rationals():
    # 0.1 and 0.3 become the exact 1/10 and 3/10 (dpverify.validation.exact_number): no float in the result.
    result = exponential_mechanism({"a": 0.1, "b": 0.3}, epsilon=0.5, sensitivity=1.0, exact=True)
    assert result.is_exact
    # P(a) = 1 / (1 + e^{-0.5 * 0.2 / 2}) = 1 / (1 + e^{-0.05}) = 0.5124979...
    assert float(result["a"]) == pytest.approx(1 / (1 + math.exp(-0.05)), rel=1e-12)


def test_float_mode_is_shift_stable():
    # Scores 10000, 10001 must behave like 0, 1 (the minimum is subtracted: no 0/0 underflow).
    shifted = exponential_mechanism({"a": 10_000, "b": 10_001}, epsilon=1, sensitivity=1)
    plain = exponential_mechanism({"a": 0, "b": 1}, epsilon=1, sensitivity=1)
    # P(a) = 1 / (1 + e^{-1/2}) = 1 / 1.6065306597126334 = 0.6224593312018546
    assert shifted["a"] == pytest.approx(0.6224593312018546, rel=1e-14)
    assert shifted["b"] == pytest.approx(plain["b"], rel=1e-14)


def test_epsilon_zero_is_uniform_exactly():
    result = exponential_mechanism(THREE, epsilon=0, sensitivity=1, exact=True)
    assert all(result[h] == sympy.Rational(1, 3) for h in THREE)


def test_mutant_drops_the_half():
    # Without the 2: P(b) / P(a) = e^{-1 * 1 / 1} = e^{-1} instead of e^{-1/2}.
    mutant = exponential_mechanism_without_half({"a": 0, "b": 1}, epsilon=1, sensitivity=1)
    assert mutant["b"] / mutant["a"] == pytest.approx(math.exp(-1), rel=1e-14)
    exact = exponential_mechanism_without_half(
        {"a": 0, "b": 1}, epsilon=1, sensitivity=1, exact=True
    )
    assert sympy.simplify(exact["b"] / exact["a"] - sympy.exp(-1)) == 0


def test_factory_calls_score_on_the_dataset():
    # Dataset (0,0), (1,1), (2,1) on thresholds u = 0..3: mistakes 1, 0, 1, 2
    # (c_0 mislabels (0,0); c_2 mislabels (1,1); c_3 mislabels (1,1) and (2,1)).
    learner = threshold_learner(3, epsilon=1, exact=True)
    result = learner(((0, 0), (1, 1), (2, 1)))
    half = sympy.Rational(1, 2)
    normaliser = 2 * sympy.exp(-half) + 1 + sympy.exp(-1)
    assert sympy.simplify(result[1] - 1 / normaliser) == 0
    assert sympy.simplify(result[0] - sympy.exp(-half) / normaliser) == 0
    assert sympy.simplify(result[3] - sympy.exp(-1) / normaliser) == 0


def test_exchangeable_declared_only_on_request():
    def score(dataset, h):
        return sum(1 for record in dataset if record != h)

    plain = exponential_mechanism_over((0, 1), score, epsilon=1, sensitivity=1)
    declared = exponential_mechanism_over((0, 1), score, epsilon=1, sensitivity=1, exchangeable=True)
    assert not getattr(plain, "exchangeable", False)
    assert declared.exchangeable is True
    assert threshold_learner(3, epsilon=1).exchangeable is True


def test_threshold_learner_is_epsilon_private():
    result = dpverify.verify(threshold_learner(3, epsilon=1), records=labeled_records(3), n=3, epsilon=1)
    assert result.holds
    assert result.witness is None
    assert result.epsilon <= 1


def test_mutant_threshold_learner_is_caught():
    mutant = threshold_learner(3, epsilon=1, selector=exponential_mechanism_without_half)
    result = dpverify.verify(mutant, records=labeled_records(3), n=3, epsilon=1)
    assert result.holds is False
    assert result.witness is not None
    assert result.epsilon > 1


@pytest.mark.parametrize("sensitivity", [0, -1, Fraction(-1, 2), math.nan, math.inf, "1", True, None])
def test_invalid_sensitivity(sensitivity):
    with pytest.raises(InvalidArgument, match="sensitivity"):
        exponential_mechanism(THREE, epsilon=1, sensitivity=sensitivity)
    with pytest.raises(InvalidArgument, match="sensitivity"):
        exponential_mechanism_over(("a",), lambda d, h: 0, epsilon=1, sensitivity=sensitivity)


def test_invalid_arguments():
    with pytest.raises(InvalidArgument, match="epsilon"):
        exponential_mechanism(THREE, epsilon=-1, sensitivity=1)
    with pytest.raises(InvalidArgument, match="at least one candidate"):
        exponential_mechanism({}, epsilon=1, sensitivity=1)
    with pytest.raises(InvalidArgument, match="scores"):
        exponential_mechanism({"a": math.nan}, epsilon=1, sensitivity=1)
    with pytest.raises(InvalidArgument, match="candidates"):
        exponential_mechanism_over((), lambda d, h: 0, epsilon=1, sensitivity=1)
    with pytest.raises(InvalidArgument, match="sensitivity=0"):
        exponential_mechanism(THREE, epsilon=1, sensitivity=0)
