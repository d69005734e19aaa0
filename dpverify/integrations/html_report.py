"""The audit as one self-contained HTML page: header, counts, legend, the table, the charts.

:func:`audit_page` writes ``reports/audit.html`` (through :func:`dpverify.integrations.report.html_report`).
The page has no script and loads nothing: its charts are inline SVG drawn by matplotlib
(:mod:`~dpverify.integrations.charts`), its style one ``<style>`` element, its text ASCII (other
characters as references), so it reads the same from any disk, mail or CI artifact.

* The header gives the dpverify version, when the audit was generated (``generated``: one string,
  chosen by the caller, so that an unchanged audit can keep its date) and the counts of
  :mod:`~dpverify.integrations.presentation`.
* Each row has an anchor ``row-N`` (N from 1, in table order) and links to its chart; each chart
  (``sweep-K`` for the K-th sweep series, ``profile-N`` for row N's privacy profile) links back to
  its rows.
* Verdicts are coloured by :class:`~dpverify.integrations.presentation.Kind` (a legend says how).
* An audit file's page (``dpverify audit PATH.py``) has its title and description in the header
  and a section ``evidence`` with each row's claim statement, source and witness (``evidence-N``).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from dpverify.integrations.charts import Series, line_chart, omitted
from dpverify.integrations.presentation import (
    TITLE,
    VERDICT_LEGEND,
    Counts,
    Kind,
    generated_now,
    kind_of,
    legend,
    mark,
    number,
    series_groups,
    symbol,
)

__all__ = ["audit_page", "page", "STYLE", "greek"]

#: The page's style sheet; the verdict classes ``v-<kind>`` colour the badges and rows.
STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:1.5em 2em;color:#1f2328;
 line-height:1.4}
h1{margin:0 0 .2em;font-size:1.7em} h2{margin:1.6em 0 .5em;font-size:1.3em} h3{margin:0 0 .3em;font-size:1.05em}
.meta{color:#57606a;margin:0 0 1em}
.banner{padding:.6em 1em;border-radius:6px;font-weight:600;margin:.5em 0 1em;display:inline-block}
.banner.ok{background:#dafbe1;color:#116329} .banner.bad{background:#ffebe9;color:#a40e26}
.banner.open{background:#fff8c5;color:#7d4e00}
.counts{display:flex;flex-wrap:wrap;gap:.5em;margin:.3em 0 1em;padding:0;list-style:none}
.counts li{border:1px solid #d0d7de;border-radius:6px;padding:.3em .7em}
.counts b{font-size:1.15em;margin-right:.25em}
dl.legend{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em;margin:.5em 0 1em;max-width:72em}
dl.legend dt{font-weight:600;font-family:ui-monospace,SFMono-Regular,Menlo,monospace} dl.legend dd{margin:0}
.v{display:inline-block;padding:0 .45em;border-radius:4px;white-space:nowrap;font-weight:600}
.v-holds{background:#dafbe1;color:#116329} .v-caught{background:#ddf4ff;color:#0550ae}
.v-measured{background:#eaeef2;color:#424a53;font-weight:400} .v-undecided{background:#fff8c5;color:#7d4e00}
.v-unexpected{background:#cf222e;color:#fff}
table.audit{border-collapse:collapse;font-size:13px;width:100%}
table.audit th{position:sticky;top:0;background:#f6f8fa;border-bottom:2px solid #d0d7de;text-align:left;
 padding:4px 6px;vertical-align:bottom}
table.audit td{border-bottom:1px solid #eaeef2;padding:3px 6px;vertical-align:top}
table.audit tr.unexpected td{background:#ffebe9} table.audit tr.undecided td{background:#fff8c5}
table.audit tr:target td{outline:2px solid #0969da;outline-offset:-2px}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums} td.num{white-space:nowrap}
td.instance{color:#424a53;min-width:20em} td.mech{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:1.2em}
figure.chart{margin:0;padding:.8em;border:1px solid #d0d7de;border-radius:6px;scroll-margin-top:1em}
figure.chart:target{border-color:#0969da;box-shadow:0 0 0 2px #0969da}
figure.chart svg{width:100%;height:auto;display:block}
figure.chart svg text{font-family:"DejaVu Sans",Verdana,sans-serif;fill:#1f2328}
figure.chart p{margin:.2em 0;color:#424a53;font-size:.9em}
a{color:#0969da}
pre{background:#f6f8fa;padding:.7em;border-radius:6px;overflow-x:auto}
"""

#: Greek letters for parameter names in chart labels.
_GREEK = {"epsilon": "ε", "delta": "δ", "gamma": "γ", "eta": "η", "alpha": "α"}


def greek(name: str) -> str:
    """``epsilon`` as ``ε`` (and delta, gamma, eta, alpha); other names unchanged."""
    return _GREEK.get(name, name)


def page(title: str, body: str, *, style: str = "") -> str:
    """A whole HTML document around ``body`` (:data:`STYLE` and ``style`` its style sheet), ASCII
    only (other characters as references)."""
    document = (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{html.escape(title)}</title>\n<style>{STYLE}{style}</style></head>\n<body>\n{body}\n</body></html>\n"
    )
    return document.encode("ascii", "xmlcharrefreplace").decode("ascii")


def _badge(row: Any) -> str:
    return f'<span class="v v-{kind_of(row).value}">{html.escape(mark(row))}</span>'


def _banner(counts: Counts) -> str:
    if counts.unexpected:
        return f'<p class="banner bad">{counts.unexpected} of {counts.rows} rows not as expected</p>'
    if counts.undecided:
        return f'<p class="banner open">{counts.undecided} of {counts.rows} rows UNDECIDED</p>'
    return f'<p class="banner ok">All {counts.rows} rows as expected</p>'


def _counts(counts: Counts) -> str:
    items = [
        (Kind.HOLDS, counts.holds, "hold" if counts.holds != 1 else "holds"),
        (Kind.CAUGHT, counts.caught, "mutants caught" if counts.caught != 1 else "mutant caught"),
        (Kind.MEASURED, counts.measured, "measured"),
        (Kind.UNEXPECTED, counts.unexpected, "unexpected"),
        (Kind.UNDECIDED, counts.undecided, "undecided"),
    ]
    cells = "".join(f'<li class="count-{kind.value}"><b>{value}</b><span class="v v-{kind.value}">{label}</span></li>'
                    for kind, value, label in items)
    return f'<ul class="counts" aria-label="counts">{cells}</ul>\n<p>{html.escape(counts.summary())}.</p>'


def _legend(rows: Sequence[Any]) -> str:
    terms = "".join(f"<dt>{html.escape(term)}</dt><dd>{html.escape(meaning)}</dd>" for term, meaning in legend(rows))
    verdicts = "".join(
        f'<dt><span class="v v-{kind.value}">{html.escape(symbol(state) + " " + kind.value)}</span></dt>'
        f"<dd>{html.escape(meaning)}</dd>"
        for kind, state, meaning in VERDICT_LEGEND
    )
    return f'<dl class="legend">{terms}</dl>\n<h3>Verdicts</h3>\n<dl class="legend verdicts">{verdicts}</dl>'


def _left_out(series: Sequence[Series]) -> str:
    """The chart note's words on the points not drawn (:func:`~dpverify.integrations.charts.omitted`)."""
    count = omitted(series)
    return f" {count} point(s) not drawn: infinite, or not positive on the log axis." if count else ""


class _Charts:
    """The page's charts, numbered as they are made; each knows the rows it links back to."""

    def __init__(self, rows: Sequence[Any]) -> None:
        self.index = {id(r): i for i, r in enumerate(rows, 1)}
        self.links: dict[int, list[tuple[str, str]]] = {}  # row number -> [(anchor, label)]
        self.figures: list[str] = []
        self._sweeps(rows)
        self._profiles(rows)

    def _link(self, row: Any, anchor: str, label: str) -> None:
        self.links.setdefault(self.index[id(row)], []).append((anchor, label))

    def _back(self, rows: Sequence[Any], label: Any) -> str:
        links = ", ".join(f'<a href="#row-{self.index[id(r)]}">{html.escape(label(r))}</a>' for r in rows)
        return f'<p class="back">&#8617; Back to the table: {links}</p>'

    def _sweeps(self, rows: Sequence[Any]) -> None:
        for k, (series, group) in enumerate(series_groups(rows).items(), 1):
            x = series.variable
            anchor = f"sweep-{k}"
            values = [float(r.case.parameters[x]) for r in group]
            measured = tuple((v, r.measurement.epsilon_star / v) for v, r in zip(values, group))
            claimed = tuple((v, r.measurement.claimed_epsilon / v) for v, r in zip(values, group))
            title = f"Sweep: {series.name}"
            drawn = [Series(f"measured ε*/{greek(x)}", measured), Series(f"claimed ε/{greek(x)}", claimed)]
            svg = line_chart(drawn, x_label=greek(x), y_label=f"ratio to {greek(x)}", title=title, prefix=f"{anchor}-")
            note = (f"The measured ratio eps*/{x} beside the claim's own ratio as {x} shrinks: a bounded measured "
                    "ratio is what an O(.) claim predicts; the claim's explicit constant is an upper bound."
                    + _left_out(drawn))
            self.figures.append(self._figure(anchor, title, note, svg,
                                             self._back(group, lambda r: f"{x}={number(float(r.case.parameters[x]))}")))
            for r in group:
                self._link(r, anchor, "sweep")

    def _profiles(self, rows: Sequence[Any]) -> None:
        for r in rows:
            profile = r.measurement.details.get("privacy_profile")
            if not profile:
                continue
            n = self.index[id(r)]
            anchor = f"profile-{n}"
            title = f"Privacy profile δ(ε): {r.case.claim} {r.case.mechanism}"
            points = tuple((float(p["epsilon"]), float(p["delta"])) for p in profile)
            drawn = [Series("worst-case δ(ε) over all pairs", points)]
            svg = line_chart(drawn, x_label="ε", y_label="δ", title=title, prefix=f"{anchor}-")
            note = (f"{r.case.instance}. Claimed (eps={number(r.measurement.claimed_epsilon)}, "
                    f"delta={number(r.measurement.claimed_delta)}); measured eps*={number(r.measurement.epsilon_star)}."
                    + _left_out(drawn))
            self.figures.append(self._figure(anchor, title, note, svg, self._back([r], lambda r: f"row {n}")))
            self._link(r, anchor, "δ(ε)")

    @staticmethod
    def _figure(anchor: str, title: str, note: str, svg: str, back: str) -> str:
        return (f'<figure class="chart" id="{anchor}"><h3>{html.escape(title)}</h3>\n<p>{html.escape(note)}</p>\n'
                f"{svg}\n{back}</figure>")


def _breakable(name: str) -> str:
    """A snake_case name that may wrap after its underscores (``<wbr>``), escaped."""
    return html.escape(name).replace("_", "_<wbr>")


def _figure_cell(value: float) -> str:
    """A figure to 4 digits; when that rounds, the full value on hover."""
    shown = number(value)
    full = number(value, 17) if not isinstance(value, float) else repr(value)
    title = f' title="{html.escape(full)}"' if full not in (shown, f"{shown}.0") else ""
    return f'<td class="num"{title}>{shown}</td>'


def _table(rows: Sequence[Any], charts: _Charts) -> str:
    head = ["claim", "mechanism", "instance", "eps*", "claimed eps", "delta*", "claimed delta", "slack", "verdict",
            "s", "chart"]
    numeric = {"eps*", "claimed eps", "delta*", "claimed delta", "slack", "s"}
    lines = ["<table class=\"audit\"><thead><tr>"
             + "".join(f'<th{" class=num" if h in numeric else ""} scope="col">{h}</th>' for h in head)
             + "</tr></thead><tbody>"]
    for n, r in enumerate(rows, 1):
        m = r.measurement
        figures = [m.epsilon_star, m.claimed_epsilon, m.delta_star, m.claimed_delta, r.slack]
        numbers = "".join(_figure_cell(v) for v in figures)
        links = " ".join(f'<a href="#{anchor}">{html.escape(label)}</a>' for anchor, label in charts.links.get(n, []))
        description = f' title="{html.escape(r.case.description)}"' if r.case.description else ""
        kind = kind_of(r)
        row_class = f' class="{kind.value}"' if kind in (Kind.UNEXPECTED, Kind.UNDECIDED) else ""
        lines.append(
            f'<tr id="row-{n}"{row_class}><td>{html.escape(r.case.claim)}</td>'
            f"<td class=\"mech\"{description}>{_breakable(r.case.mechanism)}</td>"
            f'<td class="instance">{html.escape(r.case.instance)}</td>{numbers}'
            f'<td>{_badge(r)}</td><td class="num">{r.seconds:.2f}</td><td>{links}</td></tr>'
        )
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _assumed(rows: Sequence[Any]) -> str:
    assumed = [(n, r) for n, r in enumerate(rows, 1) if r.measurement.holds and r.measurement.assuming]
    if not assumed:
        return ""
    items = "\n".join(
        f'<li><a href="#row-{n}">{html.escape(f"{r.case.claim} {r.case.mechanism}")}</a> '
        f"({html.escape(r.case.instance)}): {html.escape(r.measurement.assuming)}</li>"
        for n, r in assumed
    )
    return ("<h2 id=\"assumed\">Holds, assuming</h2>\n<p>Verdicts resting on an assumption the audit accepted, "
            f"tested but not proved:</p>\n<ul>\n{items}\n</ul>")


def _evidence(rows: Sequence[Any]) -> str:
    """Each row that states its claim (an audit file's, :mod:`dpverify.auditing`): the statement, its
    source and the witness, linked to the row."""
    items = []
    for n, r in enumerate(rows, 1):
        if not r.case.statement:
            continue
        parts = [f'<h3><a href="#row-{n}">{html.escape(f"{r.case.claim} {r.case.mechanism}")}</a> '
                 f"({html.escape(r.case.instance)}): {_badge(r)}</h3>"]
        if r.case.statement:
            parts.append(f"<p>Claim {html.escape(r.case.claim)}: {html.escape(r.case.statement)}</p>")
        if r.case.source:
            parts.append(f"<p>Source: {html.escape(r.case.source)}</p>")
        if r.case.parent:
            parts.append(f"<p>Mutant of {html.escape(r.case.parent)} (checked against its claim).</p>")
        if r.measurement.witness:
            parts.append(f"<p>Witness:</p>\n<pre>{html.escape(r.measurement.witness)}</pre>")
        items.append(f'<div class="evidence" id="evidence-{n}">{"".join(parts)}</div>')
    if not items:
        return ""
    return '<h2 id="evidence">Claims and witnesses</h2>\n' + "\n".join(items)


def audit_page(rows: Sequence[Any], *, generated: str | None = None, version: str | None = None,
               timing: Any = None, title: str | None = None, description: str | None = None) -> str:
    """The audit rows as one HTML page.

    Args:
        rows: :class:`~dpverify.integrations.audit.AuditRow` rows, in table order.
        generated: when the audit ran, as shown in the header (default: :func:`generated_now`);
            pass the previous value to keep an unchanged report byte for byte.
        version: the dpverify version shown (default: the installed one).
        timing: the run's :class:`~dpverify.integrations.audit.AuditTiming` (jobs, wall time),
            shown beside the rows' summed time; without it, the summed time alone.
        title, description: an audit file's heading (default: the registered audits').
    """
    if version is None:
        from dpverify import __version__ as version
    counts = Counts.of(rows)
    charts = _Charts(rows)
    seconds = sum(r.seconds for r in rows)
    took = timing.describe(rows) if timing is not None else f"{counts.rows} rows, {seconds:.1f} s of row time"
    contents = ['<a href="#table">table</a>']
    if any(r.measurement.holds and r.measurement.assuming for r in rows):
        contents.append('<a href="#assumed">holds, assuming</a>')
    evidence = _evidence(rows)
    if evidence:
        contents.append('<a href="#evidence">claims and witnesses</a>')
    if charts.figures:
        contents.append(f'<a href="#charts">charts ({len(charts.figures)})</a>')
    scope = "every row" if title is not None else "every claim on its default instance"
    body = [
        f"<header><h1>{html.escape(title or TITLE)}</h1>",
        f'<p class="meta">dpverify {html.escape(str(version))} &middot; generated '
        f'{html.escape(generated or generated_now())} &middot; {html.escape(took)} &middot; '
        f"{html.escape(scope)}, computed exactly (no sampling)</p>",
        f"<p>{html.escape(description)}</p>" if title is not None and description else "",
        _banner(counts), _counts(counts), "</header>",
        f"<nav><p>Contents: {' &middot; '.join(contents)}</p></nav>",
        "<h2>How to read the table</h2>", _legend(rows),
        '<h2 id="table">Rows</h2>', _table(rows, charts), _assumed(rows), evidence,
    ]
    if charts.figures:
        body += ['<h2 id="charts">Charts</h2>', '<div class="charts">', *charts.figures, "</div>"]
    return page(title or TITLE, "\n".join(part for part in body if part))
