"""The audit page and the check page as Chromium lays them out, at 1400 px, at 500 px and on a 390 px phone.

One headless Chromium run loads a frame holding the audit page (the rows of ``_report_rows``: a
VIOLATED mutant with a text witness, a VIOLATED row with the engine's witness, a privacy profile, a
sweep) at 1400, 500 and 390 px, the page ``dpverify audit docs/examples/my_learner.py --report`` writes
for the guide's own learner (a true claim and a mutant) at 1400, 500 and 390 px, the page of an audit
file written here (``DEMO``: a claim (2.773, 0.181) whose legend is long, witnesses on 8 records under
substitution and under add/remove, a mutant with eps* = inf) at 1400, 500 and 390 px, a page whose
profile stops at eps = 1 short of its claim at eps = 3 at 1400 and 390 px, and the ``check --report``
page of a VIOLATED randomized response at 390 px, each in an iframe of that width: headless Chromium's
window is never narrower than 500 px, so a 390 px viewport has to be a frame's. A probe script, added
to a copy of each page, measures the page as drawn and posts it to the frame, which writes it into its
DOM for ``--dump-dom``:

* the document's scroll width against the viewport's: no horizontal overflow of the page;
* how the rows table is laid out (a table, or a card per row) and whether its container scrolls;
* where each row's verdict badge is drawn, against the viewport and its own cell;
* the smallest chart text as drawn (its font size times the SVG's scale on screen);
* each chart's box, its plot area, its legend's text and, on a privacy profile, the claim's star;
* the text of every witness as rendered (the DOM holds the witness, not just the source file).

CI runs it: .ci/run installs Chromium (Debian's package) before the tests; on a machine without
Chromium the test is skipped, saying so.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from dpverify import Datasets, PureDp, Verdict, verify
from dpverify.integrations.audit import AuditCase, AuditRow, Expect, Measurement
from dpverify.integrations.check_report import check_page
from dpverify.integrations.cli import main
from dpverify.integrations.report import html_report
from dpverify.verdict.witness import Witness
from tests import cli_mechanisms
from tests.dpverify.integrations._report_rows import rows

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "my_learner.py"
MINE = "Noisy threshold learner"  # the example audit's title
DEMO_TITLE, CUT_TITLE = "Witness demo", "Profile cut short"
#: An audit file as a user writes it. Row 1's claim (2.773, 0.181) makes the longest legend label.
#: Row 2: noisy_mean on 8 records outputs 1 with probability 1/4 + (share of 1s)/2; D = (0, 1, ..., 1)
#: and D' = (1, ..., 1) differ in record 1, and P[0] is 1 - (1/4 + 7/16) = 5/16 on D, 1/4 on D':
#: 5/16 > e^0.1 * 1/4. Row 3: a mutant outputting its first record (eps* = inf). Row 4: the parity of
#: the count under add/remove, 3/4 against 1/4 > e^0.5 * 1/4, D one record longer than D'.
DEMO = """
from fractions import Fraction
from dpverify import ApproximateDp, Datasets, PureDp
from dpverify.auditing import Audit, Row


def noisy_mean(dataset):
    p = Fraction(1, 4) + Fraction(sum(dataset), 2 * len(dataset))
    return {1: p, 0: 1 - p}


def first_record(dataset):
    return {dataset[0]: Fraction(1)}


def parity(dataset):
    odd = len(dataset) % 2
    return {odd: Fraction(3, 4), 1 - odd: Fraction(1, 4)}


audit = Audit("Witness demo", [
    Row(noisy_mean, Datasets([0, 1], n=5), ApproximateDp(Fraction(2773, 1000), Fraction(181, 1000)),
        statement="noisy_mean is (2.773, 0.181)-DP"),
    Row(noisy_mean, Datasets([0, 1], n=8), PureDp(Fraction(1, 10)), statement="noisy_mean is 0.1-DP",
        name="noisy_mean_8"),
    Row(first_record, Datasets([0, 1], n=8), PureDp(Fraction(1, 10)), statement="noisy_mean is 0.1-DP",
        expect="violated", mutant_of="noisy_mean_8"),
    Row(parity, Datasets([0, 1], n=8, neighbors="add_remove"), PureDp(Fraction(1, 2)), statement="parity is 0.5-DP"),
])
"""
#: The smallest chart text a reader should have to read, in CSS px.
SMALLEST_TEXT = 9.0

_PROBE = """<script>
addEventListener("load", () => {
  const root = document.documentElement;
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; };
  let smallest = Infinity;
  for (const text of document.querySelectorAll("svg text")) {
    if (!text.getBoundingClientRect().width) continue;
    const m = text.getScreenCTM();  // its scale on screen, rotated or not (the y label is turned 90 degrees)
    smallest = Math.min(smallest, parseFloat(getComputedStyle(text).fontSize) * Math.hypot(m.a, m.b));
  }
  const table = document.querySelector("table.rows");
  const scroller = table ? table.parentElement : null;
  parent.postMessage(JSON.stringify({
    page: document.title, width: innerWidth, scrollWidth: root.scrollWidth, smallestChartText: smallest,
    tableScrolls: scroller ? scroller.scrollWidth > scroller.clientWidth : null,
    rowDisplay: table ? getComputedStyle(table.querySelector("tbody tr")).display : null,
    verdicts: [...document.querySelectorAll("tr[id^=row-] > td:nth-child(10)")].map(
      cell => ({row: cell.parentElement.id, cell: box(cell), badge: box(cell.querySelector(".v")),
                card: box(cell.parentElement), number: box(cell.parentElement.cells[0])})),
    charts: [...document.querySelectorAll("figure.chart svg")].map(svg => ({
      id: svg.closest("figure").id, svg: box(svg), plot: box(svg.querySelectorAll(":scope > path")[1]),
      legend: [...svg.querySelectorAll("g.legend text")].map(t => ({text: t.textContent, box: box(t)})),
      stars: [...svg.querySelectorAll(":scope > use")].filter(u => /fill: #d55e00/.test(u.getAttribute("style")))
        .map(box),
    })),
    witnesses: [...document.querySelectorAll("section.witness, body > table.witness")].map(e => e.innerText),
    marks: [...document.querySelectorAll("section.witness, body > table.witness")].map(e => [
      ...e.querySelectorAll("mark.differs")].map(m => [m.textContent, getComputedStyle(m).backgroundColor])),
  }), "*");
});
</script>"""

#: The frame listens before its iframes load (a frame that loaded before the listener would go unheard).
_FRAME = """<!DOCTYPE html><html><body style="margin:0"><pre id="probes"></pre>
<script>addEventListener("message", e => {{ document.getElementById("probes").textContent += e.data + "\\n"; }});</script>
{frames}
</body></html>"""


#: The widths every audit page is drawn at: a desktop, the narrowest headless window, a phone.
WIDTHS = (1400, 500, 390)


def _cut_short() -> AuditRow:
    """A mutant with eps* = inf whose privacy profile stops at eps = 1 (delta = 1 throughout), short of
    its claim at eps = 3, and a witness on 12 records that differ in record 8."""
    profile = [{"epsilon": e / 4, "delta": 1.0} for e in range(5)]
    witness = Witness(dataset=(0,) * 7 + (1,) + (0,) * 4, neighbor=(0,) * 12, output_set=frozenset({1}), p=1, q=0,
                      epsilon=3.0, delta=0.0)
    measurement = Measurement(math.inf, 1.0, 3.0, 0.0, Verdict.VIOLATED, details={"privacy_profile": profile},
                              witness_data=witness)
    case = AuditCase("C9", "outputs_a_record", {"n": 12}, lambda: measurement, expect=Expect.VIOLATED,
                     parent="private_learner")
    return AuditRow(case, measurement, 0.01)


def _probed(page: str) -> str:
    assert page.count("</body>") == 1
    return page.replace("</body>", _PROBE + "</body>")


@pytest.fixture(scope="module")
def probes(tmp_path_factory):
    if CHROMIUM is None:
        pytest.skip("chromium is not installed on this machine (apt-get install chromium; .ci/run installs it)")
    folder = tmp_path_factory.mktemp("browser")
    (folder / "audit.html").write_text(_probed(html_report(rows(), generated="2025-01-02 03:04 UTC")), encoding="ascii")
    result = verify(cli_mechanisms.randomized_response, Datasets([0, 1], 1), PureDp(1.0), profile=True)
    check = check_page(result, mechanism="tests.cli_mechanisms:randomized_response", profile=result.profile,
                       generated="2025-01-02 03:04 UTC")
    (folder / "check.html").write_text(_probed(check), encoding="ascii")
    mine = folder / "mine.html"  # an audit of one's own learner, written as a user writes it
    assert main(["audit", str(EXAMPLE), "--report", str(mine), "--quiet"]) == 0
    mine.write_text(_probed(mine.read_text(encoding="utf-8")), encoding="utf-8")
    (folder / "demo_audit.py").write_text(DEMO, encoding="utf-8")
    demo = folder / "demo.html"  # rows 2 and 4 are VIOLATED, not as expected: exit status 1
    assert main(["audit", str(folder / "demo_audit.py"), "--report", str(demo), "--quiet", "--jobs", "1"]) == 1
    demo.write_text(_probed(demo.read_text(encoding="utf-8")), encoding="utf-8")
    (folder / "cut.html").write_text(_probed(html_report([_cut_short()], generated="2025-01-02 03:04 UTC",
                                                         title=CUT_TITLE)), encoding="ascii")
    frames = "\n".join(f'<iframe src="{name}" style="display:block;border:0;width:{width}px;height:800px"></iframe>'
                       for name, width in (*((page, width) for page in ("audit.html", "mine.html", "demo.html")
                                             for width in WIDTHS), ("check.html", 390), ("cut.html", 1400),
                                           ("cut.html", 390)))
    (folder / "frame.html").write_text(_FRAME.format(frames=frames), encoding="ascii")
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--user-data-dir={folder / 'profile'}",
         "--window-size=1400,1000", "--virtual-time-budget=5000", "--dump-dom", (folder / "frame.html").as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    text = re.search(r'<pre id="probes">(.*?)</pre>', done.stdout, re.S).group(1)
    found = [json.loads(line.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
             for line in text.splitlines() if line]
    return {(p["page"].split(":")[0], p["width"]): p for p in found}


PAGES = [(page, width) for page in ("dpverify audit", MINE, DEMO_TITLE) for width in WIDTHS] + [
    ("dpverify check", 390), (CUT_TITLE, 1400), (CUT_TITLE, 390)]
AUDITS = [(page, width) for page, width in PAGES if page != "dpverify check"]


def test_every_page_loaded_at_its_width(probes):
    assert set(probes) == set(PAGES) and len(PAGES) == 12


@pytest.mark.parametrize("page, width", PAGES)
def test_no_page_is_wider_than_its_window_and_chart_text_stays_readable(probes, page, width):
    probe = probes[page, width]
    assert probe["scrollWidth"] <= width, probe  # the page never scrolls sideways
    assert SMALLEST_TEXT <= probe["smallestChartText"] < 40, probe  # not shrunk to 5 px, not blown up


@pytest.mark.parametrize("page, width", AUDITS)
def test_every_verdict_is_in_view_without_scrolling_sideways(probes, page, width):
    probe = probes[page, width]
    rows = {"dpverify audit": 6, MINE: 2, DEMO_TITLE: 4, CUT_TITLE: 1}[page]
    assert len(probe["verdicts"]) == rows
    # at 1400 px the rows are a table that fits; narrower, each row is a card, and nothing scrolls sideways
    assert probe["rowDisplay"] == ("table-row" if width == 1400 else "flex")
    assert probe["tableScrolls"] is False
    for verdict in probe["verdicts"]:
        cell_left, cell_right = verdict["cell"][:2]
        left, right = verdict["badge"][:2]
        assert 0 <= cell_left < cell_right <= width, verdict  # the verdict's cell is within the window ...
        assert cell_left <= left < right <= cell_right + 0.5, verdict  # ... and its badge within the cell, whole


@pytest.mark.parametrize("page, width", [(DEMO_TITLE, 500), ("dpverify audit", 390)])
def test_on_a_narrow_screen_a_verdict_is_the_second_line_of_its_card(probes, page, width):
    for verdict in probes[page, width]["verdicts"]:
        cell, card, number = verdict["cell"], verdict["card"], verdict["number"]
        # the card spans the window but the page's margins (0.75em = 12 px a side) inside its 1 px border
        assert card[:2] == [12, width - 12] and cell[:2] == [13, width - 13], verdict
        # the row's number on the first line, the verdict right under it, the rest below
        assert card[2] + 1 == number[2] and number[3] == cell[2] and cell[2] - card[2] < 30, verdict
        assert verdict["badge"][0] == 13 + 118, verdict  # after its label, "verdict" (118 px)


def _inside(inner: list[float], outer: list[float], slack: float = 0.5) -> bool:
    return (outer[0] - slack <= inner[0] <= inner[1] <= outer[1] + slack
            and outer[2] - slack <= inner[2] <= inner[3] <= outer[3] + slack)


@pytest.mark.parametrize("page, width", AUDITS)
def test_every_legend_fits_inside_its_chart(probes, page, width):
    charts = probes[page, width]["charts"]
    assert len(charts) == {"dpverify audit": 2, MINE: 2, DEMO_TITLE: 4, CUT_TITLE: 1}[page]
    for chart in charts:
        assert chart["legend"], chart["id"]
        for line in chart["legend"]:
            assert _inside(line["box"], chart["svg"]), (chart["id"], line)


def test_the_longest_legend_label_is_whole_and_inside_its_chart(probes):
    (chart,) = [c for c in probes[DEMO_TITLE, 390]["charts"] if c["id"] == "profile-1"]
    texts = [line["text"] for line in chart["legend"]]
    assert texts == ["worst-case δ(ε) over all pairs", "claim (ε=2.773, δ=0.181)"]
    claim = chart["legend"][1]["box"]
    assert claim[1] <= chart["svg"][1] - 5, (claim, chart["svg"])  # its right end at least 5 px inside the chart


@pytest.mark.parametrize("page, width", AUDITS)
def test_every_claims_star_is_inside_the_plot(probes, page, width):
    profiles = [chart for chart in probes[page, width]["charts"] if chart["id"].startswith("profile-")]
    assert len(profiles) == {"dpverify audit": 1, MINE: 2, DEMO_TITLE: 4, CUT_TITLE: 1}[page]
    for chart in profiles:
        (star,) = chart["stars"]
        left, right, top, bottom = chart["plot"]
        # wholly inside the plot sideways; its centre on or above the x axis (a claim of delta = 0 sits on it)
        assert left <= star[0] < star[1] <= right, (chart["id"], star, chart["plot"])
        assert top <= (star[2] + star[3]) / 2 <= bottom + 0.5, (chart["id"], star, chart["plot"])


def test_a_profile_cut_short_of_its_claim_reaches_the_star(probes):
    (chart,) = probes[CUT_TITLE, 390]["charts"]
    (star,) = chart["stars"]
    left, right = chart["plot"][:2]
    # the profile stops at eps = 1, the claim is at eps = 3: matplotlib's axis, -0.15 to 3.15, widened by 6% of
    # its 3.3 to -0.198 to 3.198, puts the star's centre (3 + 0.198) / 3.396 = 94% of the way along
    assert (star[0] + star[1]) / 2 - left == pytest.approx(0.9417 * (right - left), abs=1.0)
    assert right - star[1] > 5  # and clear of the plot's right edge


@pytest.mark.parametrize("width", [1400, 390])
def test_the_witnesses_are_in_the_dom(probes, width):
    rendered = probes["dpverify audit", width]["witnesses"]
    assert len(rendered) == 2  # rows 2 and 5, the VIOLATED ones
    mutant, leaky = (" ".join(text.split()) for text in rendered)
    assert mutant.startswith("Row 2 — claim C1, mutant_without_half ") and "D = (0,) D' = (1,)" in mutant  # text
    assert leaky.startswith("Row 5 — claim C5, leaky_learner ")
    assert "D (0, 1) D' (1, 1) S (event) {'leak'}" in leaky  # two records: nothing marked
    # 3/5 > e^1 * 1/10 + 0.1 = 0.371828182846
    assert "P[M(D) ∈ S] 0.6 (exactly 3/5)" in leaky and "check 0.6 > e^1 · 0.1 + 0.1 = 0.371828182846" in leaky


@pytest.mark.parametrize("width", [1400, 390])
def test_an_audit_files_page_shows_its_mutants_witness(probes, width):
    (witness,) = (" ".join(text.split()) for text in probes[MINE, width]["witnesses"])
    # the broken copy gives the best threshold 5/8 and each other 1/8: 5/8 > e^ln3 * 1/8 + 0 = 0.375
    assert "noisy_threshold_broken" in witness and "P[M(D) ∈ S] 0.625 (exactly 5/8)" in witness
    assert "check 0.625 > e^1.09861228867 · 0.125 + 0 = 0.375" in witness


def test_the_check_pages_witness_is_in_the_dom(probes):
    (witness,) = probes["dpverify check", 390]["witnesses"]
    # randomized response, p = 3/4: 3/4 > e^1 * 1/4 + 0 = 0.679570457115
    assert "check 0.75 > e^1 · 0.25 + 0 = 0.679570457115" in " ".join(witness.split())


@pytest.mark.parametrize("width", WIDTHS)
def test_a_witness_on_many_records_names_the_record_that_differs(probes, width):
    mean, mutant, parity = (" ".join(text.split()) for text in probes[DEMO_TITLE, width]["witnesses"])
    # substitution on 8 records: the first differs; 5/16 > e^0.1 * 1/4 = 0.276292729519
    assert mean.startswith("Row 2 — claim 2, noisy_mean_8 ")
    assert ("D (0, 1, 1, 1, 1, 1, 1, 1) D' (1, 1, 1, 1, 1, 1, 1, 1) neighbours record 1 of 8 differs: D[0] = 0, "
            "D'[0] = 1 S (event) {0} P[M(D) ∈ S] 0.3125 (exactly 5/16)") in mean
    assert mutant.startswith("Row 3 — claim 2, first_record ") and "record 1 of 8 differs: D[0] = 0, D'[0] = 1" in mutant
    # add/remove: D has 8 records, D' 7; 3/4 > e^0.5 * 1/4 = 0.412180317675
    assert parity.startswith("Row 4 — claim 3, parity ")
    assert ("D (0, 0, 0, 0, 0, 0, 0, 0) D' (0, 0, 0, 0, 0, 0, 0) neighbours D has one record more: record 8 of 8, "
            "D[7] = 0 S (event) {0}") in parity and "check 0.75 > e^0.5 · 0.25 + 0 = 0.412180317675" in parity
    (cut,) = probes[CUT_TITLE, 390]["witnesses"]
    assert "record 8 of 12 differs: D[7] = 1, D'[7] = 0" in " ".join(cut.split())
    # the differing record marked in both datasets under substitution, in the larger one under add/remove
    highlight = "rgb(255, 216, 168)"  # #ffd8a8
    assert probes[DEMO_TITLE, width]["marks"] == [[["0", highlight], ["1", highlight]]] * 2 + [[["0", highlight]]]
    assert probes[CUT_TITLE, 390]["marks"] == [[["1", highlight], ["0", highlight]]]
