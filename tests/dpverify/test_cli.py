"""Tests of the command line (dpverify.cli) and the audit runner/reports (dpverify.audit, report).

``dpverify check`` loads helper mechanisms from tests/cli_mechanisms.py by ``MODULE:CALLABLE``;
the tests run from the repository root, which the CLI puts on sys.path.
"""

from __future__ import annotations

import json
import math

import pytest

import dpverify.audit as registry
from dpverify.cli import main

DEFAULT_C3 = {
    "concept_class": "thresholds",
    "domain_size": 3,
    "n": 6,
    "epsilon": 0.2,
    "learner": "exponential",
    "learner_epsilon": 1.0,
    "representative": "first",
}
ROW_KEYS = {"claim", "mechanism", "parameters", "epsilon_star", "delta_star", "claimed_epsilon",
            "claimed_delta", "holds", "seconds"}


@pytest.fixture
def small_registry(monkeypatch):
    """The real audit cases minus the expensive rows (sweeps, n > 24), to keep the suite fast."""
    every = registry.audit_cases()

    def cheap():
        return [c for c in every if "sweep" not in c.parameters and c.parameters.get("n", 0) <= 24]

    monkeypatch.setattr(registry, "audit_cases", cheap)
    return cheap


def _check_c3_document(document):
    assert set(document) >= {"dpverify_version", "all_as_expected", "results"}
    results = document["results"]
    assert isinstance(results, list) and results
    for row in results:
        assert ROW_KEYS <= set(row)
        assert row["claim"] == "C3"
    default_rows = [r for r in results if r["parameters"] == DEFAULT_C3]
    assert len(default_rows) == 1
    row = default_rows[0]
    assert row["claim"] == "C3" and row["mechanism"] == "a_agnostic"
    assert row["holds"] is True
    # ln(e^0.2 + 4e^2 * 2/4) = 2.7725584065316067, delta' = 0 for the pure EM learner
    assert row["claimed_epsilon"] == pytest.approx(2.7725584065316067, rel=1e-14)
    assert row["claimed_delta"] == 0.0
    assert 0 < row["epsilon_star"] < row["claimed_epsilon"]
    assert row["delta_star"] == 0.0
    assert isinstance(row["seconds"], float) and row["seconds"] >= 0
    # The non-private inner learner: infinite eps* written as the string "inf", caught as expected.
    mutant = [r for r in results if r["mechanism"] == "mutant_inner_consistent"]
    assert len(mutant) == 1
    assert mutant[0]["epsilon_star"] == "inf"
    assert mutant[0]["holds"] is False
    assert mutant[0]["expected_violation"] is True and mutant[0]["as_expected"] is True
    assert "D  = " in mutant[0]["witness"] and "D' = " in mutant[0]["witness"]
    assert document["all_as_expected"] is True


def test_audit_json_for_claim_c3(small_registry, capsys):
    code = main(["audit", "--format", "json", "--claim", "C3"])
    out = capsys.readouterr().out
    assert code == 0
    _check_c3_document(json.loads(out))


@pytest.mark.slow
def test_audit_json_for_claim_c3_full_registry(capsys):
    # Every C3 row of the real registry, sweeps and the n = 64 mutant included (~25 s).
    code = main(["audit", "--format", "json", "--claim", "C3"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    _check_c3_document(document)
    sweep = [r for r in document["results"] if "sweep" in r["parameters"]]
    assert sum(r["parameters"]["sweep"] == "k fixed" for r in sweep) == 5  # eps = 1/3, 1/4, 1/6, 1/8, 1/12
    assert sum(r["parameters"]["sweep"] == "k growing" for r in sweep) == 3  # eps = 1/3, 1/4, 1/6
    assert all(r["holds"] is True for r in sweep)
    # every mutant row is caught, every claimed row holds
    for row in document["results"]:
        if row["mechanism"].startswith("mutant_"):
            assert row["holds"] is False, row["mechanism"]


def test_audit_table_and_reports(small_registry, capsys, tmp_path):
    code = main(["audit", "--claim", "c2", "--quiet", "--output", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    assert "a_relabel" in out and "holds" in out
    assert "report written" in out
    document = json.loads((tmp_path / "audit.json").read_text())
    assert [r["claim"] for r in document["results"]] == ["C2"]
    assert document["results"][0]["claimed_epsilon"] == 0.2
    assert document["results"][0]["holds"] is True
    markdown = (tmp_path / "audit.md").read_text()
    assert markdown.startswith("# dpverify audit")
    assert "| C2 | `a_relabel` |" in markdown


def test_audit_unknown_claim_is_a_usage_error(small_registry, capsys):
    assert main(["audit", "--claim", "C99"]) == 2
    assert "no audit case" in capsys.readouterr().err


def test_list_shows_the_registry(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "mutant_inner_consistent" in out
    assert any(line.startswith("C3 ") and "a_agnostic" in line for line in out.splitlines())


# -- dpverify check -------------------------------------------------------------------------------

RR = "tests.cli_mechanisms:randomized_response"  # eps* = ln 3 = 1.0986122886681098
BITS = ["--records", "[0, 1]", "--n", "1"]


def test_check_holds_exit_zero(capsys):
    assert main(["check", RR, *BITS, "--epsilon", "1.1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("HOLDS")
    assert "eps*=1.09861" in out


def test_check_exact_tight_epsilon_holds(capsys):
    # eps = log(3) exactly: P/Q = (3/4)/(1/4) = 3 = e^eps, tight but not violated.
    assert main(["check", RR, *BITS, "--epsilon", "log(3)"]) == 0
    assert capsys.readouterr().out.startswith("HOLDS")


def test_check_violated_exit_one_with_witness(capsys):
    assert main(["check", RR, *BITS, "--epsilon", "1.0"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("VIOLATED")
    assert "witness" in out
    assert "D  = (0,)" in out and "D' = (1,)" in out
    # delta(1) = 3/4 - e/4 = 0.0704295...
    assert f"delta(eps)={0.75 - math.e / 4:.6g}" in out


def test_check_delta_claims(capsys):
    # RR at eps = 1: delta* = 3/4 - e/4 = 0.07042954; (1, 0.08) holds, (1, 0.07) does not.
    assert main(["check", RR, *BITS, "--epsilon", "1", "--delta", "0.08"]) == 0
    assert main(["check", RR, *BITS, "--epsilon", "1", "--delta", "0.07"]) == 1
    capsys.readouterr()


def test_check_infinite_loss_with_domain_size(capsys):
    # leak_first outputs its first record: P = 1, Q = 0, delta* = 1 > 0.5 at any eps.
    args = ["check", "tests.cli_mechanisms:leak_first", "--records", "[0, 1]", "--n", "2", "--epsilon", "5", "--delta", "0.5"]
    assert main(args) == 1
    assert "eps*=inf" in capsys.readouterr().out
    # constant mechanism over the labeled records of X = {0, 1}: eps* = 0, holds at eps = 0.
    assert main(["check", "tests.cli_mechanisms:constant", "--domain-size", "2", "--n", "2", "--epsilon", "0"]) == 0
    assert "48 substitute pairs over 16 datasets" in capsys.readouterr().out  # 4^2 = 16; 16*2*3/2 = 48


def test_check_wrong_exchangeable_declaration_is_reported(capsys):
    assert main(["check", "tests.cli_mechanisms:leak_first", "--records", "[0, 1]", "--n", "2",
                 "--epsilon", "1", "--exchangeable"]) == 1
    assert "WARNING: declared exchangeable" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([RR, *BITS, "--epsilon", "abc"], "--epsilon must be a number or an expression"),
        ([RR, *BITS, "--epsilon", "0.1 0.2"], "--epsilon must be a real number"),
        ([RR, *BITS, "--epsilon", "__import__('os').getpid()"], "--epsilon must be a number or an expression"),
        ([RR, *BITS, "--epsilon", "-1"], "epsilon must be >= 0"),
        ([RR, *BITS, "--epsilon", "nan"], "epsilon must be >= 0"),
        ([RR, *BITS, "--epsilon", "1e400"], "epsilon must be finite"),
        ([RR, *BITS, "--epsilon", "1", "--delta", "2"], "delta must be in [0, 1]"),
        (["tests.no_such_module:f", *BITS, "--epsilon", "1"], "cannot import module 'tests.no_such_module'"),
        (["tests.cli_mechanisms:missing", *BITS, "--epsilon", "1"], "has no attribute 'missing'"),
        (["tests.cli_mechanisms:NOT_CALLABLE", *BITS, "--epsilon", "1"], "is not callable"),
        (["tests.cli_mechanisms", *BITS, "--epsilon", "1"], "MODULE:CALLABLE"),
        ([RR, "--records", "[0, 1", "--n", "1", "--epsilon", "1"], "--records must be a Python literal"),
        ([RR, "--n", "1", "--epsilon", "1"], "give the record universe"),
    ],
)
def test_check_usage_errors_exit_two(args, message, capsys):
    assert main(["check", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpverify: error:")
    assert message in err


def test_check_missing_required_argument_exits_two(capsys):
    with pytest.raises(SystemExit) as info:
        main(["check", RR, "--records", "[0, 1]", "--epsilon", "1"])  # no --n
    assert info.value.code == 2


@pytest.mark.parametrize("text", ["0,5", "True", "[1]", "None"])
def test_check_non_numeric_python_literal_epsilon_exits_two(text, capsys):
    assert main(["check", RR, *BITS, "--epsilon", text]) == 2
    assert "--epsilon" in capsys.readouterr().err


# -- dpverify claim -------------------------------------------------------------------------------


def test_claim_default_c3_instance(capsys):
    assert main(["claim", "C3"]) == 0
    out = capsys.readouterr().out
    assert "user instance" in out and "holds" in out
    assert "k: 2" in out  # ceil(0.2 * 6)
    assert "C3a_slack" in out and "C3b_slack" in out


def test_claim_precondition_is_a_usage_error_naming_the_flag(capsys):
    assert main(["claim", "C3", "--set", "n=4"]) == 2  # 0.2 * 4 < 1
    err = capsys.readouterr().err
    assert "epsilon*n >= 1" in err and "--outside-preconditions" in err


def test_claim_outside_preconditions_is_measured(capsys):
    assert main(["claim", "C3", "--set", "n=4", "--outside-preconditions"]) == 0
    out = capsys.readouterr().out
    assert "measured" in out
    assert "k: 1" in out  # ceil(0.8)


def test_claim_violation_exits_one_with_witness(capsys):
    assert main(["claim", "C3", "--set", "learner=consistent"]) == 1
    out = capsys.readouterr().out
    assert "VIOLATED" in out
    assert "witness:" in out and "D  = " in out and "D' = " in out


@pytest.mark.parametrize(("args", "message"), [(["C99"], "unknown claim"), (["C3", "--set", "bogus=1"], "bad parameter"),
                                               (["C3", "--set", "n"], "KEY=VALUE")])
def test_claim_usage_errors(args, message, capsys):
    assert main(["claim", *args]) == 2
    assert message in capsys.readouterr().err


def test_claim_outside_preconditions_with_k_equal_n_does_not_crash(capsys):
    code = main(["claim", "C3", "--set", "epsilon=0.9", "--set", "n=3", "--outside-preconditions"])
    assert code in (0, 2)
