"""Audit of semi-private learning with public data (Alon–Bassily–Moran 2019): claim C13 (Lemma 3.2).

C13: for every fixed public sample ``T_pub``, ASSPP (Algorithm 1) is epsilon-DP w.r.t. ``S_priv``
(neighbours substitute one private example; ``T_pub`` is the same on both sides). The measurement
is exhaustive: every ``T_pub`` in ``X^{n_pub}`` (ordered tuples, as the lemma quantifies), every
replace-one pair of private samples of size ``n_priv`` over the labeled records, checked by
:func:`dpverify.checking.public_data.verify_with_public_data` (exact certification of tight pairs).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from dpverify.checking.public_data import PublicWitness, all_public_samples, verify_with_public_data
from dpverify.finite.records import concept_class, labeled_records
from dpverify.integrations.audit import AuditCase, Expect, Measurement
from dpverify.validation import check_choice, check_integer

from ..exponential import exponential_mechanism_without_half
from ..semi_private import ASSPP, MutantCoverWithPrivatePoints
from ._instance import EXCHANGEABLE_SAMPLES, instance
from ._sources import SOURCES

__all__ = ["VARIANTS", "measure_asspp", "cases", "instance", "CLAIMS", "SOURCES"]

#: The mechanism variants :func:`measure_asspp` can measure (mutants must violate C13).
VARIANTS = ("asspp", "mutant_asspp_without_half", "mutant_asspp_cover_with_private_points")


def _learner(variant: str, H, epsilon: Any, representative: str) -> ASSPP:
    if variant == "asspp":
        return ASSPP(H, epsilon=epsilon, representative=representative)
    if variant == "mutant_asspp_without_half":
        return ASSPP(H, epsilon=epsilon, representative=representative, selector=exponential_mechanism_without_half)
    if variant == "mutant_asspp_cover_with_private_points":
        return MutantCoverWithPrivatePoints(H, epsilon=epsilon, representative=representative)
    check_choice("variant", variant, VARIANTS, what="ASSPP variant")
    raise AssertionError(f"variant {variant!r} is listed in VARIANTS but not built here")


def measure_asspp(
    *,
    concept: str = "thresholds",
    domain_size: int = 3,
    n_private: int = 3,
    n_public: int = 2,
    epsilon: Any = 1.0,
    representative: str = "first",
    variant: str = "asspp",
    outside_preconditions: bool = False,
) -> Measurement:
    """C13 (Lemma 3.2): eps* of ASSPP w.r.t. S_priv, worst over every T_pub in X^{n_public}.

    Args:
        concept, domain_size: the class ``H`` over ``X = {0, ..., domain_size - 1}``.
        n_private: ``n_priv`` (>= 1); n_public: ``n_pub`` (>= 0).
        epsilon: the privacy parameter and the claimed epsilon.
        representative: step 5's rule (``"first"`` or ``"last"``).
        variant: ``"asspp"`` or a mutant of :data:`VARIANTS`.
        outside_preconditions: accepted for ``dpverify claim``'s uniformity; Lemma 3.2 has no
            precondition beyond epsilon >= 0, so it changes nothing.

    Returns:
        A Measurement with eps*, the claimed (epsilon, 0), the certified verdict, the witness (its
        public sample named) and per-public-sample eps* in ``details``.
    """
    check_integer("n_private", n_private, at_least=1)
    check_integer("n_public", n_public, at_least=0)
    H = concept_class(concept, domain_size)
    learner = _learner(variant, H, epsilon, representative)
    result = verify_with_public_data(
        learner,
        public_samples=all_public_samples(range(domain_size), n_public),
        records=labeled_records(domain_size),
        n=n_private,
        epsilon=epsilon,
        exchangeable="assume",  # accepted where every ordering cannot be checked (the row says so)
        seed=0,
        exchangeable_samples=EXCHANGEABLE_SAMPLES,
    )
    per_public = {str(t): r.epsilon for t, r in result.results.items()}
    details = {
        "public_samples": len(result.results),
        "pairs": result.pairs,
        "certified_pairs": sum(r.certified_pairs for r in result.results.values()),
        "epsilon_public": str(result.epsilon_public),
        "epsilon_slack": float(epsilon) - result.epsilon,
        "epsilon_star_by_public": per_public,
    }
    found = result.witness  # a PublicWitness: the engine's witness on its public sample
    assert found is None or isinstance(found, PublicWitness), found
    return Measurement(
        result.epsilon, result.delta, float(epsilon), 0.0, result.verdict, details=details,
        assumptions=result.assumptions, witness_data=None if found is None else found.witness,
        witness_part=None if found is None else f"public = {found.public}",
    )


def _run(mechanism: str, parameters: dict) -> Measurement:
    return measure_asspp(
        concept=parameters["concept_class"], domain_size=parameters["domain_size"],
        n_private=parameters["n_private"], n_public=parameters["n_public"], epsilon=parameters["epsilon"],
        representative=parameters["representative"], variant=mechanism,
    )


def cases() -> list[AuditCase]:
    """The C13 rows: ASSPP (thresholds, both representative rules, intervals, a larger public sample, a
    closed-form two-candidate instance) and the two mutants, on small instances."""
    base = {"concept_class": "thresholds", "domain_size": 3, "n_private": 3, "n_public": 2, "epsilon": 1.0,
            "representative": "first"}
    last = {**base, "representative": "last"}
    intervals = {**base, "concept_class": "intervals"}
    wide = {**base, "n_public": 3}
    two = {**base, "domain_size": 2, "n_private": 8, "n_public": 1}
    return [
        AuditCase("C13", "asspp", base, partial(_run, "asspp", base),
                  "Lemma 3.2: for every T_pub in X^2, EM over H~_{T_pub} with score err^ (Delta = 1/n_priv) is "
                  "eps-DP w.r.t. S_priv; tight (eps* = eps) when |H~| = 2."),
        AuditCase("C13", "asspp", last, partial(_run, "asspp", last),
                  "Lemma 3.2 with the last consistent concept as representative."),
        AuditCase("C13", "asspp", intervals, partial(_run, "asspp", intervals), "Lemma 3.2 on intervals over 3 points."),
        AuditCase("C13", "asspp", wide, partial(_run, "asspp", wide),
                  "Lemma 3.2 for every T_pub in X^3 (T~ can be all of X: H~ = H)."),
        AuditCase("C13", "asspp", two, partial(_run, "asspp", two),
                  "Lemma 3.2 with two candidates: eps* = ln((1 + e^{eps n/2})/(1 + e^{eps (n-2)/2})) -> eps as n grows."),
        AuditCase("C13", "mutant_asspp_without_half", base, partial(_run, "mutant_asspp_without_half", base),
                  "The factor 2 dropped: P ∝ exp(-eps err^/Delta), up to 2 eps.",
                  expect=Expect.VIOLATED, parent="asspp"),
        AuditCase("C13", "mutant_asspp_cover_with_private_points", base,
                  partial(_run, "mutant_asspp_cover_with_private_points", base),
                  "H~ built from T_pub together with the private points: the candidate set leaks S_priv (eps* = inf).",
                  expect=Expect.VIOLATED, parent="asspp"),
    ]


#: Claim id -> measurement taking instance keyword arguments (``dpverify claim C13 --set ...``).
CLAIMS = {"C13": measure_asspp}
