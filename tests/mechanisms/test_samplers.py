"""Differential tests of dpverify.from_sampler: samplers written the way users write them (numpy's
Generator or random.Random calls on the ``rng`` argument) enumerate to exactly the distributions of
the hand-written mechanisms of mechanisms/, and verify() gives them the same verdict and figures.

Exact samplers are compared with ``==`` on every dataset; samplers with float weights (``np.exp``)
with a relative tolerance of 1e-12, since the two compute the same floats in a different order.
"""

from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import sympy

import dpverify
from dpverify import Distribution, from_sampler
from dpverify.finite.records import labeled_records, thresholds
from dpverify.mechanisms.exponential import threshold_learner
from dpverify.mechanisms.learners import ExponentialLearner, LeakyLearner
from dpverify.mechanisms.randomized_response import (
    randomized_response,
    randomized_response_mechanism,
    subsampled_randomized_response,
)
from dpverify.mechanisms.relabeling import agnostic_reference, subsample_size
from dpverify.mechanisms.subsampling import subsampled
from dpverify.verdict.claims import ApproximateDp

P = Fraction(3, 4)


def assert_close(found: Distribution, expected, rel: float = 1e-12) -> None:
    assert found.support == frozenset(expected)
    for outcome, probability in expected.items():
        assert float(found[outcome]) == pytest.approx(float(probability), rel=rel)


def assert_same_result(sampled, written, *, exact: bool) -> None:
    """The two verify() results agree: verdict, and eps* and delta* (equal, or within 1e-12)."""
    assert sampled.verdict is written.verdict
    if exact:
        assert (sampled.epsilon, sampled.delta) == (written.epsilon, written.delta)
    else:
        assert sampled.epsilon == pytest.approx(written.epsilon, rel=1e-12)
        assert sampled.delta == pytest.approx(written.delta, abs=1e-12)


# -- randomized response ------------------------------------------------------------------------


def rr_lazy_coin(dataset, rng):
    (bit,) = dataset
    return bit if rng.random() < P else 1 - bit


def rr_numpy_choice(dataset, rng):
    (bit,) = dataset
    return rng.choice([bit, 1 - bit], p=[P, 1 - P])


def rr_python_choices(dataset, rng):
    (bit,) = dataset
    return rng.choices([bit, 1 - bit], weights=[3, 1])[0]


@pytest.mark.parametrize("sampler", [rr_lazy_coin, rr_numpy_choice, rr_python_choices])
def test_randomized_response(sampler):
    mechanism = from_sampler(sampler)
    for bit in (0, 1):
        assert mechanism((bit,)) == randomized_response(bit, p=P)  # {bit: 3/4, 1 - bit: 1/4}
    sampled = dpverify.verify(mechanism, records=(0, 1), n=1, epsilon=math.log(3))
    written = dpverify.verify(randomized_response_mechanism(p=P), records=(0, 1), n=1, epsilon=math.log(3))
    assert_same_result(sampled, written, exact=True)
    assert sampled.holds and sampled.epsilon == math.log(3)  # ln(3/4 / 1/4)


# -- unary encoding -----------------------------------------------------------------------------

D = 3  # the domain {0, 1, 2}, one-hot encoded


def unary_encoding(dataset, rng):
    """One-hot encode the value and keep each bit with probability 3/4, flip it otherwise."""
    (value,) = dataset
    bits = np.zeros(D, dtype=int)
    bits[value] = 1
    keep = rng.random(size=D) < P
    return np.where(keep, bits, 1 - bits)


def unary_encoding_written(dataset) -> Distribution:
    """The same by hand: the product of D independent randomized responses, flattened to tuples."""
    (value,) = dataset
    per_bit = [randomized_response(int(i == value), p=P).map(lambda b: (b,)) for i in range(D)]
    return functools.reduce(lambda a, b: a.product(b).map(lambda pair: pair[0] + pair[1]), per_bit)


def test_unary_encoding_with_per_bit_flips():
    mechanism = from_sampler(unary_encoding)
    for value in range(D):
        found = mechanism((value,))
        assert found == unary_encoding_written((value,))
        # e.g. the true encoding itself: (3/4)^3 = 27/64
        assert found[tuple(int(i == value) for i in range(D))] == Fraction(27, 64)
    sampled = dpverify.verify(mechanism, records=tuple(range(D)), n=1, epsilon=2 * math.log(3))
    written = dpverify.verify(unary_encoding_written, records=tuple(range(D)), n=1, epsilon=2 * math.log(3))
    assert_same_result(sampled, written, exact=True)
    assert sampled.holds and sampled.epsilon == float(sympy.log(9).evalf(30))  # two bits differ: (ln 3) * 2


# -- subsampling ---------------------------------------------------------------------------------

K = 2  # subsample size


def subsample_count_numpy(dataset, rng):
    chosen = rng.choice(len(dataset), size=K, replace=False)
    return sum(dataset[i] for i in chosen)


def subsample_count_python(dataset, rng):
    return sum(rng.sample(dataset, K))


def count(subsample) -> Distribution:
    return Distribution.point(sum(subsample))


@pytest.mark.parametrize("sampler", [subsample_count_numpy, subsample_count_python])
def test_subsample_then_count(sampler):
    mechanism = from_sampler(sampler)
    written = subsampled(count, K, grouped=False)
    for dataset in itertools.product((0, 1), repeat=4):
        assert mechanism(dataset) == written(dataset)
    assert mechanism((1, 1, 0, 0)) == Distribution({2: Fraction(1, 6), 1: Fraction(4, 6), 0: Fraction(1, 6)})  # C(4, 2) = 6
    # at epsilon = 0 delta* is the chance k/n = 1/2 that the changed record is in the subsample
    claim = ApproximateDp(0, Fraction(1, 2))
    sampled = dpverify.verify(mechanism, records=(0, 1), n=4, claim=claim)
    reference = dpverify.verify(written, records=(0, 1), n=4, claim=claim)
    assert_same_result(sampled, reference, exact=True)
    assert sampled.holds and sampled.delta == 0.5


def subsampled_rr(dataset, rng):
    bit = dataset[rng.integers(len(dataset))]
    return bit if rng.random() < P else 1 - bit


def test_subsampled_randomized_response():
    mechanism = from_sampler(subsampled_rr)
    written = subsampled_randomized_response(p=P)
    for dataset in itertools.product((0, 1), repeat=2):
        assert mechanism(dataset) == written(dataset)
    sampled = dpverify.verify(mechanism, records=(0, 1), n=2, epsilon=math.log(2))
    reference = dpverify.verify(written, records=(0, 1), n=2, epsilon=math.log(2))
    assert_same_result(sampled, reference, exact=True)
    assert sampled.holds and sampled.epsilon == math.log(2)  # ln(1 + (3 - 1)/2)


# -- the exponential mechanism over thresholds ----------------------------------------------------

CLASS = thresholds(3)
RECORDS = labeled_records(3)


def mistakes_of(dataset) -> list[int]:
    return [sum(CLASS.label(u, x) != y for x, y in dataset) for u in range(len(CLASS))]


def em_exact(dataset, rng):
    """EM at epsilon = 2 ln 2: the weight exp(-epsilon m / 2) of m mistakes is 2^-m, exactly."""
    weights = [Fraction(1, 2**m) for m in mistakes_of(dataset)]
    total = sum(weights)
    return rng.choice(len(CLASS), p=[w / total for w in weights])


def em_float(dataset, rng):
    """EM at epsilon = 1 with numpy float weights, as usually written."""
    weights = np.exp(-1.0 * np.array(mistakes_of(dataset)) / 2)
    return rng.choice(len(CLASS), p=weights / weights.sum())


def test_exponential_mechanism_over_thresholds_exact():
    mechanism = from_sampler(em_exact)
    written = threshold_learner(3, epsilon=2 * sympy.log(2), exact=True)
    for dataset in itertools.product(RECORDS, repeat=2):
        assert mechanism(dataset) == written(dataset)  # Fractions equal sympy's rationals
    # ((0, 1), (2, 0)): thresholds u = 0..3 make 1, 2, 2, 1 mistakes: 2^-1, 2^-2, 2^-2, 2^-1 over 3/2
    assert mechanism(((0, 1), (2, 0))) == Distribution({0: Fraction(1, 3), 1: Fraction(1, 6), 2: Fraction(1, 6), 3: Fraction(1, 3)})
    sampled = dpverify.verify(mechanism, records=RECORDS, n=2, epsilon=2 * sympy.log(2))
    reference = dpverify.verify(written, records=RECORDS, n=2, epsilon=2 * sympy.log(2), exchangeable=False)
    assert_same_result(sampled, reference, exact=True)
    assert sampled.holds


def test_exponential_mechanism_over_thresholds_float():
    mechanism = from_sampler(em_float)
    written = threshold_learner(3, epsilon=1.0)
    for dataset in itertools.product(RECORDS, repeat=2):
        found = mechanism(dataset)
        assert not found.is_exact
        assert_close(found, written(dataset))
    sampled = dpverify.verify(mechanism, records=RECORDS, n=2, epsilon=1.0)
    reference = dpverify.verify(written, records=RECORDS, n=2, epsilon=1.0, exchangeable=False)
    assert_same_result(sampled, reference, exact=False)


# -- learners -----------------------------------------------------------------------------------

LEARNER_EPSILON = 1.0


def em_with_random_tie_breaking(dataset, rng):
    """EM over the *number* of mistakes (a level m weighs (#concepts with m mistakes) * e^(-eps m/2)),
    then a uniformly random concept among the tied ones: the EM over concepts, P(c) ∝ e^(-eps m(c)/2)."""
    mistakes = CLASS.mistakes(dataset)
    levels = sorted(set(mistakes.tolist()))
    weights = np.array([np.count_nonzero(mistakes == m) * np.exp(-LEARNER_EPSILON * m / 2) for m in levels])
    level = levels[rng.choice(len(levels), p=weights / weights.sum())]
    return rng.choice(np.flatnonzero(mistakes == level))


def leaky(dataset, rng, delta=0.1):
    """With probability delta the first concept consistent with the smallest example, else the EM."""
    if rng.random() < delta:
        x, y = min(dataset)
        return int(np.flatnonzero(CLASS.matrix[:, x] == bool(y))[0])
    return em_with_random_tie_breaking(dataset, rng)


def test_learner_with_random_tie_breaking():
    mechanism = from_sampler(em_with_random_tie_breaking)
    written = ExponentialLearner(CLASS, LEARNER_EPSILON)
    for dataset in itertools.product(RECORDS, repeat=2):
        assert_close(mechanism(dataset), written(dataset))
    # ((0, 1), (0, 0)): u = 0 makes 1 mistake, u = 1, 2, 3 make 1 each too: a four-way tie, 1/4 each
    assert_close(mechanism(((0, 1), (0, 0))), {0: 0.25, 1: 0.25, 2: 0.25, 3: 0.25})
    sampled = dpverify.verify(mechanism, records=RECORDS, n=2, epsilon=LEARNER_EPSILON)
    reference = dpverify.verify(written, records=RECORDS, n=2, epsilon=LEARNER_EPSILON)
    assert_same_result(sampled, reference, exact=False)
    assert sampled.holds


def test_leaky_learner():
    mechanism = from_sampler(leaky)
    written = LeakyLearner(CLASS, delta=0.1, learner_epsilon=LEARNER_EPSILON)
    for dataset in itertools.product(RECORDS, repeat=2):
        assert_close(mechanism(dataset), written(dataset))
    claim = ApproximateDp(LEARNER_EPSILON, 0.1)
    sampled = dpverify.verify(mechanism, records=RECORDS, n=2, claim=claim)
    reference = dpverify.verify(written, records=RECORDS, n=2, claim=claim)
    assert_same_result(sampled, reference, exact=False)


# -- A_Agnostic (Li–Wang–Ye 2025 Alg. 2) ---------------------------------------------------------

AGNOSTIC_CLASS = thresholds(2)
AGNOSTIC_EPSILON = 0.5


def a_agnostic(S, rng):
    """A_Agnostic as sampling code: a uniform k-subset T of S (W the rest), A_Relabel's exponential
    mechanism over the labelings h of T's points with score min_f dis_T(h, f) + err_W(f), then the
    EM learner A on T relabeled by h."""
    C, eps, n = AGNOSTIC_CLASS, AGNOSTIC_EPSILON, len(S)
    k = subsample_size(eps, n)
    I = sorted(rng.choice(n, size=k, replace=False))
    T = [S[i] for i in I]
    W = [S[i] for i in range(n) if i not in I]
    points = [x for x, _ in T]
    H = list(C.labelings(points).values())
    err_w = C.mistakes(W) / len(W)
    weights = []
    for h in H:
        dis = np.array([sum(C.matrix[h, x] != C.matrix[f, x] for x in points) for f in range(len(C))]) / k
        weights.append(math.exp(-eps * len(W) * float(np.min(dis + err_w)) / 2))
    h = H[rng.choice(len(H), p=[w / sum(weights) for w in weights])]
    relabeled = tuple((x, int(C.matrix[h, x])) for x in points)
    learner_weights = np.exp(-LEARNER_EPSILON * C.mistakes(relabeled) / 2)
    return rng.choice(len(C), p=learner_weights / learner_weights.sum())


def a_agnostic_written(S) -> Distribution:
    return agnostic_reference(AGNOSTIC_CLASS, AGNOSTIC_EPSILON, S, ExponentialLearner(AGNOSTIC_CLASS, LEARNER_EPSILON))


def _check_a_agnostic(n: int) -> None:
    mechanism = from_sampler(a_agnostic)
    records = labeled_records(2)
    for S in itertools.product(records, repeat=n):
        assert_close(mechanism(S), a_agnostic_written(S))
    sampled = dpverify.verify(mechanism, records=records, n=n, epsilon=1)
    written = dpverify.verify(a_agnostic_written, records=records, n=n, epsilon=1)
    assert_same_result(sampled, written, exact=False)


def test_a_agnostic_on_two_records():
    _check_a_agnostic(2)  # k = ceil(1/2 * 2) = 1: T one record, W the other


@pytest.mark.slow
def test_a_agnostic_on_three_records():
    _check_a_agnostic(3)  # k = 2: 3 * 2 ordered index draws x up to 3 labelings x 3 concepts: up to 54 paths a dataset
