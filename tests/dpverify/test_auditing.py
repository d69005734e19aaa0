"""Tests of the audit-file values (dpverify.auditing): Row and Audit checked when built, rows as audit
cases, each decided by dpverify.verify with its figures worked out by hand."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from dpverify import ApproximateDp, Datasets, InputPairs, InvalidArgument, PureDp, Stability, Verdict
from dpverify.auditing import Audit, Row
from dpverify.integrations.audit import Expect, run_audit
from dpverify.integrations.presentation import LEGEND, legend

DATASETS = Datasets([0, 1], n=1)


def randomized_response(dataset: tuple[int, ...]) -> dict[int, Fraction]:
    """Keeps the bit with probability 3/4: eps* = ln((3/4) / (1/4)) = ln 3."""
    return {dataset[0]: Fraction(3, 4), 1 - dataset[0]: Fraction(1, 4)}


def leaky_response(dataset: tuple[int, ...]) -> dict[int, Fraction]:
    """Keeps the bit with probability 7/8: eps* = ln 7."""
    return {dataset[0]: Fraction(7, 8), 1 - dataset[0]: Fraction(1, 8)}


def _row(mechanism=randomized_response, **options) -> Row:
    options.setdefault("statement", "randomized response at p = 3/4 is ln(3)-DP")
    return Row(mechanism, DATASETS, PureDp("ln(3)"), **options)


def test_rows_become_cases_numbered_by_statement_with_the_inputs_as_instance():
    audit = Audit("RR", [_row(source="Warner 1965"), _row(leaky_response, expect="violated"),
                         Row(randomized_response, DATASETS, PureDp(2), statement="a looser claim")])
    cases = audit.cases()
    assert [c.claim for c in cases] == ["1", "1", "2"]  # the mutant shares its parent's statement
    assert [c.mechanism for c in cases] == ["randomized_response", "leaky_response", "randomized_response"]
    assert [c.expect for c in cases] == [Expect.HOLDS, Expect.VIOLATED, Expect.HOLDS]
    assert cases[1].parent == "randomized_response"  # found by the statement
    assert cases[0].instance == "records=[0, 1], n=1, substitute"
    assert dict(cases[0].parameters) == {"records": [0, 1], "n": 1, "neighbors": "substitute"}
    assert (cases[0].statement, cases[0].source) == ("randomized response at p = 3/4 is ln(3)-DP", "Warner 1965")


def test_each_row_is_decided_by_verify_with_its_profile():
    audit = Audit("RR", [_row(), _row(leaky_response, expect="violated")])
    holds, caught = run_audit(audit.cases())
    assert holds.measurement.verdict is Verdict.HOLDS  # eps* = ln 3 exactly at the claim: tight, holds
    assert holds.measurement.epsilon_star == pytest.approx(math.log(3))
    assert caught.measurement.verdict is Verdict.VIOLATED and caught.as_expected
    assert caught.measurement.epsilon_star == pytest.approx(math.log(7))  # (7/8) / (1/8)
    assert caught.measurement.delta_star == pytest.approx(7 / 8 - 3 / 8)  # P - e^eps Q = 7/8 - 3 * 1/8 = 1/2
    witness = caught.measurement.witness_data
    assert witness is not None and (witness.p, witness.q) == (Fraction(7, 8), Fraction(1, 8))
    profile = holds.measurement.details["privacy_profile"]
    at_zero = next(point for point in profile if point["epsilon"] == 0)
    assert at_zero["delta"] == pytest.approx(0.5)  # total variation: 3/4 - 1/4
    assert profile[-1]["delta"] == 0.0  # beyond eps* = ln 3 nothing is left


def test_a_stability_claim_runs_without_a_profile():
    (row,) = run_audit(Audit("RR", [Row(randomized_response, DATASETS, Stability("1/2"), statement="1/2-stable")]).cases())
    assert row.measurement.verdict is Verdict.HOLDS  # |3/4 - 1/4| = 1/2 on every outcome: exactly gamma
    assert "privacy_profile" not in row.measurement.details


def test_given_pairs_show_their_name_and_count():
    pairs = InputPairs.from_pairs([((0,), (1,))], name="one pair")
    (case,) = Audit("RR", [Row(randomized_response, pairs, ApproximateDp(1, "1/4"), statement="s")]).cases()
    assert case.instance == "one pair: 1 pairs"
    (row,) = run_audit([case])
    assert row.measurement.verdict is Verdict.HOLDS  # delta(1) = 3/4 - e/4 = 0.0704 <= 1/4


def test_long_record_universes_are_counted_in_the_instance():
    records = [(x, y) for x in range(5) for y in (0, 1)]
    (case,) = Audit("A", [Row(randomized_response, Datasets(records, n=1, exchangeable=True), PureDp(1),
                              statement="s")]).cases()
    assert case.instance == "10 records, n=1, substitute, exchangeable=True"
    assert case.parameters["records"] == records  # every record kept in the JSON


@pytest.mark.parametrize(("build", "message"), [
    (lambda: Row(randomized_response, [0, 1], PureDp(1), statement="s"), "inputs must be dpverify.Datasets"),
    (lambda: Row(randomized_response, DATASETS, 1.0, statement="s"), "claim must be a claim value"),
    (lambda: Row(randomized_response, DATASETS, PureDp(1), statement="  "), "statement is empty"),
    (lambda: Row(randomized_response, DATASETS, PureDp(1), statement="s", expect="maybe"), "expect must be 'holds'"),
    (lambda: Row(randomized_response, DATASETS, PureDp(1), statement="s", mutant_of="x"), "expects the claim to hold"),
    (lambda: Row(lambda d: {0: 1}, DATASETS, PureDp(1), statement="s"), "has no name to show; give one with name="),
    (lambda: Row(42, DATASETS, PureDp(1), statement="s"), "mechanism must be a callable"),
    (lambda: Audit("", [_row()]), "title must be non-empty"),
    (lambda: Audit("A", []), "has no rows"),
    (lambda: Audit("A", [_row(), "row"]), "rows[1] must be a dpverify.auditing.Row"),
    (lambda: Audit("A", _row()), "rows must be a list of Row values"),
    (lambda: Audit("A", [_row(), _row(leaky_response, statement="other", expect="violated")]),
     "name the row whose mechanism it breaks with mutant_of="),
    (lambda: Audit("A", [_row(), _row(leaky_response, expect="violated", mutant_of="nobody")]),
     "mutant_of='nobody' names no row expected to hold; choose one of ['randomized_response']"),
])
def test_bad_values_are_refused_when_built_naming_the_fix(build, message):
    with pytest.raises(InvalidArgument) as raised:
        build()
    assert message in str(raised.value)


def test_a_named_lambda_and_an_explicit_parent_are_accepted():
    audit = Audit("A", [Row(lambda d: {d[0]: 1}, DATASETS, PureDp(1), statement="s", name="identity"),
                        _row(leaky_response, statement="other", expect="violated", mutant_of="identity")])
    assert [c.parent for c in audit.cases()] == [None, "identity"]


def test_the_legend_notes_a_theorem_bound_only_for_rows_that_claim_one():
    stated = run_audit(Audit("RR", [_row()]).cases())
    (term, meaning), = [(t, m) for t, m in legend(stated) if t == "claimed eps"]
    assert meaning == "the epsilon the claim guarantees on this instance"  # no O(eps) note, no 2.773
    assert legend(stated) != LEGEND
    # A row whose instance runs the mechanism at eps = 0.2 and claims 2.773: the note is shown.
    from tests.dpverify.integrations._report_rows import rows

    assert legend(rows()) == LEGEND and "2.773" in dict(LEGEND)["claimed eps"]
