"""The audit as one self-contained HTML page, in the order a reviewer reads it.

:func:`audit_page` writes ``reports/audit.html`` (through :func:`dpverify.integrations.report.html_report`).
The page has no script and loads nothing: its charts are inline SVG drawn by matplotlib
(:mod:`~dpverify.integrations.charts`), its style one ``<style>`` element, its text ASCII (other
characters as references), so it reads the same from any disk, mail or CI artifact. The only links
that leave it are the rows' sources (the claims ledger, a paper, a user's URL).

* The header: the dpverify version, when the audit was generated (``generated``: one string, chosen
  by the caller, so that an unchanged audit can keep its date), the verdict and the counts of
  :mod:`~dpverify.integrations.presentation`.
* The summary (:mod:`~dpverify.integrations.html_summary`): what was checked, what failed, what
  was assumed; then each claim once, with its source and the outcome of its rows.
* The table: each row's claim statement and source (``AuditCase.description``, ``source``,
  ``source_link``), instance, figures and verdict. In a window narrower than 60em (a phone, a narrow
  window) each row is a card instead (:data:`CARDS`), its number and verdict first and every cell
  labelled with its column's name, so that the verdict is read without scrolling sideways. Each row has an anchor ``row-N``
  (N from 1, in table order) and links to its witness and its chart.
* The witnesses of the VIOLATED rows (``witness-N``), the records in which D and D' differ marked,
  and every assumption with its status (:mod:`~dpverify.integrations.html_evidence`).
* The charts: ``sweep-K`` for the K-th sweep series, ``profile-N`` for row N's privacy profile with
  the claim marked; each links back to its rows. They fill the width of a phone and never grow
  past their drawn size (:data:`~dpverify.integrations.charts.SIZE`).
* Verdicts are coloured by :class:`~dpverify.integrations.presentation.Kind` (a legend says how).
* An audit file's page (``dpverify audit PATH.py``) has its title and description in the header
  and a section ``evidence`` with each row's claim statement, source and witness (``evidence-N``).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dpverify.integrations.charts import Series, line_chart, omitted, profile_chart
from dpverify.integrations.html_evidence import (
    assumption_section,
    source_html,
    statement_html,
    violated,
    witness_section,
)
from dpverify.integrations.html_summary import claims_table, summary_section
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

__all__ = ["audit_page", "page", "STYLE", "CARDS", "COLUMNS", "greek"]

#: The rows table's columns: each one's heading, whether it holds numbers, and the label its cells
#: carry as cards (:data:`CARDS`).
COLUMNS = (
    ("#", True, "row"), ("claim", False, "claim"), ("mechanism", False, "mechanism"),
    ("checked: the claim, on the instance", False, "checked"), ("eps*", True, "eps*"),
    ("claimed eps", True, "claimed eps"), ("delta*", True, "delta*"), ("claimed delta", True, "claimed delta"),
    ("slack", True, "slack"), ("verdict", False, "verdict"), ("s", True, "seconds"), ("chart", False, "chart"),
)
_VERDICT = 1 + [heading for heading, _, _ in COLUMNS].index("verdict")

#: The rows table as a column of cards, in a window narrower than 60em (the table needs 64em of 13 px,
#: 832 px, besides the page's margins): each cell on a line of its own after its column's label (set
#: by the cell's place in the row, the markup staying a table's), the row's number first, its verdict
#: second, the heading row hidden but read aloud.
CARDS = ("""
@media (max-width:60em){.scroll.cards{overflow-x:visible}
table.rows{min-width:0}
table.rows thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
table.rows,table.rows tbody{display:block}
table.rows tr{display:flex;flex-direction:column;border:1px solid #d0d7de;border-radius:6px;margin:0 0 .75em;
 overflow:hidden}
table.rows td,table.rows td.num{display:flow-root;min-width:0;padding:3px 8px 3px 118px;text-align:left;white-space:normal}
table.rows td::before{float:left;width:104px;margin-left:-110px;font-weight:600;color:#57606a;
 font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;font-size:13px;white-space:normal}
""" + "\n".join(f'table.rows td:nth-child({i})::before{{content:"{label}"}}' for i, (_, _, label) in enumerate(COLUMNS, 1))
    + f"""
table.rows td:first-child{{order:-2;background:#f6f8fa;font-weight:600}} table.rows td:nth-child({_VERDICT}){{order:-1}}
table.rows td:nth-child({_VERDICT}) .v{{white-space:normal}} table.rows td:last-child{{border-bottom:0}}
table.audit.rows tr:target td{{outline:0}} table.rows tr:target{{box-shadow:0 0 0 2px #0969da}}}}
""")

#: The page's style sheet; the verdict classes ``v-<kind>`` colour the badges and rows, ``a-<status>``
#: the assumptions. Wide tables sit in ``div.scroll`` (scrolled sideways on a narrow screen, the page
#: itself never wider than the window); the rows table becomes cards in a narrow window (:data:`CARDS`).
#: Charts fill a card of at least 26em (the window's width below that) and shrink with it, never
#: grow past their drawn size. ``mark.differs`` marks the records in which a witness's D and D' differ.
STYLE = """
*,*::before,*::after{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:1.5em 2em;color:#1f2328;
 line-height:1.4;overflow-wrap:break-word}
@media (max-width:40em){body{margin:1em .75em}}
h1{margin:0 0 .2em;font-size:1.7em} h2{margin:1.6em 0 .5em;font-size:1.3em} h3{margin:0 0 .3em;font-size:1.05em}
.meta{color:#57606a;margin:0 0 1em}
.banner{padding:.6em 1em;border-radius:6px;font-weight:600;margin:.5em 0 1em;display:inline-block}
.banner.ok{background:#dafbe1;color:#116329} .banner.bad{background:#ffebe9;color:#a40e26}
.banner.open{background:#fff8c5;color:#7d4e00}
.counts{display:flex;flex-wrap:wrap;gap:.5em;margin:.3em 0 1em;padding:0;list-style:none}
.counts li{border:1px solid #d0d7de;border-radius:6px;padding:.3em .7em}
.counts b{font-size:1.15em;margin-right:.25em}
dl.summary{margin:.5em 0 1em;max-width:60em;border-left:4px solid #0969da;padding:.2em 0 .2em 1em}
dl.summary dt{font-weight:700;margin-top:.5em} dl.summary dd{margin:0} dl.summary ul{margin:.2em 0;padding-left:1.3em}
dl.legend{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em;margin:.5em 0 1em;max-width:72em}
dl.legend dt{font-weight:600;font-family:ui-monospace,SFMono-Regular,Menlo,monospace} dl.legend dd{margin:0}
.v,.a{display:inline-block;padding:0 .45em;border-radius:4px;white-space:nowrap;font-weight:600}
.v-holds{background:#dafbe1;color:#116329} .v-caught{background:#ddf4ff;color:#0550ae}
.v-measured{background:#eaeef2;color:#424a53;font-weight:400} .v-undecided{background:#fff8c5;color:#7d4e00}
.v-unexpected{background:#cf222e;color:#fff}
.a-proved{background:#dafbe1;color:#116329} .a-accepted{background:#fff8c5;color:#7d4e00}
.a-refuted{background:#eaeef2;color:#424a53} .a-unproved{background:#cf222e;color:#fff}
ul.assumptions{padding-left:1.2em;max-width:72em} ul.assumptions li{margin:.25em 0}
.scroll{overflow-x:auto;max-width:100%;margin:.5em 0 1em}
table.audit{border-collapse:collapse;font-size:13px;width:100%}
table.rows{min-width:64em} table.claims{width:auto}
table.audit th{background:#f6f8fa;border-bottom:2px solid #d0d7de;text-align:left;padding:4px 6px;vertical-align:bottom}
table.audit td{border-bottom:1px solid #eaeef2;padding:3px 6px;vertical-align:top}
table.audit tr.unexpected td{background:#ffebe9} table.audit tr.undecided td{background:#fff8c5}
table.audit tr:target td{outline:2px solid #0969da;outline-offset:-2px}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums} td.num{white-space:nowrap}
td.checked{min-width:22em} .statement{display:block} .instance{display:block;color:#57606a;font-size:12px}
td.mech{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
.source{display:block;font-size:12px}
.witnesses{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,34em),1fr));gap:1em}
section.witness{border:1px solid #d0d7de;border-radius:6px;padding:.6em .8em;min-width:0;scroll-margin-top:1em}
section.witness:target{border-color:#0969da;box-shadow:0 0 0 2px #0969da} section.witness p{margin:.2em 0}
table.facts{border-collapse:collapse;margin:.5em 0;width:100%}
table.facts th{text-align:left;padding:3px 12px 3px 0;vertical-align:top;white-space:nowrap;font-weight:600}
table.facts td{padding:3px 0;overflow-wrap:anywhere} table.facts code{font-size:.92em}
mark.differs{background:#ffd8a8;color:#1f2328;font-weight:700;border-radius:3px;padding:0 2px}
@media (max-width:40em){table.facts th,table.facts td{display:block;white-space:normal;padding:0}
table.facts td{padding-bottom:.5em}}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,26em),1fr));gap:1em}
figure.chart{margin:0;padding:.6em;border:1px solid #d0d7de;border-radius:6px;scroll-margin-top:1em;min-width:0}
figure.chart:target{border-color:#0969da;box-shadow:0 0 0 2px #0969da}
figure.chart svg{display:block;max-width:100%;height:auto;margin:0 auto}
figure.chart svg text{font-family:"DejaVu Sans",Verdana,sans-serif;fill:#1f2328}
figure.chart p{margin:.2em 0;color:#424a53;font-size:.9em}
a{color:#0969da}
pre{background:#f6f8fa;padding:.7em;border-radius:6px;overflow-x:auto}
""" + CARDS

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
            m = r.measurement
            title = f"Privacy profile δ(ε): {r.case.claim} {r.case.mechanism}"
            points = tuple((float(p["epsilon"]), float(p["delta"])) for p in profile)
            claim = (float(m.claimed_epsilon), float(m.claimed_delta))
            svg = profile_chart(points, claim, title=title, prefix=f"{anchor}-")
            note = (f"{r.case.instance}. Claimed (eps={number(m.claimed_epsilon)}, delta={number(m.claimed_delta)}), "
                    f"the star; measured eps*={number(m.epsilon_star)}. The claim holds where its star lies on or "
                    "above the curve." + _left_out([Series("", points), Series("", (claim,))]))
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


def _table(rows: Sequence[Any], charts: _Charts, base: Path | None) -> str:
    heads = "".join(f'<th{" class=num" if numeric else ""} scope="col">{heading}</th>' for heading, numeric, _ in COLUMNS)
    lines = ['<div class="scroll cards" role="region" aria-label="audit rows" tabindex="0">'
             f'<table class="audit rows"><thead><tr>{heads}</tr></thead><tbody>']
    witnessed = {n for n, _ in violated(rows)}
    for n, r in enumerate(rows, 1):
        m = r.measurement
        figures = [m.epsilon_star, m.claimed_epsilon, m.delta_star, m.claimed_delta, r.slack]
        numbers = "".join(_figure_cell(v) for v in figures)
        links = " ".join(f'<a href="#{anchor}">{html.escape(label)}</a>' for anchor, label in charts.links.get(n, []))
        kind = kind_of(r)
        row_class = f' class="{kind.value}"' if kind in (Kind.UNEXPECTED, Kind.UNDECIDED) else ""
        witness = f'<br><a href="#witness-{n}">witness</a>' if n in witnessed else ""
        lines.append(
            f'<tr id="row-{n}"{row_class}><td class="num">{n}</td>'
            f"<td>{html.escape(r.case.claim)}</td>"
            f'<td class="mech">{_breakable(r.case.mechanism)}</td>'
            f'<td class="checked">{statement_html(r)}{source_html(r.case, base)}'
            f'<span class="instance">{html.escape(r.case.instance)}</span></td>'
            f"{numbers}<td>{_badge(r)}{witness}</td><td class=\"num\">{r.seconds:.2f}</td><td>{links}</td></tr>"
        )
    lines.append("</tbody></table></div>")
    return "\n".join(lines)


def audit_page(rows: Sequence[Any], *, generated: str | None = None, version: str | None = None,
               timing: Any = None, title: str | None = None, description: str | None = None,
               directory: str | Path | None = None) -> str:
    """The audit rows as one HTML page.

    Args:
        rows: :class:`~dpverify.integrations.audit.AuditRow` rows, in table order.
        generated: when the audit ran, as shown in the header (default: :func:`generated_now`);
            pass the previous value to keep an unchanged report byte for byte.
        version: the dpverify version shown (default: the installed one).
        timing: the run's :class:`~dpverify.integrations.audit.AuditTiming` (jobs, wall time),
            shown beside the rows' summed time; without it, the summed time alone.
        title, description: an audit file's heading (default: the registered audits').
        directory: the folder the page is written to: links to the rows' sources that are file
            paths are written relative to it (without it, as ``file:`` URLs).
    """
    if version is None:
        from dpverify import __version__ as version
    base = None if directory is None else Path(directory).resolve()
    counts = Counts.of(rows)
    charts = _Charts(rows)
    seconds = sum(r.seconds for r in rows)
    took = timing.describe(rows) if timing is not None else f"{counts.rows} rows, {seconds:.1f} s of row time"
    witnesses, assumptions = witness_section(rows), assumption_section(rows)
    contents = ['<a href="#claims">claims</a>', '<a href="#table">rows</a>']
    if witnesses:
        contents.append(f'<a href="#witnesses">witnesses ({len(violated(rows))})</a>')
    if assumptions:
        contents.append('<a href="#assumptions">assumptions</a>')
    if charts.figures:
        contents.append(f'<a href="#charts">charts ({len(charts.figures)})</a>')
    scope = "every row" if title is not None else "every claim on its default instance"
    body = [
        f"<header><h1>{html.escape(title or TITLE)}</h1>",
        f'<p class="meta">dpverify {html.escape(str(version))} &middot; generated '
        f'{html.escape(generated or generated_now())} &middot; {html.escape(took)} &middot; '
        f"{html.escape(scope)}, computed exactly (no sampling)</p>",
        f"<p>{html.escape(description)}</p>" if title is not None and description else "",
        _banner(counts), _counts(counts), "</header>", summary_section(rows),
        f"<nav><p>Contents: {' &middot; '.join(contents)}</p></nav>",
        claims_table(rows, base),
        '<h2 id="table">Rows</h2>', _legend(rows), _table(rows, charts, base), witnesses, assumptions,
    ]
    if charts.figures:
        body += ['<h2 id="charts">Charts</h2>', '<div class="charts">', *charts.figures, "</div>"]
    return page(title or TITLE, "\n".join(part for part in body if part))
