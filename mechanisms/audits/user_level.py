"""Audit of the user-level learners of Li–Wang–Ye 2024: claims C15 (Thm. 4.6) and C16 (Alg. 1).

* C15: :class:`dpverify.mechanisms.user_level.UserLevelLearner` is eps-DP at user level; each PrivateCompare
  of its PrivateMinError is eps'-DP (``eps' = (eps/2)/T``), every midpoint checked.
* C16: :class:`dpverify.mechanisms.private_threshold.PrivateThreshold` is eps-DP at user level; its
  PrivateMedian (Lemma 5.1) is eps'-DP.

Exhaustive and exact, as in :mod:`dpverify.mechanisms.audits.item_level`: every pair of user-level
neighbours (one user's block of ``m`` records replaced, :class:`dpverify.finite.neighbors.UserLevel`, or
the paper's add/remove of one user), Laplace comparisons in closed form (:mod:`dpverify.mechanisms.laplace`).

The proofs use basic composition, which is loose on these instances: the measured eps* of the full
learners is well below eps, and ``details["epsilon_slack"] = eps - eps*`` says by how much. A
mutant that only doubles one component can stay under eps at the default size; each is given an
instance where it breaks the budget by more than the slack (the EM without its 1/2 at n = 3,
eps = 4; PrivateThreshold's half noise at eps = 16) and is caught there with a witness.

Variants (``variant`` argument): C15 ``"user_level_learner"``, ``"mutant_user_level_half_noise"``
(PrivateCompare's Laplace scale halved), ``"mutant_user_level_without_composition"``
(PrivateMinError and EM both at eps), ``"mutant_user_level_without_half"``; PrivateCompare alone
``"private_compare"``, ``"mutant_private_compare_half_noise"``. C16 ``"private_threshold"``,
``"mutant_threshold_without_composition"`` (``eps' = eps/T``), ``"mutant_threshold_scale_inverted"``
(Laplace scale ``eps'/n``), ``"mutant_threshold_half_noise"``,
``"mutant_threshold_median_without_half"``; PrivateMedian alone ``"private_median"``,
``"mutant_private_median_without_half"``.
"""

from __future__ import annotations

from fractions import Fraction
from functools import partial
from typing import Any

from dpverify.checking.checker import VerificationResult
from dpverify.checking.front import verify
from dpverify.finite.neighbors import user_blocks, user_level
from dpverify.finite.records import concept_class, labeled_records
from dpverify.integrations.audit import AuditCase, Expect, Measurement
from dpverify.verdict.engine import Verdict

from ..exponential import exponential_mechanism, exponential_mechanism_without_half
from ..private_min_error import PrivateCompare
from ..private_threshold import (
    MutantThresholdScaleInverted,
    MutantThresholdWithoutComposition,
    PrivateMedian,
    PrivateThreshold,
)
from ..user_data import threshold_records
from ..user_level import MutantUserLevelWithoutComposition, UserLevelLearner
from ._instance import EXCHANGEABLE_SAMPLES, instance
from ._sources import SOURCES
from .item_level import _check_count, _check_variant, _measurement, _relation, hypothesis_family

__all__ = [
    "USER_LEVEL_VARIANTS",
    "COMPARE_VARIANTS",
    "THRESHOLD_VARIANTS",
    "MEDIAN_VARIANTS",
    "measure_user_level",
    "measure_private_compare",
    "measure_private_threshold",
    "measure_private_median",
    "cases",
    "instance",
    "CLAIMS",
    "SOURCES",
]

USER_LEVEL_VARIANTS = ("user_level_learner", "mutant_user_level_half_noise", "mutant_user_level_without_composition",
                       "mutant_user_level_without_half")
COMPARE_VARIANTS = ("private_compare", "mutant_private_compare_half_noise")
THRESHOLD_VARIANTS = ("private_threshold", "mutant_threshold_without_composition", "mutant_threshold_scale_inverted",
                      "mutant_threshold_half_noise", "mutant_threshold_median_without_half")
MEDIAN_VARIANTS = ("private_median", "mutant_private_median_without_half")


def _user_records(records: tuple, m: int, ordered: bool) -> tuple:
    return user_blocks(records, m, ordered=ordered)


# -- C15 ----------------------------------------------------------------------------------------


def _user_level_learner(variant: str, C, family, **kwargs) -> UserLevelLearner:
    if variant == "mutant_user_level_without_composition":
        return MutantUserLevelWithoutComposition(C, family, **kwargs)
    if variant == "mutant_user_level_half_noise":
        return UserLevelLearner(C, family, noise_factor=Fraction(1, 2), **kwargs)
    if variant == "mutant_user_level_without_half":
        return UserLevelLearner(C, family, selector=exponential_mechanism_without_half, **kwargs)
    return UserLevelLearner(C, family, **kwargs)


def measure_user_level(
    *,
    concept: str = "thresholds",
    domain_size: int = 2,
    H: str = "all_functions",
    mixture: bool = False,
    m: int = 2,
    n: int = 2,
    epsilon: Any = 1,
    alpha: Any = 1,
    min_error_alpha: Any = None,
    reveal_estimate: bool = True,
    ordered_blocks: bool = True,
    variant: str = "user_level_learner",
    neighbors: str = "replace_one",
    outside_preconditions: bool = False,
) -> Measurement:
    """C15 (Li–Wang–Ye 2024 Thm. 4.6): eps* of the user-level learner over every user-level pair of ``n`` users.

    Args:
        concept, domain_size, H, mixture: as in :func:`measure_item_level`.
        m: examples per user. n: users. epsilon: the privacy parameter and the claimed epsilon.
        alpha: Thm. 4.6's accuracy; min_error_alpha: Alg. 2's (default alpha/6, see
            :class:`dpverify.mechanisms.user_level.UserLevelLearner`).
        reveal_estimate: check the output ``(eta^, h)`` (default, stronger) instead of ``h``.
        ordered_blocks: every ordered block of ``m`` records (default) or one per multiset.
        variant: a name of :data:`USER_LEVEL_VARIANTS`.
        outside_preconditions: accepted for uniformity (no precondition for privacy).
    """
    _check_variant(variant, USER_LEVEL_VARIANTS)
    _check_count("n", n)
    C = concept_class(concept, domain_size)
    family = hypothesis_family(H, domain_size, mixture=mixture)
    learner = _user_level_learner(variant, C, family, m=m, epsilon=epsilon, alpha=alpha,
                                  min_error_alpha=min_error_alpha, reveal_estimate=reveal_estimate)
    result = verify(learner, records=_user_records(labeled_records(domain_size), m, ordered_blocks), n=n,
                    epsilon=epsilon, neighbors=_relation(neighbors, m), exchangeable="assume", seed=0,
                    exchangeable_samples=EXCHANGEABLE_SAMPLES)
    pme = learner.min_error
    return _measurement(result, epsilon, T=pme.T, epsilon_prime=str(pme.epsilon_prime),
                        output="(eta^, h)" if reveal_estimate else "h")


def measure_private_compare(
    *,
    concept: str = "thresholds",
    domain_size: int = 2,
    m: int = 2,
    n: int = 2,
    epsilon: Any = 1,
    alpha: Any = 1,
    min_error_alpha: Any = None,
    ordered_blocks: bool = True,
    variant: str = "private_compare",
    outside_preconditions: bool = False,
) -> Measurement:
    """C15, second part (Li–Wang–Ye 2024 Lemma C.1): every PrivateCompare that Thm. 4.6's PrivateMinError can
    call (each midpoint ``eta~``) is eps'-DP, ``eps' = (epsilon/2)/T``; eps* is the worst over them.

    Arguments as :func:`measure_user_level`; ``variant`` from :data:`COMPARE_VARIANTS`.
    """
    _check_variant(variant, COMPARE_VARIANTS)
    _check_count("n", n)
    C = concept_class(concept, domain_size)
    pme = UserLevelLearner(C, C, m=m, epsilon=epsilon, alpha=alpha, min_error_alpha=min_error_alpha).min_error
    noise = Fraction(1, 2) if variant == "mutant_private_compare_half_noise" else 1
    blocks = _user_records(labeled_records(domain_size), m, ordered_blocks)
    worst: tuple[VerificationResult, Fraction] | None = None
    per_mid = {}
    verdicts = []
    for mid in pme.midpoints():
        compare = PrivateCompare(C, m=m, epsilon=pme.epsilon_prime, eta_tilde=mid, alpha=pme.alpha, noise_factor=noise)
        result = verify(compare, records=blocks, n=n, epsilon=pme.epsilon_prime, neighbors=user_level(m))
        per_mid[str(mid)] = result.epsilon
        verdicts.append(result.verdict)
        if worst is None or (not result.holds and worst[0].holds) or (
                result.holds == worst[0].holds and result.epsilon > worst[0].epsilon):
            worst = (result, mid)
    assert worst is not None
    result, mid = worst
    measured = _measurement(result, pme.epsilon_prime, T=pme.T, midpoints=len(per_mid),
                            worst_midpoint=str(mid), epsilon_star_by_midpoint=per_mid)
    return Measurement(measured.epsilon_star, measured.delta_star, measured.claimed_epsilon, 0.0,
                       Verdict.combine(verdicts), details=measured.details, witness_data=measured.witness_data)


# -- C16 ----------------------------------------------------------------------------------------


def measure_private_threshold(
    *,
    N: int = 3,
    m: int = 2,
    n: int = 2,
    epsilon: Any = 1,
    T: int = 1,
    t: int = 0,
    theta: Any = Fraction(2, 3),
    ordered_blocks: bool = True,
    variant: str = "private_threshold",
    neighbors: str = "replace_one",
    outside_preconditions: bool = False,
) -> Measurement:
    """C16 (Li–Wang–Ye 2024 Alg. 1): eps* of PrivateThreshold over every user-level pair of ``n`` users.

    Args:
        N: ``|X|`` (``X = {1..N}``). m: examples per user. n: users. epsilon: privacy and claim.
        T: rounds. t: the user-level error parameter. theta: the decaying factor.
        ordered_blocks: as in :func:`measure_user_level`. variant: from :data:`THRESHOLD_VARIANTS`.
        outside_preconditions: accepted for uniformity.
    """
    _check_variant(variant, THRESHOLD_VARIANTS)
    _check_count("n", n)
    kwargs: dict[str, Any] = {"m": m, "epsilon": epsilon, "T": T, "t": t, "theta": theta}
    if variant == "mutant_threshold_without_composition":
        mechanism: PrivateThreshold = MutantThresholdWithoutComposition(N, **kwargs)
    elif variant == "mutant_threshold_scale_inverted":
        mechanism = MutantThresholdScaleInverted(N, **kwargs)
    elif variant == "mutant_threshold_half_noise":
        mechanism = PrivateThreshold(N, noise_factor=Fraction(1, 2), **kwargs)
    elif variant == "mutant_threshold_median_without_half":
        mechanism = PrivateThreshold(N, selector=exponential_mechanism_without_half, **kwargs)
    else:
        mechanism = PrivateThreshold(N, **kwargs)
    result = verify(mechanism, records=_user_records(threshold_records(N), m, ordered_blocks), n=n,
                    epsilon=epsilon, neighbors=_relation(neighbors, m), exchangeable="assume", seed=0,
                    exchangeable_samples=EXCHANGEABLE_SAMPLES)
    return _measurement(result, epsilon, epsilon_prime=str(mechanism.epsilon_prime))


def measure_private_median(
    *,
    N: int = 3,
    m: int = 2,
    n: int = 2,
    epsilon: Any = Fraction(1, 4),
    l: int = 0,
    r: int | None = None,
    alpha: Any = 1,
    ordered_blocks: bool = True,
    variant: str = "private_median",
    neighbors: str = "replace_one",
    outside_preconditions: bool = False,
) -> Measurement:
    """C16's first step (Li–Wang–Ye 2024 Lemma 5.1): PrivateMedian on ``[l, r]`` (default ``[0, N]``) is eps-DP.

    Arguments as :func:`measure_private_threshold`; ``epsilon`` is the median's own (``eps'``).
    """
    _check_variant(variant, MEDIAN_VARIANTS)
    _check_count("n", n)
    selector = exponential_mechanism_without_half if variant == "mutant_private_median_without_half" else exponential_mechanism
    median = PrivateMedian(N, m=m, epsilon=epsilon, l=l, r=N if r is None else r, alpha=alpha, selector=selector)
    result = verify(median, records=_user_records(threshold_records(N), m, ordered_blocks), n=n,
                    epsilon=epsilon, neighbors=_relation(neighbors, m), exchangeable="assume", seed=0,
                    exchangeable_samples=EXCHANGEABLE_SAMPLES)
    return _measurement(result, epsilon, s=median.s)


# -- the audit rows -----------------------------------------------------------------------------


def cases() -> list[AuditCase]:
    """The C15 and C16 rows on small instances (all together well under a minute on 2 cores)."""
    violated = Expect.VIOLATED
    learner, compare = measure_user_level, measure_private_compare
    threshold, median = measure_private_threshold, measure_private_median

    def run(measure: Any, variant: str, parameters: dict) -> Any:
        return partial(measure, **parameters, variant=variant)

    c15 = {"concept": "thresholds", "domain_size": 2, "H": "all_functions", "m": 2, "n": 2, "epsilon": 1, "alpha": 1}
    c15_h = {**c15, "reveal_estimate": False}
    c15_mixture = {**c15, "mixture": True}
    c15_three = {**c15, "n": 3}
    c15_large = {**c15, "n": 3, "epsilon": 4}
    pc = {"concept": "thresholds", "domain_size": 2, "m": 2, "n": 2, "epsilon": 1, "alpha": 1}
    c16 = {"N": 3, "m": 2, "n": 2, "epsilon": 1, "T": 1, "t": 0}
    c16_two = {**c16, "T": 2}
    c16_users = {**c16, "N": 2, "n": 3, "T": 2}
    c16_large = {**c16, "epsilon": 16}
    pm = {"N": 3, "m": 2, "n": 2, "epsilon": Fraction(1, 4)}
    ar = {"neighbors": "add_remove"}  # the paper's own relation (Sec. 2): add or remove one user
    c15_ar, c16_ar, pm_ar = {**c15, **ar}, {**c16, **ar}, {**pm, **ar}
    return [
        AuditCase("C15", "user_level_learner", c15, run(learner, "user_level_learner", c15),
                  "Thm. 4.6: PrivateMinError (eps/2, alpha/6: T = 4) then EM (eps/2) over H with "
                  "q = min_c err^t + dis^0, Delta = 2/n; output (eta^, h); user-level neighbours."),
        AuditCase("C15", "user_level_learner", c15_h, run(learner, "user_level_learner", c15_h),
                  "Thm. 4.6, output h only."),
        AuditCase("C15", "user_level_learner", c15_mixture, run(learner, "user_level_learner", c15_mixture),
                  "Thm. 4.6 with H drawn from a distribution over two families."),
        AuditCase("C15", "user_level_learner", c15_three, run(learner, "user_level_learner", c15_three),
                  "Thm. 4.6 with 3 users (16,320 user-level pairs)."),
        AuditCase("C15", "private_compare", pc, run(compare, "private_compare", pc),
                  "Lemma C.1: each PrivateCompare of PrivateMinError (15 midpoints) is eps'-DP, "
                  "eps' = (eps/2)/T = 1/8; tight."),
        AuditCase("C15", "mutant_user_level_half_noise", c15, run(learner, "mutant_user_level_half_noise", c15),
                  "PrivateCompare's Laplace scale halved: PrivateMinError spends eps instead of eps/2.",
                  expect=violated, parent="user_level_learner"),
        AuditCase("C15", "mutant_user_level_without_composition", c15,
                  run(learner, "mutant_user_level_without_composition", c15),
                  "PrivateMinError and EM both at eps (the budget not split): up to 2 eps.",
                  expect=violated, parent="user_level_learner"),
        AuditCase("C15", "mutant_private_compare_half_noise", pc, run(compare, "mutant_private_compare_half_noise", pc),
                  "PrivateCompare with Laplace scale 1/(2 eps' n): eps* = 2 eps'.",
                  expect=violated, parent="private_compare"),
        AuditCase("C15", "mutant_user_level_without_half", c15_large,
                  run(learner, "mutant_user_level_without_half", c15_large),
                  "EM without its 1/2: at the default size (n = 2, eps = 1) its part doubles but stays inside the "
                  "composition's slack (0.8945 <= 1); at n = 3, eps = 4 it is caught: eps* 4.101 > 4 (the parent: 2.933).",
                  expect=violated, parent="user_level_learner"),
        AuditCase("C16", "private_threshold", c16, run(threshold, "private_threshold", c16),
                  "Alg. 1, T = 1: eps' = eps/4; PrivateMedian + three Laplace values err^t + Lap(1/(n eps'))."),
        AuditCase("C16", "private_threshold", c16_two, run(threshold, "private_threshold", c16_two),
                  "Alg. 1, T = 2 (eps' = eps/8)."),
        AuditCase("C16", "private_threshold", c16_users, run(threshold, "private_threshold", c16_users),
                  "Alg. 1 with 3 users over X = {1, 2}."),
        AuditCase("C16", "private_median", pm, run(median, "private_median", pm),
                  "Lemma 5.1: EM over u in [0, N] with q = max(dis^s(f_{l-1}, f_{u-1}), dis^s(f_u, f_r)), Delta = 1/n."),
        AuditCase("C16", "mutant_threshold_without_composition", c16,
                  run(threshold, "mutant_threshold_without_composition", c16),
                  "eps' = eps/T: the four eps'-steps of a round not composed (up to 4 eps).",
                  expect=violated, parent="private_threshold"),
        AuditCase("C16", "mutant_threshold_scale_inverted", c16, run(threshold, "mutant_threshold_scale_inverted", c16),
                  "Laplace scale eps'/n instead of 1/(n eps') (16 times too little noise here).",
                  expect=violated, parent="private_threshold"),
        AuditCase("C16", "mutant_threshold_half_noise", c16_large, run(threshold, "mutant_threshold_half_noise", c16_large),
                  "Laplace scale halved: the three values spend 6 eps' instead of 3 eps'. Within the composition's "
                  "slack at eps = 1 (0.7217 <= 1); caught at eps = 16: eps* 16.74 > 16 (the parent: 9.340).",
                  expect=violated, parent="private_threshold"),
        AuditCase("C16", "mutant_private_median_without_half", pm, run(median, "mutant_private_median_without_half", pm),
                  "PrivateMedian's EM without its 1/2: up to 2 eps'.",
                  expect=violated, parent="private_median"),
        AuditCase("C15", "user_level_learner", c15_ar, run(learner, "user_level_learner", c15_ar),
                  "Thm. 4.6 under add/remove of one user's whole block: eps* 0.4897 <= 1 (replace-one: 0.6897)."),
        AuditCase("C16", "private_threshold", c16_ar, run(threshold, "private_threshold", c16_ar),
                  "Alg. 1 under add/remove of one user: eps* 0.2175 <= 1 (replace-one: 0.3863)."),
        AuditCase("C16", "mutant_threshold_scale_inverted", c16_ar, run(threshold, "mutant_threshold_scale_inverted", c16_ar),
                  "Laplace scale eps'/n under add/remove: eps* 3.658 > 1.",
                  expect=violated, parent="private_threshold"),
        AuditCase("C16", "private_median", pm_ar, run(median, "private_median", pm_ar),
                  "Lemma 5.1 under add/remove: eps* 0.0979 <= 1/4 (replace-one: 0.1626)."),
    ]


#: Claim id -> measurement taking instance keyword arguments (``dpverify claim C15 --set ...``).
CLAIMS = {"C15": measure_user_level, "C16": measure_private_threshold}
