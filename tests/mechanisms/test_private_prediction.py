"""Tests of dpverify.mechanisms.private_prediction: Lemma 19 (C6) and the inner learner of C7.

Thresholds over X = {0, 1, 2}: c0 = (1,1,1), c1 = (0,1,1), c2 = (0,0,1), c3 = (0,0,0). The first
concept consistent with one record (x, y) and its vote at query 1:
(0,0) -> c1 -> 1, (0,1) -> c0 -> 1, (1,0) -> c2 -> 0, (1,1) -> c0 -> 1, (2,0) -> c3 -> 0, (2,1) -> c0 -> 1.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import sympy

import dpverify
from dpverify.errors import InvalidArgument
from dpverify.finite.records import intervals, labeled_records, thresholds
from dpverify.mechanisms.private_prediction import (
    AGGREGATIONS,
    PredictionLearner,
    RealizablePredictor,
    parts_for,
    vote_answer,
)

E = math.e


# -- parts_for --------------------------------------------------------------------------------------


def test_parts_for_values():
    # r = ceil(6 ln(4/alpha) / eps)
    assert parts_for(1.0, 0.5) == 13  # 6 ln 8 = 12.4766
    assert parts_for(1.0, 1.0) == 9  # 6 ln 4 = 8.3178 (Thm 20's inner r with alpha = 1)
    assert parts_for(0.5, 0.5) == 25  # 12 ln 8 = 24.953
    assert parts_for(2.0, 0.1) == 12  # 3 ln 40 = 11.0666


@pytest.mark.parametrize("alpha", [0.0, -0.5, 1.5])
def test_parts_for_rejects_bad_alpha(alpha):
    with pytest.raises(InvalidArgument, match="alpha must be in"):
        parts_for(1.0, alpha)


# -- RealizablePredictor: EM aggregation ----------------------------------------------------------


def _em_p1(eps, v, r):
    # P(1) = e^{eps v / 2} / (e^{eps v / 2} + e^{eps (r - v) / 2})
    return math.exp(eps * v / 2) / (math.exp(eps * v / 2) + math.exp(eps * (r - v) / 2))


def test_em_aggregation_two_parts_hand_values():
    cc = thresholds(3)
    predictor = RealizablePredictor(cc, 1.0, query=1, parts=2)
    # Parts ((0,1),(2,1)) and ((1,1),(2,1)): both consistent with c0, votes v = 2 at x = 1.
    # P(1) = e^{1} / (e^{1} + e^{0}) = e / (1 + e) = 0.7310585786300049.
    both = predictor(((0, 1), (2, 1), (1, 1), (2, 1)))
    assert both[1] == pytest.approx(E / (1 + E), rel=1e-15)
    assert both[1] == pytest.approx(_em_p1(1.0, 2, 2), rel=1e-15)
    # Parts ((0,0),(1,0)) -> c2 (c2(1) = 0) and ((2,1),(2,1)) -> c0 (vote 1): v = 1, P(1) = 1/2.
    split = predictor(((0, 0), (1, 0), (2, 1), (2, 1)))
    assert split[1] == pytest.approx(0.5, rel=1e-15)
    # Parts ((1,0),(2,0)) -> c3 and ((0,0),(1,0)) -> c2: v = 0, P(1) = 1 / (1 + e) = 0.2689414213699951.
    none = predictor(((1, 0), (2, 0), (0, 0), (1, 0)))
    assert none[1] == pytest.approx(1 / (1 + E), rel=1e-15)


def test_em_aggregation_three_parts_at_epsilon_two():
    # r = 3, eps = 2, one record per part: (0,1) -> 1, (1,0) -> 0, (2,1) -> 1: v = 2.
    # P(1) = e^{2*2/2} / (e^{2} + e^{2*1/2}) = e^2 / (e^2 + e) = e / (e + 1).
    out = RealizablePredictor(thresholds(3), 2.0, query=1, parts=3)(((0, 1), (1, 0), (2, 1)))
    assert out[1] == pytest.approx(_em_p1(2.0, 2, 3), rel=1e-15)
    assert out[1] == pytest.approx(E / (1 + E), rel=1e-15)


def test_parts_are_contiguous_chunks():
    # r = 2 on 3 records: numpy.array_split sizes (2, 1): ((1,0),(0,1)) and ((2,1),).
    # Part 1: needs c(0) = 1 and c(1) = 0: no threshold; first ERM = argmin mistakes
    #   c0: 1 (at x=1), c1: 2, c2: 1, c3: 1 -> c0, vote at query 1: 1.
    # Part 2: (2,1) -> c0 -> 1. v = 2: P(1) = e / (1 + e).
    out = RealizablePredictor(thresholds(3), 1.0, query=1, parts=2)(((1, 0), (0, 1), (2, 1)))
    assert out[1] == pytest.approx(E / (1 + E), rel=1e-15)
    # Same records, other order: parts ((1,0),(2,1)) -> c2 (vote 0) and ((0,1),) -> c0 (1): v = 1.
    moved = RealizablePredictor(thresholds(3), 1.0, query=1, parts=2)(((1, 0), (2, 1), (0, 1)))
    assert moved[1] == pytest.approx(0.5, rel=1e-15)


def test_mutant_aggregation_without_half():
    # Scored at eps instead of eps/2: P(1) = e^{eps v} / (e^{eps v} + e^{eps (r - v)}).
    # r = 2, v = 2, eps = 1: e^2 / (e^2 + 1) = 0.8807970779778823.
    out = RealizablePredictor(thresholds(3), 1.0, 1, 2, "mutant_exponential_without_half")(((0, 1), (1, 1)))
    assert out[1] == pytest.approx(E**2 / (E**2 + 1), rel=1e-15)


def test_exact_distribution_matches_float():
    predictor = RealizablePredictor(thresholds(3), 1.0, query=1, parts=2)
    data = ((0, 1), (2, 1), (1, 1), (2, 1))
    exact = predictor.exact_distribution(data)
    assert sympy.simplify(exact[1] - sympy.E / (1 + sympy.E)) == 0
    assert float(exact[1]) == pytest.approx(predictor(data)[1], rel=1e-15)


# -- Laplace aggregation --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "votes", "expected"),
    [
        # r = 3, eps = 1, output 1 iff v + Lap(1) > 3/2. t = 3/2 - v.
        (((1, 0), (2, 0), (1, 0)), 0, 0.5 * math.exp(-1.5)),  # t = 1.5: 1/2 e^{-1.5} = 0.11156508007421491
        (((1, 0), (2, 0), (0, 1)), 1, 0.5 * math.exp(-0.5)),  # t = 0.5: 1/2 e^{-0.5} = 0.3032653298563167
        (((1, 0), (0, 1), (2, 1)), 2, 1 - 0.5 * math.exp(-0.5)),  # t = -0.5: 0.6967346701436833
        (((1, 1), (0, 1), (2, 1)), 3, 1 - 0.5 * math.exp(-1.5)),  # t = -1.5: 0.8884349199257851
    ],
)
def test_laplace_closed_form(data, votes, expected):
    out = RealizablePredictor(thresholds(3), 1.0, query=1, parts=3, aggregation="laplace")(data)
    assert out[1] == pytest.approx(expected, rel=1e-14)
    assert out[0] == pytest.approx(1 - expected, rel=1e-14)


def test_laplace_tie_is_one_half():
    # r = 2, v = 1: t = 0, P(1) = 1/2 e^0 = 1/2.
    out = RealizablePredictor(thresholds(3), 1.0, query=1, parts=2, aggregation="laplace")(((1, 0), (0, 1)))
    assert out[1] == pytest.approx(0.5, rel=1e-15)


# -- privacy of C6 ----------------------------------------------------------------------------------


def test_em_prediction_epsilon_star_closed_form():
    # r = 2 parts of one record, query 1, eps = 1. P(1) at v = 0, 1, 2: 1/(1+e), 1/2, e/(1+e).
    # Worst ratio: (1/2) / (1/(1+e)) = (1+e)/2 -> eps* = ln((1+e)/2) = 0.6201145069582775
    # (= ln[(1 + e^{eps r/2}) / (1 + e^{eps (r-2)/2})] at r = 2).
    predictor = RealizablePredictor(thresholds(3), 1.0, query=1, parts=2)
    result = dpverify.verify(predictor, records=labeled_records(3), n=2, epsilon=1.0, exchangeable=True)
    assert result.holds is True
    assert result.epsilon == pytest.approx(math.log((1 + E) / 2), rel=1e-12)


def test_mutant_prediction_is_caught():
    # Without the half: eps* = ln[(1 + e^{2}) / (1 + e^{0})] = ln((1 + e^2)/2) = 1.4337808304830273 > 1.
    predictor = RealizablePredictor(thresholds(3), 1.0, 1, 2, "mutant_exponential_without_half")
    result = dpverify.verify(predictor, records=labeled_records(3), n=2, epsilon=1.0, exchangeable=True)
    assert result.holds is False
    assert result.epsilon == pytest.approx(math.log((1 + E**2) / 2), rel=1e-12)
    assert result.witness is not None


def test_laplace_prediction_is_tight_at_epsilon():
    # Laplace(1/eps) on a count of sensitivity 1: ratio e^{eps} exactly on the tails, eps* = eps.
    predictor = RealizablePredictor(thresholds(3), 1.0, query=1, parts=3, aggregation="laplace")
    result = dpverify.verify(predictor, records=labeled_records(3), n=3, epsilon=1.0, exchangeable=True)
    assert result.epsilon == pytest.approx(1.0, rel=1e-12)
    assert result.holds is True


# -- the memoised call against the computation it replaced -----------------------------------------


def _naive_prediction(predictor, dataset):
    """The predictor as first written (no memo): numpy.array_split bounds, a mistake count per part,
    a fresh Distribution per call."""
    cc = predictor.concept_class
    bounds = np.cumsum([0] + [len(a) for a in np.array_split(np.arange(len(dataset)), predictor.parts)])
    votes = sum(cc.label(int(np.argmin(cc.mistakes(dataset[lo:hi]))), predictor.query)
                for lo, hi in zip(bounds[:-1], bounds[1:]))
    p0, p1 = vote_answer(votes, predictor.parts, predictor.epsilon, predictor.aggregation)
    return votes, {0: float(p0), 1: float(p1)}


@pytest.mark.parametrize("aggregation", AGGREGATIONS)
@pytest.mark.parametrize(("n", "parts"), [
    (3, 3), (3, 2),  # 216 datasets: the default run (< 0.1 s each)
    pytest.param(4, 2, marks=pytest.mark.slow), pytest.param(5, 3, marks=pytest.mark.slow),
    pytest.param(5, 2, marks=pytest.mark.slow),  # 7,776 datasets: 3-5 s each
])
def test_memoised_call_equals_naive_on_every_dataset(aggregation, n, parts):
    # every ordered dataset of n records over X = {0, 1, 2} (6^n), every query, on thresholds and
    # intervals: unequal parts (3 into 2: 2, 1; 5 into 3: 2, 2, 1), ERM parts (no consistent concept)
    records = labeled_records(3)
    for cc in (thresholds(3), intervals(3)):
        for query in range(3):
            predictor = RealizablePredictor(cc, 1.0, query, parts, aggregation)
            for dataset in itertools.product(records, repeat=n):
                votes, expected = _naive_prediction(predictor, dataset)
                assert predictor._votes(dataset) == votes
                got = predictor(dataset)
                assert dict(got) == {o: p for o, p in expected.items() if p != 0}  # same floats, exactly
                assert predictor(dataset) is got  # one shared immutable Distribution per vote count


def test_memoised_votes_hand_values():
    # query 1 on thresholds(3), one record per part (module doc's table): votes of
    # (0,0), (1,0), (2,1) = 1 + 0 + 1 = 2; the same records in other orders give the same count
    predictor = RealizablePredictor(thresholds(3), 1.0, 1, 3)
    for dataset in itertools.permutations(((0, 0), (1, 0), (2, 1))):
        assert predictor._votes(dataset) == 2
    # parts of two records, r = 2 over 4 records: part 1 = ((1,0),(1,1)) has no consistent
    # threshold -> first ERM c0 (1 mistake, as c1; c2, c3 have 1 too) -> c0(1) = 1; part 2 =
    # ((2,0),(0,0)) -> c3 -> 0: votes 1
    predictor = RealizablePredictor(thresholds(3), 1.0, 1, 2)
    assert predictor._votes(((1, 0), (1, 1), (2, 0), (0, 0))) == 1
    assert predictor.part_vote(((2, 0), (0, 0))) == 0


# -- argument checks ------------------------------------------------------------------------------


def test_predictor_argument_errors():
    cc = thresholds(3)
    with pytest.raises(InvalidArgument, match="unknown aggregation"):
        RealizablePredictor(cc, 1.0, 1, 2, "median")
    with pytest.raises(InvalidArgument, match="parts must be >= 1"):
        RealizablePredictor(cc, 1.0, 1, 0)
    with pytest.raises(InvalidArgument, match="use n >= r"):
        RealizablePredictor(cc, 1.0, 1, 3)(((0, 1), (1, 1)))
    assert AGGREGATIONS == ("exponential", "laplace", "mutant_exponential_without_half")


# -- PredictionLearner (C7's inner learner) ------------------------------------------------------


def _labeling_inputs(cc, points):
    C = cc.matrix
    point_counts = np.bincount(points, minlength=cc.domain_size)
    reps = np.array(list(cc.labelings(np.flatnonzero(point_counts).tolist()).values()))
    datasets = [tuple((x, int(C[rep, x])) for x in points) for rep in reps]
    mistakes = np.array([cc.mistakes(d) for d in datasets])
    return point_counts, reps, mistakes, datasets


@pytest.mark.parametrize("aggregation", AGGREGATIONS)
@pytest.mark.parametrize("cc", [thresholds(3), intervals(3)], ids=["thresholds3", "intervals3"])
def test_prediction_learner_on_labelings_equals_call(cc, aggregation):
    for query in range(cc.domain_size):
        inner = PredictionLearner(cc, query, learner_epsilon=1.0, aggregation=aggregation)
        for size in (1, 2, 3, 4):
            for points in itertools.combinations_with_replacement(range(cc.domain_size), size):
                point_counts, reps, mistakes, datasets = _labeling_inputs(cc, points)
                fast = inner.on_labelings(point_counts, reps, mistakes)
                assert fast.shape == (len(reps), 2)
                for row, dataset in enumerate(datasets):
                    slow = inner(dataset)
                    assert abs(fast[row, 0] - float(slow[0])) < 1e-15
                    assert abs(fast[row, 1] - float(slow[1])) < 1e-15


def test_prediction_learner_hand_value():
    # One part per record (r = 3), query 1, eps = 1: T^h = ((0,1),(1,0),(2,1)) -> votes 1, 0, 1:
    # v = 2, P(1) = e^{1} / (e^{1} + e^{1/2}) = 1 / (1 + e^{-1/2}) = 0.6224593312018546.
    out = PredictionLearner(thresholds(3), 1)(((0, 1), (1, 0), (2, 1)))
    assert out[1] == pytest.approx(1 / (1 + math.exp(-0.5)), rel=1e-15)
    assert PredictionLearner(thresholds(3), 1).delta == 0.0
