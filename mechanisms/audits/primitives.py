"""Audit of the primitives every learner is built from: the exponential mechanism and randomized
response, each checked with :func:`dpverify.verify` against its closed form.

* C1 — McSherry–Talwar's exponential mechanism (Li–Wang–Ye 2025, Lemma 11): EM over thresholds
  with score = mistakes (sensitivity 1) is eps-DP; without its factor 1/2 it is caught.
* RR — randomized response (Warner 1965): eps* = ln(p/(1-p)), and on one uniformly chosen record
  of n, eps* = ln(1 + (e^eps - 1)/n); both checked at exactly their epsilon (tight: must hold).
"""

from __future__ import annotations

from fractions import Fraction
from functools import partial
from typing import Any

import sympy

from dpverify.checking.front import verify
from dpverify.finite.records import labeled_records
from dpverify.integrations.audit import AuditCase, Expect, Measurement

from ..exponential import exponential_mechanism_without_half, threshold_learner
from ..randomized_response import randomized_response_mechanism, subsampled_randomized_response
from ._instance import instance
from ._sources import SOURCES

__all__ = ["cases", "instance", "CLAIMS", "SOURCES"]

#: No claim of this audit takes user instances (``dpverify check`` covers the primitives).
CLAIMS: dict[str, Any] = {}


def verified(mechanism: Any, *, records: Any, n: int, epsilon: Any, delta: Any = 0.0) -> Measurement:
    """``verify`` as an audit measurement (pairs, certified pairs and the enumeration in details)."""
    result = verify(mechanism, records=records, n=n, epsilon=epsilon, delta=delta)
    return Measurement.from_result(result, exchangeable=result.exchangeable)


def cases() -> list[AuditCase]:
    """C1 (the exponential mechanism and its no-half mutant) and randomized response."""
    records = labeled_records(3)
    em = {"concept_class": "thresholds", "domain_size": 3, "n": 4, "epsilon": 1.0, "score": "mistakes", "sensitivity": 1}
    return [
        AuditCase(
            "C1", "exponential_mechanism", em,
            partial(verified, threshold_learner(3, epsilon=1.0), records=records, n=4, epsilon=1.0),
            "Lemma 11: EM over thresholds with score = mistakes (sensitivity 1) is eps-DP.",
        ),
        AuditCase(
            "C1", "mutant_exponential_without_half", em,
            partial(verified, threshold_learner(3, epsilon=1.0, selector=exponential_mechanism_without_half),
                    records=records, n=4, epsilon=1.0),
            "The factor 2 dropped: P ∝ exp(-eps q / Delta), up to 2 eps.",
            expect=Expect.VIOLATED, parent="exponential_mechanism",
        ),
        AuditCase(
            "RR", "randomized_response", {"p": "3/4", "n": 1, "epsilon": "ln 3"},
            partial(verified, randomized_response_mechanism(p=Fraction(3, 4)), records=(0, 1), n=1, epsilon=sympy.log(3)),
            "Closed form: eps* = ln(p/(1-p)) = ln 3, checked at exactly its epsilon (tight: must hold).",
        ),
        AuditCase(
            "RR", "subsampled_randomized_response", {"p": "3/4", "n": 2, "epsilon": "ln 2"},
            partial(verified, subsampled_randomized_response(p=Fraction(3, 4)), records=(0, 1), n=2, epsilon=sympy.log(2)),
            "Closed form: eps* = ln(1 + (e^eps - 1)/n) = ln 2 for p = 3/4, n = 2 (tight: must hold).",
        ),
    ]
