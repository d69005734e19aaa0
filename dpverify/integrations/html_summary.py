"""The top of the audit page, what a reviewer reads first: what was checked, what failed, what was assumed.

:func:`summary_section` says, in three entries, what the audit checked (rows, claims, mechanisms,
how many assert a claim, how many are mutants that must be caught, how many are measured only),
what failed (every row not as expected or UNDECIDED, linked; the VIOLATED rows and their
witnesses) and what the verdicts assumed (the accepted assumptions, linked; how many were proved or
refuted). :func:`claims_table` lists each claim once: its source (linked to the claims ledger or
the paper when the row has a link, the user's own words otherwise), its rows and their outcome.

Rows are :class:`~dpverify.integrations.audit.AuditRow` read by attribute.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dpverify.integrations.html_evidence import assumption_counts, row_label, source_html, violated
from dpverify.integrations.presentation import Counts, Kind, kind_of, mark
from dpverify.verdict.engine import Verdict

__all__ = ["summary_section", "claims_table", "outcome"]


def _plural(count: int, one: str, many: str) -> str:
    return f"{count:,} {one if count == 1 else many}"


def outcome(counts: Counts) -> str:
    """``"16 hold, 3 mutants caught"``: the non-zero counts of a group of rows."""
    parts = [
        (counts.holds, "holds", "hold"), (counts.caught, "mutant caught", "mutants caught"),
        (counts.measured, "measured", "measured"), (counts.unexpected, "not as expected", "not as expected"),
        (counts.undecided, "undecided", "undecided"),
    ]
    return ", ".join(_plural(count, one, many) for count, one, many in parts if count)


def _links(found: Sequence[tuple[int, Any]], *, witness: bool = False) -> str:
    items = []
    for n, r in found:
        item = f'<a href="#row-{n}">{row_label(n, r)}</a> ({html.escape(mark(r))})'
        if witness and r.measurement.verdict is Verdict.VIOLATED:
            item += f', <a href="#witness-{n}">witness</a>'
        items.append(f"<li>{item}</li>")
    return "<ul>" + "".join(items) + "</ul>"


def _checked(rows: Sequence[Any]) -> str:
    claims = list(dict.fromkeys(r.case.claim for r in rows))
    mechanisms = {r.case.mechanism for r in rows}
    mutants = sum(r.case.expect_violation for r in rows)
    measured = sum(r.case.measured_only for r in rows)
    asserted = len(rows) - mutants - measured
    return (f"{_plural(len(rows), 'row', 'rows')}: {_plural(len(claims), 'claim', 'claims')} "
            f"(<a href=\"#claims\">listed below</a>) on {_plural(len(mechanisms), 'mechanism', 'mechanisms')}, each on "
            "its instance, computed exactly (every neighbouring pair, no sampling). "
            f"{_plural(asserted, 'row asserts', 'rows assert')} that a claim holds; "
            f"{_plural(mutants, 'row is a mutant', 'rows are mutants')}, a mechanism broken on purpose that must "
            f"violate its parent's claim; {_plural(measured, 'row reports', 'rows report')} figures only.")


def _failed(rows: Sequence[Any]) -> str:
    numbered = list(enumerate(rows, 1))
    wrong = [(n, r) for n, r in numbered if kind_of(r) is Kind.UNEXPECTED]
    open_ = [(n, r) for n, r in numbered if kind_of(r) is Kind.UNDECIDED]
    parts = []
    if wrong:
        parts.append(f"<strong>{_plural(len(wrong), 'row is', 'rows are')} not as expected</strong> (a claim "
                     f"violated, or a mutant that holds):{_links(wrong, witness=True)}")
    if open_:
        parts.append(f"<strong>{_plural(len(open_), 'row is', 'rows are')} UNDECIDED</strong> (neither proved nor "
                     f"refuted):{_links(open_)}")
    if not parts:
        parts.append("Nothing unexpected: every claim asserted to hold holds and every mutant is caught.")
    broken = violated(rows)
    if broken:
        caught = sum(kind_of(r) is Kind.CAUGHT for _, r in broken)
        mutants = "a mutant" if caught == 1 else "mutants"
        parts.append(f"{_plural(len(broken), 'row is', 'rows are')} VIOLATED ({caught:,} of them {mutants}, as "
                     "expected), each with its witness: the two datasets, the event and the inequality it breaks "
                     "(<a href=\"#witnesses\">witnesses</a>).")
    return " ".join(parts)


def _assumed(rows: Sequence[Any]) -> str:
    statuses = assumption_counts(rows)
    if not any(statuses.values()):
        return "Nothing: no verdict rests on an assumption."
    accepted: dict[str, list[int]] = {}  # what is assumed -> the rows whose passing verdict rests on it
    for n, r in enumerate(rows, 1):
        if r.measurement.holds:
            for a in r.measurement.assumptions:
                if str(a.status) == "accepted":
                    accepted.setdefault(a.statement, []).append(n)
    parts = []
    if accepted:
        items = "".join(f"<li>{html.escape(statement)}: {_plural(len(numbers), 'row', 'rows')} "
                        + ", ".join(f'<a href="#row-{n}">{n}</a>' for n in numbers) + "</li>"
                        for statement, numbers in accepted.items())
        count = sum(len(numbers) for numbers in accepted.values())
        parts.append(f"{_plural(count, 'verdict holds', 'verdicts hold')} assuming what was tested but not proved "
                     f"(each says \"holds, assuming\"):<ul>{items}</ul>")
    else:
        parts.append("No verdict holds on an assumption that was not proved.")
    tally = ", ".join(f"{count:,} {status}" for status, count in statuses.items() if count)
    parts.append(f"All assumptions: {tally} (<a href=\"#assumptions\">each, with what was checked</a>).")
    return " ".join(parts)


def summary_section(rows: Sequence[Any]) -> str:
    """The summary: checked, failed, assumed (a ``<dl>`` in ``<section id="summary">``)."""
    entries = (("Checked", _checked(rows)), ("Failed", _failed(rows)), ("Assumed", _assumed(rows)))
    items = "\n".join(f"<dt>{term}</dt><dd>{text}</dd>" for term, text in entries)
    return f'<section id="summary" aria-label="summary"><dl class="summary">\n{items}\n</dl></section>'


def claims_table(rows: Sequence[Any], base: Path | None = None) -> str:
    """Each claim once, in table order: its source, its rows (linked to the first) and their outcome."""
    groups: dict[str, list[tuple[int, Any]]] = {}
    for n, r in enumerate(rows, 1):
        groups.setdefault(r.case.claim, []).append((n, r))
    lines = []
    for claim, group in groups.items():
        sources = list(dict.fromkeys(source_html(r.case, base) for _, r in group if r.case.source))
        first = group[0][0]
        kinds = Counts.of(r for _, r in group)
        flag = ' class="unexpected"' if kinds.unexpected or kinds.undecided else ""
        lines.append(f'<tr{flag}><td><a href="#row-{first}">{html.escape(claim)}</a></td>'
                     f"<td>{'<br>'.join(sources) or '&mdash;'}</td><td class=\"num\">{len(group)}</td>"
                     f"<td>{html.escape(outcome(kinds))}</td></tr>")
    return ('<h2 id="claims">Claims checked</h2>\n'
            '<div class="scroll" role="region" aria-label="claims" tabindex="0"><table class="audit claims"><thead><tr>'
            '<th scope="col">claim</th><th scope="col">source</th><th class="num" scope="col">rows</th>'
            '<th scope="col">outcome</th></tr></thead><tbody>\n' + "\n".join(lines) + "\n</tbody></table></div>")
