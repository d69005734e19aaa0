"""Audit reports: JSON (machine-readable, diffable) and Markdown (for people).

``write_reports(rows, directory)`` writes ``audit.json``, ``audit.md`` and ``audit.html`` (the
table with inline SVG plots of the O(eps) sweeps and privacy profiles). The JSON is the ``"audit"``
document of the JSON contract (:mod:`dpverify.integrations.contract`, docs/json.md): the header
(``schema_version``, ``document``, ``dpverify_version``), ``all_as_expected`` and ``results``, one
object per row (:meth:`dpverify.integrations.audit.AuditRow.to_json`).

Reports written twice on unchanged code are byte-identical: when every non-volatile value of the
new document equals the one already in ``audit.json``, the volatile ones (:data:`VOLATILE_KEYS`,
:data:`VOLATILE_ROW_KEYS`: the run's date, each row's seconds) are taken from the file, and all
three reports are rendered from them.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from dpverify.integrations import contract
from dpverify.integrations.audit import AuditRow, SweepSeries, format_table

__all__ = ["audit_document", "write_reports", "markdown_report", "html_report"]


#: Keys of the audit document that change from run to run on unchanged code.
VOLATILE_KEYS = ("generated",)
#: Keys of each row that change from run to run on unchanged code.
VOLATILE_ROW_KEYS = ("seconds",)


def audit_document(rows: Sequence[AuditRow]) -> dict[str, Any]:
    """The ``"audit"`` document of the JSON contract (``dpverify audit --format json``, audit.json)."""
    return {
        **contract.header("audit"),
        "all_as_expected": all(r.as_expected for r in rows),
        "results": [r.to_json() for r in rows],
    }


def markdown_report(rows: Sequence[AuditRow]) -> str:
    lines = [
        "# dpverify audit",
        "",
        "Every registered claim on its default instance, computed exactly (no sampling). "
        "`eps*` is the worst-case privacy loss over all neighbouring pairs (for a stability claim the "
        "measured stability, as the row's details say); `delta*` the worst hockey-stick divergence at the "
        "claimed epsilon; `slack` the distance to the claim (claimed delta - delta* for (eps, delta) "
        "claims, claimed eps - eps* otherwise). A mutant must violate the claim of the mechanism it "
        "breaks (its parent, named in the details); measured rows report figures without a verdict.",
        "",
        "| claim | mechanism | instance | eps* | claimed eps | delta* | claimed delta | slack | verdict | seconds |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        m = r.measurement
        lines.append(
            f"| {r.case.claim} | `{r.case.mechanism}` | {r.case.instance} | {_fmt(m.epsilon_star)} | "
            f"{_fmt(m.claimed_epsilon)} | {_fmt(m.delta_star)} | {_fmt(m.claimed_delta)} | "
            f"{_fmt(r.slack)} | {r.verdict} | {r.seconds:.2f} |"
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
                _fmt(m.claimed_epsilon), _fmt(m.claimed_epsilon / value), r.verdict]) + " |")
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
    groups: dict[SweepSeries, list[AuditRow]] = {}
    for r in rows:
        if r.case.sweep is not None:
            groups.setdefault(r.case.sweep, []).append(r)
    return groups


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if value != value:  # nan: a figure not computed
            return "n/a"
        return "inf" if value == float("inf") else f"{value:.6g}"
    return str(value)


def write_reports(rows: Sequence[AuditRow], directory: str | Path) -> list[Path]:
    """Write ``audit.json``, ``audit.md`` and ``audit.html`` under ``directory``; return the paths.

    When ``audit.json`` already holds this audit with equal non-volatile values, its volatile ones
    (each row's seconds, the document's date) are kept, so the three files come out byte-identical.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    json_path = directory / "audit.json"
    rows, document = _stabilised(rows, json_path)
    json_path.write_text(contract.dumps(document) + "\n", encoding="utf-8")
    md_path = directory / "audit.md"
    md_path.write_text(markdown_report(rows))
    html_path = directory / "audit.html"
    html_path.write_text(html_report(rows))
    return [json_path, md_path, html_path]


__all__ += ["format_table"]


def _stabilised(rows: Sequence[AuditRow], path: Path) -> tuple[list[AuditRow], dict[str, Any]]:
    """``rows`` and their document, with the volatile values of the document at ``path`` when every
    other value is equal (compared as JSON, the way the file holds them)."""
    rows = list(rows)
    document = audit_document(rows)
    try:
        previous = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return rows, document
    if not isinstance(previous, dict) or _stable_part(previous) != _stable_part(json.loads(contract.dumps(document))):
        return rows, document
    rows = [replace(row, seconds=_seconds(old, row.seconds)) for row, old in zip(rows, previous["results"])]
    document = audit_document(rows)
    for key in VOLATILE_KEYS:
        if key in previous:
            document[key] = previous[key]
    return rows, document


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


def _svg_chart(title: str, series: dict[str, list[tuple[float, float]]], *, x_label: str, y_label: str) -> str:
    """A small self-contained SVG line chart (no plotting library needed)."""
    width, height, pad = 520, 300, 50
    points = [p for values in series.values() for p in values if math.isfinite(p[1])]
    if not points:
        return ""
    x_min, x_max = min(p[0] for p in points), max(p[0] for p in points)
    y_min, y_max = 0.0, max(p[1] for p in points) * 1.05 or 1.0
    x_span = (x_max - x_min) or 1.0

    def sx(x: float) -> float:
        return pad + (x - x_min) / x_span * (width - 2 * pad)

    def sy(y: float) -> float:
        return height - pad - (y - y_min) / (y_max - y_min) * (height - 2 * pad)

    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" aria-label="{html.escape(title)}">',
        f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="14">{html.escape(title)}</text>',
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="black"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>',
        f'<text x="{width / 2}" y="{height - 12}" text-anchor="middle" font-size="12">{html.escape(x_label)}</text>',
        f'<text x="14" y="{height / 2}" text-anchor="middle" font-size="12" transform="rotate(-90 14 {height / 2})">{html.escape(y_label)}</text>',
    ]
    for tick in range(5):
        y = y_min + (y_max - y_min) * tick / 4
        x = x_min + x_span * tick / 4
        parts.append(f'<text x="{pad - 6}" y="{sy(y) + 4:.1f}" text-anchor="end" font-size="10">{y:.3g}</text>')
        parts.append(f'<text x="{sx(x):.1f}" y="{height - pad + 14}" text-anchor="middle" font-size="10">{x:.3g}</text>')
    for index, (name, values) in enumerate(series.items()):
        colour = colours[index % len(colours)]
        finite = [(x, y) for x, y in sorted(values) if math.isfinite(y)]
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in finite)
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{path}"/>')
        parts += [f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{colour}"/>' for x, y in finite]
        parts.append(f'<text x="{width - pad - 150}" y="{pad + 14 * index}" font-size="11" fill="{colour}">{html.escape(name)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def html_report(rows: Sequence[AuditRow]) -> str:
    """The audit as one self-contained HTML page: the table, the O(eps) sweep plots (measured
    eps*/eps against the proof's eps'/eps) and the privacy profiles recorded by the rows."""
    head = ["claim", "mechanism", "instance", "eps*", "claimed eps", "delta*", "claimed delta", "verdict", "seconds"]
    body = []
    for r in rows:
        m = r.measurement
        cells = [r.case.claim, r.case.mechanism, r.case.instance, _fmt(m.epsilon_star), _fmt(m.claimed_epsilon),
                 _fmt(m.delta_star), _fmt(m.claimed_delta), r.verdict, f"{r.seconds:.2f}"]
        style = "" if r.as_expected else ' style="background:#fdd"'
        body.append(f"<tr{style}>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    assumed = [r for r in rows if r.measurement.holds and r.measurement.assuming]
    notes = ""
    if assumed:
        notes = "<h2>Holds, assuming</h2><p>Verdicts resting on an assumption the audit accepted, tested but not proved:</p><ul>\n" + "\n".join(
            f"<li>{html.escape(f'{r.case.claim} {r.case.mechanism} ({r.case.instance}): {r.measurement.assuming}')}</li>"
            for r in assumed) + "</ul>\n"
    charts = []
    for series, group in _series(rows).items():
        x = series.variable
        measured = [(float(r.case.parameters[x]), r.measurement.epsilon_star / float(r.case.parameters[x])) for r in group]
        claimed = [(float(r.case.parameters[x]), r.measurement.claimed_epsilon / float(r.case.parameters[x])) for r in group]
        charts.append(_svg_chart(f"{series.name}: ratio to {x}", {f"measured eps*/{x}": measured, f"claimed/{x}": claimed},
                                 x_label=x, y_label="ratio"))
    for r in rows:
        profile = r.measurement.details.get("privacy_profile")
        if profile:
            charts.append(_svg_chart(f"privacy profile delta(eps): {r.case.claim} {r.case.mechanism} ({r.case.instance})",
                                     {"worst-case delta(eps)": [(p["epsilon"], p["delta"]) for p in profile]},
                                     x_label="eps", y_label="delta"))
    return (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>dpverify audit</title>"
        "<style>body{font-family:sans-serif;margin:2em} table{border-collapse:collapse} "
        "td,th{border:1px solid #ccc;padding:3px 6px;font-size:13px}</style></head><body>\n"
        "<h1>dpverify audit</h1><p>Every claim on its default instance, computed exactly (no sampling). "
        "Rows not as expected are shaded red.</p>\n<table><tr>"
        + "".join(f"<th>{h}</th>" for h in head) + "</tr>\n" + "\n".join(body) + "</table>\n" + notes + "<h2>Plots</h2>\n"
        + "\n".join(charts) + "\n</body></html>\n"
    )
