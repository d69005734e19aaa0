"""Tests of dpverify.checking.input_pairs: verify_pairs, the query_vectors relation, StatDP's patterns."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from dpverify import Verdict, verify
from dpverify.checking.checker import VerificationResult
from dpverify.checking.input_pairs import InputPairs, all_query_vectors, query_vectors, statdp_patterns, verify_pairs
from dpverify.errors import InvalidArgument
from dpverify.mechanisms.noisy_max import ReportNoisyMax
from dpverify.mechanisms.sparse_vector import svt

EPS = Fraction(7, 10)


def test_statdp_patterns_are_statdps_list():
    pairs = list(statdp_patterns(5))
    ones = (1, 1, 1, 1, 1)
    assert pairs == [
        (ones, (0, 1, 1, 1, 1)),  # one below
        (ones, (2, 1, 1, 1, 1)),  # one above
        (ones, (2, 0, 0, 0, 0)),  # one above, rest below
        (ones, (0, 2, 2, 2, 2)),  # one below, rest above
        (ones, (2, 2, 0, 0, 0)),  # half/half: [2]*(5//2) + [0]*(5 - 5//2)
        (ones, (2, 2, 2, 2, 2)),  # all above
        (ones, (0, 0, 0, 0, 0)),  # all below
        ((1, 1, 0, 0, 0), (0, 0, 1, 1, 1)),  # X shape
    ]
    assert statdp_patterns(5).name == "statdp_patterns"
    assert list(statdp_patterns(3, differ="one")) == [((1, 1, 1), (0, 1, 1)), ((1, 1, 1), (2, 1, 1))]


def test_statdp_patterns_k1_drops_coinciding_pairs():
    # k = 1: [2,0..] = [2] = all above, [0,2..] = [0] = all below, half/half = [0], and the X shape
    # ([0], [1]) is one below swapped: two distinct pairs remain.
    assert list(statdp_patterns(1)) == [((1,), (0,)), ((1,), (2,))]


@pytest.mark.parametrize("differ", ["all", "one"])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_query_vectors_enumeration_matches_definition_and_count(differ, k):
    relation = query_vectors(1, differ=differ)
    pairs = relation.pairs(range(3), k, exchangeable=False)
    found = {frozenset((pairs.datasets[i], pairs.datasets[j])) for i, j in zip(pairs.left, pairs.right)}
    expected = set()
    for a, b in itertools.combinations(itertools.product(range(3), repeat=k), 2):
        moved = [abs(x - y) for x, y in zip(a, b) if x != y]
        if max(moved) <= 1 and (differ == "all" or len(moved) == 1):
            expected.add(frozenset((a, b)))
    assert found == expected
    assert len(pairs) == len(found) == relation.count(3, k, exchangeable=False)


def test_query_vectors_counts_by_hand():
    # all differ over {0,1,2}: per coordinate 7 ordered (a, b) with |a - b| <= 1, so
    # (7^5 - 3^5) / 2 = (16807 - 243) / 2 = 8282 unordered pairs for k = 5.
    assert query_vectors().count(3, 5, exchangeable=False) == 8282
    # one differs: 5 positions * 3^4 contexts * 2 moves (0-1, 1-2) = 810.
    assert query_vectors(differ="one").count(3, 5, exchangeable=False) == 810
    assert len(all_query_vectors(5)) == 8282 and all_query_vectors(5).name == "all_vectors_m2"


def test_query_vectors_is_neighbor():
    rel = query_vectors()
    assert rel.is_neighbor((1, 1), (2, 0), exchangeable=False)
    assert not rel.is_neighbor((1, 1), (1, 1), exchangeable=False)
    assert not rel.is_neighbor((0, 1), (2, 1), exchangeable=False)
    one = query_vectors(differ="one")
    assert one.is_neighbor((1, 1), (1, 2), exchangeable=False)
    assert not one.is_neighbor((1, 1), (2, 2), exchangeable=False)


def test_query_vectors_refuses_bad_options():
    with pytest.raises(InvalidArgument, match="differ"):
        query_vectors(differ="some")
    with pytest.raises(InvalidArgument, match="sensitivity"):
        query_vectors(0)
    with pytest.raises(InvalidArgument, match="exchangeable"):
        query_vectors().pairs(range(3), 2, exchangeable=True)


def test_verify_pairs_refuses_identical_and_non_neighbour_pairs():
    mechanism = ReportNoisyMax(EPS)
    with pytest.raises(InvalidArgument, match="itself"):
        verify_pairs(mechanism, pairs=[((1, 1), (1, 1))], epsilon=EPS)
    with pytest.raises(InvalidArgument, match="not a neighbour pair"):
        verify_pairs(mechanism, pairs=[((0, 0), (2, 0))], epsilon=EPS, neighbors=query_vectors())
    with pytest.raises(InvalidArgument, match="at least one"):
        verify_pairs(mechanism, pairs=[], epsilon=EPS)


def test_verify_pairs_result_is_a_verification_result_with_given_pair_witness():
    # Lap(1/eps) instead of Lap(2/eps): the mutant of report noisy max must be caught.
    mutant = ReportNoisyMax(EPS, scale_factor=1)
    result = verify_pairs(mutant, pairs=statdp_patterns(5), epsilon=EPS)
    assert isinstance(result, VerificationResult)
    assert result.verdict is Verdict.VIOLATED and not result.holds
    given = {frozenset(p) for p in statdp_patterns(5)}
    assert frozenset((result.witness.dataset, result.witness.neighbor)) in given
    assert result.witness.excess > 0
    assert result.epsilon > 0.7


def test_verify_pairs_on_lists_and_the_full_enumeration_agree_with_verify():
    mechanism = ReportNoisyMax(EPS)
    by_pairs = verify_pairs(mechanism, pairs=all_query_vectors(3), epsilon=EPS)
    by_verify = verify(mechanism, records=range(3), n=3, neighbors=query_vectors(), epsilon=EPS)
    assert by_pairs.verdict is by_verify.verdict is Verdict.HOLDS
    assert by_pairs.epsilon == pytest.approx(by_verify.epsilon, rel=1e-15)
    listed = verify_pairs(mechanism, pairs=[[[1, 1, 1], [2, 0, 0]]], epsilon=EPS)
    assert listed.pairs == 1 and listed.worst_pair in {((1, 1, 1), (2, 0, 0)), ((2, 0, 0), (1, 1, 1))}


def test_exact_tie_holds_exactly():
    # Report noisy max with one-sided Exp(2/eps) on [1]*5 vs [0,2,2,2,2]: P_D(0) = 1/5 by symmetry and
    # P_D'(0) = P(E_0 > 2 + max_j E_j) = e^{-2/s} E[e^{-M/s}] = e^{-eps}/5 (memorylessness, s = 2/eps),
    # so the loss is exactly eps: HOLDS (proved), not within rounding.
    result = verify_pairs(ReportNoisyMax(EPS, "exponential"), pairs=[((1,) * 5, (0, 2, 2, 2, 2))], epsilon=EPS)
    assert result.verdict is Verdict.HOLDS
    assert result.epsilon == pytest.approx(0.7, rel=1e-12)


def test_infinite_loss_witness_svt5():
    # Algorithm 5 (no query noise), T = 1: on [1]*k the answers are all ⊤ (rho <= 0) or all ⊥; on
    # [0, 1, ...] the string ⊥⊤⊤... has probability P(-1 < rho <= 0) > 0: P > 0 = Q, eps* = inf.
    result = verify_pairs(svt(5, epsilon=EPS), pairs=statdp_patterns(4), epsilon=EPS)
    assert result.verdict is Verdict.VIOLATED and result.epsilon == float("inf")
    assert float(result.witness.q) == 0.0 and float(result.witness.p) > 0


def test_input_pairs_from_pairs_dedupes_swapped_pairs():
    pairs = InputPairs.from_pairs([((0,), (1,)), ((1,), (0,))])
    assert len(pairs) == 1 and len(pairs.datasets) == 2


def test_the_default_profile_on_given_pairs_is_made_in_one_pass_and_equals_the_explicit_grid(monkeypatch):
    # issue 37: profile=True on pairs decided the pairs twice (the grid needs eps*); now the grid is made from
    # the one decision's eps*, with the same points and figures as asking for them explicitly
    from fractions import Fraction

    import dpverify
    from dpverify.checking import input_pairs
    from dpverify.verdict.privacy_loss import profile_grid

    def rr(dataset):  # eps* = ln 3
        return {dataset[0]: Fraction(3, 4), 1 - dataset[0]: Fraction(1, 4)}

    pairs = [((0,), (1,))]
    calls = []
    original = input_pairs._decide_inputs
    monkeypatch.setattr(input_pairs, "_decide_inputs", lambda *a, **k: calls.append(1) or original(*a, **k))
    once = dpverify.verify(rr, pairs, dpverify.PureDp(1.2), profile=True)
    assert len(calls) == 1
    explicit = dpverify.verify(rr, pairs, dpverify.PureDp(1.2), profile=profile_grid(once.epsilon, 1.2))
    assert once.profile == explicit.profile and len(once.profile) > 2
