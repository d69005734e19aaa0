"""Contract suite over the audit registry: every claim row behaves as expected.

For each registered case: a real mechanism's claim holds (certified or clear of the float margin),
a ``mutant_*`` violates its parent's claim and comes with a witness naming both datasets, and a
measured-only row reports finite-or-infinite numbers without a verdict. The whole registry takes
about 40 s, so the suite is behind the ``slow`` marker (CI runs it).
"""

from __future__ import annotations

import math

import pytest

from dpverify.integrations.audit import audit_cases, run_audit

CASES = audit_cases()


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[f"{c.claim}-{c.mechanism}-{i}" for i, c in enumerate(CASES)])
def test_registered_case_behaves_as_expected(case):
    (row,) = run_audit([case])
    measurement = row.measurement
    assert row.as_expected, f"{case.claim} {case.mechanism} ({case.instance}): {row.verdict}"
    assert not math.isnan(measurement.epsilon_star)
    # delta* is a number, or explicitly not computed (continuous outputs, decided for pure claims)
    assert not math.isnan(measurement.delta_star) or "not computed" in measurement.details.get("delta_star", "")
    if case.measured_only:
        return
    if case.expect_violation:
        assert measurement.holds is False
        assert measurement.witness, "a caught mutant must come with a witness"
    else:
        assert measurement.holds is True
        assert measurement.witness is None


def test_registry_is_well_formed():
    # Fast structural checks: unique rows, mutants named as such carry a parent claim id, and the
    # issue's C3 default instance is present with exactly these parameters.
    keys = [(c.claim, c.mechanism, tuple(sorted(map(str, c.parameters.items())))) for c in CASES]
    assert len(keys) == len(set(keys))
    claims = {c.claim for c in CASES}
    assert {f"C{i}" for i in range(1, 17)} <= claims | {"C8"}
    assert {"C8a", "C8b"} <= claims
    default = {"concept_class": "thresholds", "domain_size": 3, "n": 6, "epsilon": 0.2, "learner": "exponential",
               "learner_epsilon": 1.0, "representative": "first"}
    assert any(c.claim == "C3" and c.parameters == default for c in CASES)
    for case in CASES:
        if case.mechanism.startswith("mutant_"):
            assert case.claim.startswith("C")
