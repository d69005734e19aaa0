"""The worked example of traced noise, ``docs/examples/traced_noise.py``, prints the verdicts its guide shows.

The file runs in process (about 1 s); its four verdicts are checked against figures worked out here or
by the hand-written mechanism (:class:`dpverify.mechanisms.noisy_max.ReportNoisyMax`, whose scale is
``2/eps``). ``tests/test_readme_examples.py`` compares the guide's output block line by line; this test
says which lines matter, and that the guide shows the file as it is.
"""

from __future__ import annotations

import contextlib
import io
import re
import runpy
from pathlib import Path

import pytest

import dpverify
from dpverify.mechanisms.noisy_max import ReportNoisyMax

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "traced_noise.py"
GUIDE = ROOT / "docs" / "guide" / "samplers.md"


@pytest.fixture(scope="module")
def printed() -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(str(EXAMPLE), run_name="__main__")
    return out.getvalue()


def _epsilons(text: str) -> list[float]:
    return [float(value) for value in re.findall(r"measured eps\*=([\d.e+-]+|inf)", text)]


def test_the_four_verdicts(printed: str):
    verdicts = re.findall(r"^(HOLDS|VIOLATED)\b", printed, flags=re.M)
    assert verdicts == ["HOLDS", "VIOLATED", "HOLDS"], printed
    # the Laplace mechanism of scale 1 at sensitivity 1: eps* = 1/1
    assert printed.rstrip().endswith("scale 1.0: VIOLATED, eps* = 1"), printed


def test_the_figures_are_the_hand_written_mechanisms(printed: str):
    pairs = dpverify.InputPairs.statdp(5)
    noisy_max, broken, laplace = _epsilons(printed)
    # scale 2.0 / 0.7 is ReportNoisyMax(0.7); 1.0 / 0.7 = 2 / 1.4 is ReportNoisyMax(1.4)
    assert noisy_max == pytest.approx(dpverify.verify(ReportNoisyMax(0.7), pairs, dpverify.PureDp(0.7)).epsilon, rel=1e-5)
    assert broken == pytest.approx(dpverify.verify(ReportNoisyMax(1.4), pairs, dpverify.PureDp(0.7)).epsilon, rel=1e-5)
    assert noisy_max < 0.7 < broken
    assert laplace == 0.5  # sensitivity 1 / scale 2


def test_the_passing_verdicts_state_the_real_arithmetic_they_assume(printed: str):
    holds = [block for block in re.split(r"^(?=HOLDS|VIOLATED|scale)", printed, flags=re.M) if block.startswith("HOLDS")]
    assert len(holds) == 2 and all(block.startswith("HOLDS, assuming real arithmetic") for block in holds)
    assert all("Mironov 2012" in block for block in holds)


def test_the_violation_has_a_certified_witness(printed: str):
    violated = printed.split("VIOLATED", 1)[1].split("HOLDS", 1)[0]
    assert "witness:" in violated and "1 certified" in violated
    p, q = (float(x) for x in re.findall(r"P\[M\(D'?\) in S\] = ([\d.]+)", violated))
    assert p > 2.0137527 * q  # e^0.7 = 2.01375...


def test_the_guide_shows_the_example_file_as_it_is():
    assert f"```python\n{EXAMPLE.read_text()}```\n" in GUIDE.read_text()
