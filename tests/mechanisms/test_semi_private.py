"""Tests of dpverify.mechanisms.semi_private (Alon–Bassily–Moran 2019 Alg. 1, ASSPP) and dpverify.mechanisms.audits.public_data (C13).

The C13 measurement is cross-checked against a brute force written here from the definitions
(thresholds by their formula, H~ by scanning labelings, EM weights with math.exp, every ordered
private dataset and every substitution), not against the module's code.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
import sympy

from dpverify.checking.public_data import all_public_samples, verify_with_public_data
from dpverify.errors import InvalidArgument
from dpverify.finite.records import concept_class, intervals, labeled_records, thresholds
from dpverify.mechanisms.audits.public_data import cases, measure_asspp
from dpverify.mechanisms.exponential import exponential_mechanism_without_half
from dpverify.mechanisms.semi_private import ASSPP, MutantCoverWithPrivatePoints

# -- the hand example -----------------------------------------------------------------------------
# Thresholds over X = {0, 1}: c_u(x) = 1 iff x >= u; u = 0 -> (1, 1), u = 1 -> (0, 1), u = 2 -> (0, 0).
# T_pub = (0,): T~ = {0}. Labelings of T~: (1,) realised by u = 0 only; (0,) by u = 1 and u = 2.
#   rule "first": H~ = {0, 1};   rule "last": H~ = {0, 2}.
# S_priv = ((0, 0), (0, 0), (1, 0)): n_priv = 3, Delta = 1/3.
#   mistakes: u = 0 (labels all 1): 3 (err 1); u = 1: only (1, 0) -> 1 (err 1/3); u = 2: 0 (err 0).
# EM weight exp(-eps * err / (2 Delta)) = exp(-eps * mistakes / 2), eps = 1:
#   "first": u = 0: e^{-3/2}, u = 1: e^{-1/2}
#     P(1) = 1 / (1 + e^{-1}) = 1 / 1.3678794411714423 = 0.7310585786300049
#     P(0) = e^{-1} / (1 + e^{-1})                       = 0.2689414213699951
#   "last":  u = 0: e^{-3/2}, u = 2: e^0 = 1
#     P(2) = 1 / (1 + e^{-3/2}) = 1 / 1.2231301601484298 = 0.8175744761936437
#     P(0) = e^{-3/2} / (1 + e^{-3/2})                   = 0.18242552380635632
# (u = 2 has the fewest mistakes but is not in H~ under "first": H~ only covers T~'s labelings.)
S_HAND = ((0, 0), (0, 0), (1, 0))


def test_hand_example_first_representative():
    asspp = ASSPP(thresholds(2), epsilon=1)
    assert asspp.cover((0,)) == {(1,): 0, (0,): 1}
    result = asspp((0,), S_HAND)
    assert set(result) == {0, 1}
    assert result[1] == pytest.approx(0.7310585786300049, rel=1e-15)
    assert result[0] == pytest.approx(0.2689414213699951, rel=1e-15)


def test_hand_example_exact_values():
    exact = ASSPP(thresholds(2), epsilon=1, exact=True)((0,), S_HAND)
    assert sympy.simplify(exact[1] - 1 / (1 + sympy.exp(-1))) == 0
    assert sympy.simplify(exact[0] - sympy.exp(-1) / (1 + sympy.exp(-1))) == 0


def test_hand_example_last_representative():
    asspp = ASSPP(thresholds(2), epsilon=1, representative="last")
    assert asspp.cover((0,)) == {(1,): 0, (0,): 2}
    result = asspp((0,), S_HAND)
    assert set(result) == {0, 2}
    assert result[2] == pytest.approx(0.8175744761936437, rel=1e-15)
    assert result[0] == pytest.approx(0.18242552380635632, rel=1e-15)


def test_cover_of_two_public_points_and_of_the_empty_sample():
    # thresholds(3): u=0 (1,1,1), u=1 (0,1,1), u=2 (0,0,1), u=3 (0,0,0). On T~ = (0, 2):
    # u=0 -> (1,1), u=1 -> (0,1), u=2 -> (0,1), u=3 -> (0,0); first representatives 0, 1, 3.
    asspp = ASSPP(thresholds(3), epsilon=1)
    assert asspp.cover((2, 0, 2)) == {(1, 1): 0, (0, 1): 1, (0, 0): 3}
    # n_pub = 0: one (empty) labeling, H~ = {0}: the output is concept 0 with probability 1.
    assert asspp.cover(()) == {(): 0}
    assert dict(asspp((), ((1, 0),))) == {0: 1.0}


def test_order_and_multiplicity_of_the_public_sample_do_not_matter():
    asspp = ASSPP(intervals(3), epsilon=Fraction(1, 2))
    S = ((0, 1), (2, 0), (1, 1))
    reference = asspp((0, 2), S)
    for T in [(2, 0), (0, 0, 2), (2, 2, 0, 0)]:
        assert asspp(T, S) == reference


@pytest.mark.parametrize("name", ["thresholds", "intervals", "point_functions"])
def test_exact_and_float_modes_agree_everywhere(name):
    H = concept_class(name, 3)
    floats, exacts = ASSPP(H, epsilon=1.0), ASSPP(H, epsilon=1.0, exact=True)
    for T in itertools.product(range(3), repeat=2):
        for S in itertools.combinations_with_replacement(labeled_records(3), 3):
            f, e = floats(T, S), exacts(T, S)
            assert e.is_exact and e == floats.exact_distribution(T, S)
            assert set(f) == set(e)
            for h in f:
                assert float(e[h]) == pytest.approx(f[h], rel=1e-13, abs=0)


@pytest.mark.parametrize("make", [
    lambda: ASSPP(thresholds(3), epsilon=1),
    lambda: ASSPP(intervals(3), epsilon=0.5, representative="last"),
    lambda: MutantCoverWithPrivatePoints(thresholds(3), epsilon=1),  # candidates depend on S_priv
])
def test_memoised_outputs_equal_fresh_instances(make):
    # One instance remembers outputs by (candidates, private sample as a multiset); a fresh instance
    # per call (empty memo) is the computation without it. Every public sample of 0-2 points and
    # every ordered private sample of 1-2 records over X = {0, 1, 2}: the same floats, exactly.
    memoised = make()
    records = labeled_records(3)
    publics = [p for k in range(3) for p in itertools.combinations_with_replacement(range(3), k)]
    privates = [s for k in (1, 2) for s in itertools.product(records, repeat=k)]
    for T_pub in publics:
        for S_priv in privates:
            assert dict(memoised(T_pub, S_priv)) == dict(make()(T_pub, S_priv))
    assert len(memoised._outputs) < len(publics) * len(privates)  # reordered samples share outputs
    assert memoised.exact_distribution((1,), records[:2]) == make().exact_distribution((1,), records[:2])


def test_mutant_cover_adds_the_private_points():
    # T~ = {0} but the private point 1 joins it: H~ over {0, 1} = {0, 1, 2} for thresholds(2).
    mutant = MutantCoverWithPrivatePoints(thresholds(2), epsilon=1)
    assert set(mutant((0,), S_HAND)) == {0, 1, 2}
    assert set(ASSPP(thresholds(2), epsilon=1)((0,), S_HAND)) == {0, 1}


def test_bad_input():
    asspp = ASSPP(thresholds(3), epsilon=1)
    with pytest.raises(InvalidArgument, match=r"T_pub=\(0, 3\) holds the point 3, outside X"):
        asspp((0, 3), ((0, 1),))
    with pytest.raises(InvalidArgument, match="T_pub must be a sequence"):
        asspp(5, ((0, 1),))
    with pytest.raises(InvalidArgument, match="at least one record"):
        asspp((0,), ())
    with pytest.raises(InvalidArgument, match=r"record \(0, 2\)"):
        asspp((0,), ((0, 2),))
    with pytest.raises(InvalidArgument, match="epsilon must be >= 0"):
        ASSPP(thresholds(3), epsilon=-1)
    with pytest.raises(InvalidArgument, match="H must be a ConceptClass"):
        ASSPP("thresholds", epsilon=1)
    with pytest.raises(InvalidArgument, match="unknown ASSPP variant"):
        measure_asspp(variant="asspp_typo")
    with pytest.raises(InvalidArgument, match="n_public must be an integer >= 0, got n_public=-1"):
        measure_asspp(n_public=-1)
    with pytest.raises(InvalidArgument, match="n_private must be an integer >= 1, got n_private=0"):
        measure_asspp(n_private=0)


# -- C13 ------------------------------------------------------------------------------------------


def _brute_force_epsilon_star(domain_size: int, n_private: int, n_public: int, epsilon: float) -> float:
    """eps* of ASSPP on thresholds, from the definitions, over every ordered T_pub and S_priv."""
    concepts = [tuple(int(x >= u) for x in range(domain_size)) for u in range(domain_size + 1)]
    records = [(x, y) for x in range(domain_size) for y in (0, 1)]

    def log_distribution(T, S):
        points = sorted(set(T))
        cover = {}
        for index, c in enumerate(concepts):
            cover.setdefault(tuple(c[x] for x in points), index)  # first concept per labeling
        logs = {h: -epsilon * sum(concepts[h][x] != y for x, y in S) / 2 for h in cover.values()}
        top = max(logs.values())
        log_z = top + math.log(sum(math.exp(v - top) for v in logs.values()))
        return {h: v - log_z for h, v in logs.items()}

    worst = 0.0
    for T in itertools.product(range(domain_size), repeat=n_public):
        table = {S: log_distribution(T, S) for S in itertools.product(records, repeat=n_private)}
        for S, p in table.items():
            for position, record in itertools.product(range(n_private), records):
                q = table[S[:position] + (record,) + S[position + 1 :]]
                worst = max(worst, max(abs(p[h] - q[h]) for h in p))
    return worst


def test_c13_default_instance_matches_brute_force():
    measurement = measure_asspp()
    expected = _brute_force_epsilon_star(3, 3, 2, 1.0)
    assert expected == pytest.approx(0.8408960968946921, rel=1e-12)
    assert measurement.holds is True
    assert measurement.epsilon_star == pytest.approx(expected, rel=1e-12)
    assert measurement.claimed_epsilon == 1.0 and measurement.delta_star == 0.0
    assert measurement.details["public_samples"] == 9  # every T_pub in X^2, ordered
    assert measurement.details["epsilon_public"] == "(0, 1)"


def test_c13_closed_form_for_two_candidates():
    # X = {0, 1}, n_pub = 1: H~ has two concepts differing on the points of T~; P(h) depends only on
    # g = mistakes(other) - mistakes(h) in [-n, n], P(h) = 1/(1 + e^{-g/2}), and a substitution
    # moves g by 2. The worst ratio is at g = -n: eps* = ln((1 + e^{n/2}) / (1 + e^{(n-2)/2})).
    # n = 6: ln((1 + e^3)/(1 + e^2)) = ln(21.085536923187668 / 8.38905609893065) = 0.9216593405307...
    measurement = measure_asspp(domain_size=2, n_private=6, n_public=1)
    assert measurement.holds is True
    assert measurement.epsilon_star == pytest.approx(math.log((1 + math.e**3) / (1 + math.e**2)), rel=1e-12)


def test_c13_tight_claim_is_certified_with_the_exact_distribution():
    # n = 2 in the closed form: eps* = ln((1 + e)/2) exactly. Claimed at exactly that value, the
    # worst pairs sit on the boundary and are certified with ASSPP.exact_distribution.
    asspp = ASSPP(thresholds(2), epsilon=1)
    claim = sympy.log((1 + sympy.E) / 2)
    result = verify_with_public_data(
        asspp, public_samples=all_public_samples(range(2), 1), records=labeled_records(2), n=2, epsilon=claim,
    )
    assert result.holds is True
    assert result.epsilon == pytest.approx(math.log((1 + math.e) / 2), rel=1e-12)
    assert all(r.certified_pairs > 0 for r in result.results.values())


def test_mutant_without_half_is_caught_with_a_named_public_sample():
    measurement = measure_asspp(variant="mutant_asspp_without_half")
    assert measurement.holds is False
    assert 1.0 < measurement.epsilon_star <= 2.0
    assert measurement.witness.startswith("public = (")


def test_mutant_cover_with_private_points_is_caught():
    measurement = measure_asspp(variant="mutant_asspp_cover_with_private_points")
    assert measurement.holds is False
    assert measurement.epsilon_star == math.inf
    assert measurement.witness.startswith("public = (")


def test_mutant_selector_matches_the_without_half_exponential():
    # The mutant through ASSPP is the EM without the half: weights exp(-eps * mistakes), S_HAND "first":
    # P(1) = e^{-1} / (e^{-1} + e^{-3}) = 1 / (1 + e^{-2}) = 0.8807970779778823.
    mutant = ASSPP(thresholds(2), epsilon=1, selector=exponential_mechanism_without_half)
    assert mutant((0,), S_HAND)[1] == pytest.approx(0.8807970779778823, rel=1e-15)


def test_audit_cases_meet_their_expectations():
    # (their time is measured by benchmarks/bench_audit.py, not asserted here: a loaded machine
    # made a 10 s wall-clock limit fail with the same CPU cost)
    rows = cases()
    assert {row.claim for row in rows} == {"C13"}
    for row in rows:
        measurement = row.run()
        assert measurement.holds is not row.expect_violation, row.mechanism
    assert sum(row.expect_violation for row in rows) == 2
