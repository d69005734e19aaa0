"""Audit of stable and private predictions (Dagan–Feldman 2020): claims C9-C11 and their mutants.

Each ``measure_*`` function computes one instance exactly (every dataset multiset of size n over
the labeled records of X, replace-one neighbours, every query x; hypergeometric weights, no
sampling) with the fast tables of :mod:`dpverify.mechanisms.stable_prediction`, and returns a
:class:`dpverify.integrations.audit.Measurement` with the claim's explicit constants from ``docs/claims.md``.
Verdicts come from the one engine (:func:`dpverify.verdict.rows.decide_rows`, per query; states and
certification as in :mod:`dpverify.verdict.engine`). A lemma's preconditions are checked when its claim is asserted; pass
``outside_preconditions=True`` to measure anyway (the verdict is then ``None``: measured only).

Stability (C9) is the (0, gamma)-DP of the prediction: ``|P[A^S(x)=y] - P[A^{S'}(x)=y]|``, so it is
read as the hockey-stick value at eps = 0 of the per-query output rows. Its Measurement carries
the measured gamma* as ``epsilon_star`` and the claimed stability as ``claimed_epsilon`` (deltas 0);
``details["quantity"]`` says so.

Mutants (``mutant`` argument; each is checked against its parent's claim):

* C9 ``"no_subsampling"``: T = S (n' = n). ``"em_at_2gamma"`` (the EM at twice its privacy) is
  measured, not a mutant: gamma* <= (1 - n'/n) tanh(gamma/2) + n'/n < tanh(gamma/2) + gamma <=
  1.5 gamma, below the claimed 3 gamma on every instance.
* C10 ``"no_flip"``: the stable learner's prediction without the flip.
* C11 ``"no_subsampling"``: the eps-DP inner predictor on all of S.

Appendix C's learner (C12) is audited in :mod:`dpverify.mechanisms.audits.agnostic_prediction`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from fractions import Fraction
from typing import TypedDict

import numpy as np

from dpverify.errors import InvalidArgument
from dpverify.finite.multisets import MultisetTable
from dpverify.finite.records import concept_class, labeled_records
from dpverify.integrations.audit import AuditCase, Expect, Measurement
from dpverify.validation import check_choice, check_number
from dpverify.verdict.rows import PartsDecision, decide_parts, decide_rows, multiset_neighbors, worst_over_pairs

from ..label_flip import flip_rows
from ..relabeling import exact_parameter
from ..stable_prediction import StableParameters, a_sta_table, stable_parameters, subsampled_prediction_table
from ._instance import instance
from ._sources import SOURCES

__all__ = [
    "cases",
    "instance",
    "CLAIMS",
    "SOURCES",
    "measure_stability",
    "measure_flip_prediction",
    "measure_subsampled_prediction",
    "flip_parameters",
    "shown",
]

E6 = math.exp(6)


def _precondition(ok: bool, lemma: str, rule: str, values: str) -> None:
    if not ok:
        raise InvalidArgument(
            f"{lemma} needs {rule}, got {values}; change the parameters, or pass "
            "outside_preconditions=True to measure without asserting the claim."
        )


def _check_mutant(mutant: str | None, allowed: tuple[str, ...]) -> None:
    if mutant is not None:
        check_choice("mutant", mutant, allowed, fix="(or None for the mechanism)")


# -- per-query worst case over replace-one pairs -----------------------------------------------------


def _rows(probs: np.ndarray, query: int) -> np.ndarray:
    """``(datasets, 2)``: P[. = 0], P[. = 1] at ``query`` (a view of the ``(datasets, d, 2)`` table)."""
    return probs[:, query, :]


def _per_query_worst(s_table: MultisetTable, probs: np.ndarray, epsilon: float):
    """Measured figures only (no verdict): (eps*, delta* at ``epsilon``) over every query."""
    left, right = s_table.substitute_pairs()
    worst = [worst_over_pairs(_rows(probs, x), left, right, epsilon=epsilon) for x in range(probs.shape[1])]
    return max(w.epsilon_star for w in worst), max(w.delta_star for w in worst)


def _per_query_decision(s_table: MultisetTable, universe: tuple, probs: np.ndarray, *, epsilon: float,
                        delta: float = 0.0, pair_delta: np.ndarray | None = None,
                        pairs: tuple[np.ndarray, np.ndarray] | None = None) -> PartsDecision:
    """The engine's decision per query (rows = datasets, outcomes = the label 0/1), combined over
    queries; witnesses are replace-one neighbours, prefixed with their query."""
    left, right = s_table.substitute_pairs() if pairs is None else pairs

    def label(row: int) -> tuple:
        return s_table.records(row, universe)

    return decide_parts(
        (x, decide_rows(_rows(probs, x), left, right, epsilon=epsilon, delta=delta, label=label,
                        is_neighbor=multiset_neighbors, outcomes=("label 0", "label 1"), pair_delta=pair_delta))
        for x in range(probs.shape[1])
    )


def _query(x: int) -> str:
    return f"query x = {x}"


# -- C9: uniform stability of A^sta ---------------------------------------------------------------------


def measure_stability(
    *,
    concept: str = "thresholds",
    domain_size: int = 3,
    n: int = 20,
    gamma=Fraction(1, 10),
    variant: str = "lemma13",
    n_prime: int | None = None,
    mutant: str | None = None,
    outside_preconditions: bool = False,
) -> Measurement:
    """C9 (Lemma 13 / Thm. 10): A^sta is 3 gamma-stable (the outline's variant: gamma-stable).

    The explicit form ``(e^{gamma_EM} - 1) + n'/n`` is reported beside the claim. Mutants keep the
    parent's claim: ``"no_subsampling"`` (n' = n); ``"em_at_2gamma"`` (EM at twice its privacy) is a
    measured variant that cannot exceed 1.5 gamma (see the module docstring).
    """
    _check_mutant(mutant, ("no_subsampling", "em_at_2gamma"))
    parameters = stable_parameters(gamma, n, variant=variant, n_prime=n_prime, outside_preconditions=outside_preconditions)
    cc = concept_class(concept, domain_size)
    run_n_prime = n if mutant == "no_subsampling" else parameters.n_prime
    run_em = 2 * parameters.em_privacy if mutant == "em_at_2gamma" else parameters.em_privacy
    s_table, probs = a_sta_table(cc, n, run_n_prime, run_em)
    claimed = float(parameters.claimed_stability)
    # At eps = 0 the hockey-stick value of a two-outcome row pair is |P - P'|: stability is (0, gamma).
    decision = _per_query_decision(s_table, labeled_records(domain_size), probs, epsilon=0.0, delta=claimed)
    gamma_star, query = decision.delta_star, decision.delta_part
    holds = None if outside_preconditions else decision.verdict
    witness, part = decision.witness_of(_query)
    details = {
        "quantity": "additive stability gamma* = max |P[A^S(x)=y] - P[A^S'(x)=y]|",
        "variant": parameters.variant,
        "n_prime": run_n_prime,
        "em_privacy": float(run_em),
        "gamma": float(parameters.gamma),
        "gamma_star": gamma_star,
        "claimed_stability": claimed,
        "explicit_stability": parameters.explicit_stability,
        "explicit_holds": _per_query_decision(s_table, labeled_records(domain_size), probs, epsilon=0.0,
                                              delta=float(parameters.explicit_stability)).holds,
        # sharper: the EM moves P[h(x) = y] by at most tanh(gamma_EM / 4) (P ∝ exp(-gamma_EM m_h / 2),
        # m_h moving by 1), and only the n'/n share of index sets containing the changed record
        # sees another H_T.
        "em_tanh_bound": (1 - run_n_prime / n) * math.tanh(float(run_em) / 4) + run_n_prime / n,
        "slack": claimed - gamma_star,
        "explicit_slack": parameters.explicit_stability - gamma_star,
        "gamma_star_over_gamma": gamma_star / float(parameters.gamma),
        "worst_query": query,
        "datasets": len(s_table),
    }
    return Measurement(gamma_star, 0.0, claimed, 0.0, holds, details=details, witness_data=witness, witness_part=part)


# -- C10: Corollary 2, stability + flip ------------------------------------------------------------------


def flip_parameters(epsilon, alpha, n: int, *, stable: str = "outline") -> StableParameters:
    """Corollary 2's stable learner: gamma = eps alpha / 2 and a gamma-stable A^sta.

    ``stable="outline"``: the Section-3 outline at gamma (|T| = floor(gamma n/2), EM at gamma/4);
    ``stable="lemma13"``: Lemma 13's A^sta at gamma/3 (3 (gamma/3) = gamma), n' = floor(gamma n/3).
    """
    gamma = exact_parameter(epsilon) * exact_parameter(alpha) / 2
    if stable == "outline":
        return stable_parameters(gamma, n, variant="outline")
    if stable == "lemma13":
        return stable_parameters(gamma / 3, n, variant="lemma13")
    raise InvalidArgument(f"unknown stable learner {stable!r} for Corollary 2; choose 'outline' or 'lemma13'.")


def measure_flip_prediction(
    *,
    concept: str = "thresholds",
    domain_size: int = 3,
    n: int = 20,
    epsilon=Fraction(4, 5),
    alpha=Fraction(1, 4),
    stable: str = "outline",
    mutant: str | None = None,
    outside_preconditions: bool = False,
) -> Measurement:
    """C10 (Corollary 2): a gamma = eps alpha/2 -stable A^sta, then flip with probability alpha:
    eps-DP prediction; explicit ``ln(1 + gamma/alpha)``. Mutant ``"no_flip"``."""
    _check_mutant(mutant, ("no_flip",))
    check_number("alpha", alpha, at_least=0, at_most=Fraction(1, 2), fix="alpha is the flip probability")
    a, e = exact_parameter(alpha), exact_parameter(epsilon)
    if not outside_preconditions:
        _precondition(0 < a, "Corollary 2", "alpha > 0 (alpha in (0, 1/2])", f"alpha={alpha}")
        _precondition(0 < e < 1, "Corollary 2", "epsilon in (0, 1)", f"epsilon={epsilon}")
    parameters = flip_parameters(epsilon, alpha, n, stable=stable)
    gamma = float(e * a / 2)
    cc = concept_class(concept, domain_size)
    s_table, stable_probs = a_sta_table(cc, n, parameters.n_prime, parameters.em_privacy)
    probs = stable_probs if mutant == "no_flip" else flip_rows(stable_probs, a)
    claimed = float(e)
    worst = _per_query_decision(s_table, labeled_records(domain_size), probs, epsilon=claimed)
    holds = None if outside_preconditions else worst.verdict
    witness, part = worst.witness_of(_query)
    _, gamma_star = _per_query_worst(s_table, stable_probs, 0.0)
    details = {
        "stable_learner": stable,
        "gamma": gamma,
        "n_prime": parameters.n_prime,
        "em_privacy": float(parameters.em_privacy),
        "explicit_epsilon": math.log1p(gamma / float(a)) if a > 0 else math.inf,
        "gamma_star_of_stable_learner": gamma_star,
        "epsilon_from_measured_gamma": math.log1p(gamma_star / float(a)) if a > 0 else math.inf,
        "slack": claimed - worst.epsilon_star,
        "datasets": len(s_table),
    }
    return Measurement(worst.epsilon_star, 0.0, claimed, 0.0, holds, details=details, witness_data=witness,
                       witness_part=part)


# -- C11: Lemma 8, amplification by subsampling for prediction -------------------------------------


def measure_subsampled_prediction(
    *,
    concept: str = "thresholds",
    domain_size: int = 3,
    n: int = 8,
    eta=Fraction(1, 4),
    epsilon=Fraction(1, 2),
    inner: str = "realizable",
    mutant: str | None = None,
    outside_preconditions: bool = False,
) -> Measurement:
    """C11 (Lemma 8): an eps-DP prediction algorithm on a uniform subset of size n' = eta n gives
    2 eps eta -DP prediction (eps < 1), checked per query. Mutant ``"no_subsampling"``: n' = n."""
    _check_mutant(mutant, ("no_subsampling",))
    h, e = exact_parameter(eta), exact_parameter(epsilon)
    if (h * n).denominator != 1 or not 1 <= h * n <= n:
        raise InvalidArgument(
            f"Lemma 8 subsamples n' = eta n records, which must be an integer in [1, n]; got eta={eta}, "
            f"n={n} (eta n = {float(h * n):g}). Choose eta as a multiple of 1/n."
        )
    if not outside_preconditions:
        _precondition(0 < e < 1, "Lemma 8", "epsilon in (0, 1)", f"epsilon={epsilon}")
        _precondition(h < 1, "Lemma 8", "eta in (0, 1)", f"eta={eta}")
    n_prime = int(h * n)
    cc = concept_class(concept, domain_size)
    run_n_prime = n if mutant == "no_subsampling" else n_prime
    s_table, probs = subsampled_prediction_table(cc, n, run_n_prime, e, inner=inner)
    claimed = float(2 * e * h)
    worst = _per_query_decision(s_table, labeled_records(domain_size), probs, epsilon=claimed)
    holds = None if outside_preconditions else worst.verdict
    witness, part = worst.witness_of(_query)
    inner_table, inner_probs = subsampled_prediction_table(cc, n_prime, n_prime, e, inner=inner)
    inner_epsilon_star, _ = _per_query_worst(inner_table, inner_probs, float(e))
    details = {
        "n_prime": run_n_prime,
        "inner": inner,
        "inner_epsilon_star": inner_epsilon_star,
        "tight_amplification": math.log1p(float(h) * math.expm1(float(e))),
        "slack": claimed - worst.epsilon_star,
        "epsilon_star_over_epsilon_eta": worst.epsilon_star / float(e * h),
        "datasets": len(s_table),
    }
    return Measurement(worst.epsilon_star, 0.0, claimed, 0.0, holds, details=details, witness_data=witness,
                       witness_part=part)


# -- the audit rows -------------------------------------------------------------------------------------


def shown(parameters: Mapping[str, object], **extra: object) -> dict:
    """A row's parameters as reported: ``concept`` as ``concept_class``, fractions as ``"1/3"``."""
    out = {("concept_class" if k == "concept" else k): (str(Fraction(v)) if isinstance(v, Fraction) else v)
           for k, v in parameters.items()}
    return {**out, **extra}


class _StabilityInstance(TypedDict, total=False):
    """Keyword arguments of :func:`measure_stability` that the C9 rows set."""

    concept: str
    domain_size: int
    n: int
    gamma: Fraction
    variant: str


class _FlipInstance(TypedDict, total=False):
    """Keyword arguments of :func:`measure_flip_prediction` that the C10 rows set."""

    concept: str
    domain_size: int
    n: int
    epsilon: Fraction
    alpha: Fraction
    stable: str


class _SubsampledInstance(TypedDict, total=False):
    """Keyword arguments of :func:`measure_subsampled_prediction` that the C11 rows set."""

    concept: str
    domain_size: int
    n: int
    eta: Fraction
    epsilon: Fraction


def cases() -> list[AuditCase]:
    """Claims C9-C11 of Dagan–Feldman 2020 on their default instances, with mutants."""
    c9: _StabilityInstance = {"concept": "thresholds", "domain_size": 3, "n": 20, "gamma": Fraction(1, 10)}
    c9_outline: _StabilityInstance = {**c9, "gamma": Fraction(1, 5), "variant": "outline"}
    c10: _FlipInstance = {"concept": "thresholds", "domain_size": 3, "n": 20, "epsilon": Fraction(4, 5), "alpha": Fraction(1, 4)}
    c10_lemma13: _FlipInstance = {**c10, "domain_size": 2, "n": 30, "stable": "lemma13"}
    c11: _SubsampledInstance = {"concept": "thresholds", "domain_size": 3, "n": 8, "eta": Fraction(1, 4), "epsilon": Fraction(1, 2)}

    stability, flip, subsampled = measure_stability, measure_flip_prediction, measure_subsampled_prediction
    c9_intervals: _StabilityInstance = {**c9, "concept": "intervals", "n": 12, "gamma": Fraction(1, 6)}
    violated = Expect.VIOLATED
    return [
        AuditCase("C9", "a_sta", shown(c9), functools.partial(stability, **c9),
                  "Lemma 13: A^sta (n' = floor(gamma n), EM at gamma) is 3 gamma-stable; explicit (e^gamma - 1) + n'/n."),
        AuditCase("C9", "a_sta", shown(c9_intervals), functools.partial(stability, **c9_intervals), "Lemma 13 on intervals."),
        AuditCase("C9", "a_sta_outline", shown(c9_outline), functools.partial(stability, **c9_outline),
                  "Section 3 outline: |T| = gamma n/2, EM at gamma/4, claim gamma-stable."),
        AuditCase("C9", "mutant_a_sta_no_subsampling", shown(c9, mutant="no_subsampling"),
                  functools.partial(stability, **c9, mutant="no_subsampling"),
                  "T = S (n' = n): H_T moves with every record.", expect=violated, parent="a_sta"),
        AuditCase("C9", "a_sta_em_at_2gamma", shown(c9, mutant="em_at_2gamma"), functools.partial(stability, **c9, mutant="em_at_2gamma"),
                  "Not a mutant of C9: the EM moves each P[h(x) = y] by at most tanh(gamma_EM/4), and only the n'/n "
                  "share of index sets holding the changed record sees another H_T, so with the EM at 2 gamma "
                  "gamma* <= (1 - n'/n) tanh(gamma/2) + n'/n < tanh(gamma/2) + gamma <= 1.5 gamma < 3 gamma on "
                  "every instance (here 0.0841 <= 0.1450 < 0.15). Measured to show it.",
                  expect=Expect.MEASURED),
        AuditCase("C10", "flip_prediction", shown(c10), functools.partial(flip, **c10),
                  "Corollary 2: gamma = eps alpha/2 -stable outline A^sta, flip with prob. alpha: eps-DP; "
                  "explicit ln(1 + gamma/alpha)."),
        AuditCase("C10", "flip_prediction_lemma13", shown(c10_lemma13), functools.partial(flip, **c10_lemma13),
                  "Corollary 2 with Lemma 13's A^sta at gamma/3 (3 (gamma/3) = gamma)."),
        AuditCase("C10", "mutant_no_flip", shown(c10, mutant="no_flip"), functools.partial(flip, **c10, mutant="no_flip"),
                  "The stable learner's prediction without the flip.", expect=violated, parent="flip_prediction"),
        AuditCase("C11", "subsampled_prediction", shown(c11), functools.partial(subsampled, **c11),
                  "Lemma 8: C6 (one record per part, eps-DP) on a uniform eta n -subset: 2 eps eta -DP prediction."),
        AuditCase("C11", "subsampled_prediction_exponential", shown(c11, inner="exponential"),
                  functools.partial(subsampled, **c11, inner="exponential"),
                  "Lemma 8 with an EM predictor (EM over the class at eps, predict c(x))."),
        AuditCase("C11", "mutant_no_subsampling", shown(c11, mutant="no_subsampling"),
                  functools.partial(subsampled, **c11, mutant="no_subsampling"),
                  "The eps-DP predictor on all of S.", expect=violated, parent="subsampled_prediction"),
    ]


#: Claim id -> measurement taking instance keyword arguments (``dpverify claim C9 --set ...``).
CLAIMS = {
    "C9": measure_stability,
    "C10": measure_flip_prediction,
    "C11": measure_subsampled_prediction,
}
