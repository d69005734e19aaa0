"""The audit table at a terminal and in logs (dpverify.integrations.terminal, presentation)."""

from __future__ import annotations

import io
import re

import pytest

from dpverify.integrations.audit import format_table
from dpverify.integrations.presentation import Counts, Kind, kind_of, mark
from dpverify.integrations.terminal import print_table, render_table
from tests.dpverify.integrations._report_rows import LONG_INSTANCE, SUMMARY, rows

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_every_row_has_one_kind_and_the_counts_add_up():
    table = rows()
    assert [kind_of(r) for r in table] == [Kind.HOLDS, Kind.CAUGHT, Kind.MEASURED, Kind.UNDECIDED, Kind.UNEXPECTED,
                                           Kind.UNEXPECTED]
    counts = Counts.of(table)
    assert (counts.rows, counts.as_expected, counts.measured, counts.unexpected, counts.undecided) == (6, 2, 1, 2, 1)
    assert counts.summary() == SUMMARY
    assert not counts.all_well


def test_marks_show_the_state_without_colour():
    table = rows()
    assert [mark(r) for r in table] == [
        "✓ holds", "✗ VIOLATED (expected)", "· measured", "? UNDECIDED (NOT AS EXPECTED)", "✗ VIOLATED (NOT AS EXPECTED)",
        "✓ holds (MUTANT MISSED)",
    ]
    assert mark(table[0], ascii_only=True) == "+ holds" and mark(table[1], ascii_only=True) == "x VIOLATED (expected)"


def test_in_a_log_each_row_is_one_whole_line_in_plain_text():
    text = format_table(rows())
    assert not ANSI.search(text)
    lines = text.splitlines()
    # the long instance (113 characters) is whole, on the line of its row, with the row's figures and verdict
    (first,) = [line for line in lines if "randomized_response" in line]
    assert len(LONG_INSTANCE) > 72 and LONG_INSTANCE in first
    assert re.search(r"RR\s+randomized_response\s+" + re.escape(LONG_INSTANCE) + r"\s+1\.099\s+1\.099\s+0\s+0\s+0\s+✓ holds\s+0\.01$",
                     first), first
    # slack of the leaky learner: claimed delta - delta* = 0.1 - 0.2 = -0.1
    (leaky,) = [line for line in lines if "leaky_learner" in line]
    assert re.search(r"1\.5\s+1\s+0\.2\s+0\.1\s+-0\.1\s+✗ VIOLATED \(NOT AS EXPECTED\)\s+0\.50$", leaky), leaky
    assert lines[-1] == SUMMARY


def test_the_legend_explains_the_columns():
    text = format_table(rows())
    assert "claimed eps  the epsilon the claim guarantees on this instance" in text
    assert "not the instance's own eps parameter" in text
    for term in ("eps*", "delta*", "slack"):
        assert re.search(rf"^{re.escape(term)}\s+the ", text, re.M), term
    assert "✗ VIOLATED (expected): a mutant caught" in text


def test_the_summary_is_printed_when_all_is_well():
    well = [r for r in rows() if kind_of(r) in (Kind.HOLDS, Kind.CAUGHT)]
    assert format_table(well).splitlines()[-1] == (
        "2 rows: 2 as expected (1 holds, 1 mutant caught), 0 measured, 0 unexpected, 0 undecided")


@pytest.mark.parametrize("width", [100, 120])
def test_at_a_terminal_width_cells_wrap_and_nothing_is_cut(width):
    text = render_table(rows(), width=width)
    lines = text.splitlines()
    assert max(map(len, lines)) <= width
    flat = " ".join(" ".join(lines).split())
    for word in LONG_INSTANCE.split():  # every word of the long instance is there, none cut
        assert word in flat, word
    for r in rows():
        assert r.case.mechanism in text
    assert lines[-1] == SUMMARY


def test_at_80_columns_long_words_fold_within_the_width():
    lines = render_table(rows(), width=80).splitlines()
    assert max(map(len, lines)) <= 80 and " ".join(lines[-2:]) == SUMMARY  # 87 characters: on two lines
    assert sum("randomized_response" in line for line in lines) == 1


def test_at_100_columns_the_instance_goes_under_the_mechanism():
    lines = render_table(rows(), width=100).splitlines()
    (at,) = [i for i, line in enumerate(lines) if "randomized_response" in line]
    assert lines[at].startswith("RR    randomized_response ") and "class=thresholds" not in lines[at]
    assert lines[at + 1].lstrip().startswith("class=thresholds, X=3,")
    # at 100 columns (a CI log's width) every verdict stays whole on its line, to be grepped
    assert any(line.rstrip().endswith("✗ VIOLATED (NOT AS EXPECTED)  0.50") for line in lines)


def test_at_200_columns_the_instance_stands_beside_the_mechanism():
    lines = render_table(rows(), width=200).splitlines()
    (first,) = [line for line in lines if "randomized_response" in line]
    assert re.match(r"RR\s+randomized_response\s+class=thresholds, X=3, n=12, n_prime=3, eta=1/3, eps=1/4,", first)
    assert first.endswith("0.01") and max(map(len, lines)) <= 200


def test_colours_by_kind():
    text = render_table(rows(), width=200, color=True)
    (holds,) = [line for line in text.splitlines() if "randomized_response" in line]
    (caught,) = [line for line in text.splitlines() if "mutant_without_half" in line]
    (leaky,) = [line for line in text.splitlines() if "leaky_learner" in line]
    assert "\x1b[32m✓ holds" in holds  # green
    assert "\x1b[36m✗ VIOLATED (expected)" in caught  # cyan: a mutant caught, told apart from a claim holding
    assert "\x1b[1;31m✗ VIOLATED (NOT AS EXPECTED)" in leaky  # bold red
    assert ANSI.sub("", text) == render_table(rows(), width=200)  # the colour adds nothing else


def test_print_table_is_plain_off_a_terminal_and_coloured_on_one(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.setenv("COLUMNS", "100")
    log = io.StringIO()
    print_table(rows(), log)  # a pipe or a CI log: plain, at 100 columns (issue 36: it was 217 wide)
    assert log.getvalue() == render_table(rows(), width=100) + "\n"
    assert max(len(line) for line in log.getvalue().splitlines()) <= 100
    wide = io.StringIO()
    print_table(rows(), wide, wide=True)  # --wide: one line per row, nothing wrapped, for grep
    assert wide.getvalue() == format_table(rows()) + "\n"
    screen = Terminal()
    print_table(rows(), screen)
    assert ANSI.search(screen.getvalue())
    assert max(len(line) for line in ANSI.sub("", screen.getvalue()).splitlines()) <= 100
    monkeypatch.setenv("NO_COLOR", "1")
    plain = Terminal()
    print_table(rows(), plain)
    assert plain.getvalue() == render_table(rows(), width=100) + "\n"  # wrapped at the terminal, no colour


def test_a_stream_that_cannot_encode_the_marks_gets_ascii():
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    print_table(rows(), stream)
    stream.flush()
    text = stream.buffer.getvalue().decode("ascii")
    assert "+ holds" in text and "x VIOLATED (expected)" in text and "- measured" in text
