"""Audit measurements for seed 004 (004_a14259b5d8cc6cca.txt): claims C14, C15, C16 and mutants.

Every measurement is exhaustive and exact: :func:`dpverify.verify` enumerates every neighbouring
pair under the paper's relation — 004 Sec. 2: datasets are neighbours when one is the other with a
single user added or removed (item level: one record), ``neighbors="add_remove"`` — and under the
stronger replace-one relation the rest of the audit uses (item level: one labeled record replaced;
user level: one user's whole block replaced, :class:`dpverify.neighbors.UserLevel`), over the
multisets of users since the mechanisms are
declared exchangeable — a declaration the checker tests on every ordering at these sizes), takes
each mechanism's exact output distribution (Laplace comparisons in closed form by
:mod:`mechanisms.laplace`, never sampled) and certifies tight pairs with the exact sympy values.

* C14 (Thm. 3.4): :class:`mechanisms.pure_agnostic.ItemLevelLearner` is eps-DP.
* C15 (Thm. 4.6): :class:`mechanisms.user_level.UserLevelLearner` is eps-DP at user level; each
  PrivateCompare of its PrivateMinError is eps'-DP (``eps' = (eps/2)/T``), every midpoint checked.
* C16 (Alg. 1): :class:`mechanisms.user_level.PrivateThreshold` is eps-DP at user level; its
  PrivateMedian (Lemma 5.1) is eps'-DP.

The proofs use basic composition, which is loose on these instances: the measured eps* of the full
learners is well below eps, and ``details["epsilon_slack"] = eps - eps*`` says by how much. A
mutant that only doubles one component can stay under eps at the default size; each is given an
instance where it breaks the budget by more than the slack (the EM without its 1/2 at n = 3,
eps = 4; PrivateThreshold's half noise at eps = 16) and is caught there with a witness.

Variants (``variant`` argument; ``mutant_*`` must violate their parent's claim):

* C14: ``"item_level_learner"``, ``"mutant_item_level_without_half"`` (EM without its 1/2, i.e.
  ``Delta = 1/n``), ``"mutant_item_level_family_from_data"`` (``H`` built from the sample).
* C15: ``"user_level_learner"``, ``"mutant_user_level_half_noise"`` (PrivateCompare's Laplace
  scale halved), ``"mutant_user_level_without_composition"`` (PrivateMinError and EM both at eps),
  ``"mutant_user_level_without_half"`` (EM without its 1/2); PrivateCompare alone:
  ``"private_compare"``, ``"mutant_private_compare_half_noise"``.
* C16: ``"private_threshold"``, ``"mutant_threshold_without_composition"`` (``eps' = eps/T``),
  ``"mutant_threshold_scale_inverted"`` (Laplace scale ``eps'/n``), ``"mutant_threshold_half_noise"``,
  ``"mutant_threshold_median_without_half"``; PrivateMedian alone: ``"private_median"``,
  ``"mutant_private_median_without_half"``.
"""

from __future__ import annotations

from fractions import Fraction
from functools import partial
from typing import Any


from dpverify.audit import AuditCase, Measurement
from dpverify.checker import VerificationResult, verify
from dpverify.domains import ConceptClass, concept_class, labeled_records
from dpverify.engine import Verdict
from dpverify.errors import InvalidArgument
from dpverify.neighbors import user_blocks, user_level
from mechanisms.exponential import exponential_mechanism, exponential_mechanism_without_half
from mechanisms.pure_agnostic import ItemLevelLearner, MutantFamilyFromData
from mechanisms.user_level import (
    MutantThresholdScaleInverted,
    MutantThresholdWithoutComposition,
    MutantUserLevelWithoutComposition,
    PrivateCompare,
    PrivateMedian,
    PrivateThreshold,
    UserLevelLearner,
    threshold_records,
)

__all__ = [
    "ITEM_LEVEL_VARIANTS",
    "USER_LEVEL_VARIANTS",
    "COMPARE_VARIANTS",
    "THRESHOLD_VARIANTS",
    "MEDIAN_VARIANTS",
    "hypothesis_family",
    "measure_item_level",
    "measure_user_level",
    "measure_private_compare",
    "measure_private_threshold",
    "measure_private_median",
    "cases",
    "CLAIM_MEASUREMENTS",
]

ITEM_LEVEL_VARIANTS = ("item_level_learner", "mutant_item_level_without_half", "mutant_item_level_family_from_data")
USER_LEVEL_VARIANTS = ("user_level_learner", "mutant_user_level_half_noise", "mutant_user_level_without_composition",
                       "mutant_user_level_without_half")
COMPARE_VARIANTS = ("private_compare", "mutant_private_compare_half_noise")
THRESHOLD_VARIANTS = ("private_threshold", "mutant_threshold_without_composition", "mutant_threshold_scale_inverted",
                      "mutant_threshold_half_noise", "mutant_threshold_median_without_half")
MEDIAN_VARIANTS = ("private_median", "mutant_private_median_without_half")


def _check_variant(variant: str, allowed: tuple[str, ...]) -> None:
    if variant not in allowed:
        raise InvalidArgument(f"unknown variant variant={variant!r}; choose one of {list(allowed)}.")


def _check_count(name: str, value: Any, low: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise InvalidArgument(f"{name} must be an integer >= {low}, got {name}={value!r}.")
    return value


def hypothesis_family(name: str, domain_size: int, *, mixture: bool = False) -> Any:
    """The instance's ``H``: the named class, or (``mixture=True``) the uniform distribution over
    two families, its even-indexed and its odd-indexed concepts (a finite distribution over
    families, drawn independently of the data)."""
    H = concept_class(name, domain_size)
    if not mixture:
        return H
    if len(H) < 2:
        raise InvalidArgument(f"a mixture needs a class of at least 2 concepts, {name!r} has {len(H)}.")
    even = ConceptClass(f"{name}[even]", H.matrix[0::2])
    odd = ConceptClass(f"{name}[odd]", H.matrix[1::2])
    return [(Fraction(1, 2), even), (Fraction(1, 2), odd)]


def _measurement(result: VerificationResult, claimed: Any, **details: Any) -> Measurement:
    info = {
        "pairs": result.pairs,
        "datasets": result.datasets,
        "certified_pairs": result.certified_pairs,
        "neighbors": result.neighbors,
        "exchangeability": result.exchangeability,
        "epsilon_slack": float(claimed) - result.epsilon,
        **details,
    }
    return Measurement(result.epsilon, result.delta, float(claimed), 0.0, result.verdict,
                       str(result.witness) if result.witness else None, info)


def _user_records(records: tuple, m: int, ordered: bool) -> tuple:
    return user_blocks(records, m, ordered=ordered)


#: The two neighbour relations the rows are audited under. 004 Sec. 2 defines DP with neighbours
#: that add or remove a single user ("Two datasets are neighboring if one can be obtained from the
#: other by adding or removing a single user"; item level is m = 1); the replace-one rows are the
#: stronger check the rest of the audit uses (add/remove at eps gives replace-one at 2 eps, so a
#: replace-one row at eps is not implied by the paper's claim, and add/remove rows are checked
#: against eps itself).
RELATIONS_004 = ("replace_one", "add_remove")


def _relation(neighbors: str, m: int | None):
    if neighbors not in RELATIONS_004:
        raise InvalidArgument(f"neighbors must be one of {RELATIONS_004}, got neighbors={neighbors!r}.")
    if neighbors == "add_remove":
        return "add_remove"  # a whole user's block (a record when m = 1) added or removed
    return "substitute" if m is None else user_level(m)


# -- C14 ----------------------------------------------------------------------------------------


def measure_item_level(
    *,
    concept: str = "thresholds",
    domain_size: int = 2,
    H: str = "all_functions",
    mixture: bool = False,
    n: int = 4,
    epsilon: Any = 1,
    variant: str = "item_level_learner",
    neighbors: str = "replace_one",
    outside_preconditions: bool = False,
) -> Measurement:
    """C14 (004 Thm. 3.4): eps* of the item-level learner over every neighbouring pair of size ``n``
    (``neighbors``: ``"replace_one"`` or the paper's ``"add_remove"``, sizes ``n`` and ``n - 1``).

    Args:
        concept, domain_size: the class ``C`` over ``X = {0..domain_size-1}``.
        H: the name of the hypothesis family's class; mixture: use :func:`hypothesis_family`'s
            distribution over two families instead.
        n: the sample size. epsilon: the privacy parameter and the claimed epsilon.
        variant: a name of :data:`ITEM_LEVEL_VARIANTS`.
        outside_preconditions: accepted for uniformity (Thm. 3.4's privacy has no precondition).
    """
    _check_variant(variant, ITEM_LEVEL_VARIANTS)
    _check_count("n", n)
    C = concept_class(concept, domain_size)
    family = hypothesis_family(H, domain_size, mixture=mixture)
    if variant == "mutant_item_level_family_from_data":
        learner = MutantFamilyFromData(C, family, epsilon=epsilon)
    else:
        selector = exponential_mechanism_without_half if variant == "mutant_item_level_without_half" else exponential_mechanism
        learner = ItemLevelLearner(C, family, epsilon=epsilon, selector=selector)
    result = verify(learner, records=labeled_records(domain_size), n=n, epsilon=epsilon,
                    neighbors=_relation(neighbors, None))
    return _measurement(result, epsilon, hypotheses=len(learner.H.hypotheses), families=len(learner.H))


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
    """C15 (004 Thm. 4.6): eps* of the user-level learner over every user-level pair of ``n`` users.

    Args:
        concept, domain_size, H, mixture: as in :func:`measure_item_level`.
        m: examples per user. n: users. epsilon: the privacy parameter and the claimed epsilon.
        alpha: Thm. 4.6's accuracy; min_error_alpha: Alg. 2's (default alpha/6, see
            :class:`mechanisms.user_level.UserLevelLearner`).
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
                    epsilon=epsilon, neighbors=_relation(neighbors, m))
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
    """C15, second part (004 Lemma C.1): every PrivateCompare that Thm. 4.6's PrivateMinError can
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
                       Verdict.combine(verdicts), measured.witness, measured.details)


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
    """C16 (004 Alg. 1): eps* of PrivateThreshold over every user-level pair of ``n`` users.

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
                    epsilon=epsilon, neighbors=_relation(neighbors, m))
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
    """C16's first step (004 Lemma 5.1): PrivateMedian on ``[l, r]`` (default ``[0, N]``) is eps-DP.

    Arguments as :func:`measure_private_threshold`; ``epsilon`` is the median's own (``eps'``).
    """
    _check_variant(variant, MEDIAN_VARIANTS)
    _check_count("n", n)
    selector = exponential_mechanism_without_half if variant == "mutant_private_median_without_half" else exponential_mechanism
    median = PrivateMedian(N, m=m, epsilon=epsilon, l=l, r=N if r is None else r, alpha=alpha, selector=selector)
    result = verify(median, records=_user_records(threshold_records(N), m, ordered_blocks), n=n,
                    epsilon=epsilon, neighbors=_relation(neighbors, m))
    return _measurement(result, epsilon, s=median.s)


# -- the audit rows -----------------------------------------------------------------------------


def cases() -> list[AuditCase]:
    """The C14-C16 rows on small instances (all together well under a minute on 2 cores)."""
    rows: list[AuditCase] = []

    def row(claim: str, mechanism: str, measure, parameters: dict, description: str, **flags) -> None:
        rows.append(AuditCase(claim, mechanism, parameters, partial(measure, **parameters, variant=mechanism),
                              description, **flags))

    c14 = {"concept": "thresholds", "domain_size": 2, "H": "all_functions", "n": 4, "epsilon": 1}
    row("C14", "item_level_learner", measure_item_level, c14,
        "Thm. 3.4: EM over H with q = min_c err_z(c) + dis_x(c, h), Delta = 2/n, is eps-DP.")
    row("C14", "item_level_learner", measure_item_level, {**c14, "mixture": True},
        "Thm. 3.4 with H drawn from a distribution over two families (the output is the mixture).")
    row("C14", "item_level_learner", measure_item_level, {**c14, "domain_size": 3, "H": "thresholds", "n": 5},
        "Thm. 3.4 with H = C (thresholds over 3 points).")
    row("C14", "mutant_item_level_without_half", measure_item_level, c14,
        "EM without its 1/2 (equivalently Delta = 1/n): up to 2 eps; caught at n = 4.")
    row("C14", "mutant_item_level_family_from_data", measure_item_level, c14,
        "H built from the sample's labels: the candidate set leaks z (eps* = inf).")

    c15 = {"concept": "thresholds", "domain_size": 2, "H": "all_functions", "m": 2, "n": 2, "epsilon": 1, "alpha": 1}
    row("C15", "user_level_learner", measure_user_level, c15,
        "Thm. 4.6: PrivateMinError (eps/2, alpha/6: T = 4) then EM (eps/2) over H with "
        "q = min_c err^t + dis^0, Delta = 2/n; output (eta^, h); user-level neighbours.")
    row("C15", "user_level_learner", measure_user_level, {**c15, "reveal_estimate": False},
        "Thm. 4.6, output h only.")
    row("C15", "user_level_learner", measure_user_level, {**c15, "mixture": True},
        "Thm. 4.6 with H drawn from a distribution over two families.")
    row("C15", "user_level_learner", measure_user_level, {**c15, "n": 3},
        "Thm. 4.6 with 3 users (16,320 user-level pairs).")
    row("C15", "private_compare", measure_private_compare,
        {"concept": "thresholds", "domain_size": 2, "m": 2, "n": 2, "epsilon": 1, "alpha": 1},
        "Lemma C.1: each PrivateCompare of PrivateMinError (15 midpoints) is eps'-DP, eps' = (eps/2)/T = 1/8; tight.")
    row("C15", "mutant_user_level_half_noise", measure_user_level, c15,
        "PrivateCompare's Laplace scale halved: PrivateMinError spends eps instead of eps/2.")
    row("C15", "mutant_user_level_without_composition", measure_user_level, c15,
        "PrivateMinError and EM both at eps (the budget not split): up to 2 eps.")
    row("C15", "mutant_private_compare_half_noise", measure_private_compare,
        {"concept": "thresholds", "domain_size": 2, "m": 2, "n": 2, "epsilon": 1, "alpha": 1},
        "PrivateCompare with Laplace scale 1/(2 eps' n): eps* = 2 eps'.")
    row("C15", "mutant_user_level_without_half", measure_user_level, {**c15, "n": 3, "epsilon": 4},
        "EM without its 1/2: at the default size (n = 2, eps = 1) its part doubles but stays inside the "
        "composition's slack (0.8945 <= 1); at n = 3, eps = 4 it is caught: eps* 4.101 > 4 (the parent: 2.933).")

    c16 = {"N": 3, "m": 2, "n": 2, "epsilon": 1, "T": 1, "t": 0}
    row("C16", "private_threshold", measure_private_threshold, c16,
        "Alg. 1, T = 1: eps' = eps/4; PrivateMedian + three Laplace values err^t + Lap(1/(n eps')).")
    row("C16", "private_threshold", measure_private_threshold, {**c16, "T": 2},
        "Alg. 1, T = 2 (eps' = eps/8).")
    row("C16", "private_threshold", measure_private_threshold, {**c16, "N": 2, "n": 3, "T": 2},
        "Alg. 1 with 3 users over X = {1, 2}.")
    row("C16", "private_median", measure_private_median, {"N": 3, "m": 2, "n": 2, "epsilon": Fraction(1, 4)},
        "Lemma 5.1: EM over u in [0, N] with q = max(dis^s(f_{l-1}, f_{u-1}), dis^s(f_u, f_r)), Delta = 1/n.")
    row("C16", "mutant_threshold_without_composition", measure_private_threshold, c16,
        "eps' = eps/T: the four eps'-steps of a round not composed (up to 4 eps).")
    row("C16", "mutant_threshold_scale_inverted", measure_private_threshold, c16,
        "Laplace scale eps'/n instead of 1/(n eps') (16 times too little noise here).")
    row("C16", "mutant_threshold_half_noise", measure_private_threshold, {**c16, "epsilon": 16},
        "Laplace scale halved: the three values spend 6 eps' instead of 3 eps'. Within the composition's "
        "slack at eps = 1 (0.7217 <= 1); caught at eps = 16: eps* 16.74 > 16 (the parent: 9.340).")
    row("C16", "mutant_private_median_without_half", measure_private_median,
        {"N": 3, "m": 2, "n": 2, "epsilon": Fraction(1, 4)},
        "PrivateMedian's EM without its 1/2: up to 2 eps'.")

    # The paper's own relation (004 Sec. 2): add or remove one user (one record at item level).
    ar = {"neighbors": "add_remove"}
    row("C14", "item_level_learner", measure_item_level, {**c14, **ar},
        "Thm. 3.4 under the paper's add/remove neighbours (n and n - 1 records): eps* 0.2809 <= 1 "
        "(replace-one: 0.4564).")
    row("C14", "mutant_item_level_family_from_data", measure_item_level, {**c14, **ar},
        "The family built from the data, add/remove: eps* = inf. (Without the EM's 1/2 the learner "
        "reaches only 0.6201 under add/remove at this size: hidden in the slack.)")
    row("C15", "user_level_learner", measure_user_level, {**c15, **ar},
        "Thm. 4.6 under add/remove of one user's whole block: eps* 0.4897 <= 1 (replace-one: 0.6897).")
    row("C16", "private_threshold", measure_private_threshold, {**c16, **ar},
        "Alg. 1 under add/remove of one user: eps* 0.2175 <= 1 (replace-one: 0.3863).")
    row("C16", "mutant_threshold_scale_inverted", measure_private_threshold, {**c16, **ar},
        "Laplace scale eps'/n under add/remove: eps* 3.658 > 1.")
    row("C16", "private_median", measure_private_median, {"N": 3, "m": 2, "n": 2, "epsilon": Fraction(1, 4), **ar},
        "Lemma 5.1 under add/remove: eps* 0.0979 <= 1/4 (replace-one: 0.1626).")
    return rows


#: Claim id -> measurement function taking instance keyword arguments (``dpverify claim``).
CLAIM_MEASUREMENTS = {
    "C14": measure_item_level,
    "C15": measure_user_level,
    "C16": measure_private_threshold,
}
