"""The JSON contract (dpverify.integrations.contract, docs/json.md): the schema shipped in the
package, the encodings (figures, values, witnesses), every ``--format json`` document validated
against it, documents that break it refused, and reports that stay byte-identical on unchanged code.
"""

from __future__ import annotations

import copy
import json
import math
from fractions import Fraction
from pathlib import Path

import jsonschema
import numpy as np
import pytest
import sympy

import dpverify.integrations.audit as registry
from dpverify import Verdict, verify
from dpverify.integrations import contract
from dpverify.integrations.audit import AuditCase, Expect, Measurement, run_audit
from dpverify.integrations.cli import main
from dpverify.integrations.report import audit_document, write_reports
from tests import cli_mechanisms

ROOT = Path(__file__).resolve().parents[3]
INFINITE = {"value": None, "kind": "+inf", "exact": None}


def _invalid(document, name=None):
    with pytest.raises(jsonschema.ValidationError):
        contract.validate(document, name)


# -- the schema -----------------------------------------------------------------------------------


def test_the_schema_is_a_valid_draft_2020_12_schema_of_this_version():
    whole = contract.schema()
    jsonschema.Draft202012Validator.check_schema(whole)
    assert whole["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert whole["$defs"]["schema_version"]["const"] == contract.SCHEMA_VERSION == "1.4"
    for name in contract.DOCUMENTS:
        one = contract.schema(name)
        jsonschema.Draft202012Validator.check_schema(one)
        assert one["$ref"] == f"#/$defs/{name}" and "oneOf" not in one


def test_schema_returns_a_fresh_copy_and_names_an_unknown_document():
    contract.schema("audit")["$defs"].clear()
    assert "figure" in contract.schema("audit")["$defs"]
    with pytest.raises(ValueError, match=r"document must be one of audit, check, claim, list, baseline .*got document='report'"):
        contract.schema("report")


# -- encodings ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.25, {"value": 0.25, "kind": "finite", "exact": None}),
        (Fraction(3, 4), {"value": 0.75, "kind": "finite", "exact": "3/4"}),
        (1, {"value": 1.0, "kind": "finite", "exact": "1"}),
        (np.int64(2), {"value": 2.0, "kind": "finite", "exact": "2"}),
        # ln 3 = 1.0986122886681098 (float(sympy.log(3)))
        (sympy.log(3), {"value": 1.0986122886681098, "kind": "finite", "exact": "log(3)"}),
        (math.inf, INFINITE),
        (-math.inf, {"value": None, "kind": "-inf", "exact": None}),
        (sympy.oo, INFINITE),
        (math.nan, {"value": None, "kind": "not_computed", "exact": None}),
    ],
)
def test_figures_have_one_type_per_key(value, expected):
    assert contract.figure(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (((0, 1), (2, 0)), [[0, 1], [2, 0]]),
        ((Fraction(15, 16), (0, 0)), ["15/16", [0, 0]]),
        (frozenset({"b", "a", "c"}), ["a", "b", "c"]),
        (frozenset({2, (1, 0)}), [[1, 0], 2]),  # sorted by repr: "(1, 0)" < "2"
        ({1: 0.5, "x": None, "y": True}, {"1": 0.5, "x": None, "y": True}),
        ([math.inf, -math.inf, math.nan], ["inf", "-inf", "nan"]),
        (np.array([1, 2]), [1, 2]),
        (np.float64(0.5), 0.5),
        (Verdict.HOLDS, "<Verdict.HOLDS: 'HOLDS'>"),
    ],
)
def test_values_are_plain_json(value, expected):
    encoded = contract.encode(value)
    assert encoded == expected
    assert json.loads(json.dumps(encoded, allow_nan=False)) == expected


def test_the_witness_of_randomized_response_at_epsilon_one():
    # P = 3/4 on output 0 from (0,), Q = 1/4 from (1,): 3/4 > e^1 * 1/4 = 0.6796 (ln 3 > 1).
    result = verify(cli_mechanisms.randomized_response, records=[0, 1], n=1, epsilon=1.0, seed=0)
    found = contract.witness(result.witness)
    assert found == {
        "part": None,
        "dataset": [0],
        "neighbor": [1],
        "event": [0],
        "p": {"value": 0.75, "kind": "finite", "exact": "3/4"},
        "q": {"value": 0.25, "kind": "finite", "exact": "1/4"},
        "epsilon": {"value": 1.0, "kind": "finite", "exact": None},
        "delta": {"value": 0.0, "kind": "finite", "exact": "0"},  # a pure claim: delta is the integer 0
        "within_rounding": False,
        "allowance": 0.0,
        "text": str(result.witness),
    }
    assert contract.witness(result.witness, "query x = 2")["text"] == f"query x = 2\n{result.witness}"


def test_dumps_is_strict_json_with_plain_arrays_and_figures_on_one_line():
    document = {"figure": contract.figure(Fraction(1, 3)), "dataset": [[0, 1]] * 30, "rows": [{"a": "x" * 90}]}
    text = contract.dumps(document)
    assert json.loads(text) == document
    lines = text.splitlines()
    assert '  "figure": {"value": 0.3333333333333333, "kind": "finite", "exact": "1/3"},' in lines
    assert '  "dataset": [' + ", ".join(["[0, 1]"] * 30) + "]," in lines  # a dataset of 30 records: one line
    assert lines[-5:] == ["    {", '      "a": "' + "x" * 90 + '"', "    }", "  ]", "}"]  # too long: indented
    with pytest.raises(ValueError):
        contract.dumps({"epsilon": math.inf})  # never the invalid token Infinity


# -- audit rows -----------------------------------------------------------------------------------


def _row(measurement, expect=Expect.HOLDS, parent=None, seconds=0.5):
    case = AuditCase("CX", "m", {"n": 2, "epsilon": Fraction(1, 3)}, lambda: measurement, expect=expect, parent=parent)
    (row,) = run_audit([case])
    return row.__class__(row.case, row.measurement, seconds)


def test_a_measured_row_says_measured_not_holds():
    row = _row(Measurement(0.1, 0.0, 0.2, 0.0, Verdict.HOLDS), expect=Expect.MEASURED)
    data = row.to_json()
    assert data["verdict"] == "MEASURED" and data["holds"] is None and data["as_expected"] is True
    assert data["expect"] == "measured" and data["measured_only"] is True
    assert data["parameters"] == {"n": 2, "epsilon": "1/3"}
    # no verdict at all (a lemma's preconditions unmet) reads the same
    data = _row(Measurement(0.1, 0.0, 0.2, 0.0, None)).to_json()
    assert data["verdict"] == "MEASURED" and data["holds"] is None and data["as_expected"] is True


def test_an_infinite_epsilon_row_keeps_its_types():
    # eps* = inf against a pure claim of 1: slack = 1 - inf = -inf
    data = _row(Measurement(math.inf, 0.5, 1.0, 0.0, Verdict.VIOLATED), expect=Expect.VIOLATED, parent="m0").to_json()
    assert data["epsilon_star"] == INFINITE
    assert data["slack"] == {"value": None, "kind": "-inf", "exact": None}
    assert data["delta_star"] == {"value": 0.5, "kind": "finite", "exact": None}
    assert data["verdict"] == "VIOLATED" and data["holds"] is False and data["parent"] == "m0"
    contract.validate(json.loads(contract.dumps({**contract.header("audit"), "all_as_expected": True,
                                                 "results": [data]})), "audit")


def test_details_are_plain_values_and_a_text_only_witness_stays_out_of_the_json():
    measurement = Measurement(0.1, 0.0, 0.2, 0.0, Verdict.HOLDS, "D = (0,)",
                              {"gap": -math.inf, "pair": ((0, 1), (1, 1)), "share": Fraction(1, 4)})
    data = _row(measurement).to_json()
    assert data["details"] == {"gap": "-inf", "pair": [[0, 1], [1, 1]], "share": "1/4"}
    assert data["witness"] is None


def test_measurement_refuses_a_witness_that_is_not_the_engines():
    with pytest.raises(TypeError, match=r"witness_data must be the engine's .*Witness.*got 'D = \(0,\)'"):
        Measurement(0.1, 0.0, 0.2, 0.0, Verdict.VIOLATED, witness_data="D = (0,)")


def test_the_witness_text_is_made_from_the_data_and_its_part():
    result = verify(cli_mechanisms.randomized_response, records=[0, 1], n=1, epsilon=1.0, seed=0)
    measurement = Measurement(1.0986, 0.07, 1.0, 0.0, Verdict.VIOLATED, witness_data=result.witness,
                              witness_part="public = (0,)")
    assert measurement.witness == f"public = (0,)\n{result.witness}"
    data = _row(measurement, expect=Expect.VIOLATED, parent="rr").to_json()["witness"]
    assert data["part"] == "public = (0,)" and data["text"] == measurement.witness
    assert data["p"]["exact"] == "3/4" and data["event"] == [0]


# -- documents the schema refuses -----------------------------------------------------------------


@pytest.fixture(scope="module")
def audit_doc():
    """A real audit document: the C1 rows (the exponential mechanism and its mutant, about 0.1 s)."""
    rows = run_audit([c for c in registry.audit_cases() if c.claim == "C1"])
    document = json.loads(contract.dumps(audit_document(rows)))
    assert [r["verdict"] for r in document["results"]] == ["HOLDS", "VIOLATED"]
    return document


def _broken(document, change):
    broken = copy.deepcopy(document)
    change(broken)
    return broken


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda d: d["results"][1].__setitem__("epsilon_star", "inf"), id="epsilon-star-as-string-inf"),
        pytest.param(lambda d: d["results"][1].__setitem__("epsilon_star", 1.96), id="epsilon-star-as-bare-number"),
        pytest.param(lambda d: d["results"][0]["epsilon_star"].__setitem__("value", None), id="finite-without-value"),
        pytest.param(lambda d: d["results"][0]["epsilon_star"].__setitem__("kind", "inf"), id="kind-inf-with-value"),
        pytest.param(lambda d: d["results"][0].__setitem__("verdict", "MEASURED"), id="measured-with-holds-true"),
        pytest.param(lambda d: d["results"][0].__setitem__("holds", None), id="verdict-with-holds-null"),
        pytest.param(lambda d: d["results"][1].__setitem__("witness", d["results"][1]["witness"]["text"]),
                     id="witness-as-text"),
        pytest.param(lambda d: d["results"][1]["witness"].pop("event"), id="witness-without-event"),
        pytest.param(lambda d: d["results"][0].__setitem__("extra", 1), id="unknown-row-key"),
        pytest.param(lambda d: d.pop("schema_version"), id="no-schema-version"),
        pytest.param(lambda d: d.__setitem__("schema_version", "2.0"), id="other-major-version"),
        pytest.param(lambda d: d.__setitem__("document", "check"), id="wrong-document"),
    ],
)
def test_documents_breaking_the_contract_are_refused(audit_doc, change):
    contract.validate(audit_doc, "audit")
    _invalid(_broken(audit_doc, change), "audit")
    _invalid(_broken(audit_doc, change))


def test_the_mutant_witness_of_c1_refutes_its_claim(audit_doc):
    # P > e^eps Q + delta, read back from the JSON figures alone.
    witness = audit_doc["results"][1]["witness"]
    p, q, epsilon, delta = (witness[k]["value"] for k in ("p", "q", "epsilon", "delta"))
    assert p > math.exp(epsilon) * q + delta
    # the exact sum of the float probabilities of S (not itself a float), and its correct rounding
    assert Fraction(witness["p"]["exact"]) != Fraction(p) and float(Fraction(witness["p"]["exact"])) == p


# -- the command line -----------------------------------------------------------------------------

RR = "tests.cli_mechanisms:randomized_response"
BITS = ["--records", "[0, 1]", "--n", "1"]


def _json_run(capsys, argv, code, name):
    assert main([*argv, "--format", "json"]) == code
    captured = capsys.readouterr()
    document = json.loads(captured.out)  # the whole of stdout is one JSON document
    contract.validate(document, name)
    contract.validate(document)
    assert document["schema_version"] == "1.4" and document["document"] == name
    return document, captured.err


def test_check_json_violated_with_the_exact_witness(capsys):
    document, _ = _json_run(capsys, ["check", RR, *BITS, "--epsilon", "1.0"], 1, "check")
    assert document["verdict"] == "VIOLATED" and document["holds"] is False and document["mode"] == "distribution"
    assert document["epsilon_star"]["value"] == pytest.approx(math.log(3), rel=1e-15)  # ln(3/4 / 1/4)
    assert document["delta_star"]["value"] == pytest.approx(0.75 - math.e / 4, rel=1e-12)  # 3/4 - e/4 = 0.0704
    assert (document["witness"]["p"]["exact"], document["witness"]["q"]["exact"]) == ("3/4", "1/4")
    assert (document["witness"]["dataset"], document["witness"]["neighbor"]) == ([0], [1])


def test_check_json_keeps_an_exact_claim_exact(capsys):
    document, _ = _json_run(capsys, ["check", RR, *BITS, "--epsilon", "log(3)"], 0, "check")
    assert document["verdict"] == "HOLDS" and document["witness"] is None
    assert document["claimed_epsilon"] == {"value": 1.0986122886681098, "kind": "finite", "exact": "log(3)"}


def test_check_json_infinite_loss(capsys):
    # leak_first: P = 1, Q = 0: eps* = inf, delta*(5) = 1 > 0.5.
    argv = ["check", "tests.cli_mechanisms:leak_first", "--records", "[0, 1]", "--n", "2", "--epsilon", "5",
            "--delta", "0.5"]
    document, _ = _json_run(capsys, argv, 1, "check")
    assert document["epsilon_star"] == INFINITE
    assert document["delta_star"] == {"value": 1.0, "kind": "finite", "exact": None}
    assert (document["witness"]["p"]["exact"], document["witness"]["q"]["exact"]) == ("1", "0")


def test_check_json_estimate_has_a_sampled_witness(capsys):
    argv = ["check", "tests.cli_mechanisms:rr_sampler_numpy", "--estimate", *BITS, "--samples", "20000", "--seed", "1",
            "--epsilon", "0.5"]
    document, _ = _json_run(capsys, argv, 1, "check")
    assert document["mode"] == "estimate" and document["verdict"] == "VIOLATED" and document["holds"] is False
    witness = document["witness"]
    # the bound is ln((p_lower - delta) / q_upper) with delta = 0
    bound = math.log(witness["p_lower"]["value"] / witness["q_upper"]["value"])
    assert witness["epsilon_lower_bound"]["value"] == pytest.approx(bound, rel=1e-12)
    assert document["epsilon_lower_bound"]["value"] > 0.5
    assert witness["p_samples"] == witness["q_samples"] == 10_000  # half of 20,000 test each side


def test_check_json_undecided_notes_go_to_stderr(capsys):
    argv = ["check", "tests.cli_mechanisms:constant", "--domain-size", "4", "--n", "9", "--epsilon", "0", "--seed", "7",
            "--exchangeable"]
    document, err = _json_run(capsys, argv, 4, "check")
    assert document["verdict"] == "UNDECIDED" and document["assumptions"][0]["status"] == "unproved"
    assert "UNDECIDED (exit 4)" in err and "--assume-exchangeable" in err


def test_errors_under_json_leave_stdout_empty(capsys):
    assert main(["check", RR, *BITS, "--epsilon", "abc", "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("dpverify: error: --epsilon must be a number")
    assert main(["check", "tests.cli_mechanisms:divide_by_first", *BITS, "--epsilon", "1", "--format", "json"]) == 3
    captured = capsys.readouterr()
    assert captured.out == "" and "dpverify: no verdict" in captured.err


def test_claim_json(capsys):
    document, _ = _json_run(capsys, ["claim", "C3", "--set", "learner=consistent"], 1, "claim")
    row = document["result"]
    assert document["claim"] == "C3" and document["parameters"] == {"learner": "consistent"}
    assert row["verdict"] == "VIOLATED" and row["epsilon_star"] == INFINITE
    assert row["witness"]["q"]["value"] == 0.0 < row["witness"]["p"]["value"]
    document, _ = _json_run(capsys, ["claim", "C3", "--set", "n=4", "--outside-preconditions"], 0, "claim")
    assert document["result"]["verdict"] == "MEASURED" and document["result"]["holds"] is None


def test_list_json(capsys):
    document, _ = _json_run(capsys, ["list"], 0, "list")
    cases = document["cases"]
    assert len(cases) == len(registry.audit_cases())
    assert {"C3", "C16"} <= set(document["claims"]) and document["claims"] == sorted(document["claims"])
    mutant = next(c for c in cases if c["mechanism"] == "mutant_inner_consistent")
    assert mutant["expect"] == "violated" and mutant["parent"] == "a_agnostic" and mutant["claim"] == "C3"


# -- reports: byte-identical on unchanged figures -------------------------------------------------


def _rows(seconds, epsilon_star=0.5):
    cases = [AuditCase("CX", "m", {"n": 1}, lambda: Measurement(epsilon_star, 0.0, 1.0, 0.0, Verdict.HOLDS)),
             AuditCase("CY", "n", {"n": 2}, lambda: Measurement(0.25, 0.0, 1.0, 0.0, Verdict.HOLDS))]
    return [row.__class__(row.case, row.measurement, s) for row, s in zip(run_audit(cases), seconds)]


def _read(directory):
    return {name: (directory / name).read_bytes() for name in ("audit.json", "audit.md", "audit.html")}


def test_reports_written_twice_are_byte_identical_and_rewritten_on_a_change(tmp_path):
    write_reports(_rows([1.0, 2.0]), tmp_path)
    first = _read(tmp_path)
    write_reports(_rows([3.25, 0.125]), tmp_path)  # other timings, same figures
    assert _read(tmp_path) == first
    assert [r["seconds"] for r in json.loads(first["audit.json"])["results"]] == [1.0, 2.0]
    assert b"| 1.00 |" in first["audit.md"] and b'<td class="num">2.00</td>' in first["audit.html"]
    write_reports(_rows([3.25, 0.125], epsilon_star=0.75), tmp_path)  # one eps* changed: everything new
    changed = _read(tmp_path)
    document = json.loads(changed["audit.json"])
    assert document["results"][0]["epsilon_star"]["value"] == 0.75
    assert [r["seconds"] for r in document["results"]] == [3.25, 0.125]
    assert changed["audit.md"] != first["audit.md"] and b"| 3.25 |" in changed["audit.md"]
    contract.validate(document, "audit")


def test_a_previous_generated_date_is_kept_and_a_broken_file_replaced(tmp_path):
    write_reports(_rows([1.0, 2.0]), tmp_path)
    path = tmp_path / "audit.json"
    document = json.loads(path.read_text())
    path.write_text(contract.dumps({**document, "generated": "2025-01-01T00:00:00Z"}) + "\n")
    write_reports(_rows([5.0, 6.0]), tmp_path)
    assert json.loads(path.read_text())["generated"] == "2025-01-01T00:00:00Z"
    path.write_text("{not json")
    write_reports(_rows([5.0, 6.0]), tmp_path)
    assert [r["seconds"] for r in json.loads(path.read_text())["results"]] == [5.0, 6.0]


# -- the committed report -------------------------------------------------------------------------


def test_the_committed_audit_report_follows_the_contract():
    document = json.loads((ROOT / "reports" / "audit.json").read_text(encoding="utf-8"))
    contract.validate(document, "audit")
    rows = document["results"]
    assert len(rows) == len(registry.audit_cases()) and document["all_as_expected"] is True
    assert all(r["as_expected"] for r in rows)
    measured = [r for r in rows if r["expect"] == "measured"]
    assert measured and all(r["verdict"] == "MEASURED" and r["holds"] is None for r in measured)
    assert all(r["verdict"] != "MEASURED" for r in rows if r["expect"] != "measured")
    for row in rows:
        if row["expect"] == "violated":
            witness = row["witness"]
            assert row["verdict"] == "VIOLATED" and witness is not None, row["mechanism"]
            p, q, epsilon, delta = (witness[k]["value"] for k in ("p", "q", "epsilon", "delta"))
            assert p > math.exp(epsilon) * q + delta, row["mechanism"]  # the witness refutes the claim
        elif row["verdict"] == "HOLDS":
            assert row["witness"] is None
    infinite = {r["mechanism"]: r for r in rows if r["epsilon_star"]["kind"] == "+inf"}
    # (the Gaussian rows hold their (eps, delta) claims with an infinite pure eps*: any verdict may come with +inf)
    assert {"HOLDS", "VIOLATED"} <= {r["verdict"] for r in infinite.values()}
    # C3's non-private inner learner: its witness is an output with P > 0 = Q (an exact zero)
    assert infinite["mutant_inner_consistent"]["witness"]["q"] == {"value": 0.0, "kind": "finite", "exact": "0"}
    assert infinite["mutant_inner_consistent"]["slack"] == {"value": None, "kind": "-inf", "exact": None}
    assert "seconds" not in json.dumps([r["details"] for r in rows])  # no timing outside the rows' seconds


def test_a_certified_enclosure_is_a_figure_with_its_ends():
    # Geometric-noise witnesses carry P and Q as mpmath intervals (their exact forms run to 4 KB):
    # float() of an interval raises, and `make audit` crashed writing the report.
    import mpmath

    from dpverify.integrations.contract import figure

    enclosure = mpmath.iv.mpf(["0.1", "0.3"])  # ends 0.1 and 0.3 rounded outward by mpmath
    shown = figure(enclosure)
    low, high = (float(x) for x in shown["exact"].removeprefix("in [").removesuffix("]").split(", "))
    assert low <= enclosure.a and high >= enclosure.b and high - low < 0.2 + 1e-15
    assert shown["kind"] == "finite" and shown["value"] == (low + high) / 2  # 0.2, within an ulp
    validate_figure = contract.schema()  # the figure still matches the schema's figure shape
    assert set(shown) == {"value", "kind", "exact"} and validate_figure
