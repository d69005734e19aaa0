"""The GAUSS audit rows (:mod:`dpverify.mechanisms.audits.gaussian`): verdicts, slack and witnesses."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from dpverify.integrations.audit import Expect, run_audit
from dpverify.mechanisms.audits import AUDITS
from dpverify.mechanisms.audits import gaussian as audit
from dpverify.verdict.engine import Verdict

CASES = audit.cases()


@pytest.fixture(scope="module")
def rows():
    """The rows, run once per module (about 1.3 s; at import they ran during collection, on every xdist worker)."""
    return run_audit(CASES)


def test_the_audit_is_registered():
    assert audit in AUDITS
    names = {case.mechanism for case in audit.cases()}
    assert names == {"gaussian_classical", "gaussian_analytic", "gaussian_half_sigma", "gaussian_analytic_claimed_pure"}


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c.mechanism}-{i}" for i, c in enumerate(CASES)])
def test_every_row_is_as_expected(rows, index):
    row = rows[index]
    assert row.case is CASES[index]
    measurement = row.measurement
    assert row.as_expected, f"{row.case.mechanism} ({row.case.instance}): {row.verdict}"
    assert measurement.epsilon_star == math.inf  # the pure eps* of a Gaussian, on every row
    if row.case.expect is Expect.VIOLATED:
        assert measurement.verdict is Verdict.VIOLATED and measurement.witness
        assert "erfc" in measurement.witness and "D' =" in measurement.witness
    else:
        assert measurement.verdict is Verdict.HOLDS and measurement.witness is None


def test_classical_rows_hold_with_slack_and_more_noise_than_needed(rows):
    classical = [r.measurement for r in rows if r.case.mechanism == "gaussian_classical"]
    assert len(classical) == 2
    for m in classical:
        # delta(eps) of the classical sigma is far below the claim (1.6e-8 and 2.7e-9 against 1e-5
        # and 1e-6); the classical sigma is 26% to 38% larger than the analytic one
        assert 0.99 < m.details["delta_slack_relative"] < 1
        assert 1.2 < m.details["sigma_over_analytic"] < 1.4
        assert m.delta_star < m.claimed_delta / 100


def test_analytic_rows_are_tight(rows):
    analytic = [r.measurement for r in rows if r.case.mechanism == "gaussian_analytic"]
    assert len(analytic) == 4
    assert {m.claimed_epsilon for m in analytic} == {0.5, 1.0, 2.0, 0.1}
    for m in analytic:
        assert m.details["sigma_over_analytic"] == 1.0
        assert m.delta_star == pytest.approx(m.claimed_delta, rel=1e-12)  # within the float rounding of sigma
        assert abs(m.details["delta_slack_relative"]) < 1e-12


def test_violated_rows_report_delta_above_the_claim(rows):
    by_name = {r.case.mechanism: r.measurement for r in rows}
    half = by_name["gaussian_half_sigma"]
    assert half.details["sigma_over_analytic"] == 0.5
    assert half.delta_star > 1000 * half.claimed_delta  # delta(1) at sigma 1.87 and Delta sqrt 2: about 0.0104
    assert half.delta_star == pytest.approx(0.01039491187287794, rel=1e-9)
    pure = by_name["gaussian_analytic_claimed_pure"]
    assert pure.claimed_delta == 0.0 and pure.delta_star == pytest.approx(1e-5, rel=1e-12)


def test_measure_takes_instance_keywords():
    m = audit.CLAIMS["GAUSS"](epsilon=Fraction(1, 2), delta=Fraction(1, 1000), inputs="vectors_one_differs")
    assert m.verdict is Verdict.HOLDS
    with pytest.raises(ValueError, match="calibration"):
        audit.measure(epsilon=1, delta=Fraction(1, 1000), calibration="other")
