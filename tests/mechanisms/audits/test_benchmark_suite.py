"""Tests of dpverify.mechanisms.audits.benchmark_suite: the BENCH rows of the standard DP-testing benchmark suite."""

from __future__ import annotations

import json
import math

import pytest

from dpverify import Verdict
from dpverify.integrations.audit import AuditCase, Measurement
from dpverify.mechanisms.audits.benchmark_suite import (
    BENCHMARK,
    DELTA_ROWS,
    GEOMETRIC,
    benchmark_rows,
    cases,
    delta_rows,
)

NAMES = [
    "report_noisy_max_laplace", "report_noisy_max_exponential", "noisy_max_value_laplace",
    "noisy_max_value_exponential", "noisy_histogram", "noisy_histogram_wrong_scale",
    "svt1", "svt2", "svt3", "svt4", "svt5", "svt6",
]
GEOMETRIC_NAMES = ["report_noisy_max_geometric", "svt1_geometric", "svt2_geometric", "svt4_geometric",
                   "svt5_geometric", "svt6_geometric"]
SLOW = {"svt3", "svt6", "svt6_geometric"}  # more than a second per row


def test_the_twelve_mechanisms_and_their_rows():
    assert [m.name for m in BENCHMARK] == NAMES
    assert [m.name for m in GEOMETRIC] == GEOMETRIC_NAMES
    rows = benchmark_rows()
    assert all(isinstance(r, AuditCase) and r.claim == "BENCH" for r in rows)
    patterns = [r for r in rows if r.parameters["inputs"] == "statdp_patterns"]
    assert len(patterns) == 36  # (12 + 6 geometric) mechanisms x eps in {0.7, 0.1}
    for row in rows:
        assert set(row.parameters) == {"epsilon", "k", "inputs"}
        assert row.parameters["epsilon"] in (0.7, 0.1)
        assert row.parameters["inputs"] in ("statdp_patterns", "all_vectors_m2")
    assert {r.parameters["k"] for r in patterns if r.mechanism.startswith("svt")} == {10}
    assert {r.parameters["k"] for r in patterns if not r.mechanism.startswith("svt")} == {5}
    full = {r.mechanism for r in rows if r.parameters["inputs"] == "all_vectors_m2"}
    # svt3's enumeration takes minutes; the incorrect geometric ones are caught on the patterns; at c = 1
    # svt2_geometric is svt1_geometric: benchmark_rows(slow=True) runs all but the last
    assert full == set(NAMES) - {"svt3"} | {"report_noisy_max_geometric", "svt1_geometric"}
    slow_full = {r.mechanism for r in benchmark_rows(slow=True) if r.parameters["inputs"] == "all_vectors_m2"}
    assert slow_full == set(NAMES) | set(GEOMETRIC_NAMES) - {"svt2_geometric"}
    incorrect = {r.mechanism for r in rows if r.expect_violation}
    assert incorrect == {"noisy_max_value_laplace", "noisy_max_value_exponential", "noisy_histogram_wrong_scale",
                         "svt3", "svt4", "svt5", "svt6", "svt4_geometric", "svt5_geometric", "svt6_geometric"}
    assert {r.parent for r in rows if r.mechanism.endswith("_geometric") and r.expect_violation} == {"svt1_geometric"}


#: The geometric rows' exact eps* on the patterns (the same as tests/mechanisms/test_sparse_vector.py and
#: test_geometric.py record and check against naive truncated sums): svt1/svt2 hold below eps, svt4 is
#: caught near its ((1 + 6c)/4) eps = 1.75 eps bound, svt5 is infinite (no query noise), svt6 grows with k.
GEOMETRIC_EPSILON_STAR = {
    ("report_noisy_max_geometric", 0.7): 0.6753200471698327, ("report_noisy_max_geometric", 0.1): 0.0942142527182633,
    ("svt1_geometric", 0.7): 0.6467107474396688, ("svt1_geometric", 0.1): 0.0885427175935518,
    ("svt2_geometric", 0.7): 0.6467107474396688, ("svt2_geometric", 0.1): 0.0885427175935518,
    ("svt4_geometric", 0.7): 1.216047285243755, ("svt4_geometric", 0.1): 0.1723035509956202,
    ("svt5_geometric", 0.7): float("inf"), ("svt5_geometric", 0.1): float("inf"),
    ("svt6_geometric", 0.7): 3.149302814372283, ("svt6_geometric", 0.1): 0.4203250726511198,
}


@pytest.mark.parametrize("row", [r for r in benchmark_rows(full=False) if r.mechanism.endswith("_geometric")
                                 and r.mechanism not in SLOW],
                         ids=lambda r: f"{r.mechanism}-{r.parameters['epsilon']}")
def test_geometric_pattern_rows_exact_epsilon(row):
    measurement = row.run()
    expected = GEOMETRIC_EPSILON_STAR[(row.mechanism, row.parameters["epsilon"])]
    assert measurement.epsilon_star == pytest.approx(expected, rel=1e-13)
    if row.expect_violation:
        assert "certified enclosures: P[M(D) in S] in [" in measurement.witness


CONTINUOUS = {"noisy_max_value_laplace", "noisy_max_value_exponential", "noisy_histogram", "noisy_histogram_wrong_scale",
              "svt3"}


@pytest.mark.parametrize("row", [r for r in benchmark_rows(full=False) if r.mechanism not in SLOW],
                         ids=lambda r: f"{r.mechanism}-{r.parameters['epsilon']}")
def test_pattern_rows_as_expected(row):
    measurement = row.run()
    assert isinstance(measurement, Measurement)
    if row.expect_violation:
        assert measurement.verdict is Verdict.VIOLATED and measurement.witness
    else:
        assert measurement.verdict is Verdict.HOLDS
    json.dumps(measurement.details)  # the audit writes details to JSON
    if row.mechanism in CONTINUOUS:  # delta* at the claimed eps and the privacy profile, certified
        assert math.isfinite(measurement.delta_star)
        low, high = measurement.details["delta_bounds"]
        assert low <= measurement.delta_star <= high
        assert (measurement.delta_star > 0) == row.expect_violation  # a pure claim fails iff delta(eps) > 0
        profile = measurement.details["privacy_profile"]
        eps = row.parameters["epsilon"]
        assert [p["epsilon"] for p in profile] == pytest.approx([eps * i / 4 for i in range(9)], rel=1e-15)
        assert profile[4]["delta"] == measurement.delta_star  # the claimed eps is a point of the grid
        deltas = [p["delta"] for p in profile]
        assert deltas == sorted(deltas, reverse=True)


def test_delta_rows():
    rows = delta_rows()
    assert {r.mechanism for r in rows} == {
        "laplace_count", "laplace_count_claim_below_closed_form", "laplace_count_half_scale", "noisy_histogram",
        "noisy_histogram_all_differ", "noisy_max_value_laplace",
    }
    assert len(rows) == 9 and all(r.claim == "BENCH" and "claim" in r.parameters for r in rows)
    violated = {r.mechanism for r in rows if r.expect_violation}
    assert violated == {"laplace_count_claim_below_closed_form", "laplace_count_half_scale"}
    assert {r.parent for r in rows if r.expect_violation} == {"laplace_count"}
    assert len(cases()) == len(benchmark_rows()) + 9


@pytest.mark.parametrize("row", [r for r in delta_rows(full=False)], ids=lambda r: r.mechanism)
def test_delta_rows_as_expected(row):
    measurement = row.run()
    claimed = DELTA_ROWS[[d.name for d in DELTA_ROWS].index(row.mechanism)].claim
    assert (measurement.claimed_epsilon, measurement.claimed_delta) == (float(claimed[0]), float(claimed[1]))
    if row.expect_violation:
        assert measurement.verdict is Verdict.VIOLATED and measurement.witness
        assert measurement.details["delta_bounds"][0] > measurement.claimed_delta
    else:
        assert measurement.verdict is Verdict.HOLDS
        assert measurement.details["delta_bounds"][1] <= measurement.claimed_delta
    if row.mechanism in ("laplace_count", "laplace_count_claim_below_closed_form", "noisy_histogram"):
        # 1 - e^((eps' - Delta/b)/2) with eps' = 7/20 and Delta/b = 7/10 (b = 1/eps)
        assert measurement.delta_star == pytest.approx(1 - math.exp(-7 / 40), abs=1e-15)
    if row.mechanism == "laplace_count_half_scale":  # Delta/b = 7/5
        assert measurement.delta_star == pytest.approx(1 - math.exp(-21 / 40), abs=1e-15)
    json.dumps(measurement.details)


@pytest.mark.slow
@pytest.mark.parametrize("row", [r for r in benchmark_rows() if r.mechanism in SLOW or r.parameters["inputs"] != "statdp_patterns"],
                         ids=lambda r: f"{r.mechanism}-{r.parameters['epsilon']}-{r.parameters['inputs']}")
def test_slow_rows_as_expected(row):
    measurement = row.run()
    assert (measurement.verdict is Verdict.VIOLATED) if row.expect_violation else measurement.verdict.passes
