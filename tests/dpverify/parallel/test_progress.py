"""Progress of long runs (dpverify.parallel.progress): rich bars on a terminal, lines elsewhere."""

from __future__ import annotations

import io
import re

from dpverify.parallel import progress
from dpverify.parallel.progress import Progress, ProgressBar


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_bar_shows_counts_percent_and_is_erased_when_done():
    screen = Terminal()
    bar = ProgressBar("evaluating M", 4096, "datasets", stream=screen, delay=0)
    bar.update(1024)
    drawn = screen.getvalue()
    assert "evaluating M" in drawn and "1,024/4,096 datasets" in drawn and "25%" in drawn
    bar.close()
    assert screen.getvalue().endswith("\x1b[2K")  # transient: the line is cleared at the end


def test_a_bar_waits_for_its_delay():
    screen = Terminal()
    bar = ProgressBar("checking M", 10, "pairs", stream=screen, delay=60)
    for done in range(11):
        bar.update(done)
    bar.close()
    assert screen.getvalue() == ""  # a short stage draws nothing


def test_progress_true_off_a_terminal_writes_lines_only_for_a_stage_past_its_delay(monkeypatch, capsys):
    monkeypatch.setattr(progress, "_is_terminal", lambda stream: False)
    quick = Progress(True).stage("checking M", 12, "pairs")
    quick(12, 12)
    assert capsys.readouterr().err == ""  # finished before the delay: nothing in the log
    slow = Progress(True, delay=0).stage("checking M", 12, "pairs")
    slow(3, 12)
    slow(12, 12)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("checking M: 3/12 pairs (25%), ETA ")
    assert lines[-1] == "checking M: 12/12 pairs (100%)"


def test_progress_true_on_a_terminal_draws_a_bar(monkeypatch):
    screen = Terminal()
    made = []

    class Recording(ProgressBar):
        def __init__(self, label, total, unit, **kwargs):
            made.append((label, total, unit))
            super().__init__(label, total, unit, stream=screen, delay=0)

    monkeypatch.setattr(progress, "_is_terminal", lambda stream: True)
    monkeypatch.setattr(progress, "ProgressBar", Recording)
    meter = Progress(True)
    advance = meter.stage("evaluating M", 8, "datasets")
    advance(8, 8)
    meter.close()
    assert made == [("evaluating M", 8, "datasets")]
    assert "8/8 datasets" in screen.getvalue()


def test_a_callable_gets_a_line_per_delay_and_the_last_one():
    lines = []
    report = Progress(lines.append, delay=3600).stage("evaluating M", 2048, "datasets")
    report(1024, 2048)  # within the delay: no line
    report(2048, 2048)  # the end: always a line
    assert lines == ["evaluating M: 2,048/2,048 datasets (100%)"]
    assert Progress(None).stage("x", 1, "y") is None and not Progress(False).active


def test_run_audit_off_a_terminal_writes_a_line_per_row(monkeypatch, capsys):
    from dpverify import Verdict
    from dpverify.integrations.audit import AuditCase, Measurement, run_audit

    monkeypatch.setattr(progress, "_is_terminal", lambda stream: False)
    cases = [AuditCase(f"C{i}", "m", {"n": i}, lambda: Measurement(0.5, 0.0, 1.0, 0.0, Verdict.HOLDS)) for i in (1, 2)]
    run_audit(cases, progress=True)
    assert capsys.readouterr().err.splitlines() == ["[1/2] C1 m (n=1)", "[2/2] C2 m (n=2)"]


def test_run_audit_on_a_terminal_draws_one_bar_for_the_rows(monkeypatch):
    from dpverify import Verdict
    from dpverify.integrations.audit import AuditCase, Measurement, run_audit

    screen = Terminal()
    monkeypatch.setattr(progress, "_is_terminal", lambda stream: True)
    monkeypatch.setattr(progress.sys, "stderr", screen)
    monkeypatch.setattr(progress, "DELAY", 0.0)  # drawn at once
    cases = [AuditCase(f"C{i}", "m", {"n": i}, lambda: Measurement(0.5, 0.0, 1.0, 0.0, Verdict.HOLDS)) for i in (1, 2)]
    run_audit(cases, progress=True)
    drawn = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())
    assert "C1 m" in drawn and "0/2 rows" in drawn
