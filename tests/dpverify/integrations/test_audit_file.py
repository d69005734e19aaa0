"""``dpverify audit PATH.py`` and ``dpverify audit MODULE`` (dpverify.integrations.audit_file, cli).

The example of the guide, docs/examples/my_learner.py, runs in process through the command line:
exit 0, its two rows, the mutant's witness in the JSON, the Markdown and the HTML, the user's words
and none of the papers'. Then every exit code: 1 for a claim violated or a mutant missed, 3 for a
mechanism (or a file) that raises, 2 for a path, a module or a file that is not an audit.
"""

from __future__ import annotations

import contextlib
import html
import importlib.util
import io
import json
import math
import re
import sys
import textwrap
from pathlib import Path

import pytest

from dpverify.integrations import contract
from dpverify.integrations.cli import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "docs" / "examples" / "my_learner.py"
#: Words of the papers' audit that an audit file's reports must not carry.
PAPERS = ("O(eps)", "2.773", "theorem", "default instance", "registered claim", "Lemma", "dpverify audit</h1>",
          "# dpverify audit")


def _example_module():
    spec = importlib.util.spec_from_file_location("my_learner_for_test", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    """The guide's command, once: ``dpverify audit docs/examples/my_learner.py --output DIR``."""
    output = tmp_path_factory.mktemp("my_audit")
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["audit", str(EXAMPLE), "--output", str(output)])
    return code, stdout.getvalue(), stderr.getvalue(), output


def test_the_example_exits_zero_with_its_two_rows(example_run):
    code, out, err, _ = example_run
    assert code == 0, err
    rows = [line for line in out.splitlines() if line.startswith("1 ")]
    assert len(rows) == 2, out
    # noisy_threshold: (1/2) / (1/6) = 3, eps* = ln 3 = 1.0986 exactly at the claim (slack 0)
    assert "noisy_threshold " in rows[0] and "1.099   1.099" in rows[0] and "✓ holds" in rows[0]
    # the broken copy: (5/8) / (1/8) = 5, eps* = ln 5 = 1.609; delta* at ln 3 = 5/8 - 3/8 = 0.25
    assert "noisy_threshold_broken" in rows[1] and "1.609   1.099   0.25" in rows[1]
    assert "✗ VIOLATED (expected)" in rows[1]
    assert out.startswith("Noisy threshold learner\n=======================\n")
    assert "claim 1  noisy_threshold is ln(3)-DP" in out
    assert "2 rows: 2 as expected (1 holds, 1 mutant caught), 0 measured, 0 unexpected, 0 undecided" in out


def test_the_mutants_witness_is_in_the_json_markdown_and_html(example_run):
    *_, output = example_run
    document = json.loads((output / "audit.json").read_text())
    contract.validate(document, "audit")
    assert (document["title"], document["all_as_expected"]) == ("Noisy threshold learner", True)
    holds, broken = document["results"]
    assert holds["statement"] == broken["statement"] and holds["statement"].startswith("noisy_threshold is ln(3)-DP")
    assert holds["source"] == "the argument in noisy_threshold's docstring" and broken["source"] is None
    assert broken["parent"] == "noisy_threshold" and broken["verdict"] == "VIOLATED" and broken["as_expected"]
    assert broken["epsilon_star"]["value"] == pytest.approx(math.log(5))
    witness = broken["witness"]
    # Any violation of ln 3 by the broken copy is the best threshold of D: 5/8 there, 1/8 on a neighbour
    # whose best threshold differs (every other event has P <= 3 Q).
    assert (witness["p"]["exact"], witness["q"]["exact"]) == ("5/8", "1/8")
    learner = _example_module()
    dataset, neighbor = (tuple(map(tuple, witness[key])) for key in ("dataset", "neighbor"))
    assert witness["event"] == [learner.best_threshold(dataset)] != [learner.best_threshold(neighbor)]
    assert sum(a != b for a, b in zip(dataset, neighbor)) == 1  # substitute neighbours: one record differs
    text = witness["text"]
    assert "exact: P[M(D) in S] is 5/8, P[M(D') in S] is 1/8" in text
    markdown = (output / "audit.md").read_text()
    page = html.unescape((output / "audit.html").read_text())
    assert text in markdown
    # the page lays the witness out as a table: both datasets, the event and both probabilities, exactly
    shown = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert f"D {dataset} D' {neighbor} S (event) {{{witness['event'][0]}}}" in shown
    assert "0.625 (exactly 5/8)" in shown and "0.125 (exactly 1/8)" in shown
    assert markdown.startswith("# Noisy threshold learner\n")
    assert "<title>Noisy threshold learner</title>" in page and "Mutant of noisy_threshold" in shown
    assert "Claim 1: noisy_threshold is ln(3)-DP" in markdown and "noisy_threshold is ln(3)-DP" in shown


def test_no_words_of_the_papers_appear(example_run):
    _, out, _, output = example_run
    for name, text in [("stdout", out), *((p.name, p.read_text()) for p in sorted(output.iterdir()))]:
        found = [phrase for phrase in PAPERS if phrase in html.unescape(text)]
        assert found == [], f"{name} carries {found}"


def _audit_file(tmp_path: Path, body: str, name: str = "my_audit.py") -> Path:
    """An audit file of randomized response (eps* = ln 3) with ``body`` declaring its rows."""
    path = tmp_path / name
    path.write_text(textwrap.dedent('''
        from fractions import Fraction

        from dpverify import Datasets, PureDp
        from dpverify.auditing import Audit, Row

        def rr(dataset):
            return {dataset[0]: Fraction(3, 4), 1 - dataset[0]: Fraction(1, 4)}

        def broken(dataset):
            raise ZeroDivisionError("a bug in broken")

        D = Datasets([0, 1], n=1)
    ''') + textwrap.dedent(body))
    return path


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["audit", *args, "--quiet", *([] if "--jobs" in args else ["--jobs", "1"])])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(("body", "shown"), [
    # ln 3 = 1.0986 > 1: the claim that must hold is VIOLATED
    ('audit = Audit("t", [Row(rr, D, PureDp(1), statement="rr is 1-DP")])', "VIOLATED (NOT AS EXPECTED)"),
    # a mutant that holds: ln 3 <= ln 3
    ('audit = Audit("t", [Row(rr, D, PureDp(1.1), statement="s"), Row(rr, D, PureDp(1.1), statement="s", '
     'name="rr_copy", expect="violated")])', "holds (MUTANT MISSED)"),
])
def test_a_row_not_as_expected_exits_one(tmp_path, capsys, body, shown):
    code, out, _ = _run(capsys, str(_audit_file(tmp_path, body)))
    assert code == 1 and shown in out
    assert "1 row(s) not as expected" in out


def test_the_audit_log_carries_each_unexpected_rows_evidence(tmp_path, capsys):
    # issue 36: in CI the log is all there is. rr is ln 3 = 1.0986-DP: claimed 1-DP it is VIOLATED, with the
    # witness D = (0,), D' = (1,), S = {0}: 3/4 > e^1 * 1/4 = 0.6796; the mutant copy claimed 1.1 holds
    body = ('audit = Audit("t", [Row(rr, D, PureDp(1), statement="rr is 1-DP"),\n'
            '                    Row(rr, D, PureDp(1.1), statement="s", name="ok"),\n'
            '                    Row(rr, D, PureDp(1.1), statement="s", name="rr_copy", expect="violated")])')
    code, out, _ = _run(capsys, str(_audit_file(tmp_path, body)))
    assert code == 1
    log = out[out.index("2 row(s) not as expected"):]
    assert "1/rr (records=[0, 1], n=1, substitute): VIOLATED (NOT AS EXPECTED)\n  D  = (0,)\n  D' = (1,)\n  S  = {0}" in log
    assert "exact: P[M(D) in S] is 3/4, P[M(D') in S] is 1/4\n  check: 0.75 > e^eps * 0.25 + delta = 0.6795704" in log
    assert ("2/rr_copy (records=[0, 1], n=1, substitute): holds (MUTANT MISSED)\n  eps* = 1.099, delta* = 0 at the "
            "claimed eps = 1.1") in log
    assert all(len(line) <= 100 for line in log.splitlines())


def test_a_mechanism_that_raises_exits_three_naming_the_row(tmp_path, capsys):
    path = _audit_file(tmp_path, 'audit = Audit("t", [Row(broken, D, PureDp(1), statement="s")])')
    code, out, err = _run(capsys, str(path))
    assert code == 3 and out == ""
    assert "no verdict in audit row 1/broken (records=[0, 1], n=1, substitute): the mechanism failed" in err
    assert "ZeroDivisionError: a bug in broken" in err


def test_a_file_that_raises_while_loading_exits_three(tmp_path, capsys):
    path = _audit_file(tmp_path, 'raise RuntimeError("cannot load")')
    code, _, err = _run(capsys, str(path))
    assert code == 3
    assert f"no verdict in audit file {path} (raised while it was loading): unexpected builtins.RuntimeError" in err


@pytest.mark.parametrize(("body", "message"), [
    # the body starts at the file's line 14 (after _audit_file's preamble)
    ('audit = Audit("t", [\n    Row(rr, D, PureDp(2), statement="s"),\n    Row(rr, D, PureDp(2), name="copy"),\n])',
     "line 16, row 2 ('copy'): Row(...) missing 1 required keyword-only argument: 'statement'; a row is "
     "Row(mechanism, inputs, claim, statement=...), e.g. Row(noisy_median"),
    ('audit = Audit("t", [Row(rr, D, statement="s")])',
     "line 14, row 1 (rr): Row(...) missing 1 required positional argument: 'claim'"),
    ('audit = Audit("t", [Row(rr, D, PureDp(2), statment="s")])',
     "line 14, row 1 (rr): Row(...) got an unexpected keyword argument 'statment'"),
    ('audit = Audit("t", [Row(rr, D, PureDp(2), statement="s"),\n                     Row(rr, D, PureDp(-1), statement="s")])',
     "line 15, row 2 (rr): epsilon must be >= 0, got epsilon=-1"),
    # the same advice as `dpverify check` gives (without its --set)
    ('audit = Audit("t", [Row(lambda dataset, epsilon: {}, D, PureDp(2), statement="s", name="two")])',
     "line 14, row 1 ('two'): Row 'two': two requires 2 arguments (dataset, epsilon) where it is called with the "
     "dataset alone: epsilon has no value; give it a value: a default in the definition (def two(dataset, "
     "epsilon=1.0)), or functools.partial(two, epsilon=1.0) assigned to a name."),
    ('audit = Audit(\n    [Row(rr, D, PureDp(2), statement="s")],\n)',
     ": Audit(...) missing 1 required positional argument"),
])
def test_a_bad_row_is_a_usage_error_naming_its_line_and_row(tmp_path, capsys, body, message):
    code, out, err = _run(capsys, str(_audit_file(tmp_path, body)))
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err
    if "Audit(...)" in message:  # the call is not inside a row: only its line is named
        assert re.search(r"my_audit\.py, line 14: Audit\(\.\.\.\) missing", err), err


@pytest.mark.parametrize(("target", "body", "message"), [
    ("missing.py", None, "no file 'missing.py': give the path of a .py file"),
    ("notes.txt", "", "is not a Python file (.py)"),
    (".", None, "is a directory; give the .py file"),
    ("no_such_module_here", None, "no module 'no_such_module_here' (and no file of that name)"),
    ("my_audit.py", "x = 1", "declares no audit; declare one at its top level: `audit = Audit("),
    ("my_audit.py", 'a = Audit("t", [Row(rr, D, PureDp(2), statement="s")])\nb = Audit("u", a.rows)',
     "declares 2 audits (a, b); keep one per file"),
    ("my_audit.py", "def (:", "is not valid Python: line 14"),
    ("my_audit.py", 'audit = Audit("t", [Row(rr, D, PureDp(2), statement="s", expect="sometimes")])',
     "expect must be 'holds' or 'violated'"),
])
def test_what_is_not_an_audit_file_is_a_usage_error_naming_the_fix(tmp_path, capsys, monkeypatch, target, body, message):
    monkeypatch.chdir(tmp_path)
    if body is not None:
        _audit_file(tmp_path, body, name=target)
    code, out, err = _run(capsys, target)
    assert code == 2 and out == ""
    assert message in err


def test_a_module_name_is_imported_from_the_current_directory(tmp_path, capsys, monkeypatch):
    _audit_file(tmp_path, 'audit = Audit("By module", [Row(rr, D, PureDp("ln(3)"), statement="rr is ln(3)-DP")])',
                name="rr_audit_module.py")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "rr_audit_module", raising=False)
    code, out, _ = _run(capsys, "rr_audit_module")
    assert code == 0 and out.startswith("By module\n") and "✓ holds" in out
    assert str(tmp_path) not in sys.path  # the directory was on the path only while the module loaded
    monkeypatch.delitem(sys.modules, "rr_audit_module", raising=False)


def test_a_file_imports_its_neighbours_while_it_loads(tmp_path, capsys):
    (tmp_path / "rr_helpers.py").write_text("from fractions import Fraction\n\n"
                                            "def rr(d):\n    return {d[0]: Fraction(3, 4), 1 - d[0]: Fraction(1, 4)}\n")
    path = tmp_path / "audit_with_helpers.py"
    path.write_text("from dpverify import Datasets, PureDp\nfrom dpverify.auditing import Audit, Row\n"
                    "from rr_helpers import rr\n"
                    "audit = Audit('t', [Row(rr, Datasets([0, 1], n=1), PureDp('ln(3)'), statement='s')])\n")
    try:
        code, out, _ = _run(capsys, str(path))
    finally:
        sys.modules.pop("rr_helpers", None)
    assert code == 0 and "✓ holds" in out
    assert str(tmp_path) not in sys.path


def test_a_module_of_cases_for_the_entry_point_runs_without_installing(tmp_path, capsys):
    path = tmp_path / "plugin_style.py"
    path.write_text(textwrap.dedent('''
        from fractions import Fraction
        from functools import partial

        from dpverify import verify
        from dpverify.integrations.audit import AuditCase, Measurement

        def measure(p):
            rr = lambda d: {d[0]: p, 1 - d[0]: 1 - p}
            return Measurement.from_result(verify(rr, records=[0, 1], n=1, epsilon="ln(3)"))

        def cases():
            return [AuditCase("RR", "rr", {"p": "3/4"}, partial(measure, Fraction(3, 4)))]
    '''))
    code, out, _ = _run(capsys, str(path))
    lines = out.splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.startswith("RR")]
    assert code == 0 and "✓ holds" in lines[at] and "p=3/4" in lines[at] + lines[at + 1]  # at 100 columns


def test_json_format_carries_the_title_and_validates(capsys):
    code, out, _ = _run(capsys, str(EXAMPLE), "--format", "json")
    document = json.loads(out)
    contract.validate(document, "audit")
    assert code == 0 and document["title"] == "Noisy threshold learner"
    assert document["description"].startswith("A threshold learner on the domain {0, 1, 2}")


def test_list_shows_the_rows_of_a_file(capsys):
    assert main(["list", str(EXAMPLE)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines] == [["1", "noisy_threshold"], ["1", "noisy_threshold_broken"]]


GUIDE = ROOT / "docs" / "guide" / "audit-your-learner.md"


def test_the_guide_shows_the_example_file_as_it_is():
    page = GUIDE.read_text()
    assert f"```python\n{EXAMPLE.read_text()}```\n" in page


def test_the_guides_markdown_excerpt_is_what_the_report_says(example_run):
    *_, output = example_run
    (excerpt,) = re.findall(r"^~~~markdown\n(.*?)^~~~$", GUIDE.read_text(), flags=re.M | re.S)
    markdown = (output / "audit.md").read_text()
    position = 0
    for chunk in excerpt.split("...\n"):  # a "..." line leaves out lines of the report
        found = markdown.find(chunk, position)
        assert found >= 0, f"the guide shows, and audit.md does not have (after {position}):\n{chunk}"
        position = found + len(chunk)


def test_rows_of_a_file_travel_to_dask_workers_by_value(tmp_path):
    """A Dask worker cannot import a file that is no module on its path: cloudpickle sends its
    functions by value (here unpickled after the module is gone from sys.modules)."""
    import pickle

    import cloudpickle

    from dpverify.integrations.audit_file import load_audit

    path = _audit_file(tmp_path, 'audit = Audit("t", [Row(rr, D, PureDp("ln(3)"), statement="s")])',
                       name="by_value_audit.py")
    (case,) = load_audit(str(path)).cases
    data = cloudpickle.dumps(case.run)
    del sys.modules["by_value_audit"]
    measurement = pickle.loads(data)()
    assert measurement.epsilon_star == pytest.approx(math.log(3))  # (3/4) / (1/4)


@pytest.mark.slow  # a Dask LocalCluster of 2 workers (about 5 s); the twin above checks the pickling alone
def test_the_example_runs_on_dask_workers(capsys):
    code, out, _ = _run(capsys, str(EXAMPLE), "--executor", "dask", "--jobs", "2")
    assert code == 0 and "1.609   1.099   0.25" in out


def test_report_writes_the_one_page_where_asked_and_refuses_a_bad_name_before_work(tmp_path, capsys):
    page = tmp_path / "out.html"
    assert main(["audit", str(EXAMPLE), "--report", str(page), "--quiet"]) == 0
    written = html.unescape(page.read_text(encoding="utf-8"))
    assert "<title>Noisy threshold learner</title>" in written and "0.625 (exactly 5/8)" in written
    assert f"report written: {page}" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.html"]  # no JSON or Markdown beside it
    assert main(["audit", str(EXAMPLE), "--report", str(tmp_path / "out.txt")]) == 2
    assert "--report" in capsys.readouterr().err and not (tmp_path / "out.txt").exists()
