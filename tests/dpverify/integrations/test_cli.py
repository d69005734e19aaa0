"""Tests of the command line (dpverify.integrations.cli) and the audit runner/reports (dpverify.integrations.audit, report).

``dpverify check`` loads helper mechanisms from tests/cli_mechanisms.py by ``MODULE:CALLABLE``;
the tests run from the repository root, which the CLI puts on sys.path.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import tempfile
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

import dpverify.checking.front as front
import dpverify.integrations.audit as registry
import dpverify.integrations.report as report
from dpverify import InvalidArgument, Verdict
from dpverify.errors import EnumerationTooLarge, EnvironmentFailure, MechanismError, NondeterministicMechanism
from dpverify.integrations.audit import AuditCase, Measurement
from dpverify.integrations.cli import main
from tests import cli_mechanisms

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
    assert set(document) >= {"schema_version", "document", "dpverify_version", "all_as_expected", "results"}
    assert document["schema_version"] == "1.4" and document["document"] == "audit"
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
    assert row["claimed_epsilon"]["value"] == pytest.approx(2.7725584065316067, rel=1e-14)
    assert row["claimed_delta"] == {"value": 0.0, "kind": "finite", "exact": None}
    assert 0 < row["epsilon_star"]["value"] < row["claimed_epsilon"]["value"]
    assert row["delta_star"]["value"] == 0.0
    assert isinstance(row["seconds"], float) and row["seconds"] >= 0
    # The non-private inner learner: infinite eps* is a figure of kind "+inf", caught as expected.
    mutant = [r for r in results if r["mechanism"] == "mutant_inner_consistent"]
    assert len(mutant) == 1
    assert mutant[0]["epsilon_star"] == {"value": None, "kind": "+inf", "exact": None}
    assert mutant[0]["holds"] is False
    assert mutant[0]["expected_violation"] is True and mutant[0]["as_expected"] is True
    assert "D  = " in mutant[0]["witness"]["text"] and "D' = " in mutant[0]["witness"]["text"]
    assert mutant[0]["witness"]["q"]["value"] == 0.0  # P > 0 = Q: the infinite loss
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
    assert "a_relabel" in out and "✓ holds" in out
    assert "1 row: 1 as expected (1 holds, 0 mutants caught), 0 measured, 0 unexpected, 0 undecided" in out
    assert "report written" in out
    assert not (tmp_path / "audit.json").exists()  # a filtered audit writes to DIR/partial/
    document = json.loads((tmp_path / "partial" / "audit.json").read_text())
    assert [r["claim"] for r in document["results"]] == ["C2"]
    assert document["results"][0]["claimed_epsilon"]["value"] == 0.2
    assert document["results"][0]["holds"] is True
    markdown = (tmp_path / "partial" / "audit.md").read_text()
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


def test_check_sampler_enumerates_the_code_exactly(capsys):
    # rr_sampler keeps its bit when rng.random() < 3/4: exactly randomized response, eps* = ln 3.
    assert main(["check", "tests.cli_mechanisms:rr_sampler", "--sampler", *BITS, "--epsilon", "log(3)"]) == 0
    assert capsys.readouterr().out.startswith("HOLDS")
    assert main(["check", "tests.cli_mechanisms:rr_sampler", "--sampler", *BITS, "--epsilon", "1.0"]) == 1
    assert capsys.readouterr().out.startswith("VIOLATED")


def test_check_sampler_with_a_tail(capsys):
    # geometric_count: eps* = ln 4, with at most 1e-12 of each output's mass unexplored
    args = ["check", "tests.cli_mechanisms:geometric_count", "--sampler", *BITS, "--epsilon", "log(4)"]
    assert main([*args, "--tail", "1e-12", "--delta", "1e-9"]) == 0  # explored delta 0 + unexplored <= 1e-9
    assert main([*args, "--tail", "1e-12"]) == 4  # a pure claim with mass left is undecided
    out = " ".join(capsys.readouterr().out.split())  # the ways on, spelled as this command's flags (unwrapped)
    assert "Explore further: a smaller --tail" in out and "declare them: --outputs '[...]'" in out
    assert "from_sampler" not in out
    assert main([*args[:-1], "1.3", "--tail", "1e-12", "--delta", "1e-9"]) == 1  # below ln 4: refuted on explored paths
    assert main(args) == 2  # without --tail the geometric draw is refused
    assert "when told how much mass it may leave unexplored: --tail 1e-9." in capsys.readouterr().err


def test_check_sampler_with_a_tail_out_of_reach_names_the_tail_reached_as_flags(capsys):
    # branching_loop keeps 0.9 of the mass left per pass for 16x the runs (its docstring): 1e-9 is out
    # of reach, and the refusal names the tail its passes did reach, and the one a million runs would
    # (one more pass of 16 x 8,192 runs fits), with the flags to pass
    args = ["check", "tests.cli_mechanisms:branching_loop", "--sampler", *BITS, "--epsilon", "1", "--tail", "1e-9",
            "--max-paths", "1000000"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "cannot reach tail=1e-09 within max_paths=1,000,000 on dataset (0,)" in err
    assert re.search(r"; --tail 0\.\d+ stops after the same [\d,]+ runs; at this pace max_paths=1,000,000 reaches about "
                     r"--tail 0\.\d+\. Allow a larger tail \(--tail MASS\), raise --max-paths", err)
    assert err.rstrip().endswith("or check it statistically with --estimate.")


def test_check_sampler_that_draws_nothing(capsys):
    args = ["check", "tests.cli_mechanisms:parity_sampler", "--sampler", *BITS, "--epsilon", "1"]
    assert main(args) == 3  # hidden randomness or deterministic? no verdict
    assert "deterministic=True" in capsys.readouterr().err
    assert main([*args, "--deterministic"]) == 1  # declared: point masses on 0 and 1, eps* = inf


def test_check_estimate_is_violated_or_undecided_never_holds(capsys):
    # 20,000 samples per dataset; at eps = 0.5 < ln 3 the lower bound (about 1.0) exceeds the claim.
    args = ["check", "tests.cli_mechanisms:rr_sampler_numpy", "--estimate", *BITS, "--samples", "20000", "--seed", "1"]
    assert main([*args, "--epsilon", "0.5"]) == 1
    assert capsys.readouterr().out.startswith("VIOLATED")
    # at eps = 2 > ln 3 no sample size can violate: UNDECIDED, exit 4 (a sample cannot prove a claim)
    assert main([*args, "--epsilon", "2"]) == 4
    assert capsys.readouterr().out.startswith("UNDECIDED")


def test_check_estimate_time_budget_and_float_bits(capsys):
    import json

    args = ["check", "tests.cli_mechanisms:laplace_count_sampler", "--estimate", *BITS, "--seed", "0", "--epsilon", "1.5"]
    # claimed 1.5 > eps = 1: the float program's low bits refute it all the same (a float-structure witness)
    assert main([*args, "--samples", "20000", "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["witness"]["float_structure"] is True and document["time_budget"] is None
    assert document["value_epsilon_lower_bound"]["value"] <= 1.0  # the real-number mechanism: eps = 1
    # judged on real numbers only: no violation of 1.5 (UNDECIDED, exit 4), in rounds within a 1 s budget
    assert main([*args, "--time-budget", "1", "--no-float-bits", "--format", "json"]) == 4
    document = json.loads(capsys.readouterr().out)
    assert document["time_budget"] == 1.0 and len(document["rounds"]) >= 1
    assert document["witness"]["float_structure"] is False and document["epsilon_lower_bound"]["value"] <= 1.0


def test_check_estimate_refuses_exchangeability_flags(capsys):
    code = main(["check", "tests.cli_mechanisms:rr_sampler_numpy", "--estimate", "--black-box", *BITS, "--epsilon", "1"])
    assert code == 2
    assert "--estimate samples every ordered dataset" in capsys.readouterr().err


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
        ([RR, *BITS, "--epsilon", "nan"], "--epsilon nan: NaN is not a number, so it cannot be the claim's epsilon"),
        ([RR, *BITS, "--epsilon", "1e400"], "epsilon must be finite"),
        ([RR, *BITS, "--epsilon", "1", "--delta", "2"], "delta must be in [0, 1]"),
        (["tests.no_such_module:f", *BITS, "--epsilon", "1"], "no module 'tests.no_such_module' on Python's path"),
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


@pytest.mark.parametrize(("args", "message"), [(["C99"], "unknown claim"), (["C3", "--set", "bogus=1"], "claim C3 has no key 'bogus'"),
                                               (["C3", "--set", "n"], "KEY=VALUE")])
def test_claim_usage_errors(args, message, capsys):
    assert main(["claim", *args]) == 2
    assert message in capsys.readouterr().err


def test_claim_outside_preconditions_with_k_equal_n_does_not_crash(capsys):
    code = main(["claim", "C3", "--set", "epsilon=0.9", "--set", "n=3", "--outside-preconditions"])
    assert code in (0, 2)


# -- exit codes: 3 no verdict (the mechanism or the environment failed), 4 UNDECIDED ------------------

DIVIDE = "tests.cli_mechanisms:divide_by_first"  # raises ZeroDivisionError on (0,)


def test_help_documents_every_exit_code(capsys):
    for argv in (["--help"], ["check", "--help"], ["audit", "--help"], ["claim", "--help"], ["list", "--help"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 0
        out = capsys.readouterr().out
        assert "exit codes:" in out, argv
        for line in ("0  the claim holds", "1  VIOLATED", "2  usage error", "3  no verdict, the mechanism or the "
                     "environment failed", "4  UNDECIDED"):
            assert line in out, (argv, line)
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "4 undecided" in capsys.readouterr().out  # the subcommand list says it too


def test_check_mechanism_that_raises_exits_three_naming_the_dataset(capsys):
    assert main(["check", DIVIDE, *BITS, "--epsilon", "1"]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""  # no verdict printed
    err = captured.err
    assert err.startswith("dpverify: no verdict")
    assert err == (  # verify() wraps the mechanism's exception in a MechanismError naming the dataset
        "dpverify: no verdict: the mechanism failed: MechanismError: the mechanism divide_by_first raised "
        "ZeroDivisionError: Fraction(1, 0) -- on dataset (0,). No verdict was given; fix the mechanism (or choose "
        "records and n it accepts).\n"
    )


def _raise(error):
    def verify(*args, **kwargs):
        raise error

    return verify


@pytest.mark.parametrize(
    ("error", "shown"),
    [
        (MechanismError("the mechanism f raised ValueError: bad -- on dataset (1, 2).", dataset=(1, 2)),
         "the mechanism failed: MechanismError: the mechanism f raised ValueError: bad -- on dataset (1, 2)."),
        (NondeterministicMechanism("two different distributions for (0,)", dataset=(0,)),
         "the mechanism failed: NondeterministicMechanism: two different distributions for (0,)"),
        (EnvironmentFailure("the cluster could not start"),
         "the environment failed: EnvironmentFailure: the cluster could not start"),
        (PermissionError(13, "Permission denied", "/x/y"),
         "the environment failed: PermissionError: [Errno 13] Permission denied: '/x/y'"),
        (BrokenProcessPool("a child process terminated abruptly"),
         "the executor failed: BrokenProcessPool: a child process terminated abruptly"),
    ],
)
def test_failures_exit_three_with_one_paragraph(error, shown, monkeypatch, capsys):
    monkeypatch.setattr(front, "verify", _raise(error))
    assert main(["check", RR, *BITS, "--epsilon", "1"]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"dpverify: no verdict: {shown}\n"  # one paragraph, no traceback


def test_mechanism_error_message_gets_the_dataset_and_cause_when_it_lacks_them(monkeypatch, capsys):
    cause = ZeroDivisionError("division by zero")
    error = MechanismError("the mechanism raised", dataset=(1, 2), original=cause)
    error.__cause__ = cause
    monkeypatch.setattr(front, "verify", _raise(error))
    assert main(["check", RR, *BITS, "--epsilon", "1"]) == 3
    assert capsys.readouterr().err == (
        "dpverify: no verdict: the mechanism failed: MechanismError: the mechanism raised (dataset: (1, 2); "
        "original exception: ZeroDivisionError: division by zero)\n"
    )


def test_an_unexpected_exception_exits_three_with_its_traceback(monkeypatch, capsys):
    monkeypatch.setattr(front, "verify", _raise(KeyError("oops")))
    assert main(["check", RR, *BITS, "--epsilon", "1"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert "dpverify: no verdict: unexpected builtins.KeyError: 'oops'." in err
    assert "bug in dpverify" in err


def test_enumeration_too_large_is_a_usage_error(monkeypatch, capsys):
    monkeypatch.setattr(front, "verify", _raise(EnumerationTooLarge("10 pairs > --max-pairs 5")))
    assert main(["check", RR, *BITS, "--epsilon", "1"]) == 2
    assert capsys.readouterr().err == "dpverify: error: 10 pairs > --max-pairs 5\n"


def _undecided_result(undecided_pairs):
    real = front.verify(cli_mechanisms.randomized_response, records=[0, 1], n=1, epsilon=1.1)
    return dataclasses.replace(real, holds=False, verdict=Verdict.UNDECIDED, undecided=undecided_pairs)


@pytest.mark.parametrize("pairs", [0, 2])
def test_check_undecided_exits_four_and_says_why(pairs, monkeypatch, capsys):
    result = _undecided_result(pairs)
    monkeypatch.setattr(front, "verify", lambda *args, **kwargs: result)
    assert main(["check", RR, *BITS, "--epsilon", "1.1"]) == 4
    out = capsys.readouterr().out
    assert out.startswith("UNDECIDED: claimed (eps=1.1")
    assert "UNDECIDED (exit 4): the claim was neither proved nor refuted (no violation was found)" in out
    assert "VIOLATED" not in out
    if pairs:
        assert "2 pair(s) could not be decided exactly" in out and "exact_distribution(dataset)" in out


def test_check_unproved_exchangeability_exits_four_with_the_command_line_fix(capsys):
    # 8 records, n = 9: 8^9 orderings are too many to prove the declaration on, so it is only tested.
    args = ["check", "tests.cli_mechanisms:constant", "--domain-size", "4", "--n", "9", "--epsilon", "0", "--seed", "7"]
    assert main([*args, "--exchangeable"]) == 4
    out = capsys.readouterr().out
    assert out.startswith("UNDECIDED: claimed (eps=0.0, delta=0.0), measured eps*=0")
    assert "not proved: the output ignores the order of the records" in out and "seed 7" in out
    assert "UNDECIDED (exit 4): the claim was neither proved nor refuted (no violation was found)" in out
    assert "On the command line: --assume-exchangeable accepts the declaration" in out
    assert main([*args, "--assume-exchangeable"]) == 0
    assert capsys.readouterr().out.startswith("HOLDS, assuming the output ignores the order of the records")


def test_exchangeability_flags_exclude_each_other(capsys):
    with pytest.raises(SystemExit) as info:
        main(["check", RR, *BITS, "--epsilon", "1", "--exchangeable", "--black-box"])
    assert info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def _measurement(verdict):
    return Measurement(1.0, 0.0, 1.0, 0.0, verdict)


def _case(claim, mechanism, run, **kwargs):
    return AuditCase(claim, mechanism, {"n": 1}, run, **kwargs)


def _only(monkeypatch, *cases):
    monkeypatch.setattr(registry, "audit_cases", lambda: list(cases))


def test_claim_undecided_exits_four(monkeypatch, capsys):
    monkeypatch.setattr(registry, "claim_measurements", lambda: {"CX": lambda **kw: _measurement(Verdict.UNDECIDED)})
    assert main(["claim", "CX", "--set", "n=2"]) == 4
    out = capsys.readouterr().out
    assert "UNDECIDED" in out and "neither proved nor refuted" in out


def test_audit_exit_codes_for_undecided_and_violated_rows(monkeypatch, capsys):
    undecided = _case("CU", "u", lambda: _measurement(Verdict.UNDECIDED))
    holds = _case("CH", "h", lambda: _measurement(Verdict.HOLDS))
    violated = _case("CV", "v", lambda: _measurement(Verdict.VIOLATED))
    _only(monkeypatch, holds, undecided)
    assert main(["audit", "--quiet"]) == 4
    out = capsys.readouterr().out
    assert "1 row(s) UNDECIDED (neither proved nor refuted): CU/u\n\nCU/u (" in out  # then why, for the log
    assert "not as expected:" not in out
    _only(monkeypatch, holds, undecided, violated)
    assert main(["audit", "--quiet"]) == 1  # a row not as expected for another reason wins
    out = capsys.readouterr().out
    assert "1 row(s) not as expected: CV/v" in out and "CU/u" in out
    _only(monkeypatch, holds)
    assert main(["audit", "--quiet"]) == 0


def test_audit_stops_at_a_row_whose_mechanism_raises_and_names_it(monkeypatch, capsys):
    def crashing():
        front.verify(cli_mechanisms.divide_by_first, records=[0, 1], n=1, epsilon=1)
        raise AssertionError("not reached")

    ran = []
    later = _case("CL", "later", lambda: ran.append(1) or _measurement(Verdict.HOLDS))
    _only(monkeypatch, _case("CH", "h", lambda: _measurement(Verdict.HOLDS)), _case("CZ", "divide", crashing), later)
    assert main(["audit", "--quiet"]) == 3
    captured = capsys.readouterr()
    assert captured.out == "" and not ran  # stopped at the row: no table, no later row
    assert captured.err.startswith(
        "dpverify: no verdict in audit row CZ/divide (n=1): the mechanism failed: MechanismError: the mechanism "
        "divide_by_first raised ZeroDivisionError: Fraction(1, 0) -- on dataset (0,)."
    )
    assert "Traceback" not in captured.err


def test_audit_row_with_an_unexpected_exception_exits_three_with_traceback(monkeypatch, capsys):
    def broken():
        raise RuntimeError("boom")

    _only(monkeypatch, _case("CB", "broken", broken))
    assert main(["audit", "--quiet", "--format", "json"]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Traceback (most recent call last)" in captured.err and 'raise RuntimeError("boom")' in captured.err
    assert "dpverify: no verdict in audit row CB/broken (n=1): unexpected builtins.RuntimeError: boom." in captured.err


def test_audit_row_with_an_invalid_argument_is_a_usage_error_naming_the_row(monkeypatch, capsys):
    def invalid():
        raise InvalidArgument("n must be >= 1, got 0")

    _only(monkeypatch, _case("CI", "invalid", invalid))
    assert main(["audit", "--quiet"]) == 2
    assert capsys.readouterr().err == "dpverify: error in audit row CI/invalid (n=1): n must be >= 1, got 0\n"


# -- --output is checked before any work ------------------------------------------------------------


@pytest.fixture
def counted_audit(monkeypatch):
    """One cheap audit row that counts its runs."""
    runs = []
    _only(monkeypatch, _case("CH", "h", lambda: runs.append(1) or _measurement(Verdict.HOLDS)))
    return runs


def test_output_that_is_a_file_is_a_usage_error_before_any_work(counted_audit, tmp_path, capsys):
    target = tmp_path / "report.txt"
    target.write_text("keep me")
    assert main(["audit", "--quiet", "--output", str(target)]) == 2
    assert capsys.readouterr().err == (
        f"dpverify: error: --output {str(target)!r} exists and is not a directory; give a directory for "
        "audit.json, audit.md and audit.html (it is created if its parent exists), e.g. --output reports.\n"
    )
    assert counted_audit == [] and target.read_text() == "keep me"


def test_output_under_a_missing_parent_is_a_usage_error_and_not_created(counted_audit, tmp_path, capsys):
    target = tmp_path / "missing" / "reports"
    assert main(["audit", "--quiet", "--output", str(target)]) == 2
    err = capsys.readouterr().err
    assert f"its parent directory {tmp_path / 'missing'} does not exist" in err
    assert f"mkdir -p {tmp_path / 'missing'}" in err
    assert counted_audit == [] and not (tmp_path / "missing").exists()


def test_output_directory_is_created_when_its_parent_exists(counted_audit, tmp_path, capsys):
    target = tmp_path / "new"
    assert main(["audit", "--quiet", "--output", str(target)]) == 0
    assert counted_audit == [1]
    assert sorted(p.name for p in target.iterdir()) == ["audit.html", "audit.json", "audit.md"]  # no probe left
    assert "report written" in capsys.readouterr().out


def test_output_that_cannot_be_written_is_a_usage_error(counted_audit, tmp_path, monkeypatch, capsys):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    assert main(["audit", "--quiet", "--output", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"dpverify: error: --output {str(tmp_path)!r}: cannot write in {tmp_path} (Permission denied); choose a "
        "directory you can write to, or fix its permissions.\n"
    )
    assert counted_audit == []


@pytest.fixture
def read_only_directory(tmp_path):
    """A directory this user cannot create files in: one chmod'ed to r-x, or, where that does not stop the
    user (root, as CI runs, writes anyway), sysfs's /sys, where the kernel refuses every new file
    (PermissionError even for root)."""
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        try:
            (locked / "probe").touch()
        except PermissionError:
            yield locked
            return
        (locked / "probe").unlink()
        sysfs = Path("/sys")
        with pytest.raises(PermissionError):  # not a skip: a machine where neither refuses fails here
            (sysfs / "dpverify-write-probe").touch()
        yield sysfs
    finally:
        locked.chmod(0o700)


def test_output_in_a_read_only_directory_is_a_usage_error(counted_audit, read_only_directory, capsys):
    # --output names a new directory under it: the write test runs in the existing parent and fails there
    target = read_only_directory / "reports"
    assert main(["audit", "--quiet", "--output", str(target)]) == 2
    assert capsys.readouterr().err == (
        f"dpverify: error: --output {str(target)!r}: cannot write in {read_only_directory} (Permission denied); "
        "choose a directory you can write to, or fix its permissions.\n"
    )
    assert counted_audit == [] and not target.exists()


def test_writing_the_report_failing_after_the_audit_exits_three(counted_audit, tmp_path, monkeypatch, capsys):
    def full(rows, directory, **_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(report, "write_reports", full)
    assert main(["audit", "--quiet", "--output", str(tmp_path)]) == 3
    assert capsys.readouterr().err == (
        "dpverify: no verdict: the environment failed: OSError: [Errno 28] No space left on device\n"
    )


def test_errors_wrap_at_the_terminal_width_and_stay_one_line_in_a_pipe(monkeypatch, capsys):
    import io
    import shutil

    from dpverify.integrations import cli

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    message = "dpverify: error: " + " ".join(f"word{i}" for i in range(40))  # 17 + 40 words: 277 characters
    terminal = Terminal()
    monkeypatch.setattr(cli.sys, "stderr", terminal)
    monkeypatch.setattr(shutil, "get_terminal_size", lambda fallback=(100, 24): shutil.os.terminal_size((60, 24)))
    cli._say(message)
    lines = terminal.getvalue().splitlines()
    assert len(lines) > 1 and all(len(line) <= 60 for line in lines)
    assert " ".join(line.strip() for line in lines) == message  # nothing lost, no word cut
    monkeypatch.undo()
    cli._say(message)  # capsys's stderr is not a terminal: one line, as written
    assert capsys.readouterr().err == message + "\n"


# -- the command line's conventions (issue 36) -------------------------------------------------------


def test_abbreviated_options_are_refused_with_the_commands_usage_and_the_nearest_option(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["check", "tests.cli_mechanisms:rr", *BITS, "--epsilon", "1", "--delt", "0"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert "usage: dpverify check" in err  # the subcommand's usage, not the top level's
    assert "dpverify check: error: unrecognized arguments: --delt 0 (did you mean --delta?)" in err
    with pytest.raises(SystemExit):
        main(["audit", "--recor"])
    assert "usage: dpverify audit" in capsys.readouterr().err


def test_estimate_is_a_command_of_its_own(capsys):
    # dpverify estimate ... is check --estimate ...: a statistical bound (UNDECIDED: rr is ln 3-DP, claimed 1.2)
    code = main(["estimate", "tests.cli_mechanisms:rr_sampler", *BITS, "--epsilon", "1.2", "--samples", "2000",
                 "--seed", "0"])
    out = capsys.readouterr().out
    assert code == 4 and out.startswith("UNDECIDED: claimed (eps=1.2, delta=0.0), eps >= ")


def test_format_is_text_or_json_on_every_command(capsys):
    for command in (["list"], ["claim", "C1"]):
        assert main([*command, "--format", "text"]) == 0
        assert main([*command, "--format", "table"]) == 0  # the old name, still read
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["list", "--format", "xml"])
    assert "invalid choice: 'xml' (choose from 'text', 'json')" in capsys.readouterr().err
