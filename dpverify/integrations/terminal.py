"""The audit table for people at a terminal, drawn with rich.

:func:`render_table` gives the table, the notes on assumed verdicts, the legend and the summary line
(counts of rows as expected, measured, unexpected, undecided) as text; :func:`print_table` prints
them: on a terminal wrapped at its width, verdicts in colour (green: as expected — ✓ a claim holds,
cyan ✗ a mutant caught —, dim: measured, yellow: UNDECIDED, red: not as expected); elsewhere (a
pipe, a file, a CI log) plain text wrapped at 100 columns, or with ``--wide`` one line per row,
nothing cut, for grep.
``NO_COLOR`` keeps the wrapping and drops the colour. rich is imported only when a table is drawn.
"""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Sequence
from typing import IO, Any

from dpverify.integrations.presentation import VERDICT_LEGEND, Counts, Kind, kind_of, legend, mark, number, symbol

__all__ = ["render_table", "print_table", "KIND_STYLES", "LOG_WIDTH"]

#: The rich style of each kind of verdict.
KIND_STYLES = {
    Kind.HOLDS: "green",
    Kind.CAUGHT: "cyan",
    Kind.MEASURED: "dim",
    Kind.UNDECIDED: "bold yellow",
    Kind.UNEXPECTED: "bold red",
}

#: Blanks at the end of a line, before any closing colour codes.
_TRAILING = re.compile(r"(?:\s|\x1b\[[0-9;]*m)+$")
_CODE = re.compile(r"\x1b\[[0-9;]*m")
#: Width given to rich when nothing may wrap (pipes, logs): far beyond any row.
_UNBOUNDED = 10_000
#: The width of the table in a pipe, a file or a CI log (``--wide``: one line per row, unbounded); from
#: this width on, each verdict stays whole on its line.
LOG_WIDTH = 100
#: The legend's width at most (prose reads best in short lines).
_PROSE = 100
#: The instance column's narrowest width before the instance moves under the mechanism.
_MIN_INSTANCE = 48
_HEAD = ("eps*", "claimed\neps", "delta*", "claimed\ndelta", "slack")


def _cells(row: Any) -> list[str]:
    m = row.measurement
    return [number(m.epsilon_star), number(m.claimed_epsilon), number(m.delta_star), number(m.claimed_delta),
            number(row.slack)]


def _table(rows: Sequence[Any], *, stacked: bool, ascii_only: bool, whole_verdict: bool = True) -> Any:
    """The rich Table: mechanism and instance in columns of their own, or ``stacked`` in one (the
    instance under the mechanism, for narrow terminals); ``whole_verdict``: each verdict on one line
    (a log is grepped for "NOT AS EXPECTED"), else folded at 10 characters (narrower terminals)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.ASCII2 if ascii_only else box.SIMPLE_HEAD, padding=0, pad_edge=False,
                  show_edge=False, header_style="bold")
    table.add_column("claim", no_wrap=True)
    if stacked:
        table.add_column("mechanism\ninstance", overflow="fold", min_width=16)
    else:
        table.add_column("mechanism", no_wrap=True)
        table.add_column("instance", overflow="fold", min_width=_MIN_INSTANCE)
    for head in _HEAD:
        table.add_column(head, justify="right", no_wrap=True)
    if whole_verdict or not stacked:
        table.add_column("verdict", no_wrap=True, min_width=10)
    else:
        table.add_column("verdict", max_width=10, min_width=10)
    table.add_column("s", justify="right", no_wrap=True)
    for r in rows:
        verdict = Text(mark(r, ascii_only=ascii_only), style=KIND_STYLES[kind_of(r)])
        if stacked:
            who = [Text.assemble((r.case.mechanism, "bold"), "\n", (r.case.instance, "dim"))]
        else:
            who = [Text(r.case.mechanism, style="bold"), Text(r.case.instance)]
        table.add_row(r.case.claim, *who, *_cells(r), verdict, f"{r.seconds:.2f}")
    return table


def _legend(rows: Sequence[Any], counts: Counts, *, ascii_only: bool) -> Any:
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column()
    for term, meaning in legend(rows):
        grid.add_row(term, meaning)
    marks = Text()
    for kind, state, meaning in VERDICT_LEGEND:
        if kind is Kind.UNEXPECTED and not counts.unexpected:
            continue
        if marks:
            marks.append("; ")
        marks.append(f"{symbol(state, ascii_only=ascii_only)} {meaning}", style=KIND_STYLES[kind].replace("bold ", ""))
    grid.add_row("verdict", marks)
    return grid


def _notes(rows: Sequence[Any]) -> list[str]:
    """The assumed verdicts: each row with what it assumes."""
    assumed = [r for r in rows if r.verdict.startswith("holds") and r.measurement.assuming]
    if not assumed:
        return []
    return ["holds, assuming: the verdict rests on an assumption the audit accepted, tested but not proved:",
            *(f"{r.case.claim} {r.case.mechanism} ({r.case.instance}): {r.measurement.assuming}" for r in assumed)]


def _statements(rows: Sequence[Any]) -> list[Any]:
    """The claims of rows that state them (an audit file's), once each: ``claim 1  <statement>
    (source: ...)``, as a grid that wraps; empty when no row states its claim."""
    from rich.table import Table
    from rich.text import Text

    seen: dict[str, str] = {}
    for r in rows:
        if r.case.statement and r.case.claim not in seen:
            source = f" (source: {r.case.source})" if r.case.source else ""
            seen[r.case.claim] = f"{r.case.statement}{source}"
    if not seen:
        return []
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column()
    for claim, text in seen.items():
        grid.add_row(f"claim {claim}", text)
    return [Text(""), grid]


def render_table(rows: Sequence[Any], *, width: int | None = None, color: bool = False,
                 ascii_only: bool = False) -> str:
    """The audit rows as text: table, notes, the claims stated (an audit file's), legend and summary line.

    Args:
        rows: :class:`~dpverify.integrations.audit.AuditRow` rows.
        width: the terminal's width: cells wrap to fit it (the instance goes under the mechanism
            when the columns cannot stand side by side). None: nothing wraps, one line per row.
        color: ANSI colours and bold (False: plain text).
        ascii_only: marks and rules in ASCII, for streams that cannot encode ✓.
    """
    from rich.console import Console, Group
    from rich.padding import Padding
    from rich.text import Text

    counts = Counts.of(rows)
    limit = _UNBOUNDED if width is None else max(width, 40)
    stacked = False
    if width is not None:
        measure = Console(file=io.StringIO(), width=_UNBOUNDED)
        stacked = measure.measure(_table(rows, stacked=False, ascii_only=ascii_only)).minimum > limit
    summary_style = "bold green" if counts.all_well else ("bold red" if counts.unexpected else "bold yellow")
    whole = width is None or width >= LOG_WIDTH
    parts: list[Any] = [_table(rows, stacked=stacked, ascii_only=ascii_only, whole_verdict=whole)]
    notes = _notes(rows)
    if notes:
        parts += [Text(""), Text(notes[0]), *(Padding(Text(note), (0, 0, 0, 2)) for note in notes[1:])]
    prose = [*_statements(rows), Text(""), _legend(rows, counts, ascii_only=ascii_only), Text(""), Text(counts.summary(), style=summary_style)]
    out = io.StringIO()
    for group, group_width in ((parts, limit), (prose, min(limit, _PROSE))):
        console = Console(file=out, width=group_width, force_terminal=color, color_system="standard" if color else None,
                          highlight=False, markup=False, emoji=False, soft_wrap=False, legacy_windows=False,
                          _environ={})
        console.print(Group(*group))
    return "\n".join(_TRAILING.sub(lambda end: "".join(_CODE.findall(end.group())), line)
                     for line in out.getvalue().splitlines())


def _encodes(stream: IO[str], text: str) -> bool:
    try:
        text.encode(getattr(stream, "encoding", None) or "utf-8")
    except (LookupError, UnicodeEncodeError):
        return False
    return True


def print_table(rows: Sequence[Any], file: IO[str] | None = None, *, wide: bool = False) -> None:
    """Print :func:`render_table` to ``file`` (default stdout): on a terminal in colour at its width
    (``NO_COLOR`` set: no colour), elsewhere plain at 100 columns (the instance under the mechanism
    when the columns cannot stand side by side); ``wide``: one line per row, nothing wrapped."""
    from rich.console import Console

    stream = sys.stdout if file is None else file
    console = Console(file=stream)
    terminal = console.is_terminal
    text = render_table(
        rows,
        width=None if wide else (console.width if terminal else LOG_WIDTH),
        color=terminal and not os.environ.get("NO_COLOR"),
        ascii_only=not _encodes(stream, "✓✗·─"),
    )
    print(text, file=stream)
