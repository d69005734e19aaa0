"""``dpverify audit --jobs N`` / ``run_audit(cases, jobs=N)``: rows run whole in N worker processes
(dpverify.integrations._audit_jobs), the figures of the serial run, its errors, its reports."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

import dpverify.integrations.audit as registry
from dpverify import InvalidArgument, Verdict
from dpverify.errors import EnvironmentFailure, MechanismError
from dpverify.integrations import contract
from dpverify.integrations.audit import AuditCase, AuditTiming, Expect, Measurement, longest_first, run_audit
from dpverify.integrations.cli import main
from dpverify.integrations.report import audit_document, previous_seconds, write_reports
from dpverify.parallel.executors import open_executor
from tests.dpverify.integrations._report_rows import rows as report_rows

#: Fast claims of the shipped audit (24 rows, about 1.5 s serially): holds, mutants, measured rows.
SUBSET = {"RR", "C1", "C9", "C12"}


def _stable(document: dict) -> dict:
    """The document without what changes from run to run (the date, the timings)."""
    head = {k: v for k, v in document.items() if k not in ("generated", "jobs", "wall_seconds", "results")}
    return {**head, "results": [{k: v for k, v in row.items() if k != "seconds"} for row in document["results"]]}


def test_two_jobs_give_the_serial_figures_witnesses_and_verdicts():
    cases = [c for c in registry.audit_cases() if c.claim in SUBSET]
    assert len(cases) == 14  # 2 RR + 2 C1 + 5 C9 + 5 C12 (`dpverify list`)
    serial = run_audit(cases, jobs=1)
    parallel = run_audit(cases, jobs=2)
    assert [r.case for r in parallel] == cases  # report order, whatever order the rows ended in
    first = json.loads(contract.dumps(audit_document(serial)))
    second = json.loads(contract.dumps(audit_document(parallel)))
    assert _stable(first) == _stable(second)
    assert any(row["witness"] for row in second["results"])  # the mutants' witnesses came back whole


# -- toy rows (module level: forked workers find them; no mechanism runs) --------------------------


def _holds() -> Measurement:
    return Measurement(0.5, 0.0, 1.0, 0.0, Verdict.HOLDS)


def _broken_value() -> Measurement:
    raise ValueError("row two broke")


def _broken_mechanism() -> Measurement:
    error = ZeroDivisionError("division by zero")
    raise MechanismError("the mechanism raised on dataset (1, 0)", dataset=(1, 0), original=error) from error


def _executors_seen() -> Measurement:
    """What a row sees when it asks for executors itself."""
    kinds = {}
    for name in (None, "processes"):
        with open_executor(name) as runner:
            kinds[str(name)] = runner.kind
    return Measurement(0.0, 0.0, 1.0, 0.0, None, details=kinds)


def _case(name: str, run, **options) -> AuditCase:
    return AuditCase("T", name, {"n": len(name)}, run, expect=Expect.MEASURED if run is _executors_seen else Expect.HOLDS,
                     **options)


def _enclosed() -> Measurement:
    """A row whose figures include certified enclosures (mpmath intervals, as geometric-noise witnesses have)."""
    import mpmath

    return Measurement(0.5, 0.0, 1.0, 0.0, None, details={"P": mpmath.iv.mpf(["0.1", "0.2"]), "Q": mpmath.iv.mpc(1, 2)})


def _unsendable() -> Measurement:
    return Measurement(0.5, 0.0, 1.0, 0.0, None, details={"how": lambda: 0})


def test_interval_figures_come_back_as_the_same_numbers_and_an_unsendable_row_is_named():
    import mpmath

    (row,) = run_audit([_case("enclosed", _enclosed), _case("a", _holds)], jobs=2)[:1]
    P, Q = row.measurement.details["P"], row.measurement.details["Q"]
    assert type(P) is type(mpmath.iv.mpf(0)) and P._mpi_ == mpmath.iv.mpf(["0.1", "0.2"])._mpi_
    assert type(Q) is type(mpmath.iv.mpc(0)) and Q._mpci_ == mpmath.iv.mpc(1, 2)._mpci_
    with pytest.raises(EnvironmentFailure, match=r"audit row T/unsendable \(n=10\): its measurement cannot be sent back"):
        run_audit([_case("unsendable", _unsendable), _case("a", _holds)], jobs=2)


def test_longest_first_puts_unknown_rows_first_then_by_decreasing_seconds():
    cases = [_case(name, _holds) for name in ("a", "bb", "ccc", "dddd", "eeeee")]
    costs = {cases[0].key: 1.0, cases[1].key: 15.0, cases[3].key: 2.5, cases[4].key: 15.0}
    # c (2) has no cost: first; then 15 s (1 and 4, tie kept in case order), 2.5 s (3), 1 s (0)
    assert longest_first(cases, costs) == [2, 1, 4, 3, 0]
    assert longest_first(cases, None) == [0, 1, 2, 3, 4]


def test_previous_seconds_reads_each_rows_seconds_by_key(tmp_path):
    rows = report_rows()
    write_reports(rows, tmp_path)
    seconds = previous_seconds(tmp_path / "audit.json")
    assert seconds == {r.case.key: round(r.seconds, 4) for r in rows}
    assert previous_seconds(tmp_path / "missing.json") == {}


def test_a_row_inside_a_worker_opens_no_pool_of_its_own():
    cases = [_case("seen", _executors_seen), _case("also", _executors_seen)]
    rows = run_audit(cases, jobs=2)
    assert [r.measurement.details for r in rows] == [{"None": "serial", "processes": "serial"}] * 2
    # serially, with --executor processes, a row's own work is sharded on the audit's pool as before
    (row,) = run_audit(cases[:1], jobs=1, executor="processes")
    assert row.measurement.details == {"None": "processes", "processes": "processes"}


def test_jobs_with_a_process_pool_per_row_is_refused_with_the_fix():
    cases = [_case("a", _holds), _case("bb", _holds)]
    with pytest.raises(InvalidArgument, match=r"--jobs 1 --executor processes, or --jobs N alone"):
        run_audit(cases, jobs=2, executor="processes")
    with pytest.raises(ValueError, match="jobs=0"):
        run_audit(cases, jobs=0)


def test_the_first_failing_row_in_report_order_is_raised_even_when_a_later_one_fails_first():
    cases = [_case("a", _holds), _case("bb", _broken_value), _case("ccc", _holds), _case("dddd", _broken_mechanism)]
    costs = {case.key: 1.0 for case in cases} | {cases[3].key: 100.0}  # row 3 starts (and fails) first
    with pytest.raises(ValueError, match="row two broke") as caught:
        run_audit(cases, jobs=2, costs=costs)
    assert "_broken_value" in str(caught.value.__context__)  # the worker's traceback, for the printout


def test_a_mechanism_error_comes_back_with_its_cause_and_dataset():
    with pytest.raises(MechanismError) as caught:
        run_audit([_case("a", _holds), _case("dddd", _broken_mechanism)], jobs=2)
    assert caught.value.dataset == (1, 0)
    assert isinstance(caught.value.__cause__, ZeroDivisionError)


@pytest.fixture
def toy_audit(monkeypatch):
    """``dpverify audit`` over rows given by the test."""
    def use(*cases):
        monkeypatch.setattr(registry, "audit_cases", lambda: list(cases))
    return use


@pytest.mark.parametrize("broken", [_broken_mechanism, _broken_value])
def test_a_failing_row_gives_the_serial_exit_code_and_message(toy_audit, capsys, broken):
    toy_audit(_case("a", _holds), _case("bb", broken), _case("ccc", _holds))
    messages = []
    for jobs in ("1", "2"):
        assert main(["audit", "--quiet", "--jobs", jobs]) == 3
        err = capsys.readouterr().err
        messages.append(err.strip().splitlines()[-1])  # after the traceback, if any (it differs: remote)
    assert messages[0] == messages[1]
    assert messages[0].startswith("dpverify: no verdict in audit row T/bb (n=2): ")


def _killed() -> Measurement:
    os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)
    raise AssertionError("still alive")


#: The marker file of :func:`_killed_once`: the first worker to run it writes the marker and dies.
_MARKER = "DPVERIFY_TEST_AUDIT_DEATH_MARKER"


def _killed_once() -> Measurement:
    try:
        with open(os.environ[_MARKER], "x"):
            pass
    except FileExistsError:
        return Measurement(0.25, 0.0, 1.0, 0.0, Verdict.HOLDS)
    os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)
    raise AssertionError("still alive")


def test_a_row_whose_worker_dies_once_is_run_again_and_the_audit_ends_as_undisturbed(tmp_path, monkeypatch):
    """The out-of-memory killer's SIGKILL on the worker of row T/victim: the pool is renewed, the rows it
    lost run again (each row is a pure function of its case), and the figures are the serial run's."""
    monkeypatch.setenv(_MARKER, str(tmp_path / "died"))
    cases = [_case("a", _holds), _case("victim", _killed_once), _case("ccc", _holds), _case("dddd", _holds)]
    parallel = run_audit(cases, jobs=2)
    assert (tmp_path / "died").exists()  # the worker did die once
    serial = run_audit(cases, jobs=1)  # the marker exists now: the row computes
    first = json.loads(contract.dumps(audit_document(serial)))
    second = json.loads(contract.dumps(audit_document(parallel)))
    assert _stable(first) == _stable(second)
    assert [row["epsilon_star"]["value"] for row in second["results"]] == [0.5, 0.25, 0.5, 0.5]


def test_on_dask_a_row_whose_worker_dies_once_is_run_again(tmp_path, monkeypatch):
    """``--jobs 2 --executor dask``: the nanny restarts the killed worker and the scheduler runs the row
    again (Dask's allowed-failures): the serial figures."""
    pytest.importorskip("distributed")
    monkeypatch.setenv(_MARKER, str(tmp_path / "died"))  # before the cluster starts: its workers inherit it
    cases = [_case("a", _holds), _case("victim", _killed_once), _case("ccc", _holds)]
    parallel = run_audit(cases, jobs=2, executor="dask")
    assert (tmp_path / "died").exists()
    document = json.loads(contract.dumps(audit_document(parallel)))
    assert [row["epsilon_star"]["value"] for row in document["results"]] == [0.5, 0.25, 0.5]


def test_a_worker_that_dies_is_reported_naming_its_row(toy_audit, capsys):
    # it dies on every run: once on the first pool, again on the fresh one the row was run once more on
    cases = [_case("a", _holds), _case("victim", _killed), _case("ccc", _holds)]
    with pytest.raises(EnvironmentFailure, match=r"while running audit row T/victim \(n=6\) \(killed by SIGKILL: out of "
                                                 r"memory, or killed by hand\), and died again when the row was run once "
                                                 r"more on a fresh pool"):
        run_audit(cases, jobs=2)
    toy_audit(*cases)
    assert main(["audit", "--quiet", "--jobs", "2"]) == 3
    assert "the environment failed: EnvironmentFailure: a worker process of the audit died while running audit " \
           "row T/victim (n=6)" in capsys.readouterr().err


def test_cli_refuses_jobs_with_executor_processes_and_defaults_to_one_job_with_it(toy_audit, capsys):
    toy_audit(_case("a", _holds), _case("bb", _holds))
    assert main(["audit", "--quiet", "--jobs", "2", "--executor", "processes"]) == 2
    assert "--jobs 1 --executor processes" in capsys.readouterr().err
    assert main(["audit", "--quiet", "--executor", "processes"]) == 0
    assert "\n2 rows in " in capsys.readouterr().out.split(" s with 1 job (")[0]


def test_progress_lines_come_one_per_row_and_name_the_rows_running():
    cases = [_case(name, _holds) for name in ("a", "bb", "ccc", "dddd")]
    lines: list[str] = []
    run_audit(cases, jobs=2, progress=lines.append)
    assert len(lines) == 4
    assert [line.split("]")[0] for line in lines] == ["[1/4", "[2/4", "[3/4", "[4/4"]
    ended = sorted(line.split("] ")[1].split(":")[0] for line in lines)
    assert ended == sorted(f"T {c.mechanism} ({c.instance})" for c in cases)
    assert all("; running T " in line for line in lines[:1])  # a row was still running when the first ended


def _sleeper(path: Path):
    def run() -> Measurement:
        path.write_text(str(os.getpid()))
        time.sleep(600)
        return _holds()
    return run


def _after(path: Path):
    def run() -> Measurement:
        for _ in range(6000):  # until the sleeper has started (bounded: 60 s)
            if path.exists() and path.read_text():
                break
            time.sleep(0.01)
        return _holds()
    return run


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")  # a zombie has stopped; its parent reaps it


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_an_interrupt_stops_the_workers_at_once(tmp_path):
    path = tmp_path / "pid"
    cases = [_case("sleeper", _sleeper(path)), _case("quick", _after(path))]

    def interrupt(line: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_audit(cases, jobs=2, progress=interrupt)
    pid = int(path.read_text())
    for _ in range(3000):  # bounded wait (30 s) for the kill to land; the row itself sleeps 600 s
        if _gone(pid):
            break
        time.sleep(0.01)
    assert _gone(pid)


# -- the reports' header -------------------------------------------------------------------------


def test_reports_show_wall_time_jobs_and_row_time(tmp_path):
    rows = report_rows()  # seconds 0.01 + 0.02 + 0.03 + 1.5 + 0.5 + 0.04 = 2.1
    write_reports(rows, tmp_path, timing=AuditTiming(2, 1.234))
    document = json.loads((tmp_path / "audit.json").read_text())
    contract.validate(document, "audit")
    assert (document["jobs"], document["wall_seconds"]) == (2, 1.23)
    said = "6 rows in 1.2 s with 2 jobs (2.1 s of row time)"
    assert f"\n{said}.\n" in (tmp_path / "audit.md").read_text()
    assert f"&middot; {said} &middot;" in (tmp_path / "audit.html").read_text()


def test_reports_stay_byte_identical_whatever_the_jobs_when_the_figures_are_unchanged(tmp_path):
    rows = report_rows()
    write_reports(rows, tmp_path, timing=AuditTiming(1, 2.2))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    faster = [r.__class__(r.case, r.measurement, r.seconds * 1.5) for r in rows]
    write_reports(faster, tmp_path, timing=AuditTiming(2, 1.4))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    # a report from before --jobs (no timing): the new run's times are written, all of them
    document = json.loads(before["audit.json"])
    del document["jobs"], document["wall_seconds"]
    (tmp_path / "audit.json").write_text(contract.dumps(document) + "\n")
    write_reports(faster, tmp_path, timing=AuditTiming(2, 1.4))
    written = json.loads((tmp_path / "audit.json").read_text())
    assert (written["jobs"], written["wall_seconds"]) == (2, 1.4)
    assert [r["seconds"] for r in written["results"]] == [round(r.seconds, 4) for r in faster]


def test_a_time_at_a_rounding_edge_is_drawn_as_the_json_holds_it(tmp_path):
    # 1.79502 s is written to audit.json as 1.795 (4 decimals), which prints as "1.79" (the float
    # 1.795 is just below it), while 1.79502 itself prints "1.80": the Markdown and HTML must draw
    # what the JSON holds, or the next run (reading its seconds back) rewrites them
    rows = [r.__class__(r.case, r.measurement, 1.79502) for r in report_rows()]
    write_reports(rows, tmp_path, timing=AuditTiming(1, 2.2))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert json.loads(before["audit.json"])["results"][0]["seconds"] == 1.795
    assert "| 1.79 |" in before["audit.md"].decode() and "| 1.80 |" not in before["audit.md"].decode()
    write_reports(report_rows(), tmp_path, timing=AuditTiming(2, 1.4))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
