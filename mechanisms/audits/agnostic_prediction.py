"""Audit of Dagan–Feldman 2020 Appendix C: the (O(eps), O(eps alpha)) private prediction learner (C12).

The learner: ``I`` uniform of size ``n'``, ``H_{S_I}`` one representative per labeling of ``S_I``,
EM over ``H_{S_I}`` with ``lambda_h = exp(-L_S(h)/eta)``, then ``phi_S(h)`` = the realizable
private-prediction learner at privacy ``1/(eta n)`` trained on all of ``S`` relabeled by ``h``;
finally the prediction flipped with probability ``alpha``. Lemma 15 (of that paper) bounds it
before the flip by a multiplicative ``(1 + 4e^6 n'/(n-n')) e^{3 eps}`` and a data-dependent additive
part, the share of index sets whose rest is not an eta-net — computed exactly here, per pair. After
the flip, ``ln(e^{eps'} + delta/alpha)``.

The mutant ``phi="mutant_consistent"`` (phi_S(h) = the first concept consistent with S_h, not
private) is caught before the flip; after the flip (:func:`measure_appendix_c_flipped`) it is caught
at eta = 1/2, alpha = 1e-6 (eps* 11.76 > 11.43); at larger alpha the flipped claim exceeds
``ln((1 - alpha)/alpha)`` on small instances and holds for anything. Measurement helpers are shared
with :mod:`dpverify.mechanisms.audits.stable_prediction`.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from functools import partial
from typing import TypedDict

import numpy as np

from dpverify.finite.multisets import MultisetTable
from dpverify.finite.multisets import table as multiset_table
from dpverify.finite.records import concept_class, labeled_records
from dpverify.integrations.audit import AuditCase, Expect, Measurement
from dpverify.validation import check_number, check_positive

from ..label_flip import flip_rows
from ..relabeling import exact_parameter
from ..stable_prediction import appendix_c_table, not_net_table
from ._instance import instance
from ._sources import SOURCES
from .stable_prediction import _per_query_decision, _precondition, _query, _rows, shown

__all__ = ["measure_appendix_c", "measure_appendix_c_flipped", "appendix_c_constants", "cases", "instance", "CLAIMS", "SOURCES"]

E6 = math.exp(6)


# -- C12: Appendix C (Lemma 15 of Dagan–Feldman 2020) --------------------------------------------------------------------


def appendix_c_constants(epsilon, n: int, n_prime: int) -> float:
    """Lemma 15's explicit multiplicative part as an epsilon: ``ln((1 + 4e^6 n'/(n-n')) e^{3 eps})``
    (Eq. (13) with Lemma 18's 4e^6 and Lemma 19's e^{3 eps})."""
    if n_prime >= n:
        return math.inf
    return math.log1p(4 * E6 * n_prime / (n - n_prime)) + 3 * float(exact_parameter(epsilon))


def _check_appendix_c(n: int, n_prime: int, eta, epsilon, alpha, outside_preconditions: bool) -> None:
    check_positive("eta", eta)
    check_number("alpha", alpha, at_least=0, at_most=Fraction(1, 2), fix="alpha is the flip probability")
    h, e, a = exact_parameter(eta), exact_parameter(epsilon), exact_parameter(alpha)
    if outside_preconditions:
        return
    _precondition(0 < e < 1, "Lemma 15 (Dagan–Feldman 2020)", "epsilon in (0, 1)", f"epsilon={epsilon}")
    _precondition(n_prime <= e * n, "Lemma 15 (Dagan–Feldman 2020)", "n' <= epsilon n", f"n'={n_prime}, epsilon={epsilon}, n={n}")
    _precondition(e * h * n >= 1, "Lemma 15 (Dagan–Feldman 2020)", "epsilon >= 1/(eta n)", f"epsilon={epsilon}, eta={eta}, n={n}")
    _precondition(a > 0, "Lemma 15 (Dagan–Feldman 2020) with the flip", "alpha > 0", f"alpha={alpha}")


def _pairs_with_rest(s_table: MultisetTable) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Replace-one pairs ``(R + e_a, R + e_b)``, a < b, with the index of their common rest R."""
    z, n = s_table.universe_size, s_table.n
    rests = multiset_table(z, n - 1)
    eye = np.eye(z, dtype=np.int64)
    members = np.stack([s_table.index(rests.counts + eye[a]) for a in range(z)], axis=1)
    a, b = np.triu_indices(z, k=1)
    rest = np.repeat(np.arange(len(rests)), a.size)
    return members[:, a].ravel(), members[:, b].ravel(), rest


@functools.lru_cache(maxsize=16)
def _appendix_c_instance(concept: str, domain_size: int, n: int, n_prime: int, eta: Fraction, phi: str):
    cc = concept_class(concept, domain_size)
    s_table, probs = appendix_c_table(cc, n, n_prime, eta, phi=phi)
    rest_table, fraction = not_net_table(cc, n, n_prime, eta)
    left, right, rest = _pairs_with_rest(s_table)
    return s_table, probs, rest_table, fraction, left, right, rest


def measure_appendix_c(
    *,
    concept: str = "thresholds",
    domain_size: int = 3,
    n: int = 12,
    n_prime: int = 3,
    eta=Fraction(1, 3),
    epsilon=Fraction(1, 4),
    alpha=Fraction(1, 4),
    phi: str = "realizable",
    outside_preconditions: bool = False,
) -> Measurement:
    """C12 (Dagan–Feldman 2020 Lemma 15), before the flip: for every replace-one pair with common rest R, query x
    and label y, ``P_S(y) <= (1 + 4e^6 n'/(n-n')) e^{3 eps} P_{S'}(y) + delta(R)`` where
    ``delta(R) = |I''|/C(n, n')`` is the exact share of index sets containing the changed index whose
    rest is not an eta-net for H w.r.t. R (data-dependent, computed on the instance).

    Measured: ``epsilon_star`` = the smallest multiplicative part that makes every pair hold given
    its delta(R); ``delta_star`` = the worst hockey-stick value at the claimed multiplicative part;
    ``claimed_delta`` = max over R of delta(R). ``phi="mutant_consistent"`` is the mutant.
    """
    _check_appendix_c(n, n_prime, eta, epsilon, alpha, outside_preconditions)
    s_table, probs, rest_table, fraction, left, right, rest = _appendix_c_instance(
        concept, domain_size, n, n_prime, exact_parameter(eta), phi)
    claimed_epsilon = appendix_c_constants(epsilon, n, n_prime)
    factor = math.exp(claimed_epsilon)
    additive = n_prime / n * fraction[rest]  # delta(R) of each pair
    worst_excess, worst_hockey, needed, pure = -math.inf, 0.0, 0.0, 0.0
    for x in range(probs.shape[1]):
        rows = _rows(probs, x)
        for a, b in ((left, right), (right, left)):
            p, q = rows[a], rows[b]
            gap = (p - factor * q).max(axis=1)  # the hockey-stick value before clamping at 0
            worst_excess = max(worst_excess, float((gap - additive).max(initial=-math.inf)))
            with np.errstate(divide="ignore", invalid="ignore"):
                log_ratio = np.where(p > 0, np.log(p) - np.log(q), -np.inf).max(axis=1)
                over = p - additive[:, None]
                ratio = np.where(over > 0, np.log(np.where(over > 0, over, 1.0)) - np.log(q), -np.inf)
            worst_hockey = max(worst_hockey, float(np.maximum(gap, 0.0).max()))
            needed = max(needed, float(np.nanmax(ratio)))
            pure = max(pure, float(np.nanmax(log_ratio)))
    # The verdict: every pair against its own delta(R), by the engine (two outcomes per query, so
    # the hockey-stick value is the per-label excess of the lemma).
    universe = labeled_records(domain_size)
    decision = _per_query_decision(s_table, universe, probs, epsilon=claimed_epsilon, pair_delta=additive,
                                   pairs=(left, right))
    holds = None if outside_preconditions else decision.verdict
    witness, part = decision.witness_of(lambda x: f"query x = {x} (delta(R) of this pair is the claim's delta)")
    instance_level = _per_query_decision(s_table, universe, probs, epsilon=claimed_epsilon,
                                         delta=float(additive.max()), pairs=(left, right))
    delta_max = float(additive.max())
    e, h = exact_parameter(epsilon), exact_parameter(eta)
    details = {
        "phi": phi,
        "multiplicative_claimed": factor,
        "multiplicative_measured": math.exp(needed),
        "multiplicative_form": "(1 + 4e^6 n'/(n-n')) e^{3 eps}",
        "multiplicative_tight_lemma19": math.exp(math.log1p(4 * E6 * n_prime / (n - n_prime)) + 3 / float(h * n))
        if n_prime < n else math.inf,
        "pure_epsilon_star": pure,
        "additive_delta_max": delta_max,
        "additive_fraction_max": float(fraction.max()),
        "additive_fraction_mean_over_rests": float(fraction.mean()),
        "rests_not_all_nets": int(np.count_nonzero(fraction)),
        "rests": len(rest_table),
        "eta_net_threshold_records": float(h * (n - 1)),
        "epsilon_slack": claimed_epsilon - needed,
        "delta_slack": delta_max - worst_hockey,
        "worst_pair_excess": worst_excess,
        "verdict_per_pair_delta": str(decision.verdict),
        "instance_level_verdict": str(instance_level.verdict),
        "instance_level_holds": instance_level.holds,
        "epsilon_times_alpha": float(e * exact_parameter(alpha)),
        "datasets": len(s_table),
    }
    return Measurement(needed, worst_hockey, claimed_epsilon, delta_max, holds, details=details, witness_data=witness,
                       witness_part=part)


def measure_appendix_c_flipped(
    *,
    concept: str = "thresholds",
    domain_size: int = 3,
    n: int = 12,
    n_prime: int = 3,
    eta=Fraction(1, 3),
    epsilon=Fraction(1, 4),
    alpha=Fraction(1, 4),
    phi: str = "realizable",
    outside_preconditions: bool = False,
) -> Measurement:
    """C12 after the flip (Thm. 3's proof: "as in Corollary 2"): pure ``ln(e^{eps'} + delta/alpha)``
    with eps' and delta = max delta(R) of :func:`measure_appendix_c`.

    The flip alone bounds every output's ratio by ``(1 - alpha)/alpha``; when the claim is above
    ``ln((1 - alpha)/alpha)`` it holds for *any* flipped learner (``details["claim_vacuous"]``).
    """
    _check_appendix_c(n, n_prime, eta, epsilon, alpha, outside_preconditions)
    s_table, probs, _, fraction, _, _, _ = _appendix_c_instance(concept, domain_size, n, n_prime, exact_parameter(eta), phi)
    a = exact_parameter(alpha)
    multiplicative = appendix_c_constants(epsilon, n, n_prime)
    delta_max = float(n_prime / n * fraction.max())
    claimed = math.log(math.exp(multiplicative) + delta_max / float(a)) if a > 0 else math.inf
    final = flip_rows(probs, a)
    worst = _per_query_decision(s_table, labeled_records(domain_size), final, epsilon=claimed)
    holds = None if outside_preconditions else worst.verdict
    witness, part = worst.witness_of(_query)
    flip_only = math.log((1 - float(a)) / float(a)) if 0 < a < Fraction(1, 2) else (0.0 if a else math.inf)
    details = {
        "final_epsilon_form": "ln(e^{eps'} + delta/alpha), eps' = ln((1 + 4e^6 n'/(n-n')) e^{3 eps})",
        "multiplicative_epsilon": multiplicative,
        "additive_delta_max": delta_max,
        "flip_alone_bound": flip_only,
        "claim_vacuous": claimed >= flip_only,
        "slack": claimed - worst.epsilon_star,
        "datasets": len(s_table),
    }
    return Measurement(worst.epsilon_star, 0.0, claimed, 0.0, holds, details=details, witness_data=witness,
                       witness_part=part)


# -- the audit rows -------------------------------------------------------------------------------------


class _AppendixCInstance(TypedDict, total=False):
    """Keyword arguments of :func:`measure_appendix_c` (and the flipped one) that the C12 rows set."""

    concept: str
    domain_size: int
    n: int
    n_prime: int
    eta: Fraction
    epsilon: Fraction
    alpha: Fraction


def cases() -> list[AuditCase]:
    """Claim C12 on its default instance, the flipped variant and the mutants."""
    c12: _AppendixCInstance = {"concept": "thresholds", "domain_size": 3, "n": 12, "n_prime": 3, "eta": Fraction(1, 3),
           "epsilon": Fraction(1, 4), "alpha": Fraction(1, 4)}
    c12_tiny_alpha: _AppendixCInstance = {**c12, "alpha": Fraction(1, 10000)}
    c12_caught: _AppendixCInstance = {**c12, "eta": Fraction(1, 2), "alpha": Fraction(1, 10**6)}
    violated = Expect.VIOLATED
    return [
        AuditCase("C12", "appendix_c", shown(c12), partial(measure_appendix_c, **c12),
                  "Lemma 15 (Dagan–Feldman) before the flip, per pair: (1 + 4e^6 n'/(n-n')) e^{3 eps} "
                  "multiplicative, additive delta(R) = share of index sets whose rest is not an eta-net "
                  "(computed exactly)."),
        AuditCase("C12", "appendix_c_flipped", shown(c12), partial(measure_appendix_c_flipped, **c12),
                  "After the flip: ln(e^{eps'} + delta/alpha). Vacuous on this instance (above ln((1-alpha)/alpha))."),
        AuditCase("C12", "mutant_appendix_c_phi_consistent", shown(c12, phi="mutant_consistent"),
                  partial(measure_appendix_c, **c12, phi="mutant_consistent"),
                  "phi_S(h) = the first concept consistent with S_h (not private).",
                  expect=violated, parent="appendix_c"),
        AuditCase("C12", "appendix_c_flipped_phi_consistent", shown(c12_tiny_alpha, phi="mutant_consistent"),
                  partial(measure_appendix_c_flipped, **c12_tiny_alpha, phi="mutant_consistent"),
                  "Measured: at eta = 1/3, alpha = 1e-4 the non-private phi after the flip still meets "
                  "ln(e^{eps'} + delta/alpha) (7.29 < 7.98): delta = max over rests absorbs its violation. At "
                  "eta = 1/2, alpha = 1e-6 it is caught (next row).",
                  expect=Expect.MEASURED, parent="appendix_c_flipped"),
        AuditCase("C12", "mutant_appendix_c_flipped_phi_consistent", shown(c12_caught, phi="mutant_consistent"),
                  partial(measure_appendix_c_flipped, **c12_caught, phi="mutant_consistent"),
                  "phi = first consistent concept, then the flip with alpha = 1e-6 at eta = 1/2: eps* 11.76 > "
                  "ln(e^{eps'} + delta/alpha) = 11.43, caught with a witness.",
                  expect=violated, parent="appendix_c_flipped"),
    ]


#: Claim id -> measurement taking instance keyword arguments (``dpverify claim C12 --set ...``).
CLAIMS = {"C12": measure_appendix_c}
