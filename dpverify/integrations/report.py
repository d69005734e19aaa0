"""Audit reports: JSON (machine-readable, diffable), Markdown and HTML (for people).

``write_reports(rows, directory)`` writes ``audit.json``, ``audit.md`` and ``audit.html`` (the
table with inline SVG charts of the O(eps) sweeps and privacy profiles,
:mod:`~dpverify.integrations.html_report`). The Markdown and HTML reports open with the counts
and the legend of :mod:`~dpverify.integrations.presentation`. The JSON document is
``{"dpverify_version": ..., "all_as_expected": bool, "results": [row, ...]}`` where each row has
the keys ``claim``, ``mechanism``, ``parameters``, ``epsilon_star``, ``delta_star``,
``claimed_epsilon``, ``claimed_delta``, ``holds``, ``seconds`` (plus ``expected_violation``,
``measured_only``, ``as_expected``, ``description``, ``witness`` and ``details``). Infinite values
are written as the string ``"inf"``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dpverify.integrations.audit import AuditRow, SweepSeries, format_table
from dpverify.integrations.presentation import (
    LEGEND,
    VERDICT_LEGEND,
    Counts,
    Kind,
    kind_of,
    mark,
    series_groups,
    symbol,
)

__all__ = ["audit_document", "write_reports", "markdown_report", "html_report"]


def audit_document(rows: Sequence[AuditRow]) -> dict[str, Any]:
    from dpverify import __version__

    return {
        "dpverify_version": __version__,
        "all_as_expected": all(r.as_expected for r in rows),
        "results": [r.to_json() for r in rows],
    }


def markdown_report(rows: Sequence[AuditRow]) -> str:
    """The audit in Markdown: the counts, the legend, the table (verdicts marked ✓ holds,
    ✗ VIOLATED (expected), · measured; a row not as expected in bold), each sweep's table, the details."""
    counts = Counts.of(rows)
    lines = [
        "# dpverify audit",
        "",
        f"**{counts.summary()}.**",
        "",
        "Every registered claim on its default instance, computed exactly (no sampling). A mutant must violate "
        "the claim of the mechanism it breaks (its parent, named in the details); measured rows report figures "
        "without a verdict.",
        "",
        *(f"- `{term}`: {meaning}" for term, meaning in LEGEND),
        *(f"- {symbol(state)} {meaning}" for kind, state, meaning in VERDICT_LEGEND
          if kind is not Kind.UNEXPECTED or counts.unexpected),
        "",
        "| claim | mechanism | instance | eps* | claimed eps | delta* | claimed delta | slack | verdict | seconds |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        m = r.measurement
        lines.append(
            f"| {r.case.claim} | `{r.case.mechanism}` | {r.case.instance} | {_fmt(m.epsilon_star)} | "
            f"{_fmt(m.claimed_epsilon)} | {_fmt(m.delta_star)} | {_fmt(m.claimed_delta)} | "
            f"{_fmt(r.slack)} | {_verdict(r)} | {r.seconds:.2f} |"
        )
    for series, group in _series(rows).items():
        x = series.variable
        lines += [
            "",
            f"## Sweep: {series.name}",
            "",
            f"The measured ratio eps*/{x} beside the claim's own ratio as {x} shrinks: a bounded measured "
            "ratio is what an O(.) claim predicts; the claim's explicit constant is an upper bound.",
            "",
            "| " + " | ".join([x, *series.columns, "eps*", f"eps*/{x}", "claimed eps", f"claimed/{x}", "verdict"]) + " |",
            "|" + " --- |" * (len(series.columns) + 6),
        ]
        for r in group:
            m, value = r.measurement, float(r.case.parameters[x])
            extra = [_fmt(m.details.get(c, r.case.parameters.get(c, "-"))) for c in series.columns]
            lines.append("| " + " | ".join([
                _fmt(value), *extra, _fmt(m.epsilon_star), _fmt(m.epsilon_star / value),
                _fmt(m.claimed_epsilon), _fmt(m.claimed_epsilon / value), _verdict(r)]) + " |")
    details = [r for r in rows if (r.measurement.details or r.measurement.witness or r.measurement.assumptions)
               and r.case.sweep is None]
    if details:
        lines += ["", "## Details", ""]
    for r in details:
        lines.append(f"### {r.case.claim} `{r.case.mechanism}` ({r.case.instance})")
        if r.case.description:
            lines += ["", r.case.description]
        if r.case.parent:
            lines += ["", f"Mutant of `{r.case.parent}` (checked against its claim)."]
        if r.measurement.assuming and r.measurement.holds:
            lines += ["", f"**Holds, {r.measurement.assuming}.**"]
        for assumption in r.measurement.assumptions:
            lines += ["", f"- assumption: {assumption}"]
        for key, value in r.measurement.details.items():
            if isinstance(value, list) and value and isinstance(value[0], dict):
                columns = list(value[0])
                lines += ["", f"{key}:", "", "| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
                lines += ["| " + " | ".join(_fmt(row.get(c)) for c in columns) + " |" for row in value]
            else:
                lines += ["", f"- {key}: {_fmt(value)}"]
        if r.measurement.witness:
            lines += ["", "Witness:", "", "```", r.measurement.witness, "```"]
        lines.append("")
    return "\n".join(lines) + "\n"


def _series(rows: Sequence[AuditRow]) -> dict[SweepSeries, list[AuditRow]]:
    """The rows of each sweep series, in order of first appearance."""
    return series_groups(rows)


def _verdict(row: AuditRow) -> str:
    """The verdict with its mark; in bold when the row is not as expected or UNDECIDED."""
    shown = mark(row)
    return f"**{shown}**" if kind_of(row) in (Kind.UNEXPECTED, Kind.UNDECIDED) else shown


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if value != value:  # nan: a figure not computed
            return "n/a"
        return "inf" if value == float("inf") else f"{value:.6g}"
    return str(value)


def write_reports(rows: Sequence[AuditRow], directory: str | Path) -> list[Path]:
    """Write ``audit.json``, ``audit.md`` and ``audit.html`` under ``directory``; return the paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    json_path = directory / "audit.json"
    json_path.write_text(json.dumps(audit_document(rows), indent=2, default=str) + "\n")
    md_path = directory / "audit.md"
    md_path.write_text(markdown_report(rows))
    html_path = directory / "audit.html"
    html_path.write_text(html_report(rows))
    return [json_path, md_path, html_path]


__all__ += ["format_table"]


def html_report(rows: Sequence[AuditRow], *, generated: str | None = None) -> str:
    """The audit as one self-contained HTML page (:func:`dpverify.integrations.html_report.audit_page`):
    version, ``generated`` (default: now) and counts in the header, the legend, the table with
    coloured verdicts, charts of the O(eps) sweeps (measured eps*/eps against the claim's ratio) and
    of the privacy profiles recorded by the rows, each linked from its rows and back."""
    from dpverify.integrations.html_report import audit_page

    return audit_page(rows, generated=generated)
