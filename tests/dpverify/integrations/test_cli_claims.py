"""``dpverify claim`` agrees with ``dpverify list``: every listed id runs, ``--set`` is checked against
the claim's keys (dpverify.integrations.claim_command); the two common mistakes of ``check`` get their
fix; NaN is named; a filtered audit never writes over the reference report."""

from __future__ import annotations

import json
import math
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

import dpverify
import dpverify.integrations.audit as registry
from dpverify import InvalidArgument, Verdict
from dpverify.integrations.audit import AuditCase, Measurement
from dpverify.integrations.claim_command import InstanceKey, detail_lines, instance_keys, read_settings
from dpverify.integrations.cli import main

ROOT = Path(__file__).resolve().parents[3]
BITS = ["--records", "[0, 1]", "--n", "1"]


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


# -- every id of `list` runs in `claim` -------------------------------------------------------------


def test_every_claim_id_list_prints_runs_on_its_default_instance(capsys):
    assert main(["list", "--format", "json"]) == 0
    listed = _json(capsys)
    ids = sorted({case["claim"] for case in listed["cases"]})
    assert set(ids) == set(listed["claims"])  # every listed id has a measurement
    assert {"C1", "RR", "GAUSS", "BENCH", "C8a", "C8b"} <= set(ids)  # the ones `claim` refused before
    for claim in ids:
        assert main(["claim", claim, "--format", "json"]) == 0, claim
        result = _json(capsys)["result"]
        expected = "MEASURED" if claim in ("C8a", "C8b") else "HOLDS"  # the baselines assert no claim
        assert (result["claim"], result["verdict"]) == (claim, expected)


def test_claim_ids_are_case_insensitive_and_baselines_match_the_audit(capsys):
    assert main(["claim", "c8a", "--format", "json"]) == 0
    result = _json(capsys)["result"]
    # the audit's C8a row (BNS relabeling on the default C3 instance): eps* 0.1359, measured only
    assert result["claim"] == "C8a" and result["verdict"] == "MEASURED"
    assert result["epsilon_star"]["value"] == pytest.approx(0.1359, abs=5e-5)


def test_list_says_which_keys_each_claim_takes(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "`dpverify claim ID` runs a claim on its default instance; `--set KEY=VALUE` changes it." in out
    lines = out.splitlines()
    assert "  RR     p: number = 3/4, n: int = 1" in lines
    assert "  C1     domain_size: int = 3, n: int = 4, epsilon: number = 1.0, mutant: text or None = None" in lines
    assert "  C2     concept: text = 'thresholds', domain_size: int = 3, n: int = 6, epsilon: number = 0.2" in lines
    assert max(len(line) for line in lines[lines.index("  RR     p: number = 3/4, n: int = 1") - 5:]) <= 100


def test_randomized_response_on_an_instance_of_yours_holds_at_its_closed_form(capsys):
    # p = 7/8 on one of n = 3 records: e^eps = 7, eps* = ln(1 + (7 - 1)/3) = ln 3, checked at exactly ln 3
    assert main(["claim", "RR", "--set", "p=7/8", "--set", "n=3", "--format", "json"]) == 0
    result = _json(capsys)["result"]
    assert result["verdict"] == "HOLDS"
    assert result["epsilon_star"]["value"] == pytest.approx(math.log(3), abs=1e-12)
    assert main(["claim", "RR", "--set", "p=1"]) == 2
    assert "p must be in [1/2, 1) (p = 1 is not private: eps* = inf), got p=1." in capsys.readouterr().err


def test_the_exponential_mechanism_mutant_is_violated_with_a_decimal_witness(capsys):
    assert main(["claim", "C1", "--set", "mutant=without_half"]) == 1
    out = capsys.readouterr().out
    assert "P[M(D) in S] = 0.453550896839" in out and "check: 0.453550896839 > e^eps" in out
    assert "exact:" not in out  # the masses are sums of floats: their decimals say it all


# -- --set is checked against the claim's keys -----------------------------------------------------

C3_KEYS = ("concept: text = 'thresholds', domain_size: int = 3, n: int = 6, epsilon: number = 0.2, "
           "learner: text = 'exponential', learner_epsilon: number = 1.0, learner_delta: number = 0.0, "
           "k: int or None = None, score: text = 'agnostic', proof_steps: bool = True, executor: any = None")


@pytest.mark.parametrize(("args", "message"), [
    (["--set", "foo=1"], f"--set foo=1: claim C3 has no key 'foo'; the keys of C3: {C3_KEYS}."),
    (["--set", "n=abc"], f"--set n=abc: n takes a whole number (e.g. 4), got 'abc'; the keys of C3: {C3_KEYS}."),
    (["--set", "n=2.5"], "--set n=2.5: n takes a whole number (e.g. 4), got '2.5'"),
    (["--set", "epsilon=nan"], "--set epsilon=nan: epsilon takes a number (e.g. 0.2 or 1/3), got 'nan' (NaN is not a "
                               "number)"),
    (["--set", "proof_steps=yes"], "--set proof_steps=yes: proof_steps takes True or False, got 'yes'"),
    (["--set", "k=x"], "--set k=x: k takes a whole number (e.g. 4) or None, got 'x'"),
    (["--set", "n"], "--set takes KEY=VALUE, got --set 'n'"),
    (["--set", "n=6", "--set", "n=7"], "--set n is given twice"),
    (["--set", "outside_preconditions=True"], "use --outside-preconditions"),
])
def test_set_errors_list_the_keys_and_their_kinds(args, message, capsys):
    assert main(["claim", "C3", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_unknown_and_flag_errors(capsys):
    assert main(["claim", "C99"]) == 2
    assert "unknown claim 'C99'; choose one of BENCH, C1, C2, C3" in capsys.readouterr().err
    assert main(["claim", "C2", "--outside-preconditions"]) == 2
    assert "claim C2 has no preconditions to step outside of: drop --outside-preconditions." in capsys.readouterr().err


def test_a_listed_claim_without_a_measurement_says_how_to_run_it(monkeypatch, capsys):
    row = AuditCase("ROWS", "m", {"n": 1}, lambda: Measurement(1.0, 0.0, 1.0, 0.0, Verdict.HOLDS))
    monkeypatch.setattr(registry, "audit_cases", lambda: [row])
    monkeypatch.setattr(registry, "claim_measurements", lambda: {"C1": lambda *, n=1: None})
    assert main(["claim", "rows"]) == 2
    assert ("claim 'ROWS' is audited on its own rows only and takes no instance of yours: run them with "
            "`dpverify audit --claim ROWS`") in capsys.readouterr().err
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "  C1     n: number = 1" in out  # annotated nothing: its default says
    assert "  ROWS: audited on their own rows only (`dpverify audit --claim ID`), no instance of yours." in out


def test_keys_read_from_annotations_and_defaults():
    def measure(*, n: int = 3, epsilon: float | Fraction = 0.2, concept: str = "t", k: int | None = None,
                mixture: bool = False, alpha=Fraction(1, 4), anything=None, required: int,
                outside_preconditions: bool = False) -> None:
        """A measurement's signature (outside_preconditions is a flag, not a key)."""

    keys = {key.name: key for key in instance_keys(measure)}
    assert list(keys) == ["n", "epsilon", "concept", "k", "mixture", "alpha", "anything", "required"]
    assert [(key.kind, key.optional) for key in keys.values()] == [
        ("int", False), ("number", False), ("text", False), ("int", True), ("bool", False), ("number", False),
        ("any", True), ("int", False)]
    assert keys["required"].describe() == "required: int, required"
    assert read_settings("X", measure, ["required=2", "epsilon=1/3", "k=None", "concept=1", "mixture=true"]) == {
        "required": 2, "epsilon": Fraction(1, 3), "k": None, "concept": "1", "mixture": True}
    with pytest.raises(InvalidArgument, match=r"claim X needs --set required=\.\.\."):
        read_settings("X", measure, [])
    assert instance_keys(lambda **anything: None) is None  # any key passes, unchecked
    assert read_settings("Y", lambda **anything: None, ["a=1/3", "b=x"]) == {"a": Fraction(1, 3), "b": "x"}
    assert InstanceKey("x", "number").read("1e-5") == 1e-5


# -- details as people read them -------------------------------------------------------------------


def test_details_print_the_privacy_profile_as_a_table_and_no_raw_dict():
    details = {
        "pairs": 81,
        "worst_pair": ((1, 0), (2, 0)),
        "distances": [Fraction(1, 3), 1.0],
        "bounds": {"low": Fraction(1, 8), "high": 0.25},
        "privacy_profile": [{"epsilon": 0.0, "delta": 0.036021124900562196}, {"epsilon": 0.1161697650349893,
                                                                               "delta": 0.0}],
    }
    assert detail_lines(details) == [
        "pairs: 81",
        "worst_pair: ((1, 0), (2, 0))",
        "distances: [1/3, 1.0]",
        "bounds:",
        "  low: 1/8",
        "  high: 0.25",
        "privacy_profile:",  # floats to 10 significant digits; columns as wide as their widest cell, 2 apart
        "  epsilon      delta",
        "  0            0.0360211249",
        "  0.116169765  0",
    ]


def test_claim_output_has_no_raw_dict(capsys):
    assert main(["claim", "C3"]) == 0  # C3 measures a privacy profile: delta at nine values of eps
    out = capsys.readouterr().out
    assert "{'" not in out and "[{" not in out
    profile = out[out.index("privacy_profile:\n"):].splitlines()
    assert profile[1].split() == ["epsilon", "delta"] and len(profile) == 2 + 9


# -- the two common mistakes of `check`, and NaN ---------------------------------------------------


def test_a_sampler_without_sampler_is_told_to_add_it(capsys):
    assert main(["check", "tests.cli_mechanisms:rr_sampler", *BITS, "--epsilon", "1"]) == 2
    assert capsys.readouterr().err == (
        "dpverify: error: tests.cli_mechanisms:rr_sampler requires 2 arguments (dataset, rng) where a mechanism "
        "takes the dataset alone: it looks like a sampler (dataset, rng); add --sampler (every path of its random "
        "choices enumerated exactly), or --estimate (run on a real random generator).\n")
    assert main(["check", "tests.cli_mechanisms:rr_sampler", "--sampler", *BITS, "--epsilon", "1.1"]) == 0


def test_a_mechanism_taking_epsilon_is_told_to_bind_it_not_to_add_sampler(capsys, tmp_path, monkeypatch):
    # issue 36: the advice "add --sampler" looped (--sampler then said "a mapping: pass it to verify directly")
    (tmp_path / "user_mods.py").write_text(
        "def noisy(dataset, epsilon):\n"
        "    p = 0.75 if sum(dataset) else 0.25\n"
        "    return {1: p, 0: 1 - p}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["check", "user_mods:noisy", *BITS, "--epsilon", "1.1"]) == 2
    err = capsys.readouterr().err
    assert "epsilon has no value; give it a value: a default in the definition (def noisy(dataset, epsilon=1.0)), " \
           "or functools.partial(noisy, epsilon=1.0) assigned to a name, or on the command line --set epsilon=1.0." in err
    assert "--sampler" not in err
    # following the advice: ln 3 = 1.0986 <= 1.1 holds (exit 0); a key it does not take is exit 2
    assert main(["check", "user_mods:noisy", *BITS, "--epsilon", "1.1", "--set", "epsilon=1.0"]) == 0
    assert main(["check", "user_mods:noisy", *BITS, "--epsilon", "1.1", "--set", "eps=1.0"]) == 2
    assert "--set eps: got an unexpected keyword argument 'eps'" in capsys.readouterr().err


def test_a_mechanism_returning_one_sample_is_pointed_to_from_sampler():
    with pytest.raises(InvalidArgument) as info:
        dpverify.verify(lambda dataset: dataset[0], records=[0, 1], n=1, epsilon=1)
    assert str(info.value).endswith(
        "it returned int; if it returns one sample, make it a sampler (dataset, rng) and wrap it with from_sampler "
        "(dpverify check: --sampler).")


@pytest.mark.parametrize(("args", "message"), [
    (["--epsilon", "nan"], "--epsilon nan: NaN is not a number, so it cannot be the claim's epsilon; give a number "
                           "such as 1, 0.5 or log(3)."),
    (["--epsilon", "1", "--delta", "NaN"], "--delta NaN: NaN is not a number, so it cannot be the claim's delta; give "
                                           "a number in [0, 1] such as 0 or 1e-5."),
])
def test_nan_is_named_as_nan(args, message, capsys):
    assert main(["check", "tests.cli_mechanisms:randomized_response", *BITS, *args]) == 2
    assert capsys.readouterr().err == f"dpverify: error: {message}\n"


def test_nan_privacy_parameters_in_python():
    mechanism = lambda dataset: {0: 1}  # noqa: E731
    with pytest.raises(InvalidArgument, match="got epsilon=nan; NaN is not a number a privacy claim can state"):
        dpverify.verify(mechanism, records=[0, 1], n=1, epsilon=math.nan)
    with pytest.raises(InvalidArgument, match=r"delta must be a number in \[0, 1\], got delta=nan; NaN is not"):
        dpverify.verify(mechanism, records=[0, 1], n=1, epsilon=1, delta=math.nan)


# -- a filtered audit never writes over the reference report ---------------------------------------


def test_a_filtered_audit_leaves_the_reference_report_untouched(tmp_path, capsys):
    reports = tmp_path / "reports"
    shutil.copytree(ROOT / "reports", reports)
    before = {path.name: path.read_bytes() for path in reports.glob("audit.*")}
    assert set(before) == {"audit.json", "audit.md", "audit.html"}
    assert main(["audit", "--claim", "RR", "--output", str(reports), "--quiet", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert {path.name: path.read_bytes() for path in reports.glob("audit.*")} == before
    partial = json.loads((reports / "partial" / "audit.json").read_text())
    assert [(row["claim"], row["mechanism"]) for row in partial["results"]] == [
        ("RR", "randomized_response"), ("RR", "subsampled_randomized_response")]
    assert f"a partial audit (--claim RR): its report is in {reports / 'partial'}, never over the full audit's " \
           f"report in {reports}" in out


def test_the_partial_directory_is_ignored_by_git_and_documented(capsys):
    assert "reports/partial/" in (ROOT / ".gitignore").read_text().splitlines()
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    assert "DIR/partial/" in " ".join(capsys.readouterr().out.split())
    assert 'AUDIT_FLAGS="--claim RR"`) writes to\n`reports/partial/`, never over the reference report' in \
        (ROOT / "README.md").read_text()


def test_a_file_path_names_the_mechanism_from_any_directory(capsys, tmp_path, monkeypatch):
    # issue 36: `check path/to/mods.py:fn` said "No module named 'mods.py'"
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "file_mods.py").write_text(
        "from fractions import Fraction\n\n"
        "def rr(dataset):  # randomized response: eps* = ln 3 = 1.0986\n"
        "    return {dataset[0]: Fraction(3, 4), 1 - dataset[0]: Fraction(1, 4)}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["check", f"{folder / 'file_mods.py'}:rr", *BITS, "--epsilon", "1.1"]) == 0
    assert "measured eps*=1.09861" in capsys.readouterr().out
    assert main(["check", "elsewhere/file_mods.py:rr", *BITS, "--epsilon", "1"]) == 1  # relative, and VIOLATED
    capsys.readouterr()
    # the module form from another directory names both ways out
    assert main(["check", "file_mods_absent:rr", *BITS, "--epsilon", "1"]) == 2
    err = capsys.readouterr().err
    assert f"no module 'file_mods_absent' on Python's path (the current directory, {tmp_path}, and PYTHONPATH); give " \
           "its file instead, dpverify check path/to/file_mods_absent.py:rr" in err
    assert main(["check", "elsewhere/missing.py:rr", *BITS, "--epsilon", "1"]) == 2
    assert "no file 'elsewhere/missing.py'" in capsys.readouterr().err


def test_a_sampler_drawing_from_numpys_global_generator_is_told_the_patch_flag_first(capsys, tmp_path, monkeypatch):
    # issue 36: the message was about 1,000 characters and named only the Python spelling, patch=
    (tmp_path / "global_mods.py").write_text(
        "import numpy as np\n\n"
        "def noisy_bit(dataset, rng):\n"
        "    return int(dataset[0] + np.random.laplace(0.0, 1.0) > 0.5)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["check", "global_mods:noisy_bit", "--sampler", *BITS, "--epsilon", "1"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("dpverify: no verdict: the sampler draws from a global random generator dpverify cannot "
                          "see. Fix: add --patch numpy.random")
    assert len(err) < 600 and "patch=[" not in err
    assert main(["check", "global_mods:noisy_bit", "--estimate", "--samples", "2000", *BITS, "--epsilon", "1"]) == 3
    assert "Fix: add --patch numpy.random" in capsys.readouterr().err
    # following it: decided (traced Laplace noise, in real arithmetic)
    assert main(["check", "global_mods:noisy_bit", "--sampler", "--patch", "numpy.random", *BITS, "--epsilon", "1"]) == 0
