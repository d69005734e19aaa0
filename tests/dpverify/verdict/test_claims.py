"""Claims as values (dpverify.verdict.claims): validated once, frozen, decided by the one engine; verify(claim=)
equals the keyword form; the number policy reads 0.1 as 1/10 everywhere."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import pytest
import sympy

import dpverify
from dpverify import ApproximateDp, PredictionDp, PureDp, Stability, Verdict, analyze, verify
from dpverify.checking.public_data import all_public_samples, verify_with_public_data
from dpverify.errors import InvalidArgument
from dpverify.integrations._cli_inputs import parse_number as _parse_number
from dpverify.mechanisms.exponential import _to_sympy
from dpverify.mechanisms.item_level import exact_epsilon
from dpverify.mechanisms.laplace import _exact_number
from dpverify.mechanisms.relabeling import exact_parameter
from dpverify.mechanisms.user_data import _positive_fraction
from dpverify.validation import FLOAT_CLAIM_ALLOWANCE, exact_number
from dpverify.verdict._certify import effective_claim
from dpverify.verdict.claims import Complement, Prediction

BITS = (0, 1)


def rr(dataset):
    """Randomized response with p = 3/4 on one bit: eps* = ln(3/4 / 1/4) = ln 3."""
    bit = dataset[0]
    return {bit: Fraction(3, 4), 1 - bit: Fraction(1, 4)}


def rr_float(dataset):
    bit = dataset[0]
    return {bit: 0.75, 1 - bit: 0.25}


def three_outcomes(dataset):
    # b = 0: (1/2, 1/4, 1/4), b = 1: (1/4, 1/4, 1/2): |P(o) - Q(o)| <= 1/4, attained at "a" and "c"
    if dataset[0] == 0:
        return {"a": Fraction(1, 2), "b": Fraction(1, 4), "c": Fraction(1, 4)}
    return {"a": Fraction(1, 4), "b": Fraction(1, 4), "c": Fraction(1, 2)}


def two_query_learner(dataset):
    """Predictors h = (h(0), h(1)) over X = {0, 1}: each label is the record's bit y with
    probability 3/4, independently. Per query the label is RR(3/4): eps* = ln 3; the predictor as a
    whole is two independent RRs: eps* = ln(9/16 / 1/16) = ln 9."""
    y = dataset[0]
    p = {y: Fraction(3, 4), 1 - y: Fraction(1, 4)}
    return {(a, b): p[a] * p[b] for a in BITS for b in BITS}


# -- construction -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build, pattern",
    [
        (lambda: PureDp(-1), "epsilon must be >= 0, got epsilon=-1"),
        (lambda: PureDp(math.inf), "epsilon must be finite"),
        (lambda: PureDp(None), "epsilon must be a number, got epsilon=None"),
        (lambda: PureDp(True), "got epsilon=True"),
        (lambda: ApproximateDp(1, 1.5), r"delta must be in \[0, 1\], got delta=1.5"),
        (lambda: ApproximateDp(-0.5, 0), "epsilon=-0.5"),
        (lambda: Stability(-0.1), r"gamma must be in \[0, 1\], got gamma=-0.1"),
        (lambda: Stability(Fraction(3, 2)), r"gamma=Fraction\(3, 2\)"),
        (lambda: PredictionDp(1, delta=2), "delta=2"),
        (lambda: PredictionDp(1, queries=[]), "at least one query"),
        (lambda: PredictionDp(1, queries="01"), "queries must be an iterable"),
        (lambda: PredictionDp(1, predict=3), "predict must be callable"),
    ],
)
def test_claims_are_validated_on_construction(build, pattern):
    with pytest.raises(InvalidArgument, match=pattern):
        build()


def test_claims_are_frozen_values():
    claim = ApproximateDp(1, Fraction(1, 10**6))
    with pytest.raises(dataclasses.FrozenInstanceError):
        claim.epsilon = 2  # type: ignore[misc]
    assert claim == ApproximateDp(1, Fraction(1, 10**6))
    assert hash(PureDp(1)) == hash(PureDp(1))
    assert PredictionDp(1, queries=range(2)).queries == (0, 1)  # stored as a tuple
    assert str(PureDp(Fraction(1, 3))) == "pure DP (eps=1/3)"
    assert str(ApproximateDp(1, 1e-06)) == "(eps=1, delta=1e-06)-DP"
    assert str(Stability(Fraction(1, 2))) == "uniform stability (gamma=1/2)"
    assert str(PredictionDp(1, queries=[0])) == "(eps=1, delta=0)-DP prediction on queries [0]"
    assert dpverify.PureDp is PureDp and "Stability" in dpverify.__all__


def test_a_claim_reads_an_expression_string_on_construction():
    assert PureDp("ln(3)").epsilon == sympy.log(3)  # the claim holds the number, not the text
    assert PureDp("ln(3)") == PureDp(sympy.log(3)) and str(PureDp("ln(3)")) == "pure DP (eps=log(3))"
    claim = ApproximateDp("1/3", "1e-5")
    assert claim.epsilon == Fraction(1, 3) and type(claim.epsilon) is Fraction  # exact
    assert claim.delta == 1e-5 and type(claim.delta) is float  # a decimal literal is the float it spells
    assert Stability("1/4").gamma == Fraction(1, 4) and Stability("1/4").claimed_delta == Fraction(1, 4)
    assert PredictionDp("ln(2)", "0").epsilon == sympy.log(2)
    with pytest.raises(InvalidArgument, match=r"epsilon must be a number or an expression such as .*got epsilon='ln\(e\)'"):
        PureDp("ln(e)")  # e is no name the reader knows (E is)
    with pytest.raises(InvalidArgument, match=r"delta must be in \[0, 1\], got delta=Fraction\(2, 1\)"):
        ApproximateDp(1, "4/2")  # read, then checked as every delta is
    with pytest.raises(InvalidArgument, match=r"gamma must be a real number or expression like log\(3\), got gamma='sqrt\(-1\)'"):
        Stability("sqrt(-1)")


@pytest.mark.parametrize(
    "text, number, holds",
    [
        ("ln(3)", sympy.log(3), True),  # eps* = ln 3 exactly: a proved tie
        ("log(3) - 1/10**9", sympy.log(3) - sympy.Rational(1, 10**9), False),
        ("1.0986122886681098", math.log(3), True),  # the float math.log(3), with a float claim's allowance
    ],
)
def test_verify_reads_an_expression_string_as_the_number_it_spells(text, number, holds):
    by_text = verify(rr, records=BITS, n=1, epsilon=text)
    _same(by_text, verify(rr, records=BITS, n=1, epsilon=number))
    assert by_text.claim == PureDp(number)
    assert by_text.holds is holds


def test_claim_and_keywords_together_is_misuse():
    with pytest.raises(InvalidArgument, match=r"pass the claim once.*drop epsilon=1"):
        verify(rr, records=BITS, n=1, epsilon=1, claim=PureDp(1))
    with pytest.raises(InvalidArgument, match="claim must be a PureDp"):
        verify(rr, records=BITS, n=1, claim=1.0)
    with pytest.raises(InvalidArgument, match="no claim to check"):
        verify(rr, records=BITS, n=1)
    with pytest.raises(InvalidArgument, match="needs an epsilon"):
        verify(rr, records=BITS, n=1, delta=0.1)
    with pytest.raises(InvalidArgument, match="pass the claim once"):
        verify_with_public_data(
            lambda public, d: rr(d), public_samples=[(0,)], records=BITS, n=1, delta=0, claim=PureDp(2)
        )


# -- verify(claim=) equals the keyword form -----------------------------------------------------------


def _same(a, b):
    assert (a.verdict, a.holds, a.epsilon, a.delta, a.pairs, a.certified_pairs) == (
        b.verdict, b.holds, b.epsilon, b.delta, b.pairs, b.certified_pairs
    )
    assert (a.witness is None) == (b.witness is None)
    if a.witness is not None:
        assert (a.witness.output_set, a.witness.p, a.witness.q) == (b.witness.output_set, b.witness.p, b.witness.q)


@pytest.mark.parametrize("epsilon", [sympy.log(3), math.log(3), 1, Fraction(11, 10)])
def test_pure_claim_equals_the_keyword_form_on_randomized_response(epsilon):
    by_claim = verify(rr, records=BITS, n=1, claim=PureDp(epsilon))
    by_keyword = verify(rr, records=BITS, n=1, epsilon=epsilon)
    _same(by_claim, by_keyword)
    assert by_claim.claim == by_keyword.claim == PureDp(epsilon)
    assert by_claim.epsilon == pytest.approx(math.log(3), rel=1e-15)  # eps* = ln 3
    assert by_claim.holds == (epsilon != 1)  # ln 3 = 1.0986... > 1, < 11/10


def test_approximate_claim_equals_the_keyword_form():
    # delta(1) of RR(3/4) = 3/4 - e * 1/4 = 0.0704295...; exactly at it the claim holds (a proved tie)
    tight = sympy.Rational(3, 4) - sympy.E / 4
    for delta, holds in ((tight, True), (tight - sympy.Rational(1, 10**9), False)):
        by_claim = verify(rr, records=BITS, n=1, claim=ApproximateDp(1, delta))
        _same(by_claim, verify(rr, records=BITS, n=1, epsilon=1, delta=delta))
        assert by_claim.holds is holds
        assert by_claim.delta == pytest.approx(0.75 - math.e / 4, rel=1e-14)


def test_a_float_claim_at_math_log_3_passes_and_just_below_is_violated_with_a_witness():
    # RR with p = 3/4 in exact Fractions has eps* = ln 3 exactly; math.log(3) (a float, not ln 3)
    # stands for ln 3 up to its rounding, math.log(3) - 1e-9 does not.
    at = verify(rr, records=BITS, n=1, claim=PureDp(math.log(3)))
    assert at.verdict is Verdict.HOLDS
    below = verify(rr, records=BITS, n=1, claim=PureDp(math.log(3) - 1e-9))
    assert below.verdict is Verdict.VIOLATED
    w = below.witness
    assert (w.p, w.q) == (Fraction(3, 4), Fraction(1, 4))
    assert w.excess == pytest.approx(0.25 * 3 * 1e-9, rel=1e-3)  # 3/4 - e^(ln 3 - 1e-9) / 4 ~ 3/4 * 1e-9


def test_public_data_claim_equals_the_keyword_form():
    def mechanism(public, dataset):
        return rr(dataset)

    samples = all_public_samples(range(2), 1)
    by_claim = verify_with_public_data(mechanism, public_samples=samples, records=BITS, n=1, claim=PureDp(1))
    by_keyword = verify_with_public_data(mechanism, public_samples=samples, records=BITS, n=1, epsilon=1)
    assert (by_claim.verdict, by_claim.epsilon, by_claim.delta) == (by_keyword.verdict, by_keyword.epsilon, by_keyword.delta)
    assert by_claim.verdict is Verdict.VIOLATED and by_claim.claim == PureDp(1)
    gamma = verify_with_public_data(mechanism, public_samples=samples, records=BITS, n=1, claim=Stability(Fraction(1, 2)))
    assert gamma.holds and gamma.delta == 0.5 and "uniform stability (gamma=1/2)" in gamma.summary()


# -- Stability ----------------------------------------------------------------------------------------


def test_stability_of_randomized_response_is_one_half():
    # |P(0) - Q(0)| = |3/4 - 1/4| = 1/2 on the only pair
    holds = verify(rr, records=BITS, n=1, claim=Stability(Fraction(1, 2)))
    assert holds.verdict is Verdict.HOLDS  # an exact tie, proved
    assert holds.delta == 0.5 == analyze(rr, records=BITS, n=1).stability()
    assert (holds.claimed_epsilon, holds.claimed_delta) == (0, Fraction(1, 2))
    assert "measured gamma*=0.5" in holds.summary()
    violated = verify(rr, records=BITS, n=1, claim=Stability(Fraction(1, 2) - Fraction(1, 10**9)))
    assert violated.verdict is Verdict.VIOLATED
    w = violated.witness
    assert {w.dataset, w.neighbor} == {(0,), (1,)}
    assert (w.p, w.q) == (Fraction(3, 4), Fraction(1, 4))
    assert w.output_set in ({0}, {1}, {Complement(0)}, {Complement(1)})


def test_stability_over_three_outcomes_and_their_complements():
    # max over o of |P(o) - Q(o)| = |1/2 - 1/4| = 1/4; the complement {not a}: |1/2 - 3/4| = 1/4 too
    assert verify(three_outcomes, records=BITS, n=1, claim=Stability(Fraction(1, 4))).verdict is Verdict.HOLDS
    violated = verify(three_outcomes, records=BITS, n=1, claim=Stability(Fraction(1, 5)))
    assert violated.verdict is Verdict.VIOLATED and violated.delta == 0.25
    assert violated.witness.p - violated.witness.q == Fraction(1, 4)


def test_stability_of_float_probabilities_allows_their_rounding():
    result = verify(rr_float, records=BITS, n=1, claim=Stability(0.5))
    assert result.holds and result.verdict in (Verdict.HOLDS, Verdict.HOLDS_WITHIN_ROUNDING)
    assert not verify(rr_float, records=BITS, n=1, claim=Stability(0.4999)).holds


# -- PredictionDp -------------------------------------------------------------------------------------


def test_prediction_dp_is_per_query():
    records = BITS
    per_query = verify(two_query_learner, records=records, n=1, claim=PredictionDp(sympy.log(3)))
    assert per_query.verdict is Verdict.HOLDS
    assert per_query.epsilon == pytest.approx(math.log(3), rel=1e-15)  # per query: RR(3/4)
    # the predictor as a whole is not ln 3-DP (two independent bits: ln 9)
    whole = verify(two_query_learner, records=records, n=1, claim=PureDp(sympy.log(3)))
    assert whole.verdict is Verdict.VIOLATED and whole.epsilon == pytest.approx(math.log(9), rel=1e-15)
    below = verify(two_query_learner, records=records, n=1, claim=PredictionDp(math.log(3) - 1e-9))
    assert below.verdict is Verdict.VIOLATED
    (event,) = below.witness.output_set
    assert isinstance(event, Prediction) and event.query in (0, 1)
    assert (below.witness.p, below.witness.q) == (Fraction(3, 4), Fraction(1, 4))
    assert "h(" in str(below.witness)


def test_prediction_dp_queries_and_predict():
    one = verify(two_query_learner, records=BITS, n=1, claim=PredictionDp(sympy.log(3), queries=[1]))
    assert one.verdict is Verdict.HOLDS

    def as_mapping(dataset):
        return {frozenset({(0, a), (1, b)}): p for (a, b), p in two_query_learner(dataset).items()}

    label = lambda h, x: dict(h)[x]
    mapped = verify(as_mapping, records=BITS, n=1, claim=PredictionDp(sympy.log(3), queries=(0, 1), predict=label))
    assert mapped.verdict is Verdict.HOLDS
    with pytest.raises(InvalidArgument, match="pass queries="):
        verify(as_mapping, records=BITS, n=1, claim=PredictionDp(1))
    with pytest.raises(InvalidArgument, match="gives no label at query 2"):
        verify(two_query_learner, records=BITS, n=1, claim=PredictionDp(1, queries=[2]))


# -- the number policy ----------------------------------------------------------------------------------


def test_every_reader_reads_0_1_as_one_tenth():
    tenth = Fraction(1, 10)
    assert exact_number("x", 0.1) == tenth
    assert effective_claim(0.1) == tenth * (1 + FLOAT_CLAIM_ALLOWANCE)  # a float claim: its rounding allowance
    assert effective_claim(Fraction(1, 10)) == tenth
    assert exact_parameter(0.1) == tenth  # relabeling (was limit_denominator(10**6): also 1/10)
    assert exact_epsilon(0.1) == tenth  # item level (was the binary 3602879701896397/2**55)
    assert _exact_number("t", 0.1) == tenth  # laplace (was binary)
    assert _to_sympy(0.1) == sympy.Rational(1, 10)  # exponential (was binary)
    assert _positive_fraction("alpha", 0.1) == tenth  # user level (was binary)
    assert exact_number("epsilon", _parse_number("0.1", "epsilon")) == tenth  # CLI: a literal stays a float
    assert _parse_number("1/10", "epsilon") == tenth
    assert exact_number("x", 1 / 3) == exact_parameter(1 / 3) == exact_epsilon(1 / 3) == Fraction(1, 3)
