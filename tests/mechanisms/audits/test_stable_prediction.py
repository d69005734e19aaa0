"""Tests of dpverify.mechanisms.audits.stable_prediction: the Dagan–Feldman 2020 measurements (C9-C12) and their audit rows.

Measured values are cross-checked against the core checker (``dpverify.analyze`` /
``dpverify.verify``) run on the literal reference mechanisms, and, for C12's per-pair additive
part, against a brute force over ordered datasets written here.
"""

from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction

import pytest

from dpverify import analyze, verify
from dpverify.errors import InvalidArgument
from dpverify.finite.records import labeled_records, thresholds
from dpverify.mechanisms.audits import agnostic_prediction, stable_prediction
from dpverify.mechanisms.audits.agnostic_prediction import (
    appendix_c_constants,
    measure_appendix_c,
    measure_appendix_c_flipped,
)
from dpverify.mechanisms.audits.stable_prediction import (
    flip_parameters,
    measure_flip_prediction,
    measure_stability,
    measure_subsampled_prediction,
)
from dpverify.mechanisms.label_flip import label_flip
from dpverify.mechanisms.stable_prediction import (
    a_sta_reference,
    appendix_c_reference,
    not_net_reference,
    subsampled_prediction_reference,
)
from dpverify.verdict.engine import Verdict


def cases():
    return stable_prediction.cases() + agnostic_prediction.cases()

E6 = math.exp(6)  # 403.4287934927351


def _exchangeable(function):
    function.exchangeable = True
    return function


# -- the audit rows ----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _rows():
    from dpverify.integrations.audit import run_audit

    return run_audit(cases())


def test_cases_cover_c9_to_c12_with_a_caught_mutant_each():
    rows = _rows()
    assert {r.case.claim for r in rows} == {"C9", "C10", "C11", "C12"}
    for claim in ("C9", "C10", "C11", "C12"):
        mutants = [r for r in rows if r.case.claim == claim and r.case.expect_violation]
        assert mutants, claim
        for row in mutants:
            assert row.measurement.holds is False, row.case.mechanism
            assert "query x = " in row.measurement.witness


@pytest.mark.parametrize("index", range(16))
def test_every_row_as_expected(index):
    rows = _rows()
    assert len(rows) == 16  # 15 + the flipped consistent-phi mutant caught at eta = 1/2
    row = rows[index]
    assert row.as_expected, (row.case.mechanism, row.measurement)
    if not row.case.expect_violation and not row.case.measured_only:
        assert row.measurement.holds is True, row.case.mechanism
        assert row.measurement.witness is None


def test_default_values():
    rows = {(r.case.claim, r.case.mechanism, r.case.parameters.get("concept_class")): r.measurement for r in _rows()}
    c9 = rows[("C9", "a_sta", "thresholds")]
    # claim 3 gamma = 0.3, explicit (e^{0.1} - 1) + 2/20 = 0.20517091807564763
    assert c9.claimed_epsilon == pytest.approx(0.3, rel=1e-15)
    assert c9.details["explicit_stability"] == pytest.approx(0.20517091807564763, rel=1e-14)
    assert c9.epsilon_star < c9.details["em_tanh_bound"] < c9.details["explicit_stability"]
    c10 = rows[("C10", "flip_prediction", "thresholds")]
    # gamma = eps alpha / 2 = 4/5 * 1/4 / 2 = 1/10: ln(1 + gamma/alpha) = ln(1.4) = 0.3364722366212129
    assert c10.details["explicit_epsilon"] == pytest.approx(0.3364722366212129, rel=1e-14)
    assert c10.epsilon_star < c10.details["epsilon_from_measured_gamma"] < c10.details["explicit_epsilon"]
    c11 = rows[("C11", "subsampled_prediction", "thresholds")]
    # 2 eps eta = 2 * 1/2 * 1/4 = 1/4; tight ln(1 + eta (e^eps - 1)) = ln(1 + (e^{1/2} - 1)/4) = 0.1502978251128056
    assert c11.claimed_epsilon == 0.25
    assert c11.details["tight_amplification"] == pytest.approx(0.1502978251128056, rel=1e-14)
    assert c11.epsilon_star <= c11.details["tight_amplification"]
    c12 = rows[("C12", "appendix_c", "thresholds")]
    # ln(1 + 4e^6 * 3/9) + 3/4 = ln(538.9050579903135) + 0.75 = 7.0395394106632905
    assert c12.claimed_epsilon == pytest.approx(7.0395394106632905, rel=1e-14)
    # Measured on the instance: the worst rest R (11 records) has 39 of its C(11, 2) = 55 pairs J
    # failing to be a 1/3-net, so delta = (n'/n) 39/55 = 3/12 * 39/55 = 39/220.
    assert c12.details["additive_fraction_max"] == pytest.approx(39 / 55, rel=1e-14)
    assert c12.claimed_delta == pytest.approx(39 / 220, rel=1e-14)
    flipped = rows[("C12", "appendix_c_flipped", "thresholds")]
    # ln(e^{7.0395...} + (39/220) / (1/4)) = ln(1140.862016718148 + 0.7090909) = 7.040160...
    assert flipped.claimed_epsilon == pytest.approx(math.log(math.exp(7.0395394106632905) + 39 / 55), rel=1e-13)
    assert flipped.details["claim_vacuous"] is True  # above ln((1 - 1/4)/(1/4)) = ln 3


def test_em_at_2gamma_stays_within_the_claim():
    # Not a violation: (1 - n'/n) tanh(2 gamma / 4) + n'/n = 0.9 tanh(0.05) + 0.1 = 0.14496... < 3 gamma.
    m = measure_stability(mutant="em_at_2gamma", n=20, gamma=Fraction(1, 10))
    assert m.details["em_tanh_bound"] == pytest.approx(0.9 * math.tanh(0.05) + 0.1, rel=1e-14)
    assert m.epsilon_star <= m.details["em_tanh_bound"] < m.claimed_epsilon
    assert m.holds is True


# -- cross-checks against the core checker on the references ---------------------------------------


def test_stability_matches_core_analyze():
    # thresholds(2), n = 4, gamma = 1/2 (Lemma 13: n' = 2, EM at 1/2).
    cc = thresholds(2)
    m = measure_stability(concept="thresholds", domain_size=2, n=4, gamma=Fraction(1, 2))
    worst = 0.0
    for x in range(2):
        mechanism = _exchangeable(lambda S, x=x: a_sta_reference(cc, S, x, n_prime=2, em_privacy=0.5))
        worst = max(worst, analyze(mechanism, records=labeled_records(2), n=4).stability())
    assert m.epsilon_star == pytest.approx(worst, abs=1e-14)
    assert m.holds is True


@pytest.mark.parametrize(("epsilon", "alpha", "n", "em_privacy"), [
    # eps = 19/20, alpha = 9/20: gamma = 171/800 = 0.21375; outline at n = 10: |T| = floor(0.21375 * 10 / 2)
    # = floor(1.069) = 1, EM at gamma/4 = 171/3200 (eps* 0.0138; about 3 s): the default twin, the smallest n
    # with |T| = 1 (gamma < 1/4 needs n >= 9, and alpha near 1/2 washes the learner out).
    (Fraction(19, 20), Fraction(9, 20), 10, Fraction(171, 3200)),
    # eps = 9/10, alpha = 2/5: gamma = 9/50; outline at n = 12: |T| = 1, EM at 9/200 (eps* 0.0234; about 5 s,
    # the exchangeability sample's budget).
    pytest.param(Fraction(9, 10), Fraction(2, 5), 12, Fraction(9, 200), marks=pytest.mark.slow),
    # eps = 4/5, alpha = 1/4: gamma = 1/10; outline at n = 20: |T| = 1, EM at 1/40 (about 25 s: each of the
    # exchangeability sample's datasets has 190 transpositions).
    pytest.param(Fraction(4, 5), Fraction(1, 4), 20, Fraction(1, 40), marks=pytest.mark.slow),
], ids=["n10", "n12", "n20"])
def test_flip_prediction_matches_core_verify(epsilon, alpha, n, em_privacy):
    cc = thresholds(2)
    parameters = flip_parameters(epsilon, alpha, n)
    assert (parameters.n_prime, parameters.em_privacy) == (1, em_privacy)
    m = measure_flip_prediction(domain_size=2, n=n, epsilon=epsilon, alpha=alpha)
    worst = 0.0
    for x in range(2):
        stable = _exchangeable(lambda S, x=x: a_sta_reference(cc, S, x, n_prime=1, em_privacy=em_privacy))
        # 4**n orderings cannot all be checked: the declaration is accepted (tested on a sample)
        result = verify(label_flip(stable, alpha=float(alpha)), records=labeled_records(2), n=n, epsilon=float(epsilon),
                        exchangeable="assume", seed=0)
        assert result.holds
        worst = max(worst, result.epsilon)
    assert worst > 0  # the flip does not wash the stable learner out (alpha = 1/2 would: eps* = 0)
    assert m.epsilon_star == pytest.approx(worst, abs=1e-12)


def test_subsampled_prediction_matches_core_verify():
    cc = thresholds(2)
    m = measure_subsampled_prediction(domain_size=2, n=4, eta=Fraction(1, 2), epsilon=Fraction(1, 2))
    worst = 0.0
    for x in range(2):
        mechanism = _exchangeable(lambda S, x=x: subsampled_prediction_reference(cc, S, x, n_prime=2, epsilon=0.5))
        result = verify(mechanism, records=labeled_records(2), n=4, epsilon=0.5)  # 2 eps eta = 1/2
        worst = max(worst, result.epsilon)
    assert m.epsilon_star == pytest.approx(worst, abs=1e-12)
    assert m.claimed_epsilon == 0.5
    assert m.holds is True


def _appendix_c_brute_force(cc, n, n_prime, eta, claimed_epsilon, phi="realizable"):
    """Over ordered datasets and every replaced index: (max delta(R), max hockey at claimed eps,
    smallest multiplicative eps given delta(R), any pair violating P <= e^eps' P' + delta(R))."""
    universe = labeled_records(cc.domain_size)
    answers = {}

    def answer(S):
        if S not in answers:
            answers[S] = [appendix_c_reference(cc, S, x, n_prime=n_prime, eta=eta, phi=phi) for x in range(cc.domain_size)]
        return answers[S]

    factor = math.exp(claimed_epsilon)
    delta_max = hockey_max = needed = 0.0
    violated = False
    for S in itertools.product(universe, repeat=n):
        for i, record in itertools.product(range(n), universe):
            if record == S[i]:
                continue
            T = S[:i] + (record,) + S[i + 1:]
            delta = float(not_net_reference(cc, S, i, n_prime, eta))
            delta_max = max(delta_max, delta)
            for P, Q in zip(answer(S), answer(T)):
                for y in (0, 1):
                    p, q = float(P[y]), float(Q[y])
                    hockey_max = max(hockey_max, p - factor * q)
                    violated |= p > factor * q + delta + 1e-9
                    if p > delta:
                        needed = max(needed, math.log((p - delta) / q) if q > 0 else math.inf)
    return delta_max, max(hockey_max, 0.0), needed, violated


@pytest.mark.parametrize("phi", ["realizable", "mutant_consistent"])
def test_appendix_c_matches_brute_force(phi):
    # thresholds(2), n = 4, n' = 1, eta = 1/2, eps = 1/2: n' <= eps n = 2, eps >= 1/(eta n) = 1/2.
    cc = thresholds(2)
    m = measure_appendix_c(domain_size=2, n=4, n_prime=1, eta=Fraction(1, 2), epsilon=Fraction(1, 2), phi=phi)
    # ln(1 + 4e^6 / 3) + 3/2 = ln(538.9050579903135) + 1.5
    assert m.claimed_epsilon == pytest.approx(math.log1p(4 * E6 / 3) + 1.5, rel=1e-15)
    delta_max, hockey, needed, violated = _appendix_c_brute_force(cc, 4, 1, Fraction(1, 2), m.claimed_epsilon, phi)
    assert m.claimed_delta == pytest.approx(delta_max, abs=1e-15)
    assert m.delta_star == pytest.approx(hockey, abs=1e-12)
    assert m.epsilon_star == pytest.approx(needed, abs=1e-12) or m.epsilon_star == needed == math.inf
    assert m.holds is (not violated)


# -- preconditions and misuse ------------------------------------------------------------------------


def test_stability_preconditions():
    with pytest.raises(InvalidArgument, match=r"n' <= gamma n") as info:
        measure_stability(n=10, gamma=Fraction(1, 10), n_prime=2)
    assert "outside_preconditions=True" in str(info.value)
    m = measure_stability(n=10, gamma=Fraction(1, 10), n_prime=2, outside_preconditions=True)
    assert m.holds is None and m.epsilon_star > 0
    with pytest.raises(InvalidArgument, match="unknown mutant"):
        measure_stability(mutant="nope")


def test_flip_prediction_preconditions():
    with pytest.raises(InvalidArgument, match=r"epsilon in \(0, 1\)"):
        measure_flip_prediction(epsilon=1, n=40)
    with pytest.raises(InvalidArgument, match=r"alpha must be in \[0, 1/2\]"):
        measure_flip_prediction(alpha=Fraction(3, 4))
    with pytest.raises(InvalidArgument, match="unknown stable learner"):
        measure_flip_prediction(stable="nope")


def test_subsampled_prediction_preconditions():
    with pytest.raises(InvalidArgument, match="multiple of 1/n"):
        measure_subsampled_prediction(n=8, eta=Fraction(1, 3))
    with pytest.raises(InvalidArgument, match=r"epsilon in \(0, 1\)"):
        measure_subsampled_prediction(epsilon=1)
    assert measure_subsampled_prediction(epsilon=1, outside_preconditions=True).holds is None


def test_appendix_c_preconditions():
    with pytest.raises(InvalidArgument, match=r"n' <= epsilon n"):
        measure_appendix_c(n=12, n_prime=4, epsilon=Fraction(1, 4))  # 4 > 3
    with pytest.raises(InvalidArgument, match=r"epsilon >= 1/\(eta n\)"):
        measure_appendix_c(n=12, n_prime=3, eta=Fraction(1, 4), epsilon=Fraction(1, 4))  # 1/(eta n) = 1/3
    with pytest.raises(InvalidArgument, match=r"alpha > 0"):
        measure_appendix_c_flipped(alpha=0)


def test_appendix_c_constants():
    # n' = 3, n = 12: 4e^6 * 3/9 = 537.9050579903135, ln(538.9050579903135) = 6.2895394106632905; + 3/4.
    assert appendix_c_constants(Fraction(1, 4), 12, 3) == pytest.approx(7.0395394106632905, rel=1e-14)
    assert appendix_c_constants(Fraction(1, 4), 3, 3) == math.inf  # no rest: vacuous


# -- corrected findings (issue 7, finding 5) -------------------------------------------------------


def test_flipped_consistent_phi_is_caught_at_eta_half_tiny_alpha():
    # eta = 1/2, alpha = 1e-6 (n = 12, n' = 3, eps = 1/4): the claim ln(e^{eps'} + delta/alpha) with
    # eps' = ln(1 + 4e^6 * 3/9) + 3/4 is 11.43; the flipped non-private phi reaches 11.76.
    m = measure_appendix_c_flipped(concept="thresholds", domain_size=3, n=12, n_prime=3, eta=Fraction(1, 2),
                                   epsilon=Fraction(1, 4), alpha=Fraction(1, 10**6), phi="mutant_consistent")
    eps_prime = math.log1p(4 * math.exp(6) * 3 / 9) + 3 / 4
    delta = m.details["additive_delta_max"]
    assert m.claimed_epsilon == pytest.approx(math.log(math.exp(eps_prime) + delta * 10**6), rel=1e-12)
    assert m.claimed_epsilon == pytest.approx(11.4301, abs=1e-4)
    assert m.epsilon_star == pytest.approx(11.7586, abs=1e-4)
    assert m.verdict is Verdict.VIOLATED and "query x = " in m.witness


@pytest.mark.parametrize("gamma", [Fraction(1, 10), Fraction(1, 5), Fraction(1, 3)])
def test_em_at_2gamma_stays_below_one_and_a_half_gamma(gamma):
    # gamma* <= (1 - n'/n) tanh(gamma/2) + n'/n < tanh(gamma/2) + gamma <= 1.5 gamma < 3 gamma.
    m = measure_stability(n=20, gamma=gamma, mutant="em_at_2gamma")
    n_prime = math.floor(gamma * 20)
    bound = (1 - n_prime / 20) * math.tanh(float(gamma) / 2) + n_prime / 20
    assert m.details["em_tanh_bound"] == pytest.approx(bound, rel=1e-12)
    assert m.epsilon_star <= bound
    assert bound < math.tanh(float(gamma) / 2) + float(gamma) <= 1.5 * float(gamma) < 3 * float(gamma)
