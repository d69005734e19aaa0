"""Tests of dpverify.mechanisms.audits.benchmark_suite: the BENCH rows of the standard DP-testing benchmark suite."""

from __future__ import annotations

import json

import pytest

from dpverify import Verdict
from dpverify.integrations.audit import AuditCase, Measurement
from dpverify.mechanisms.audits.benchmark_suite import BENCHMARK, benchmark_rows

NAMES = [
    "report_noisy_max_laplace", "report_noisy_max_exponential", "noisy_max_value_laplace",
    "noisy_max_value_exponential", "noisy_histogram", "noisy_histogram_wrong_scale",
    "svt1", "svt2", "svt3", "svt4", "svt5", "svt6",
]
SLOW = {"svt3", "svt6"}  # more than a second per row


def test_the_twelve_mechanisms_and_their_rows():
    assert [m.name for m in BENCHMARK] == NAMES
    rows = benchmark_rows()
    assert all(isinstance(r, AuditCase) and r.claim == "BENCH" for r in rows)
    patterns = [r for r in rows if r.parameters["inputs"] == "statdp_patterns"]
    assert len(patterns) == 24  # 12 mechanisms x eps in {0.7, 0.1}
    for row in rows:
        assert set(row.parameters) == {"epsilon", "k", "inputs"}
        assert row.parameters["epsilon"] in (0.7, 0.1)
        assert row.parameters["inputs"] in ("statdp_patterns", "all_vectors_m2")
    assert {r.parameters["k"] for r in patterns if r.mechanism.startswith("svt")} == {10}
    assert {r.parameters["k"] for r in patterns if not r.mechanism.startswith("svt")} == {5}
    full = {r.mechanism for r in rows if r.parameters["inputs"] == "all_vectors_m2"}
    assert full == set(NAMES) - {"svt3"}  # svt3's enumeration takes minutes: benchmark_rows(slow=True)
    slow_full = {r.mechanism for r in benchmark_rows(slow=True) if r.parameters["inputs"] == "all_vectors_m2"}
    assert slow_full == set(NAMES)
    incorrect = {r.mechanism for r in rows if r.expect_violation}
    assert incorrect == {"noisy_max_value_laplace", "noisy_max_value_exponential", "noisy_histogram_wrong_scale",
                         "svt3", "svt4", "svt5", "svt6"}


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


@pytest.mark.slow
@pytest.mark.parametrize("row", [r for r in benchmark_rows() if r.mechanism in SLOW or r.parameters["inputs"] != "statdp_patterns"],
                         ids=lambda r: f"{r.mechanism}-{r.parameters['epsilon']}-{r.parameters['inputs']}")
def test_slow_rows_as_expected(row):
    measurement = row.run()
    assert (measurement.verdict is Verdict.VIOLATED) if row.expect_violation else measurement.verdict.passes
