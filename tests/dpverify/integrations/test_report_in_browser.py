"""The audit page and the check page as Chromium lays them out, at 1400 px and on a 390 px phone.

One headless Chromium run loads a frame holding the audit page (the rows of ``_report_rows``: a
VIOLATED mutant with a text witness, a VIOLATED row with the engine's witness, a privacy profile, a
sweep) at 1400 and 390 px, the page ``dpverify audit docs/examples/my_learner.py --report`` writes
for the guide's own learner (a true claim and a mutant) at 1400 and 390 px, and the ``check --report``
page of a VIOLATED randomized response at 390 px, each in an iframe of that width: headless Chromium's window is never narrower than 500 px,
so a 390 px viewport has to be a frame's. A probe script, added to a copy of each page, measures
the page as drawn and posts it to the frame, which writes it into its DOM for ``--dump-dom``:

* the document's scroll width against the viewport's: no horizontal overflow of the page;
* whether the rows table scrolls sideways inside its own container (it is wider than a phone);
* the smallest chart text as drawn (its font size times the SVG's scale on screen);
* the text of every witness as rendered (the DOM holds the witness, not just the source file).

CI runs it: .ci/run installs Chromium (Debian's package) before the tests; on a machine without
Chromium the test is skipped, saying so.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from dpverify import Datasets, PureDp, verify
from dpverify.integrations.check_report import check_page
from dpverify.integrations.cli import main
from dpverify.integrations.report import html_report
from tests import cli_mechanisms
from tests.dpverify.integrations._report_rows import rows

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "my_learner.py"
MINE = "Noisy threshold learner"  # the example audit's title
#: The smallest chart text a reader should have to read, in CSS px.
SMALLEST_TEXT = 9.0

_PROBE = """<script>
addEventListener("load", () => {
  const root = document.documentElement;
  let smallest = Infinity;
  for (const text of document.querySelectorAll("svg text")) {
    if (!text.getBoundingClientRect().width) continue;
    const m = text.getScreenCTM();  // its scale on screen, rotated or not (the y label is turned 90 degrees)
    smallest = Math.min(smallest, parseFloat(getComputedStyle(text).fontSize) * Math.hypot(m.a, m.b));
  }
  const table = document.querySelector("table.rows");
  const box = table ? table.parentElement : null;
  parent.postMessage(JSON.stringify({
    page: document.title, width: innerWidth, scrollWidth: root.scrollWidth, smallestChartText: smallest,
    tableScrolls: box ? box.scrollWidth > box.clientWidth && getComputedStyle(box).overflowX === "auto" : null,
    witnesses: [...document.querySelectorAll("section.witness, body > table.witness")].map(e => e.innerText),
  }), "*");
});
</script>"""

_FRAME = """<!DOCTYPE html><html><body style="margin:0"><pre id="probes"></pre>
{frames}
<script>addEventListener("message", e => {{ document.getElementById("probes").textContent += e.data + "\\n"; }});</script>
</body></html>"""


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
    frames = "\n".join(f'<iframe src="{name}" style="display:block;border:0;width:{width}px;height:800px"></iframe>'
                       for name, width in (("audit.html", 1400), ("audit.html", 390), ("check.html", 390),
                                           ("mine.html", 1400), ("mine.html", 390)))
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


def test_every_page_loaded_at_its_width(probes):
    assert set(probes) == {("dpverify audit", 1400), ("dpverify audit", 390), ("dpverify check", 390),
                           (MINE, 1400), (MINE, 390)}


@pytest.mark.parametrize("page, width", [("dpverify audit", 1400), ("dpverify audit", 390), ("dpverify check", 390),
                                         (MINE, 1400), (MINE, 390)])
def test_no_page_is_wider_than_its_window_and_chart_text_stays_readable(probes, page, width):
    probe = probes[page, width]
    assert probe["scrollWidth"] <= width, probe  # the page never scrolls sideways
    assert SMALLEST_TEXT <= probe["smallestChartText"] < 40, probe  # not shrunk to 5 px, not blown up


def test_on_a_phone_the_rows_table_scrolls_in_its_own_container(probes):
    assert probes["dpverify audit", 390]["tableScrolls"] is True


@pytest.mark.parametrize("width", [1400, 390])
def test_the_witnesses_are_in_the_dom(probes, width):
    rendered = probes["dpverify audit", width]["witnesses"]
    assert len(rendered) == 2  # rows 2 and 5, the VIOLATED ones
    mutant, leaky = (" ".join(text.split()) for text in rendered)
    assert "Row 2: C1 mutant_without_half" in mutant and "D = (0,) D' = (1,)" in mutant  # its text witness
    assert "Row 5: C5 leaky_learner" in leaky and "D (0, 1) D' (1, 1) S (event) {'leak'}" in leaky
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
