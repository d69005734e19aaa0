"""Audit rows (claim id ``GAUSS``) for the Gaussian mechanism, decided exactly (:mod:`dpverify.densities.gaussian`).

* ``gaussian_classical`` — Dwork and Roth 2014, Theorem A.1: ``sigma = Delta sqrt(2 ln(1.25/delta))/eps``
  for ``eps < 1`` is ``(eps, delta)``-DP. Holds with room: ``details["delta_slack"]`` is the claimed
  delta minus the certified upper bound of ``delta(eps)``, ``details["sigma_over_analytic"]`` how much
  more noise it adds than needed.
* ``gaussian_analytic`` — Balle and Wang 2018, Algorithm 1: the smallest float ``sigma`` with
  ``delta(eps) <= delta`` (certified). Tight: its slack is below the rounding of ``sigma`` to a float;
  it must hold (never VIOLATED), at several ``(eps, delta)``, ``eps >= 1`` included (where the
  classical calibration is not proved).
* ``gaussian_half_sigma`` — the analytic ``sigma`` halved: VIOLATED, the witness a half-space
  of outputs with its two probabilities (exact erfc expressions).
* ``gaussian_analytic_claimed_pure`` — the analytic mechanism claimed pure ``eps``-DP: VIOLATED
  (the pure eps* is infinite), the witness the half-space ``S*`` where ``P(S) > e^eps Q(S)``.

Inputs: every neighbouring pair (replace one record) of 3 records from ``{0, 1, 2}`` under the
histogram query ``f(D) = (#1s, #2s)`` (l2 sensitivity ``sqrt 2``: replacing a 1 by a 2 moves both
counts), and the query-vector pairs of the benchmark suite, ``{0, 1, 2}^2`` with one answer moving by
1 (``all_query_vectors(2, differ="one")``, sensitivity 1).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import partial
from typing import Any

from dpverify.checking.gaussian import verify_gaussian
from dpverify.checking.input_pairs import all_query_vectors
from dpverify.densities.gaussian_profile import analytic_sigma, classical_sigma
from dpverify.errors import InvalidArgument
from dpverify.integrations.audit import AuditCase, Expect, Measurement

from ..gaussian import GaussianMechanism
from ._sources import SOURCES

__all__ = ["cases", "measure", "histogram_counts", "INPUTS", "CLAIMS", "SOURCES"]


def histogram_counts(dataset: tuple) -> tuple[int, int]:
    """``f(D) = (#1s, #2s)``: a histogram of records in ``{0, 1, 2}`` (bin 0 left out)."""
    return (dataset.count(1), dataset.count(2))


#: name -> (query, how verify_gaussian gets the pairs, Delta^2 of the worst pair)
INPUTS: dict[str, tuple[Callable | None, dict[str, Any], Fraction]] = {
    "histogram_n3": (histogram_counts, {"records": (0, 1, 2), "n": 3, "neighbors": "substitute"}, Fraction(2)),
    "vectors_one_differs": (None, {"pairs": None}, Fraction(1)),
}
_CALIBRATIONS = {"classical": classical_sigma, "analytic": analytic_sigma}


def _pairs(inputs: str) -> tuple[Callable | None, dict[str, Any], Fraction]:
    if inputs not in INPUTS:
        raise InvalidArgument(f"inputs must be one of {sorted(INPUTS)}, got inputs={inputs!r}.")
    query, where, squared = INPUTS[inputs]
    if "pairs" in where:
        where = {"pairs": all_query_vectors(2, m=2, differ="one")}
    return query, where, squared


def measure(
    *, epsilon: Any, delta: Any, calibration: str = "analytic", sigma_factor: Any = 1, claim_delta: Any = None,
    inputs: str = "histogram_n3",
) -> Measurement:
    """The Gaussian mechanism calibrated for ``(epsilon, delta)`` (``calibration``: ``"classical"`` or
    ``"analytic"``), its sigma times ``sigma_factor``, checked against ``(epsilon, claim_delta)``
    (default ``delta``; 0 for a pure claim) on ``inputs`` (:data:`INPUTS`)."""
    if calibration not in _CALIBRATIONS:
        raise InvalidArgument(f"calibration must be one of {sorted(_CALIBRATIONS)}, got calibration={calibration!r}.")
    query, where, squared = _pairs(inputs)
    eps, bound = Fraction(epsilon), Fraction(delta)
    sigma = _CALIBRATIONS[calibration](eps, bound, sensitivity_squared=squared) * Fraction(sigma_factor)
    claimed = bound if claim_delta is None else Fraction(claim_delta)
    result = verify_gaussian(GaussianMechanism(sigma, query), epsilon=eps, delta=claimed, **where)
    tight = analytic_sigma(eps, bound, sensitivity_squared=squared)
    details = {
        "sigma": float(sigma),
        "calibration": calibration,
        "sigma_over_analytic": float(sigma / tight),
        "pairs": result.pairs,
        "datasets": result.datasets,
        "neighbors": result.neighbors,
        "worst_pair": repr(result.worst_pair),
        **result.details,
    }
    interval = result.details.get("delta_interval")
    if interval is not None:
        details["delta_slack"] = float(claimed) - interval[1]  # claim minus the certified upper bound
        details["delta_slack_relative"] = details["delta_slack"] / float(claimed) if claimed else None
    return Measurement(
        epsilon_star=result.epsilon,
        delta_star=result.delta,
        claimed_epsilon=float(eps),
        claimed_delta=float(claimed),
        verdict=result.verdict,
        witness_data=result.witness,
        details=details,
    )


def _row(mechanism: str, description: str, *, expect: Expect = Expect.HOLDS, parent: str | None = None,
         **instance: Any) -> AuditCase:
    shown = {key: (str(value) if isinstance(value, Fraction) else value) for key, value in instance.items()}
    return AuditCase("GAUSS", mechanism, shown, partial(measure, **instance), description, expect=expect, parent=parent)


def cases() -> list[AuditCase]:
    """The classical and analytic calibrations (hold), sigma halved and a pure claim (violated)."""
    classical = "Dwork-Roth Thm. A.1: sigma = Delta sqrt(2 ln(1.25/delta))/eps (eps < 1) is (eps, delta)-DP; slack reported."
    analytic = "Balle-Wang Alg. 1: the smallest float sigma with delta(eps) <= delta (certified): tight, must hold."
    rows = [
        _row("gaussian_classical", classical, calibration="classical", epsilon=Fraction(1, 2), delta=Fraction(1, 10**5),
             inputs="histogram_n3"),
        _row("gaussian_classical", classical, calibration="classical", epsilon=Fraction(9, 10), delta=Fraction(1, 10**6),
             inputs="vectors_one_differs"),
    ]
    for epsilon, delta, inputs in (
        (Fraction(1, 2), Fraction(1, 10**5), "histogram_n3"),
        (Fraction(1), Fraction(1, 10**5), "histogram_n3"),
        (Fraction(2), Fraction(1, 10**6), "vectors_one_differs"),
        (Fraction(1, 10), Fraction(1, 10**3), "vectors_one_differs"),
    ):
        rows.append(_row("gaussian_analytic", analytic, calibration="analytic", epsilon=epsilon, delta=delta,
                         inputs=inputs))
    rows += [
        _row("gaussian_half_sigma",
             "The analytic sigma halved: delta(eps) far above the claim; the witness is a half-space of outputs.",
             expect=Expect.VIOLATED, parent="gaussian_analytic", calibration="analytic", sigma_factor=Fraction(1, 2),
             epsilon=Fraction(1), delta=Fraction(1, 10**5), inputs="histogram_n3"),
        _row("gaussian_analytic_claimed_pure",
             "The analytic mechanism claimed pure eps-DP: eps* is infinite; the witness S* has P(S) > e^eps Q(S).",
             expect=Expect.VIOLATED, parent="gaussian_analytic", calibration="analytic", claim_delta=0,
             epsilon=Fraction(1), delta=Fraction(1, 10**5), inputs="histogram_n3"),
    ]
    return rows


def _claim(
    *, epsilon: Fraction | float = Fraction(1), delta: Fraction | float = Fraction(1, 10**5), calibration: str = "analytic",
    sigma_factor: Fraction | float = 1, claim_delta: Fraction | float | None = None, inputs: str = "histogram_n3",
) -> Measurement:
    """``dpverify claim GAUSS --set epsilon=1 --set delta=1e-5 ...``: :func:`measure`, by default on the
    analytic mechanism at (1, 1/10^5) on the histogram of 3 records."""
    return measure(epsilon=epsilon, delta=delta, calibration=calibration, sigma_factor=sigma_factor,
                   claim_delta=claim_delta, inputs=inputs)


#: Claim id -> measurement taking instance keyword arguments.
CLAIMS = {"GAUSS": _claim}
