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
from dpverify.errors import InvalidArgument
from dpverify.finite.records import labeled_records
from dpverify.integrations.audit import AuditCase, Expect, Measurement
from dpverify.validation import exact_number

from ..exponential import exponential_mechanism, exponential_mechanism_without_half, threshold_learner
from ..randomized_response import randomized_response_mechanism, subsampled_randomized_response
from ._instance import instance
from ._sources import SOURCES

__all__ = ["cases", "instance", "measure_exponential", "measure_randomized_response", "CLAIMS", "SOURCES"]


def verified(mechanism: Any, *, records: Any, n: int, epsilon: Any, delta: Any = 0.0) -> Measurement:
    """``verify`` as an audit measurement (pairs, certified pairs and the enumeration in details)."""
    result = verify(mechanism, records=records, n=n, epsilon=epsilon, delta=delta)
    return Measurement.from_result(result, exchangeable=result.exchangeable)


def measure_exponential(*, domain_size: int = 3, n: int = 4, epsilon: Any = 1.0, mutant: str | None = None) -> Measurement:
    """C1 (``dpverify claim C1 --set ...``): EM over the thresholds of ``{0, ..., domain_size - 1}``,
    score = mistakes, on every dataset of ``n`` labeled records, checked at ``epsilon``;
    ``mutant="without_half"`` drops the factor 1/2 (then VIOLATED)."""
    selectors = {None: exponential_mechanism, "without_half": exponential_mechanism_without_half}
    if mutant not in selectors:
        raise InvalidArgument(f"mutant must be None or 'without_half', got mutant={mutant!r}.")
    learner = threshold_learner(domain_size, epsilon=epsilon, selector=selectors[mutant])
    return verified(learner, records=labeled_records(domain_size), n=n, epsilon=epsilon)


def measure_randomized_response(*, p: Fraction | float = Fraction(3, 4), n: int = 1) -> Measurement:
    """RR (``dpverify claim RR --set ...``): randomized response keeping the bit with probability
    ``p`` (n = 1), or on one uniformly chosen record of ``n`` bits (n > 1), checked at exactly its
    closed form ``eps* = ln(1 + (e^eps - 1)/n)`` with ``e^eps = p/(1 - p)`` (tight: must hold)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidArgument(f"n must be a whole number >= 1, got n={n!r}.")
    keep = exact_number("p", p)  # 0.7 is 7/10: the simplest fraction that rounds to it
    if not Fraction(1, 2) <= keep < 1:
        raise InvalidArgument(f"p must be in [1/2, 1) (p = 1 is not private: eps* = inf), got p={p!r}.")
    mechanism = randomized_response_mechanism(p=keep) if n == 1 else subsampled_randomized_response(p=keep)
    odds = sympy.Rational(keep.numerator, keep.denominator) / (1 - sympy.Rational(keep.numerator, keep.denominator))
    epsilon = sympy.log(1 + (odds - 1) / n)
    return verified(mechanism, records=(0, 1), n=n, epsilon=epsilon)


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


#: Claim id -> measurement taking instance keyword arguments (``dpverify claim C1 --set domain_size=4``).
CLAIMS = {"C1": measure_exponential, "RR": measure_randomized_response}
