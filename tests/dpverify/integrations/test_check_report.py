"""``dpverify check ... --report FILE.html`` (dpverify.integrations.check_report), end to end.

The mechanism is randomized response on one bit with p = 3/4 (tests/cli_mechanisms.py): its two
datasets (0,) and (1,) give P = (3/4, 1/4) and Q = (1/4, 3/4), so eps* = ln 3 and, for eps <= ln 3,
delta(eps) = 3/4 - e^eps / 4 (the event {0}), 0 beyond.
"""

from __future__ import annotations

import math
import re

import pytest

from dpverify import Datasets, PureDp, verify
from dpverify.integrations.cli import main
from dpverify.verdict.privacy_loss import PROFILE_POINTS, profile_grid
from tests import cli_mechanisms

RR = "tests.cli_mechanisms:randomized_response"
BITS = ["--records", "[0, 1]", "--n", "1"]


def _rr_delta(epsilon: float) -> float:
    return max(0.0, 0.75 - math.exp(epsilon) / 4)


def test_profile_grid_spans_past_eps_star_and_includes_it_and_the_claim():
    grid = profile_grid(math.log(3), 1.0)
    assert grid[0] == 0.0 and grid[-1] == pytest.approx(1.25 * math.log(3))  # 1.3733
    assert math.log(3) in grid and 1.0 in grid and len(grid) == PROFILE_POINTS + 2
    assert profile_grid(math.inf, 0.5)[-1] == 1.0  # the curve never reaches 0: at least [0, 1]
    assert profile_grid(0.0, 0.0)[-1] == 1.0  # a constant mechanism still gets an axis


def test_the_profile_verify_sweeps_for_randomized_response_is_three_quarters_minus_e_to_the_eps_over_four():
    result = verify(cli_mechanisms.randomized_response, Datasets([0, 1], 1), PureDp(1.0), profile=True)
    profile = result.profile
    assert [e for e, _ in profile] == profile_grid(math.log(3), 1.0)
    for epsilon, delta in profile:
        assert delta == pytest.approx(_rr_delta(epsilon), abs=1e-15), epsilon
    assert dict(profile)[1.0] == pytest.approx(0.75 - math.e / 4, rel=1e-14)  # 0.0704295...


def test_a_violated_check_writes_the_verdict_witness_and_profile(tmp_path, capsys):
    path = tmp_path / "rr.html"
    assert main(["check", RR, *BITS, "--epsilon", "1.0", "--report", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("VIOLATED") and out.endswith(f"report written: {path}\n")
    page = path.read_text(encoding="ascii")
    assert '<p class="banner bad" id="verdict">VIOLATED</p>' in page
    assert "<script" not in page.lower() and page.isascii()
    facts = dict(re.findall(r'<tr><th scope="row">([^<]*)</th><td>(?:<code>)?([^<]*)(?:</code>)?</td></tr>', page))
    assert facts["claimed"] == "eps=1.0, delta=0.0"
    assert facts["eps* measured"] == "1.09861" and facts["delta at the claimed eps"] == "0.0704295"
    assert facts["D"] == "(0,)" and facts["D'"] == "(1,)" and facts["S (event)"] == "{0}"
    assert facts["P[M(D) &#8712; S]"] == "0.75 (exactly 3/4)" and facts["P[M(D') &#8712; S]"] == "0.25 (exactly 1/4)"
    # 0.75 > e^1 * 0.25 + 0 = 0.679570457115
    assert facts["claim"] == "eps = 1, delta = 0"
    assert facts["check"] == "0.75 &gt; e^1 &#183; 0.25 + 0 = 0.679570457115"
    figure = re.search(r'<figure class="chart" id="profile">(.*?)</figure>', page, re.S).group(1)
    assert '<g class="legend">' in figure and "<title>Privacy profile" in figure
    legend = re.findall(r"<text[^>]*>([^<]*)</text>", figure.split('<g class="legend">')[1])
    assert legend == ["worst-case &#948;(&#949;) over all pairs", "claim (&#949;=1, &#948;=0)"]


def test_a_check_that_holds_has_no_witness(tmp_path, capsys):
    path = tmp_path / "rr.html"
    assert main(["check", RR, *BITS, "--epsilon", "log(3)", "--report", str(path)]) == 0
    page = path.read_text(encoding="ascii")
    assert '<p class="banner ok" id="verdict">HOLDS</p>' in page
    assert 'id="witness"' not in page and 'id="profile"' in page
    assert "report written" in capsys.readouterr().out


@pytest.mark.parametrize(("name", "message"), [
    ("missing/rr.html", "its directory {tmp}/missing does not exist; create it first (mkdir -p {tmp}/missing)"),
    ("rr.txt", "must name an .html file (the report is one HTML page), e.g. --report check.html."),
    ("folder.html", "is a directory; give a file name in it, e.g. --report {tmp}/folder.html/check.html."),
])
def test_a_bad_report_path_is_a_usage_error_before_any_work(name, message, tmp_path, capsys):
    (tmp_path / "folder.html").mkdir()
    target = tmp_path / name
    # the module does not exist: had the mechanism been loaded first, the error would name it
    assert main(["check", "no_such_module:mechanism", *BITS, "--epsilon", "1", "--report", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dpverify: error: --report {str(target)!r}")
    assert message.format(tmp=tmp_path) in err
    assert "no_such_module" not in err and not (tmp_path / "missing").exists()


def test_an_estimate_writes_its_bound_and_strongest_event(tmp_path, capsys):
    # 20,000 samples per dataset at eps = 0.5 < ln 3: the lower bound (about 1.0) exceeds the claim
    path = tmp_path / "estimate.html"
    args = ["check", "tests.cli_mechanisms:rr_sampler_numpy", "--estimate", *BITS, "--samples", "20000", "--seed", "1",
            "--epsilon", "0.5", "--report", str(path)]
    assert main(args) == 1
    capsys.readouterr()
    page = path.read_text(encoding="ascii")
    assert '<p class="banner bad" id="verdict">VIOLATED</p>' in page
    bound = float(re.search(r"<th scope=\"row\">epsilon, at least</th><td>([0-9.]+) \(confidence 0\.95\)", page).group(1))
    assert 0.5 < bound < math.log(3)  # a lower confidence bound: above the claim, below the true eps* = 1.0986
    assert '<h2 id="witness">Witness</h2>' in page
    assert re.search(r"<pre>D  = \(([01]),\)\nD&#x27; = \((?!\1)[01],\)\nS  = \{", page)  # the pair, then its event
    assert 'id="profile"' not in page  # no exact profile from samples


def test_an_estimate_page_shows_the_real_number_bound_the_delta_and_the_rounds(tmp_path, capsys):
    # the float program of sum + Laplace(1) leaks through its low bits (Mironov 2012): the witness is a
    # float-structure event, and the page gives the bound on real numbers (eps = 1 there) beside it
    path = tmp_path / "float.html"
    args = ["check", "tests.cli_mechanisms:laplace_count_sampler", "--estimate", *BITS, "--time-budget", "1",
            "--seed", "0", "--epsilon", "0.5", "--report", str(path)]
    assert main(args) == 1
    capsys.readouterr()
    page = path.read_text(encoding="ascii")
    real = float(re.search(r"<th scope=\"row\">on real numbers, at least</th><td>([0-9.]+) ", page).group(1))
    assert 0.5 < real <= 1.0  # a lower bound on the real-number mechanism's eps = 1
    assert re.search(r"<th scope=\"row\">delta at the claimed eps, at least</th><td>0\.[0-9]+</td>", page)
    assert re.search(r"per dataset; [0-9]+ test round\(s\) within a 1 s budget; seed 0", page)
    assert "A float-structure event: it reads the output&#x27;s low bits" in page
