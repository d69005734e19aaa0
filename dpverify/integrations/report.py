"""Audit reports: JSON (machine-readable, diffable), Markdown and HTML (for people).

``write_reports(rows, directory)`` writes ``audit.json``, ``audit.md`` and ``audit.html`` (the
table with inline SVG charts of the O(eps) sweeps and privacy profiles,
:mod:`~dpverify.integrations.html_report`). The Markdown and HTML reports open with the counts
and the legend of :mod:`~dpverify.integrations.presentation`. The JSON is the ``"audit"``
document of the JSON contract (:mod:`dpverify.integrations.contract`, docs/json.md): the header
(``schema_version``, ``document``, ``dpverify_version``, ``generated``), ``all_as_expected`` and
``results``, one object per row (:meth:`dpverify.integrations.audit.AuditRow.to_json`).

Reports written twice on unchanged code are byte-identical: when every non-volatile value of the
new document equals the one already in ``audit.json``, the volatile ones (:data:`VOLATILE_KEYS`,
:data:`VOLATILE_ROW_KEYS`: the run's date, each row's seconds) are taken from the file, and all
three reports are rendered from them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from dpverify.integrations import contract
from dpverify.integrations.audit import AuditRow, AuditTiming, SweepSeries, format_table
from dpverify.integrations.presentation import (
    INTRODUCTION,
    TITLE,
    VERDICT_LEGEND,
    Counts,
    Kind,
    generated_now,
    kind_of,
    legend,
    mark,
    series_groups,
    symbol,
)

__all__ = ["audit_document", "write_reports", "markdown_report", "html_report", "previous_seconds"]


#: Keys of the audit document that change from run to run on unchanged code: the date and how the
#: run went (rows at once, wall seconds); kept or replaced together with the rows' seconds, so a
#: header always describes the one run whose times the rows show.
VOLATILE_KEYS = ("generated", "jobs", "wall_seconds")
#: Keys of each row that change from run to run on unchanged code.
VOLATILE_ROW_KEYS = ("seconds",)


def audit_document(rows: Sequence[AuditRow], *, generated: str | None = None,
                   timing: AuditTiming | None = None, title: str | None = None,
                   description: str | None = None) -> dict[str, Any]:
    """The ``"audit"`` document of the JSON contract (``dpverify audit --format json``, audit.json);
    ``generated``: when the audit ran (default: now, :func:`~dpverify.integrations.presentation.generated_now`);
    ``timing``: the run's ``jobs`` and ``wall_seconds`` (left out when not given); ``title`` and
    ``description``: an audit file's heading (left out when not given)."""
    document: dict[str, Any] = {**contract.header("audit"), "generated": generated or generated_now()}
    if title is not None:
        document["title"] = title
        document["description"] = description or ""
    if timing is not None:
        document["jobs"] = timing.jobs
        document["wall_seconds"] = round(timing.wall_seconds, 2)
    document["all_as_expected"] = all(r.as_expected for r in rows)
    document["results"] = [r.to_json() for r in rows]
    return document


def previous_seconds(path: str | Path) -> dict[str, float]:
    """Each row's seconds in the audit document at ``path`` (an ``audit.json``), by row
    (:attr:`~dpverify.integrations.audit.AuditCase.key`): the cost hints of ``run_audit(jobs=...)``.
    Empty when the file is missing or not an audit document."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
        results = document["results"]
        return {f"{row['claim']}/{row['mechanism']} ({row['instance']})": float(row["seconds"]) for row in results}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _timing(document: dict[str, Any]) -> AuditTiming | None:
    """The timing a document records (None when it has none)."""
    if isinstance(document.get("jobs"), int) and isinstance(document.get("wall_seconds"), (int, float)):
        return AuditTiming(document["jobs"], float(document["wall_seconds"]))
    return None


def markdown_report(rows: Sequence[AuditRow], *, timing: AuditTiming | None = None, title: str | None = None,
                    description: str | None = None) -> str:
    """The audit in Markdown: the title (an audit file's ``title`` and ``description``, else the
    registered audits'), the counts, the run's time (wall time with ``timing``, and the row time
    summed), the legend, the table (verdicts marked ✓ holds, ✗ VIOLATED (expected), · measured; a
    row not as expected in bold), each sweep's table, the details (claim statements and witnesses)."""
    counts = Counts.of(rows)
    row_time = f"{sum(r.seconds for r in rows):.1f} s of row time"
    lines = [
        f"# {title or TITLE}",
        "",
        f"**{counts.summary()}.**",
        "",
        (timing.describe(rows) if timing is not None else f"{len(rows)} rows, {row_time}") + ".",
        "",
        *([description, ""] if title is not None and description else []),
        ("Every row is computed exactly" if title is not None else f"{INTRODUCTION}, computed exactly")
        + " (no sampling). A mutant must violate the claim of the mechanism it breaks (its parent, named in the "
        "details); measured rows report figures without a verdict.",
        "",
        *(f"- `{term}`: {meaning}" for term, meaning in legend(rows)),
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
        if r.case.statement:
            lines += ["", f"Claim {r.case.claim}: {r.case.statement}" + (f" (source: {r.case.source})" if r.case.source else "")]
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


def write_reports(rows: Sequence[AuditRow], directory: str | Path, *, timing: AuditTiming | None = None,
                  title: str | None = None, description: str | None = None) -> list[Path]:
    """Write ``audit.json``, ``audit.md`` and ``audit.html`` under ``directory``; return the paths.

    When ``audit.json`` already holds this audit with equal non-volatile values, its volatile ones
    (each row's seconds, the document's date, the run's jobs and wall time) are kept, so the three
    files come out byte-identical whatever ``--jobs`` this run had. ``title`` and ``description``:
    an audit file's heading (default: the registered audits').
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    json_path = directory / "audit.json"
    heading = {"title": title, "description": description}
    rows, document = _stabilised(rows, json_path, timing, heading)
    # the Markdown and HTML show the seconds as the JSON holds them (rounded): a later run that keeps
    # them reads them back from the JSON, and must draw the same bytes (1.7951 s and 1.795 s print
    # as 1.80 and 1.79)
    rows = [replace(row, seconds=written["seconds"]) for row, written in zip(rows, document["results"])]
    timing = _timing(document)
    json_path.write_text(contract.dumps(document) + "\n", encoding="utf-8")
    md_path = directory / "audit.md"
    md_path.write_text(markdown_report(rows, timing=timing, **heading), encoding="utf-8")  # marks: ✓ ✗ ·
    html_path = directory / "audit.html"
    html_path.write_text(html_report(rows, generated=document["generated"], timing=timing, directory=directory,
                                     **heading), encoding="utf-8")
    return [json_path, md_path, html_path]


__all__ += ["format_table"]


def _stabilised(rows: Sequence[AuditRow], path: Path, timing: AuditTiming | None = None,
                heading: dict[str, str | None] | None = None) -> tuple[list[AuditRow], dict[str, Any]]:
    """``rows`` and their document, with the volatile values of the document at ``path`` when every
    other value is equal (compared as JSON, the way the file holds them) and it has each volatile
    key the new one has (else the new values, all of them: a header never mixes two runs)."""
    rows = list(rows)
    heading = heading or {}
    document = audit_document(rows, timing=timing, **heading)
    try:
        previous = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return rows, document
    if not isinstance(previous, dict) or _stable_part(previous) != _stable_part(json.loads(contract.dumps(document))):
        return rows, document
    if not all(key in previous for key in VOLATILE_KEYS if key in document):
        return rows, document
    rows = [replace(row, seconds=_seconds(old, row.seconds)) for row, old in zip(rows, previous["results"])]
    kept = _timing(previous) if "jobs" in previous or "wall_seconds" in previous else timing
    generated = previous.get("generated")
    return rows, audit_document(rows, generated=generated if isinstance(generated, str) else None, timing=kept,
                                **heading)


def _seconds(row: dict[str, Any], default: float) -> float:
    value = row.get("seconds")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def _stable_part(document: dict[str, Any]) -> Any:
    """The document without its volatile values (None if it is not an audit document of rows)."""
    results = document.get("results")
    if not isinstance(results, list) or not all(isinstance(row, dict) for row in results):
        return None
    head = {key: value for key, value in document.items() if key not in VOLATILE_KEYS and key != "results"}
    body = [{key: value for key, value in row.items() if key not in VOLATILE_ROW_KEYS} for row in results]
    return head, body


def html_report(rows: Sequence[AuditRow], *, generated: str | None = None, timing: AuditTiming | None = None,
                title: str | None = None, description: str | None = None, directory: str | Path | None = None) -> str:
    """The audit as one self-contained HTML page (:func:`dpverify.integrations.html_report.audit_page`):
    the title (an audit file's ``title`` and ``description``, else the registered audits'), version,
    ``generated`` (default: now) and the verdict in the header; a summary (what was checked, what
    failed, what was assumed); each claim with its source; the table with each row's claim statement
    and coloured verdict; the witness of every VIOLATED row; every assumption with its status; charts
    of the O(eps) sweeps (measured eps*/eps against the claim's ratio) and of the privacy profiles
    recorded by the rows (the claim marked), each linked from its rows and back. ``directory``:
    where the page is written (links to sources are made relative to it)."""
    from dpverify.integrations.html_report import audit_page

    return audit_page(rows, generated=generated, timing=timing, title=title, description=description,
                      directory=directory)
