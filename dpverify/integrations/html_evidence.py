"""The evidence behind verdicts, as HTML: witnesses, assumptions, and where each claim comes from.

* :func:`witness_table` — a :class:`~dpverify.verdict.witness.Witness` as a table: the two
  neighbouring datasets D and D' (on :data:`MARKED_FROM` records or more, the records in which they
  differ marked, :func:`differing`, and named: ``record 3 of 8 differs``), the output set S, both
  probabilities and the inequality they break, ``P[M(D) in S] > e^eps P[M(D') in S] + delta``. The audit page and the
  ``check --report`` page (:mod:`~dpverify.integrations.check_report`) both use it.
* :func:`witness_section` — the audit page's witnesses: one per VIOLATED row (``witness-N`` for row
  N), linked from the row and back to it.
* :func:`assumption_section` — every assumption a row's verdict could rest on, with its status
  (proved, accepted, refuted, unproved) and what was checked.
* :func:`source_html` — a row's source (``AuditCase.source``), linked when it has a link
  (``AuditCase.source_link``): a URL as given, a file path written relative to the report.

Rows are :class:`~dpverify.integrations.audit.AuditRow` read by attribute (this module sits below
the audit in the import graph). Numbers are shown to 12 significant digits, with the exact value
beside them when it is short (``1/4``, ``log(3)``); a certified enclosure is shown as it is.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any
from urllib.parse import quote

from dpverify.integrations.presentation import kind_of, mark
from dpverify.verdict.engine import Verdict
from dpverify.verdict.privacy_loss import exp_epsilon

__all__ = ["witness_rows", "witness_table", "witness_section", "violated", "assumption_section", "assumption_counts",
           "source_html", "statement_html", "row_label", "differing", "MARKED_FROM", "STATUS_MEANING"]

#: Outcomes of an event shown before it is cut (with the count of the rest).
SHOWN_OUTCOMES = 20
#: Datasets of this many records or more (the larger of D and D') have the records in which they
#: differ marked and named; on one or two records the difference is read at a glance.
MARKED_FROM = 3
#: An exact value longer than this is not shown beside its decimal (a float's binary expansion is).
SHORT_EXACT = 40


def _is_interval(value: Any) -> bool:
    return hasattr(value, "mid") and hasattr(value, "a") and hasattr(value, "b")


def _float(value: Any) -> float:
    return float(value.mid) if _is_interval(value) else float(value)


def _exact(value: Any) -> str:
    """`` (exactly 1/4)`` for a short exact value; `` (certified in [a, b])`` for an enclosure; ``""``
    for a float, an int, or a float's binary expansion (a fraction over a power of two above 2^10)."""
    if isinstance(value, (float, int)):
        return ""
    if isinstance(value, Fraction) and value.denominator > 1024 and value.denominator & (value.denominator - 1) == 0:
        return ""
    if _is_interval(value):
        return f" (certified in {value})"
    text = str(value)
    if len(text) > SHORT_EXACT or text == f"{float(value):.12g}":
        return ""
    return f" (exactly {text})"


def _outcomes(output_set: Any) -> str:
    outcomes = sorted(output_set, key=repr)
    shown = ", ".join(map(repr, outcomes[:SHOWN_OUTCOMES]))
    more = f", ... ({len(outcomes):,} outcomes)" if len(outcomes) > SHOWN_OUTCOMES else ""
    return f"{{{shown}{more}}}"


def _records(dataset: Any) -> list[Any] | None:
    """The records of a dataset given as a tuple or a list; None for anything else (a named tuple
    too: its repr is not its records')."""
    return list(dataset) if type(dataset) in (tuple, list) else None


def _equal(a: Any, b: Any) -> bool:
    """``a == b`` as a bool; False when the comparison has no truth value (an array's)."""
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def differing(dataset: Any, neighbor: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The positions (from 0) of the records in which D and D' differ: in D, and in D'.

    Datasets of one length (substitution) differ where their records do: one position each, as a
    rule. When one has one record more (add/remove), it is the record whose removal leaves the other
    (in a run of equal records, the one where the two first part), marked in the longer one only.
    Anything else (not tuples or lists, lengths further apart, records that do not compare) marks
    nothing: ``((), ())``.
    """
    d, d2 = _records(dataset), _records(neighbor)
    if d is None or d2 is None:
        return (), ()
    if len(d) == len(d2):
        where = tuple(i for i, (a, b) in enumerate(zip(d, d2)) if not _equal(a, b))
        return where, where
    if abs(len(d) - len(d2)) != 1:
        return (), ()
    longer, shorter = (d, d2) if len(d) > len(d2) else (d2, d)
    i = next((i for i, (a, b) in enumerate(zip(longer, shorter)) if not _equal(a, b)), len(shorter))
    if not all(_equal(a, b) for a, b in zip(longer[i + 1:], shorter[i:])):
        return (), ()
    return ((i,), ()) if longer is d else ((), (i,))


def _marked(witness: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """:func:`differing` for the witness's D and D', when the larger has :data:`MARKED_FROM` records
    or more; ``((), ())`` for smaller ones."""
    d, d2 = _records(witness.dataset), _records(witness.neighbor)
    if d is None or d2 is None or max(len(d), len(d2)) < MARKED_FROM:
        return (), ()
    return differing(d, d2)


def _difference(witness: Any) -> str:
    """The note on the records D and D' differ in: ``record 3 of 8 differs: D[2] = 0, D'[2] = 1``;
    ``D' has one record more: record 3 of 9, D'[2] = 1``; ``""`` when none is marked (:func:`_marked`)."""
    d, d2 = witness.dataset, witness.neighbor
    in_d, in_d2 = _marked(witness)
    if in_d and in_d == in_d2:
        if len(in_d) > 1:
            places = ", ".join(str(i + 1) for i in in_d)
            return f"records {places} of {len(d)} differ (marked)"
        (i,) = in_d
        return f"record {i + 1} of {len(d)} differs: D[{i}] = {d[i]!r}, D'[{i}] = {d2[i]!r}"
    if in_d or in_d2:
        name, longer, (i,) = ("D", d, in_d) if in_d else ("D'", d2, in_d2)
        return f"{name} has one record more: record {i + 1} of {len(longer)}, {name}[{i}] = {longer[i]!r}"
    return ""


def witness_rows(witness: Any, part: str | None = None) -> list[tuple[str, str]]:
    """The witness as (name, value) rows: where (``part``), D, D', the record they differ in
    (``neighbours``, on :data:`MARKED_FROM` records or more), S, both probabilities, the claim and
    the check ``p > e^eps q + delta`` (``<=`` for the closest pair of a verdict within rounding)."""
    p, q, rest = _float(witness.p), _float(witness.q), float(getattr(witness, "unexplored", 0))
    epsilon, delta = witness.epsilon, witness.delta
    bound = (exp_epsilon(epsilon) * (q + rest) if q + rest > 0 else 0.0) + float(delta)
    relation = ">" if p > bound else "<="
    rows = [("where", part)] if part else []
    rows += [("D", repr(witness.dataset)), ("D'", repr(witness.neighbor))]
    difference = _difference(witness)
    if difference:
        rows.append(("neighbours", difference))
    rows.append(("S (event)", _outcomes(witness.output_set)))
    if rest:
        rows += [("P[M(D) ∈ S]", f">= {p:.12g} (explored){_exact(witness.p)}"),
                 ("P[M(D') ∈ S]", f"<= {q:.12g} (explored) + {rest:.12g} (unexplored) = {q + rest:.12g}")]
    else:
        rows += [("P[M(D) ∈ S]", f"{p:.12g}{_exact(witness.p)}"), ("P[M(D') ∈ S]", f"{q:.12g}{_exact(witness.q)}")]
    eps_text, delta_text = f"{float(epsilon):.12g}", f"{float(delta):.12g}"
    rows += [
        ("claim", f"eps = {eps_text}{_exact(epsilon)}, delta = {delta_text}{_exact(delta)}"),
        ("check", f"{p:.12g} {relation} e^{eps_text} · {q + rest:.12g} + {delta_text} = {bound:.12g}"),
    ]
    if getattr(witness, "within_rounding", False):
        rows.append(("within rounding", f"excess {witness.excess:.3g} vs the float error allowance "
                                        f"{witness.allowance:.3g}"))
    return rows


def _with_marks(dataset: Any, positions: Sequence[int]) -> str:
    """``repr(dataset)``, escaped, with the records at ``positions`` in ``<mark class="differs">``
    (the text stays the repr: a tuple of one keeps its comma)."""
    records = _records(dataset)
    if records is None or not positions:
        return html.escape(repr(dataset), quote=False)
    shown = [html.escape(repr(record), quote=False) for record in records]
    for i in positions:
        shown[i] = f'<mark class="differs">{shown[i]}</mark>'
    opening, closing = ("(", ",)" if len(records) == 1 else ")") if type(dataset) is tuple else ("[", "]")
    return opening + ", ".join(shown) + closing


def witness_table(witness: Any, part: str | None = None) -> str:
    """:func:`witness_rows` as a ``<table class="facts">``, the records D and D' differ in marked
    (``<mark class="differs">``, on :data:`MARKED_FROM` records or more)."""
    in_d, in_d2 = _marked(witness)
    marked = {"D": _with_marks(witness.dataset, in_d), "D'": _with_marks(witness.neighbor, in_d2)}
    cells = "".join(f'<tr><th scope="row">{html.escape(name, quote=False)}</th>'
                    f"<td><code>{marked.get(name) or html.escape(value, quote=False)}</code></td></tr>"
                    for name, value in witness_rows(witness, part))
    return f'<table class="facts witness">{cells}</table>'


def row_label(number_: int, row: Any) -> str:
    """``Row 2 — claim C1, mutant_without_half`` (escaped), the words a link to row N carries."""
    return html.escape(f"Row {number_} — claim {row.case.claim}, {row.case.mechanism}")


def statement_html(row: Any) -> str:
    """The row's claim statement (an audit file's ``AuditCase.statement``, else its
    ``description``), a mutant's parent named first; empty when the row has neither."""
    case = row.case
    text = html.escape(case.statement or case.description)
    if case.parent:
        lead = f"Mutant of <code>{html.escape(case.parent)}</code>, checked against its claim"
        text = f"{lead}: {text}" if text else f"{lead}."
    return f'<span class="statement">{text}</span>' if text else ""


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")


def _href(link: str, base: Path | None) -> str:
    """A link as the page writes it: a URL or a ``#anchor`` as given; an absolute file path relative
    to ``base`` (the report's folder), or as a ``file:`` URL without one; a relative path as given."""
    if not link or link.startswith("#") or _SCHEME.match(link):
        return link
    path, hash_, anchor = link.partition("#")
    if not os.path.isabs(path):
        return quote(path) + hash_ + anchor
    if base is None:
        return Path(path).as_uri() + hash_ + anchor
    try:
        relative = os.path.relpath(path, base)
    except ValueError:  # another drive: no relative path
        return Path(path).as_uri() + hash_ + anchor
    return quote(Path(relative).as_posix()) + hash_ + anchor


def source_html(case: Any, base: Path | None = None) -> str:
    """The case's source, linked when it has a link (empty when it has no source)."""
    if not case.source:
        return ""
    text = html.escape(case.source)
    href = _href(case.source_link, base)
    if not href:
        return f'<span class="source">{text}</span>'
    return f'<a class="source" href="{html.escape(href)}">{text}</a>'


def violated(rows: Sequence[Any]) -> list[tuple[int, Any]]:
    """The VIOLATED rows, numbered as in the table (from 1)."""
    return [(n, r) for n, r in enumerate(rows, 1) if r.measurement.verdict is Verdict.VIOLATED]


def witness_section(rows: Sequence[Any]) -> str:
    """The witness of every VIOLATED row, each ``witness-N`` linking back to ``row-N``; ``""`` when none."""
    found = violated(rows)
    if not found:
        return ""
    items = []
    for n, r in found:
        m = r.measurement
        if m.witness_data is not None:
            evidence = witness_table(m.witness_data, m.witness_part)
        elif m.witness:
            evidence = f"<pre>{html.escape(m.witness)}</pre>"
        else:
            evidence = "<p><strong>No witness recorded for this row.</strong></p>"
        badge = f'<span class="v v-{kind_of(r).value}">{html.escape(mark(r))}</span>'
        items.append(
            f'<section class="witness" id="witness-{n}"><h3><a href="#row-{n}">{row_label(n, r)}</a></h3>\n'
            f'<p>{badge} <span class="instance">{html.escape(r.case.instance)}</span></p>\n'
            f"<p>{statement_html(r)}</p>\n{evidence}</section>"
        )
    lead = ("For each VIOLATED row, the pair of neighbouring datasets D, D' and the set of outputs S on which its "
            "claim breaks: P[M(D) ∈ S] > e^eps · P[M(D') ∈ S] + delta, with eps and delta the claim's, certified "
            "by the engine on the datasets the mechanism was run on.")
    return (f'<h2 id="witnesses">Witnesses ({len(found)})</h2>\n<p>{html.escape(lead)}</p>\n'
            f'<div class="witnesses">\n' + "\n".join(items) + "\n</div>")


#: What each assumption status means, in the order the section lists them.
STATUS_MEANING = (
    ("proved", "checked exhaustively in this run"),
    ("accepted", "tested on a sample, not proved; the verdict says \"assuming\""),
    ("refuted", "a counterexample was found; the checker did without it"),
    ("unproved", "neither proved nor accepted: a passing verdict is UNDECIDED"),
)


def assumption_section(rows: Sequence[Any]) -> str:
    """Every row's assumptions with their status and evidence, ``assumptions``; ``""`` when no row has one."""
    items = []
    for n, r in enumerate(rows, 1):
        for a in r.measurement.assumptions:
            status = str(a.status)
            evidence = a.evidence + (f"; {a.fix}" if status == "unproved" and a.fix else "")
            items.append(f'<li><a href="#row-{n}">{row_label(n, r)}</a>: <span class="a a-{status}">{status}</span> '
                         f"<b>{html.escape(a.name)}</b> ({html.escape(a.statement)}): {html.escape(evidence)}</li>")
    if not items:
        return ""
    meanings = "".join(f'<dt><span class="a a-{status}">{status}</span></dt><dd>{html.escape(meaning)}</dd>'
                       for status, meaning in STATUS_MEANING)
    return (f'<h2 id="assumptions">Assumptions ({len(items)})</h2>\n'
            "<p>What a verdict could rest on instead of what was enumerated, and how each stands in this run. "
            "A VIOLATED verdict rests on none: its witness was computed on the datasets themselves.</p>\n"
            f'<dl class="legend">{meanings}</dl>\n<ul class="assumptions">\n' + "\n".join(items) + "\n</ul>")


def assumption_counts(rows: Sequence[Any]) -> dict[str, int]:
    """How many assumptions of each status the rows have (every status, 0 when none)."""
    counts = {status: 0 for status, _ in STATUS_MEANING}
    for r in rows:
        for a in r.measurement.assumptions:
            counts[str(a.status)] = counts.get(str(a.status), 0) + 1
    return counts

