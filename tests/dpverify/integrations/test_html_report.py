"""The HTML and Markdown audit reports (dpverify.integrations.html_report, charts, report)."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from dpverify import __version__
from dpverify.integrations.charts import LOG_RATIO, Series, line_chart, wants_log_scale
from dpverify.integrations.presentation import Kind, kind_of
from dpverify.integrations.report import html_report, markdown_report
from tests.dpverify.integrations._report_rows import LONG_INSTANCE, SUMMARY, rows

GENERATED = "2025-01-02 03:04 UTC"


class _Page(HTMLParser):
    """Ids, local links, tags and the text of an HTML page."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.links: list[str] = []
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if "id" in attributes:
            self.ids.append(attributes["id"])
        for name in ("href", "xlink:href"):
            if attributes.get(name, "").startswith("#"):
                self.links.append(attributes[name][1:])

    def handle_data(self, data):
        self.text.append(data)


@pytest.fixture(scope="module")
def page():
    return html_report(rows(), generated=GENERATED)


def _figures(text: str) -> dict[str, str]:
    return dict(re.findall(r'<figure class="chart" id="([^"]+)">(.*?)</figure>', text, re.S))


def test_the_header_has_version_date_and_counts(page):
    # with no run timing the header gives the rows' summed time only: 0.01 + 0.02 + 0.03 + 1.5 + 0.5 + 0.04 = 2.1 s
    assert f"dpverify {__version__} &middot; generated {GENERATED} &middot; 6 rows, 2.1 s of row time &middot;" in page
    counts = dict(re.findall(r'<li class="count-(\w+)"><b>(\d+)</b>', page))
    assert counts == {"holds": "1", "caught": "1", "measured": "1", "unexpected": "2", "undecided": "1"}
    assert f"<p>{SUMMARY}.</p>" in page
    assert '<p class="banner bad">2 of 6 rows not as expected</p>' in page


def test_verdicts_are_coloured_by_kind_with_a_legend(page):
    badges = re.findall(r'<tr id="row-(\d+)"[^>]*>.*?<span class="v v-(\w+)">([^<]*)</span>', page)
    assert [(n, kind) for n, kind, _ in badges] == [
        ("1", "holds"), ("2", "caught"), ("3", "measured"), ("4", "undecided"), ("5", "unexpected"), ("6", "unexpected")]
    assert badges[1][2] == "&#10007; VIOLATED (expected)" and badges[0][2] == "&#10003; holds"
    legend = re.search(r'<dl class="legend verdicts">(.*?)</dl>', page, re.S).group(1)
    assert [kind.value for kind in Kind] == re.findall(r'<span class="v v-(\w+)">', legend)
    for kind in Kind:  # every class the table uses has a colour in the style sheet
        assert re.search(rf"\.v-{kind.value}\{{background:#[0-9a-f]{{6}};color:#[0-9a-f]{{3,6}}", page), kind


def test_the_table_shows_every_row_whole(page):
    assert LONG_INSTANCE in page  # not cut at 72 characters
    # the leaky learner: eps* 1.5, claimed 1, delta* 0.2, claimed delta 0.1, slack 0.1 - 0.2 = -0.1
    row = re.search(r'<tr id="row-5" class="unexpected">(.*?)</tr>', page).group(1)
    assert re.findall(r'<td class="num"[^>]*>([^<]*)</td>', row) == ["5", "1.5", "1", "0.2", "0.1", "-0.1", "0.50"]


def test_on_a_narrow_screen_each_row_is_a_card_its_cells_labelled_its_verdict_first(page):
    from dpverify.integrations.html_report import CARDS

    table = re.search(r'<table class="audit rows">(.*?)</table>', page, re.S).group(1)
    headings = re.findall(r'<th[^>]*scope="col">([^<]*)</th>', table)
    cells = {n: re.findall(r"<td[^>]*>", row) for n, row in re.findall(r'<tr id="row-(\d+)"[^>]*>(.*?)</tr>', table)}
    assert len(cells) == 6 and {len(row) for row in cells.values()} == {len(headings)} == {12}
    assert headings[9] == "verdict" and all('<span class="v v-' in row.split("<td")[10] for row in
                                            re.findall(r'<tr id="row-\d+"[^>]*>(.*?)</tr>', table))
    assert page.count(CARDS) == 1 and '<div class="scroll cards" role="region" aria-label="audit rows"' in page
    narrow = re.fullmatch(r"\n@media \(max-width:(\d+)em\)\{(.*)\}\n", CARDS, re.S)
    assert narrow is not None and int(narrow.group(1)) == 60  # the table needs 64em of 13 px (832 px) + margins
    rules = narrow.group(2)
    # each cell labelled by its place in the row: the heading, or a word for it
    labels = re.findall(r'table\.rows td:nth-child\((\d+)\)::before\{content:"([^"]*)"\}', rules)
    assert labels == [(str(i), label) for i, label in enumerate(
        ["row", "claim", "mechanism", "checked", "eps*", "claimed eps", "delta*", "claimed delta", "slack", "verdict",
         "seconds", "chart"], 1)]
    assert "table.rows tr{display:flex;flex-direction:column;" in rules
    # the row's number first, its verdict (cell 10) second, the badge free to wrap on a phone
    assert "table.rows td:first-child{order:-2;" in rules and "table.rows td:nth-child(10){order:-1}" in rules
    assert "table.rows td:nth-child(10) .v{white-space:normal}" in rules


def test_every_chart_has_a_title_a_legend_and_links_back_to_its_rows(page):
    figures = _figures(page)
    assert list(figures) == ["sweep-1", "profile-3"]
    for anchor, figure in figures.items():
        assert re.search(r"<h3>[^<]+</h3>", figure), anchor
        assert figure.count("<svg") == 1 and '<g class="legend">' in figure and "<title>" in figure
    sweep, profile = figures["sweep-1"], figures["profile-3"]
    assert re.findall(r'<a href="#(row-\d+)">', sweep) == ["row-1", "row-2"]  # both rows of the series
    assert re.findall(r'<a href="#(row-\d+)">', profile) == ["row-3"]
    # ... and each row links to its chart
    assert re.search(r'<tr id="row-1">.*<a href="#sweep-1">sweep</a></td></tr>', page)
    assert re.search(r'<tr id="row-3">.*<a href="#profile-3">&#948;\(&#949;\)</a></td></tr>', page)
    # legends name the series: text elements of the legend group
    legend_text = re.findall(r"<text[^>]*>([^<]*)</text>", sweep.split('<g class="legend">')[1])
    assert legend_text == ["measured &#949;*/&#949;", "claimed &#949;/&#949;"]


def test_every_anchor_resolves_and_every_id_is_unique(page):
    parsed = _Page(page)
    assert len(parsed.ids) == len(set(parsed.ids))
    assert set(parsed.links) <= set(parsed.ids), set(parsed.links) - set(parsed.ids)
    assert {"row-1", "row-6", "sweep-1", "profile-3", "table", "charts", "summary", "claims", "witnesses", "witness-2",
            "witness-5", "assumptions"} <= set(parsed.ids)


def test_the_page_is_self_contained_ascii_and_deterministic(page):
    assert "<script" not in page.lower()
    assert "src=" not in page  # nothing loaded; the only links that leave the page are the rows' sources
    # rows 1 and 2 cite a file each, in the claims table and again in the rows (as file: URLs: no folder given)
    assert re.findall(r'href="(?!#)([^"]*)"', page) == re.findall(r'<a class="source" href="([^"]*)"', page) == [
        "file:///project/docs/bibliography.md", "file:///project/docs/claims.md#C1"] * 2
    assert "@import" not in page and "url(http" not in page
    assert page.isascii()
    assert "<?xml" not in page and "<metadata>" not in page and "Date" not in page
    assert html_report(rows(), generated=GENERATED) == page


def test_no_charts_no_charts_heading():
    plain = [r for r in rows() if r.case.sweep is None and not r.measurement.details]
    text = html_report(plain, generated=GENERATED)
    assert "<svg" not in text and 'id="charts"' not in text and ">Charts<" not in text and ">Plots<" not in text


def test_a_sweep_whose_claim_is_ten_times_the_measurement_is_drawn_on_a_log_axis():
    measured = Series("measured", ((1 / 3, 0.43), (1 / 4, 0.44), (1 / 12, 0.51)))
    claimed = Series("claimed", ((1 / 3, 8.35), (1 / 4, 9.64), (1 / 12, 15.94)))
    # geometric means: about 0.46 and 10.8, a ratio of 23 > LOG_RATIO = 10
    assert wants_log_scale([measured, claimed]) and LOG_RATIO == 10
    assert not wants_log_scale([measured, Series("near", ((1 / 3, 4.0), (1 / 4, 4.4)))])  # ratio 9.3
    assert not wants_log_scale([Series("one", ((0, 1e-17), (1, 0.04)))])  # one series' own range: linear
    svg = line_chart([measured, claimed], x_label="ε", y_label="ratio", title="t", prefix="c-")
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert "ratio (log scale)" in labels
    assert {"0.5", "1", "2", "5", "10"} <= set(labels)  # round ticks at 1, 2, 5 x 10^k


def test_ticks_are_round_numbers():
    # the toy profile: delta from 0.04 to 0 over eps in [0, 0.12]
    svg = line_chart([Series("d", ((0.0, 0.04), (0.06, 0.02), (0.12, 0.0)))], x_label="x", y_label="y", title="t",
                     prefix="c-")
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert labels == ["0", "0.025", "0.05", "0.075", "0.1", "0.125", "x", "0", "0.01", "0.02", "0.03", "0.04", "y", "d"]


def _legend(svg: str) -> list[tuple[float, float, str]]:
    """The legend's text lines as (x, y, text), in the SVG's points."""
    legend = svg.split('<g class="legend">')[1].split("</g>")[0]
    found = []
    for attributes, text in re.findall(r"<text([^>]*)>([^<]*)</text>", legend):
        place = re.search(r'x="([\d.]+)" y="([\d.]+)"', attributes) or re.search(
            r'translate\(([\d.]+) ([\d.]+)\)', attributes)
        found.append((float(place.group(1)), float(place.group(2)), text))
    return found


def test_a_legend_too_wide_for_one_line_is_stacked_and_a_long_label_wrapped():
    from dpverify.integrations.charts import LEGEND_CHARS, profile_chart

    profile = [(0.0, 0.1), (0.5, 0.0), (3.5, 0.0)]
    # two entries side by side: 'worst-case ...' and 'claim (eps=2.773, delta=0.181)' would take 502 px of the
    # chart's 460 (matplotlib's measure at 100 dpi); stacked, they share their left edge
    (first, second) = _legend(profile_chart(profile, (2.773, 0.181), title="t", prefix="p-"))
    assert first[2] == "worst-case δ(ε) over all pairs" and second[2] == "claim (ε=2.773, δ=0.181)"
    assert first[0] == second[0] and second[1] - first[1] > 10
    # two short labels fit side by side: one line, the second to the right of the first
    (left, right) = _legend(line_chart([Series("a", ((0, 1.0), (1, 2.0))), Series("b", ((0, 2.0), (1, 1.0)))],
                                       x_label="x", y_label="y", title="t", prefix="c-"))
    assert left[1] == right[1] and right[0] > left[0] + 20
    # a label of 94 characters wraps at LEGEND_CHARS: three lines, none longer
    label = "measured on every neighbouring pair of datasets of twelve records, both directions, in float64"
    lines = _legend(line_chart([Series(label, ((0, 1.0), (1, 2.0)))], x_label="x", y_label="y", title="t",
                               prefix="c-"))
    assert len(label) == 94 and len(lines) == 3 and all(len(text) <= LEGEND_CHARS == 38 for _, _, text in lines)
    assert " ".join(text for _, _, text in lines) == label


def _plot_and_star(svg: str) -> tuple[tuple[float, float], float]:
    """The plot area's x range (the axes' background, the second path) and the star's x, in points."""
    paths = re.findall(r'<path d="M ([\d.]+) [\d.]+ L ([\d.]+) ', svg)
    star = re.search(r'<use xlink:href="#[^"]+" x="([\d.]+)" y="[\d.]+" style="fill: #d55e00', svg)
    return (float(paths[1][0]), float(paths[1][1])), float(star.group(1))


def test_a_profile_swept_short_of_the_claim_still_shows_the_claim_inside_the_plot():
    from dpverify.integrations.charts import MARGIN, profile_chart

    # an infinite eps*: delta = 1 at every eps, swept to eps = 1 only; the claim is at eps = 3
    svg = profile_chart([(e / 4, 1.0) for e in range(5)], (3.0, 0.0), title="t", prefix="p-")
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert [float(v) for v in labels[:labels.index("ε")]] == [0, 1, 2, 3]  # the axis reaches 3
    (left, right), star = _plot_and_star(svg)
    # the star stands MARGIN = 6% of the axis' span inside its right edge, of the span before it was widened (by
    # at most 2 such margins): at least 0.06 / 1.12 = 5.4% of the span drawn
    assert left < star < right and (right - star) / (right - left) >= MARGIN / (1 + 2 * MARGIN) > 0.053
    # a claim left of the whole profile (eps = 0 against a profile from 2 to 4) is inside on the left
    (left, right), star = _plot_and_star(profile_chart([(2.0, 0.5), (4.0, 0.0)], (0.0, 0.6), title="t", prefix="p-"))
    assert left < star and (star - left) / (right - left) >= MARGIN / (1 + 2 * MARGIN)


def test_a_chart_without_a_finite_point_is_refused_with_the_series_named():
    with pytest.raises(ValueError, match=r"no series has a finite point to draw; series=\['eps\*'\]"):
        line_chart([Series("eps*", ((0.1, float("inf")),))], x_label="x", y_label="y", title="t", prefix="c-")


def test_markdown_opens_with_the_counts_and_marks_the_verdicts():
    text = markdown_report(rows())
    lines = text.splitlines()
    assert lines[0] == "# dpverify audit" and lines[2] == f"**{SUMMARY}.**"
    assert "- `claimed eps`: the epsilon the claim guarantees on this instance" in text
    table = [line for line in lines if line.startswith("| ") and line.endswith(" |") and "`" in line]
    verdicts = [line.split(" | ")[-2] for line in table]
    assert verdicts == ["✓ holds", "✗ VIOLATED (expected)", "· measured", "**? UNDECIDED (NOT AS EXPECTED)**",
                        "**✗ VIOLATED (NOT AS EXPECTED)**", "**✓ holds (MUTANT MISSED)**"]
    assert [kind_of(r) for r in rows()][2] is Kind.MEASURED


# -- the page as a browser draws it -------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1600"]


def _chromium(*arguments: str) -> str:
    done = subprocess.run([CHROMIUM, *FLAGS, *arguments], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_chromium_draws_the_page(page, tmp_path):
    path = tmp_path / "audit.html"
    path.write_text(page, encoding="ascii")
    shot = tmp_path / "audit.png"
    _chromium(f"--screenshot={shot}", path.as_uri())
    from PIL import Image

    image = Image.open(shot).convert("RGB")
    assert image.size == (1400, 1600)
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50  # text, badges and charts, not a blank page
    assert any(r > 150 and g < 60 and b < 60 for _, (r, g, b) in colours)  # the red of "not as expected"
    assert any(r < 40 and 90 < g < 130 and b > 150 for _, (r, g, b) in colours)  # the charts' blue, #0072B2


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_chromium_reads_the_counts_rows_and_charts(page, tmp_path):
    path = tmp_path / "audit.html"
    path.write_text(page, encoding="ascii")
    parsed = _Page(_chromium("--dump-dom", path.as_uri()))
    assert sum(tag == "svg" for tag, _ in parsed.tags) == 2
    assert sum(tag == "tr" and a.get("id", "").startswith("row-") for tag, a in parsed.tags) == 6
    assert SUMMARY in " ".join("".join(parsed.text).split())
    assert set(parsed.links) <= set(parsed.ids)


def test_matplotlib_and_rich_load_only_when_a_report_or_table_is_drawn():
    import json
    import sys
    from pathlib import Path

    probe = (
        "import sys, json\n"
        "import dpverify, dpverify.integrations.cli, dpverify.integrations.report, dpverify.integrations.audit\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'matplotlib', 'rich', 'PIL'})))"
    )
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, timeout=120,
                          check=True)
    assert json.loads(done.stdout) == []


def test_a_chart_says_how_many_points_it_could_not_draw():
    from dataclasses import replace

    from dpverify.integrations.charts import omitted

    # an infinite eps* (a mutant outputting its data) has no ratio to draw: the sweep's note counts it
    infinite = replace(rows()[1], measurement=replace(rows()[1].measurement, epsilon_star=float("inf")))
    text = html_report([rows()[0], infinite], generated=GENERATED)
    note = re.search(r'<figure class="chart" id="sweep-1"><h3>[^<]*</h3>\n<p>([^<]*)</p>', text).group(1)
    assert note.endswith(" 1 point(s) not drawn: infinite, or not positive on the log axis.")
    assert omitted([Series("a", ((0, 1.0), (1, float("nan"))))]) == 1
    assert omitted([Series("a", ((0, 0.0), (1, 1.0))), Series("b", ((0, 50.0), (1, 60.0)))]) == 1  # log: 0 left out
