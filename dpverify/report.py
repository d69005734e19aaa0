"""Audit reports: JSON (machine-readable, diffable) and Markdown (for people).

``write_reports(rows, directory)`` writes ``audit.json`` and ``audit.md``. The JSON document is
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

from dpverify.audit import AuditRow, format_table

__all__ = ["audit_document", "write_reports", "markdown_report"]


def audit_document(rows: Sequence[AuditRow]) -> dict[str, Any]:
    from dpverify import __version__

    return {
        "dpverify_version": __version__,
        "all_as_expected": all(r.as_expected for r in rows),
        "results": [r.to_json() for r in rows],
    }


def markdown_report(rows: Sequence[AuditRow]) -> str:
    lines = [
        "# dpverify audit",
        "",
        "Every claim of `CLAIMS.md` on its default instance, computed exactly (no sampling). "
        "`eps*` is the worst-case privacy loss over all neighbouring pairs; `delta*` the worst "
        "hockey-stick divergence at the claimed epsilon. Mutants (`mutant_*`) must violate the "
        "claim of the mechanism they break.",
        "",
        "| claim | mechanism | instance | eps* | claimed eps | delta* | claimed delta | verdict | seconds |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        m = r.measurement
        lines.append(
            f"| {r.case.claim} | `{r.case.mechanism}` | {r.case.instance} | {_fmt(m.epsilon_star)} | "
            f"{_fmt(m.claimed_epsilon)} | {_fmt(m.delta_star)} | {_fmt(m.claimed_delta)} | "
            f"{r.verdict} | {r.seconds:.2f} |"
        )
    sweeps = [r for r in rows if "sweep" in r.case.parameters]
    if sweeps:
        lines += [
            "",
            "## O(eps) sweeps",
            "",
            "The O(eps) claims as eps shrinks: the measured ratio eps*/eps beside the proof's explicit "
            "constant eps'/eps on the same instance, and for a (1, delta)-DP inner learner delta*/(eps delta) "
            "(read at the claimed eps' and at eps itself) beside the proof's 4 e k/(n eps). A bounded measured ratio is what "
            "O(eps) predicts; the proof's ratio is an upper bound.",
            "",
            "| sweep | class, abs X | eps | n | k | eps* | eps*/eps | claimed eps' | eps'/eps | "
            "delta*(eps')/(eps delta) | delta*(eps)/(eps delta) | delta'/(eps delta) | verdict |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for r in sweeps:
            p, m = r.case.parameters, r.measurement
            eps = float(p["epsilon"])
            lines.append(
                f"| {p['sweep']} | {p.get('concept_class')}, {p.get('domain_size')} | {_fmt(eps)} | {p.get('n')} | "
                f"{m.details.get('k', '')} | {_fmt(m.epsilon_star)} | {_fmt(m.epsilon_star / eps)} | "
                f"{_fmt(m.claimed_epsilon)} | {_fmt(m.claimed_epsilon / eps)} | "
                f"{_fmt(m.details.get('delta_star_over_epsilon_delta', '-'))} | "
                f"{_fmt(m.details.get('delta_at_epsilon_over_epsilon_delta', '-'))} | "
                f"{_fmt(m.details.get('claimed_delta_over_epsilon_delta', '-'))} | {r.verdict} |"
            )
    details = [r for r in rows if (r.measurement.details or r.measurement.witness) and "sweep" not in r.case.parameters]
    if details:
        lines += ["", "## Details", ""]
    for r in details:
        lines.append(f"### {r.case.claim} `{r.case.mechanism}` ({r.case.instance})")
        if r.case.description:
            lines += ["", r.case.description]
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


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return "inf" if value == float("inf") else f"{value:.6g}"
    return str(value)


def write_reports(rows: Sequence[AuditRow], directory: str | Path) -> list[Path]:
    """Write ``audit.json`` and ``audit.md`` under ``directory``; return the paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    json_path = directory / "audit.json"
    json_path.write_text(json.dumps(audit_document(rows), indent=2, default=str) + "\n")
    md_path = directory / "audit.md"
    md_path.write_text(markdown_report(rows))
    return [json_path, md_path]


__all__ += ["format_table"]
