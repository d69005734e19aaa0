"""Tests of dpverify.verdict.rows: worst case over row pairs and the engine's verdict states (hand examples)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpverify.verdict.engine import DEFAULT_FLOAT_ERROR, RowPairs, Verdict
from dpverify.verdict.rows import decide_parts, decide_rows, multiset_neighbors, pairwise_worst

LN3 = math.log(3)  # 1.0986122886681098
LN2 = math.log(2)  # 0.6931471805599453


def _rows(*rows):
    return np.array(rows, dtype=float)


# -- pairwise_worst: randomized response rows -------------------------------------------------------


def test_randomized_response_rows():
    # RR with p = 3/4: P = (3/4, 1/4), Q = (1/4, 3/4).
    # eps* = ln((3/4)/(1/4)) = ln 3.
    # delta at eps = ln 2: max(0, 3/4 - 2 * 1/4) + max(0, 1/4 - 2 * 3/4) = 1/4 + 0 = 1/4.
    worst = pairwise_worst(_rows([0.75, 0.25]), _rows([0.25, 0.75]), epsilon=LN2)
    assert worst.epsilon_star == pytest.approx(LN3, rel=1e-15)
    assert worst.delta_star == pytest.approx(0.25, abs=1e-16)
    assert worst.epsilon_pair == 0 and worst.delta_pair == 0


def test_randomized_response_delta_at_zero_is_total_variation():
    # eps = 0: sum max(0, P - Q) = 3/4 - 1/4 = 1/2 (total variation distance).
    worst = pairwise_worst(_rows([0.75, 0.25]), _rows([0.25, 0.75]), epsilon=0.0)
    assert worst.delta_star == pytest.approx(0.5, abs=1e-16)


def test_delta_zero_at_or_above_epsilon_star():
    # At eps = ln 3 exactly: 3/4 - 3 * 1/4 = 0 (up to rounding of e^{ln 3}); above it, exactly 0.
    worst = pairwise_worst(_rows([0.75, 0.25]), _rows([0.25, 0.75]), epsilon=LN3)
    assert worst.delta_star <= 1e-15
    assert pairwise_worst(_rows([0.75, 0.25]), _rows([0.25, 0.75]), epsilon=1.2).delta_star == 0.0


def test_identical_rows_give_zero():
    worst = pairwise_worst(_rows([0.5, 0.5], [0.2, 0.8]), _rows([0.5, 0.5], [0.2, 0.8]), epsilon=0.0)
    assert worst.epsilon_star == 0.0
    assert worst.delta_star == 0.0


def test_worst_pair_index_among_several():
    # Pair 0: identical (eps 0). Pair 1: RR 3/4 (eps ln 3). Pair 2: RR 9/10 (eps ln 9 = 2.197).
    # delta at eps = 0: pair 1 gives 1/2, pair 2 gives 0.9 - 0.1 = 0.8.
    left = _rows([0.5, 0.5], [0.75, 0.25], [0.9, 0.1])
    right = _rows([0.5, 0.5], [0.25, 0.75], [0.1, 0.9])
    worst = pairwise_worst(left, right, epsilon=0.0)
    assert worst.epsilon_pair == 2
    assert worst.epsilon_star == pytest.approx(math.log(9), rel=1e-14)
    assert worst.delta_pair == 2
    assert worst.delta_star == pytest.approx(0.8, abs=1e-15)


# -- infinity and direction -----------------------------------------------------------------------


def test_infinite_loss_when_p_positive_and_q_zero():
    # P = (1, 0), Q = (1/2, 1/2). Forward (P||Q): ln(1 / (1/2)) = ln 2 on outcome 0.
    # Backward (Q||P): Q(1) = 1/2 > 0 = P(1): infinite.
    left, right = _rows([1.0, 0.0]), _rows([0.5, 0.5])
    symmetric = pairwise_worst(left, right, epsilon=LN2)
    assert symmetric.epsilon_star == math.inf
    assert symmetric.epsilon_forward is False  # attained right -> left
    # delta at eps = ln 2: forward 1 - 2 * 1/2 = 0; backward on outcome 1: 1/2 - 2 * 0 = 1/2.
    assert symmetric.delta_star == pytest.approx(0.5, abs=1e-16)
    assert symmetric.delta_forward is False


def test_directed_ignores_the_backward_direction():
    left, right = _rows([1.0, 0.0]), _rows([0.5, 0.5])
    directed = pairwise_worst(left, right, epsilon=LN2, symmetric=False)
    # Only left -> right: eps* = ln 2, delta(ln 2) = max(0, 1 - 2 * 1/2) = 0.
    assert directed.epsilon_star == pytest.approx(LN2, rel=1e-15)
    assert directed.epsilon_forward is True
    assert directed.delta_star == pytest.approx(0.0, abs=1e-16)
    # And swapping the arguments makes the directed loss infinite.
    swapped = pairwise_worst(right, left, epsilon=LN2, symmetric=False)
    assert swapped.epsilon_star == math.inf
    assert swapped.delta_star == pytest.approx(0.5, abs=1e-16)


def test_directed_loss_can_be_smaller_than_symmetric():
    # P = (0.6, 0.4), Q = (0.3, 0.7): forward max(ln 2, ln(4/7)) = ln 2;
    # backward max(ln(1/2), ln(7/4)) = ln 1.75 = 0.5596 < ln 2. Symmetric = ln 2 (forward).
    left, right = _rows([0.6, 0.4]), _rows([0.3, 0.7])
    assert pairwise_worst(left, right, epsilon=0.0).epsilon_star == pytest.approx(LN2, rel=1e-14)
    assert pairwise_worst(right, left, epsilon=0.0, symmetric=False).epsilon_star == pytest.approx(
        math.log(1.75), rel=1e-14
    )


def test_worst_pair_found_beyond_the_first_chunk():
    # 70000 > 65536 rows: the only non-identical pair is the last one (index 69999).
    n = 70_000
    left = np.tile([0.5, 0.5], (n, 1))
    right = left.copy()
    left[-1] = [0.75, 0.25]
    right[-1] = [0.25, 0.75]
    worst = pairwise_worst(left, right, epsilon=0.0)
    assert worst.epsilon_pair == n - 1 and worst.delta_pair == n - 1
    assert worst.epsilon_star == pytest.approx(LN3, rel=1e-15)
    assert worst.delta_star == pytest.approx(0.5, abs=1e-16)


# -- verdicts: the engine's states on row pairs ----------------------------------------------------
# Rows computed in float carry the default float error rho = 2**20 u / (1 - 2**20 u) ~ 1.164e-10
# per probability (dpverify.verdict.engine). A pair is HOLDS if the largest admissible hockey-stick value
# sum max(0, P(1 + rho) - e^eps Q(1 - rho)) <= delta, VIOLATED if the smallest
# sum max(0, P(1 - rho) - e^eps Q(1 + rho)) > delta, else HOLDS_WITHIN_ROUNDING.

RHO = DEFAULT_FLOAT_ERROR


def _decide(p, q, *, epsilon, delta=0.0):
    matrix = _rows(p, q)
    return decide_rows(matrix, np.array([0]), np.array([1]), epsilon=epsilon, delta=delta)


def test_default_float_error_value():
    assert RHO == pytest.approx(1.1641532182693481e-10, rel=1e-12)


def test_pure_verdict_around_the_rounding_band():
    rr = ([0.75, 0.25], [0.25, 0.75])
    # Largest admissible value at eps = ln 3 + t: 0.75 (1 + rho) - 3 e^t 0.25 (1 - rho) ~ 0.75 (2 rho - t).
    assert _decide(*rr, epsilon=LN3 + 2e-9).verdict is Verdict.HOLDS  # t = 2e-9 > 2 rho
    assert _decide(*rr, epsilon=LN3 - 2e-9).verdict is Verdict.VIOLATED  # t = -2e-9 < -2 rho
    assert _decide(*rr, epsilon=LN3).verdict is Verdict.HOLDS_WITHIN_ROUNDING  # tight
    assert _decide(*rr, epsilon=LN3 + 1e-10).verdict is Verdict.HOLDS_WITHIN_ROUNDING  # t < 2 rho
    assert _decide(*rr, epsilon=LN3 - 1e-10).verdict is Verdict.HOLDS_WITHIN_ROUNDING
    assert _decide(*rr, epsilon=LN3).holds is True  # within rounding passes a gate


def test_pure_verdict_on_infinite_loss_is_violated():
    decision = _decide([1.0, 0.0], [0.5, 0.5], epsilon=100.0)
    assert decision.verdict is Verdict.VIOLATED and decision.holds is False
    assert decision.epsilon_star == math.inf
    # The violating direction is Q -> P: outcome 1 has Q(1) = 1/2 > e^100 * P(1) = 0.
    w = decision.witness
    assert (w.dataset, w.neighbor) == (1, 0)
    assert w.output_set == frozenset({1}) and w.p == 0.5 and w.q == 0


def test_delta_verdict_around_the_rounding_band():
    # RR 3/4 at eps = ln 2: delta* = 3/4 - 2/4 = 1/4; admissible values 1/4 +- 1.25 rho (~1.5e-10).
    rr = ([0.75, 0.25], [0.25, 0.75])
    assert _decide(*rr, epsilon=LN2, delta=0.25 + 4e-9).verdict is Verdict.HOLDS
    assert _decide(*rr, epsilon=LN2, delta=0.25 - 4e-9).verdict is Verdict.VIOLATED
    assert _decide(*rr, epsilon=LN2, delta=0.25).verdict is Verdict.HOLDS_WITHIN_ROUNDING
    assert _decide(*rr, epsilon=LN2, delta=0.25 + 1e-10).verdict is Verdict.HOLDS_WITHIN_ROUNDING
    assert _decide(*rr, epsilon=LN2, delta=0.25 - 1e-10).verdict is Verdict.HOLDS_WITHIN_ROUNDING


def test_delta_verdict_ignores_infinite_pure_loss():
    # P = (1, 0) vs Q = (1/2, 1/2): eps* = inf, but delta(ln 2) = 1/2, so (ln 2, 0.6) holds and
    # (ln 2, 0.4) does not.
    assert _decide([1.0, 0.0], [0.5, 0.5], epsilon=LN2, delta=0.6).verdict is Verdict.HOLDS
    assert _decide([1.0, 0.0], [0.5, 0.5], epsilon=LN2, delta=0.4).verdict is Verdict.VIOLATED


def test_verdict_never_holds_for_a_violated_claim_on_rr():
    # A checker that says private wrongly is worse than none: RR 3/4 is not (1.0, 0)-DP.
    rr = ([0.75, 0.25], [0.25, 0.75])
    assert _decide(*rr, epsilon=1.0).verdict is Verdict.VIOLATED
    # delta(1.0) = 3/4 - e * 1/4 = 0.0704295428852...; a delta of 0.07 is violated, 0.071 holds.
    decision = _decide(*rr, epsilon=1.0, delta=0.07)
    assert decision.delta_star == pytest.approx(0.75 - math.e / 4, rel=1e-14)
    assert decision.verdict is Verdict.VIOLATED
    assert decision.witness.p == 0.75 and decision.witness.q == 0.25
    assert _decide(*rr, epsilon=1.0, delta=0.071).verdict is Verdict.HOLDS


def test_parts_combine_worst_state_first():
    rr = ([0.75, 0.25], [0.25, 0.75])
    parts = [("a", _decide(*rr, epsilon=LN3 + 1e-6)), ("b", _decide(*rr, epsilon=LN3)),
             ("c", _decide(*rr, epsilon=1.0))]
    combined = decide_parts(parts)
    assert combined.verdict is Verdict.VIOLATED and combined.witness_part == "c"
    assert combined.witness_text(lambda part: f"part {part}").startswith("part c\n")
    within = decide_parts(parts[:2])
    assert within.verdict is Verdict.HOLDS_WITHIN_ROUNDING and within.holds and within.witness_part == "b"
    assert decide_parts(parts[:1]).verdict is Verdict.HOLDS


def test_witness_must_be_a_neighbour_pair():
    # The engine checks every witness with the relation's predicate: a wrong pair is an internal
    # error raised loudly, never a verdict.
    with pytest.raises(AssertionError, match="not a neighbour pair"):
        decide_rows(_rows([1.0, 0.0], [0.0, 1.0]), np.array([0]), np.array([1]), epsilon=1.0,
                    label=lambda row: ("a", "b") if row == 0 else ("c", "d"), is_neighbor=multiset_neighbors)


def test_pair_count_is_checked():
    with pytest.raises(AssertionError, match="3 expected"):
        RowPairs(_rows([1.0], [1.0]), np.array([0, 0]), np.array([1, 1]), expected_pairs=3)
