"""Audit rows (claim id ``BENCH``) for the standard benchmark suite of the statistical DP testers.

The twelve mechanisms StatDP (Ding, Wang, Wang, Zhang, Kifer: Detecting Violations of Differential
Privacy, CCS 2018) and DP-Sniper (Bichsel, Steffen, Bogunovic, Vechev, IEEE S&P 2021) are judged on,
verified exactly on the peers' own inputs: report noisy max (index; Laplace and exponential noise),
noisy max returning the value (both noises, incorrect), the noisy histogram (correct and with
``Lap(eps)``, incorrect), and the six sparse vector variants of Lyu, Su, Li (VLDB 2017,
Algorithms 1-6; c = 1, threshold T = 0.5 for Algorithm 1 and 1 otherwise, as the peers run them).

Every row claims the mechanism's stated ``eps``-DP at eps = 0.7 and 0.1, k = 5 (noisy max,
histogram) or k = 10 (SVT) on :func:`dpverify.checking.input_pairs.statdp_patterns` ("all differ" for noisy
max and SVT, "one differs" for the histogram, as StatDP's ALL_DIFFER / ONE_DIFFER), and, where the
enumeration is feasible, on every neighbouring pair of ``{0, 1, 2}^k`` (``inputs="all_vectors_m2"``;
k = 5 for noisy max and the histogram, k = 6 for SVT; SVT Algorithm 3's only in
``benchmark_rows(slow=True)``, it takes minutes). The continuous-output mechanisms are decided on a
cover of the enumeration by their loss components (:mod:`dpverify.checking.pair_cover`: the same eps*,
verdict and worst pair as every pair; ``details["cover_pairs"]`` counts the pairs compared).
Incorrect mechanisms are expected to be VIOLATED with a witness; correct ones to hold.

:data:`GEOMETRIC` adds the same mechanisms with two-sided geometric noise (the discrete Laplace of the
same scales, on the same integer inputs; not in the peers' suite): report noisy max
(``ReportNoisyMax(noise="geometric")``, ties to the smallest index) and SVT Algorithms 1, 2, 4, 5, 6
(``svt(variant, noise="geometric")``, StatDP's comparisons; Algorithm 3 releases an integer of unbounded
support and is not supported). Their eps* are exact too (sums over the integers in closed form,
:mod:`dpverify.mechanisms.geometric`). The correct ones are also run on every neighbouring pair of
``{0, 1, 2}^k``; the incorrect ones' enumerations only with ``slow=True``: they are caught on the
patterns already.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from typing import Any

from dpverify.checking.input_pairs import all_query_vectors, statdp_patterns, verify_pairs
from dpverify.checking.pair_cover import covering_pairs
from dpverify.errors import InvalidArgument
from dpverify.integrations.audit import AuditCase, Expect, Measurement
from dpverify.validation import exact_number

from ..noisy_max import NoisyHistogram, NoisyMaxValue, ReportNoisyMax
from ..sparse_vector import svt
from ._sources import SOURCES

__all__ = ["BenchMechanism", "BENCHMARK", "GEOMETRIC", "DELTA_ROWS", "DeltaRow", "EPSILONS", "benchmark_rows",
           "cases", "delta_rows", "measure", "measure_benchmark", "profile_grid", "CLAIMS", "SOURCES"]

#: The claims the peers test at (their default 0.7 and DP-Sniper's default 0.1), as exact numbers.
EPSILONS = (Fraction(7, 10), Fraction(1, 10))


@dataclass(frozen=True)
class BenchMechanism:
    """One benchmark mechanism: how to build it at eps, its inputs and what its source says."""

    name: str
    build: Callable[[Fraction], Any]
    k: int
    differ: str
    correct: bool
    source: str
    full_k: int | None  # k for the full {0,1,2}^k enumeration (None: not run)
    parent: str | None = None  # an incorrect variant's correct counterpart
    slow_full: bool = False  # the enumeration runs only with slow=True (it takes minutes, or adds nothing to the patterns)


BENCHMARK: tuple[BenchMechanism, ...] = (
    BenchMechanism("report_noisy_max_laplace", lambda e: ReportNoisyMax(e, "laplace"), 5, "all", True,
                   "Ding et al. CCS 2018 Alg. 5 (StatDP noisy_max_v1a): argmax of q + Lap(2/eps)", 5),
    BenchMechanism("report_noisy_max_exponential", lambda e: ReportNoisyMax(e, "exponential"), 5, "all", True,
                   "Ding et al. CCS 2018 Alg. 6 (StatDP noisy_max_v2a): argmax of q + Exp(2/eps)", 5),
    BenchMechanism("noisy_max_value_laplace", lambda e: NoisyMaxValue(e, "laplace"), 5, "all", False,
                   "Ding et al. CCS 2018 Alg. 7 (StatDP noisy_max_v1b): max of q + Lap(2/eps), incorrect", 5, "report_noisy_max_laplace"),
    BenchMechanism("noisy_max_value_exponential", lambda e: NoisyMaxValue(e, "exponential"), 5, "all", False,
                   "Ding et al. CCS 2018 Alg. 8 (StatDP noisy_max_v2b): max of q + Exp(2/eps), incorrect", 5, "report_noisy_max_exponential"),
    BenchMechanism("noisy_histogram", lambda e: NoisyHistogram(e), 5, "one", True,
                   "Ding et al. CCS 2018 Alg. 9 (StatDP histogram): q + Lap(1/eps) per bin", 5),
    BenchMechanism("noisy_histogram_wrong_scale", lambda e: NoisyHistogram(e, wrong_scale=True), 5, "one", False,
                   "Ding et al. CCS 2018 Alg. 10 (StatDP histogram_eps): q + Lap(eps) per bin, incorrect", 5, "noisy_histogram"),
    BenchMechanism("svt1", lambda e: svt(1, epsilon=e), 10, "all", True,
                   "Lyu, Su, Li VLDB 2017 Alg. 1 (StatDP SVT), c = 1, T = 0.5", 6),
    BenchMechanism("svt2", lambda e: svt(2, epsilon=e), 10, "all", True,
                   "Lyu, Su, Li VLDB 2017 Alg. 2 (Dwork-Roth, threshold refreshed after each ⊤), c = 1, T = 1", 6),
    BenchMechanism("svt3", lambda e: svt(3, epsilon=e), 10, "all", False,
                   "Lyu, Su, Li VLDB 2017 Alg. 3 (StatDP iSVT4): outputs the noisy answer, c = 1, T = 1, incorrect", 6, "svt1", slow_full=True),
    BenchMechanism("svt4", lambda e: svt(4, epsilon=e), 10, "all", False,
                   "Lyu, Su, Li VLDB 2017 Alg. 4 (StatDP iSVT3): ((1 + 6c)/4)eps-DP only, c = 1, T = 1", 6, "svt1"),
    BenchMechanism("svt5", lambda e: svt(5, epsilon=e), 10, "all", False,
                   "Lyu, Su, Li VLDB 2017 Alg. 5 (StatDP iSVT1): no query noise, no cutoff, T = 1, incorrect", 6, "svt1"),
    BenchMechanism("svt6", lambda e: svt(6, epsilon=e), 10, "all", False,
                   "Lyu, Su, Li VLDB 2017 Alg. 6 (StatDP iSVT2): no cutoff, T = 1, incorrect", 6, "svt1"),
)


#: The suite's mechanisms with two-sided geometric noise (not in the peers' suite; module docstring). With
#: c = 1 and integer answers, Algorithm 1 at T = 0.5 and Algorithm 2 at T = 1 compare ``q + nu - rho``
#: with the same integer 1 (``>=``), and their scales agree at c = 1: the two rows are one mechanism.
GEOMETRIC: tuple[BenchMechanism, ...] = (
    BenchMechanism("report_noisy_max_geometric", lambda e: ReportNoisyMax(e, "geometric"), 5, "all", True,
                   "Ding et al. CCS 2018 Alg. 5 with two-sided geometric noise: argmax of q + Geometric(2/eps), "
                   "smallest index among ties", 5),
    BenchMechanism("svt1_geometric", lambda e: svt(1, epsilon=e, noise="geometric"), 10, "all", True,
                   "Lyu, Su, Li VLDB 2017 Alg. 1 (StatDP SVT) with geometric noise, q + nu >= T + rho, c = 1, T = 0.5", 6),
    BenchMechanism("svt2_geometric", lambda e: svt(2, epsilon=e, noise="geometric"), 10, "all", True,
                   "Lyu, Su, Li VLDB 2017 Alg. 2 with geometric noise, q + nu >= T + rho, c = 1, T = 1 "
                   "(at c = 1 the same mechanism as svt1_geometric)", None),
    BenchMechanism("svt4_geometric", lambda e: svt(4, epsilon=e, noise="geometric"), 10, "all", False,
                   "Lyu, Su, Li VLDB 2017 Alg. 4 (StatDP iSVT3) with geometric noise, q + nu > T + rho, c = 1, T = 1, "
                   "incorrect", 6, "svt1_geometric", slow_full=True),
    BenchMechanism("svt5_geometric", lambda e: svt(5, epsilon=e, noise="geometric"), 10, "all", False,
                   "Lyu, Su, Li VLDB 2017 Alg. 5 (StatDP iSVT1) with geometric noise, q >= T + rho, no cutoff, T = 1, "
                   "incorrect", 6, "svt1_geometric", slow_full=True),
    BenchMechanism("svt6_geometric", lambda e: svt(6, epsilon=e, noise="geometric"), 10, "all", False,
                   "Lyu, Su, Li VLDB 2017 Alg. 6 (StatDP iSVT2) with geometric noise, q + nu >= T + rho, no cutoff, "
                   "T = 1, incorrect", 6, "svt1_geometric", slow_full=True),
)

_SPECS = {m.name: m for m in BENCHMARK + GEOMETRIC}


def _plain(value: Any) -> Any:
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


#: The privacy profile of a continuous row: delta(eps) at eps = 0, eps/4, ..., 2 eps (eps: the claim's).
PROFILE_STEPS = 8


def profile_grid(epsilon: Fraction) -> list[Fraction]:
    """``[0, eps/4, eps/2, ..., 2 eps]``: exact multiples of the claimed eps (the claim is one point)."""
    return [epsilon * i / 4 for i in range(PROFILE_STEPS + 1)]


def measure(name: str, epsilon: Fraction, inputs: str = "statdp_patterns", k: int | None = None, *,
            claim: tuple[Fraction, Fraction] | None = None, mechanism: Any = None, differ: str | None = None) -> Measurement:
    """Verify one benchmark mechanism's claim exactly on the given input set: its stated eps-DP,
    or ``claim = (eps', delta)`` (``mechanism`` and ``differ`` replace the spec's, for the
    ``(eps, delta)`` rows of :func:`delta_rows`). Continuous outputs also report delta* at the claimed
    eps with its certified bounds and the privacy profile (:func:`profile_grid`)."""
    spec = _SPECS[name]
    k = spec.k if k is None else k
    mechanism = spec.build(epsilon) if mechanism is None else mechanism
    differ = spec.differ if differ is None else differ
    claim_epsilon, claim_delta = (epsilon, Fraction(0)) if claim is None else claim
    enumerated = 0
    if inputs == "statdp_patterns":
        pairs = statdp_patterns(k, differ=differ)
    elif inputs == "all_vectors_m2":
        pairs = all_query_vectors(k, m=2, differ=differ)
        enumerated = len(pairs)
        if getattr(mechanism, "continuous_output", False) and hasattr(mechanism, "loss_components"):
            # a continuous output: the same answer on fewer pairs (dpverify.checking.pair_cover)
            pairs = covering_pairs(pairs, mechanism)
    else:
        raise InvalidArgument(f"inputs must be 'statdp_patterns' or 'all_vectors_m2', got inputs={inputs!r}.")
    continuous = bool(getattr(mechanism, "continuous_output", False))
    # the audit accepts a cover's loss_components lemma (proved in the mechanism's docstring); the
    # pairs outside the cover are still tested, and the row says "assuming ..." when not all were
    result = verify_pairs(mechanism, pairs=pairs, epsilon=claim_epsilon, delta=claim_delta, cover="assume", seed=0,
                          profile=profile_grid(claim_epsilon) if continuous else None)
    details = {
        "pairs": enumerated if inputs == "all_vectors_m2" else result.pairs,
        "datasets": result.datasets,
        "worst_pair": _plain(result.worst_pair),
        "source": spec.source,
    }
    if result.pairs != details["pairs"]:
        details["cover_pairs"] = result.pairs  # the pairs actually compared (a cover with the same answer)
    if result.epsilon_bounds is not None:
        details["epsilon_bounds"] = _plain(result.epsilon_bounds)
    if result.delta_bounds is not None:
        details["delta_bounds"] = list(result.delta_bounds)
        details["delta_pair"] = _plain(result.delta_pair)
    for key in ("delta", "privacy_profile"):
        if key in result.details:
            details["delta_star" if key == "delta" else key] = result.details[key]
    return Measurement(
        epsilon_star=float(result.epsilon),
        delta_star=float(result.delta),
        claimed_epsilon=float(claim_epsilon),
        claimed_delta=float(claim_delta),
        verdict=result.verdict,
        witness_data=result.witness,
        details=details,
        assumptions=result.assumptions,
    )


def measure_benchmark(
    *, mechanism: str = "report_noisy_max_laplace", epsilon: Fraction | float = Fraction(7, 10),
    inputs: str = "statdp_patterns", k: int | None = None,
) -> Measurement:
    """BENCH (``dpverify claim BENCH --set mechanism=svt1 --set epsilon=0.1``): one benchmark mechanism
    (:data:`BENCHMARK`, :data:`GEOMETRIC`) against its stated eps-DP on ``inputs`` with ``k`` queries
    (default: the spec's); an incorrect one is VIOLATED (exit 1)."""
    if mechanism not in _SPECS:
        raise InvalidArgument(f"mechanism must be one of {sorted(_SPECS)}, got mechanism={mechanism!r}.")
    return measure(mechanism, exact_number("epsilon", epsilon), inputs, k)


def benchmark_rows(*, full: bool = True, slow: bool = False) -> list[AuditCase]:
    """Every benchmark row (:data:`BENCHMARK`, then :data:`GEOMETRIC`): each mechanism at eps = 0.7 and
    0.1 on StatDP's patterns, and (``full``) on the full ``{0,1,2}^k`` enumeration where it is run
    (``slow``: also the enumerations that take minutes, SVT Algorithm 3 at k = 6, and the incorrect
    geometric ones). An incorrect mechanism must be VIOLATED; its ``parent`` is the correct mechanism it
    claims to match."""
    rows = []
    for spec in BENCHMARK + GEOMETRIC:
        for epsilon in EPSILONS:
            runs = [("statdp_patterns", spec.k)]
            if full and spec.full_k is not None and (slow or not spec.slow_full):
                runs.append(("all_vectors_m2", spec.full_k))
            for inputs, k in runs:
                rows.append(AuditCase(
                    "BENCH", spec.name, {"epsilon": float(epsilon), "k": k, "inputs": inputs},
                    partial(measure, spec.name, epsilon, inputs, k),
                    f"{spec.source}; claim: eps-DP at eps = {epsilon}",
                    expect=Expect.HOLDS if spec.correct else Expect.VIOLATED,
                    parent=None if spec.correct else spec.parent,
                ))
    return rows


@dataclass(frozen=True)
class DeltaRow:
    """An ``(eps', delta)`` claim on a continuous mechanism of the suite (:func:`delta_rows`)."""

    name: str
    spec: str  # the BENCHMARK mechanism it is measured as
    build: Callable[[Fraction], Any]
    k: int
    differ: str
    claim: tuple[Fraction, Fraction]
    why: str
    expect: Expect = Expect.HOLDS
    parent: str | None = None
    full: bool = True  # also on every pair of {0, 1, 2}^k


#: ``1 - e^((eps' - Delta/b)/2)`` for a Laplace count of scale ``b = 1/eps`` at eps = 7/10 (Delta = 1,
#: ``Delta/b = 7/10``) claimed at eps' = 7/20: ``1 - e^(-7/40) = 0.16054...``; claims either side.
_LAPLACE_DELTA_ABOVE, _LAPLACE_DELTA_BELOW = Fraction(1606, 10000), Fraction(1605, 10000)
_HALF = Fraction(7, 20)


DELTA_ROWS: tuple[DeltaRow, ...] = (
    DeltaRow("laplace_count", "noisy_histogram", lambda e: NoisyHistogram(e), 1, "one", (_HALF, _LAPLACE_DELTA_ABOVE),
             "a count + Lap(1/eps) (sensitivity 1) is (eps', 1 - e^((eps' - eps)/2))-DP for eps' < eps: "
             "1 - e^(-7/40) = 0.16054 at eps' = 7/20, claimed 0.1606", full=False),
    DeltaRow("laplace_count_claim_below_closed_form", "noisy_histogram", lambda e: NoisyHistogram(e), 1, "one",
             (_HALF, _LAPLACE_DELTA_BELOW),
             "the same count claimed at delta = 0.1605 < 1 - e^(-7/40) = 0.16054: violated by the set "
             "x < (1 - eps' b)/2 = 1/4", Expect.VIOLATED, "laplace_count", full=False),
    DeltaRow("laplace_count_half_scale", "noisy_histogram", lambda e: NoisyHistogram(e, scale_factor=Fraction(1, 2)),
             1, "one", (_HALF, _LAPLACE_DELTA_ABOVE),
             "Lap(1/(2 eps)) instead of Lap(1/eps): delta(eps') = 1 - e^((7/20 - 7/5)/2) = 0.4084 > 0.1606",
             Expect.VIOLATED, "laplace_count", full=False),
    DeltaRow("noisy_histogram", "noisy_histogram", lambda e: NoisyHistogram(e), 5, "one", (_HALF, _LAPLACE_DELTA_ABOVE),
             "one bin moves by 1: the Laplace count's (eps', delta) in that bin"),
    DeltaRow("noisy_histogram_all_differ", "noisy_histogram", lambda e: NoisyHistogram(e), 2, "all",
             (Fraction(7, 10), Fraction(172, 1000)),
             "both bins move by 1 (eps* = 2 eps): the exact law of the summed loss of two Laplace coordinates "
             "gives delta(eps) = 1 - (1 + eps/4) e^(-eps/2) = 0.17199 (Delta/b = eps)"),
    DeltaRow("noisy_max_value_laplace", "noisy_max_value_laplace", lambda e: NoisyMaxValue(e, "laplace"), 5, "all",
             (Fraction(7, 10), Fraction(52, 1000)),
             "not eps-DP (eps* = k eps/2), but (eps, 0.052)-DP on these inputs (delta* = 0.05137)"),
)


def delta_rows(*, full: bool = True) -> list[AuditCase]:
    """The ``(eps', delta)`` rows: a Laplace count against its closed form (holds above it, violated
    below it and by its half-scale mutant), the noisy histogram with one and two bins moved, noisy max
    returning its value; at eps = 7/10, on StatDP's patterns and (``full``, where the row says so)
    every pair of ``{0, 1, 2}^k``."""
    rows = []
    epsilon = EPSILONS[0]
    for row in DELTA_ROWS:
        runs = [("statdp_patterns", row.k)] + ([("all_vectors_m2", row.k)] if full and row.full else [])
        for inputs, k in runs:
            claim = f"({row.claim[0]}, {float(row.claim[1])})"  # eps' exact, delta as the decimal it is
            rows.append(AuditCase(
                "BENCH", row.name, {"epsilon": float(epsilon), "k": k, "inputs": inputs, "claim": claim},
                partial(measure, row.spec, epsilon, inputs, k, claim=row.claim, mechanism=row.build(epsilon),
                        differ=row.differ),
                f"{row.why}; claim: (eps', delta) = {claim}",
                expect=row.expect, parent=row.parent,
            ))
    return rows


def cases() -> list[AuditCase]:
    """The audit's rows (``dpverify audit --claim BENCH``): patterns and full enumerations, then the
    ``(eps, delta)`` rows."""
    return benchmark_rows() + delta_rows()


#: Claim id -> measurement taking instance keyword arguments (``dpverify claim BENCH --set ...``).
CLAIMS = {"BENCH": measure_benchmark}
