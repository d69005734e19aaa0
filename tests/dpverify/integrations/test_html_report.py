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
