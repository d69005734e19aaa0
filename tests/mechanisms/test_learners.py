"""Tests of dpverify.mechanisms.learners: the inner learners A of the realizable-to-agnostic transformation.

Thresholds over X = {0, 1}: c0 = (1, 1), c1 = (0, 1), c2 = (0, 0); over X = {0, 1, 2}:
c0 = (1,1,1), c1 = (0,1,1), c2 = (0,0,1), c3 = (0,0,0). s = e^{-1/2} = 0.6065306597126334.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import dpverify
from dpverify.errors import InvalidArgument
from dpverify.finite.records import all_functions, intervals, labeled_records, point_functions, thresholds
from dpverify.mechanisms.learners import LEARNERS, ConsistentLearner, ExponentialLearner, LeakyLearner, learner

S = math.exp(-0.5)


def labeling_inputs(cc, points):
    """What relabel_tables hands to on_labelings for the point multiset ``points``, plus the
    relabeled datasets T^h (one per labeling, in ``points`` order). ``mistakes`` is computed from
    the relabeled datasets with ConceptClass.mistakes, independently of relabel_tables."""
    C = cc.matrix
    point_counts = np.bincount(points, minlength=cc.domain_size)
    support = np.flatnonzero(point_counts).tolist()
    reps = np.array(list(cc.labelings(support).values()))
    datasets = [tuple((x, int(C[rep, x])) for x in points) for rep in reps]
    mistakes = np.array([cc.mistakes(d) for d in datasets])
    return point_counts, reps, mistakes, datasets


def _as_vector(distribution, size):
    return np.array([float(distribution[o]) for o in range(size)])


CLASSES = {
    "thresholds3": thresholds(3),
    "intervals3": intervals(3),
    "points3": point_functions(3),
    "all2": all_functions(2),
}


def _all_learners(cc):
    return [
        ExponentialLearner(cc),
        ExponentialLearner(cc, learner_epsilon=0.5),
        LeakyLearner(cc, 0.1),
        LeakyLearner(cc, 0.3, learner_epsilon=2.0),
        ConsistentLearner(cc),
    ]


@pytest.mark.parametrize("class_name", sorted(CLASSES))
def test_on_labelings_equals_call_on_relabeled_dataset(class_name):
    cc = CLASSES[class_name]
    checked = 0
    for size in (1, 2, 3):
        for points in itertools.combinations_with_replacement(range(cc.domain_size), size):
            point_counts, reps, mistakes, datasets = labeling_inputs(cc, points)
            for inner in _all_learners(cc):
                fast = inner.on_labelings(point_counts, reps, mistakes)
                assert fast.shape == (len(reps), len(cc))
                for row, dataset in enumerate(datasets):
                    # also a reordered copy: every learner here is order-invariant
                    for ordered in (dataset, tuple(reversed(dataset))):
                        slow = _as_vector(inner(ordered), len(cc))
                        assert np.abs(fast[row] - slow).max() < 1e-15
                        checked += 1
    assert checked > 0


# -- hand values ------------------------------------------------------------------------------------


def test_exponential_learner_hand_value():
    # thresholds(2), dataset ((0, 1), (1, 1)): mistakes c0 0, c1 1, c2 2.
    # P ∝ (1, e^{-1/2}, e^{-1}), Z = 1 + 0.6065306597126334 + 0.36787944117144233 = 1.9744101008840757.
    out = ExponentialLearner(thresholds(2))(((0, 1), (1, 1)))
    assert out[0] == pytest.approx(1 / 1.9744101008840757, rel=1e-14)  # 0.506480391055654
    assert out[1] == pytest.approx(S / 1.9744101008840757, rel=1e-14)  # 0.3071958857184984
    assert out[2] == pytest.approx(math.exp(-1) / 1.9744101008840757, rel=1e-14)  # 0.1863237232258476


def test_exponential_learner_epsilon_scales_the_exponent():
    # learner_epsilon = 2 on the same data: P ∝ (1, e^{-1}, e^{-2}).
    out = ExponentialLearner(thresholds(2), learner_epsilon=2.0)(((0, 1), (1, 1)))
    z = 1 + math.exp(-1) + math.exp(-2)
    assert [out[i] for i in range(3)] == pytest.approx([1 / z, math.exp(-1) / z, math.exp(-2) / z], rel=1e-14)


def test_leaky_learner_hand_value():
    # thresholds(2), delta = 1/4, dataset ((1, 0), (0, 0)).
    # EM: mistakes c0 2, c1 1, c2 0 -> ∝ (e^{-1}, e^{-1/2}, 1).
    # Leak: smallest record (0, 0) -> first concept with label 0 at x = 0: c1.
    # P = 3/4 * EM + 1/4 * point(c1).
    out = LeakyLearner(thresholds(2), 0.25)(((1, 0), (0, 0)))
    z = math.exp(-1) + S + 1
    assert out[0] == pytest.approx(0.75 * math.exp(-1) / z, rel=1e-14)
    assert out[1] == pytest.approx(0.75 * S / z + 0.25, rel=1e-14)
    assert out[2] == pytest.approx(0.75 / z, rel=1e-14)


def test_consistent_learner_hand_values():
    cc = thresholds(3)
    # ((1, 1), (0, 0)): consistent concepts need c(0) = 0, c(1) = 1: only c1.
    assert dict(ConsistentLearner(cc)(((1, 1), (0, 0)))) == {1: 1}
    # ((2, 0),): c3 only (c0, c1, c2 label 2 with 1).
    assert dict(ConsistentLearner(cc)(((2, 0),))) == {3: 1}
    # ((0, 0),): c1, c2, c3 consistent; the first is c1.
    assert dict(ConsistentLearner(cc)(((0, 0),))) == {1: 1}


def test_consistent_learner_refuses_unrealizable_data():
    # (0, 1) and (1, 0) need c(0) = 1 > c(1) = 0: no threshold does that.
    with pytest.raises(InvalidArgument, match="no concept"):
        ConsistentLearner(thresholds(2))(((0, 1), (1, 0)))


# -- privacy of the learners ------------------------------------------------------------------------


def test_leaky_learner_is_one_delta_private_and_the_leak_matters():
    # thresholds(3), n = 1, delta = 0.1, exchangeable enumeration.
    # Worst pair: D = ((0, 1),), D' = ((0, 0),), outcome c0.
    #   D : mistakes (0, 1, 1, 1), EM ∝ (1, s, s, s); the leak picks c0 (first with label 1 at 0):
    #       P(c0) = 0.9 / (1 + 3s) + 0.1 = 0.419195119953199
    #   D': mistakes (1, 0, 0, 0), EM ∝ (s, 1, 1, 1); the leak picks c1:
    #       Q(c0) = 0.9 s / (3 + s)     = 0.1513580904327777
    #   delta*(1) = P(c0) - e Q(c0) = 0.1 + 0.9 (1/(1 + 3s) - e^{1/2}/(3 + s)) = 0.0077611731395186 > 0.
    # Without the leak (EM alone, 1-DP) delta*(1) = 0, so the leak is what makes delta* positive.
    cc = thresholds(3)
    records = labeled_records(3)
    expected = 0.1 + 0.9 * (1 / (1 + 3 * S) - math.exp(0.5) / (3 + S))
    result = dpverify.verify(LeakyLearner(cc, 0.1), records=records, n=1, epsilon=1, delta=0.1, exchangeable=True)
    assert result.holds is True
    assert result.exchangeable is True and result.symmetry_violation is None
    assert result.delta == pytest.approx(expected, rel=1e-12)
    assert result.delta == pytest.approx(0.0077611731395186, rel=1e-10)
    # (1, 0)-DP fails, and so does (1, 0.007) < delta*.
    assert dpverify.verify(LeakyLearner(cc, 0.1), records=records, n=1, epsilon=1, delta=0.0, exchangeable=True).holds is False
    assert dpverify.verify(LeakyLearner(cc, 0.1), records=records, n=1, epsilon=1, delta=0.007, exchangeable=True).holds is False
    # The EM learner alone is 1-DP: delta*(1) = 0.
    pure = dpverify.verify(ExponentialLearner(cc), records=records, n=1, epsilon=1, delta=0.0, exchangeable=True)
    assert pure.holds is True and pure.delta == 0.0


def test_leaky_learner_large_delta_closed_form():
    # thresholds(1) (c0 = (1), c1 = (0)), n = 1, delta = 1/2. D = ((0, 0),), D' = ((0, 1),).
    #   P(c1) = (1/2) / (1 + s) + 1/2      (EM ∝ (s, 1); leak -> c1)
    #   Q(c1) = (1/2) s / (1 + s)          (EM ∝ (1, s); leak -> c0)
    # delta*(1) = P(c1) - e Q(c1) = 1/2 - (1/2)(e^{1/2} - 1)/(1 + s) = 0.2980986958517905.
    result = dpverify.verify(LeakyLearner(thresholds(1), 0.5), records=labeled_records(1), n=1, epsilon=1,
                             delta=0.5, exchangeable=True)
    assert result.holds is True
    assert result.delta == pytest.approx(0.5 - 0.5 * (math.exp(0.5) - 1) / (1 + S), rel=1e-12)


def test_leaky_learner_holds_on_pairs_of_records():
    # n = 2 over thresholds(2): still (1, 0.1)-DP, with delta*(1) > 0 (the leak shows).
    result = dpverify.verify(LeakyLearner(thresholds(2), 0.1), records=labeled_records(2), n=2, epsilon=1,
                             delta=0.1, exchangeable=True)
    assert result.holds is True
    assert 0 < result.delta < 0.1


def test_consistent_learner_is_not_private():
    # ((0, 0),) -> c1 with probability 1, ((0, 1),) -> c0: disjoint supports, eps* = inf.
    result = dpverify.verify(ConsistentLearner(thresholds(2)), records=labeled_records(2), n=1, epsilon=5,
                             delta=0.5, exchangeable=True)
    assert result.holds is False
    assert result.epsilon == math.inf
    assert result.delta == pytest.approx(1.0)


# -- construction -----------------------------------------------------------------------------------


def test_learner_factory():
    cc = thresholds(2)
    assert learner("exponential", cc, learner_epsilon=0.5) == ExponentialLearner(cc, 0.5)
    assert learner("leaky", cc, delta=0.2) == LeakyLearner(cc, 0.2)
    assert learner("consistent", cc) == ConsistentLearner(cc)
    assert sorted(LEARNERS) == ["consistent", "exponential", "leaky"]
    with pytest.raises(InvalidArgument, match="unknown learner"):
        learner("nope", cc)


def test_learner_deltas():
    cc = thresholds(2)
    assert ExponentialLearner(cc).delta == 0.0
    assert ConsistentLearner(cc).delta == 0.0
    assert LeakyLearner(cc, 0.05).delta == 0.05


@pytest.mark.parametrize("bad", [-0.1, 1.5])
def test_leaky_learner_rejects_bad_delta(bad):
    with pytest.raises(InvalidArgument, match="delta must be in"):
        LeakyLearner(thresholds(2), bad)
