"""Verdicts on outputs with unexplored mass (sub-distributions), decided soundly by the one engine.

Notation (dpverify/verdict/_unexplored.py): ``P_e`` the explored part of an output, ``m`` the bound
on its unexplored mass, ``H_e = sum_o max(0, P_e(o) - e^eps Q_e(o))``. A claim holds when
``H_e(i, j) + m_i <= delta`` on every directed pair, is violated when ``H_e(i, j) - e^eps m_j > delta``
on one, and is UNDECIDED in between. Every expectation below is worked out by hand.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from fractions import Fraction as F

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify import Distribution, InvalidArgument, Verdict, analyze, verify
from dpverify.checking import _blocks
from dpverify.checking.input_pairs import verify_pairs
from dpverify.errors import EnumerationTooLarge, NondeterministicMechanism
from dpverify.integrations import contract
from dpverify.verdict import engine
from dpverify.verdict.claims import Stability
from dpverify.verdict.engine import RowPairs, decide, decide_pair
from dpverify.verdict.privacy_loss import epsilon_star

M = F(1, 64)  # the unexplored mass of every randomized-response output below


def rr_row(bit: int, m: F = M) -> Distribution:
    """Randomized response (p = 3/4) on ``bit`` with a fraction ``m`` of its paths unexplored:
    P_e(bit) = 3/4 (1 - m), P_e(1 - bit) = 1/4 (1 - m); with m = 1/64: 189/256 and 63/256."""
    return Distribution({bit: F(3, 4) * (1 - m), 1 - bit: F(1, 4) * (1 - m)}, unexplored=m)


def rr(dataset: tuple) -> Distribution:
    """The mechanism: randomized response on the first record."""
    return rr_row(dataset[0])


def _pair(epsilon, delta, p=None, q=None):
    return decide_pair(rr_row(0) if p is None else p, rr_row(1) if q is None else q, epsilon, delta)


# -- the three outcomes, by hand --------------------------------------------------------------------

# eps = 0: H_e = 189/256 - 63/256 = 126/256 = 63/128 (on S = {0} from D, on {1} from D': symmetric),
# m = 1/64 = 2/128 on both rows. HOLDS iff 63/128 + 2/128 = 65/128 <= delta; VIOLATED iff
# 63/128 - e^0 2/128 = 61/128 > delta.
@pytest.mark.parametrize("delta, verdict", [
    (F(65, 128), Verdict.HOLDS),        # H_e + m = 65/128 = delta: proved at the exact tie
    (F(1, 2), Verdict.UNDECIDED),       # 61/128 <= 64/128 < 65/128
    (F(61, 128), Verdict.UNDECIDED),    # H_e - m = 61/128 is not > 61/128
    (F(60, 128), Verdict.VIOLATED),     # 61/128 > 60/128
    (F(1, 4), Verdict.VIOLATED),
])
def test_randomized_response_with_unexplored_mass_at_epsilon_zero(delta, verdict):
    decision = _pair(0, delta)
    assert decision.verdict is verdict
    assert decision.unexplored == 1 / 64
    assert decision.delta_star == 63 / 128  # the explored figure: H_e
    assert (decision.reason != "") == (verdict is Verdict.UNDECIDED)


# eps = ln 2: H_e = max(0, 189/256 - 2 * 63/256) = 63/256. HOLDS iff 63/256 + 4/256 = 67/256 <= delta;
# VIOLATED iff 63/256 - 2 * 4/256 = 55/256 > delta.
@pytest.mark.parametrize("delta, verdict", [
    (F(67, 256), Verdict.HOLDS),
    (F(66, 256), Verdict.UNDECIDED),
    (F(55, 256), Verdict.UNDECIDED),
    (F(54, 256), Verdict.VIOLATED),
])
def test_randomized_response_with_unexplored_mass_at_ln2(delta, verdict):
    assert _pair(sympy.log(2), delta).verdict is verdict


def test_the_violation_witness_allows_for_the_neighbours_unexplored_mass():
    # eps = ln 2, delta = 54/256: S = {0}, P_e(S) = 189/256, Q_e(S) = 63/256, m_Q = 1/64 = 4/256:
    # 189/256 > 2 (63/256 + 4/256) + 54/256 = 188/256, so P(S) > e^eps Q(S) + delta however the
    # unexplored mass falls.
    witness = _pair(sympy.log(2), F(54, 256)).witness
    assert (witness.dataset, witness.neighbor, witness.output_set) == ("D", "D'", frozenset({0}))
    assert (witness.p, witness.q, witness.unexplored, witness.delta) == (F(189, 256), F(63, 256), F(1, 64), F(54, 256))
    assert witness.excess == pytest.approx(1 / 256)  # 189/256 - 188/256
    text = str(witness)
    assert "P[M(D') in S] <= 0.24609375 (explored) + 0.015625 (unexplored) = 0.26171875" in text
    assert "check: 0.73828125 > e^eps * 0.26171875 + delta = 0.734375" in text  # 188/256 = 0.734375


# eps = ln 3 (exact): P_e(0) = 189/256 = 3 * 63/256 = 3 Q_e(0), an exact tie: H_e = 0. HOLDS iff
# 0 + 1/64 <= delta; never VIOLATED (0 - 3/64 < 0 <= delta).
@pytest.mark.parametrize("delta, verdict", [
    (F(1, 64), Verdict.HOLDS),
    (F(1, 65), Verdict.UNDECIDED),
    (0, Verdict.UNDECIDED),  # a pure claim with unexplored mass is never proved
])
def test_an_exact_tie_holds_only_once_delta_covers_the_unexplored_mass(delta, verdict):
    decision = _pair(sympy.log(3), delta)
    assert decision.verdict is verdict
    assert decision.delta_star == 0.0 and decision.epsilon_star == math.log(3)


def test_a_pure_claim_with_unexplored_mass_is_undecided_unless_violated():
    # eps = 2: e^2 = 7.39 > 3 = P_e(0) / Q_e(0), H_e = 0 < 0 + 1/64: never proved, never violated.
    decision = _pair(2, 0)
    assert decision.verdict is Verdict.UNDECIDED
    assert "tail=smaller" in decision.reason and "claim delta >= 0.015625" in decision.reason
    # eps = 1/2 < ln 3: H_e = 189/256 - e^(1/2) 63/256 = 0.3323 and 0.3323 - e^(1/2) / 64 = 0.3065 > 0.
    assert _pair(F(1, 2), 0).verdict is Verdict.VIOLATED


def test_the_unexplored_mass_of_the_row_that_starts_the_pair_counts():
    # eps = 0. A = {x: 3/4} with m_A = 1/4, B = {x: 1/2, y: 1/2} complete.
    # A -> B: H_e = 3/4 - 1/2 = 1/4, plus m_A: 1/2.   B -> A: H_e = 0 + 1/2 (y) = 1/2, plus m_B = 0: 1/2.
    # So delta = 1/2 holds. Charging the second row's mass instead gives B -> A: 1/2 + 1/4 = 3/4.
    a = Distribution({"x": F(3, 4)}, unexplored=F(1, 4))
    b = Distribution({"x": F(1, 2), "y": F(1, 2)})
    assert decide_pair(a, b, 0, F(1, 2)).verdict is Verdict.HOLDS
    assert decide_pair(a, b, 0, F(1, 2) - F(1, 10**6)).verdict is Verdict.UNDECIDED


def test_the_unexplored_mass_of_the_neighbour_bounds_a_violation():
    # eps = ln 2. A = {x: 1/2} with m_A = 1/2, B = {x: 1/8, y: 7/8} complete.
    # A -> B: H_e = 1/2 - 2/8 = 1/4, minus 2 m_B = 0: 1/4.   B -> A: H_e = 7/8 (y), minus 2 m_A = 1: -1/8.
    # VIOLATED iff delta < 1/4; charging the first row's mass would give B -> A: 7/8 - 0 (VIOLATED at 1/2).
    # HOLDS needs max(1/4 + 1/2, 7/8 + 0) = 7/8.
    a = Distribution({"x": F(1, 2)}, unexplored=F(1, 2))
    b = Distribution({"x": F(1, 8), "y": F(7, 8)})
    log2 = sympy.log(2)
    assert decide_pair(a, b, log2, F(1, 2)).verdict is Verdict.UNDECIDED
    violated = decide_pair(a, b, log2, F(1, 8))
    assert violated.verdict is Verdict.VIOLATED
    witness = violated.witness
    assert (witness.dataset, witness.output_set, witness.p, witness.q, witness.unexplored) == (
        "D", frozenset({"x"}), F(1, 2), F(1, 8), 0)
    assert decide_pair(a, b, log2, F(7, 8)).verdict is Verdict.HOLDS


def test_float_outputs_with_unexplored_mass():
    # The rows of the first test in floats (their rounding allowed for): at eps = 0, H_e = 0.4921875,
    # m = 0.015625: HOLDS from 0.5078125 on (0.51 is clear of it), VIOLATED below 0.4765625 (0.47).
    p = Distribution({0: 0.73828125, 1: 0.24609375}, unexplored=0.015625)
    q = Distribution({1: 0.73828125, 0: 0.24609375}, unexplored=0.015625)
    assert decide_pair(p, q, 0, 0.51).verdict is Verdict.HOLDS
    assert decide_pair(p, q, 0, 0.5).verdict is Verdict.UNDECIDED
    assert decide_pair(p, q, 0, 0.47).verdict is Verdict.VIOLATED


# -- the mutant: an engine that ignores the unexplored mass --------------------------------------


def _explored_only(pairs, epsilon, delta):
    """The mutant: decide on the explored rows as if they were the whole outputs."""
    return engine.decide(replace(pairs, unexplored=None, _explored_only=True), epsilon, delta)


def test_an_engine_that_ignores_the_unexplored_mass_is_caught(monkeypatch):
    # RR at exactly eps = ln 3 with delta = 0: the explored rows are an exact tie (H_e = 0), so the
    # mutant says HOLDS. But the completion that puts D's unexplored 1/64 on a new outcome violates
    # pure DP (P > 0 = Q there): the truth may violate, so the verdict must be UNDECIDED.
    result = verify(rr, records=[0, 1], n=1, epsilon=sympy.log(3))
    assert result.verdict is Verdict.UNDECIDED
    monkeypatch.setattr(engine, "_decide_unexplored", _explored_only)
    mutant = verify(rr, records=[0, 1], n=1, epsilon=sympy.log(3))
    assert mutant.verdict is Verdict.HOLDS  # what the expectation above catches
    completed = verify(_completion(rr, "new"), records=[0, 1], n=1, epsilon=sympy.log(3))
    assert completed.verdict is Verdict.VIOLATED  # ... and rightly: this completion is not private


# -- cross-check against completions ------------------------------------------------------------


def _complete(dist: Distribution, where: str, label) -> Distribution:
    """``dist`` with its unexplored mass put somewhere: on a new outcome of its own ("new"), on one new
    outcome every row shares ("shared"), on its likeliest explored outcome ("own"), on its least likely
    ("other"), or half on the likeliest and half on its own new outcome ("split")."""
    rest = dist.unexplored
    masses = dict(dist)
    ranked = sorted(masses, key=lambda o: (masses[o], repr(o)))
    targets = {
        "new": [(("new", label), rest)],
        "shared": [("shared", rest)],
        "own": [(ranked[-1], rest)] if ranked else [("shared", rest)],
        "other": [(ranked[0], rest)] if ranked else [("shared", rest)],
        "split": [(ranked[-1] if ranked else "shared", rest / 2), (("new", label), rest / 2)],
    }[where]
    for outcome, mass in targets:
        masses[outcome] = masses.get(outcome, 0) + mass
    return Distribution(masses)


def _completion(mechanism, where):
    def completed(dataset):
        return _complete(mechanism(dataset), where, dataset)

    return completed


COMPLETIONS = ("new", "shared", "own", "other", "split")


@pytest.mark.parametrize("epsilon", [0, F(1, 2), sympy.log(2), sympy.log(3), 2])
def test_a_verdict_on_the_explored_outputs_never_contradicts_a_completion(epsilon):
    seen = set()
    for delta in (0, F(1, 64), F(1, 16), F(55, 256), F(1, 4), F(61, 128), F(1, 2), F(65, 128), F(3, 4)):
        verdict = verify(rr, records=[0, 1], n=1, epsilon=epsilon, delta=delta).verdict
        seen.add(verdict)
        for where in COMPLETIONS:
            completed = verify(_completion(rr, where), records=[0, 1], n=1, epsilon=epsilon, delta=delta).verdict
            if verdict is Verdict.HOLDS:
                assert completed is Verdict.HOLDS, (delta, where)
            if verdict is Verdict.VIOLATED:
                assert completed is Verdict.VIOLATED, (delta, where)
    assert Verdict.HOLDS in seen  # (each epsilon decides some claims: the test is not vacuous)


_MASSES = st.integers(min_value=0, max_value=8)


@st.composite
def sub_distributions(draw):
    """Explored masses over outcomes 0..2 in 32nds, the rest unexplored (at least 1/32)."""
    weights = draw(st.lists(_MASSES, min_size=3, max_size=3))
    explored = {o: F(w, 32) for o, w in enumerate(weights) if w}
    rest = 1 - sum(explored.values(), F(0))  # at least 8/32: 3 outcomes of at most 8/32
    return Distribution(explored, unexplored=min(1, rest + F(draw(st.integers(0, 2)), 32)))


@settings(max_examples=60, deadline=None)
@given(sub_distributions(), sub_distributions(), st.sampled_from([0, F(1, 2), sympy.log(2)]),
       st.sampled_from([0, F(1, 16), F(1, 4), F(1, 2)]))
def test_no_completion_contradicts_the_verdict(p, q, epsilon, delta):
    # A bound m above the mass left (1 - explored total) is allowed: the completions then place
    # only what is left.
    verdict = decide_pair(p, q, epsilon, delta).verdict
    assert verdict is not Verdict.HOLDS_WITHIN_ROUNDING  # exact rows
    for where in COMPLETIONS:
        left = [_complete(_exactly(d), where, label) for d, label in ((p, "D"), (q, "D'"))]
        completed = decide_pair(left[0], left[1], epsilon, delta).verdict
        if verdict is Verdict.HOLDS:
            assert completed is Verdict.HOLDS, where
        if verdict is Verdict.VIOLATED:
            assert completed is Verdict.VIOLATED, where


def _exactly(dist: Distribution) -> Distribution:
    """The same explored masses with exactly the mass left unexplored (the true tail, at most m)."""
    rest = 1 - sum(dist.values(), F(0))
    return Distribution(dict(dist), unexplored=rest)


# -- through verify, its paths and results --------------------------------------------------------


def test_verify_reports_the_explored_figures_and_the_unexplored_mass():
    result = verify(rr, records=[0, 1], n=2, epsilon=sympy.log(3), delta=F(1, 128))
    # 1/128 < m = 1/64: not proved; H_e = 0: not refuted.
    assert result.verdict is Verdict.UNDECIDED and not result.holds
    assert (result.epsilon, result.delta, result.unexplored) == (math.log(3), 0.0, 1 / 64)
    summary = result.summary()
    assert "unexplored: up to 0.0156 of an output's mass was not explored" in summary
    assert "undecided: " in summary and "from_sampler(..., tail=smaller)" in summary
    holds = verify(rr, records=[0, 1], n=2, epsilon=sympy.log(3), delta=F(1, 64))
    assert holds.verdict is Verdict.HOLDS and holds.reason == "" and holds.unexplored == 1 / 64


def test_the_check_document_carries_the_unexplored_mass():
    result = verify(rr, records=[0, 1], n=1, epsilon=sympy.log(2), delta=F(54, 256))
    document = json.loads(contract.dumps(contract.check_document(result, "tests:rr", "distribution")))
    contract.validate(document, "check")
    assert document["unexplored"] == {"value": 0.015625, "kind": "finite", "exact": None}
    assert document["witness"]["unexplored"] == {"value": 0.015625, "kind": "finite", "exact": "1/64"}
    complete = verify(lambda d: {d[0]: F(3, 4), 1 - d[0]: F(1, 4)}, records=[0, 1], n=1, epsilon=sympy.log(3))
    plain = contract.check_document(complete, "tests:rr", "distribution")
    assert "unexplored" not in plain and "reason" not in plain  # optional: absent for complete outputs


def test_exchangeable_multisets_carry_the_unexplored_mass():
    def parity(dataset):
        return rr_row(sum(dataset) % 2)

    parity.exchangeable = True
    # Over multisets of size 3 the neighbours flip the parity: eps = 0 as in the first test.
    assert verify(parity, records=[0, 1], n=3, epsilon=0, delta=F(65, 128)).verdict is Verdict.HOLDS
    assert verify(parity, records=[0, 1], n=3, epsilon=0, delta=F(1, 2)).verdict is Verdict.UNDECIDED
    violated = verify(parity, records=[0, 1], n=3, epsilon=0, delta=F(60, 128))
    assert violated.verdict is Verdict.VIOLATED and violated.exchangeable
    assert violated.witness.unexplored == F(1, 64)


def test_verify_pairs_and_projected_claims_carry_the_unexplored_mass():
    pairs = [((0,), (1,))]
    assert verify_pairs(rr, pairs=pairs, epsilon=0, delta=F(1, 2)).verdict is Verdict.UNDECIDED
    assert verify_pairs(rr, pairs=pairs, epsilon=0, delta=F(60, 128)).verdict is Verdict.VIOLATED
    # Stability: |P(o) - Q(o)| on {o, not o} is H_e at eps = 0 of the projection: 63/128 as above.
    assert verify(rr, records=[0, 1], n=1, claim=Stability(F(65, 128))).verdict is Verdict.HOLDS
    assert verify(rr, records=[0, 1], n=1, claim=Stability(F(1, 2))).verdict is Verdict.UNDECIDED
    assert verify(rr, records=[0, 1], n=1, claim=Stability(F(60, 128))).verdict is Verdict.VIOLATED


def test_public_data_results_carry_the_unexplored_mass():
    from dpverify.checking.public_data import verify_with_public_data

    def shifted(public, dataset):  # RR on (record + public record) mod 2: each sample as in the first test
        return rr_row((dataset[0] + public[0]) % 2)

    def check(delta):
        return verify_with_public_data(shifted, public_samples=[(0,), (1,)], records=[0, 1], n=1, epsilon=0,
                                       delta=delta)

    assert check(F(65, 128)).verdict is Verdict.HOLDS
    undecided = check(F(1, 2))
    assert undecided.verdict is Verdict.UNDECIDED
    assert "undecided on public (0,): " in undecided.summary() and "tail=smaller" in undecided.summary()
    assert check(F(60, 128)).verdict is Verdict.VIOLATED


def test_row_blocks_refuse_unexplored_mass_loudly(monkeypatch):
    monkeypatch.setattr(_blocks, "BLOCKS_FROM_ROWS", 1)
    monkeypatch.setattr(_blocks, "BLOCK_ROWS", 4)
    with pytest.raises(EnumerationTooLarge, match=r"unexplored=1/64 .* row blocks.*tail=0"):
        verify(rr, records=[0, 1], n=3, epsilon=0, delta=F(1, 2), exchangeable=False)


def test_measurements_that_need_the_whole_outputs_refuse_them():
    analysis = analyze(rr, records=[0, 1], n=1)
    for measure in (analysis.epsilon_star, lambda: analysis.delta_for_epsilon(0.5), analysis.stability,
                    analysis.pair_epsilons):
        with pytest.raises(InvalidArgument, match="whole outputs.*0.0156"):
            measure()
    with pytest.raises(InvalidArgument, match=r"dict\(distribution\)"):
        epsilon_star(rr_row(0), rr_row(1))
    assert epsilon_star(dict(rr_row(0)), dict(rr_row(1))) == pytest.approx(math.log(3))  # the explored part
    with pytest.raises(InvalidArgument, match="verify"):
        engine.sweep(analysis.row_pairs(), 0.5)


def test_a_builder_that_drops_the_unexplored_mass_is_an_internal_error():
    rows = [rr_row(0), rr_row(1)]
    matrix = np.array([[float(r.get(o, 0)) for o in (0, 1)] for r in rows])
    dropped = RowPairs(matrix, np.array([0]), np.array([1]), outcomes=[0, 1], exact_row=rows.__getitem__)
    with pytest.raises(AssertionError, match="unexplored=1/64 .* built without it"):
        decide(dropped, 0, F(1, 2))


def test_a_mechanism_whose_unexplored_mass_changes_is_nondeterministic():
    calls = []

    def wobbly(dataset):
        calls.append(dataset)
        return rr_row(dataset[0], M if len(calls) <= 2 else M / 2)

    with pytest.raises(NondeterministicMechanism, match="unexplored"):
        verify(wobbly, records=[0, 1], n=1, epsilon=0, delta=F(60, 128))


def test_no_unexplored_mass_is_the_engine_as_before():
    complete = [Distribution({0: F(3, 4), 1: F(1, 4)}), Distribution({0: F(1, 4), 1: F(3, 4)})]
    matrix = np.array([[0.75, 0.25], [0.25, 0.75]])
    kwargs = {"outcomes": [0, 1], "exact_row": complete.__getitem__}
    zeros = RowPairs(matrix, np.array([0]), np.array([1]), unexplored=np.zeros(2, dtype=object), **kwargs)
    assert zeros.unexplored is None  # all zero: the rows are complete
    plain = RowPairs(matrix, np.array([0]), np.array([1]), **kwargs)
    for delta in (0, F(1, 4), F(1, 2)):
        first, second = decide(zeros, sympy.log(2), delta), decide(plain, sympy.log(2), delta)
        assert (first.verdict, first.epsilon_star, first.delta_star, first.witness) == (
            second.verdict, second.epsilon_star, second.delta_star, second.witness)
        assert first.unexplored == 0.0 and first.reason == ""


# -- the pytest plugin and the Hypothesis property -----------------------------------------------


def test_assert_private_fails_an_undecided_claim_with_its_reason():
    from dpverify.integrations.pytest_plugin import assert_private

    # eps = 0, delta = 1/2: between 61/128 and 65/128, UNDECIDED (first test).
    with pytest.raises(AssertionError, match=r"(?s)^UNDECIDED.*unexplored.*tail=smaller.*not a privacy violation"):
        assert_private(rr, records=[0, 1], n=1, epsilon=0, delta=F(1, 2))
    assert assert_private(rr, records=[0, 1], n=1, epsilon=0, delta=F(65, 128)).verdict is Verdict.HOLDS


def test_the_hypothesis_property_reports_the_unexplored_mass():
    from dpverify.integrations.strategies import privacy_property

    with pytest.raises(AssertionError, match=r"UNDECIDED.*unexplored.*not a privacy violation"):
        privacy_property(rr, records=[0, 1], n=1, epsilon=0, delta=F(1, 2), max_examples=5)()
    with pytest.raises(AssertionError, match=r"(?s)violated.*\(explored\) \+ 0.015625 \(unexplored\)"):
        privacy_property(rr, records=[0, 1], n=1, epsilon=0, delta=F(60, 128), max_examples=5)()
    privacy_property(rr, records=[0, 1], n=1, epsilon=0, delta=F(65, 128), max_examples=5)()  # holds: no error
