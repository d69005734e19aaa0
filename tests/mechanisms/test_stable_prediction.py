"""Tests of dpverify.mechanisms.stable_prediction: A^sta (C9), Lemma 8 (C11), Appendix C and its eta-nets (C12) of
Dagan–Feldman 2020.

Hand instances use thresholds over X = {0, 1}: c0 = (1, 1), c1 = (0, 1), c2 = (0, 0) (concept u
labels x with 1 iff x >= u). Every fast table is cross-checked against the literal reference on
every multiset (in two record orders).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpverify.checking.checker import check_exchangeable
from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.finite.records import intervals, labeled_records, thresholds
from dpverify.mechanisms.label_flip import flip, flip_rows
from dpverify.mechanisms.stable_prediction import (
    a_sta_reference,
    a_sta_table,
    appendix_c_reference,
    appendix_c_table,
    inner_predictor,
    not_net_reference,
    not_net_table,
    stable_parameters,
    subsampled_prediction_reference,
    subsampled_prediction_table,
)

E = math.e
SIGMOID_HALF = 1 / (1 + math.exp(-0.5))  # 0.6224593312018546


def _orders(dataset: tuple) -> list[tuple]:
    """The sorted multiset and a reordering (the reference must not depend on the order)."""
    return [dataset, tuple(reversed(dataset))[1:] + tuple(reversed(dataset))[:1]]


def _assert_table_matches(s_table, probs, universe, reference, queries: int) -> None:
    for row in range(len(s_table)):
        for S in _orders(s_table.records(row, universe)):
            for x in range(queries):
                answer = reference(S, x)
                assert abs(float(answer[1]) - probs[row, x, 1]) < 1e-14
                assert abs(float(answer[0]) - probs[row, x, 0]) < 1e-14


# -- stable_parameters ------------------------------------------------------------------------------


def test_lemma13_parameters():
    # gamma = 1/10, n = 20: n' = floor(gamma n) = 2, EM at gamma, claim 3 gamma = 3/10;
    # explicit (e^{1/10} - 1) + 2/20 = 0.10517091807564763 + 0.1 = 0.20517091807564763.
    p = stable_parameters(0.1, 20)
    assert (p.n_prime, p.em_privacy, p.claimed_stability) == (2, Fraction(1, 10), Fraction(3, 10))
    assert p.explicit_stability == pytest.approx(0.20517091807564763, rel=1e-15)
    assert stable_parameters(Fraction(1, 10), 20, n_prime=1).n_prime == 1


def test_outline_parameters():
    # gamma = 1/5, n = 20: |T| = gamma n / 2 = 2, EM at gamma/4 = 1/20, claim gamma = 1/5;
    # explicit (e^{1/20} - 1) + 2/20 = 0.05127109637602412 + 0.1 = 0.15127109637602412.
    p = stable_parameters(Fraction(1, 5), 20, variant="outline")
    assert (p.n_prime, p.em_privacy, p.claimed_stability) == (2, Fraction(1, 20), Fraction(1, 5))
    assert p.explicit_stability == pytest.approx(0.15127109637602412, rel=1e-14)
    # gamma n / 2 = 2.5 is rounded down: n'/n = 2/25 <= gamma/2.
    assert stable_parameters(Fraction(1, 5), 25, variant="outline").n_prime == 2


def test_stable_parameter_preconditions_name_the_rule():
    with pytest.raises(InvalidArgument, match=r"n' <= gamma n") as info:
        stable_parameters(0.1, 20, n_prime=3)  # 3 > 0.1 * 20 = 2
    assert "outside_preconditions=True" in str(info.value)
    with pytest.raises(InvalidArgument, match=r"gamma <= 1"):
        stable_parameters(2, 4, n_prime=1)
    assert stable_parameters(0.1, 20, n_prime=3, outside_preconditions=True).n_prime == 3


def test_stable_parameter_misuse():
    with pytest.raises(InvalidArgument, match="unknown A\\^sta variant"):
        stable_parameters(0.1, 20, variant="nope")
    with pytest.raises(InvalidArgument, match="drop n_prime"):
        stable_parameters(0.1, 20, variant="outline", n_prime=1)
    with pytest.raises(InvalidArgument, match=r"n' must be an integer in \[1, n=20\]"):
        stable_parameters(0.01, 20)  # floor(0.2) = 0
    with pytest.raises(InvalidArgument, match="gamma must be > 0"):
        stable_parameters(0, 20)


# -- A^sta ----------------------------------------------------------------------------------------------


def test_a_sta_hand_instance():
    # S = ((0, 1), (1, 0)), n' = 1, EM at gamma = 1: P(h) ∝ exp(-mistakes_S(h) / 2).
    # mistakes on S: c0 = (1,1): 1 (wrong on (1,0)); c1 = (0,1): 2; c2 = (0,0): 1 (wrong on (0,1)).
    # I = {0}: T's points {0}: label 1 -> c0, label 0 -> c1 (first). Weights e^{-1/2}, e^{-1}.
    #   x = 0: P(1) = e^{-1/2} / (e^{-1/2} + e^{-1}) = 1/(1 + e^{-1/2}) = 0.6224593312018546
    #   x = 1: c0(1) = c1(1) = 1 -> P(1) = 1
    # I = {1}: points {1}: label 1 -> c0 (first), label 0 -> c2. Weights e^{-1/2}, e^{-1/2}.
    #   x = 0: c0 -> 1, c2 -> 0: P(1) = 1/2;  x = 1: c0 -> 1, c2 -> 0: P(1) = 1/2
    # Mixture: x = 0: (0.6224593312018546 + 0.5)/2 = 0.5612296656009273; x = 1: (1 + 1/2)/2 = 3/4.
    cc = thresholds(2)
    S = ((0, 1), (1, 0))
    at0 = a_sta_reference(cc, S, 0, n_prime=1, em_privacy=1)
    at1 = a_sta_reference(cc, S, 1, n_prime=1, em_privacy=1)
    assert at0[1] == pytest.approx((SIGMOID_HALF + 0.5) / 2, rel=1e-15)
    assert at0[1] == pytest.approx(0.5612296656009273, rel=1e-15)
    assert at1[1] == pytest.approx(0.75, rel=1e-15)
    table, probs = a_sta_table(cc, 2, 1, 1)
    row = table.index(np.array([[0, 1, 1, 0]]))[0]  # counts over ((0,0), (0,1), (1,0), (1,1))
    assert probs[row, 0, 1] == pytest.approx(0.5612296656009273, rel=1e-15)
    assert probs[row, 1] == pytest.approx([0.25, 0.75], rel=1e-15)


@pytest.mark.parametrize("cc, n, n_prime", [(thresholds(3), 4, 1), (thresholds(3), 4, 2), (intervals(2), 4, 3),
                                           (thresholds(3), 3, 3)])
def test_a_sta_fast_matches_reference(cc, n, n_prime):
    universe = labeled_records(cc.domain_size)
    table, probs = a_sta_table(cc, n, n_prime, 0.7)
    _assert_table_matches(table, probs, universe,
                          lambda S, x: a_sta_reference(cc, S, x, n_prime=n_prime, em_privacy=0.7), cc.domain_size)


def test_a_sta_last_representative_matches_reference():
    cc = intervals(2)
    table, probs = a_sta_table(cc, 3, 1, 0.5, representative="last")
    _assert_table_matches(table, probs, labeled_records(2),
                          lambda S, x: a_sta_reference(cc, S, x, n_prime=1, em_privacy=0.5, representative="last"), 2)


def test_a_sta_reference_is_exchangeable():
    # Proved on every ordering (4^3 = 64 ordered datasets).
    cc = thresholds(2)

    def mechanism(S):
        return a_sta_reference(cc, S, 1, n_prime=2, em_privacy=0.5)

    assert check_exchangeable(mechanism, labeled_records(2), 3) is None


def test_a_sta_rows_are_distributions():
    _, probs = a_sta_table(thresholds(3), 6, 2, Fraction(1, 3))
    assert np.abs(probs.sum(axis=2) - 1).max() < 1e-14
    assert probs.min() >= 0


# -- Lemma 8 -----------------------------------------------------------------------------------------


def test_subsampled_prediction_hand_instance():
    # S = ((0, 0), (1, 1)), n' = 1, C6 at eps = 1 with one part: P(1) = e^{v/2} / (e^{v/2} + e^{(1-v)/2}).
    # Record (0, 0): g = first concept labeling 0 with 0 = c1 = (0, 1).
    # Record (1, 1): g = first concept labeling 1 with 1 = c0 = (1, 1).
    # x = 1: both vote 1 -> P(1) = 1/(1 + e^{-1/2}) = 0.6224593312018546.
    # x = 0: c1 votes 0 -> P(1) = 1/(1 + e^{1/2}) = 0.3775406687981454; c0 votes 1 -> 0.6224593312018546;
    #        mixture 1/2.
    cc = thresholds(2)
    S = ((0, 0), (1, 1))
    assert subsampled_prediction_reference(cc, S, 1, n_prime=1, epsilon=1)[1] == pytest.approx(SIGMOID_HALF, rel=1e-15)
    assert subsampled_prediction_reference(cc, S, 0, n_prime=1, epsilon=1)[1] == pytest.approx(0.5, rel=1e-15)


def test_exponential_inner_predictor_hand_instance():
    # EM over thresholds(2) at eps = 1 on ((1, 0),): mistakes c0: 1, c1: 1, c2: 0.
    # Weights e^{-1/2}, e^{-1/2}, 1; query 0 labels: 1, 0, 0 -> P(1) = e^{-1/2} / (2 e^{-1/2} + 1)
    # = 0.6065306597126334 / 2.2130613194252668 = 0.2740686...
    predict = inner_predictor(thresholds(2), 0, 1, inner="exponential")
    s = math.exp(-0.5)
    assert predict(((1, 0),))[1] == pytest.approx(s / (2 * s + 1), rel=1e-15)


@pytest.mark.parametrize("inner", ["realizable", "exponential"])
@pytest.mark.parametrize("cc, n, n_prime", [(thresholds(3), 4, 2), (intervals(2), 4, 1)])
def test_subsampled_prediction_fast_matches_reference(cc, n, n_prime, inner):
    table, probs = subsampled_prediction_table(cc, n, n_prime, 0.5, inner=inner)
    _assert_table_matches(table, probs, labeled_records(cc.domain_size),
                          lambda S, x: subsampled_prediction_reference(cc, S, x, n_prime=n_prime, epsilon=0.5, inner=inner),
                          cc.domain_size)


def test_inner_predictor_misuse():
    with pytest.raises(InvalidArgument, match="unknown inner predictor"):
        inner_predictor(thresholds(2), 0, 1, inner="nope")
    with pytest.raises(InvalidArgument, match="unknown inner predictor"):
        subsampled_prediction_table(thresholds(2), 3, 1, 1, inner="nope")


# -- Appendix C ----------------------------------------------------------------------------------------


def test_appendix_c_hand_instance():
    # S = ((0, 1), (1, 1)), n = 2, n' = 1, eta = 1/2: lambda_h = exp(-L_S(h)/eta) = exp(-mistakes_S(h)),
    # phi at privacy 1/(eta n) = 1: P(1) = e^{v/2} / (e^{v/2} + e^{(2-v)/2}) for v votes out of 2.
    # mistakes: c0 = (1,1): 0, c1 = (0,1): 1, c2 = (0,0): 2.
    # phi(c0): S_h = ((0,1),(1,1)), both records -> g = c0: v = 2 at x = 0 and 1 -> e/(e+1) = 0.7310585786300049.
    # phi(c1): S_h = ((0,0),(1,1)), g = c1, c0: x = 0: v = 1 -> 1/2; x = 1: v = 2 -> e/(e+1).
    # phi(c2): S_h = ((0,0),(1,0)), g = c1, c2: x = 0: v = 0 -> 1/(1+e); x = 1: v = 1 -> 1/2.
    # I = {0}: H = {c0, c1}, lambda 1, e^{-1}:
    #   x = 0: (e/(e+1) + e^{-1}/2) / (1 + e^{-1}) = 0.6689173560735207;  x = 1: e/(e+1) = 0.7310585786300049
    # I = {1}: H = {c0, c2}, lambda 1, e^{-2}:
    #   x = 0: (e/(e+1) + e^{-2}/(1+e)) / (1 + e^{-2}) = 0.6759728631680573
    #   x = 1: (e/(e+1) + e^{-2}/2) / (1 + e^{-2}) = 0.703515720899031
    # Average: x = 0: 0.672445109620789, x = 1: 0.7172871497645179.
    cc = thresholds(2)
    S = ((0, 1), (1, 1))
    assert appendix_c_reference(cc, S, 0, n_prime=1, eta=0.5)[1] == pytest.approx(0.672445109620789, rel=1e-14)
    assert appendix_c_reference(cc, S, 1, n_prime=1, eta=0.5)[1] == pytest.approx(0.7172871497645179, rel=1e-14)
    table, probs = appendix_c_table(cc, 2, 1, Fraction(1, 2))
    row = table.index(np.array([[0, 1, 0, 1]]))[0]
    assert probs[row, :, 1] == pytest.approx([0.672445109620789, 0.7172871497645179], rel=1e-14)


def test_appendix_c_consistent_phi_hand_instance():
    # The mutant phi: first concept agreeing with h on S's points. S = ((0, 1), (1, 1)) as above:
    # phi(c0) = c0, phi(c1) = c1, phi(c2) = c2 (each is the first with its labels on {0, 1}).
    # I = {0}: x = 0: (1 * 1 + e^{-1} * 0) / (1 + e^{-1}) = 1/(1 + e^{-1}) = 0.7310585786300049
    # I = {1}: x = 0: (1 * 1 + e^{-2} * 0) / (1 + e^{-2}) = 0.8807970779778823
    # Average 0.8059278283039436.
    cc = thresholds(2)
    answer = appendix_c_reference(cc, ((0, 1), (1, 1)), 0, n_prime=1, eta=0.5, phi="mutant_consistent")
    assert answer[1] == pytest.approx((1 / (1 + math.exp(-1)) + 1 / (1 + math.exp(-2))) / 2, rel=1e-15)


@pytest.mark.parametrize("phi", ["realizable", "mutant_consistent"])
@pytest.mark.parametrize("cc, n, n_prime, eta", [(thresholds(3), 4, 2, Fraction(1, 2)), (intervals(2), 4, 1, Fraction(1, 4)),
                                                 (thresholds(2), 5, 3, Fraction(1, 3))])
def test_appendix_c_fast_matches_reference(cc, n, n_prime, eta, phi):
    table, probs = appendix_c_table(cc, n, n_prime, eta, phi=phi)
    _assert_table_matches(table, probs, labeled_records(cc.domain_size),
                          lambda S, x: appendix_c_reference(cc, S, x, n_prime=n_prime, eta=eta, phi=phi), cc.domain_size)


def test_appendix_c_misuse():
    with pytest.raises(InvalidArgument, match="unknown phi learner"):
        appendix_c_table(thresholds(2), 3, 1, 0.5, phi="nope")
    with pytest.raises(InvalidArgument, match=r"n' must be an integer in \[1, n=3\]"):
        appendix_c_reference(thresholds(2), ((0, 0),) * 3, 0, n_prime=4, eta=0.5)


# -- eta-nets -------------------------------------------------------------------------------------------


def test_not_net_hand_instance():
    # S = ((0, 0), (1, 1), (1, 1)), n' = 2, eta = 1/3: the net may miss eta (n - 1) = 2/3 records.
    # Changed index 0: R = ((1,1), (1,1)); J = one record at point 1: c0, c1 agree there and differ
    #   only at point 0, where R has no record (0 <= 2/3): a net. |I''| = 0.
    # Changed index 1: R = ((0,0), (1,1)).
    #   J = {(0,0)}: c1, c2 agree at 0 and differ at 1, where R has 1 record > 2/3: not a net.
    #   J = {(1,1)}: c0, c1 agree at 1 and differ at 0, where R has 1 record: not a net.
    #   |I''| = 2 of C(3, 2) = 3 index sets: 2/3.
    cc = thresholds(2)
    S = ((0, 0), (1, 1), (1, 1))
    assert not_net_reference(cc, S, 0, 2, Fraction(1, 3)) == 0
    assert not_net_reference(cc, S, 1, 2, Fraction(1, 3)) == Fraction(2, 3)
    rests, fraction = not_net_table(cc, 3, 2, Fraction(1, 3))
    assert fraction[rests.index(np.array([[0, 0, 0, 2]]))[0]] == 0
    assert fraction[rests.index(np.array([[1, 0, 0, 1]]))[0]] == 1  # conditional share: 2/2 of the J's


def test_not_net_boundary_is_exact():
    # thresholds(2), n = 4, n' = 2: J is one record of R = ((0, 0), (1, 1), (1, 1)).
    #   J at point 0 (1 of the 3 J's): c1, c2 agree there, differ at point 1: 2 records of R.
    #   J at point 1 (2 of 3): c0, c1 agree there, differ at point 0: 1 record of R.
    # eta = 2/3: eta (n - 1) = 2 exactly, and "at most" includes it: every J is a net.
    # eta = 1/2: eta (n - 1) = 3/2 < 2: the J at point 0 fails: share 1/3, |I''|/C(4, 2) = 1/6.
    cc = thresholds(2)
    S = ((0, 0), (0, 0), (1, 1), (1, 1))  # changed index 0 leaves R = ((0,0), (1,1), (1,1))
    assert not_net_reference(cc, S, 0, 2, Fraction(2, 3)) == 0
    assert not_net_reference(cc, S, 0, 2, Fraction(1, 2)) == Fraction(1, 6)
    R = np.array([[1, 0, 0, 2]])
    rests, fraction = not_net_table(cc, 4, 2, Fraction(2, 3))
    assert fraction[rests.index(R)[0]] == 0
    rests, fraction = not_net_table(cc, 4, 2, Fraction(1, 2))
    assert fraction[rests.index(R)[0]] == pytest.approx(1 / 3, rel=1e-15)


@pytest.mark.parametrize("cc, n, n_prime, eta", [(thresholds(3), 5, 2, Fraction(1, 2)), (intervals(2), 4, 3, Fraction(1, 3)),
                                                 (thresholds(2), 4, 1, Fraction(1, 4))])
def test_not_net_fast_matches_reference(cc, n, n_prime, eta):
    universe = labeled_records(cc.domain_size)
    rests, fraction = not_net_table(cc, n, n_prime, eta)
    from dpverify.finite.multisets import table

    datasets = table(len(universe), n)
    for row in range(len(datasets)):
        S = datasets.records(row, universe)
        for changed in range(n):
            R = S[:changed] + S[changed + 1:]
            r = rests.index(np.array([[R.count(u) for u in universe]]))[0]
            assert float(not_net_reference(cc, S, changed, n_prime, eta)) == pytest.approx(n_prime / n * fraction[r], abs=1e-15)


# -- flip -------------------------------------------------------------------------------------------------


def test_flip_probs_is_label_flip():
    # P = (1/4, 3/4), alpha = 1/10: P'(1) = 9/10 * 3/4 + 1/10 * 1/4 = 7/10 (as in test_label_flip).
    probs = np.array([[[0.25, 0.75]]])
    flipped = flip_rows(probs, Fraction(1, 10))
    expected = flip(Distribution({0: 0.25, 1: 0.75}), 0.1)
    assert flipped[0, 0] == pytest.approx([expected[0], expected[1]], rel=1e-15)
    assert flipped[0, 0, 1] == pytest.approx(0.7, rel=1e-15)


# -- slow: larger instances ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_fast_tables_match_references_on_larger_instances():
    cc = thresholds(3)
    universe = labeled_records(3)
    table, probs = a_sta_table(cc, 6, 2, Fraction(1, 3))
    _assert_table_matches(table, probs, universe,
                          lambda S, x: a_sta_reference(cc, S, x, n_prime=2, em_privacy=Fraction(1, 3)), 3)
    table, probs = appendix_c_table(cc, 6, 2, Fraction(1, 3))
    _assert_table_matches(table, probs, universe,
                          lambda S, x: appendix_c_reference(cc, S, x, n_prime=2, eta=Fraction(1, 3)), 3)
